#include "host/scene/mjcf_defaults.h"

#include <algorithm>

#include "host/scene/mjcf_attributes.h"

namespace s2r::mjcf {

// --- the class tree ------------------------------------------------------------------------------

void DefaultClasses::ReadDefaults(pugi::xml_node n, int parent) {
  CheckAttributes(file_, n, false);
  CheckNoText(file_, n);
  DefaultClass cls;
  if (parent < 0) {
    cls.name = "main";
    if (n.attribute("class") && std::string(n.attribute("class").value()) != "main") {
      file_.Fail(n, "the top-level <default> is class 'main'; it cannot be renamed to " +
                        Quote(n.attribute("class").value()));
    }
  } else {
    if (!n.attribute("class") || std::string(n.attribute("class").value()).empty()) {
      file_.Fail(n, "a nested <default> needs a 'class' attribute");
    }
    cls.name = n.attribute("class").value();
  }
  cls.parent = parent;
  cls.node = n;
  int id = static_cast<int>(classes_.size());
  if (parent < 0 && class_ids_.count("main")) {
    id = 0;  // another top-level <default> (an included file's, say) adds to class main
  } else {
    if (class_ids_.count(cls.name)) file_.Fail(n, "duplicate default class " + Quote(cls.name));
    class_ids_[cls.name] = id;
    classes_.push_back(cls);
  }
  for (pugi::xml_node c : n.children()) {
    if (c.type() != pugi::node_element) continue;
    std::string tag = c.name();
    if (tag == "default") {
      ReadDefaults(c, id);
      continue;
    }
    if (tag == "material" || tag == "camera" || tag == "light" || tag == "texture") {
      continue;  // visual only
    }
    if (tag != "geom" && tag != "joint" && tag != "site" && tag != "position" &&
        tag != "velocity" && tag != "motor" && tag != "general" && tag != "mesh" &&
        tag != "equality") {
      file_.Fail(c,
                 "element not allowed inside <default> (the s2r subset allows geom, joint, site, "
                 "mesh, equality, general, position, velocity, motor, nested default, and the "
                 "ignored visual material, camera, light, texture)");
    }
    CheckAttributes(file_, c, true);
    CheckNoText(file_, c);
    if (c.first_child()) file_.Fail(c.first_child(), "unexpected child element");
    // MuJoCo keeps one actuator default per class, written by the general, position, velocity
    // and motor shortcuts in document order; the subset keeps them in that order and allows one
    // of each kind per class
    const bool actuator =
        tag == "position" || tag == "velocity" || tag == "motor" || tag == "general";
    const std::string key = actuator ? "actuator" : tag;
    for (const pugi::xml_node& prev : classes_[id].elems[key]) {
      // two top-level <default>s may both set main's geom (MuJoCo merges them: the later wins)
      if (prev.parent() != n) continue;
      if (!actuator || tag == prev.name()) {
        file_.Fail(c, "default class " + Quote(classes_[id].name) + " already has a <" +
                          prev.name() + "> (line " + std::to_string(file_.LineOf(prev)) + ")");
      }
    }
    classes_[id].elems[key].push_back(c);
  }
}

int DefaultClasses::ClassIndex(pugi::xml_node n, const char* attr) const {
  std::string name = n.attribute(attr).value();
  auto it = class_ids_.find(name);
  if (it == class_ids_.end()) {
    file_.Fail(n, "attribute " + Quote(attr) + " names unknown default class " + Quote(name));
  }
  return it->second;
}

Layers DefaultClasses::LayersFor(pugi::xml_node elem, int cls, const char* key) const {
  std::vector<int> classes;
  for (int c = cls; c >= 0; c = classes_[c].parent) classes.push_back(c);
  std::reverse(classes.begin(), classes.end());
  Layers chain;
  for (int c : classes) {
    auto it = classes_[c].elems.find(key != nullptr ? key : elem.name());
    if (it != classes_[c].elems.end()) chain.insert(chain.end(), it->second.begin(), it->second.end());
  }
  chain.push_back(elem);
  return chain;
}

void DefaultClasses::AddEmptyMain() {
  DefaultClass main;
  main.name = "main";
  class_ids_["main"] = 0;
  classes_.push_back(main);
}

// --- layered lookups -----------------------------------------------------------------------------

pugi::xml_node Source(const Layers& layers, const char* attr) {
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    if (it->attribute(attr)) return *it;
  }
  return pugi::xml_node();
}

int LayeredReals(const Layers& layers, const char* attr, double* values) {
  int given = 0;
  for (const pugi::xml_node& l : layers) {
    if (!l.attribute(attr)) continue;
    std::vector<double> v = Reals(l, attr);
    std::copy(v.begin(), v.end(), values);
    given = std::max(given, static_cast<int>(v.size()));
  }
  return given;
}

std::string LayeredWord(const Layers& layers, const char* attr, const char* fallback) {
  pugi::xml_node src = Source(layers, attr);
  return src ? Word(src, attr) : fallback;
}

bool Limited(const SourceFile& file, bool autolimits, pugi::xml_node elem, const Layers& layers,
             const char* limited_attr, const char* range_attr, const double* range) {
  std::string kw = LayeredWord(layers, limited_attr, "auto");
  if (kw == "true") return true;
  if (kw == "false") return false;
  bool has_range = Source(layers, range_attr) && !(range[0] == 0 && range[1] == 0);
  if (has_range && !autolimits) {
    file.Fail(elem, std::string("has '") + range_attr + "' but '" + limited_attr +
                        "' is auto and <compiler autolimits=\"false\">; set '" + limited_attr +
                        "' explicitly or enable autolimits");
  }
  return has_range;
}

}  // namespace s2r::mjcf
