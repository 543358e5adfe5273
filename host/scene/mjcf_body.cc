#include "host/scene/mjcf_body.h"

#include "host/scene/mjcf_mesh.h"

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <initializer_list>
#include <vector>

#include "host/scene/mjcf_visual.h"
#include "kernels/solver_tree.h"

namespace s2r::mjcf {
namespace {

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

// --- the reader ----------------------------------------------------------------------------------

// Reads bodies into a LoadState; one per <worldbody>.
class BodyReader {
 public:
  explicit BodyReader(LoadState* state)
      : s_(*state), file_(state->file), defaults_(state->defaults), m_(state->model) {}

  void ReadBody(pugi::xml_node n, int parent, const Frame& parent_world, int childclass);

 private:
  double Angle(double v) const { return ToRadians(v, s_.compiler.angle); }
  Quatd QuatFromLayer(pugi::xml_node n) const;
  Quatd Orientation(const Layers& layers) const;
  void ReadGeom(pugi::xml_node n, int body, bool body_static, bool mass_given, int childclass,
                std::vector<GeomMassSpec>* mass_specs, double* body_mass,
                const Frame& offset = Frame());
  // whether a geom's group lies in <compiler inertiagrouprange> (only those give their body mass)
  bool InInertiaGroup(const Layers& layers) const;
  // whether a geom of a jointless body without <inertial> would give it mass
  bool GeomHasMass(pugi::xml_node n, int childclass) const;
  void MergeIntoParent(pugi::xml_node n, int parent, const Frame& world, int childclass,
                       const std::vector<pugi::xml_node>& geoms,
                       const std::vector<pugi::xml_node>& sites,
                       const std::vector<pugi::xml_node>& bodies);
  // a note for each of `attrs` that s2r does its own way (`why`), at the layer that gives it:
  // the element, or its default class
  void NoteAttributes(const Layers& layers, const char* kind,
                      std::initializer_list<const char*> attrs, const std::string& why);
  // part: which hinge or slide of a ball or free joint this is (model field joint_part), 0 for
  // any other joint
  void ReadJoint(pugi::xml_node n, int body, const std::string& type, const Layers& layers, int part = 0);
  // whether free body n (its children's default class childclass) is a floating base
  bool FloatingBase(pugi::xml_node n, int childclass) const;
  double SoftnessHertz(pugi::xml_node n, const Layers& layers, const char* ref_attr, const char* imp_attr);
  void ReadSite(pugi::xml_node n, int body, int childclass, const Frame& offset = Frame());
  void ReadInertial(pugi::xml_node n, int body);

  LoadState& s_;
  const SourceFile& file_;
  const DefaultClasses& defaults_;
  Model& m_;
  std::vector<Frame> world_of_;  // each body's world frame, by body index
};

// --- orientation ---------------------------------------------------------------------------------

Quatd BodyReader::QuatFromLayer(pugi::xml_node n) const {
  int count = (n.attribute("quat") ? 1 : 0) + (n.attribute("euler") ? 1 : 0) +
              (n.attribute("axisangle") ? 1 : 0);
  if (count > 1) {
    file_.Fail(
        n, "more than one of 'quat', 'euler', 'axisangle' given (give exactly one orientation)");
  }
  if (n.attribute("quat")) {
    std::vector<double> q = Reals(n, "quat");
    Quatd r(q[0], q[1], q[2], q[3]);
    if (!(r.norm() > 1e-12)) file_.Fail(n, "attribute 'quat' is the zero quaternion");
    return r.normalized();
  }
  if (n.attribute("axisangle")) {
    std::vector<double> a = Reals(n, "axisangle");
    Vec3d axis(a[0], a[1], a[2]);
    if (!(axis.norm() > 1e-12)) file_.Fail(n, "attribute 'axisangle' has a zero axis");
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

Quatd BodyReader::Orientation(const Layers& layers) const {
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    if (it->attribute("quat") || it->attribute("euler") || it->attribute("axisangle")) {
      return QuatFromLayer(*it);
    }
  }
  return Quatd::Identity();
}

// the name suffix of a ball's or free joint's part (joint_part)
std::string PartSuffix(int part) {
  static const char* const kSuffix[7] = {"", ":x", ":y", ":z", ":tx", ":ty", ":tz"};
  return kSuffix[part];
}

// --- bodies --------------------------------------------------------------------------------------

void BodyReader::ReadBody(pugi::xml_node n, int parent, const Frame& parent_world, int childclass) {
  const bool is_world = parent < 0;
  int body = 0;
  Frame world;
  pugi::xml_node joint_node;  // the body's last joint (its own); earlier ones: lead_joints
  std::string joint_type;
  Layers joint_layers;
  std::vector<pugi::xml_node> lead_joints;
  bool body_static = true;

  if (is_world) world_of_.assign(1, Frame());
  if (!is_world) {
    CheckAttributes(file_, n, false);
    if (n.attribute("childclass")) childclass = defaults_.ClassIndex(n, "childclass");
    if (n.attribute("gravcomp") && Real1(n, "gravcomp") < 0) {
      file_.Fail(n, "attribute 'gravcomp' must be >= 0, got " + Num(Real1(n, "gravcomp")));
    }
    if (n.attribute("mocap") && Word(n, "mocap") == "true") {
      file_.Fail(n, "attribute 'mocap': s2r has no mocap bodies");
    }
  } else if (n.first_attribute()) {
    file_.Fail(n, "<worldbody> takes no attributes");
  }
  CheckNoText(file_, n);

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
      // several joints in one body: all but the last move massless links (below)
      if (joint_node) lead_joints.push_back(joint_node);
      joint_node = c;
    } else if (!is_world && tag == "inertial") {
      if (inertial) file_.Fail(c, "a body has at most one <inertial>");
      inertial = c;
    } else {
      file_.Fail(c, std::string("element not allowed inside <") + n.name() + "> in the s2r subset");
    }
  }

