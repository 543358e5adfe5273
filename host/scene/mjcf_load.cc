// MJCF subset loader. See docs/mjcf_subset.md for what is accepted and what each thing means.
//
// Sections are compiled in MuJoCo's fixed order (compiler, option, default, worldbody, contact,
// actuator, custom), whatever their order in the file. Each element is checked against its
// attribute schema (names, number syntax and counts) when it is reached; values are then resolved
// through the default-class chain ("layers") and checked for meaning. Geometry is done in double
// precision and stored as Real at the end.
//
// The parts: mjcf_source (the text, and errors with file:line), mjcf_attributes (attribute schema,
// number syntax, angle units), mjcf_defaults (default classes and layered lookups), mjcf_body
// (<worldbody>), mjcf_mesh (<asset><mesh> and mesh geoms), mjcf_custom (<custom> and the s2r_ settings) and, here, the document itself:
// the sections, <compiler>, <option>, <contact>, <actuator> and the public entry points.
#include "host/scene/mjcf_load.h"

#include <fstream>
#include <map>
#include <pugixml.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "host/scene/mjcf_attributes.h"
#include "host/scene/mjcf_body.h"
#include "host/scene/mjcf_custom.h"
#include "host/scene/mjcf_defaults.h"
#include "host/scene/mjcf_loader.h"
#include "host/scene/mjcf_mesh.h"
#include "host/scene/mjcf_source.h"

namespace s2r {
namespace mjcf {
namespace {

// Compiles one document into a Model.
class Loader {
 public:
  Loader(const std::string& xml, const std::string& file)
      : file_(xml, file), s_(file_), m_(s_.model) {}

  Model Load();

 private:
  void ReadCompiler(pugi::xml_node n);
  void ReadOption(pugi::xml_node n);
  void ReadExclude(pugi::xml_node n);
  void ReadActuator(pugi::xml_node n);

