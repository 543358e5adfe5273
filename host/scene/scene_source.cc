#include "host/scene/scene_source.h"

#include "host/scene/mjcf_load.h"

namespace s2r {

Model LoadScene(const std::string& source) {
  const std::string prefix = "builtin:";
  if (source.compare(0, prefix.size(), prefix) != 0) return LoadMjcfFile(source);
  std::string name = source.substr(prefix.size());
  std::string known;
  for (const EmbeddedScene& s : EmbeddedScenes()) {
    if (name == s.name) {
      Model m = LoadMjcfString(s.xml, source);
      m.source_path = source;
      return m;
    }
    known += known.empty() ? s.name : std::string(", ") + s.name;
  }
  throw std::runtime_error("unknown built-in scene '" + name + "' (built-in scenes: " + known + ")");
}

}  // namespace s2r
