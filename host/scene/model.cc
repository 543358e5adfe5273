#include "host/scene/model.h"

#include <cmath>
#include <stdexcept>

#include <Eigen/Dense>

#include "kernels/math_types.h"
#include "kernels/solver_reduced.h"

namespace s2r {
namespace {

int FindName(const std::vector<std::string>& names, const std::string& name) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

template <size_t N>
void Append(std::vector<Real>* v, const std::array<Real, N>& a) {
  v->insert(v->end(), a.begin(), a.end());
}

Quat ToQuat(const std::array<Real, 4>& q) { return NormalizeQuat(Quat{q[0], q[1], q[2], q[3]}); }

// rotation matrix (columns = principal axes) to a unit quaternion (Shepperd's method)
Quat QuatFromMatrix(const Eigen::Matrix3d& r) {
  double tr = r.trace();
  double w, x, y, z;
  if (tr > 0) {
    double s = std::sqrt(tr + 1.0) * 2;
    w = 0.25 * s; x = (r(2, 1) - r(1, 2)) / s; y = (r(0, 2) - r(2, 0)) / s; z = (r(1, 0) - r(0, 1)) / s;
  } else if (r(0, 0) > r(1, 1) && r(0, 0) > r(2, 2)) {
    double s = std::sqrt(1.0 + r(0, 0) - r(1, 1) - r(2, 2)) * 2;
    w = (r(2, 1) - r(1, 2)) / s; x = 0.25 * s; y = (r(0, 1) + r(1, 0)) / s; z = (r(0, 2) + r(2, 0)) / s;
  } else if (r(1, 1) > r(2, 2)) {
    double s = std::sqrt(1.0 + r(1, 1) - r(0, 0) - r(2, 2)) * 2;
    w = (r(0, 2) - r(2, 0)) / s; x = (r(0, 1) + r(1, 0)) / s; y = 0.25 * s; z = (r(1, 2) + r(2, 1)) / s;
  } else {
    double s = std::sqrt(1.0 + r(2, 2) - r(0, 0) - r(1, 1)) * 2;
    w = (r(1, 0) - r(0, 1)) / s; x = (r(0, 2) + r(2, 0)) / s; y = (r(1, 2) + r(2, 1)) / s; z = 0.25 * s;
  }
  return NormalizeQuat(Quat{Real(w), Real(x), Real(y), Real(z)});
}

Eigen::Matrix3d ToEigen(const Mat3& m) {
  Eigen::Matrix3d e;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) e(i, j) = m.m[i][j];
  return e;
}

void Fail(const std::string& what) { throw std::runtime_error(what); }

void CheckFinite(const std::vector<Real>& v, const char* field) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(static_cast<double>(v[i]))) {
      Fail(std::string("model field ") + field + "[" + std::to_string(i) + "] is not finite");
    }
  }
}

void CheckSize(size_t got, size_t want, const char* field) {
  if (got != want) {
    Fail(std::string("model field ") + field + " has " + std::to_string(got) +
         " values, expected " + std::to_string(want));
  }
}

}  // namespace

int Model::BodyId(const std::string& name) const { return FindName(body_name, name); }
int Model::GeomId(const std::string& name) const { return FindName(geom_name, name); }
int Model::JointId(const std::string& name) const { return FindName(joint_name, name); }
int Model::ActuatorId(const std::string& name) const { return FindName(actuator_name, name); }
int Model::SiteId(const std::string& name) const { return FindName(site_name, name); }

int AddBody(Model* m, const std::string& name, int parent, const std::array<Real, 3>& pos,
            const std::array<Real, 4>& quat) {
  int id = m->nbody();
  m->body_name.push_back(name);
  m->body_parent.push_back(parent);
  m->body_joint.push_back(-1);
  m->body_dynamic.push_back(0);
  m->body_mass.push_back(0);
  Append(&m->body_inertia, std::array<Real, 3>{0, 0, 0});
  Append(&m->body_ipos, std::array<Real, 3>{0, 0, 0});
  Append(&m->body_iquat, std::array<Real, 4>{1, 0, 0, 0});
  Append(&m->body_pos0, pos);
  Quat q = ToQuat(quat);
  Append(&m->body_quat0, std::array<Real, 4>{q.w, q.x, q.y, q.z});
  Append(&m->body_linvel0, std::array<Real, 3>{0, 0, 0});
  Append(&m->body_angvel0, std::array<Real, 3>{0, 0, 0});
  return id;
}

