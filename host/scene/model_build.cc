// Building a Model in code: the Add* helpers the MJCF loader and the tests call, and the mass
// properties of bodies made of geoms.
#include <algorithm>
#include <cmath>

#include <Eigen/Dense>

#include "host/scene/model.h"
#include "kernels/math_types.h"

namespace s2r {
namespace {

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

// every per-world parameter of entity kind e gets one more entity, at the list's defaults
void AppendDefaults(Model* m, Entity e) {
  ForEachParam(*m, [e](FieldId id, auto& values) {
    const FieldInfo& f = FieldInfoOf(id);
    if (f.entity != e) return;
    using T = typename std::remove_reference_t<decltype(values)>::value_type;
    for (int k = 0; k < f.per; ++k) values.push_back(static_cast<T>(f.defaults[k]));
  });
}

// entity id's values of a field with N per entity
template <size_t N>
void Set(std::vector<Real>* v, int id, const std::array<Real, N>& a) {
  for (size_t k = 0; k < N; ++k) (*v)[N * id + k] = a[k];
}

}  // namespace

int AddBody(Model* m, const std::string& name, int parent, const std::array<Real, 3>& pos,
            const std::array<Real, 4>& quat) {
  int id = m->nbody();
  m->body_name.push_back(name);
  m->body_parent.push_back(parent);
  m->body_joint.push_back(-1);
  m->body_dynamic.push_back(0);
  m->body_link.push_back(0);
  AppendDefaults(m, Entity::kBody);
  Set(&m->body_pos0, id, pos);
  Quat q = ToQuat(quat);
  Set(&m->body_quat0, id, std::array<Real, 4>{q.w, q.x, q.y, q.z});
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
  m->geom_hull.push_back(-1);  // a mesh geom's hull is attached by SetGeomHull
  m->geom_hull.push_back(0);
  AppendDefaults(m, Entity::kGeom);
  Set(&m->geom_size, id, size);
  Set(&m->geom_pos, id, pos);
  Quat q = ToQuat(quat);
  Set(&m->geom_quat, id, std::array<Real, 4>{q.w, q.x, q.y, q.z});
  m->geom_friction[id] = friction;
  return id;
}

void SetGeomHull(Model* m, int geom, const std::vector<std::array<Real, 3>>& vertices) {
  m->geom_hull[2 * geom] = m->nhullvert();
  m->geom_hull[2 * geom + 1] = static_cast<int32_t>(vertices.size());
  double radius = 0;
  for (const std::array<Real, 3>& v : vertices) {
    m->hull_vert.insert(m->hull_vert.end(), v.begin(), v.end());
    radius = std::max(radius, std::sqrt(double(v[0]) * v[0] + double(v[1]) * v[1] + double(v[2]) * v[2]));
  }
  m->geom_size[3 * geom] = static_cast<Real>(radius);
}

int AddJoint(Model* m, const std::string& name, int body, JointType type,
             const std::array<Real, 3>& pos, const std::array<Real, 3>& axis) {
  int id = m->njoint();
  m->joint_name.push_back(name);
  m->joint_type.push_back(type);
  m->joint_body.push_back(body);
  m->joint_parent.push_back(m->body_parent[body]);
  m->joint_limited.push_back(0);
  m->joint_part.push_back(0);
  Append(&m->joint_pos_child, pos);
  Vec3 a = Normalize(Vec3{axis[0], axis[1], axis[2]});
  Append(&m->joint_axis_child, std::array<Real, 3>{a.x, a.y, a.z});
  AppendDefaults(m, Entity::kJoint);
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
  AppendDefaults(m, Entity::kActuator);
  // MJCF's position and velocity shortcuts default to a unit gain
  m->actuator_kp[id] = type == kActuatorPosition ? 1 : 0;
  m->actuator_kv[id] = type == kActuatorVelocity ? 1 : 0;
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

int AddEqualityJoint(Model* m, const std::string& name, int joint1, int joint2) {
  int id = m->nequality();
  m->equality_name.push_back(name);
  m->equality_type.push_back(kEqualityJoint);
  m->equality_joint.push_back(joint1);
  m->equality_joint.push_back(joint2);
  m->equality_body.push_back(-1);
  m->equality_body.push_back(-1);
  m->equality_active.push_back(1);
  AppendDefaults(m, Entity::kEquality);
  return id;
}

int AddEqualityConnect(Model* m, const std::string& name, int body1, int body2,
                       const std::array<Real, 3>& anchor1, const std::array<Real, 3>& anchor2) {
  int id = m->nequality();
  m->equality_name.push_back(name);
  m->equality_type.push_back(kEqualityConnect);
  m->equality_joint.push_back(-1);
  m->equality_joint.push_back(-1);
  m->equality_body.push_back(body1);
  m->equality_body.push_back(body2);
  m->equality_active.push_back(1);
  AppendDefaults(m, Entity::kEquality);
  for (int k = 0; k < 3; ++k) {
    m->equality_anchor[6 * id + k] = anchor1[k];
    m->equality_anchor[6 * id + 3 + k] = anchor2[k];
  }
  return id;
}

int AddEqualityWeld(Model* m, const std::string& name, int body1, int body2,
                    const std::array<Real, 3>& anchor1, const std::array<Real, 3>& anchor2,
                    const std::array<Real, 4>& relquat, Real torquescale) {
  int id = AddEqualityConnect(m, name, body1, body2, anchor1, anchor2);
  m->equality_type[id] = kEqualityWeld;
  for (int k = 0; k < 4; ++k) m->equality_relquat[4 * id + k] = relquat[k];
  m->equality_torquescale[id] = torquescale;
  return id;
}

int AddFixedTendon(Model* m, const std::string& name,
                   const std::vector<std::pair<int, Real>>& terms) {
  int id = m->ntendon();
  m->tendon_name.push_back(name);
  m->tendon_wrap.push_back(m->nwrap());
  m->tendon_wrap.push_back(static_cast<int32_t>(terms.size()));
  for (const auto& t : terms) {
    m->wrap_joint.push_back(t.first);
    m->wrap_coef.push_back(t.second);
  }
  AppendDefaults(m, Entity::kTendon);
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
      case kGeomCylinder: volume = M_PI * r * r * 2.0 * s[1]; break;
      case kGeomEllipsoid: volume = 4.0 / 3.0 * M_PI * s[0] * s[1] * s[2]; break;
      case kGeomMesh: volume = spec.volume; break;
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
      case kGeomCylinder: {
        double h = s[1];
        double lateral = mass * (3.0 * r * r + 4.0 * h * h) / 12.0;
        d = Eigen::Vector3d(lateral, lateral, mass * r * r / 2.0);
        break;
      }
      case kGeomEllipsoid: {
        double a2 = s[0] * s[0], b2 = s[1] * s[1], c2 = s[2] * s[2];
        d = Eigen::Vector3d(mass * (b2 + c2) / 5.0, mass * (a2 + c2) / 5.0, mass * (a2 + b2) / 5.0);
        break;
      }
      case kGeomMesh:
        d = density * Eigen::Vector3d(spec.unit_inertia[0], spec.unit_inertia[1], spec.unit_inertia[2]);
        break;
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

}  // namespace s2r
