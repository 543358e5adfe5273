#include "host/scene/mjcf_attributes.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>

namespace s2r::mjcf {

// --- attribute schema ----------------------------------------------------------------------------

namespace {

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

}  // namespace

// Attribute schema of every element the subset knows; nullptr for an unknown element.
const std::vector<AttrSpec>* SchemaFor(const std::string& tag) {
  static const std::map<std::string, std::vector<AttrSpec>> kSchemas = {
      {"mujoco", {Text("model")}},
      {"compiler",
       {Keyword("autolimits", "true false"), Keyword("angle", "degree radian"), Text("meshdir"),
        Text("assetdir")}},
      {"asset", {}},
      {"mesh",
       {Text("name"), Text("class"), Text("file"), Reals("scale", 3, 3), Int("maxhullvert"),
        Keyword("inertia", "convex exact legacy")}},
      {"option", {Reals("timestep", 1, 1), Reals("gravity", 3, 3)}},
      {"default", {Text("class")}},
      {"worldbody", {}},
      {"body",
       {Text("name"), Text("childclass"), Reals("pos", 3, 3), Reals("quat", 4, 4),
        Reals("euler", 3, 3), Reals("axisangle", 4, 4)}},
      {"geom",
       {Text("name"), Text("class"),
        Keyword("type", "plane sphere capsule box cylinder ellipsoid mesh"), Text("mesh"),
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

// --- angle units ---------------------------------------------------------------------------------

double ToRadians(double v, AngleUnit unit) {
  return unit == AngleUnit::kDegree ? v * kPiD / 180.0 : v;
}

// --- schema checks -------------------------------------------------------------------------------

void CheckNoText(const SourceFile& file, pugi::xml_node n) {
  for (pugi::xml_node c : n.children()) {
    if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) {
      std::string text = c.value();
      if (text.find_first_not_of(" \t\r\n") != std::string::npos) {
        file.Fail(n, "unexpected text " + Quote(text.substr(0, 40)) + " inside the element");
      }
    }
  }
}

void CheckAttributes(const SourceFile& file, pugi::xml_node n, bool in_default) {
  const std::vector<AttrSpec>* schema = SchemaFor(n.name());
  if (schema == nullptr) file.Fail(n, "unknown element (not in the s2r MJCF subset)");
  std::vector<std::string> seen;
  for (pugi::xml_attribute a : n.attributes()) {
    std::string name = a.name();
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      file.Fail(n, "attribute " + Quote(name) + " is given twice");
    }
    seen.push_back(name);
    const AttrSpec* spec = FindSpec(*schema, name);
    if (spec == nullptr)
      file.Fail(n, "unknown attribute " + Quote(name) + " (not in the s2r MJCF subset)");
    if (in_default && !spec->default_ok) {
      file.Fail(n, "attribute " + Quote(name) + " is not allowed inside <default>");
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
            file.Fail(n, "attribute " + Quote(name) + ": " + Quote(w) + " is not a finite number");
          }
        }
        int count = static_cast<int>(words.size());
        if (count < spec->min_count || count > spec->max_count) {
          std::string want =
              spec->min_count == spec->max_count
                  ? std::to_string(spec->min_count)
                  : std::to_string(spec->min_count) + " to " + std::to_string(spec->max_count);
          file.Fail(n, "attribute " + Quote(name) + " needs " + want + " number" +
                           (spec->max_count == 1 ? "" : "s") + ", got " + std::to_string(count));
        }
        break;
      }
      case AttrKind::kInt: {
        long v;
        if (words.size() != 1 || !ParseInt(words[0], &v)) {
          file.Fail(n,
                    "attribute " + Quote(name) + " must be one integer, got " + Quote(a.value()));
        }
        break;
      }
      case AttrKind::kKeyword: {
        std::vector<std::string> allowed = SplitWords(spec->keywords);
        if (words.size() != 1 ||
            std::find(allowed.begin(), allowed.end(), words[0]) == allowed.end()) {
          std::string list;
          for (const std::string& k : allowed) list += (list.empty() ? "" : "|") + k;
          file.Fail(n, "attribute " + Quote(name) + " must be one of " + list + ", got " +
                           Quote(a.value()));
        }
        break;
      }
    }
  }
}

// --- attribute access ----------------------------------------------------------------------------

std::vector<double> Reals(pugi::xml_node n, const char* attr) {
  std::vector<double> v;
  for (const std::string& w : SplitWords(n.attribute(attr).value())) {
    double x = 0;
    ParseReal(w, &x);
    v.push_back(x);
  }
  return v;
}

double Real1(pugi::xml_node n, const char* attr) { return Reals(n, attr)[0]; }

Vec3d Real3(pugi::xml_node n, const char* attr) {
  std::vector<double> v = Reals(n, attr);
  return Vec3d(v[0], v[1], v[2]);
}

std::string Word(pugi::xml_node n, const char* attr) {
  std::vector<std::string> w = SplitWords(n.attribute(attr).value());
  return w.empty() ? "" : w[0];
}

}  // namespace s2r::mjcf
