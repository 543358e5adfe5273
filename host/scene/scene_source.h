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
// configs/robots/*: robot models and scenes built on them, named by their path there without
// ".xml" ("franka_emika_panda/mjx_panda", "panda_pick"); loadable as builtin:<name> and
// includable from built-in scenes.
const std::vector<EmbeddedScene>& EmbeddedRobotFiles();

// Loads "builtin:<name>" from the embedded scenes and robot files, anything else as an MJCF file
// path. Prints the loader's notes (Model::load_notes) to stderr, one "note: ..." line each.
Model LoadScene(const std::string& source);

}  // namespace s2r