  if (!is_world) {
    Layers self{n};
    Vec3d pos = n.attribute("pos") ? Real3(n, "pos") : Vec3d::Zero();
    Quatd rot = Orientation(self);
    world.pos = parent_world.pos + parent_world.rot * pos;
    world.rot = (parent_world.rot * rot).normalized();

    // Several joints in one body (MuJoCo applies them in order, each in the frame the ones before
    // it left): each joint but the last moves a massless link s2r inserts, at the body's frame,
    // and the body hangs from the last link by its last joint. Hinges and slides only; the links
    // are stepped in the articulated trees (Model::Finalize rejects them in maximal coordinates).
    std::vector<std::string> lead_types;
    std::vector<Layers> lead_layers;
    if (joint_node) lead_joints.push_back(joint_node);  // every joint, in order; the last popped below
    for (pugi::xml_node c : lead_joints) {
      CheckAttributes(file_, c, false);
      CheckNoText(file_, c);
      if (c.first_child()) file_.Fail(c.first_child(), "unexpected child element");
      std::string type = "free";
      Layers layers{c};
      if (std::string(c.name()) == "joint") {
        int cls = c.attribute("class") ? defaults_.ClassIndex(c, "class") : childclass;
        layers = defaults_.LayersFor(c, cls);
        type = LayeredWord(layers, "type", "hinge");
      }
      if (lead_joints.size() > 1 && type != "hinge" && type != "slide") {
        file_.Fail(c, "a body with several joints takes hinges and slides only (this one is " + type +
                          ")" + file_.Origin(Source(layers, "type")));
      }
      if (type == "free" && parent != 0) {
        file_.Fail(c, "a free joint is only allowed on a direct child of <worldbody>");
      }
      lead_types.push_back(type);
      lead_layers.push_back(layers);
    }
    if (joint_node) {
      joint_type = lead_types.back();
      joint_layers = lead_layers.back();
      lead_joints.pop_back();
      lead_types.pop_back();
      lead_layers.pop_back();
    }
    const bool parent_static = m_.body_dynamic[parent] == 0;
    body_static = !joint_node && parent_static;

    // a massless body welded to a moving one is merged into it (as MuJoCo fuses it into the
    // same rigid body): s2r's maximal-coordinate solver needs mass in every moving body
    bool has_mass = false;
    for (pugi::xml_node g : geoms) has_mass = has_mass || GeomHasMass(g, childclass);
    if (!joint_node && !parent_static && !inertial && !has_mass) {
      MergeIntoParent(n, parent, world, childclass, geoms, sites, bodies);
      return;
    }

    // A ball joint is three hinges about the body's x, y and z axes through its anchor, the first
    // two moving massless links s2r inserts (named body:joint:x, body:joint:y); the articulated
    // tree re-bases them at the orientation reached every step, so they never lock
    // (kernels/solver_tree.h, "Ball joints").
    // A free body with a jointed body below it (a robot on a floating base), or named by a
    // connect or weld, is a floating base: its free joint is three slides along the world axes
    // (parts 4, 5, 6) and a ball (parts 1, 2, 3) at the body's origin, on five links, so the
    // whole system is one articulated tree (FloatingBase says when).
    const bool ball = joint_type == "ball";
    const bool floating = joint_type == "free" && FloatingBase(n, childclass);
    std::vector<int> lead_parts(lead_joints.size(), 0);
    if (ball || floating) {
      for (int part : floating ? std::vector<int>{4, 5, 6, 1, 2} : std::vector<int>{1, 2}) {
        lead_joints.push_back(joint_node);
        lead_types.push_back(joint_type);
        lead_layers.push_back(joint_layers);
        lead_parts.push_back(part);
      }
    }
    int hang = parent;
    for (size_t k = 0; k < lead_joints.size(); ++k) {
      const std::string owner = n.attribute("name") ? n.attribute("name").value() : "";
      std::string joint = lead_joints[k].attribute("name") ? lead_joints[k].attribute("name").value()
                                                           : std::to_string(k);
      if (lead_parts[k] > 0) joint = (lead_joints[k].attribute("name") ? joint : lead_types[k]) + PartSuffix(lead_parts[k]);
      int link = AddBody(&m_, owner.empty() ? "" : owner + ":" + joint, hang, ToReal3(world.pos),
                         ToReal4(world.rot));
      world_of_.resize(m_.nbody());
      world_of_[link] = world;
      ReadJoint(lead_joints[k], link, lead_types[k], lead_layers[k], lead_parts[k]);
      m_.body_dynamic[link] = 1;
      m_.body_link[link] = 1;
      hang = link;
    }
    if (floating) {
      s_.Note(n, "body.floating",
              "a floating base: its free joint is stepped as three slides and a ball in the articulated tree of the "
              "bodies below it (docs/mjcf_subset.md)");
    }
    if (!lead_joints.empty() && !ball && !floating) {
      s_.Note(n, "body.joints",
              std::to_string(lead_joints.size() + 1) + " joints in one body: " +
                  std::to_string(lead_joints.size()) + " massless link(s) inserted between them (docs/mjcf_subset.md)");
    }
    parent = hang;
    body =
        AddBody(&m_, n.attribute("name").value(), parent, ToReal3(world.pos), ToReal4(world.rot));
    s_.Register(&s_.body_ids, n, "body", body);
    world_of_.resize(m_.nbody());
    world_of_[body] = world;
    if (n.attribute("gravcomp")) m_.body_gravcomp[body] = static_cast<Real>(Real1(n, "gravcomp"));
    if (joint_node) {
      ReadJoint(joint_node, body, joint_type, joint_layers, ball || floating ? 3 : 0);
    } else if (!parent_static) {
      AddJoint(&m_, "", body, kJointWeld, {0, 0, 0}, {0, 0, 1});
    }
    // AddJoint marks the body dynamic; make the static case explicit too
    m_.body_dynamic[body] = body_static ? 0 : 1;
  }

