// MJCF subset loader. See docs/mjcf_subset.md for what is accepted and what each thing means.
//
// Sections are compiled in MuJoCo's fixed order (compiler, option, default, worldbody, contact,
// actuator, custom), whatever their order in the file. Each element is checked against its
// attribute schema (names, number syntax and counts) when it is reached; values are then resolved
// through the default-class chain ("layers") and checked for meaning. Geometry is done in double
// precision and stored as Real at the end.
#include "host/scene/mjcf_load.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <pugixml.hpp>
#include <type_traits>
#include <sstream>
#include <utility>
#include <vector>

#include "host/scene/fields.h"

namespace s2r {
namespace {

using Vec3d = Eigen::Vector3d;
using Quatd = Eigen::Quaterniond;

constexpr double kPiD = 3.14159265358979323846;

// --- attribute schema ----------------------------------------------------------------------------

enum class AttrKind {
  kText,     // any string
  kReals,    // min_count..max_count finite numbers
  kInt,      // one integer
  kKeyword,  // one of a space-separated list
  kVisual,   // visual-only: accepted and ignored
};

struct AttrSpec {
  const char* name;
  AttrKind kind;
  int min_count;
  int max_count;
  const char* keywords;
  bool default_ok;  // may appear on an element inside <default>
};

AttrSpec Text(const char* name, bool default_ok = false) {
  return {name, AttrKind::kText, 0, 0, nullptr, default_ok};
}
AttrSpec Reals(const char* name, int min_count, int max_count) {
  return {name, AttrKind::kReals, min_count, max_count, nullptr, true};
}
AttrSpec Int(const char* name) { return {name, AttrKind::kInt, 1, 1, nullptr, true}; }
AttrSpec Keyword(const char* name, const char* keywords) {
  return {name, AttrKind::kKeyword, 1, 1, keywords, true};
}
AttrSpec Visual(const char* name) { return {name, AttrKind::kVisual, 0, 0, nullptr, true}; }

const char* const kLimitedKeywords = "true false auto";

// Attribute schema of every element the subset knows; nullptr for an unknown element.
const std::vector<AttrSpec>* SchemaFor(const std::string& tag) {
  static const std::map<std::string, std::vector<AttrSpec>> kSchemas = {
      {"mujoco", {Text("model")}},
      {"compiler", {Keyword("autolimits", "true false"), Keyword("angle", "degree radian")}},
      {"option", {Reals("timestep", 1, 1), Reals("gravity", 3, 3)}},
      {"default", {Text("class")}},
      {"worldbody", {}},
      {"body",
       {Text("name"), Text("childclass"), Reals("pos", 3, 3), Reals("quat", 4, 4),
        Reals("euler", 3, 3), Reals("axisangle", 4, 4)}},
      {"geom",
       {Text("name"), Text("class"), Keyword("type", "plane sphere capsule box"),
        Reals("size", 1, 3), Reals("pos", 3, 3), Reals("quat", 4, 4), Reals("euler", 3, 3),
        Reals("axisangle", 4, 4), Reals("fromto", 6, 6), Reals("mass", 1, 1),
        Reals("density", 1, 1), Reals("friction", 1, 3), Int("contype"), Int("conaffinity"),
        Int("condim"), Visual("rgba"), Visual("material"), Visual("group")}},
      {"joint",
       {Text("name"), Text("class"), Keyword("type", "free hinge slide"), Reals("pos", 3, 3),
        Reals("axis", 3, 3), Reals("range", 2, 2), Keyword("limited", kLimitedKeywords),
        Reals("damping", 1, 1), Reals("frictionloss", 1, 1), Reals("armature", 1, 1),
        Visual("group")}},
      {"freejoint", {Text("name"), Visual("group")}},
      {"site",
       {Text("name"), Text("class"), Keyword("type", "sphere capsule ellipsoid cylinder box"),
        Reals("size", 1, 3), Reals("pos", 3, 3), Reals("quat", 4, 4), Reals("euler", 3, 3),
        Reals("axisangle", 4, 4), Visual("rgba"), Visual("material"), Visual("group")}},
      {"inertial",
       {Reals("pos", 3, 3), Reals("quat", 4, 4), Reals("euler", 3, 3), Reals("axisangle", 4, 4),
        Reals("mass", 1, 1), Reals("diaginertia", 3, 3), Reals("fullinertia", 6, 6)}},
      {"actuator", {}},
      {"position",
       {Text("name"), Text("class"), Text("joint"), Text("site"), Reals("gear", 1, 6),
        Reals("kp", 1, 1), Reals("kv", 1, 1), Reals("ctrlrange", 2, 2),
        Keyword("ctrllimited", kLimitedKeywords), Reals("forcerange", 2, 2),
        Keyword("forcelimited", kLimitedKeywords), Visual("group")}},
      {"velocity",
       {Text("name"), Text("class"), Text("joint"), Text("site"), Reals("gear", 1, 6),
        Reals("kv", 1, 1), Reals("ctrlrange", 2, 2), Keyword("ctrllimited", kLimitedKeywords),
        Reals("forcerange", 2, 2), Keyword("forcelimited", kLimitedKeywords), Visual("group")}},
      {"motor",
       {Text("name"), Text("class"), Text("joint"), Text("site"), Reals("gear", 1, 6),
        Reals("ctrlrange", 2, 2), Keyword("ctrllimited", kLimitedKeywords),
        Reals("forcerange", 2, 2), Keyword("forcelimited", kLimitedKeywords), Visual("group")}},
      {"contact", {}},
      {"exclude", {Text("name"), Text("body1"), Text("body2")}},
      {"custom", {}},
      {"numeric", {Text("name"), Text("data"), Int("size")}},
      {"text", {Text("name"), Text("data")}},
  };
  auto it = kSchemas.find(tag);
  return it == kSchemas.end() ? nullptr : &it->second;
}

const AttrSpec* FindSpec(const std::vector<AttrSpec>& schema, const std::string& name) {
  for (const AttrSpec& s : schema) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

// --- number parsing ------------------------------------------------------------------------------

std::vector<std::string> SplitWords(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

// Strict: the whole token must be a decimal number ("nan", "inf", "0x10", "1,5" are not).
bool ParseReal(const std::string& token, double* out) {
  if (token.empty()) return false;
  for (char c : token) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) {
      return false;
    }
  }
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(token.c_str(), &end);
  if (end != token.c_str() + token.size()) return false;
  if (!std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool ParseInt(const std::string& token, long* out) {
  if (token.empty()) return false;
  size_t i = (token[0] == '+' || token[0] == '-') ? 1 : 0;
  if (i == token.size()) return false;
  for (size_t k = i; k < token.size(); ++k) {
    if (token[k] < '0' || token[k] > '9') return false;
  }
  errno = 0;
  long v = std::strtol(token.c_str(), nullptr, 10);
  if (errno == ERANGE || v > std::numeric_limits<int32_t>::max() ||
      v < std::numeric_limits<int32_t>::min()) {
    return false;
  }
  *out = v;
  return true;
}

std::string Num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

// --- small geometry ------------------------------------------------------------------------------

struct Frame {
  Vec3d pos = Vec3d::Zero();
  Quatd rot = Quatd::Identity();
};

std::array<Real, 3> ToReal3(const Vec3d& v) {
  return {static_cast<Real>(v.x()), static_cast<Real>(v.y()), static_cast<Real>(v.z())};
}
std::array<Real, 4> ToReal4(const Quatd& q) {
  return {static_cast<Real>(q.w()), static_cast<Real>(q.x()), static_cast<Real>(q.y()),
          static_cast<Real>(q.z())};
}

// The minimal rotation taking +z onto unit vector v (MuJoCo's convention for fromto frames).
Quatd ZToVector(const Vec3d& v) {
  Vec3d cross = Vec3d::UnitZ().cross(v);
  double s = cross.norm();
  if (s < 1e-12) return v.z() > 0 ? Quatd::Identity() : Quatd(0, 1, 0, 0);
  return Quatd(Eigen::AngleAxisd(std::atan2(s, v.z()), cross / s));
}

// --- the loader ----------------------------------------------------------------------------------

struct DefaultClass {
  std::string name;
  int parent = -1;                              // -1 for "main"
  pugi::xml_node node;                          // the <default> element
  std::map<std::string, pugi::xml_node> elems;  // element tag -> its attribute set
};

// The attribute sources of one element, least to most specific: the default elements of its
// class chain ("main" first), then the element itself (always last).
using Layers = std::vector<pugi::xml_node>;

// What we remember about a geom until <custom> (restitution) is read.
struct PendingGeom {
  pugi::xml_node node;
  int id;
};

class Loader {
 public:
  Loader(const std::string& xml, const std::string& file) : xml_(xml), file_(file) {
    for (size_t i = 0; i < xml_.size(); ++i) {
      if (xml_[i] == '\n') newlines_.push_back(i);
    }
  }

  Model Load();

 private:
  // --- errors ---
  int LineOfOffset(ptrdiff_t offset) const {
    if (offset < 0) return 0;
    return static_cast<int>(
               std::upper_bound(newlines_.begin(), newlines_.end(), static_cast<size_t>(offset)) -
               newlines_.begin()) +
           1;
  }
  int LineOf(pugi::xml_node n) const { return LineOfOffset(n.offset_debug()); }
  static std::string Describe(pugi::xml_node n) {
    std::string s = "<" + std::string(n.name());
    if (n.attribute("name")) {
      s += " name='" + std::string(n.attribute("name").value()) + "'";
    } else if (std::string(n.name()) == "default" && n.attribute("class")) {
      s += " class='" + std::string(n.attribute("class").value()) + "'";
    }
    return s + ">";
  }
  [[noreturn]] void Fail(pugi::xml_node n, const std::string& what) const {
    throw LoadError(file_ + ":" + std::to_string(LineOf(n)) + ": " + Describe(n) + ": " + what);
  }
  // " (from default class 'x', line N)" when `src` is a default element, else "".
  std::string Origin(pugi::xml_node src) const {
    pugi::xml_node parent = src.parent();
    if (!parent || std::string(parent.name()) != "default") return "";
    std::string cls = parent.attribute("class") ? parent.attribute("class").value() : "main";
    return " (from default class '" + cls + "', line " + std::to_string(LineOf(src)) + ")";
  }

  // --- schema checks ---
  void CheckAttributes(pugi::xml_node n, bool in_default) const;
  void CheckNoText(pugi::xml_node n) const;

  // --- attribute access (attributes are already syntax-checked) ---
  std::vector<double> Reals(pugi::xml_node n, const char* attr) const {
    std::vector<double> v;
    for (const std::string& w : SplitWords(n.attribute(attr).value())) {
      double x = 0;
      ParseReal(w, &x);
      v.push_back(x);
    }
    return v;
  }
  double Real1(pugi::xml_node n, const char* attr) const { return Reals(n, attr)[0]; }
  Vec3d Real3(pugi::xml_node n, const char* attr) const {
    std::vector<double> v = Reals(n, attr);
    return Vec3d(v[0], v[1], v[2]);
  }
  std::string Word(pugi::xml_node n, const char* attr) const {
    std::vector<std::string> w = SplitWords(n.attribute(attr).value());
    return w.empty() ? "" : w[0];
  }
  // most specific layer that has `attr`, or an empty node
  static pugi::xml_node Source(const Layers& layers, const char* attr) {
    for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
      if (it->attribute(attr)) return *it;
    }
    return pugi::xml_node();
  }
  // MJCF's partial vector semantics: each layer that has `attr` overwrites the leading entries
  // of `values` with however many numbers it gives. Returns the largest count any layer gave.
  int LayeredReals(const Layers& layers, const char* attr, double* values) const {
    int given = 0;
    for (const pugi::xml_node& l : layers) {
      if (!l.attribute(attr)) continue;
      std::vector<double> v = Reals(l, attr);
      std::copy(v.begin(), v.end(), values);
      given = std::max(given, static_cast<int>(v.size()));
    }
    return given;
  }
  std::string LayeredWord(const Layers& layers, const char* attr, const char* fallback) const {
    pugi::xml_node src = Source(layers, attr);
    return src ? Word(src, attr) : fallback;
  }

  // --- compile steps ---
  void ReadCompiler(pugi::xml_node n);
  void ReadOption(pugi::xml_node n);
  void ReadDefaults(pugi::xml_node n, int parent);
  int ClassIndex(pugi::xml_node n, const char* attr) const;
  // `key`: the class entry to use, the element's tag when nullptr
  Layers LayersFor(pugi::xml_node elem, int cls, const char* key = nullptr) const;
  double Angle(double v) const { return degrees_ ? v * kPiD / 180.0 : v; }
  Quatd QuatFromLayer(pugi::xml_node n) const;
  Quatd Orientation(const Layers& layers) const;
  bool Limited(pugi::xml_node elem, const Layers& layers, const char* limited_attr,
               const char* range_attr, const double* range) const;
  void ReadBody(pugi::xml_node n, int parent, const Frame& parent_world, int childclass);
  void ReadGeom(pugi::xml_node n, int body, bool body_static, int childclass,
                std::vector<GeomMassSpec>* mass_specs, double* body_mass);
  void ReadJoint(pugi::xml_node n, int body, const std::string& type, const Layers& layers);
  void ReadSite(pugi::xml_node n, int body, int childclass);
  void ReadInertial(pugi::xml_node n, int body);
  void ReadExclude(pugi::xml_node n);
  void ReadActuator(pugi::xml_node n);
  void ReadCustom(const std::vector<pugi::xml_node>& sections);  // all <custom> sections
  void Register(std::map<std::string, int>* names, pugi::xml_node n, const char* kind, int id);

  const std::string& xml_;
  const std::string file_;
  std::vector<size_t> newlines_;
  Model m_;

  bool degrees_ = true;
  bool autolimits_ = true;
  std::vector<DefaultClass> classes_;  // [0] is "main"
  std::map<std::string, int> class_ids_;
  std::map<std::string, int> body_ids_, geom_ids_, joint_ids_, site_ids_, actuator_ids_,
      custom_ids_;
  std::vector<PendingGeom> geoms_;
};

void Loader::CheckNoText(pugi::xml_node n) const {
  for (pugi::xml_node c : n.children()) {
    if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) {
      std::string text = c.value();
      if (text.find_first_not_of(" \t\r\n") != std::string::npos) {
        Fail(n, "unexpected text " + Quote(text.substr(0, 40)) + " inside the element");
      }
    }
  }
}

void Loader::CheckAttributes(pugi::xml_node n, bool in_default) const {
  const std::vector<AttrSpec>* schema = SchemaFor(n.name());
  if (schema == nullptr) Fail(n, "unknown element (not in the s2r MJCF subset)");
  std::vector<std::string> seen;
  for (pugi::xml_attribute a : n.attributes()) {
    std::string name = a.name();
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      Fail(n, "attribute " + Quote(name) + " is given twice");
    }
    seen.push_back(name);
    const AttrSpec* spec = FindSpec(*schema, name);
    if (spec == nullptr)
      Fail(n, "unknown attribute " + Quote(name) + " (not in the s2r MJCF subset)");
    if (in_default && !spec->default_ok) {
      Fail(n, "attribute " + Quote(name) + " is not allowed inside <default>");
    }
    std::vector<std::string> words = SplitWords(a.value());
    switch (spec->kind) {
      case AttrKind::kText:
      case AttrKind::kVisual:
        break;
      case AttrKind::kReals: {
        for (const std::string& w : words) {
          double v;
          if (!ParseReal(w, &v)) {
            Fail(n, "attribute " + Quote(name) + ": " + Quote(w) + " is not a finite number");
          }
        }
        int count = static_cast<int>(words.size());
        if (count < spec->min_count || count > spec->max_count) {
          std::string want =
              spec->min_count == spec->max_count
                  ? std::to_string(spec->min_count)
                  : std::to_string(spec->min_count) + " to " + std::to_string(spec->max_count);
          Fail(n, "attribute " + Quote(name) + " needs " + want + " number" +
                      (spec->max_count == 1 ? "" : "s") + ", got " + std::to_string(count));
        }
        break;
      }
      case AttrKind::kInt: {
        long v;
        if (words.size() != 1 || !ParseInt(words[0], &v)) {
          Fail(n, "attribute " + Quote(name) + " must be one integer, got " + Quote(a.value()));
        }
        break;
      }
      case AttrKind::kKeyword: {
        std::vector<std::string> allowed = SplitWords(spec->keywords);
        if (words.size() != 1 ||
            std::find(allowed.begin(), allowed.end(), words[0]) == allowed.end()) {
          std::string list;
          for (const std::string& k : allowed) list += (list.empty() ? "" : "|") + k;
          Fail(n, "attribute " + Quote(name) + " must be one of " + list + ", got " +
                      Quote(a.value()));
        }
        break;
      }
    }
  }
}

void Loader::Register(std::map<std::string, int>* names, pugi::xml_node n, const char* kind,
                      int id) {
  std::string name = n.attribute("name").value();
  if (name.empty()) return;
  if (!names->emplace(name, id).second) {
    Fail(n, std::string("duplicate ") + kind + " name " + Quote(name));
  }
}

// --- compiler, option, defaults ------------------------------------------------------------------

void Loader::ReadCompiler(pugi::xml_node n) {
  CheckAttributes(n, false);
  if (n.first_child()) Fail(n.first_child(), "<compiler> takes no child elements");
  if (n.attribute("angle")) degrees_ = Word(n, "angle") == "degree";
  if (n.attribute("autolimits")) autolimits_ = Word(n, "autolimits") == "true";
}

void Loader::ReadOption(pugi::xml_node n) {
  CheckAttributes(n, false);
  if (n.first_child()) Fail(n.first_child(), "<option> takes no child elements in the s2r subset");
  if (n.attribute("timestep")) {
    double dt = Real1(n, "timestep");
    if (!(dt > 0)) Fail(n, "attribute 'timestep' must be > 0, got " + Num(dt));
    m_.timestep = static_cast<Real>(dt);
  }
  if (n.attribute("gravity")) {
    Vec3d g = Real3(n, "gravity");
    for (int k = 0; k < 3; ++k) m_.gravity[k] = static_cast<Real>(g[k]);
  }
}

void Loader::ReadDefaults(pugi::xml_node n, int parent) {
  CheckAttributes(n, false);
  CheckNoText(n);
  DefaultClass cls;
  if (parent < 0) {
    cls.name = "main";
    if (n.attribute("class") && std::string(n.attribute("class").value()) != "main") {
      Fail(n, "the top-level <default> is class 'main'; it cannot be renamed to " +
                  Quote(n.attribute("class").value()));
    }
  } else {
    if (!n.attribute("class") || std::string(n.attribute("class").value()).empty()) {
      Fail(n, "a nested <default> needs a 'class' attribute");
    }
    cls.name = n.attribute("class").value();
  }
  cls.parent = parent;
  cls.node = n;
  if (class_ids_.count(cls.name)) Fail(n, "duplicate default class " + Quote(cls.name));
  int id = static_cast<int>(classes_.size());
  class_ids_[cls.name] = id;
  classes_.push_back(cls);
  for (pugi::xml_node c : n.children()) {
    if (c.type() != pugi::node_element) continue;
    std::string tag = c.name();
    if (tag == "default") {
      ReadDefaults(c, id);
      continue;
    }
    if (tag != "geom" && tag != "joint" && tag != "site" && tag != "position" &&
        tag != "velocity" && tag != "motor") {
      Fail(c,
           "element not allowed inside <default> (the s2r subset allows geom, joint, site, "
           "position, velocity, motor and nested default)");
    }
    CheckAttributes(c, true);
    CheckNoText(c);
    if (c.first_child()) Fail(c.first_child(), "unexpected child element");
    // MuJoCo keeps one actuator default per class, shared by the position, velocity and motor
    // shortcuts; the subset allows one of them per class so that sharing is unambiguous
    const bool actuator = tag == "position" || tag == "velocity" || tag == "motor";
    const std::string key = actuator ? "actuator" : tag;
    if (classes_[id].elems.count(key)) {
      Fail(c, "default class " + Quote(classes_[id].name) + " already has a <" +
                  classes_[id].elems[key].name() + ">" +
                  (actuator ? " (one of position/velocity/motor per default class)" : ""));
    }
    classes_[id].elems[key] = c;
  }
}

int Loader::ClassIndex(pugi::xml_node n, const char* attr) const {
  std::string name = n.attribute(attr).value();
  auto it = class_ids_.find(name);
  if (it == class_ids_.end()) {
    Fail(n, "attribute " + Quote(attr) + " names unknown default class " + Quote(name));
  }
  return it->second;
}

Layers Loader::LayersFor(pugi::xml_node elem, int cls, const char* key) const {
  Layers chain;
  for (int c = cls; c >= 0; c = classes_[c].parent) {
    auto it = classes_[c].elems.find(key != nullptr ? key : elem.name());
    if (it != classes_[c].elems.end()) chain.push_back(it->second);
  }
  std::reverse(chain.begin(), chain.end());
  chain.push_back(elem);
  return chain;
}

// --- orientation ---------------------------------------------------------------------------------

Quatd Loader::QuatFromLayer(pugi::xml_node n) const {
  int count = (n.attribute("quat") ? 1 : 0) + (n.attribute("euler") ? 1 : 0) +
              (n.attribute("axisangle") ? 1 : 0);
  if (count > 1) {
    Fail(n, "more than one of 'quat', 'euler', 'axisangle' given (give exactly one orientation)");
  }
  if (n.attribute("quat")) {
    std::vector<double> q = Reals(n, "quat");
    Quatd r(q[0], q[1], q[2], q[3]);
    if (!(r.norm() > 1e-12)) Fail(n, "attribute 'quat' is the zero quaternion");
    return r.normalized();
  }
  if (n.attribute("axisangle")) {
    std::vector<double> a = Reals(n, "axisangle");
    Vec3d axis(a[0], a[1], a[2]);
    if (!(axis.norm() > 1e-12)) Fail(n, "attribute 'axisangle' has a zero axis");
    return Quatd(Eigen::AngleAxisd(Angle(a[3]), axis.normalized()));
  }
  if (n.attribute("euler")) {
    // eulerseq "xyz" (MJCF default): intrinsic, rotate about x, then the new y, then the new z
    Vec3d e = Real3(n, "euler");
    return Quatd(Eigen::AngleAxisd(Angle(e[0]), Vec3d::UnitX())) *
           Quatd(Eigen::AngleAxisd(Angle(e[1]), Vec3d::UnitY())) *
           Quatd(Eigen::AngleAxisd(Angle(e[2]), Vec3d::UnitZ()));
  }
  return Quatd::Identity();
}

Quatd Loader::Orientation(const Layers& layers) const {
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    if (it->attribute("quat") || it->attribute("euler") || it->attribute("axisangle")) {
      return QuatFromLayer(*it);
    }
  }
  return Quatd::Identity();
}