int AddGeom(Model* m, const std::string& name, int body, GeomType type,
            const std::array<Real, 3>& size, const std::array<Real, 3>& pos,
            const std::array<Real, 4>& quat, Real friction) {
  int id = m->ngeom();
  m->geom_name.push_back(name);
  m->geom_type.push_back(type);
  m->geom_body.push_back(body);
  m->geom_contype.push_back(1);
  m->geom_conaffinity.push_back(1);
  Append(&m->geom_size, size);
  Append(&m->geom_pos, pos);
  Quat q = ToQuat(quat);
  Append(&m->geom_quat, std::array<Real, 4>{q.w, q.x, q.y, q.z});
  m->geom_friction.push_back(friction);
  m->geom_restitution.push_back(0);
  return id;
}

int AddJoint(Model* m, const std::string& name, int body, JointType type,
             const std::array<Real, 3>& pos, const std::array<Real, 3>& axis) {
  int id = m->njoint();
  m->joint_name.push_back(name);
  m->joint_type.push_back(type);
  m->joint_body.push_back(body);
  m->joint_parent.push_back(m->body_parent[body]);
  m->joint_limited.push_back(0);
  Append(&m->joint_pos_child, pos);
  Vec3 a = Normalize(Vec3{axis[0], axis[1], axis[2]});
  Append(&m->joint_axis_child, std::array<Real, 3>{a.x, a.y, a.z});
  Append(&m->joint_range, std::array<Real, 2>{0, 0});
  m->joint_damping.push_back(0);
  m->joint_frictionloss.push_back(0);
  m->joint_armature.push_back(0);
  m->joint_qpos0.push_back(0);
  m->joint_qvel0.push_back(0);
  m->body_joint[body] = id;
  m->body_dynamic[body] = 1;
  return id;
}

int AddActuator(Model* m, const std::string& name, ActuatorType type, TransmissionType trn,
                int trnid) {
  int id = m->nactuator();
  m->actuator_name.push_back(name);
  m->actuator_type.push_back(type);
  m->actuator_trntype.push_back(trn);
  m->actuator_trnid.push_back(trnid);
  m->actuator_ctrllimited.push_back(0);
  m->actuator_forcelimited.push_back(0);
  Append(&m->actuator_gear, std::array<Real, 6>{1, 0, 0, 0, 0, 0});
  m->actuator_kp.push_back(type == kActuatorPosition ? 1 : 0);
  m->actuator_kv.push_back(type == kActuatorVelocity ? 1 : 0);
  Append(&m->actuator_ctrlrange, std::array<Real, 2>{0, 0});
  Append(&m->actuator_forcerange, std::array<Real, 2>{0, 0});
  return id;
}

int AddSite(Model* m, const std::string& name, int body, const std::array<Real, 3>& pos,
            const std::array<Real, 4>& quat) {
  int id = m->nsite();
  m->site_name.push_back(name);
  m->site_body.push_back(body);
  Append(&m->site_pos, pos);
  Quat q = ToQuat(quat);
  Append(&m->site_quat, std::array<Real, 4>{q.w, q.x, q.y, q.z});
  return id;
}

void SetBodyInertial(Model* m, int body, Real mass, const std::array<Real, 3>& inertia,
                     const std::array<Real, 3>& ipos, const std::array<Real, 4>& iquat) {
  m->body_mass[body] = mass;
  Quat q = ToQuat(iquat);
  for (int k = 0; k < 3; ++k) {
    m->body_inertia[3 * body + k] = inertia[k];
    m->body_ipos[3 * body + k] = ipos[k];
  }
  Real qa[4] = {q.w, q.x, q.y, q.z};
  for (int k = 0; k < 4; ++k) m->body_iquat[4 * body + k] = qa[k];
}