  std::vector<GeomMassSpec> mass_specs;
  double geom_mass = 0;
  for (pugi::xml_node g : geoms) {
    ReadGeom(g, body, body_static, body_static || inertial, childclass, &mass_specs, &geom_mass);
  }

  if (!is_world) {
    if (inertial) {
      ReadInertial(inertial, body);
    } else {
      if (!body_static && !(geom_mass > 0)) {
        std::string why = joint_node ? "it has a joint"
                                     : "it is welded to moving body '" + m_.body_name[parent] + "'";
        file_.Fail(
            n, "the body moves (" + why +
                   ") but has no <inertial> and no geom with mass; add a geom or an <inertial>");
      }
      if (!mass_specs.empty()) ComputeBodyInertiaFromGeoms(&m_, body, mass_specs);
    }
  }

  for (pugi::xml_node s : sites) ReadSite(s, body, childclass);
  for (pugi::xml_node b : bodies) ReadBody(b, body, world, childclass);
}

bool BodyReader::GeomHasMass(pugi::xml_node n, int childclass) const {
  CheckAttributes(file_, n, false);
  int cls = n.attribute("class") ? defaults_.ClassIndex(n, "class") : childclass;
  Layers layers = defaults_.LayersFor(n, cls);
  if (LayeredWord(layers, "type", "sphere") == "plane") return false;
  if (!InInertiaGroup(layers)) return false;
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    if (it->attribute("mass")) return Real1(*it, "mass") != 0;
    if (it->attribute("density")) return Real1(*it, "density") != 0;
  }
  return true;  // the default density
}

bool BodyReader::InInertiaGroup(const Layers& layers) const {
  long group = 0;  // MuJoCo's default geom group
  if (pugi::xml_node src = Source(layers, "group")) {
    group = std::strtol(src.attribute("group").value(), nullptr, 10);
  }
  return s_.compiler.inertia_group_lo <= group && group <= s_.compiler.inertia_group_hi;
}

void BodyReader::MergeIntoParent(pugi::xml_node n, int parent, const Frame& world, int childclass,
                                 const std::vector<pugi::xml_node>& geoms,
                                 const std::vector<pugi::xml_node>& sites,
                                 const std::vector<pugi::xml_node>& bodies) {
  // its name stands for the body it joins (in <exclude>, say); its geoms (massless) and sites
  // move into that body's frame; its children hang from that body
  s_.Register(&s_.body_ids, n, "body", parent);
  if (n.attribute("name")) s_.merged_bodies.insert(n.attribute("name").value());
  s_.Note(n, "body.merged",
          "massless body welded to moving body " + Quote(m_.body_name[parent]) +
              ": merged into it (its geoms and sites belong to that body)");
  const Frame& target = world_of_[parent];
  Frame offset;
  offset.rot = (target.rot.conjugate() * world.rot).normalized();
  offset.pos = target.rot.conjugate() * (world.pos - target.pos);
  std::vector<GeomMassSpec> unused_specs;  // massless geoms: the parent's inertia is unchanged
  double unused_mass = 0;
  for (pugi::xml_node g : geoms) {
    ReadGeom(g, parent, false, true, childclass, &unused_specs, &unused_mass, offset);
  }
  for (pugi::xml_node s : sites) ReadSite(s, parent, childclass, offset);
  for (pugi::xml_node b : bodies) ReadBody(b, parent, world, childclass);
}

// MuJoCo's soft constraint (solref timeconst, dampratio; solimp dmax) as the natural frequency of
// the s2r soft constraint that sinks as far under a steady load: MuJoCo keeps a fraction d of its
// reference acceleration -k r, k = 1 / (d timeconst dampratio)^2, so under a load a0 it sinks
// r = (1 - d) a0 / (d k), and an s2r soft row of frequency omega sinks a0 / omega^2:
// omega = sqrt(d / (1 - d)) / (d timeconst dampratio), d = dmax. Hz.
double SteadyLoadHertz(double timeconst, double dampratio, double dmax) {
  return std::sqrt(dmax / (1 - dmax)) / (dmax * timeconst * dampratio) / (2 * M_PI);
}

// solref / solimp pair `ref_attr` / `imp_attr` of an element as SteadyLoadHertz, or 0 when neither
// is given (on the element or its classes)
double BodyReader::SoftnessHertz(pugi::xml_node n, const Layers& layers, const char* ref_attr,
                                 const char* imp_attr) {
  if (!Source(layers, ref_attr) && !Source(layers, imp_attr)) return 0;
  double ref[2] = {0.02, 1.0};
  double imp[5] = {0.9, 0.95, 0.001, 0.5, 2.0};
  LayeredReals(layers, ref_attr, ref);
  LayeredReals(layers, imp_attr, imp);
  pugi::xml_node src = Source(layers, ref_attr) ? Source(layers, ref_attr) : Source(layers, imp_attr);
  if (!(ref[0] > 0) || !(ref[1] > 0)) {
    file_.Fail(n, std::string("attribute '") + ref_attr + "' must be two numbers > 0 (timeconst dampratio; "
                  "s2r has no direct stiffness/damping form), got " + Num(ref[0]) + " " + Num(ref[1]) +
                  file_.Origin(src));
  }
  if (!(imp[1] > 0 && imp[1] < 1)) {
    file_.Fail(n, std::string("attribute '") + imp_attr + "': dmax must be in (0, 1), got " + Num(imp[1]) +
                  file_.Origin(src));
  }
  return SteadyLoadHertz(ref[0], ref[1], imp[1]);
}