// limited="true|false|auto" (default auto). auto: limited iff a range is given that is not
// "0 0" (MuJoCo's rule), and only when <compiler autolimits="true">.
bool Loader::Limited(pugi::xml_node elem, const Layers& layers, const char* limited_attr,
                     const char* range_attr, const double* range) const {
  std::string kw = LayeredWord(layers, limited_attr, "auto");
  if (kw == "true") return true;
  if (kw == "false") return false;
  bool has_range = Source(layers, range_attr) && !(range[0] == 0 && range[1] == 0);
  if (has_range && !autolimits_) {
    Fail(elem, std::string("has '") + range_attr + "' but '" + limited_attr +
                   "' is auto and <compiler autolimits=\"false\">; set '" + limited_attr +
                   "' explicitly or enable autolimits");
  }
  return has_range;
}

// --- bodies
// ----------------------------------------------------------------------------------------

void Loader::ReadBody(pugi::xml_node n, int parent, const Frame& parent_world, int childclass) {
  const bool is_world = parent < 0;
  int body = 0;
  Frame world;
  pugi::xml_node joint_node;
  std::string joint_type;
  Layers joint_layers;
  bool body_static = true;

  if (!is_world) {
    CheckAttributes(n, false);
    if (n.attribute("childclass")) childclass = ClassIndex(n, "childclass");
  } else if (n.first_attribute()) {
    Fail(n, "<worldbody> takes no attributes");
  }
  CheckNoText(n);

  // classify children first: the joint decides whether the body is static
  std::vector<pugi::xml_node> geoms, sites, bodies;
  pugi::xml_node inertial;
  for (pugi::xml_node c : n.children()) {
    if (c.type() != pugi::node_element) continue;
    std::string tag = c.name();
    if (tag == "geom") {
      geoms.push_back(c);
    } else if (tag == "site") {
      sites.push_back(c);
    } else if (tag == "body") {
      bodies.push_back(c);
    } else if (tag == "light" || tag == "camera") {
      continue;  // visual only
    } else if (!is_world && (tag == "joint" || tag == "freejoint")) {
      if (joint_node) {
        std::string body = n.attribute("name") ? "body " + Quote(n.attribute("name").value())
                                               : "the body at line " + std::to_string(LineOf(n));
        Fail(c, body + " already has a joint (line " + std::to_string(LineOf(joint_node)) +
                    "); s2r allows at most one joint per body: nest bodies for more degrees "
                    "of freedom");
      }
      joint_node = c;
    } else if (!is_world && tag == "inertial") {
      if (inertial) Fail(c, "a body has at most one <inertial>");
      inertial = c;
    } else {
      Fail(c, std::string("element not allowed inside <") + n.name() + "> in the s2r subset");
    }
  }

  if (!is_world) {
    Layers self{n};
    Vec3d pos = n.attribute("pos") ? Real3(n, "pos") : Vec3d::Zero();
    Quatd rot = Orientation(self);
    world.pos = parent_world.pos + parent_world.rot * pos;
    world.rot = (parent_world.rot * rot).normalized();

    if (joint_node) {
      CheckAttributes(joint_node, false);
      CheckNoText(joint_node);
      if (joint_node.first_child()) Fail(joint_node.first_child(), "unexpected child element");
      if (std::string(joint_node.name()) == "freejoint") {
        joint_type = "free";
        joint_layers = Layers{joint_node};
      } else {
        int cls = joint_node.attribute("class") ? ClassIndex(joint_node, "class") : childclass;
        joint_layers = LayersFor(joint_node, cls);
        joint_type = LayeredWord(joint_layers, "type", "hinge");
      }
      if (joint_type == "free" && parent != 0) {
        Fail(joint_node, "a free joint is only allowed on a direct child of <worldbody>");
      }
    }
    const bool parent_static = m_.body_dynamic[parent] == 0;
    body_static = !joint_node && parent_static;

    body =
        AddBody(&m_, n.attribute("name").value(), parent, ToReal3(world.pos), ToReal4(world.rot));
    Register(&body_ids_, n, "body", body);
    if (joint_node) {
      ReadJoint(joint_node, body, joint_type, joint_layers);
    } else if (!parent_static) {
      AddJoint(&m_, "", body, kJointWeld, {0, 0, 0}, {0, 0, 1});
    }
    // AddJoint marks the body dynamic; make the static case explicit too
    m_.body_dynamic[body] = body_static ? 0 : 1;
  }

  std::vector<GeomMassSpec> mass_specs;
  double geom_mass = 0;
  for (pugi::xml_node g : geoms) {
    ReadGeom(g, body, body_static, childclass, &mass_specs, &geom_mass);
  }

  if (!is_world) {
    if (inertial) {
      ReadInertial(inertial, body);
    } else {
      if (!body_static && !(geom_mass > 0)) {
        std::string why = joint_node ? "it has a joint"
                                     : "it is welded to moving body '" + m_.body_name[parent] + "'";
        Fail(n, "the body moves (" + why +
                    ") but has no <inertial> and no geom with mass; add a geom or an <inertial>");
      }
      if (!mass_specs.empty()) ComputeBodyInertiaFromGeoms(&m_, body, mass_specs);
    }
  }

  for (pugi::xml_node s : sites) ReadSite(s, body, childclass);
  for (pugi::xml_node b : bodies) ReadBody(b, body, world, childclass);
}