void ComputeBodyInertiaFromGeoms(Model* m, int body, const std::vector<GeomMassSpec>& geoms) {
  // each geom: mass, centre and inertia about its centre in its own frame (solid of uniform
  // density), then summed about the common COM with the parallel-axis theorem
  double total = 0;
  Eigen::Vector3d com = Eigen::Vector3d::Zero();
  struct Part {
    double mass;
    Eigen::Vector3d pos;
    Eigen::Matrix3d inertia;  // about the geom centre, body frame
  };
  std::vector<Part> parts;
  for (const GeomMassSpec& spec : geoms) {
    int g = spec.geom;
    const Real* s = &m->geom_size[3 * g];
    double r = s[0];
    double volume = 0;
    switch (m->geom_type[g]) {
      case kGeomSphere: volume = 4.0 / 3.0 * M_PI * r * r * r; break;
      case kGeomCapsule: volume = M_PI * r * r * 2.0 * s[1] + 4.0 / 3.0 * M_PI * r * r * r; break;
      case kGeomBox: volume = 8.0 * s[0] * s[1] * s[2]; break;
      default: continue;  // planes have no mass
    }
    if (!(volume > 0)) continue;  // a degenerate geom carries no mass
    double density = spec.mass >= 0 ? spec.mass / volume : spec.density;
    double mass = density * volume;
    Eigen::Vector3d d;  // principal moments in the geom frame
    switch (m->geom_type[g]) {
      case kGeomSphere: d.setConstant(0.4 * mass * r * r); break;
      case kGeomCapsule: {
        double h = s[1];
        double m_cyl = density * M_PI * r * r * 2.0 * h;
        double m_hemi = density * 2.0 / 3.0 * M_PI * r * r * r;
        double axial = m_cyl * r * r / 2.0 + 2.0 * m_hemi * 0.4 * r * r;
        double offset = h + 3.0 * r / 8.0;  // hemisphere COM from the capsule centre
        double lateral = m_cyl * (3.0 * r * r + 4.0 * h * h) / 12.0 +
                         2.0 * m_hemi * (83.0 / 320.0 * r * r + offset * offset);
        d = Eigen::Vector3d(lateral, lateral, axial);
        break;
      }
      default: {
        double a = 2 * s[0], b = 2 * s[1], c = 2 * s[2];
        d = Eigen::Vector3d(mass * (b * b + c * c) / 12.0, mass * (a * a + c * c) / 12.0,
                            mass * (a * a + b * b) / 12.0);
      }
    }
    const Real* gq = &m->geom_quat[4 * g];
    Eigen::Matrix3d rot = ToEigen(QuatToMat3(Quat{gq[0], gq[1], gq[2], gq[3]}));
    Part p{mass, Eigen::Vector3d(m->geom_pos[3 * g], m->geom_pos[3 * g + 1], m->geom_pos[3 * g + 2]),
           rot * d.asDiagonal() * rot.transpose()};
    total += mass;
    com += mass * p.pos;
    parts.push_back(p);
  }
  if (total <= 0) {
    SetBodyInertial(m, body, 0, {0, 0, 0}, {0, 0, 0}, {1, 0, 0, 0});
    return;
  }
  com /= total;
  Eigen::Matrix3d inertia = Eigen::Matrix3d::Zero();
  for (const Part& p : parts) {
    Eigen::Vector3d r = p.pos - com;
    inertia += p.inertia + p.mass * (r.squaredNorm() * Eigen::Matrix3d::Identity() - r * r.transpose());
  }
  // principal axes; make the eigenvector frame right-handed
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(inertia);
  Eigen::Matrix3d axes = eig.eigenvectors();
  if (axes.determinant() < 0) axes.col(2) = -axes.col(2);
  Quat iq = QuatFromMatrix(axes);
  Eigen::Vector3d moments = eig.eigenvalues();
  SetBodyInertial(m, body, Real(total), {Real(moments(0)), Real(moments(1)), Real(moments(2))},
                  {Real(com(0)), Real(com(1)), Real(com(2))}, {iq.w, iq.x, iq.y, iq.z});
}