// A free body is a floating base when s2r_reduce_trees is not 0, it would fit kMaxTreeDofs with
// what hangs from it (six ranks for its own joint, one per body below and per joint beyond a
// body's first, two more per ball), and a body with a joint hangs from it or a <connect> or <weld>
// names it (as body1 or body2, or one of its sites as site1 or site2: those act only on tree
// bodies). A free body with neither stays a
// maximal-coordinate body (the cheaper path for an object).
bool BodyReader::FloatingBase(pugi::xml_node n, int childclass) const {
  const pugi::xml_node root = n.root();
  for (pugi::xpath_node x : root.select_nodes("//custom/numeric[@name='s2r_reduce_trees']")) {
    if (std::strtod(x.node().attribute("data").value(), nullptr) == 0) return false;
  }
  bool jointed = false;
  int ranks = 6;
  std::function<void(pugi::xml_node, int)> walk = [&](pugi::xml_node b, int cls) {
    for (pugi::xml_node c : b.children("body")) {
      const int ccls = c.attribute("childclass") ? defaults_.ClassIndex(c, "childclass") : cls;
      int joints = 0;
      for (pugi::xml_node j : c.children("joint")) {
        const int jc = j.attribute("class") ? defaults_.ClassIndex(j, "class") : ccls;
        joints += LayeredWord(defaults_.LayersFor(j, jc), "type", "hinge") == "ball" ? 3 : 1;
      }
      jointed = jointed || joints > 0;
      ranks += joints > 0 ? joints : 1;
      walk(c, ccls);
    }
  };
  walk(n, childclass);
  // named by a connect or weld: as body1 / body2, or through a site of its own as site1 / site2
  bool named = false;
  const std::string name = n.attribute("name").value();
  std::vector<std::string> sites;
  for (pugi::xml_node c : n.children("site")) {
    if (c.attribute("name")) sites.emplace_back(c.attribute("name").value());
  }
  auto own_site = [&](const char* s) { return *s != '\0' && std::find(sites.begin(), sites.end(), s) != sites.end(); };
  for (pugi::xpath_node x : root.select_nodes("//equality/connect | //equality/weld")) {
    const pugi::xml_node e = x.node();
    named = named || (!name.empty() && (name == e.attribute("body1").value() || name == e.attribute("body2").value())) ||
            own_site(e.attribute("site1").value()) || own_site(e.attribute("site2").value());
  }
  return (jointed || named) && ranks <= kMaxTreeDofs;
}