void Loader::ReadJoint(pugi::xml_node n, int body, const std::string& type, const Layers& layers) {
  const bool free = type == "free";
  JointType jt = free ? kJointFree : (type == "slide" ? kJointSlide : kJointHinge);
  Vec3d pos = Vec3d::Zero();
  Vec3d axis = Vec3d::UnitZ();
  if (!free) {
    pugi::xml_node src = Source(layers, "pos");
    if (src) pos = Real3(src, "pos");
    src = Source(layers, "axis");
    if (src) axis = Real3(src, "axis");
    if (!(axis.norm() > 1e-12)) Fail(n, "attribute 'axis' is the zero vector" + Origin(src));
    axis.normalize();
  }
  int j = AddJoint(&m_, n.attribute("name").value(), body, jt, ToReal3(pos), ToReal3(axis));
  Register(&joint_ids_, n, "joint", j);

  double range[2] = {0, 0};
  LayeredReals(layers, "range", range);
  bool limited = Limited(n, layers, "limited", "range", range);
  if (free && limited) Fail(n, "a free joint cannot be limited");
  if (limited && !(range[0] < range[1])) {
    Fail(n, "attribute 'range' must have lo < hi for a limited joint, got " + Num(range[0]) + " " +
                Num(range[1]) + Origin(Source(layers, "range")));
  }
  if (jt == kJointHinge) {
    range[0] = Angle(range[0]);
    range[1] = Angle(range[1]);
  }
  m_.joint_limited[j] = limited ? 1 : 0;
  m_.joint_range[2 * j] = static_cast<Real>(range[0]);
  m_.joint_range[2 * j + 1] = static_cast<Real>(range[1]);

  const char* nonneg[] = {"damping", "frictionloss", "armature"};
  std::vector<Real>* fields[] = {&m_.joint_damping, &m_.joint_frictionloss, &m_.joint_armature};
  for (int k = 0; k < 3; ++k) {
    pugi::xml_node src = Source(layers, nonneg[k]);
    double v = src ? Real1(src, nonneg[k]) : 0.0;
    if (v < 0) {
      Fail(n, "attribute " + Quote(nonneg[k]) + " must be >= 0, got " + Num(v) + Origin(src));
    }
    (*fields[k])[j] = static_cast<Real>(v);
  }
}

