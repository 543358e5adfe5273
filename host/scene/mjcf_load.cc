// MJCF subset loader. See docs/mjcf_subset.md for what is accepted and what each thing means.
//
// <include> elements are expanded first (mjcf_include.h). Sections are then compiled in MuJoCo's
// fixed order (compiler, option, default, worldbody, contact, actuator, custom, keyframe),
// whatever their order in the file. Each element is checked against its
// attribute schema (names, number syntax and counts) when it is reached; values are then resolved
// through the default-class chain ("layers") and checked for meaning. Geometry is done in double
// precision and stored as Real at the end.
//
// The parts: mjcf_source (the text, and errors with file:line), mjcf_attributes (attribute schema,
// number syntax, angle units), mjcf_defaults (default classes and layered lookups), mjcf_body
// (<worldbody>), mjcf_mesh (<asset><mesh> and mesh geoms), mjcf_custom (<custom> and the s2r_ settings) and, here, the document itself:
// the sections, <compiler>, <option>, <contact>, <actuator> and the public entry points.
#include "host/scene/mjcf_load.h"

#include <cmath>
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
#include "host/scene/mjcf_include.h"
#include "host/scene/mjcf_loader.h"
#include "host/scene/mjcf_mesh.h"
#include "host/scene/mjcf_source.h"

namespace s2r {
namespace mjcf {
namespace {

// Compiles one document into a Model.
class Loader {
 public:
  Loader(const std::string& xml, const std::string& file, IncludeReader include_reader)
      : file_(xml, file), s_(file_), m_(s_.model), include_reader_(std::move(include_reader)) {}

  Model Load();

 private:
  void ReadCompiler(pugi::xml_node n);
  void ReadOption(pugi::xml_node n);
  void ReadExclude(pugi::xml_node n);
  void ReadEquality(pugi::xml_node section);
  int ReadEqualityJoint(pugi::xml_node c);
  int ReadEqualityBodies(pugi::xml_node c, bool weld);
  void ReadTendon(pugi::xml_node section);
  void ReadActuator(pugi::xml_node n);
  void ReadKeyframes(const std::vector<pugi::xml_node>& sections);
  void MapGeneral(pugi::xml_node n, const Layers& general_layers, ActuatorType* type, double* kp,
                  double* kv, double* scale, double* offset);