void BodyReader::ReadJoint(pugi::xml_node n, int body, const std::string& type,
                           const Layers& layers, int part) {
  const bool free = type == "free";
  JointType jt = free ? kJointFree : (type == "slide" ? kJointSlide : kJointHinge);
  if (part > 0) jt = part >= 4 ? kJointSlide : kJointHinge;
  Vec3d pos = Vec3d::Zero();
  Vec3d axis = Vec3d::UnitZ();
  if (!free) {
    pugi::xml_node src = Source(layers, "pos");
    if (src) pos = Real3(src, "pos");
    src = Source(layers, "axis");
    if (src) axis = Real3(src, "axis");
    if (!(axis.norm() > 1e-12)) {
      file_.Fail(n, "attribute 'axis' is the zero vector" + file_.Origin(src));
    }
    axis.normalize();
  }
  std::string name = n.attribute("name").value();
  if (part >= 1 && part <= 3) axis = Vec3d::Unit(part - 1);  // a ball's axis attribute is not used (as in MuJoCo)
  if (part >= 4) axis = world_of_[body].rot.conjugate() * Vec3d::Unit(part - 4);  // world x, y, z
  if (part > 0 && !name.empty()) name += PartSuffix(part);
  int j = AddJoint(&m_, name, body, jt, ToReal3(pos), ToReal3(axis));
  // the MJCF name of a ball or free joint names its first part (references to it are rejected
  // where read)
  if (part == 0 || part == 4 || (part == 1 && !free)) s_.Register(&s_.joint_ids, n, "joint", j);
  s_.joint_nodes[j] = n;
  m_.joint_part[j] = part;

  double range[2] = {0, 0};
  LayeredReals(layers, "range", range);
  bool limited = Limited(file_, s_.compiler.autolimits, n, layers, "limited", "range", range);
  if (free && limited) file_.Fail(n, "a free joint cannot be limited");
  // a ball's limit is MuJoCo's cone: its rotation angle from the reference at most range[1]
  // (range[0] must be 0, as MuJoCo requires), on its first hinge (joint_limited 2)
  if (part > 0 && !free && limited && range[0] != 0) {
    file_.Fail(n, "a ball joint's range[0] must be 0 (its limit is the rotation angle's largest value, "
                  "range[1]), got " + Num(range[0]) + file_.Origin(Source(layers, "range")));
  }
  if (limited && !(range[0] < range[1])) {
    file_.Fail(n, "attribute 'range' must have lo < hi for a limited joint, got " + Num(range[0]) +
                      " " + Num(range[1]) + file_.Origin(Source(layers, "range")));
  }
  if (jt == kJointHinge) {
    range[0] = Angle(range[0]);
    range[1] = Angle(range[1]);
  }
  m_.joint_limited[j] = !limited ? 0 : part == 1 && !free ? 2 : part > 1 && part <= 3 && !free ? 0 : 1;
  m_.joint_range[2 * j] = static_cast<Real>(range[0]);
  m_.joint_range[2 * j + 1] = static_cast<Real>(range[1]);

  // the joint's spring: generalized force -stiffness (q - springref), springref in the joint's
  // units (radians after <compiler angle>); on joints of reduced-coordinate trees (Model::Finalize)
  if (pugi::xml_node src = Source(layers, "stiffness")) {
    double k = Real1(src, "stiffness");
    if (!(k >= 0)) file_.Fail(n, "attribute 'stiffness' must be >= 0, got " + Num(k) + file_.Origin(src));
    if (k > 0 && free) file_.Fail(n, "a free joint cannot have a stiffness" + file_.Origin(src));
    // a ball's spring: torque -stiffness times its rotation vector from the reference
    // orientation (MuJoCo's, whose ball qpos_spring is qpos0), on each of its three hinges
    m_.joint_stiffness[j] = static_cast<Real>(k);
  }
  if (pugi::xml_node src = Source(layers, "springref")) {
    double ref = Real1(src, "springref");
    if (part > 0 && !free && ref != 0) {
      file_.Fail(n, "attribute 'springref' = " + Num(ref) + ": a ball joint's spring rests at its reference "
                    "orientation (springref is for hinges and slides)" + file_.Origin(src));
    }
    m_.joint_springref[j] = static_cast<Real>(jt == kJointHinge ? Angle(ref) : ref);
  }
  // reference offsets and per-joint actuator force limits: not in s2r's joint model
  if (pugi::xml_node src = Source(layers, "ref")) {
    if (Real1(src, "ref") != 0) {
      file_.Fail(n, "attribute 'ref' = " + Num(Real1(src, "ref")) + ": s2r joints have no reference offset" +
                        file_.Origin(src));
    }
  }
  if (pugi::xml_node src = Source(layers, "springdamper")) {
    std::vector<double> sd = Reals(src, "springdamper");
    if (sd[0] != 0 || sd[1] != 0) {
      file_.Fail(n, "attribute 'springdamper': s2r has no joint springs" + file_.Origin(src));
    }
  }
  {
    double frc[2] = {0, 0};
    LayeredReals(layers, "actuatorfrcrange", frc);
    if (Limited(file_, s_.compiler.autolimits, n, layers, "actuatorfrclimited",
                "actuatorfrcrange", frc)) {
      file_.Fail(n, "a joint-level actuator force limit (actuatorfrcrange) is not supported; "
                    "limit each actuator's forcerange");
    }
  }
  if (pugi::xml_node src = Source(layers, "actuatorgravcomp")) {
    if (Word(src, "actuatorgravcomp") == "true") {
      file_.Fail(n, "attribute 'actuatorgravcomp': s2r has no gravity compensation forces" +
                        file_.Origin(src));
    }
  }
  // limit softness: MuJoCo's solreflimit / solimplimit, when given, as the natural frequency of
  // the s2r soft limit that sinks as far under a steady load (SteadyLoadHertz); not given: the
  // scene's s2r_joint_hertz
  if (double hz = SoftnessHertz(n, layers, "solreflimit", "solimplimit"); hz > 0) {
    m_.joint_limit_hertz[j] = static_cast<Real>(hz);
    pugi::xml_node src = Source(layers, "solreflimit") ? Source(layers, "solreflimit") : Source(layers, "solimplimit");
    s_.Note(src, "joint.solreflimit",
            "solreflimit / solimplimit are mapped onto the limit's natural frequency "
            "(joint_limit_hertz, docs/mjcf_subset.md); solimp's width and shape are not used");
  }
  NoteAttributes(layers, "joint", {"margin"}, "s2r joint limits have no margin");
  // friction loss softness: honoured when solreffriction is given (MuJoCo's soft friction loss);
  // without it the friction loss is hard (docs/physics.md, "Joints", friction loss)
  if (pugi::xml_node src = Source(layers, "solreffriction")) {
    double ref[2] = {0.02, 1.0};
    LayeredReals(layers, "solreffriction", ref);
    if (!(ref[0] > 0) || !(ref[1] > 0)) {
      file_.Fail(n, "attribute 'solreffriction' must be two numbers > 0 (timeconst dampratio; "
                    "s2r has no direct stiffness/damping form), got " +
                        Num(ref[0]) + " " + Num(ref[1]) + file_.Origin(src));
    }
    m_.joint_frictionloss_timeconst[j] = static_cast<Real>(ref[0]);
    double imp[5] = {0.9, 0.95, 0.001, 0.5, 2.0};
    pugi::xml_node isrc = Source(layers, "solimpfriction");
    LayeredReals(layers, "solimpfriction", imp);
    if (!(imp[0] > 0 && imp[0] < 1) || !(imp[1] > 0 && imp[1] < 1)) {
      file_.Fail(n, "attribute 'solimpfriction': dmin and dmax must be in (0, 1), got " +
                        Num(imp[0]) + " " + Num(imp[1]) + file_.Origin(isrc ? isrc : src));
    }
    m_.joint_frictionloss_impedance[2 * j] = static_cast<Real>(imp[0]);
    m_.joint_frictionloss_impedance[2 * j + 1] = static_cast<Real>(imp[1]);
  } else {
    NoteAttributes(layers, "joint", {"solimpfriction"},
                   "friction loss is hard unless the joint (or its class) gives solreffriction");
  }

  const char* nonneg[] = {"damping", "frictionloss", "armature"};
  std::vector<Real>* fields[] = {&m_.joint_damping, &m_.joint_frictionloss, &m_.joint_armature};
  for (int k = 0; k < 3; ++k) {
    pugi::xml_node src = Source(layers, nonneg[k]);
    double v = src ? Real1(src, nonneg[k]) : 0.0;
    if (v < 0) {
      file_.Fail(
          n, "attribute " + Quote(nonneg[k]) + " must be >= 0, got " + Num(v) + file_.Origin(src));
    }
    (*fields[k])[j] = static_cast<Real>(v);
  }
}