void Loader::ReadGeom(pugi::xml_node n, int body, bool body_static, int childclass,
                      std::vector<GeomMassSpec>* mass_specs, double* body_mass) {
  CheckAttributes(n, false);
  CheckNoText(n);
  if (n.first_child()) Fail(n.first_child(), "unexpected child element");
  int cls = n.attribute("class") ? ClassIndex(n, "class") : childclass;
  Layers layers = LayersFor(n, cls);

  std::string type_word = LayeredWord(layers, "type", "sphere");
  GeomType type = type_word == "plane"     ? kGeomPlane
                  : type_word == "capsule" ? kGeomCapsule
                  : type_word == "box"     ? kGeomBox
                                           : kGeomSphere;
  if (type == kGeomPlane && !body_static) {
    Fail(n,
         "a plane can only belong to a static body (the world, or a jointless body fixed to "
         "it)");
  }

  double size[3] = {0, 0, 0};
  int size_given = LayeredReals(layers, "size", size);
  pugi::xml_node size_src = Source(layers, "size");

  // frame: fromto, or pos + orientation
  Vec3d pos = Vec3d::Zero();
  Quatd rot = Quatd::Identity();
  pugi::xml_node fromto_src = Source(layers, "fromto");
  int needed = 1;
  if (fromto_src) {
    if (type != kGeomCapsule && type != kGeomBox) {
      Fail(n, "attribute 'fromto' is only supported for capsule and box geoms, not " + type_word +
                  Origin(fromto_src));
    }
    for (const char* a : {"pos", "quat", "euler", "axisangle"}) {
      if (n.attribute(a))
        Fail(n, std::string("attribute 'fromto' cannot be combined with '") + a + "'");
    }
    std::vector<double> ft = Reals(fromto_src, "fromto");
    Vec3d from(ft[0], ft[1], ft[2]), to(ft[3], ft[4], ft[5]);
    Vec3d d = from - to;  // MuJoCo orients the local z axis from 'to' towards 'from'
    double len = d.norm();
    if (!(len > 0)) Fail(n, "attribute 'fromto' has coinciding end points" + Origin(fromto_src));
    pos = 0.5 * (from + to);
    rot = ZToVector(d / len);
    // MuJoCo: the cross-section comes from size[0] only (a box gets a square cross-section)
    size[1] = type == kGeomCapsule ? 0.5 * len : size[0];
    size[2] = type == kGeomCapsule ? 0.0 : 0.5 * len;
    needed = 1;
  } else {
    pugi::xml_node pos_src = Source(layers, "pos");
    if (pos_src) pos = Real3(pos_src, "pos");
    rot = Orientation(layers);
    needed = type == kGeomCapsule ? 2 : (type == kGeomBox ? 3 : (type == kGeomPlane ? 3 : 1));
  }

  if (size_given < needed) {
    Fail(n, "a " + type_word + (fromto_src ? " with fromto" : "") +
                " needs attribute 'size' with " + std::to_string(needed) + " number" +
                (needed == 1 ? "" : "s") + ", got " + std::to_string(size_given));
  }
  if (type == kGeomPlane) {
    // x, y half-extents (0: infinite, as in MuJoCo) and grid spacing; s2r planes are infinite
    if (size[0] < 0 || size[1] < 0 || !(size[2] > 0)) {
      Fail(n, "plane 'size' needs x, y >= 0 and spacing > 0, got " + Num(size[0]) + " " +
                  Num(size[1]) + " " + Num(size[2]) + Origin(size_src));
    }
  } else {
    for (int k = 0; k < needed; ++k) {
      if (!(size[k] > 0)) {
        Fail(n, "attribute 'size' must be > 0, got " + Num(size[k]) + " (entry " +
                    std::to_string(k) + ")" + Origin(size_src));
      }
    }
  }
  std::array<Real, 3> stored_size = {0, 0, 0};
  if (type == kGeomSphere) stored_size = {static_cast<Real>(size[0]), 0, 0};
  if (type == kGeomCapsule) {
    stored_size = {static_cast<Real>(size[0]), static_cast<Real>(size[1]), 0};
  }
  if (type == kGeomBox || type == kGeomPlane) {
    stored_size = {static_cast<Real>(size[0]), static_cast<Real>(size[1]),
                   static_cast<Real>(size[2])};
  }

  double friction[3] = {1.0, 0.005, 0.0001};
  LayeredReals(layers, "friction", friction);
  for (int k = 0; k < 3; ++k) {
    if (friction[k] < 0) {
      Fail(n, "attribute 'friction' must be >= 0, got " + Num(friction[k]) +
                  Origin(Source(layers, "friction")));
    }
  }

  int contype = 1, conaffinity = 1;
  if (pugi::xml_node src = Source(layers, "contype")) {
    contype = static_cast<int>(std::strtol(src.attribute("contype").value(), nullptr, 10));
    if (contype < 0) Fail(n, "attribute 'contype' must be >= 0" + Origin(src));
  }
  if (pugi::xml_node src = Source(layers, "conaffinity")) {
    conaffinity = static_cast<int>(std::strtol(src.attribute("conaffinity").value(), nullptr, 10));
    if (conaffinity < 0) Fail(n, "attribute 'conaffinity' must be >= 0" + Origin(src));
  }
  if (pugi::xml_node src = Source(layers, "condim")) {
    if (std::string(Word(src, "condim")) != "3") {
      Fail(n, "attribute 'condim' must be 3 (s2r supports only frictional point contacts), got " +
                  Quote(src.attribute("condim").value()) + Origin(src));
    }
  }

  // mass: the most specific layer that has mass or density decides
  double mass = -1, density = 1000;
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    bool has_mass = it->attribute("mass"), has_density = it->attribute("density");
    if (!has_mass && !has_density) continue;
    if (has_mass && has_density) {
      Fail(n, "attributes 'mass' and 'density' are both given; give one" + Origin(*it));
    }
    if (type == kGeomPlane && *it == n) Fail(n, "a plane has no mass; remove 'mass'/'density'");
    if (has_mass) {
      mass = Real1(*it, "mass");
      if (!(mass > 0)) {
        Fail(n, "attribute 'mass' must be > 0, got " + Num(mass) + Origin(*it) +
                    " (use density=\"0\" for a massless geom)");
      }
    } else {
      density = Real1(*it, "density");
      if (density < 0)
        Fail(n, "attribute 'density' must be >= 0, got " + Num(density) + Origin(*it));
    }
    break;
  }

  int g = AddGeom(&m_, n.attribute("name").value(), body, type, stored_size, ToReal3(pos),
                  ToReal4(rot.normalized()), static_cast<Real>(friction[0]));
  Register(&geom_ids_, n, "geom", g);
  m_.geom_contype[g] = contype;
  m_.geom_conaffinity[g] = conaffinity;
  m_.geom_restitution[g] = 0;
  geoms_.push_back({n, g});
  if (type != kGeomPlane) {
    double volume = type == kGeomSphere    ? 4.0 / 3.0 * kPiD * std::pow(size[0], 3)
                    : type == kGeomCapsule ? kPiD * size[0] * size[0] * 2.0 * size[1] +
                                                 4.0 / 3.0 * kPiD * std::pow(size[0], 3)
                                           : 8.0 * size[0] * size[1] * size[2];
    // ComputeBodyInertiaFromGeoms takes the mass (>= 0) or, when it is < 0, the density
    mass_specs->push_back({g, static_cast<Real>(mass), static_cast<Real>(density)});
    *body_mass += mass >= 0 ? mass : density * volume;
  }
}

