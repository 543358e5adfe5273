// MJCF loader: reads the documented subset of MuJoCo's MJCF (docs/mjcf_subset.md) into a Model.
//
// The subset keeps MJCF's own semantics (units, defaults, default-class resolution, frames), so a
// scene that loads here loads in MuJoCo and describes the same system. Anything outside the subset
// is rejected with a LoadError naming the file, the line and the element; only visual-only things
// (rgba, material, group, <visual>, <asset><texture|material>, <light>, <camera>) are accepted and
// ignored. Mesh files named by <asset><mesh> are read relative to the model file's directory.
#pragma once

#include <stdexcept>
#include <string>

#include "host/scene/model.h"

namespace s2r {

// Every loader failure. The message reads "<file>:<line>: <element>: <what>", e.g.
//   scene.xml:12: <geom name='box'>: attribute 'mass' must be > 0, got -1
// (failures found by Model::Finalize, which have no line, read "<file>: <what>").
class LoadError : public std::runtime_error {
 public:
  explicit LoadError(const std::string& what) : std::runtime_error(what) {}
};

// Reads and loads an MJCF file; sets Model::source_path and Model::source_text. Ends with
// Model::Finalize.
Model LoadMjcfFile(const std::string& path);

// Loads MJCF text; `name_for_errors` stands for the file name in error messages (source_path is
// left empty, source_text holds `xml`). Ends with Model::Finalize.
Model LoadMjcfString(const std::string& xml, const std::string& name_for_errors);

}  // namespace s2r