void BodyReader::NoteAttributes(const Layers& layers, const char* kind,
                                std::initializer_list<const char*> attrs,
                                const std::string& why) {
  for (const char* a : attrs) {
    if (pugi::xml_node src = Source(layers, a)) {
      s_.Note(src, std::string(kind) + "." + a,
              std::string("attribute '") + a + "' is not used: " + why);
    }
  }
}

void BodyReader::ReadGeom(pugi::xml_node n, int body, bool body_static, bool mass_given,
                          int childclass,
                          std::vector<GeomMassSpec>* mass_specs, double* body_mass,
                          const Frame& offset) {
  CheckAttributes(file_, n, false);
  CheckNoText(file_, n);
  if (n.first_child()) file_.Fail(n.first_child(), "unexpected child element");
  int cls = n.attribute("class") ? defaults_.ClassIndex(n, "class") : childclass;
  Layers layers = defaults_.LayersFor(n, cls);

  std::string type_word = LayeredWord(layers, "type", "sphere");
  int contype = 1, conaffinity = 1;
  if (pugi::xml_node src = Source(layers, "contype")) {
    contype = static_cast<int>(std::strtol(src.attribute("contype").value(), nullptr, 10));
    if (contype < 0) file_.Fail(n, "attribute 'contype' must be >= 0" + file_.Origin(src));
  }
  if (pugi::xml_node src = Source(layers, "conaffinity")) {
    conaffinity = static_cast<int>(std::strtol(src.attribute("conaffinity").value(), nullptr, 10));
    if (conaffinity < 0) file_.Fail(n, "attribute 'conaffinity' must be >= 0" + file_.Origin(src));
  }
  if (IsVisualOnlyGeom(type_word, contype, conaffinity, mass_given)) {
    s_.Note(n, "geom.visual." + type_word,
            "visual-only " + type_word + " geom skipped (contype = conaffinity = 0, and the body's "
            "mass does not come from its geoms)");
    return;
  }
  if (!GeomTypeSimulated(type_word)) {
    file_.Fail(n, "geom type " + Quote(type_word) + " is not supported by s2r (plane, sphere, "
                  "capsule, box, cylinder, ellipsoid, mesh); only a visual one (contype = "
                  "conaffinity = 0 in a body with an <inertial>) is accepted, and skipped" +
                  file_.Origin(Source(layers, "type")));
  }
  pugi::xml_node mesh_src = Source(layers, "mesh");
  if (mesh_src && type_word != "mesh") {
    pugi::xml_node src = mesh_src;
    file_.Fail(n, "attribute 'mesh' on a " + type_word + " geom (a primitive fitted to a mesh) is "
                  "not supported" + file_.Origin(src));
  }
  if (pugi::xml_node src = Source(layers, "shellinertia")) {
    if (Word(src, "shellinertia") == "true") {
      file_.Fail(n, "attribute 'shellinertia' is not supported" + file_.Origin(src));
    }
  }
  // contact softness: solref / solimp, when given, as the geom's own contact frequency
  // (SteadyLoadHertz); a pair takes the largest of its geoms' and the scene's s2r_contact_hertz
  const double contact_hertz = SoftnessHertz(n, layers, "solref", "solimp");
  if (contact_hertz > 0) {
    s_.Note(Source(layers, "solref") ? Source(layers, "solref") : Source(layers, "solimp"), "geom.solref",
            "solref / solimp are mapped onto the geom's contact frequency (geom_contact_hertz, "
            "docs/mjcf_subset.md); solimp's width and shape are not used");
  }
  NoteAttributes(layers, "geom", {"solmix"}, "a contact pair takes the stiffer of its geoms' softness");
  NoteAttributes(layers, "geom", {"margin", "gap"},
                 "s2r creates contacts within s2r_speculative_distance");
  NoteAttributes(layers, "geom", {"priority"},
                 "a contact pair uses the larger friction of its two geoms");
  GeomType type = type_word == "plane"       ? kGeomPlane
                  : type_word == "capsule"   ? kGeomCapsule
                  : type_word == "box"       ? kGeomBox
                  : type_word == "cylinder"  ? kGeomCylinder
                  : type_word == "ellipsoid" ? kGeomEllipsoid
                  : type_word == "mesh"      ? kGeomMesh
                                             : kGeomSphere;
  const bool axial = type == kGeomCapsule || type == kGeomCylinder;  // radius, half-length
  if (type == kGeomPlane && !body_static) {
    file_.Fail(n,
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
    if (!axial && type != kGeomBox) {
      file_.Fail(n, "attribute 'fromto' is only supported for capsule, cylinder and box geoms, not " +
                        type_word + file_.Origin(fromto_src));
    }
    for (const char* a : {"pos", "quat", "euler", "axisangle"}) {
      if (n.attribute(a))
        file_.Fail(n, std::string("attribute 'fromto' cannot be combined with '") + a + "'");
    }
    std::vector<double> ft = Reals(fromto_src, "fromto");
    Vec3d from(ft[0], ft[1], ft[2]), to(ft[3], ft[4], ft[5]);
    Vec3d d = from - to;  // MuJoCo orients the local z axis from 'to' towards 'from'
    double len = d.norm();
    if (!(len > 0)) {
      file_.Fail(n, "attribute 'fromto' has coinciding end points" + file_.Origin(fromto_src));
    }
    pos = 0.5 * (from + to);
    rot = ZToVector(d / len);
    // MuJoCo: the cross-section comes from size[0] only (a box gets a square cross-section)
    size[1] = axial ? 0.5 * len : size[0];
    size[2] = axial ? 0.0 : 0.5 * len;
    needed = 1;
  } else {
    pugi::xml_node pos_src = Source(layers, "pos");
    if (pos_src) pos = Real3(pos_src, "pos");
    rot = Orientation(layers);
    needed = axial ? 2 : (type == kGeomSphere ? 1 : (type == kGeomMesh ? 0 : 3));
  }

  if (size_given < needed) {
    file_.Fail(n, "a " + type_word + (fromto_src ? " with fromto" : "") +
                      " needs attribute 'size' with " + std::to_string(needed) + " number" +
                      (needed == 1 ? "" : "s") + ", got " + std::to_string(size_given));
  }
  if (type == kGeomPlane) {
    // x, y half-extents (0: infinite, as in MuJoCo) and grid spacing; s2r planes are infinite
    if (size[0] < 0 || size[1] < 0 || !(size[2] > 0)) {
      file_.Fail(n, "plane 'size' needs x, y >= 0 and spacing > 0, got " + Num(size[0]) + " " +
                        Num(size[1]) + " " + Num(size[2]) + file_.Origin(size_src));
    }
  } else {
    for (int k = 0; k < needed; ++k) {
      if (!(size[k] > 0)) {
        file_.Fail(n, "attribute 'size' must be > 0, got " + Num(size[k]) + " (entry " +
                          std::to_string(k) + ")" + file_.Origin(size_src));
      }
    }
  }
  std::array<Real, 3> stored_size = {0, 0, 0};
  if (type == kGeomSphere) stored_size = {static_cast<Real>(size[0]), 0, 0};
  if (axial) stored_size = {static_cast<Real>(size[0]), static_cast<Real>(size[1]), 0};
  if (type == kGeomBox || type == kGeomPlane || type == kGeomEllipsoid) {
    stored_size = {static_cast<Real>(size[0]), static_cast<Real>(size[1]),
                   static_cast<Real>(size[2])};
  }

  double friction[3] = {1.0, 0.005, 0.0001};
  LayeredReals(layers, "friction", friction);
  for (int k = 0; k < 3; ++k) {
    if (friction[k] < 0) {
      file_.Fail(n, "attribute 'friction' must be >= 0, got " + Num(friction[k]) +
                        file_.Origin(Source(layers, "friction")));
    }
  }

  // condim: 3 (frictional point contact) is s2r's contact; 1 (frictionless) is mapped to a zero
  // friction coefficient; 4 and 6 add torsional / rolling friction, which s2r does not model
  if (pugi::xml_node src = Source(layers, "condim")) {
    const std::string condim = Word(src, "condim");
    if (condim == "1") {
      friction[0] = 0;
    } else if (condim == "4" || condim == "6") {
      s_.Note(n, "geom.condim",
              "condim=" + condim + ": s2r models sliding friction only (torsional and rolling "
              "friction are not simulated)");
    } else if (condim != "3") {
      file_.Fail(n, "attribute 'condim' must be 1, 3, 4 or 6, got " +
                        Quote(src.attribute("condim").value()) + file_.Origin(src));
    }
  }

  // mass: the most specific layer that has mass or density decides
  double mass = -1, density = 1000;
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    bool has_mass = it->attribute("mass"), has_density = it->attribute("density");
    if (!has_mass && !has_density) continue;
    if (has_mass && has_density) {
      file_.Fail(n, "attributes 'mass' and 'density' are both given; give one" + file_.Origin(*it));
    }
    if (type == kGeomPlane && *it == n) {
      file_.Fail(n, "a plane has no mass; remove 'mass'/'density'");
    }
    if (has_mass) {
      mass = Real1(*it, "mass");
      if (mass < 0) {
        file_.Fail(n, "attribute 'mass' must be >= 0, got " + Num(mass) + file_.Origin(*it));
      }
    } else {
      density = Real1(*it, "density");
      if (density < 0)
        file_.Fail(n, "attribute 'density' must be >= 0, got " + Num(density) + file_.Origin(*it));
    }
    break;
  }
  // a geom outside <compiler inertiagrouprange> gives its body no mass (MuJoCo's rule)
  if (!InInertiaGroup(layers)) mass = 0;

  // a mesh geom's frame is its mesh's inertial frame, and its shape the mesh's convex hull
  const MeshHull* mesh = type == kGeomMesh ? &MeshOfGeom(&s_, n, layers) : nullptr;
  if (mesh) ComposeMeshFrame(*mesh, &pos, &rot);
  // a geom of a merged body: from its body's frame into the frame of the body it joined
  pos = offset.pos + offset.rot * pos;
  rot = offset.rot * rot;

  int g = AddGeom(&m_, n.attribute("name").value(), body, type, stored_size, ToReal3(pos),
                  ToReal4(rot.normalized()), static_cast<Real>(friction[0]));
  if (mesh) AttachMeshHull(&m_, g, *mesh);
  s_.Register(&s_.geom_ids, n, "geom", g);
  m_.geom_contype[g] = contype;
  m_.geom_conaffinity[g] = conaffinity;
  m_.geom_restitution[g] = 0;
  m_.geom_contact_hertz[g] = static_cast<Real>(contact_hertz);
  if (type != kGeomPlane) {
    double volume = type == kGeomSphere     ? 4.0 / 3.0 * kPiD * std::pow(size[0], 3)
                    : type == kGeomCapsule  ? kPiD * size[0] * size[0] * 2.0 * size[1] +
                                                 4.0 / 3.0 * kPiD * std::pow(size[0], 3)
                    : type == kGeomCylinder ? kPiD * size[0] * size[0] * 2.0 * size[1]
                    : type == kGeomEllipsoid ? 4.0 / 3.0 * kPiD * size[0] * size[1] * size[2]
                    : mesh                   ? mesh->volume
                                             : 8.0 * size[0] * size[1] * size[2];
    // ComputeBodyInertiaFromGeoms takes the mass (>= 0) or, when it is < 0, the density
    GeomMassSpec spec{g, static_cast<Real>(mass), static_cast<Real>(density)};
    if (mesh) {
      spec.volume = static_cast<Real>(mesh->volume);
      for (int k = 0; k < 3; ++k) spec.unit_inertia[k] = static_cast<Real>(mesh->inertia[k]);
    }
    mass_specs->push_back(spec);
    *body_mass += mass >= 0 ? mass : density * volume;
  }
}