void Loader::ReadSite(pugi::xml_node n, int body, int childclass) {
  CheckAttributes(n, false);
  CheckNoText(n);
  if (n.first_child()) Fail(n.first_child(), "unexpected child element");
  int cls = n.attribute("class") ? ClassIndex(n, "class") : childclass;
  Layers layers = LayersFor(n, cls);
  double size[3] = {0.005, 0.005, 0.005};
  LayeredReals(layers, "size", size);
  for (double s : size) {
    if (s < 0) Fail(n, "attribute 'size' must be >= 0" + Origin(Source(layers, "size")));
  }
  Vec3d pos = Vec3d::Zero();
  if (pugi::xml_node src = Source(layers, "pos")) pos = Real3(src, "pos");
  Quatd rot = Orientation(layers);
  int s = AddSite(&m_, n.attribute("name").value(), body, ToReal3(pos), ToReal4(rot));
  Register(&site_ids_, n, "site", s);
}

void Loader::ReadInertial(pugi::xml_node n, int body) {
  CheckAttributes(n, false);
  CheckNoText(n);
  if (n.first_child()) Fail(n.first_child(), "unexpected child element");
  for (const char* a : {"pos", "mass"}) {
    if (!n.attribute(a)) Fail(n, std::string("missing required attribute '") + a + "'");
  }
  bool diag = n.attribute("diaginertia"), full = n.attribute("fullinertia");
  if (diag == full) Fail(n, "give exactly one of 'diaginertia' and 'fullinertia'");
  double mass = Real1(n, "mass");
  if (!(mass > 0)) Fail(n, "attribute 'mass' must be > 0, got " + Num(mass));
  Vec3d pos = Real3(n, "pos");
  Quatd rot = Orientation(Layers{n});
  Vec3d moments;
  if (diag) {
    moments = Real3(n, "diaginertia");
    for (int k = 0; k < 3; ++k) {
      if (!(moments[k] > 0)) {
        Fail(n, "attribute 'diaginertia' must be > 0, got " + Num(moments[k]));
      }
    }
  } else {
    if (n.attribute("quat") || n.attribute("euler") || n.attribute("axisangle")) {
      Fail(n, "'fullinertia' cannot be combined with an orientation (it defines the frame)");
    }
    std::vector<double> f = Reals(n, "fullinertia");  // Ixx Iyy Izz Ixy Ixz Iyz
    Eigen::Matrix3d inertia;
    inertia << f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2];
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(inertia);
    moments = eig.eigenvalues();
    if (!(moments.minCoeff() > 0)) {
      Fail(n, "attribute 'fullinertia' must be positive definite (smallest eigenvalue " +
                  Num(moments.minCoeff()) + ")");
    }
    Eigen::Matrix3d axes = eig.eigenvectors();
    if (axes.determinant() < 0) axes.col(2) = -axes.col(2);
    rot = Quatd(axes).normalized();
  }
  // MuJoCo's check: principal moments of a real body satisfy the triangle inequality
  double tol = 1e-9 * moments.maxCoeff();
  if (moments[0] + moments[1] < moments[2] - tol || moments[0] + moments[2] < moments[1] - tol ||
      moments[1] + moments[2] < moments[0] - tol) {
    Fail(n, "inertia moments " + Num(moments[0]) + " " + Num(moments[1]) + " " + Num(moments[2]) +
                " violate A + B >= C");
  }
  SetBodyInertial(&m_, body, static_cast<Real>(mass), ToReal3(moments), ToReal3(pos), ToReal4(rot));
}