void Model::Finalize() {
  if (body_parent.empty()) AddBody(this, "world", -1, {0, 0, 0}, {1, 0, 0, 0});
  const size_t nb = nbody(), ng = ngeom(), nj = njoint(), na = nactuator(), ns = nsite();

  // --- array sizes and finiteness ---
  CheckSize(body_mass.size(), nb, "body_mass");
  CheckSize(body_inertia.size(), 3 * nb, "body_inertia");
  CheckSize(body_pos0.size(), 3 * nb, "body_pos0");
  CheckSize(body_quat0.size(), 4 * nb, "body_quat0");
  CheckSize(geom_size.size(), 3 * ng, "geom_size");
  CheckSize(geom_friction.size(), ng, "geom_friction");
  CheckSize(geom_restitution.size(), ng, "geom_restitution");
  CheckSize(joint_range.size(), 2 * nj, "joint_range");
  CheckSize(actuator_gear.size(), 6 * na, "actuator_gear");
  CheckSize(site_pos.size(), 3 * ns, "site_pos");
  CheckSize(gravity.size(), 3, "gravity");
  const std::pair<const std::vector<Real>*, const char*> fields[] = {
      {&body_mass, "body_mass"}, {&body_inertia, "body_inertia"}, {&body_ipos, "body_ipos"},
      {&body_iquat, "body_iquat"}, {&body_pos0, "body_pos0"}, {&body_quat0, "body_quat0"},
      {&body_linvel0, "body_linvel0"}, {&body_angvel0, "body_angvel0"}, {&geom_size, "geom_size"},
      {&geom_pos, "geom_pos"}, {&geom_quat, "geom_quat"}, {&geom_friction, "geom_friction"},
      {&geom_restitution, "geom_restitution"}, {&joint_range, "joint_range"},
      {&joint_damping, "joint_damping"}, {&joint_frictionloss, "joint_frictionloss"},
      {&joint_armature, "joint_armature"}, {&joint_qpos0, "joint_qpos0"},
      {&joint_qvel0, "joint_qvel0"},
      {&actuator_gear, "actuator_gear"},
      {&actuator_kp, "actuator_kp"}, {&actuator_kv, "actuator_kv"},
      {&actuator_ctrlrange, "actuator_ctrlrange"}, {&actuator_forcerange, "actuator_forcerange"},
      {&gravity, "gravity"}, {&joint_pos_child, "joint_pos_child"},
      {&joint_axis_child, "joint_axis_child"}, {&site_pos, "site_pos"}, {&site_quat, "site_quat"}};
  for (const auto& f : fields) CheckFinite(*f.first, f.second);
  CheckSize(body_ipos.size(), 3 * nb, "body_ipos");
  CheckSize(body_iquat.size(), 4 * nb, "body_iquat");
  CheckSize(joint_pos_child.size(), 3 * nj, "joint_pos_child");
  CheckSize(joint_axis_child.size(), 3 * nj, "joint_axis_child");
  CheckSize(joint_damping.size(), nj, "joint_damping");
  CheckSize(joint_frictionloss.size(), nj, "joint_frictionloss");
  CheckSize(joint_armature.size(), nj, "joint_armature");
  CheckSize(joint_qpos0.size(), nj, "joint_qpos0");
  CheckSize(joint_qvel0.size(), nj, "joint_qvel0");
  CheckSize(actuator_kp.size(), na, "actuator_kp");
  CheckSize(actuator_kv.size(), na, "actuator_kv");
  CheckSize(actuator_ctrlrange.size(), 2 * na, "actuator_ctrlrange");
  CheckSize(actuator_forcerange.size(), 2 * na, "actuator_forcerange");
  CheckSize(site_quat.size(), 4 * ns, "site_quat");

  // --- indices and ranges ---
  for (size_t i = 0; i < na; ++i) {
    int id = actuator_trnid[i];
    int limit = actuator_trntype[i] == kTransmissionJoint ? static_cast<int>(nj) : static_cast<int>(ns);
    if (id < 0 || id >= limit) Fail("actuator '" + actuator_name[i] + "' refers to a missing joint or site");
    if (actuator_trntype[i] == kTransmissionJoint) {
      int jt = joint_type[id];
      if (jt != kJointHinge && jt != kJointSlide) {
        Fail("actuator '" + actuator_name[i] + "' drives joint '" + joint_name[id] + "', which is not a hinge or slide");
      }
    }
    if (actuator_kp[i] < 0 || actuator_kv[i] < 0) Fail("actuator '" + actuator_name[i] + "' has negative kp or kv");
    if (actuator_ctrllimited[i] && !(actuator_ctrlrange[2 * i] < actuator_ctrlrange[2 * i + 1])) {
      Fail("actuator '" + actuator_name[i] + "' is ctrllimited but its ctrlrange is empty");
    }
    if (actuator_forcelimited[i] && !(actuator_forcerange[2 * i] < actuator_forcerange[2 * i + 1])) {
      Fail("actuator '" + actuator_name[i] + "' is forcelimited but its forcerange is empty");
    }
  }
  for (const auto& e : exclude_body_pairs) {
    if (e.first < 0 || e.first >= static_cast<int>(nb) || e.second < 0 || e.second >= static_cast<int>(nb)) {
      Fail("contact exclude refers to a missing body");
    }
  }
  for (size_t j = 0; j < nj; ++j) {
    if (joint_damping[j] < 0 || joint_frictionloss[j] < 0 || joint_armature[j] < 0) {
      Fail("joint '" + joint_name[j] + "' has negative damping, frictionloss or armature");
    }
  }

  // --- options ---
  if (!(timestep > 0)) Fail("timestep must be > 0");
  if (substeps < 1) Fail("s2r_substeps must be >= 1");
  if (!(control_hz > 0)) Fail("s2r_control_hz must be > 0");
  double ratio = 1.0 / (static_cast<double>(control_hz) * timestep);
  steps_per_control = static_cast<int>(std::lround(ratio));
  if (steps_per_control < 1 || std::abs(ratio - steps_per_control) > 1e-4 * ratio) {
    Fail("control period 1/" + std::to_string(control_hz) + " s is not a whole number of timesteps (" +
         std::to_string(timestep) + " s)");
  }
  if (latency_capacity < 1) Fail("latency capacity must be >= 1");
  if (latency_steps.size() != 1 || latency_steps[0] < 0 || latency_steps[0] >= latency_capacity) {
    Fail("s2r_latency_steps must be in [0, s2r_max_latency_steps]");
  }
  if (max_contacts < 1) Fail("s2r_max_contacts must be >= 1");

  // --- bodies: moving bodies need mass and inertia ---
  for (size_t b = 1; b < nb; ++b) {
    if (!body_dynamic[b]) continue;
    if (!(body_mass[b] > 0)) Fail("body '" + body_name[b] + "' moves but has mass " + std::to_string(body_mass[b]) + " (must be > 0)");
    for (int k = 0; k < 3; ++k) {
      if (!(body_inertia[3 * b + k] > 0)) Fail("body '" + body_name[b] + "' moves but has a non-positive principal inertia");
    }
  }
  for (size_t g = 0; g < ng; ++g) {
    if (geom_body[g] < 0 || geom_body[g] >= static_cast<int>(nb)) Fail("geom " + std::to_string(g) + " has no body");
    if (geom_friction[g] < 0) Fail("geom '" + geom_name[g] + "' has negative friction");
  }

  // --- joint frames from the reference configuration ---
  joint_pos_parent.assign(3 * nj, 0);
  joint_axis_parent.assign(3 * nj, 0);
  joint_qrel0.assign(4 * nj, 0);
  for (size_t j = 0; j < nj; ++j) {
    int c = joint_body[j], p = joint_parent[j];
    Transform tc{LoadVec3(&body_pos0[3 * c]), LoadQuat(&body_quat0[4 * c])};
    Transform tp{LoadVec3(&body_pos0[3 * p]), LoadQuat(&body_quat0[4 * p])};
    Vec3 anchor = TransformPoint(tc, LoadVec3(&joint_pos_child[3 * j]));
    Vec3 axis = Rotate(tc.rot, LoadVec3(&joint_axis_child[3 * j]));
    StoreVec3(&joint_pos_parent[3 * j], InvTransformPoint(tp, anchor));
    StoreVec3(&joint_axis_parent[3 * j], InvRotate(tp.rot, axis));
    StoreQuat(&joint_qrel0[4 * j], NormalizeQuat(Conjugate(tp.rot) * tc.rot));
    if (joint_limited[j] && !(joint_range[2 * j] < joint_range[2 * j + 1])) {
      Fail("joint '" + joint_name[j] + "' is limited but its range is empty");
    }
  }

  // --- collision pairs: welded groups, parent filter, contype/conaffinity, excludes ---
  std::vector<int> weld(nb, 0);
  for (size_t b = 1; b < nb; ++b) {
    if (!body_dynamic[b]) weld[b] = 0;
    else if (body_joint[b] >= 0 && joint_type[body_joint[b]] == kJointWeld) weld[b] = weld[body_parent[b]];
    else weld[b] = static_cast<int>(b);
  }
  auto parent_group = [&](int group) { return group == 0 ? -1 : weld[body_parent[group]]; };
  auto excluded = [&](int ba, int bb) {
    for (const auto& e : exclude_body_pairs) {
      if ((e.first == ba && e.second == bb) || (e.first == bb && e.second == ba)) return true;
    }
    return false;
  };
  pair_geom.clear();
  for (size_t a = 0; a < ng; ++a) {
    for (size_t b = a + 1; b < ng; ++b) {
      int ba = geom_body[a], bb = geom_body[b];
      int ga = weld[ba], gb = weld[bb];
      if (ga == gb) continue;
      if ((parent_group(ga) == gb && gb != 0) || (parent_group(gb) == ga && ga != 0)) continue;
      if (!((geom_contype[a] & geom_conaffinity[b]) || (geom_contype[b] & geom_conaffinity[a]))) continue;
      if (geom_type[a] == kGeomPlane && geom_type[b] == kGeomPlane) continue;
      if (excluded(ba, bb)) continue;
      pair_geom.push_back(static_cast<int32_t>(a));
      pair_geom.push_back(static_cast<int32_t>(b));
    }
  }
  FindSlideTrees();

  // each joint's implicit (position, velocity) actuators, in index order
  joint_actuator.assign(nj, -1);
  actuator_next.assign(actuator_type.size(), -1);
  for (int i = static_cast<int>(actuator_type.size()) - 1; i >= 0; --i) {
    if (actuator_trntype[i] != kTransmissionJoint || actuator_type[i] == kActuatorMotor) continue;
    actuator_next[i] = joint_actuator[actuator_trnid[i]];
    joint_actuator[actuator_trnid[i]] = i;
  }
}

