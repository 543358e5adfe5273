// Scene sources: a path to an MJCF file, or "builtin:<name>" for a scene compiled into s2r.
#pragma once

#include <string>
#include <vector>

#include "host/scene/model.h"

namespace s2r {

struct EmbeddedScene {
  const char* name;
  const char* xml;
};
const std::vector<EmbeddedScene>& EmbeddedScenes();

// Loads "builtin:<name>" from the embedded scenes, anything else as an MJCF file path.
Model LoadScene(const std::string& source);

}  // namespace s2r
