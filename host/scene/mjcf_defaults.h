// MJCF default classes: the <default> tree, and the resolution of an element's values through its
// default-class chain ("layers").
//
// An element's attributes are checked against the schema when it is reached; its values are then
// resolved through its class chain: "main" first, then each nested class down to the element's
// own class (its 'class' attribute, else the childclass inherited from its bodies, else "main"),
// then the element itself. The most specific layer that gives an attribute wins, except for partial
// vectors (LayeredReals).
#pragma once

#include <map>
#include <pugixml.hpp>
#include <string>
#include <vector>

#include "host/scene/mjcf_source.h"

namespace s2r::mjcf {

struct DefaultClass {
  std::string name;
  int parent = -1;                              // -1 for "main"
  pugi::xml_node node;                          // the <default> element
  // element kind ("geom", "joint", "site", "actuator") -> its attribute sets in document order:
  // one for geom, joint and site; for "actuator" at most one per actuator kind (general,
  // position, velocity, motor), all writing MuJoCo's one actuator default of the class
  std::map<std::string, std::vector<pugi::xml_node>> elems;
};

// The attribute sources of one element, least to most specific: the default elements of its
// class chain ("main" first), then the element itself (always last).
using Layers = std::vector<pugi::xml_node>;

// The default classes of one document, "main" (index 0) first.
class DefaultClasses {
 public:
  explicit DefaultClasses(const SourceFile& file) : file_(file) {}

  // Reads a <default> element and its nested classes; `parent` is -1 for the top-level one
  // (class "main").
  void ReadDefaults(pugi::xml_node n, int parent);
  // The document has no <default>: only an empty "main".
  void AddEmptyMain();

  // The class named by attribute `attr` of `n` (which must name a known class).
  int ClassIndex(pugi::xml_node n, const char* attr) const;
  // `key`: the class entry to use, the element's tag when nullptr
  Layers LayersFor(pugi::xml_node elem, int cls, const char* key = nullptr) const;

 private:
  const SourceFile& file_;
  std::vector<DefaultClass> classes_;  // [0] is "main"
  std::map<std::string, int> class_ids_;
};

// --- layered lookups (attributes are already syntax-checked)
// --------------------------------------

// most specific layer that has `attr`, or an empty node
pugi::xml_node Source(const Layers& layers, const char* attr);

// MJCF's partial vector semantics: each layer that has `attr` overwrites the leading entries
// of `values` with however many numbers it gives. Returns the largest count any layer gave.
int LayeredReals(const Layers& layers, const char* attr, double* values);

std::string LayeredWord(const Layers& layers, const char* attr, const char* fallback);

// limited="true|false|auto" (default auto). auto: limited iff a range is given that is not
// "0 0" (MuJoCo's rule), and only when <compiler autolimits="true">.
bool Limited(const SourceFile& file, bool autolimits, pugi::xml_node elem, const Layers& layers,
             const char* limited_attr, const char* range_attr, const double* range);

}  // namespace s2r::mjcf