// --- contact, actuators, custom ------------------------------------------------------------------

void Loader::ReadExclude(pugi::xml_node n) {
  CheckAttributes(n, false);
  CheckNoText(n);
  if (n.first_child()) Fail(n.first_child(), "unexpected child element");
  int ids[2];
  const char* attrs[2] = {"body1", "body2"};
  for (int k = 0; k < 2; ++k) {
    if (!n.attribute(attrs[k]))
      Fail(n, std::string("missing required attribute '") + attrs[k] + "'");
    std::string name = n.attribute(attrs[k]).value();
    auto it = body_ids_.find(name);
    if (it == body_ids_.end()) {
      Fail(n, std::string("attribute '") + attrs[k] + "' names unknown body " + Quote(name));
    }
    ids[k] = it->second;
  }
  m_.exclude_body_pairs.emplace_back(ids[0], ids[1]);
}

void Loader::ReadActuator(pugi::xml_node n) {
  std::string tag = n.name();
  if (tag != "position" && tag != "velocity" && tag != "motor") {
    Fail(n,
         "element not allowed inside <actuator> (the s2r subset has position, velocity, "
         "motor)");
  }
  CheckAttributes(n, false);
  CheckNoText(n);
  if (n.first_child()) Fail(n.first_child(), "unexpected child element");
  int cls = n.attribute("class") ? ClassIndex(n, "class") : 0;
  // gear, ranges and limited flags come from the class's actuator default whatever its kind (as
  // in MuJoCo); kp and kv only from defaults of the same kind
  Layers layers = LayersFor(n, cls, "actuator");
  Layers gain_layers;
  for (const pugi::xml_node& l : layers) {
    if (std::string(l.name()) == tag) gain_layers.push_back(l);
  }

  bool has_joint = n.attribute("joint"), has_site = n.attribute("site");
  if (has_joint == has_site) Fail(n, "give exactly one of 'joint' and 'site'");
  TransmissionType trn = has_joint ? kTransmissionJoint : kTransmissionSite;
  std::string target = n.attribute(has_joint ? "joint" : "site").value();
  int trnid = -1;
  if (has_joint) {
    auto it = joint_ids_.find(target);
    if (it == joint_ids_.end()) Fail(n, "attribute 'joint' names unknown joint " + Quote(target));
    trnid = it->second;
    if (m_.joint_type[trnid] == kJointFree) {
      Fail(n, "joint " + Quote(target) +
                  " is a free joint; actuate a hinge or slide joint, or "
                  "use a site transmission");
    }
  } else {
    auto it = site_ids_.find(target);
    if (it == site_ids_.end()) Fail(n, "attribute 'site' names unknown site " + Quote(target));
    trnid = it->second;
  }

  ActuatorType type = tag == "position"   ? kActuatorPosition
                      : tag == "velocity" ? kActuatorVelocity
                                          : kActuatorMotor;
  int a = AddActuator(&m_, n.attribute("name").value(), type, trn, trnid);
  Register(&actuator_ids_, n, "actuator", a);

  double gear[6] = {1, 0, 0, 0, 0, 0};
  LayeredReals(layers, "gear", gear);
  for (int k = 0; k < 6; ++k) m_.actuator_gear[6 * a + k] = static_cast<Real>(gear[k]);

  double kp = type == kActuatorPosition ? 1.0 : 0.0;
  double kv = type == kActuatorVelocity ? 1.0 : 0.0;
  if (type == kActuatorPosition) {
    if (pugi::xml_node src = Source(gain_layers, "kp")) {
      kp = Real1(src, "kp");
      if (kp < 0) Fail(n, "attribute 'kp' must be >= 0, got " + Num(kp) + Origin(src));
    }
  }
  if (type != kActuatorMotor) {
    if (pugi::xml_node src = Source(gain_layers, "kv")) {
      kv = Real1(src, "kv");
      if (kv < 0) Fail(n, "attribute 'kv' must be >= 0, got " + Num(kv) + Origin(src));
    }
  }
  m_.actuator_kp[a] = static_cast<Real>(kp);
  m_.actuator_kv[a] = static_cast<Real>(kv);

  const char* range_attrs[2] = {"ctrlrange", "forcerange"};
  const char* limited_attrs[2] = {"ctrllimited", "forcelimited"};
  std::vector<Real>* ranges[2] = {&m_.actuator_ctrlrange, &m_.actuator_forcerange};
  std::vector<int32_t>* limited_flags[2] = {&m_.actuator_ctrllimited, &m_.actuator_forcelimited};
  for (int k = 0; k < 2; ++k) {
    double range[2] = {0, 0};
    LayeredReals(layers, range_attrs[k], range);
    bool limited = Limited(n, layers, limited_attrs[k], range_attrs[k], range);
    if (limited && !(range[0] < range[1])) {
      Fail(n, std::string("attribute '") + range_attrs[k] + "' must have lo < hi when '" +
                  limited_attrs[k] + "' is on, got " + Num(range[0]) + " " + Num(range[1]) +
                  Origin(Source(layers, range_attrs[k])));
    }
    (*ranges[k])[2 * a] = static_cast<Real>(range[0]);
    (*ranges[k])[2 * a + 1] = static_cast<Real>(range[1]);
    (*limited_flags[k])[a] = limited ? 1 : 0;
  }
}