  SourceFile file_;
  LoadState s_;
  bool gravity_disabled_ = false;  // <flag gravity="disable">
  Model& m_;  // s_.model
  IncludeReader include_reader_;
  std::vector<pugi::xml_node> equality_nodes_, tendon_nodes_;  // by index, for Finalize's errors
  std::map<std::string, int> tendon_ids_;
};

// --- compiler, option ----------------------------------------------------------------------------

void Loader::ReadCompiler(pugi::xml_node n) {
  CheckAttributes(file_, n, false);
  if (n.first_child()) file_.Fail(n.first_child(), "<compiler> takes no child elements");
  if (n.attribute("angle")) {
    s_.compiler.angle = Word(n, "angle") == "degree" ? AngleUnit::kDegree : AngleUnit::kRadian;
  }
  if (n.attribute("autolimits")) s_.compiler.autolimits = Word(n, "autolimits") == "true";
  // texturedir, strippath: textures are visual; discardvisual, usethread: no effect on the model
  // s2r builds; meshdir and assetdir locate mesh files (mjcf_mesh.cc)
  if (n.attribute("meshdir")) s_.compiler.meshdir = n.attribute("meshdir").value();
  if (n.attribute("assetdir")) s_.compiler.assetdir = n.attribute("assetdir").value();
  // inertiagrouprange: which geom groups give their body mass (read in mjcf_body.cc)
  if (n.attribute("inertiagrouprange")) {
    std::vector<double> r = Reals(n, "inertiagrouprange");
    for (double v : r) {
      if (v != std::floor(v) || v < 0) {
        file_.Fail(n, "attribute 'inertiagrouprange' must be two integers >= 0, got " + Num(v));
      }
    }
    if (r[0] > r[1]) {
      file_.Fail(n, "attribute 'inertiagrouprange' must have lo <= hi, got " + Num(r[0]) + " " +
                        Num(r[1]));
    }
    s_.compiler.inertia_group_lo = static_cast<int>(r[0]);
    s_.compiler.inertia_group_hi = static_cast<int>(r[1]);
  }
}

// What s2r does with an <option> attribute or <flag> that differs from MuJoCo's default.
enum class OptionUse {
  kNote,    // accepted with a note: s2r has its own equivalent, or it cannot change s2r's dynamics
  kReject,  // it would change the dynamics in a way s2r cannot honour
};

void Loader::ReadOption(pugi::xml_node n) {
  CheckAttributes(file_, n, false);
  CheckNoText(file_, n);
  if (n.attribute("timestep")) {
    double dt = Real1(n, "timestep");
    if (!(dt > 0)) file_.Fail(n, "attribute 'timestep' must be > 0, got " + Num(dt));
    m_.timestep = static_cast<Real>(dt);
  }
  if (n.attribute("gravity") && !gravity_disabled_) {
    Vec3d g = Real3(n, "gravity");
    for (int k = 0; k < 3; ++k) m_.gravity[k] = static_cast<Real>(g[k]);
  }
  // fluid forces: s2r has none, so a medium with density or viscosity is an error
  for (const char* a : {"density", "viscosity"}) {
    if (n.attribute(a) && Real1(n, a) != 0) {
      file_.Fail(n, std::string("attribute '") + a + "' = " + Num(Real1(n, a)) +
                        ": s2r has no fluid (drag) forces; remove it or set it to 0");
    }
  }
  if (n.attribute("wind") && Real3(n, "wind").norm() != 0) {
    file_.Fail(n, "attribute 'wind': s2r has no fluid (drag) forces; remove it or set it to 0");
  }
  // MuJoCo's solver and integrator settings: s2r steps with its own substepped soft-constraint
  // solver (docs/physics.md), tuned by s2r_substeps and the s2r_*_hertz settings
  for (const char* a : {"integrator", "iterations", "ls_iterations", "tolerance", "ls_tolerance",
                        "solver", "jacobian", "noslip_iterations", "noslip_tolerance",
                        "ccd_iterations", "ccd_tolerance", "sdf_iterations", "sdf_initpoints",
                        "cone", "impratio"}) {
    if (n.attribute(a)) {
      s_.Note(n, std::string("option.") + a,
              std::string("attribute '") + a + "' is not used: s2r steps with its own " +
                  "substepped soft-constraint solver (s2r_substeps, s2r_contact_hertz, ...)");
    }
  }
  // not used by the dynamics: API rate limit, magnetometer field, override parameters (only
  // read with <flag override="enable">, which is rejected)
  for (const char* a : {"apirate", "magnetic", "o_margin", "o_solref", "o_solimp", "o_friction"}) {
    if (n.attribute(a)) {
      s_.Note(n, std::string("option.") + a, std::string("attribute '") + a + "' is not used");
    }
  }

  struct FlagSpec {
    const char* name;
    bool enabled_by_default;
    OptionUse use;
  };
  static const FlagSpec kFlags[] = {
      {"constraint", true, OptionUse::kReject}, {"equality", true, OptionUse::kReject},
      {"frictionloss", true, OptionUse::kReject}, {"limit", true, OptionUse::kReject},
      {"contact", true, OptionUse::kReject},    {"passive", true, OptionUse::kReject},
      {"gravity", true, OptionUse::kReject},    {"clampctrl", true, OptionUse::kReject},
      {"actuation", true, OptionUse::kReject},  {"filterparent", true, OptionUse::kReject},
      {"override", false, OptionUse::kReject},  {"warmstart", true, OptionUse::kNote},
      {"refsafe", true, OptionUse::kNote},      {"sensor", true, OptionUse::kNote},
      {"midphase", true, OptionUse::kNote},     {"eulerdamp", true, OptionUse::kNote},
      {"autoreset", true, OptionUse::kNote},    {"nativeccd", true, OptionUse::kNote},
      {"island", false, OptionUse::kNote},      {"energy", false, OptionUse::kNote},
      {"fwdinv", false, OptionUse::kNote},      {"invdiscrete", false, OptionUse::kNote},
      {"multiccd", false, OptionUse::kNote},    {"sleep", false, OptionUse::kNote},
  };
  for (pugi::xml_node c : n.children()) {
    if (c.type() != pugi::node_element) continue;
    if (std::string(c.name()) != "flag") {
      file_.Fail(c, "element not allowed inside <option> (MJCF has <flag>)");
    }
    CheckAttributes(file_, c, false);
    CheckNoText(file_, c);
    if (c.first_child()) file_.Fail(c.first_child(), "unexpected child element");
    for (const FlagSpec& f : kFlags) {
      if (!c.attribute(f.name)) continue;
      const bool enabled = Word(c, f.name) == "enable";
      if (enabled == f.enabled_by_default) continue;
      const std::string what = std::string(f.name) + "=\"" + Word(c, f.name) + "\"";
      if (std::string(f.name) == "gravity") {
        // mapped: no gravity
        for (int k = 0; k < 3; ++k) m_.gravity[k] = Real(0);
        gravity_disabled_ = true;
        continue;
      }
      if (f.use == OptionUse::kReject) {
        file_.Fail(c, "flag " + what + " would change the dynamics in a way s2r cannot honour");
      }
      s_.Note(c, std::string("flag.") + f.name,
              "flag " + what + " is not used (it cannot change s2r's dynamics)");
    }
  }
}

// --- keyframes -----------------------------------------------------------------------------------

void Loader::ReadKeyframes(const std::vector<pugi::xml_node>& sections) {
  const int nq = m_.nq(), nv = m_.nv(), nu = m_.nactuator();
  for (pugi::xml_node section : sections) {
    CheckAttributes(file_, section, false);
    CheckNoText(file_, section);
    for (pugi::xml_node k : section.children()) {
      if (k.type() != pugi::node_element) continue;
      if (std::string(k.name()) != "key") {
        file_.Fail(k, "element not allowed inside <keyframe> (MJCF has <key>)");
      }
      CheckAttributes(file_, k, false);
      CheckNoText(file_, k);
      if (k.first_child()) file_.Fail(k.first_child(), "unexpected child element");
      Model::Keyframe key;
      key.name = k.attribute("name").value();
      if (!key.name.empty() && m_.FindKeyframe(key.name) != nullptr) {
        file_.Fail(k, "duplicate keyframe name " + Quote(key.name));
      }
      struct Sized {
        const char* attr;
        int want;
        const char* size_name;
        std::vector<double>* out;
      };
      const Sized sized[] = {{"qpos", nq, "nq", &key.qpos},
                             {"qvel", nv, "nv", &key.qvel},
                             {"ctrl", nu, "nu", &key.ctrl}};
      for (const Sized& z : sized) {
        if (!k.attribute(z.attr)) continue;
        *z.out = Reals(k, z.attr);
        if (static_cast<int>(z.out->size()) != z.want) {
          file_.Fail(k, std::string("attribute '") + z.attr + "' has " +
                            std::to_string(z.out->size()) + " numbers; the model has " +
                            z.size_name + " = " + std::to_string(z.want));
        }
      }
      if (k.attribute("act")) {
        file_.Fail(k, "attribute 'act': the model has no actuator activations (na = 0)");
      }
      for (const char* a : {"mpos", "mquat"}) {
        if (k.attribute(a)) {
          file_.Fail(k, std::string("attribute '") + a + "': s2r has no mocap bodies");
        }
      }
      if (k.attribute("time") && Real1(k, "time") != 0) {
        s_.Note(k, "key.time", "attribute 'time' is not used (every episode starts at time 0)");
      }
      // a free joint's quaternion must not be zero
      int iq = 0;
      for (int j = 0; j < m_.njoint() && !key.qpos.empty(); ++j) {
        if (m_.joint_type[j] == kJointWeld) continue;
        if (m_.joint_type[j] == kJointFree || m_.joint_part[j] == 4 || (m_.joint_part[j] == 1 && !m_.JointIsFreePart(j))) {
          const int first = m_.joint_part[j] == 1 ? 0 : 3;
          double q2 = 0;
          for (int c = first; c < first + 4; ++c) q2 += key.qpos[iq + c] * key.qpos[iq + c];
          if (!(q2 > 1e-24)) {
            // a ball's or floating base's parts are named joint:x ... joint:tz: the MJCF name
            std::string name = m_.joint_name[j];
            if (m_.joint_part[j] != 0 && name.rfind(':') != std::string::npos) name.erase(name.rfind(':'));
            file_.Fail(k, "attribute 'qpos': joint " + Quote(name) + " has a zero quaternion");
          }
        }
        iq += m_.JointQposSize(j);
      }
      m_.keyframes.push_back(key);
    }
  }
  // the keyframe named "home" is the initial state (s2r rollout --keyframe picks another)
  if (m_.FindKeyframe("home") != nullptr) m_.ApplyKeyframe("home");
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

// --- equality, tendon -----------------------------------------------------------------------------

// <equality><joint joint1 joint2 polycoef .../>: q1 = poly(q2); <equality><connect body1 body2
// anchor .../> or <connect site1 site2 .../>: a point of body1 held on a point of body2;
// <equality><weld body1 body2 relpose anchor torquescale/> or <weld site1 site2 torquescale/>:
// body2's pose held in body1's frame (kernels/solver_coupling.h). All share name, class, active,
// solref and solimp. tendon and flex equalities are rejected at their line.
void Loader::ReadEquality(pugi::xml_node section) {
  CheckAttributes(file_, section, false, "equality.section");
  CheckNoText(file_, section);
  for (pugi::xml_node c : section.children()) {
    if (c.type() != pugi::node_element) continue;
    std::string tag = c.name();
    if (tag != "joint" && tag != "connect" && tag != "weld") {
      file_.Fail(c, "<equality><" + tag + "> is not supported by s2r (the subset has joint "
                    "couplings, joint1 = polycoef(joint2), connects and welds, on bodies and joints "
                    "of reduced-coordinate trees)");
    }
    CheckAttributes(file_, c, false, ("equality." + tag).c_str());
    CheckNoText(file_, c);
    if (c.first_child()) file_.Fail(c.first_child(), "unexpected child element");
    int cls = c.attribute("class") ? s_.defaults.ClassIndex(c, "class") : 0;
    Layers layers = s_.defaults.LayersFor(c, cls, "equality");
    const int e = tag == "joint" ? ReadEqualityJoint(c) : ReadEqualityBodies(c, tag == "weld");
    equality_nodes_.push_back(c);
    double solref[2] = {0.02, 1};
    LayeredReals(layers, "solref", solref);
    if (!(solref[0] > 0 && solref[1] > 0)) {
      file_.Fail(c, "attribute 'solref' = " + Num(solref[0]) + " " + Num(solref[1]) +
                        ": s2r takes a time constant and damping ratio, both > 0 (not MuJoCo's "
                        "negative stiffness/damping form)" + file_.Origin(Source(layers, "solref")));
    }
    for (int k = 0; k < 2; ++k) m_.equality_solref[2 * e + k] = static_cast<Real>(solref[k]);
    m_.equality_active[e] = LayeredWord(layers, "active", "true") == "true" ? 1 : 0;
    if (pugi::xml_node src = Source(layers, "solimp")) {
      s_.Note(src, "equality.solimp",
              "attribute 'solimp' is not used: an s2r equality is rigid at the velocity level and "
              "corrects its position error at the rate solref gives (docs/physics.md)");
    }
  }
}

int Loader::ReadEqualityJoint(pugi::xml_node c) {
  int joints[2] = {-1, -1};
  const char* attrs[2] = {"joint1", "joint2"};
  for (int k = 0; k < 2; ++k) {
    if (!c.attribute(attrs[k])) {
      if (k == 0) file_.Fail(c, "missing required attribute 'joint1'");
      continue;
    }
    std::string name = c.attribute(attrs[k]).value();
    auto it = s_.joint_ids.find(name);
    if (it == s_.joint_ids.end()) {
      file_.Fail(c, std::string("attribute '") + attrs[k] + "' names unknown joint " + Quote(name));
    }
    int j = it->second;
    if ((m_.joint_type[j] != kJointHinge && m_.joint_type[j] != kJointSlide) || m_.joint_part[j]) {
      file_.Fail(c, std::string("attribute '") + attrs[k] + "': joint " + Quote(name) +
                        " is not a hinge or slide joint");
    }
    joints[k] = j;
  }
  if (joints[0] == joints[1]) file_.Fail(c, "joint1 and joint2 are the same joint");
  int e = AddEqualityJoint(&m_, c.attribute("name").value(), joints[0], joints[1]);
  double polycoef[5] = {0, 1, 0, 0, 0};
  if (c.attribute("polycoef")) LayeredReals(Layers{c}, "polycoef", polycoef);
  for (int k = 0; k < 5; ++k) m_.equality_polycoef[5 * e + k] = static_cast<Real>(polycoef[k]);
  return e;
}

// MuJoCo's connect and weld. Connect with body1 (body2 absent: the world): the point is `anchor`
// in body1's frame, and body2's point is where that point lies in body2's frame at the reference
// configuration (the bodies as the file places them). Weld with body1: `anchor` is the point in
// body2's frame (default its origin); relpose (pos, quat), when its quaternion is not all zeros
// (the MJCF default "0 1 0 0 0 0 0" is), gives body1's point and body2's orientation in body1's
// frame, and otherwise both come from the reference configuration. With site1 and site2 (either
// kind), the sites' positions, and for a weld their frames aligned. The bodies' world poses here
// are the reference configuration (body_pos0 / body_quat0).
int Loader::ReadEqualityBodies(pugi::xml_node c, bool weld) {
  const std::string kind = weld ? "weld" : "connect";
  const bool by_body = c.attribute("body1"), by_site = c.attribute("site1") || c.attribute("site2");
  const std::string forms = weld ? "a weld names either body1 (and body2, relpose, anchor) or site1 and site2"
                                 : "a connect names either body1 (and body2) with anchor, or site1 and site2";
  if (by_body == by_site) file_.Fail(c, forms);
  auto body_named = [&](const char* attr) {
    std::string name = c.attribute(attr).value();
    if (s_.merged_bodies.count(name)) {
      file_.Fail(c, std::string("attribute '") + attr + "' names body " + Quote(name) +
                        ", a massless welded body s2r merged into its parent; name the parent");
    }
    auto it = s_.body_ids.find(name);
    if (it == s_.body_ids.end()) {
      file_.Fail(c, std::string("attribute '") + attr + "' names unknown body " + Quote(name));
    }
    return it->second;
  };
  auto world_pose = [&](int b) {
    return Transform{LoadVec3(&m_.body_pos0[3 * b]), LoadQuat(&m_.body_quat0[4 * b])};
  };
  auto vec = [](const double* v) {
    return Vec3{static_cast<Real>(v[0]), static_cast<Real>(v[1]), static_cast<Real>(v[2])};
  };
  int bodies[2] = {0, 0};
  Vec3 local[2];
  Quat relquat = QuatIdentity();
  if (by_body) {
    if (c.attribute("site1") || c.attribute("site2")) file_.Fail(c, forms);
    if (!weld && !c.attribute("anchor")) file_.Fail(c, "missing required attribute 'anchor'");
    bodies[0] = body_named("body1");
    bodies[1] = c.attribute("body2") ? body_named("body2") : 0;
    double anchor[3] = {0, 0, 0};
    LayeredReals(Layers{c}, "anchor", anchor);
    const Transform pose1 = world_pose(bodies[0]), pose2 = world_pose(bodies[1]);
    if (!weld) {
      local[0] = vec(anchor);
      local[1] = InvTransformPoint(pose2, TransformPoint(pose1, local[0]));
    } else {
      double relpose[7] = {0, 1, 0, 0, 0, 0, 0};
      LayeredReals(Layers{c}, "relpose", relpose);
      local[1] = vec(anchor);
      const double qn = std::sqrt(relpose[3] * relpose[3] + relpose[4] * relpose[4] +
                                  relpose[5] * relpose[5] + relpose[6] * relpose[6]);
      if (qn > 0) {
        local[0] = vec(relpose);
        relquat = NormalizeQuat(Quat{static_cast<Real>(relpose[3]), static_cast<Real>(relpose[4]),
                                     static_cast<Real>(relpose[5]), static_cast<Real>(relpose[6])});
      } else {
        local[0] = InvTransformPoint(pose1, TransformPoint(pose2, local[1]));
        relquat = NormalizeQuat(Conjugate(pose1.rot) * pose2.rot);
      }
    }
  } else {
    if (c.attribute("anchor")) file_.Fail(c, "attribute 'anchor' is for a " + kind + " by body1 and body2");
    if (c.attribute("relpose")) file_.Fail(c, "attribute 'relpose' is for a weld by body1 and body2");
    const char* attrs[2] = {"site1", "site2"};
    Quat site_quat[2];
    for (int k = 0; k < 2; ++k) {
      if (!c.attribute(attrs[k])) file_.Fail(c, std::string("missing required attribute '") + attrs[k] + "'");
      std::string name = c.attribute(attrs[k]).value();
      auto it = s_.site_ids.find(name);
      if (it == s_.site_ids.end()) {
        file_.Fail(c, std::string("attribute '") + attrs[k] + "' names unknown site " + Quote(name));
      }
      bodies[k] = m_.site_body[it->second];
      local[k] = LoadVec3(&m_.site_pos[3 * it->second]);
      site_quat[k] = LoadQuat(&m_.site_quat[4 * it->second]);
    }
    relquat = NormalizeQuat(site_quat[0] * Conjugate(site_quat[1]));
  }
  if (bodies[0] == bodies[1]) file_.Fail(c, "a " + kind + " joins two different bodies");
  if (!m_.body_dynamic[bodies[0]] && !m_.body_dynamic[bodies[1]]) {
    file_.Fail(c, "a " + kind + " between two fixed bodies holds nothing");
  }
  const std::array<Real, 3> a1{local[0].x, local[0].y, local[0].z}, a2{local[1].x, local[1].y, local[1].z};
  if (!weld) return AddEqualityConnect(&m_, c.attribute("name").value(), bodies[0], bodies[1], a1, a2);
  double torquescale = 1;
  LayeredReals(Layers{c}, "torquescale", &torquescale);
  if (!(torquescale >= 0)) {
    file_.Fail(c, "attribute 'torquescale' = " + Num(torquescale) + ": must be >= 0");
  }
  return AddEqualityWeld(&m_, c.attribute("name").value(), bodies[0], bodies[1], a1, a2,
                         {relquat.w, relquat.x, relquat.y, relquat.z}, static_cast<Real>(torquescale));
}

// <tendon><fixed name><joint joint coef/>...</fixed></tendon>: length = sum coef q, for actuator
// transmissions. Limits, springs, damping, friction loss and armature on a tendon are rejected at
// their line (s2r has no tendon rows but the actuators'); spatial tendons likewise.
void Loader::ReadTendon(pugi::xml_node section) {
  CheckAttributes(file_, section, false);
  CheckNoText(file_, section);
  for (pugi::xml_node c : section.children()) {
    if (c.type() != pugi::node_element) continue;
    std::string tag = c.name();
    if (tag != "fixed") {
      file_.Fail(c, "<tendon><" + tag + "> is not supported by s2r (the subset has fixed tendons: "
                    "length = sum coef q, as actuator transmissions)");
    }
    CheckAttributes(file_, c, false);
    CheckNoText(file_, c);
    if (c.attribute("class")) s_.defaults.ClassIndex(c, "class");  // s2r has no tendon defaults
    for (const char* a : {"stiffness", "damping", "frictionloss", "armature"}) {
      if (c.attribute(a) && Real1(c, a) != 0) {
        file_.Fail(c, std::string("attribute '") + a + "' = " + Num(Real1(c, a)) +
                          ": s2r tendons are actuator transmissions only (no tendon " + a +
                          "); remove it or set it to 0");
      }
    }
    if (c.attribute("range")) {
      std::vector<double> range = Reals(c, "range");
      std::string limited = c.attribute("limited") ? Word(c, "limited") : "auto";
      bool on = limited == "true" || (limited == "auto" && s_.compiler.autolimits &&
                                      !(range[0] == 0 && range[1] == 0));
      if (on) file_.Fail(c, "attribute 'range': s2r has no tendon limits; remove the range");
    } else if (c.attribute("limited") && Word(c, "limited") == "true") {
      file_.Fail(c, "attribute 'limited': s2r has no tendon limits");
    }
    if (c.attribute("actuatorfrcrange") || c.attribute("actuatorfrclimited")) {
      file_.Fail(c, "attribute 'actuatorfrcrange': s2r does not clamp the total actuator force on a "
                    "tendon; use the actuators' forcerange");
    }
    for (const char* a : {"margin", "springlength", "solreflimit", "solimplimit", "solreffriction",
                          "solimpfriction"}) {
      if (c.attribute(a)) {
        s_.Note(c, std::string("tendon.") + a,
                std::string("attribute '") + a + "' is not used (the tendon has no limit, spring "
                                                 "or friction)");
      }
    }
    std::vector<std::pair<int, Real>> terms;
    for (pugi::xml_node t : c.children()) {
      if (t.type() != pugi::node_element) continue;
      if (std::string(t.name()) != "joint") {
        file_.Fail(t, "element not allowed inside a fixed tendon (it has joint terms)");
      }
      CheckAttributes(file_, t, false, "tendon.joint");
      CheckNoText(file_, t);
      if (t.first_child()) file_.Fail(t.first_child(), "unexpected child element");
      for (const char* a : {"joint", "coef"}) {
        if (!t.attribute(a)) file_.Fail(t, std::string("missing required attribute '") + a + "'");
      }
      std::string name = t.attribute("joint").value();
      auto it = s_.joint_ids.find(name);
      if (it == s_.joint_ids.end()) file_.Fail(t, "attribute 'joint' names unknown joint " + Quote(name));
      int j = it->second;
      if ((m_.joint_type[j] != kJointHinge && m_.joint_type[j] != kJointSlide) || m_.joint_part[j]) {
        file_.Fail(t, "joint " + Quote(name) + " is not a hinge or slide joint");
      }
      for (const auto& prev : terms) {
        if (prev.first == j) file_.Fail(t, "joint " + Quote(name) + " is already a term of this tendon");
      }
      terms.emplace_back(j, static_cast<Real>(Real1(t, "coef")));
    }
    if (terms.empty()) file_.Fail(c, "a fixed tendon needs at least one <joint> term");
    int id = AddFixedTendon(&m_, c.attribute("name").value(), terms);
    tendon_nodes_.push_back(c);
    s_.Register(&tendon_ids_, c, "tendon", id);
  }
}

// <general>: force = gain ctrl + b0 + b1 length + b2 velocity (dyntype none, gaintype fixed,
// biastype none or affine). s2r has this law in three forms, each reading the control through
// actuator_ctrlmap (u = scale ctrl + offset), and maps a <general> onto the one it is exactly:
// a position servo when b1 < 0 (kp = -b1, kv = -b2, u = (gain ctrl + b0) / kp: the target), a
// velocity servo when b1 = 0 and b2 < 0 (kv = -b2, u = (gain ctrl + b0) / kv), or a motor when
// b1 = b2 = 0 (u = gain ctrl + b0: the force). A positive b1 or b2 (a spring or damper pushing
// away from the target) is an error naming the line.
void Loader::MapGeneral(pugi::xml_node n, const Layers& layers, ActuatorType* type, double* kp,
                        double* kv, double* scale, double* offset) {
  const std::string dyntype = LayeredWord(layers, "dyntype", "none");
  if (dyntype != "none") {
    file_.Fail(n, "dyntype=\"" + dyntype + "\": s2r actuators have no activation dynamics " +
                      "(only dyntype=\"none\")" + file_.Origin(Source(layers, "dyntype")));
  }
  const std::string gaintype = LayeredWord(layers, "gaintype", "fixed");
  if (gaintype != "fixed") {
    file_.Fail(n, "gaintype=\"" + gaintype + "\": s2r supports only gaintype=\"fixed\"" +
                      file_.Origin(Source(layers, "gaintype")));
  }
  const std::string biastype = LayeredWord(layers, "biastype", "none");
  if (biastype != "none" && biastype != "affine") {
    file_.Fail(n, "biastype=\"" + biastype + "\": s2r supports biastype none and affine" +
                      file_.Origin(Source(layers, "biastype")));
  }
  double gainprm[10] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  double biasprm[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  LayeredReals(layers, "gainprm", gainprm);
  if (biastype == "affine") LayeredReals(layers, "biasprm", biasprm);
  const double g = gainprm[0], b0 = biasprm[0], b1 = biasprm[1], b2 = biasprm[2];
  if (b1 < 0 && b2 <= 0) {
    *type = kActuatorPosition;
    *kp = -b1;
    *kv = -b2;
    *scale = g / *kp;
    *offset = b0 / *kp;
  } else if (b1 == 0 && b2 < 0) {
    *type = kActuatorVelocity;
    *kp = 0;
    *kv = -b2;
    *scale = g / *kv;
    *offset = b0 / *kv;
  } else if (b1 == 0 && b2 == 0) {
    *type = kActuatorMotor;
    *kp = 0;
    *kv = 0;
    *scale = g;
    *offset = b0;
  } else {
    file_.Fail(n, "the law force = " + Num(g) + " ctrl + " + Num(b0) + " + " + Num(b1) +
                      " length + " + Num(b2) + " velocity is not one s2r has: biasprm[1] and "
                      "biasprm[2] must be <= 0 (a position servo: biasprm[1] = -kp < 0, biasprm[2] "
                      "= -kv; a velocity servo: biasprm[1] = 0, biasprm[2] = -kv < 0; a motor: "
                      "both 0)");
  }
}

void Loader::ReadActuator(pugi::xml_node n) {
  std::string tag = n.name();
  if (tag != "position" && tag != "velocity" && tag != "motor" && tag != "general") {
    file_.Fail(n,
               "element not allowed inside <actuator> (the s2r subset has general, position, "
               "velocity, motor)");
  }
  CheckAttributes(file_, n, false);
  CheckNoText(file_, n);
  if (n.first_child()) file_.Fail(n.first_child(), "unexpected child element");
  int cls = n.attribute("class") ? s_.defaults.ClassIndex(n, "class") : 0;
  // gear, ranges and limited flags come from the class's actuator defaults whatever their kind
  // (as in MuJoCo); kp and kv (gainprm, biasprm, ... for general) only from defaults of the same
  // kind
  Layers layers = s_.defaults.LayersFor(n, cls, "actuator");
  Layers gain_layers;
  for (const pugi::xml_node& l : layers) {
    if (std::string(l.name()) == tag) gain_layers.push_back(l);
  }

  bool has_joint = n.attribute("joint"), has_site = n.attribute("site"),
       has_tendon = n.attribute("tendon");
  if (int(has_joint) + int(has_site) + int(has_tendon) != 1) {
    file_.Fail(n, "give exactly one of 'joint', 'tendon' and 'site'");
  }
  TransmissionType trn = has_joint ? kTransmissionJoint : has_tendon ? kTransmissionTendon : kTransmissionSite;
  std::string target = n.attribute(has_joint ? "joint" : has_tendon ? "tendon" : "site").value();
  int trnid = -1;
  if (has_tendon) {
    auto it = tendon_ids_.find(target);
    if (it == tendon_ids_.end()) {
      file_.Fail(n, "attribute 'tendon' names unknown tendon " + Quote(target));
    }
    trnid = it->second;
  } else if (has_joint) {
    auto it = s_.joint_ids.find(target);
    if (it == s_.joint_ids.end()) {
      file_.Fail(n, "attribute 'joint' names unknown joint " + Quote(target));
    }
    trnid = it->second;
    if (m_.joint_type[trnid] == kJointFree || m_.joint_part[trnid]) {
      const bool ball = m_.joint_part[trnid] && !m_.JointIsFreePart(trnid);
      file_.Fail(n, "joint " + Quote(target) + (ball ? " is a ball joint" : " is a free joint") +
                        "; actuate a hinge or slide joint, or use a site transmission");
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
  double kp = type == kActuatorPosition ? 1.0 : 0.0;
  double kv = type == kActuatorVelocity ? 1.0 : 0.0;
  double ctrl_scale = 1.0, ctrl_offset = 0.0;
  if (tag == "general") {
    MapGeneral(n, gain_layers, &type, &kp, &kv, &ctrl_scale, &ctrl_offset);
  } else {
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
  }
  int a = AddActuator(&m_, n.attribute("name").value(), type, trn, trnid);
  s_.Register(&s_.actuator_ids, n, "actuator", a);

  double gear[6] = {1, 0, 0, 0, 0, 0};
  LayeredReals(layers, "gear", gear);
  for (int k = 0; k < 6; ++k) m_.actuator_gear[6 * a + k] = static_cast<Real>(gear[k]);
  m_.actuator_kp[a] = static_cast<Real>(kp);
  m_.actuator_kv[a] = static_cast<Real>(kv);
  m_.actuator_ctrlmap[2 * a] = static_cast<Real>(ctrl_scale);
  m_.actuator_ctrlmap[2 * a + 1] = static_cast<Real>(ctrl_offset);

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
  ExpandIncludes(root, &file_, include_reader_);

  // sections, compiled in MuJoCo's fixed order whatever their order in the file
  std::map<std::string, std::vector<pugi::xml_node>> sections;
  for (pugi::xml_node c : root.children()) {
    if (c.type() != pugi::node_element) continue;
    std::string tag = c.name();
    // visual only: the whole subtree is ignored (<statistic> sets the camera's view)
    if (tag == "visual" || tag == "statistic") continue;
    if (tag == "size") {
      CheckAttributes(file_, c, false);  // MuJoCo's memory sizes: accepted, not used
      continue;
    }
    if (tag == "sensor") {
      s_.Note(c, "sensor", "<sensor> is not simulated (s2r's observation model reads the state)");
      continue;
    }
    if (tag != "compiler" && tag != "asset" && tag != "option" && tag != "default" && tag != "worldbody" &&
        tag != "contact" && tag != "equality" && tag != "tendon" && tag != "actuator" &&
        tag != "custom" && tag != "keyframe") {
      file_.Fail(c, "element not supported by the s2r MJCF subset (see docs/mjcf_subset.md)");
    }
    sections[tag].push_back(c);
  }
  for (pugi::xml_node n : sections["compiler"]) ReadCompiler(n);
  for (pugi::xml_node n : sections["option"]) ReadOption(n);
  if (sections["default"].empty()) {
    s_.defaults.AddEmptyMain();
  } else {
    // several top-level <default>s (from included files, say) all add to class main
    for (pugi::xml_node n : sections["default"]) s_.defaults.ReadDefaults(n, -1);
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
      if (std::string(c.name()) == "pair") {
        file_.Fail(c, "<pair> is not supported by s2r (explicit contact pairs with their own "
                      "parameters); s2r collides geoms by contype/conaffinity");
      }
      if (std::string(c.name()) != "exclude") {
        file_.Fail(c, "element not allowed inside <contact> (the s2r subset has exclude)");
      }
      ReadExclude(c);
    }
  }
  for (pugi::xml_node n : sections["equality"]) ReadEquality(n);
  for (pugi::xml_node n : sections["tendon"]) ReadTendon(n);
  for (pugi::xml_node n : sections["actuator"]) {
    CheckAttributes(file_, n, false);
    CheckNoText(file_, n);
    for (pugi::xml_node c : n.children()) {
      if (c.type() == pugi::node_element) ReadActuator(c);
    }
  }
  m_.auto_substeps = true;  // until <custom> gives s2r_substeps (Model::ChooseSubsteps)
  ReadCustom(sections["custom"], &s_);
  ReadKeyframes(sections["keyframe"]);
  m_.load_notes = s_.NoteLines();

  m_.source_text = file_.xml();
  try {
    m_.Finalize();
  } catch (const LoadError&) {
    throw;
  } catch (const ModelEntityError& e) {
    // a joint's, an equality's or a tendon's problem: at its element
    if (e.entity == Entity::kJoint && s_.joint_nodes.count(e.index)) file_.Fail(s_.joint_nodes[e.index], e.what());
    const std::vector<pugi::xml_node>& nodes = e.entity == Entity::kEquality ? equality_nodes_ : tendon_nodes_;
    if ((e.entity == Entity::kEquality || e.entity == Entity::kTendon) && e.index >= 0 &&
        e.index < static_cast<int>(nodes.size())) {
      file_.Fail(nodes[e.index], e.what());
    }
    throw LoadError(file_.name() + ": " + e.what());
  } catch (const std::exception& e) {
    throw LoadError(file_.name() + ": " + e.what());
  }
  return std::move(m_);
}

}  // namespace
}  // namespace mjcf

Model LoadMjcfString(const std::string& xml, const std::string& name_for_errors) {
  mjcf::Loader loader(xml, name_for_errors, mjcf::DefaultIncludeReader(name_for_errors));
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