  const SourceFile file_;
  LoadState s_;
  Model& m_;  // s_.model
};

// --- compiler, option ----------------------------------------------------------------------------

void Loader::ReadCompiler(pugi::xml_node n) {
  CheckAttributes(file_, n, false);
  if (n.first_child()) file_.Fail(n.first_child(), "<compiler> takes no child elements");
  if (n.attribute("angle")) {
    s_.compiler.angle = Word(n, "angle") == "degree" ? AngleUnit::kDegree : AngleUnit::kRadian;
  }
  if (n.attribute("autolimits")) s_.compiler.autolimits = Word(n, "autolimits") == "true";
  if (n.attribute("meshdir")) s_.compiler.meshdir = n.attribute("meshdir").value();
  if (n.attribute("assetdir")) s_.compiler.assetdir = n.attribute("assetdir").value();
}

void Loader::ReadOption(pugi::xml_node n) {
  CheckAttributes(file_, n, false);
  if (n.first_child()) {
    file_.Fail(n.first_child(), "<option> takes no child elements in the s2r subset");
  }
  if (n.attribute("timestep")) {
    double dt = Real1(n, "timestep");
    if (!(dt > 0)) file_.Fail(n, "attribute 'timestep' must be > 0, got " + Num(dt));
    m_.timestep = static_cast<Real>(dt);
  }
  if (n.attribute("gravity")) {
    Vec3d g = Real3(n, "gravity");
    for (int k = 0; k < 3; ++k) m_.gravity[k] = static_cast<Real>(g[k]);
  }
}

// --- contact, actuators --------------------------------------------------------------------------

void Loader::ReadExclude(pugi::xml_node n) {
  CheckAttributes(file_, n, false);
  CheckNoText(file_, n);
  if (n.first_child()) file_.Fail(n.first_child(), "unexpected child element");
  int ids[2];
  const char* attrs[2] = {"body1", "body2"};
  for (int k = 0; k < 2; ++k) {
    if (!n.attribute(attrs[k]))
      file_.Fail(n, std::string("missing required attribute '") + attrs[k] + "'");
    std::string name = n.attribute(attrs[k]).value();
    auto it = s_.body_ids.find(name);
    if (it == s_.body_ids.end()) {
      file_.Fail(n, std::string("attribute '") + attrs[k] + "' names unknown body " + Quote(name));
    }
    ids[k] = it->second;
  }
  m_.exclude_body_pairs.emplace_back(ids[0], ids[1]);
}

void Loader::ReadActuator(pugi::xml_node n) {
  std::string tag = n.name();
  if (tag != "position" && tag != "velocity" && tag != "motor") {
    file_.Fail(n,
               "element not allowed inside <actuator> (the s2r subset has position, velocity, "
               "motor)");
  }
  CheckAttributes(file_, n, false);
  CheckNoText(file_, n);
  if (n.first_child()) file_.Fail(n.first_child(), "unexpected child element");
  int cls = n.attribute("class") ? s_.defaults.ClassIndex(n, "class") : 0;
  // gear, ranges and limited flags come from the class's actuator default whatever its kind (as
  // in MuJoCo); kp and kv only from defaults of the same kind
  Layers layers = s_.defaults.LayersFor(n, cls, "actuator");
  Layers gain_layers;
  for (const pugi::xml_node& l : layers) {
    if (std::string(l.name()) == tag) gain_layers.push_back(l);
  }

  bool has_joint = n.attribute("joint"), has_site = n.attribute("site");
  if (has_joint == has_site) file_.Fail(n, "give exactly one of 'joint' and 'site'");
  TransmissionType trn = has_joint ? kTransmissionJoint : kTransmissionSite;
  std::string target = n.attribute(has_joint ? "joint" : "site").value();
  int trnid = -1;
  if (has_joint) {
    auto it = s_.joint_ids.find(target);
    if (it == s_.joint_ids.end()) {
      file_.Fail(n, "attribute 'joint' names unknown joint " + Quote(target));
    }
    trnid = it->second;
    if (m_.joint_type[trnid] == kJointFree) {
      file_.Fail(n, "joint " + Quote(target) +
                        " is a free joint; actuate a hinge or slide joint, or "
                        "use a site transmission");
    }
  } else {
    auto it = s_.site_ids.find(target);
    if (it == s_.site_ids.end()) {
      file_.Fail(n, "attribute 'site' names unknown site " + Quote(target));
    }
    trnid = it->second;
  }

  ActuatorType type = tag == "position"   ? kActuatorPosition
                      : tag == "velocity" ? kActuatorVelocity
                                          : kActuatorMotor;
  int a = AddActuator(&m_, n.attribute("name").value(), type, trn, trnid);
  s_.Register(&s_.actuator_ids, n, "actuator", a);

  double gear[6] = {1, 0, 0, 0, 0, 0};
  LayeredReals(layers, "gear", gear);
  for (int k = 0; k < 6; ++k) m_.actuator_gear[6 * a + k] = static_cast<Real>(gear[k]);

  double kp = type == kActuatorPosition ? 1.0 : 0.0;
  double kv = type == kActuatorVelocity ? 1.0 : 0.0;
  if (type == kActuatorPosition) {
    if (pugi::xml_node src = Source(gain_layers, "kp")) {
      kp = Real1(src, "kp");
      if (kp < 0) file_.Fail(n, "attribute 'kp' must be >= 0, got " + Num(kp) + file_.Origin(src));
    }
  }
  if (type != kActuatorMotor) {
    if (pugi::xml_node src = Source(gain_layers, "kv")) {
      kv = Real1(src, "kv");
      if (kv < 0) file_.Fail(n, "attribute 'kv' must be >= 0, got " + Num(kv) + file_.Origin(src));
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
    bool limited =
        Limited(file_, s_.compiler.autolimits, n, layers, limited_attrs[k], range_attrs[k], range);
    if (limited && !(range[0] < range[1])) {
      file_.Fail(n, std::string("attribute '") + range_attrs[k] + "' must have lo < hi when '" +
                        limited_attrs[k] + "' is on, got " + Num(range[0]) + " " + Num(range[1]) +
                        file_.Origin(Source(layers, range_attrs[k])));
    }
    (*ranges[k])[2 * a] = static_cast<Real>(range[0]);
    (*ranges[k])[2 * a + 1] = static_cast<Real>(range[1]);
    (*limited_flags[k])[a] = limited ? 1 : 0;
  }
}

// --- the document --------------------------------------------------------------------------------

Model Loader::Load() {
  pugi::xml_document doc;
  pugi::xml_parse_result parsed = doc.load_buffer(file_.xml().data(), file_.xml().size(),
                                                  pugi::parse_default, pugi::encoding_utf8);
  if (!parsed) {
    throw LoadError(file_.name() + ":" + std::to_string(file_.LineOfOffset(parsed.offset)) +
                    ": <xml>: malformed XML: " + parsed.description());
  }
  pugi::xml_node root;
  for (pugi::xml_node c : doc.children()) {
    if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) {
      file_.Fail(c, "unexpected text outside the root element");
    }
    if (c.type() != pugi::node_element) continue;
    if (root) file_.Fail(c, "a second root element; an MJCF file has one <mujoco> root");
    root = c;
  }
  if (!root) throw LoadError(file_.name() + ":1: <xml>: no root element (expected <mujoco>)");
  if (std::string(root.name()) != "mujoco") file_.Fail(root, "the root element must be <mujoco>");
  CheckAttributes(file_, root, false);
  CheckNoText(file_, root);

  // sections, compiled in MuJoCo's fixed order whatever their order in the file
  std::map<std::string, std::vector<pugi::xml_node>> sections;
  for (pugi::xml_node c : root.children()) {
    if (c.type() != pugi::node_element) continue;
    std::string tag = c.name();
    if (tag == "visual") continue;  // visual only: the whole subtree is ignored
    if (tag != "compiler" && tag != "asset" && tag != "option" && tag != "default" && tag != "worldbody" &&
        tag != "contact" && tag != "actuator" && tag != "custom") {
      file_.Fail(c, "element not supported by the s2r MJCF subset (see docs/mjcf_subset.md)");
    }
    if (tag == "default" && !sections[tag].empty()) {
      file_.Fail(c, "only one top-level <default> is allowed (nest <default class=...> inside it)");
    }
    sections[tag].push_back(c);
  }
  for (pugi::xml_node n : sections["compiler"]) ReadCompiler(n);
  for (pugi::xml_node n : sections["option"]) ReadOption(n);
  if (sections["default"].empty()) {
    s_.defaults.AddEmptyMain();
  } else {
    s_.defaults.ReadDefaults(sections["default"][0], -1);
  }

  ReadAssets(sections["asset"], &s_);

  AddBody(&m_, "world", -1, {0, 0, 0}, {1, 0, 0, 0});
  s_.body_ids["world"] = 0;
  for (pugi::xml_node n : sections["worldbody"]) ReadWorldBody(n, &s_);

  for (pugi::xml_node n : sections["contact"]) {
    CheckAttributes(file_, n, false);
    CheckNoText(file_, n);
    for (pugi::xml_node c : n.children()) {
      if (c.type() != pugi::node_element) continue;
      if (std::string(c.name()) != "exclude") {
        file_.Fail(c, "element not allowed inside <contact> (the s2r subset has exclude)");
      }
      ReadExclude(c);
    }
  }
  for (pugi::xml_node n : sections["actuator"]) {
    CheckAttributes(file_, n, false);
    CheckNoText(file_, n);
    for (pugi::xml_node c : n.children()) {
      if (c.type() == pugi::node_element) ReadActuator(c);
    }
  }
  ReadCustom(sections["custom"], &s_);

  m_.source_text = file_.xml();
  try {
    m_.Finalize();
  } catch (const LoadError&) {
    throw;
  } catch (const std::exception& e) {
    throw LoadError(file_.name() + ": " + e.what());
  }
  return std::move(m_);
}

}  // namespace
}  // namespace mjcf

Model LoadMjcfString(const std::string& xml, const std::string& name_for_errors) {
  mjcf::Loader loader(xml, name_for_errors);
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