void BodyReader::ReadSite(pugi::xml_node n, int body, int childclass, const Frame& offset) {
  CheckAttributes(file_, n, false);
  CheckNoText(file_, n);
  if (n.first_child()) file_.Fail(n.first_child(), "unexpected child element");
  int cls = n.attribute("class") ? defaults_.ClassIndex(n, "class") : childclass;
  Layers layers = defaults_.LayersFor(n, cls);
  double size[3] = {0.005, 0.005, 0.005};
  LayeredReals(layers, "size", size);
  for (double s : size) {
    if (s < 0) {
      file_.Fail(n, "attribute 'size' must be >= 0" + file_.Origin(Source(layers, "size")));
    }
  }
  Vec3d pos = Vec3d::Zero();
  if (pugi::xml_node src = Source(layers, "pos")) pos = Real3(src, "pos");
  Quatd rot = Orientation(layers);
  if (pugi::xml_node src = Source(layers, "fromto")) {
    // as for geoms: centred at the midpoint, local z from 'to' towards 'from'
    std::vector<double> ft = Reals(src, "fromto");
    Vec3d from(ft[0], ft[1], ft[2]), to(ft[3], ft[4], ft[5]);
    if (!((from - to).norm() > 0)) {
      file_.Fail(n, "attribute 'fromto' has coinciding end points" + file_.Origin(src));
    }
    pos = 0.5 * (from + to);
    rot = ZToVector((from - to).normalized());
  }
  pos = offset.pos + offset.rot * pos;
  rot = offset.rot * rot;
  int s = AddSite(&m_, n.attribute("name").value(), body, ToReal3(pos), ToReal4(rot));
  s_.Register(&s_.site_ids, n, "site", s);
}

