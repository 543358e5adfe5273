// What the parts of the MJCF loader share while one document is compiled: the source (for
// errors), the <compiler> settings, the default classes, the Model being built and the names seen
// so far.
//
// Sections are compiled in MuJoCo's fixed order (mjcf_load.cc); each part reads its sections into
// this state: mjcf_body.h (<worldbody>), mjcf_custom.h (<custom>).
#pragma once

#include <map>
#include <pugixml.hpp>
#include <string>
#include <vector>

#include "host/scene/mesh_hull.h"
#include "host/scene/mjcf_attributes.h"
#include "host/scene/mjcf_defaults.h"
#include "host/scene/mjcf_source.h"
#include "host/scene/model.h"

namespace s2r::mjcf {

// <compiler> attributes.
struct CompilerSettings {
  AngleUnit angle = AngleUnit::kDegree;
  bool autolimits = true;
  std::string meshdir, assetdir;  // where mesh files are looked up (mjcf_mesh.h)
};

struct LoadState {
  explicit LoadState(const SourceFile& source_file) : file(source_file), defaults(source_file) {}

  // Adds `n`'s name (if it has one) to `names` as `id`; fails on a duplicate.
  void Register(std::map<std::string, int>* names, pugi::xml_node n, const char* kind, int id) {
    std::string name = n.attribute("name").value();
    if (name.empty()) return;
    if (!names->emplace(name, id).second) {
      file.Fail(n, std::string("duplicate ") + kind + " name " + Quote(name));
    }
  }

  const SourceFile& file;
  CompilerSettings compiler;
  DefaultClasses defaults;
  Model model;
  std::map<std::string, int> body_ids, geom_ids, joint_ids, site_ids, actuator_ids;
  std::map<std::string, MeshHull> meshes;  // <asset><mesh> by name (mjcf_mesh.h)
};

}  // namespace s2r::mjcf
