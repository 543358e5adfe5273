#include "host/scene/scene_source.h"

#include <cstdio>
#include <utility>

#include "host/scene/mjcf_load.h"

namespace s2r {

namespace {

// the loader's notes (things accepted but not used), one line each on stderr
Model WithNotesPrinted(Model m) {
  for (const std::string& note : m.load_notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  return m;
}

}  // namespace

Model LoadScene(const std::string& source) {
  const std::string prefix = "builtin:";
  if (source.compare(0, prefix.size(), prefix) != 0) return WithNotesPrinted(LoadMjcfFile(source));
  std::string name = source.substr(prefix.size());
  std::string known;
  for (const auto* list : {&EmbeddedScenes(), &EmbeddedRobotFiles()}) {
    for (const EmbeddedScene& s : *list) {
      if (name == s.name) {
        Model m = LoadMjcfString(s.xml, source);
        m.source_path = source;
        return WithNotesPrinted(std::move(m));
      }
      known += known.empty() ? s.name : std::string(", ") + s.name;
    }
  }
  throw std::runtime_error("unknown built-in scene '" + name + "' (built-in scenes: " + known + ")");
}

}  // namespace s2r