// Slide trees: a body whose joint is a slide and whose parent is fixed or itself in a slide tree.
// A tree is stepped in reduced coordinates only if every body below its root is such a body (a
// hinge or welded body below a slide would need lock rows against it) and the trees together fit
// kMaxReducedBodies; otherwise it stays in maximal coordinates.
void Model::FindSlideTrees() {
  const int nb = nbody();
  body_reduced.assign(nb, -1);
  reduced_body.clear();
  reduced_parent.clear();
  if (!reduce_slide_trees) return;
  std::vector<int> slide(nb, 0), root(nb, -1);
  for (int b = 1; b < nb; ++b) {
    int j = body_joint[b], p = body_parent[b];
    bool fixed_parent = p == 0 || !body_dynamic[p];
    slide[b] = body_dynamic[b] && j >= 0 && joint_type[j] == kJointSlide &&
               (fixed_parent || slide[p]);
    if (slide[b]) root[b] = fixed_parent ? b : root[p];
  }
  std::vector<int> bad(nb, 0), size(nb, 0);
  for (int b = 1; b < nb; ++b) {
    int p = body_parent[b];
    if (!slide[b] && p > 0 && slide[p]) bad[root[p]] = 1;  // something else hangs from the tree
    if (slide[b]) ++size[root[b]];
  }
  // whole trees, in order of their roots, while they fit
  std::vector<int> take(nb, 0);
  int total = 0;
  for (int b = 1; b < nb; ++b) {
    if (root[b] != b || bad[b] || total + size[b] > kMaxReducedBodies) continue;
    take[b] = 1;
    total += size[b];
  }
  for (int b = 1; b < nb; ++b) {
    if (!slide[b] || !take[root[b]]) continue;
    body_reduced[b] = static_cast<int32_t>(reduced_body.size());
    reduced_body.push_back(b);
    reduced_parent.push_back(root[b] == b ? -1 : body_reduced[body_parent[b]]);
  }
}

