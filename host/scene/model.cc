#include "host/scene/model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <tuple>

#include <Eigen/Dense>

#include "host/scene/fields.h"
#include "kernels/math_types.h"
#include "kernels/solver_reduced.h"
#include "kernels/solver_tree.h"

namespace s2r {
namespace {

int FindName(const std::vector<std::string>& names, const std::string& name) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

void Fail(const std::string& what) { throw std::runtime_error(what); }

// an array's size: entities x per
void CheckSize(const Model& m, FieldId id, size_t got) {
  const FieldInfo& f = FieldInfoOf(id);
  size_t want = static_cast<size_t>(m.Count(f.entity)) * f.per;
  if (got != want) {
    Fail(std::string("model field ") + f.name + " has " + std::to_string(got) + " values, expected " +
         std::to_string(want) + " (" + std::to_string(m.Count(f.entity)) + " " + EntityName(f.entity) + " x " +
         std::to_string(f.per) + ")");
  }
}

template <typename T>
void CheckFinite(const std::vector<T>& v, const char* field) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(static_cast<double>(v[i]))) {
      Fail(std::string("model field ") + field + "[" + std::to_string(i) + "] is not finite");
    }
  }
}

}  // namespace

int Model::BodyId(const std::string& name) const { return FindName(body_name, name); }
int Model::GeomId(const std::string& name) const { return FindName(geom_name, name); }
int Model::JointId(const std::string& name) const { return FindName(joint_name, name); }
int Model::ActuatorId(const std::string& name) const { return FindName(actuator_name, name); }
int Model::SiteId(const std::string& name) const { return FindName(site_name, name); }
int Model::TendonId(const std::string& name) const { return FindName(tendon_name, name); }

int Model::Count(Entity e) const {
  switch (e) {
    case Entity::kBody: return nbody();
    case Entity::kGeom: return ngeom();
    case Entity::kJoint: return njoint();
    case Entity::kActuator: return nactuator();
    case Entity::kSite: return nsite();
    case Entity::kPair: return npair();
    case Entity::kReduced: return nreduced();
    case Entity::kHullVert: return nhullvert();
    case Entity::kTree: return ntree();
    case Entity::kEquality: return nequality();
    case Entity::kTendon: return ntendon();
    case Entity::kWrap: return nwrap();
    default: return 1;
  }
}

int Model::nq() const {
  int n = 0;
  for (int j = 0; j < njoint(); ++j) n += JointQposSize(j);
  return n;
}

// MuJoCo's qpos entries of joint j: a ball's quaternion is its first hinge's
int Model::JointQposSize(int j) const {
  const int32_t t = joint_type[j];
  if (t == kJointFree) return 7;
  if (t == kJointWeld) return 0;
  if (j < static_cast<int>(joint_part.size()) && joint_part[j] != 0) {
    if (joint_part[j] == 4) return 7;  // a floating base's position and quaternion
    return joint_part[j] == 1 && !JointIsFreePart(j) ? 4 : 0;
  }
  return 1;
}

// whether joint j is one of the six parts of a floating base's free joint (joint_part 4, 5, 6,
// then 1, 2, 3), not of a ball
bool Model::JointIsFreePart(int j) const {
  const int part = joint_part[j];
  if (part >= 4) return true;
  if (part == 0) return false;
  const int first = j - (part - 1);  // the rotation's x hinge
  return first > 0 && joint_part[first - 1] == 6;
}

int Model::nv() const {
  int n = 0;
  for (int32_t t : joint_type) n += t == kJointFree ? 6 : (t == kJointWeld ? 0 : 1);
  return n;
}

std::vector<int> Model::TrajectoryBodies() const {
  std::vector<int> out;
  for (int b = 1; b < nbody(); ++b) {
    if (!body_link[b]) out.push_back(b);
  }
  return out;
}

