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
      {"include", {Text("file")}},
      {"compiler",
       {Keyword("autolimits", "true false"), Keyword("angle", "degree radian"),
        // file locations: meshdir and assetdir for mesh files; textures are visual
        Text("meshdir"), Text("texturedir"), Text("assetdir"), Keyword("strippath", "true false"),
        Keyword("discardvisual", "true false"), Keyword("usethread", "true false"),
        Reals("inertiagrouprange", 2, 2)}},
      // <option>: see ReadOption (mjcf_load.cc) for what each attribute does in s2r
      {"option",
       {Reals("timestep", 1, 1), Reals("gravity", 3, 3), Reals("impratio", 1, 1),
        Reals("density", 1, 1), Reals("viscosity", 1, 1), Reals("wind", 3, 3),
        Reals("magnetic", 3, 3), Reals("tolerance", 1, 1), Reals("ls_tolerance", 1, 1),
        Reals("noslip_tolerance", 1, 1), Reals("ccd_tolerance", 1, 1), Int("iterations"),
        Int("ls_iterations"), Int("noslip_iterations"), Int("ccd_iterations"),
        Int("sdf_iterations"), Int("sdf_initpoints"), Reals("apirate", 1, 1),
        Keyword("integrator", "Euler RK4 implicit implicitfast"),
        Keyword("cone", "pyramidal elliptic"), Keyword("jacobian", "dense sparse auto"),
        Keyword("solver", "PGS CG Newton"), Reals("o_margin", 1, 1), Reals("o_solref", 2, 2),
        Reals("o_solimp", 5, 5), Reals("o_friction", 5, 5)}},
      {"flag",
       {Keyword("constraint", "enable disable"), Keyword("equality", "enable disable"),
        Keyword("frictionloss", "enable disable"), Keyword("limit", "enable disable"),
        Keyword("contact", "enable disable"), Keyword("passive", "enable disable"),
        Keyword("gravity", "enable disable"), Keyword("clampctrl", "enable disable"),
        Keyword("warmstart", "enable disable"), Keyword("filterparent", "enable disable"),
        Keyword("actuation", "enable disable"), Keyword("refsafe", "enable disable"),
        Keyword("sensor", "enable disable"), Keyword("midphase", "enable disable"),
        Keyword("eulerdamp", "enable disable"), Keyword("autoreset", "enable disable"),
        Keyword("nativeccd", "enable disable"), Keyword("island", "enable disable"),
        Keyword("override", "enable disable"), Keyword("energy", "enable disable"),
        Keyword("fwdinv", "enable disable"), Keyword("invdiscrete", "enable disable"),
        Keyword("multiccd", "enable disable"), Keyword("sleep", "enable disable")}},
      // <size>: memory sizes for MuJoCo; accepted and not used
      {"size",
       {Text("memory"), Text("njmax"), Text("nconmax"), Text("nstack"), Text("nuserdata"),
        Text("nkey"), Text("nuser_body"), Text("nuser_jnt"), Text("nuser_geom"),
        Text("nuser_site"), Text("nuser_cam"), Text("nuser_tendon"), Text("nuser_actuator"),
        Text("nuser_sensor")}},
      {"asset", {}},
      {"mesh",
       {Text("name"), Text("class"), Text("file"), Reals("scale", 3, 3), Int("maxhullvert"),
        Keyword("inertia", "convex exact legacy")}},
      {"default", {Text("class")}},
      {"worldbody", {}},
      {"body",
       {Text("name"), Text("childclass"), Reals("pos", 3, 3), Reals("quat", 4, 4),
        Reals("euler", 3, 3), Reals("axisangle", 4, 4), Reals("gravcomp", 1, 1),
        Keyword("mocap", "true false"), Text("user")}},
      {"geom",
       {Text("name"), Text("class"),
        Keyword("type", "plane sphere capsule box mesh cylinder ellipsoid hfield sdf"),
        Reals("size", 1, 3), Reals("pos", 3, 3), Reals("quat", 4, 4), Reals("euler", 3, 3),
        Reals("axisangle", 4, 4), Reals("fromto", 6, 6), Reals("mass", 1, 1),
        Reals("density", 1, 1), Reals("friction", 1, 3), Int("contype"), Int("conaffinity"),
        Int("condim"), Int("priority"), Reals("solref", 2, 2), Reals("solimp", 3, 5),
        Reals("solmix", 1, 1), Reals("margin", 1, 1), Reals("gap", 1, 1), Text("mesh"),
        Keyword("fluidshape", "none ellipsoid"), Reals("fluidcoef", 5, 5), Text("user"),
        Keyword("shellinertia", "true false"), Visual("rgba"), Visual("material"),
        Int("group")}},
      {"joint",
       {Text("name"), Text("class"), Keyword("type", "free ball hinge slide"), Reals("pos", 3, 3),
        Reals("axis", 3, 3), Reals("range", 2, 2), Keyword("limited", kLimitedKeywords),
        Reals("damping", 1, 1), Reals("frictionloss", 1, 1), Reals("armature", 1, 1),
        Reals("stiffness", 1, 1), Reals("springref", 1, 1), Reals("ref", 1, 1),
        Reals("springdamper", 2, 2), Reals("margin", 1, 1), Reals("solreflimit", 2, 2),
        Reals("solimplimit", 3, 5), Reals("solreffriction", 2, 2), Reals("solimpfriction", 3, 5),
        Reals("actuatorfrcrange", 2, 2), Keyword("actuatorfrclimited", kLimitedKeywords),
        Keyword("actuatorgravcomp", "true false"), Text("user"), Visual("group")}},
      {"freejoint", {Text("name"), Visual("group"), Keyword("align", "true false auto")}},
      {"site",
       {Text("name"), Text("class"), Keyword("type", "sphere capsule ellipsoid cylinder box"),
        Reals("size", 1, 3), Reals("pos", 3, 3), Reals("quat", 4, 4), Reals("euler", 3, 3),
        Reals("axisangle", 4, 4), Reals("fromto", 6, 6), Text("user"), Visual("rgba"),
        Visual("material"), Visual("group")}},
      {"inertial",
       {Reals("pos", 3, 3), Reals("quat", 4, 4), Reals("euler", 3, 3), Reals("axisangle", 4, 4),
        Reals("mass", 1, 1), Reals("diaginertia", 3, 3), Reals("fullinertia", 6, 6)}},
      {"actuator", {}},
      {"position",
       {Text("name"), Text("class"), Text("joint"), Text("site"), Text("tendon"), Reals("gear", 1, 6),
        Reals("kp", 1, 1), Reals("kv", 1, 1), Reals("ctrlrange", 2, 2),
        Keyword("ctrllimited", kLimitedKeywords), Reals("forcerange", 2, 2),
        Keyword("forcelimited", kLimitedKeywords), Visual("group")}},
      {"velocity",
       {Text("name"), Text("class"), Text("joint"), Text("site"), Text("tendon"), Reals("gear", 1, 6),
        Reals("kv", 1, 1), Reals("ctrlrange", 2, 2), Keyword("ctrllimited", kLimitedKeywords),
        Reals("forcerange", 2, 2), Keyword("forcelimited", kLimitedKeywords), Visual("group")}},
      {"motor",
       {Text("name"), Text("class"), Text("joint"), Text("site"), Text("tendon"), Reals("gear", 1, 6),
        Reals("ctrlrange", 2, 2), Keyword("ctrllimited", kLimitedKeywords),
        Reals("forcerange", 2, 2), Keyword("forcelimited", kLimitedKeywords), Visual("group")}},
      // <general>: mapped onto position / velocity / motor when its law is exactly one of them
      // (ReadActuator)
      {"general",
       {Text("name"), Text("class"), Text("joint"), Text("site"), Text("tendon"),
        Reals("gear", 1, 6), Reals("ctrlrange", 2, 2), Keyword("ctrllimited", kLimitedKeywords),
        Reals("forcerange", 2, 2), Keyword("forcelimited", kLimitedKeywords),
        Keyword("dyntype", "none integrator filter filterexact muscle user"),
        Keyword("gaintype", "fixed affine muscle user"),
        Keyword("biastype", "none affine muscle user"), Reals("dynprm", 1, 10),
        Reals("gainprm", 1, 10), Reals("biasprm", 1, 10), Reals("actrange", 2, 2),
        Keyword("actlimited", kLimitedKeywords), Keyword("actearly", "true false"),
        Reals("lengthrange", 2, 2), Text("user"), Visual("group")}},
      {"contact", {}},
      {"exclude", {Text("name"), Text("body1"), Text("body2")}},
      // <equality> defaults, <equality><joint>, <connect> and <weld> (ReadEquality, mjcf_load.cc)
      {"equality",
       {Keyword("active", "true false"), Reals("solref", 2, 2), Reals("solimp", 3, 5)}},
      {"equality.section", {}},
      {"equality.joint",
       {Text("name"), Text("class"), Keyword("active", "true false"), Reals("solref", 2, 2),
        Reals("solimp", 3, 5), Text("joint1"), Text("joint2"), Reals("polycoef", 1, 5)}},
      {"equality.connect",
       {Text("name"), Text("class"), Keyword("active", "true false"), Reals("solref", 2, 2),
        Reals("solimp", 3, 5), Text("body1"), Text("body2"), Reals("anchor", 3, 3), Text("site1"),
        Text("site2")}},
      {"equality.weld",
       {Text("name"), Text("class"), Keyword("active", "true false"), Reals("solref", 2, 2),
        Reals("solimp", 3, 5), Text("body1"), Text("body2"), Reals("relpose", 7, 7),
        Reals("anchor", 3, 3), Reals("torquescale", 1, 1), Text("site1"), Text("site2")}},
      // <tendon><fixed> and its <joint> terms (ReadTendon, mjcf_load.cc)
      {"tendon", {}},
      {"fixed",
       {Text("name"), Text("class"), Keyword("limited", kLimitedKeywords), Reals("range", 2, 2),
        Reals("solreflimit", 2, 2), Reals("solimplimit", 3, 5), Reals("solreffriction", 2, 2),
        Reals("solimpfriction", 3, 5), Reals("frictionloss", 1, 1), Reals("margin", 1, 1),
        Reals("springlength", 1, 2), Reals("stiffness", 1, 1), Reals("damping", 1, 1),
        Reals("armature", 1, 1), Keyword("actuatorfrclimited", kLimitedKeywords),
        Reals("actuatorfrcrange", 2, 2), Text("user"), Visual("rgba"), Visual("material"),
        Visual("group"), Visual("width")}},
      {"tendon.joint", {Text("joint"), Reals("coef", 1, 1)}},
      {"keyframe", {}},
      {"key",
       {Text("name"), Reals("time", 1, 1), Reals("qpos", 1, 100000), Reals("qvel", 1, 100000),
        Reals("ctrl", 1, 100000), Reals("act", 1, 100000), Reals("mpos", 1, 100000),
        Reals("mquat", 1, 100000)}},
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

void CheckAttributes(const SourceFile& file, pugi::xml_node n, bool in_default,
                     const char* schema_name) {
  const std::vector<AttrSpec>* schema = SchemaFor(schema_name != nullptr ? schema_name : n.name());
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