ModelView Model::View() const {
  ModelView v;
  v.nbody = nbody();
  v.ngeom = ngeom();
  v.njoint = njoint();
  v.nactuator = nactuator();
  v.nsite = nsite();
  v.npair = static_cast<int32_t>(pair_geom.size() / 2);
  v.nreduced = static_cast<int32_t>(reduced_body.size());
  v.max_contacts = max_contacts;
  v.substeps = substeps;
  v.steps_per_control = steps_per_control;
  v.latency_capacity = latency_capacity;
  v.timestep = timestep;
  v.body_parent = body_parent.data();
  v.body_joint = body_joint.data();
  v.body_dynamic = body_dynamic.data();
  v.geom_type = geom_type.data();
  v.geom_body = geom_body.data();
  v.joint_type = joint_type.data();
  v.joint_body = joint_body.data();
  v.joint_parent = joint_parent.data();
  v.joint_limited = joint_limited.data();
  v.actuator_type = actuator_type.data();
  v.actuator_trntype = actuator_trntype.data();
  v.actuator_trnid = actuator_trnid.data();
  v.actuator_ctrllimited = actuator_ctrllimited.data();
  v.actuator_forcelimited = actuator_forcelimited.data();
  v.site_body = site_body.data();
  v.pair_geom = pair_geom.data();
  v.body_reduced = body_reduced.size() == static_cast<size_t>(nbody()) ? body_reduced.data() : nullptr;
  v.reduced_body = reduced_body.data();
  v.reduced_parent = reduced_parent.data();
  v.joint_actuator = joint_actuator.data();
  v.actuator_next = actuator_next.data();
  v.joint_pos_child = joint_pos_child.data();
  v.joint_pos_parent = joint_pos_parent.data();
  v.joint_axis_child = joint_axis_child.data();
  v.joint_axis_parent = joint_axis_parent.data();
  v.joint_qrel0 = joint_qrel0.data();
  v.site_pos = site_pos.data();
  v.site_quat = site_quat.data();
  auto b = [](const std::vector<Real>& f) { return Batched<Real>{f.data(), 0}; };
  v.gravity = b(gravity);
  v.body_mass = b(body_mass);
  v.body_inertia = b(body_inertia);
  v.body_ipos = b(body_ipos);
  v.body_iquat = b(body_iquat);
  v.body_pos0 = b(body_pos0);
  v.body_quat0 = b(body_quat0);
  v.body_linvel0 = b(body_linvel0);
  v.body_angvel0 = b(body_angvel0);
  v.geom_size = b(geom_size);
  v.geom_pos = b(geom_pos);
  v.geom_quat = b(geom_quat);
  v.geom_friction = b(geom_friction);
  v.geom_restitution = b(geom_restitution);
  v.joint_range = b(joint_range);
  v.joint_damping = b(joint_damping);
  v.joint_frictionloss = b(joint_frictionloss);
  v.joint_armature = b(joint_armature);
  v.joint_qpos0 = b(joint_qpos0);
  v.joint_qvel0 = b(joint_qvel0);
  v.actuator_gear = b(actuator_gear);
  v.actuator_kp = b(actuator_kp);
  v.actuator_kv = b(actuator_kv);
  v.actuator_ctrlrange = b(actuator_ctrlrange);
  v.actuator_forcerange = b(actuator_forcerange);
  v.latency_steps = Batched<int32_t>{latency_steps.data(), 0};
  v.contact_hertz = b(contact_hertz);
  v.contact_damping_ratio = b(contact_damping_ratio);
  v.joint_hertz = b(joint_hertz);
  v.joint_damping_ratio = b(joint_damping_ratio);
  v.contact_push_velocity = b(contact_push_velocity);
  v.restitution_threshold = b(restitution_threshold);
  v.linear_slop = b(linear_slop);
  v.speculative_distance = b(speculative_distance);
  v.max_linear_speed = b(max_linear_speed);
  return v;
}

}  // namespace s2r