const Model::Keyframe* Model::FindKeyframe(const std::string& name) const {
  for (const Keyframe& k : keyframes) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

void Model::ApplyKeyframe(const std::string& name) {
  const Keyframe* key = FindKeyframe(name);
  if (key == nullptr) {
    std::string known;
    for (const Keyframe& k : keyframes) known += (known.empty() ? "'" : ", '") + k.name + "'";
    throw std::runtime_error("no keyframe named '" + name + "' (the scene has " +
                             (known.empty() ? std::string("none") : known) + ")");
  }
  if (!key->qpos.empty() && static_cast<int>(key->qpos.size()) != nq()) {
    throw std::runtime_error("keyframe '" + name + "' has " + std::to_string(key->qpos.size()) +
                             " qpos values, the model has nq = " + std::to_string(nq()));
  }
  if (!key->qvel.empty() && static_cast<int>(key->qvel.size()) != nv()) {
    throw std::runtime_error("keyframe '" + name + "' has " + std::to_string(key->qvel.size()) +
                             " qvel values, the model has nv = " + std::to_string(nv()));
  }
  int iq = 0, iv = 0;
  for (int j = 0; j < njoint(); ++j) {
    const int b = joint_body[j];
    if (joint_type[j] == kJointWeld) continue;
    if (joint_part[j] == 4) {
      // a floating base: MuJoCo's free qpos is the body's origin and orientation in the world, its
      // qvel the origin's velocity (world) and the angular velocity (body frame); the slides move
      // the origin from its reference position, the ball turns it from its reference orientation
      const int body = joint_body[j + 5];
      double rel[4];
      if (!key->qpos.empty()) {
        for (int k = 0; k < 3; ++k) joint_qpos0[j + k] = static_cast<Real>(key->qpos[iq + k] - body_pos0[3 * body + k]);
        Eigen::Quaterniond ref(body_quat0[4 * body], body_quat0[4 * body + 1], body_quat0[4 * body + 2],
                               body_quat0[4 * body + 3]);
        Eigen::Quaterniond q(key->qpos[iq + 3], key->qpos[iq + 4], key->qpos[iq + 5], key->qpos[iq + 6]);
        Eigen::Quaterniond r = ref.normalized().conjugate() * q.normalized();
        rel[0] = r.w();
        rel[1] = r.x();
        rel[2] = r.y();
        rel[3] = r.z();
      }
      if (!key->qvel.empty()) {
        for (int k = 0; k < 3; ++k) joint_qvel0[j + k] = static_cast<Real>(key->qvel[iv + k]);
      }
      ApplyBallKeyframe(name, j + 3, key->qpos.empty() ? nullptr : rel,
                        key->qvel.empty() ? nullptr : &key->qvel[iv + 3]);
      j += 5;
      iq += 7;
      iv += 6;
      continue;
    }
    if (joint_part[j] == 1) {
      ApplyBallKeyframe(name, j, key->qpos.empty() ? nullptr : &key->qpos[iq],
                        key->qvel.empty() ? nullptr : &key->qvel[iv]);
      j += 2;
      iq += 4;
      iv += 3;
      continue;
    }
    if (joint_type[j] != kJointFree) {
      if (!key->qpos.empty()) joint_qpos0[j] = static_cast<Real>(key->qpos[iq]);
      if (!key->qvel.empty()) joint_qvel0[j] = static_cast<Real>(key->qvel[iv]);
      iq += 1;
      iv += 1;
      continue;
    }
    // free joint: qpos = body origin (world) and orientation; qvel = origin velocity (world)
    // and angular velocity in the body frame (MuJoCo's convention)
    if (!key->qpos.empty()) {
      for (int k = 0; k < 3; ++k) body_pos0[3 * b + k] = static_cast<Real>(key->qpos[iq + k]);
      Quat q = NormalizeQuat(Quat{static_cast<Real>(key->qpos[iq + 3]),
                                  static_cast<Real>(key->qpos[iq + 4]),
                                  static_cast<Real>(key->qpos[iq + 5]),
                                  static_cast<Real>(key->qpos[iq + 6])});
      StoreQuat(&body_quat0[4 * b], q);
    }
    if (!key->qvel.empty()) {
      Quat rot = LoadQuat(&body_quat0[4 * b]);
      Vec3 v{static_cast<Real>(key->qvel[iv]), static_cast<Real>(key->qvel[iv + 1]),
             static_cast<Real>(key->qvel[iv + 2])};
      Vec3 w_local{static_cast<Real>(key->qvel[iv + 3]), static_cast<Real>(key->qvel[iv + 4]),
                   static_cast<Real>(key->qvel[iv + 5])};
      Vec3 w = Rotate(rot, w_local);
      // s2r starts a free body from its COM velocity
      Vec3 com_offset = Rotate(rot, LoadVec3(&body_ipos[3 * b]));
      StoreVec3(&body_linvel0[3 * b], v + Cross(w, com_offset));
      StoreVec3(&body_angvel0[3 * b], w);
    }
    iq += 7;
    iv += 6;
  }
  keyframe = name;
}

// A ball's quaternion (MuJoCo's qpos: the child's rotation after its reference orientation) as
// its three hinges' angles, x then y then z about the axes the earlier ones turned (intrinsic
// x-y-z Euler angles: Rx(a) Ry(b) Rz(c) is the rotation); its qvel (the child's angular velocity
// relative to the parent, child frame) as the hinges' rates at those angles.
void Model::ApplyBallKeyframe(const std::string& name, int j, const double* qpos, const double* qvel) {
  double angles[3];
  if (qpos != nullptr) {
    BallAngles(qpos, angles);
    for (int k = 0; k < 3; ++k) joint_qpos0[j + k] = static_cast<Real>(angles[k]);
  } else {
    for (int k = 0; k < 3; ++k) angles[k] = joint_qpos0[j + k];
  }
  if (qvel == nullptr) return;
  double rates[3];
  if (!BallRates(angles, qvel, rates)) {
    throw std::runtime_error("keyframe '" + name + "': ball joint '" + joint_name[j] +
                             "' starts turned 90 degrees about its y axis, where its qvel cannot be set");
  }
  for (int k = 0; k < 3; ++k) joint_qvel0[j + k] = static_cast<Real>(rates[k]);
}

void Model::BallAngles(const double q[4], double angles[3]) {
  const Eigen::Matrix3d r = Eigen::Quaterniond(q[0], q[1], q[2], q[3]).normalized().toRotationMatrix();
  // r = Rx(a) Ry(b) Rz(c)
  angles[1] = std::asin(std::clamp(r(0, 2), -1.0, 1.0));
  angles[0] = std::atan2(-r(1, 2), r(2, 2));
  angles[2] = std::atan2(-r(0, 1), r(0, 0));
}

void Model::BallRotation(const double angles[3], double q[4]) {
  const Eigen::Quaterniond r = Eigen::AngleAxisd(angles[0], Eigen::Vector3d::UnitX()) *
                               Eigen::AngleAxisd(angles[1], Eigen::Vector3d::UnitY()) *
                               Eigen::AngleAxisd(angles[2], Eigen::Vector3d::UnitZ());
  q[0] = r.w(), q[1] = r.x(), q[2] = r.y(), q[3] = r.z();
}

namespace {
// child-frame angular velocity of unit rates: x turned by Ry(b) Rz(c) back, y by Rz(c), z itself
Eigen::Matrix3d BallRateToVelocity(const double angles[3]) {
  const Eigen::Matrix3d ry = Eigen::AngleAxisd(angles[1], Eigen::Vector3d::UnitY()).toRotationMatrix();
  const Eigen::Matrix3d rz = Eigen::AngleAxisd(angles[2], Eigen::Vector3d::UnitZ()).toRotationMatrix();
  Eigen::Matrix3d rate_to_w;
  rate_to_w.col(0) = (ry * rz).transpose() * Eigen::Vector3d::UnitX();
  rate_to_w.col(1) = rz.transpose() * Eigen::Vector3d::UnitY();
  rate_to_w.col(2) = Eigen::Vector3d::UnitZ();
  return rate_to_w;
}
}  // namespace

void Model::BallVelocity(const double angles[3], const double rates[3], double w[3]) {
  const Eigen::Vector3d v = BallRateToVelocity(angles) * Eigen::Vector3d(rates[0], rates[1], rates[2]);
  for (int k = 0; k < 3; ++k) w[k] = v[k];
}

bool Model::BallRates(const double angles[3], const double w[3], double rates[3]) {
  const Eigen::Vector3d v(w[0], w[1], w[2]);
  if (v.norm() == 0) {
    for (int k = 0; k < 3; ++k) rates[k] = 0;
    return true;
  }
  if (std::abs(std::cos(angles[1])) < 1e-6) return false;
  const Eigen::Vector3d r = BallRateToVelocity(angles).colPivHouseholderQr().solve(v);
  for (int k = 0; k < 3; ++k) rates[k] = r[k];
  return true;
}

const std::vector<std::string>* Model::Names(Entity e) const {
  switch (e) {
    case Entity::kBody: return &body_name;
    case Entity::kGeom: return &geom_name;
    case Entity::kJoint: return &joint_name;
    case Entity::kActuator: return &actuator_name;
    case Entity::kSite: return &site_name;
    case Entity::kEquality: return &equality_name;
    case Entity::kTendon: return &tendon_name;
    default: return nullptr;
  }
}

void Model::Finalize() {
  if (body_parent.empty()) AddBody(this, "world", -1, {0, 0, 0}, {1, 0, 0, 0});
  const size_t nb = nbody(), ng = ngeom(), nj = njoint(), na = nactuator(), ns = nsite();

  // --- options, each against its bound ---
#define S2R_CHECK_OPTION(name, ...)                                                  \
  if (std::string e = OptionValueError(FieldId::name, static_cast<double>(name)); !e.empty()) Fail(e);
  S2R_MODEL_OPTIONS(S2R_CHECK_OPTION)
#undef S2R_CHECK_OPTION

  // --- the scene's arrays: sizes and finite numbers ---
#define S2R_CHECK_TOPOLOGY(name, type, entity, per, derived, description) \
  if (!S2R_FIELD_##derived) {                                             \
    CheckSize(*this, FieldId::name, name.size());                         \
    CheckFinite(name, #name);                                             \
  }
  S2R_MODEL_TOPOLOGY(S2R_CHECK_TOPOLOGY)
#undef S2R_CHECK_TOPOLOGY
#define S2R_CHECK_PARAM(name, ...)              \
  CheckSize(*this, FieldId::name, name.size()); \
  CheckFinite(name, #name);
  S2R_MODEL_PARAMS(S2R_CHECK_PARAM)
#undef S2R_CHECK_PARAM
  for (size_t b = 1; b < nb; ++b) {
    if (body_parent[b] < 0 || body_parent[b] >= static_cast<int>(b)) {
      Fail("body '" + body_name[b] + "' has parent " + std::to_string(body_parent[b]) + ", not an earlier body");
    }
  }

  // --- the physical parameters, each against its bound (positive masses of moving bodies,
  // non-negative friction and damping, unit quaternions, ordered ranges, ...) ---
  ForEachParam(*this, [this](FieldId id, const auto& values) {
    std::vector<double> block(values.begin(), values.end());
    if (std::string e = FieldValuesError(*this, id, block.data()); !e.empty()) Fail(e);
  });

  // --- indices and ranges ---
  for (size_t g = 0; g < ng; ++g) {
    if (geom_type[g] < 0 || geom_type[g] >= kGeomTypeCount) {
      Fail("geom '" + geom_name[g] + "' has unknown type " + std::to_string(geom_type[g]));
    }
    if (geom_type[g] != kGeomMesh) continue;
    const int first = geom_hull[2 * g], count = geom_hull[2 * g + 1];
    if (first < 0 || count < 4 || first + count > nhullvert()) {
      Fail("mesh geom '" + geom_name[g] + "' has no convex hull of at least 4 vertices (geom_hull " +
           std::to_string(first) + " " + std::to_string(count) + ")");
    }
  }
  // equalities and fixed tendons couple hinge and slide joints
  auto axial = [&](int j) {
    return j >= 0 && j < static_cast<int>(nj) &&
           (joint_type[j] == kJointHinge || joint_type[j] == kJointSlide) && joint_part[j] == 0;
  };
  // a ball joint: three hinges about one anchor, x then y then z of the child's frame, each on the
  // body the one before it moves (the loader's links), unlimited and without a spring
  for (size_t j = 0; j < nj; ++j) {
    if (joint_part[j] < 0 || joint_part[j] > 6) Fail("joint '" + joint_name[j] + "' has joint_part outside 0..6");
    if (joint_part[j] == 4) {
      // a floating base: three unlimited slides through the body's origin, the first from a fixed
      // parent, each on the link the one before moves, then a ball (checked below)
      bool ok = j + 5 < nj && (joint_parent[j] == 0 || !body_dynamic[joint_parent[j]]);
      for (int k = 0; ok && k < 3; ++k) {
        const size_t jk = j + k;
        ok = joint_part[jk] == k + 4 && joint_type[jk] == kJointSlide && !joint_limited[jk] &&
             joint_stiffness[jk] == Real(0) && body_link[joint_body[jk]] && joint_part[j + 3] == 1 &&
             (k == 0 || joint_parent[jk] == joint_body[jk - 1]);
      }
      if (!ok) {
        Fail("joint '" + joint_name[j] + "' starts a floating base that is not three unlimited slides along the "
             "world axes on a chain of links followed by a ball (kernels/solver_tree.h)");
      }
    }
    if (joint_part[j] != 1) continue;
    bool ok = j + 2 < nj;
    for (int k = 0; ok && k < 3; ++k) {
      const size_t jk = j + k;
      const Real* ax = &joint_axis_child[3 * jk];
      ok = joint_part[jk] == k + 1 && joint_type[jk] == kJointHinge && ax[k] == Real(1) &&
           (k == 0 ? joint_limited[jk] != 1 : joint_limited[jk] == 0) && joint_springref[jk] == Real(0) &&
           (joint_limited[jk] != 2 || (joint_range[2 * jk] == Real(0) && !JointIsFreePart(jk))) &&
           (joint_stiffness[jk] == Real(0) || !JointIsFreePart(jk)) &&
           (k == 0 || (joint_parent[jk] == joint_body[jk - 1] && body_link[joint_body[jk - 1]] &&
                       joint_pos_child[3 * jk] == joint_pos_child[3 * j] &&
                       joint_pos_child[3 * jk + 1] == joint_pos_child[3 * j + 1] &&
                       joint_pos_child[3 * jk + 2] == joint_pos_child[3 * j + 2]));
    }
    if (!ok) {
      Fail("joint '" + joint_name[j] + "' starts a ball joint that is not three hinges about x, y, z through one "
           "anchor on a chain of links, unlimited but for the first's cone limit (joint_limited 2, range 0..hi), "
           "with springref 0 (kernels/solver_tree.h)");
    }
  }
  for (size_t j = 0; j < nj; ++j) {
    const int part = joint_part[j];
    const bool after = j > 0 && (joint_part[j - 1] == part - 1 || (part == 1 && joint_part[j - 1] == 6));
    if (part > 1 && part != 4 && !after) {
      Fail("joint '" + joint_name[j] + "' is a ball's or free joint's part without the ones before it");
    }
    if (part == 1 && j > 0 && joint_part[j - 1] == 6 && joint_parent[j] != joint_body[j - 1]) {
      Fail("joint '" + joint_name[j] + "' does not hang from its floating base's slides");
    }
  }
  for (int e = 0; e < nequality(); ++e) {
    if (equality_type[e] == kEqualityConnect || equality_type[e] == kEqualityWeld) {
      const std::string kind = equality_type[e] == kEqualityWeld ? "weld '" : "connect '";
      int b1 = equality_body[2 * e], b2 = equality_body[2 * e + 1];
      if (b1 < 0 || b1 >= static_cast<int>(nb) || b2 < 0 || b2 >= static_cast<int>(nb) || b1 == b2 ||
          !(body_dynamic[b1] || (b2 > 0 && body_dynamic[b2]))) {
        throw ModelEntityError(Entity::kEquality, e, kind + equality_name[e] +
                               "' must join two different bodies, at least one of them moving");
      }
      continue;
    }
    if (equality_type[e] != kEqualityJoint) {
      throw ModelEntityError(Entity::kEquality, e, "equality '" + equality_name[e] + "' has unknown type " +
                             std::to_string(equality_type[e]));
    }
    int j1 = equality_joint[2 * e], j2 = equality_joint[2 * e + 1];
    if (!axial(j1) || !(j2 == -1 || axial(j2)) || j1 == j2) {
      throw ModelEntityError(Entity::kEquality, e, "equality " + std::to_string(e) + " '" + equality_name[e] +
           "' must couple two different hinge or slide joints (joint2 may be absent)");
    }
  }
  for (int t = 0; t < ntendon(); ++t) {
    int first = tendon_wrap[2 * t], count = tendon_wrap[2 * t + 1];
    if (first < 0 || count < 1 || first + count > nwrap()) {
      throw ModelEntityError(Entity::kTendon, t, "tendon '" + tendon_name[t] + "' has no joint terms (tendon_wrap " +
                             std::to_string(first) + " " + std::to_string(count) + ")");
    }
    for (int w = first; w < first + count; ++w) {
      if (!axial(wrap_joint[w])) {
        throw ModelEntityError(Entity::kTendon, t, "tendon '" + tendon_name[t] + "' names a joint that is not a hinge or slide");
      }
      for (int v = first; v < w; ++v) {
        if (wrap_joint[v] == wrap_joint[w]) {
          throw ModelEntityError(Entity::kTendon, t, "tendon '" + tendon_name[t] + "' names joint '" +
                                                         joint_name[wrap_joint[w]] + "' twice");
        }
      }
    }
  }
  for (size_t i = 0; i < na; ++i) {
    int id = actuator_trnid[i];
    int limit = actuator_trntype[i] == kTransmissionJoint    ? static_cast<int>(nj)
                : actuator_trntype[i] == kTransmissionTendon ? ntendon()
                                                             : static_cast<int>(ns);
    if (id < 0 || id >= limit) Fail("actuator '" + actuator_name[i] + "' refers to a missing joint, tendon or site");
    if (actuator_trntype[i] == kTransmissionJoint) {
      int jt = joint_type[id];
      if ((jt != kJointHinge && jt != kJointSlide) || joint_part[id] != 0) {
        Fail("actuator '" + actuator_name[i] + "' drives joint '" + joint_name[id] + "', which is not a hinge or slide");
      }
    }
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
  for (size_t g = 0; g < ng; ++g) {
    if (geom_body[g] < 0 || geom_body[g] >= static_cast<int>(nb)) Fail("geom " + std::to_string(g) + " has no body");
  }

  // --- derived options ---
  double ratio = 1.0 / (static_cast<double>(control_hz) * timestep);
  steps_per_control = static_cast<int>(std::lround(ratio));
  if (steps_per_control < 1 || std::abs(ratio - steps_per_control) > 1e-4 * ratio) {
    Fail("control period 1/" + std::to_string(control_hz) + " s is not a whole number of timesteps (" +
         std::to_string(timestep) + " s)");
  }
  // the action ring buffer: the actions of the last max_latency_steps control steps and this one,
  // plus one older where a delay of part of a control period (latency_timesteps) can reach it
  latency_capacity = max_latency_steps + (steps_per_control > 1 ? 2 : 1);

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
    if (joint_limited[j] == 2 && !(joint_part[j] == 1 && !JointIsFreePart(j))) {
      Fail("joint '" + joint_name[j] + "': joint_limited 2 (a cone limit) is for a ball's first hinge only");
    }
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
  // the massless links between the joints of one MJCF body move only in an articulated tree (in
  // maximal coordinates a body needs mass)
  for (size_t b = 1; b < nb; ++b) {
    if (!body_link[b] || body_tree[b] >= 0) continue;
    if (joint_part[body_joint[b]] != 0) {
      const bool free = JointIsFreePart(body_joint[b]);
      throw ModelEntityError(
          Entity::kJoint, body_joint[b],
          "joint '" + joint_name[body_joint[b]] + "' is part of a " + (free ? "floating base" : "ball joint") +
              ", which s2r steps only in an "
              "articulated tree below a fixed body, and this tree stays in maximal coordinates (s2r_reduce_trees "
              "= 0, more than " + std::to_string(kMaxTreeDofs) + " tree joints (a ball counts 3), a free body above "
              "it, or a body that is not on a hinge, slide, ball or weld hangs from it)");
    }
    throw ModelEntityError(
        Entity::kJoint, body_joint[b],
        "joint '" + joint_name[body_joint[b]] + "' is one of several joints of one body, which s2r steps only in "
            "an articulated tree, and this tree stays in maximal coordinates (s2r_reduce_trees = 0, more than " +
            std::to_string(kMaxTreeDofs) + " tree joints, or a body that is not on a hinge, slide or weld hangs "
            "from it)");
  }
  // couplings act on the joint space of articulated trees (kernels/solver_coupling.h)
  auto in_tree = [&](Entity kind, int index, const std::string& what, int j) {
    if (j < 0 || body_tree[joint_body[j]] >= 0) return;
    throw ModelEntityError(
        kind, index,
        what + ": joint '" + joint_name[j] + "' is stepped in maximal coordinates (s2r_reduce_trees = 0, more than " +
            std::to_string(kMaxTreeDofs) + " tree joints, or a body that is not on a hinge, slide or weld hangs "
            "from its tree); equality and tendon couplings act only on joints of reduced-coordinate trees");
  };
  for (int e = 0; e < nequality(); ++e) {
    const std::string what = "equality '" + equality_name[e] + "'";
    in_tree(Entity::kEquality, e, what, equality_joint[2 * e]);
    in_tree(Entity::kEquality, e, what, equality_joint[2 * e + 1]);
    if (equality_type[e] != kEqualityConnect && equality_type[e] != kEqualityWeld) continue;
    const std::string kind = equality_type[e] == kEqualityWeld ? "weld" : "connect";
    for (int k = 0; k < 2; ++k) {
      int b = equality_body[2 * e + k];
      if (!body_dynamic[b] || body_tree[b] >= 0) continue;
      throw ModelEntityError(
          Entity::kEquality, e,
          kind + " '" + equality_name[e] + "': body '" + body_name[b] + "' is not a body of a reduced-coordinate tree "
              "(a free body, s2r_reduce_trees = 0, more than " + std::to_string(kMaxTreeDofs) +
              " tree joints, or a body that is not on a hinge, slide or weld hangs from its tree); a " + kind +
              " joins bodies of articulated trees or fixed bodies");
    }
  }
  for (size_t j = 0; j < nj; ++j) {
    if (joint_stiffness[j] == Real(0)) continue;
    if (joint_type[j] != kJointHinge && joint_type[j] != kJointSlide) {
      throw ModelEntityError(Entity::kJoint, static_cast<int>(j), "joint '" + joint_name[j] +
                             "' has a stiffness but is not a hinge or slide");
    }
    if (body_tree[joint_body[j]] < 0) {
      throw ModelEntityError(
          Entity::kJoint, static_cast<int>(j),
          "joint '" + joint_name[j] + "' has a stiffness, which acts only on joints of reduced-coordinate trees; it is "
              "stepped in maximal coordinates (s2r_reduce_trees = 0, more than " + std::to_string(kMaxTreeDofs) +
              " tree joints, or a body that is not on a hinge, slide or weld hangs from its tree)");
    }
  }
  for (int t = 0; t < ntendon(); ++t) {
    for (int w = tendon_wrap[2 * t]; w < tendon_wrap[2 * t] + tendon_wrap[2 * t + 1]; ++w) {
      in_tree(Entity::kTendon, t, "tendon '" + tendon_name[t] + "'", wrap_joint[w]);
    }
  }

  // each joint's and tendon's implicit (position, velocity) actuators, in index order
  joint_actuator.assign(nj, -1);
  tendon_actuator.assign(ntendon(), -1);
  actuator_next.assign(actuator_type.size(), -1);
  for (int i = static_cast<int>(actuator_type.size()) - 1; i >= 0; --i) {
    if (actuator_type[i] == kActuatorMotor) continue;
    std::vector<int32_t>* first = actuator_trntype[i] == kTransmissionJoint    ? &joint_actuator
                                  : actuator_trntype[i] == kTransmissionTendon ? &tendon_actuator
                                                                               : nullptr;
    if (first == nullptr) continue;
    actuator_next[i] = (*first)[actuator_trnid[i]];
    (*first)[actuator_trnid[i]] = i;
  }

  if (auto_substeps) {
    const SubstepChoice choice = ChooseSubsteps();
    substeps = choice.contact;
    substeps_no_contact = choice.no_contact;
    substeps_soft_contact = choice.soft_contact;
    solve_passes = choice.passes;
    substeps_reason = choice.reason;
  } else {
    substeps_reason.clear();
  }
}

// The rule and its measurements: docs/physics.md, *Substeps*. Substeps buy two things: contact
// and maximal-coordinate joint rows converge over more soft-step passes, and the soft rows'
// stiffness cap (a quarter of the substep rate) rises. A step of a model stepped entirely in
// reduced coordinates, with no contact point and no coupling row, needs neither: its trees'
// smooth dynamics and axis rows are integrated per substep, and one substep at a 2 ms timestep
// tracks MuJoCo as closely as four (the UR5e: 3.88 vs 3.87 mrad, tests/python/test_arm_models.py).
Model::SubstepChoice Model::ChooseSubsteps() const {
  // the count the rule starts from is the default's, not `substeps` (which a previous Finalize of
  // this model may have set by the rule)
  const int substeps = kDefaultSubsteps;
  for (int j = 0; j < njoint(); ++j) {
    if (joint_type[j] == kJointFree) continue;
    int b = joint_body[j];
    if (body_tree[b] < 0 && body_reduced[b] < 0) {
      return {substeps, 0, 0, 1, "joint '" + joint_name[j] + "' is stepped in maximal coordinates: " +
                               std::to_string(substeps) + " substeps in every step"};
    }
  }
  // friction loss is a stick-slip row whose sticking converges over the substeps' passes: the
  // sysid of configs/scenes/test/linear_drive.xml (tests/python/test_sysid_mujoco.py) fitted its
  // damping 4.6 % off the truth at 1 substep, within 4 % at 4
  for (int j = 0; j < njoint(); ++j) {
    if (joint_type[j] != kJointFree && joint_frictionloss[j] > 0) {
      return {substeps, 0, 0, 1, "joint '" + joint_name[j] + "' has friction loss: " + std::to_string(substeps) +
                               " substeps in every step"};
    }
  }
  // Couplings converge over the solve passes like the joint rows they tie together. A loop closed
  // by a connect or weld (the Robotiq 2F-85's four-bars) takes 2 substeps in a step without
  // contact, not 1 (and 4 once, before stop 23): measured at 2 against 4, the 2F-85 closing and
  // opening 1.02 vs 1.04 mm off MuJoCo, on the UR5e 0.81 vs 0.69 mm, and the UR5e + 2F-85 steps
  // 1.67x as fast; at 1 the 2F-85 ran 0.8 mm off where 2 gives 0.3, and a welded four-bar near its
  // toggle 39 mrad where 2 give 22 (tests/python/test_robot_models.py, test_robotiq_2f85.py). A
  // joint equality or fixed tendon, linear in q, takes 1 substep with 2 solve passes instead:
  // the MJX Panda's gripper step 0.314 mm off MuJoCo (0.318 at 2 substeps), its fingers centring
  // a box 0.97 mm (1.65), the tendon gripper 0.244 mm (0.240); the MJX Panda steps 1.4x as fast.
  std::string loop, coupling;
  for (int e = 0; e < nequality() && loop.empty(); ++e) {
    if (equality_type[e] == kEqualityJoint) continue;
    loop = (equality_type[e] == kEqualityWeld ? "weld " : "connect ") +
           (equality_name[e].empty() ? "#" + std::to_string(e) : "'" + equality_name[e] + "'");
  }
  for (int e = 0; e < nequality() && coupling.empty(); ++e) {
    if (equality_type[e] != kEqualityJoint) continue;
    coupling = "joint equality " + (equality_name[e].empty() ? "#" + std::to_string(e) : "'" + equality_name[e] + "'");
  }
  if (coupling.empty() && ntendon() > 0) coupling = "tendon '" + tendon_name[0] + "'";
  // one substep must not cap the joint rows' stiffness (arm7's arm alone at 0.01 s: 20 mm from
  // 16 substeps after a 2 s swing at 1, 2.9 mm at 4) -- in a model that has joint rows
  bool joint_rows = nequality() > 0;
  for (int j = 0; j < njoint(); ++j) joint_rows = joint_rows || joint_type[j] != kJointFree;
  if (joint_rows && joint_hertz[0] * timestep > 0.25) {
    char buf[200];
    std::snprintf(buf, sizeof(buf),
                  "timestep %g s: one substep would cap s2r_joint_hertz %g Hz at %g Hz: %d substeps in every step",
                  double(timestep), double(joint_hertz[0]), 0.25 / double(timestep), int(substeps));
    return {substeps, 0, 0, 1, buf};
  }
  // nor a position servo stiffer than that: its frequency on the joint, sqrt(kp g^2 / I) with I
  // the joint's armature plus the least its link can offer (a hinge: the link's smallest principal
  // moment; a slide: its mass) -- a bound from above, exact for a last link. The Kinova Gen3's
  // wrist (kp 500 on a 0.5 kg bracelet, no armature: ~150 Hz) ran 217 mrad off MuJoCo in a
  // zero-control swing at 1 substep, 47 at 4; the UR5e's servos (armature 0.1) stay below 30 Hz.
  for (int i = 0; i < nactuator(); ++i) {
    if (actuator_type[i] != kActuatorPosition || actuator_trntype[i] != kTransmissionJoint) continue;
    const int j = actuator_trnid[i], b = joint_body[j];
    const double g = actuator_gear[6 * i];
    const double link = joint_type[j] == kJointSlide
                            ? double(body_mass[b])
                            : std::fmin(double(body_inertia[3 * b]),
                                        std::fmin(double(body_inertia[3 * b + 1]), double(body_inertia[3 * b + 2])));
    const double inertia = double(joint_armature[j]) + link;
    const double hertz = inertia > 0 ? std::sqrt(double(actuator_kp[i]) * g * g / inertia) / (2 * M_PI) : INFINITY;
    if (hertz * timestep > 0.25) {
      char buf[240];
      std::snprintf(buf, sizeof(buf),
                    "actuator '%s': a servo of up to %.0f Hz on joint '%s' needs more than one substep at "
                    "timestep %g s: %d substeps in every step",
                    actuator_name[i].c_str(), hertz, joint_name[j].c_str(), double(timestep), int(substeps));
      return {substeps, 0, 0, 1, buf};
    }
  }
  const int free_n = loop.empty() ? 1 : 2;
  const int passes = loop.empty() && !coupling.empty() ? 2 : 1;
  // A step with contact points: substeps of at most kContactSubstepSeconds (2.5 ms, the bench
  // scenes' 0.01 s step in 4), and no fewer than a step without. Resting and stacked contacts
  // converge over the soft step's passes per second of simulated time, not per step: at a 2 ms
  // timestep one pass per step is more than the bench scenes' 400 per second, and the contact
  // stiffness cap (a quarter of the substep rate, 125 Hz) stays above the 120 Hz default.
  // Measured against MuJoCo at 1 or 2 substeps against 4 (docs/physics.md, *Substeps*).
  // And no fewer than keep the stiffest contact below the cap: the scene's s2r_contact_hertz and
  // any geom's own (MJCF solref / solimp: the Robotiq 2F-85's pads, 400 Hz, need 4 at 2 ms; at 2
  // their box slipped 1.3 mm in the grip, 0.1 mm at 4).
  double hertz = double(contact_hertz[0]);
  for (size_t p = 0; p < pair_geom.size(); ++p) {
    hertz = std::fmax(hertz, double(geom_contact_hertz[pair_geom[p]]));
  }
  const int by_time = static_cast<int>(std::ceil(double(timestep) / kContactSubstepSeconds - 1e-9));
  auto by_hertz = [&](double hz) { return static_cast<int>(std::ceil(4 * hz * double(timestep) - 1e-9)); };
  const int contact_n = std::min(substeps, std::max({free_n, by_time, by_hertz(hertz)}));
  // A step whose contact points all take the scene's frequency (no pair of a stiffer geom, e.g.
  // the MJX Panda's boxes resting on a table while its 226 Hz finger pads touch nothing) needs only
  // what the scene's frequency needs; PhysicsStep checks its points' geoms (SubstepsOfStep)
  const int scene_n = std::min(substeps, std::max({free_n, by_time, by_hertz(double(contact_hertz[0]))}));
  const int soft_n = scene_n < contact_n ? scene_n : 0;
  char hz_text[240];
  std::snprintf(hz_text, sizeof(hz_text), " in a step with contact points (substeps of at most 2.5 ms, and a quarter "
                "of their rate above the stiffest contact's %.0f Hz)", hertz);
  std::string contact = npair() == 0 ? std::string("no geom pair can touch") : std::to_string(contact_n) + hz_text;
  if (npair() > 0 && soft_n > 0) {
    std::snprintf(hz_text, sizeof(hz_text), ", %d in one whose points all take the scene's %.0f Hz", soft_n,
                  double(contact_hertz[0]));
    contact += hz_text;
  }
  const std::string eligible = "(every joint in reduced coordinates, no friction loss, joint rows and servos below a "
                               "quarter of the step rate); ";
  if (!loop.empty()) {
    return {contact_n, free_n, soft_n, 1,
            loop + " closes a loop: 2 substeps in a step without contact points " + eligible + contact};
  }
  if (!coupling.empty()) {
    return {contact_n, free_n, soft_n, passes,
            coupling + " couples joints: 1 substep with 2 solve passes in a step without contact points " +
                eligible + contact};
  }
  return {contact_n, free_n, soft_n, 1,
          "1 substep in a step without contact points (every joint in reduced coordinates, no "
          "equality, tendon or friction loss, joint rows and servos below a quarter of the step rate); " + contact};
}

// Trees in reduced coordinates. A tree is a maximal set of bodies on hinge or slide joints below a
// fixed parent (the world or a fixed body), each body's parent fixed or in the same tree, with
// nothing else (a ball or free body) hanging from it; a welded body rides in the tree of its parent.
// A tree of slides only is a slide tree
// (solver_reduced.h: constant mass matrix), kept while the slide trees together fit
// kMaxReducedBodies (one with a welded body stays maximal); a tree with a hinge is an articulated tree (solver_tree.h), kept while the
// articulated trees together fit kMaxTreeDofs. What does not fit, or what reduce_trees /
// reduce_slide_trees turn off, stays in maximal coordinates.
void Model::FindSlideTrees() {
  const int nb = nbody();
  body_reduced.assign(nb, -1);
  reduced_body.clear();
  reduced_parent.clear();
  body_tree.assign(nb, -1);
  tree_body.clear();
  tree_parent.clear();
  if (!reduce_trees) return;
  std::vector<int> member(nb, 0), root(nb, -1);
  for (int b = 1; b < nb; ++b) {
    int j = body_joint[b], p = body_parent[b];
    bool fixed_parent = p == 0 || !body_dynamic[p];
    bool axial = j >= 0 && (joint_type[j] == kJointSlide || joint_type[j] == kJointHinge);
    // a welded body belongs to the tree it hangs from (an arm's hand on its last link)
    bool welded = j >= 0 && joint_type[j] == kJointWeld && !fixed_parent && member[p];
    member[b] = body_dynamic[b] && ((axial && (fixed_parent || member[p])) || welded);
    if (member[b]) root[b] = fixed_parent ? b : root[p];
  }
  // trees whose joints an equality or a fixed tendon couples, whose bodies a connect joins, or
  // whose joints have a spring are stepped as articulated trees (solver_coupling.h and the
  // springs act in their joint space), slides only or not
  std::vector<int> coupled(nb, 0);
  auto mark = [&](int j) {
    if (j >= 0 && member[joint_body[j]]) coupled[root[joint_body[j]]] = 1;
  };
  for (int e = 0; e < nequality(); ++e) {
    mark(equality_joint[2 * e]);
    mark(equality_joint[2 * e + 1]);
    for (int k = 0; k < 2; ++k) {
      int b = equality_body[2 * e + k];
      if (b > 0 && member[b]) coupled[root[b]] = 1;  // a connect
    }
  }
  for (int w = 0; w < nwrap(); ++w) mark(wrap_joint[w]);
  for (int b = 1; b < nb; ++b) {  // a massless link between two joints of one body
    if (body_link[b] && member[b]) coupled[root[b]] = 1;
  }
  for (int j = 0; j < njoint(); ++j) {
    if (joint_stiffness[j] != Real(0)) mark(j);  // springs act in joint space
  }
  std::vector<int> bad(nb, 0), size(nb, 0), hinge(nb, 0), weld(nb, 0);
  for (int b = 1; b < nb; ++b) {
    int p = body_parent[b];
    if (!member[b] && p > 0 && member[p]) bad[root[p]] = 1;  // something else hangs from the tree
    if (member[b]) {
      ++size[root[b]];
      if (joint_type[body_joint[b]] == kJointHinge || coupled[root[b]]) hinge[root[b]] = 1;
      if (joint_type[body_joint[b]] == kJointWeld) weld[root[b]] = 1;
    }
  }
  // whole trees, in order of their roots, while they fit
  std::vector<int> take(nb, 0);  // 1: slide tree, 2: articulated tree
  int slide_total = 0, tree_total = 0;
  for (int b = 1; b < nb; ++b) {
    if (root[b] != b || bad[b]) continue;
    if (!hinge[b] && weld[b]) continue;  // slides with a welded body: maximal, as before
    if (!hinge[b]) {
      if (!reduce_slide_trees || slide_total + size[b] > kMaxReducedBodies) continue;
      take[b] = 1;
      slide_total += size[b];
    } else {
      if (tree_total + size[b] > kMaxTreeDofs) continue;
      take[b] = 2;
      tree_total += size[b];
    }
  }
  for (int b = 1; b < nb; ++b) {
    if (!member[b] || !take[root[b]]) continue;
    if (take[root[b]] == 1) {
      body_reduced[b] = static_cast<int32_t>(reduced_body.size());
      reduced_body.push_back(b);
      reduced_parent.push_back(root[b] == b ? -1 : body_reduced[body_parent[b]]);
    } else {
      body_tree[b] = static_cast<int32_t>(tree_body.size());
      tree_body.push_back(b);
      tree_parent.push_back(root[b] == b ? -1 : body_tree[body_parent[b]]);
    }
  }
}

ModelView Model::View() const {
  ModelView v;
  v.nbody = nbody();
  v.ngeom = ngeom();
  v.njoint = njoint();
  v.nactuator = nactuator();
  v.nsite = nsite();
  v.npair = npair();
  v.nreduced = nreduced();
  v.nhullvert = nhullvert();
  v.ntree = ntree();
  v.nequality = nequality();
  v.ntendon = ntendon();
  v.nwrap = nwrap();
  v.contact_capacity = contact_capacity();
#define S2R_VIEW_OPTION(name, ...) v.name = name;
  S2R_MODEL_OPTIONS(S2R_VIEW_OPTION)
#undef S2R_VIEW_OPTION
  v.steps_per_control = steps_per_control;
  v.latency_capacity = latency_capacity;
  // an array the model does not have (yet) is a null pointer (body_reduced before Finalize)
#define S2R_VIEW_TOPOLOGY(name, ...) v.name = name.empty() ? nullptr : name.data();
  S2R_MODEL_TOPOLOGY(S2R_VIEW_TOPOLOGY)
#undef S2R_VIEW_TOPOLOGY
#define S2R_VIEW_PARAM(name, type, ...) v.name = Batched<type>{name.data(), 0};
  S2R_MODEL_PARAMS(S2R_VIEW_PARAM)
#undef S2R_VIEW_PARAM
  return v;
}

}  // namespace s2r