// <custom>: user data is accepted and ignored; every <numeric> named `s2r_...` must be the
// `custom` name of a field in kernels/model_fields.h (an option or a per-world parameter), as
// `s2r_x` (every entity of the field) or `s2r_x:<entity name>` (one entity; applied after the
// whole-field settings, whatever the order in the file), holding the field's values per entity.
void Loader::ReadCustom(const std::vector<pugi::xml_node>& sections) {
  struct Setting {
    pugi::xml_node node;
    const FieldInfo* field;
    int entity;  // -1: every entity
    std::vector<double> data;
  };
  std::vector<Setting> settings;
  std::vector<pugi::xml_node> entries;
  for (pugi::xml_node section : sections) {
    CheckAttributes(section, false);
    CheckNoText(section);
    for (pugi::xml_node c : section.children()) {
      if (c.type() == pugi::node_element) entries.push_back(c);
    }
  }
  for (pugi::xml_node c : entries) {
    std::string tag = c.name();
    if (tag != "numeric" && tag != "text") {
      Fail(c, "element not allowed inside <custom> (the s2r subset has numeric and text)");
    }
    CheckAttributes(c, false);
    CheckNoText(c);
    if (c.first_child()) Fail(c.first_child(), "unexpected child element");
    if (!c.attribute("name") || std::string(c.attribute("name").value()).empty()) {
      Fail(c, "missing required attribute 'name'");
    }
    std::string name = c.attribute("name").value();
    if (!custom_ids_.emplace(name, 0).second) Fail(c, "duplicate custom name " + Quote(name));
    const bool ours = name.compare(0, 4, "s2r_") == 0;
    if (tag == "text") {
      if (ours) Fail(c, "names starting with 's2r_' are reserved for s2r <numeric> parameters");
      continue;
    }
    std::vector<double> data;
    for (const std::string& w : SplitWords(c.attribute("data").value())) {
      double v;
      if (!ParseReal(w, &v)) {
        Fail(c, "attribute 'data': " + Quote(w) + " is not a finite number");
      }
      data.push_back(v);
    }
    if (!ours) continue;  // user data: accepted and ignored

    // the field, and the entity after ':'
    size_t colon = name.find(':');
    const std::string key = name.substr(0, colon);
    const FieldInfo* field = nullptr;
    for (const FieldInfo& f : kModelFields) {
      if (f.custom[0] != '\0' && key == f.custom) field = &f;
    }
    if (field == nullptr) {
      Fail(c, "unknown s2r parameter " + Quote(name) +
                  " (names starting with 's2r_' are reserved; see docs/mjcf_subset.md)");
    }
    int entity = -1;
    if (colon != std::string::npos) {
      std::string entity_name = name.substr(colon + 1);
      const std::vector<std::string>* names = m_.Names(field->entity);
      if (field->cls != FieldClass::kParam || names == nullptr) {
        Fail(c, "s2r parameter " + Quote(key) + " is one value for the whole scene; it takes no ':<name>'");
      }
      for (size_t i = 0; i < names->size(); ++i) {
        if (!entity_name.empty() && (*names)[i] == entity_name) entity = static_cast<int>(i);
      }
      if (entity < 0) {
        Fail(c, key + " override names unknown " + EntityName(field->entity) + " " + Quote(entity_name));
      }
    }

    // its values: `per` numbers, each within the field's bound
    if (c.attribute("size") && std::string(Word(c, "size")) != std::to_string(field->per)) {
      Fail(c, "s2r parameter " + Quote(key) + " holds " + std::to_string(field->per) +
                  " number(s); attribute 'size' must be " + std::to_string(field->per));
    }
    if (static_cast<int>(data.size()) != field->per) {
      Fail(c, "attribute 'data' must hold exactly " + std::string(field->per == 1 ? "one number" : std::to_string(field->per) + " numbers") +
                  " for s2r parameter " + Quote(name) + ", got " + std::to_string(data.size()));
    }
    for (double v : data) {
      if (!WithinScalarBound(*field, v)) {
        Fail(c, "s2r parameter " + Quote(name) + " must be " + BoundText(*field) + ", got " + Num(v));
      }
    }
    settings.push_back({c, field, entity, data});
  }

  // options and whole-field settings first, then per-entity ones
  for (int pass = 0; pass < 2; ++pass) {
    for (const Setting& s : settings) {
      if ((s.entity >= 0) != (pass == 1)) continue;
      FieldId id = IdOf(*s.field);
      if (s.field->cls == FieldClass::kOption) {
        SetOption(&m_, id, s.data[0]);
        continue;
      }
      ForEachParam(m_, [&](FieldId fid, auto& values) {
        if (fid != id) return;
        using T = typename std::remove_reference_t<decltype(values)>::value_type;
        const int per = s.field->per;
        for (int e = 0; e < static_cast<int>(values.size()) / per; ++e) {
          if (s.entity >= 0 && e != s.entity) continue;
          for (int k = 0; k < per; ++k) values[e * per + k] = static_cast<T>(s.data[k]);
        }
      });
    }
  }
  // bounds that involve other fields (latency_steps <= max_latency_steps), at the setting's line
  for (const Setting& s : settings) {
    if (s.field->cls != FieldClass::kParam) continue;
    ForEachParam(m_, [&](FieldId fid, const auto& values) {
      if (fid != IdOf(*s.field)) return;
      std::vector<double> block(values.begin(), values.end());
      std::string error = FieldValuesError(m_, fid, block.data());
      if (!error.empty()) Fail(s.node, error);
    });
  }
}

