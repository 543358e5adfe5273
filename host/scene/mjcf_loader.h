// What the parts of the MJCF loader share while one document is compiled: the source (for
// errors), the <compiler> settings, the default classes, the Model being built and the names seen
// so far.
//
// Sections are compiled in MuJoCo's fixed order (mjcf_load.cc); each part reads its sections into
// this state: mjcf_body.h (<worldbody>), mjcf_custom.h (<custom>).
#pragma once

#include <array>
#include <map>
#include <set>
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
  // inertiagrouprange: only geoms whose group lies in [lo, hi] give their body mass (MuJoCo's
  // default 0 5, and its geom group default 0)
  int inertia_group_lo = 0, inertia_group_hi = 5;
};

// An <asset><mesh>: where its file is and how to hull it (mjcf_mesh.cc); read on first use.
struct MeshAsset {
  pugi::xml_node node;  // the <mesh> element (its line for errors)
  std::string name;
  std::string path;     // the file, after meshdir / assetdir
  std::array<double, 3> scale = {1, 1, 1};
  int max_vertices = 0;
  bool convex_inertia = false;  // inertia="convex": mass properties of the hull
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

  // A one-line note for something accepted that s2r does not use or does its own way:
  // "<file>:<line>: <element>: <what>". Notes with the same `key` are one line, counted:
  // the first occurrence's line, then "(N times)".
  void Note(pugi::xml_node n, const std::string& key, const std::string& what) {
    auto it = note_index.find(key);
    if (it != note_index.end()) {
      note_counts[it->second] += 1;
      return;
    }
    note_index[key] = static_cast<int>(notes.size());
    notes.push_back(file.Where(n) + ": " + SourceFile::Describe(n) + ": " + what);
    note_counts.push_back(1);
  }
  // the notes as stored in Model::load_notes
  std::vector<std::string> NoteLines() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < notes.size(); ++i) {
      out.push_back(notes[i] + (note_counts[i] > 1 ? " (" + std::to_string(note_counts[i]) +
                                                         " times)"
                                                   : ""));
    }
    return out;
  }

  const SourceFile& file;
  CompilerSettings compiler;
  DefaultClasses defaults;
  Model model;
  std::map<std::string, int> body_ids, geom_ids, joint_ids, site_ids, actuator_ids;
  std::set<std::string> merged_bodies;  // names of massless welded bodies merged into their parent
  std::map<int, pugi::xml_node> joint_nodes;  // each joint's element, for Finalize's errors
  std::vector<std::string> notes;
  std::vector<int> note_counts;
  std::map<std::string, int> note_index;
  std::map<std::string, MeshAsset> mesh_assets;  // <asset><mesh> by name (mjcf_mesh.h)
  std::map<std::string, MeshHull> meshes;        // their hulls, loaded on first use
};

}  // namespace s2r::mjcf