void BodyReader::ReadInertial(pugi::xml_node n, int body) {
  CheckAttributes(file_, n, false);
  CheckNoText(file_, n);
  if (n.first_child()) file_.Fail(n.first_child(), "unexpected child element");
  for (const char* a : {"pos", "mass"}) {
    if (!n.attribute(a)) file_.Fail(n, std::string("missing required attribute '") + a + "'");
  }
  bool diag = n.attribute("diaginertia"), full = n.attribute("fullinertia");
  if (diag == full) file_.Fail(n, "give exactly one of 'diaginertia' and 'fullinertia'");
  double mass = Real1(n, "mass");
  // a static body's mass is never used: MuJoCo's massless placeholder (mass 0, inertia 0) is
  // accepted there, with a note; a moving body needs mass
  const bool body_static = m_.body_dynamic[body] == 0;
  if (body_static && mass == 0) {
    if (diag && Real3(n, "diaginertia").norm() == 0) {
      s_.Note(n, "inertial.massless", "massless <inertial> of a static body: not used");
      return;
    }
  }
  if (!(mass > 0)) file_.Fail(n, "attribute 'mass' must be > 0, got " + Num(mass));
  Vec3d pos = Real3(n, "pos");
  Quatd rot = Orientation(Layers{n});
  Vec3d moments;
  if (diag) {
    moments = Real3(n, "diaginertia");
    for (int k = 0; k < 3; ++k) {
      if (!(moments[k] > 0)) {
        file_.Fail(n, "attribute 'diaginertia' must be > 0, got " + Num(moments[k]));
      }
    }
  } else {
    if (n.attribute("quat") || n.attribute("euler") || n.attribute("axisangle")) {
      file_.Fail(n, "'fullinertia' cannot be combined with an orientation (it defines the frame)");
    }
    std::vector<double> f = Reals(n, "fullinertia");  // Ixx Iyy Izz Ixy Ixz Iyz
    Eigen::Matrix3d inertia;
    inertia << f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2];
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(inertia);
    moments = eig.eigenvalues();
    if (!(moments.minCoeff() > 0)) {
      file_.Fail(n, "attribute 'fullinertia' must be positive definite (smallest eigenvalue " +
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
    file_.Fail(n, "inertia moments " + Num(moments[0]) + " " + Num(moments[1]) + " " +
                      Num(moments[2]) + " violate A + B >= C");
  }
  SetBodyInertial(&m_, body, static_cast<Real>(mass), ToReal3(moments), ToReal3(pos), ToReal4(rot));
}

}  // namespace

void ReadWorldBody(pugi::xml_node n, LoadState* state) {
  BodyReader(state).ReadBody(n, -1, Frame(), 0);
}

}  // namespace s2r::mjcf