// --- the document --------------------------------------------------------------------------------

Model Loader::Load() {
  pugi::xml_document doc;
  pugi::xml_parse_result parsed =
      doc.load_buffer(xml_.data(), xml_.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!parsed) {
    throw LoadError(file_ + ":" + std::to_string(LineOfOffset(parsed.offset)) +
                    ": <xml>: malformed XML: " + parsed.description());
  }
  pugi::xml_node root;
  for (pugi::xml_node c : doc.children()) {
    if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) {
      Fail(c, "unexpected text outside the root element");
    }
    if (c.type() != pugi::node_element) continue;
    if (root) Fail(c, "a second root element; an MJCF file has one <mujoco> root");
    root = c;
  }
  if (!root) throw LoadError(file_ + ":1: <xml>: no root element (expected <mujoco>)");
  if (std::string(root.name()) != "mujoco") Fail(root, "the root element must be <mujoco>");
  CheckAttributes(root, false);
  CheckNoText(root);

  // sections, compiled in MuJoCo's fixed order whatever their order in the file
  std::map<std::string, std::vector<pugi::xml_node>> sections;
  for (pugi::xml_node c : root.children()) {
    if (c.type() != pugi::node_element) continue;
    std::string tag = c.name();
    if (tag == "visual" || tag == "asset") continue;  // visual only: the whole subtree is ignored
    if (tag != "compiler" && tag != "option" && tag != "default" && tag != "worldbody" &&
        tag != "contact" && tag != "actuator" && tag != "custom") {
      Fail(c, "element not supported by the s2r MJCF subset (see docs/mjcf_subset.md)");
    }
    if (tag == "default" && !sections[tag].empty()) {
      Fail(c, "only one top-level <default> is allowed (nest <default class=...> inside it)");
    }
    sections[tag].push_back(c);
  }
  for (pugi::xml_node n : sections["compiler"]) ReadCompiler(n);
  for (pugi::xml_node n : sections["option"]) ReadOption(n);
  if (sections["default"].empty()) {
    DefaultClass main;
    main.name = "main";
    class_ids_["main"] = 0;
    classes_.push_back(main);
  } else {
    ReadDefaults(sections["default"][0], -1);
  }

  AddBody(&m_, "world", -1, {0, 0, 0}, {1, 0, 0, 0});
  body_ids_["world"] = 0;
  for (pugi::xml_node n : sections["worldbody"]) ReadBody(n, -1, Frame(), 0);

  for (pugi::xml_node n : sections["contact"]) {
    CheckAttributes(n, false);
    CheckNoText(n);
    for (pugi::xml_node c : n.children()) {
      if (c.type() != pugi::node_element) continue;
      if (std::string(c.name()) != "exclude") {
        Fail(c, "element not allowed inside <contact> (the s2r subset has exclude)");
      }
      ReadExclude(c);
    }
  }
  for (pugi::xml_node n : sections["actuator"]) {
    CheckAttributes(n, false);
    CheckNoText(n);
    for (pugi::xml_node c : n.children()) {
      if (c.type() == pugi::node_element) ReadActuator(c);
    }
  }
  ReadCustom(sections["custom"]);

  m_.source_text = xml_;
  try {
    m_.Finalize();
  } catch (const LoadError&) {
    throw;
  } catch (const std::exception& e) {
    throw LoadError(file_ + ": " + e.what());
  }
  return std::move(m_);
}

}  // namespace

Model LoadMjcfString(const std::string& xml, const std::string& name_for_errors) {
  Loader loader(xml, name_for_errors);
  return loader.Load();
}

Model LoadMjcfFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LoadError(path + ": cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw LoadError(path + ": read error");
  Model m = LoadMjcfString(text.str(), path);
  m.source_path = path;
  return m;
}

}  // namespace s2r
