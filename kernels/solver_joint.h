// Joints and joint-space actuators as maximal-coordinate constraint rows.
//
// Every body keeps its own 6-DOF state; a joint removes the DOFs it locks with rows solved like
// contacts (soft with bias in the solve pass, rigid in the relax pass):
//   hinge  3 linear (anchor points coincide) + 2 angular (axes stay parallel)
//   slide  2 linear (perpendicular to the axis) + 3 angular (relative rotation fixed)
//   weld   3 linear + 3 angular
// The joint's free axis carries the rows that act along the joint coordinate q:
//   limits (unilateral, speculative when not yet reached), damping (implicit, gamma = 1/(c h)),
//   friction loss (|impulse| <= f h), armature (added inertia a: impulse = -a (qdot - qdot_0)),
//   and position / velocity actuators as implicit spring-dampers (solver_soft.h), clamped to the
//   force range. Motors and site transmissions apply explicit forces.
// Linear rows use the child's anchor as the point of application on both bodies, so the row
// velocity is the exact time derivative of the anchor gap along the row direction.
#pragma once

#include "kernels/solver_body.h"
#include "kernels/solver_reduced.h"
#include "kernels/solver_soft.h"

namespace s2r {

// One constraint row: angular rows read n . (w_b - w_a); linear rows read
// n . (v_b + w_b x rb - v_a - w_a x ra).
struct Row {
  Vec3 n;
  Vec3 ra, rb;
  bool angular;
};

S2R_HD Real RowVelocity(const Row& r, const SolverBody& a, const SolverBody& b) {
  if (r.angular) return Dot(r.n, b.w - a.w);
  return Dot(r.n, PointVelocity(b, r.rb) - PointVelocity(a, r.ra));
}
S2R_HD void RowApply(const Row& r, SolverBody* a, SolverBody* b, Real impulse) {
  if (r.angular) {
    ApplyAngularImpulse(a, -impulse * r.n);
    ApplyAngularImpulse(b, impulse * r.n);
  } else {
    ApplyImpulse(a, r.ra, -impulse * r.n);
    ApplyImpulse(b, r.rb, impulse * r.n);
  }
}

// A joint's geometry in the bodies' current configuration.
struct JointFrame {
  Vec3 ra;      // parent COM to the child's anchor, world, m
  Vec3 rb;      // child COM to the child's anchor, world, m
  Vec3 gap;     // child anchor minus parent anchor, world, m
  Vec3 axis;    // joint axis carried by the parent, world
  Vec3 t1, t2;  // completes axis to an orthonormal basis (fixed in the parent's frame)
  Vec3 rot_err; // rotation vector from the reference relative orientation to the current one
  Vec3 hinge_err;  // axis_parent x axis_child (hinge alignment error)
  Real q;       // joint coordinate: rad (hinge) or m (slide)
};

// The pieces of a joint's frame that its position needs, shared by ComputeJointFrame and
// JointPosition (so both give the same bits): the child's anchor offset from its COM, the gap
// between the anchors, the parent's reference rotation, and the hinge angle.
S2R_HD Vec3 JointChildArm(const ModelView& m, int j, const SolverBody& b) {
  return Rotate(b.rot, LoadVec3(m.joint_pos_child + 3 * j) - b.ipos);
}
S2R_HD Vec3 JointGap(const ModelView& m, int j, const SolverBody& a, const SolverBody& b, Vec3 rb) {
  Vec3 pa = a.com + Rotate(a.rot, LoadVec3(m.joint_pos_parent + 3 * j) - a.ipos);
  return (b.com + rb) - pa;
}
S2R_HD Quat JointTarget(const ModelView& m, int j, const SolverBody& a) {
  return a.rot * LoadQuat(m.joint_qrel0 + 4 * j);
}
S2R_HD Real HingeAngle(const ModelView& m, int j, Quat target, const SolverBody& b) {
  // angle of the child's rotation about its own axis relative to the reference
  Quat rel = Conjugate(target) * b.rot;
  if (rel.w < Real(0)) rel = Quat{-rel.w, -rel.x, -rel.y, -rel.z};
  Vec3 axis_c = LoadVec3(m.joint_axis_child + 3 * j);
  return Real(2) * Atan2(Dot(Vec3{rel.x, rel.y, rel.z}, axis_c), rel.w);
}

// A hinge's or slide's coordinate alone: ComputeJointFrame(m, j, a, b).q, bit for bit, without
// the lock basis and errors (the step's end stores it for every maximal or slide-tree joint).
S2R_HD Real JointPosition(const ModelView& m, int j, const SolverBody& a, const SolverBody& b) {
  if (m.joint_type[j] == kJointHinge) return HingeAngle(m, j, JointTarget(m, j, a), b);
  Vec3 gap = JointGap(m, j, a, b, JointChildArm(m, j, b));
  return Dot(gap, Rotate(a.rot, LoadVec3(m.joint_axis_parent + 3 * j)));
}

S2R_HD JointFrame ComputeJointFrame(const ModelView& m, int j, const SolverBody& a,
                                    const SolverBody& b) {
  JointFrame f;
  f.rb = JointChildArm(m, j, b);
  Vec3 pb = b.com + f.rb;
  f.gap = JointGap(m, j, a, b, f.rb);
  f.ra = pb - a.com;
  // the basis is built in the parent's frame and carried with it: a world-frame construction
  // (OrthonormalBasis of the world axis) jumps when the axis crosses its branch plane, and the
  // warm-started lock impulses, stored per basis vector, would then push the wrong way
  Vec3 axis_local = LoadVec3(m.joint_axis_parent + 3 * j);
  Vec3 t1_local, t2_local;
  OrthonormalBasis(axis_local, &t1_local, &t2_local);
  f.axis = Rotate(a.rot, axis_local);
  f.t1 = Rotate(a.rot, t1_local);
  f.t2 = Rotate(a.rot, t2_local);
  Quat target = JointTarget(m, j, a);
  if (m.joint_type[j] != kJointHinge) {
    Quat err = b.rot * Conjugate(target);
    if (err.w < Real(0)) err = Quat{-err.w, -err.x, -err.y, -err.z};
    f.rot_err = Vec3{Real(2) * err.x, Real(2) * err.y, Real(2) * err.z};
    f.hinge_err = Vec3{0, 0, 0};
  } else {
    f.rot_err = Vec3{0, 0, 0};
    f.hinge_err = Cross(f.axis, Rotate(b.rot, LoadVec3(m.joint_axis_child + 3 * j)));
  }
  if (m.joint_type[j] == kJointHinge) {
    f.q = HingeAngle(m, j, target, b);
  } else {
    f.q = Dot(f.gap, f.axis);
  }
  return f;
}

// the row along the joint's free axis (hinge: angular, slide: linear); weld/free: none
S2R_HD Row AxisRow(const ModelView& m, int j, const JointFrame& f) {
  return Row{f.axis, f.ra, f.rb, m.joint_type[j] == kJointHinge};
}

// number of lock rows and the k-th one with its position error C
S2R_HD int LockRowCount(int type) {
  switch (type) {
    case kJointHinge: return 5;
    case kJointSlide: return 5;
    case kJointWeld: return 6;
    default: return 0;
  }
}
S2R_HD Row LockRow(int type, const JointFrame& f, int k, Real* c, int* slot) {
  Vec3 e[3] = {Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}};
  const Vec3& t1 = f.t1;
  const Vec3& t2 = f.t2;
  if (type == kJointHinge) {
    if (k < 3) { *c = Component(f.gap, k); *slot = kSlotLinear + k; return Row{e[k], f.ra, f.rb, false}; }
    Vec3 t = k == 3 ? t1 : t2;
    *c = Dot(f.hinge_err, t);
    *slot = kSlotAngular + (k - 3);
    return Row{t, f.ra, f.rb, true};
  }
  if (type == kJointSlide) {
    if (k < 2) {
      Vec3 t = k == 0 ? t1 : t2;
      *c = Dot(f.gap, t);
      *slot = kSlotLinear + k;
      return Row{t, f.ra, f.rb, false};
    }
    *c = Component(f.rot_err, k - 2);
    *slot = kSlotAngular + (k - 2);
    return Row{e[k - 2], f.ra, f.rb, true};
  }
  // weld
  if (k < 3) { *c = Component(f.gap, k); *slot = kSlotLinear + k; return Row{e[k], f.ra, f.rb, false}; }
  *c = Component(f.rot_err, k - 3);
  *slot = kSlotAngular + (k - 3);
  return Row{e[k - 3], f.ra, f.rb, true};
}

// a joint of a reduced tree (solver_reduced.h, solver_tree.h) has no lock rows: its tree cannot
// leave the axis
S2R_HD bool JointIsReduced(const ModelView& m, int j) {
  return (m.body_reduced != nullptr && m.body_reduced[m.joint_body[j]] >= 0) ||
         (m.body_tree != nullptr && m.body_tree[m.joint_body[j]] >= 0);
}
S2R_HD int JointLockRows(const ModelView& m, int j) {
  return JointIsReduced(m, j) ? 0 : LockRowCount(m.joint_type[j]);
}
// Rows of joint j in the world's block when the locks are solved together (SolveLocksTogether):
// its lock rows, then for a hinge or slide its armature row -- the rotor's inertia as a soft row
// along the axis (compliance 1 / armature, target the joint velocity at the substep start), solved
// with the locks so that the whole chain feels every rotor at once. A world whose armature is 0
// keeps the row, inactive.
S2R_HD bool JointHasArmatureRow(const ModelView& m, int j) {
  int type = m.joint_type[j];
  return (type == kJointHinge || type == kJointSlide) && !JointIsReduced(m, j);
}
S2R_HD int JointBlockRows(const ModelView& m, int j) {
  return JointLockRows(m, j) + (JointHasArmatureRow(m, j) ? 1 : 0);
}
// the k-th block row of joint j: LockRow, or past the lock rows the armature row (c = 0)
S2R_HD Row BlockRow(const ModelView& m, int j, const JointFrame& f, int k, Real* c, int* slot) {
  int type = m.joint_type[j];
  if (k < LockRowCount(type)) return LockRow(type, f, k, c, slot);
  *c = Real(0);
  *slot = kSlotArmature;
  return Row{f.axis, f.ra, f.rb, type == kJointHinge};
}

constexpr int kMaxLockRows = 6;
// per-joint values fixed at the step start (PrepareJoint): the lock block's Cholesky factor, the
// axis row's inverse effective mass, and how a unit axis impulse changes the anchor's relative
// linear and angular velocity
constexpr int kPrepAxisInvMass = kMaxLockRows * kMaxLockRows;
constexpr int kPrepAxisDv = kPrepAxisInvMass + 1;
constexpr int kPrepAxisDw = kPrepAxisDv + 3;
constexpr int kPrepAxisInvMassLocked = kPrepAxisDw + 3;  // through the world's lock block
constexpr int kJointFactorSize = kPrepAxisInvMassLocked + 1;

// velocity change of both bodies per unit impulse along a row
struct RowResponse {
  Vec3 dva, dwa, dvb, dwb;
};
S2R_HD RowResponse UnitImpulseResponse(const Row& r, const SolverBody& a, const SolverBody& b) {
  RowResponse out;
  if (r.angular) {
    out.dva = Vec3{0, 0, 0};
    out.dvb = Vec3{0, 0, 0};
    out.dwa = -(a.inv_inertia * r.n);
    out.dwb = b.inv_inertia * r.n;
  } else {
    out.dva = -a.inv_mass * r.n;
    out.dvb = b.inv_mass * r.n;
    out.dwa = -(a.inv_inertia * Cross(r.ra, r.n));
    out.dwb = b.inv_inertia * Cross(r.rb, r.n);
  }
  return out;
}
S2R_HD Real RowVelocityOfResponse(const Row& r, const RowResponse& d) {
  if (r.angular) return Dot(r.n, d.dwb - d.dwa);
  return Dot(r.n, (d.dvb + Cross(d.dwb, r.rb)) - (d.dva + Cross(d.dwa, r.ra)));
}

// Cholesky factor k = L L^T in place (L in the lower triangle) of a symmetric positive
// (semi-)definite n x n block, with a relative diagonal regularization so a rank-deficient block
// (a joint whose rows the two bodies cannot all resolve) still factors. false: empty block.
S2R_HD bool CholeskyFactor(Real* k, int n) {
  Real trace = Real(0);
  for (int i = 0; i < n; ++i) trace += k[i * n + i];
  if (!(trace > Real(0))) return false;
  Real eps = trace * Real(1e-6) / Real(n);
  for (int i = 0; i < n; ++i) k[i * n + i] += eps;
  for (int j = 0; j < n; ++j) {
    Real d = k[j * n + j];
    for (int p = 0; p < j; ++p) d -= k[j * n + p] * k[j * n + p];
    if (!(d > Real(0))) return false;
    d = Sqrt(d);
    k[j * n + j] = d;
    for (int i = j + 1; i < n; ++i) {
      Real v = k[i * n + j];
      for (int p = 0; p < j; ++p) v -= k[i * n + p] * k[j * n + p];
      k[i * n + j] = v / d;
    }
  }
  return true;
}
// x = (L L^T)^-1 rhs
S2R_HD void CholeskySolve(const Real* l, const Real* rhs, int n, Real* x) {
  for (int i = 0; i < n; ++i) {
    Real v = rhs[i];
    for (int p = 0; p < i; ++p) v -= l[i * n + p] * x[p];
    x[i] = v / l[i * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    Real v = x[i];
    for (int p = i + 1; p < n; ++p) v -= l[p * n + i] * x[p];
    x[i] = v / l[i * n + i];
  }
}

// Envelope (profile) Cholesky: row i of K is zero left of column first[i], and so is row i of its
// factor, so the inner products start at max(first[i], first[j]). A chain of joints ordered from
// the root has a narrow envelope; this turns the O(R^3) dense factor into about O(R b^2).
S2R_HD bool EnvelopeCholeskyFactor(Real* k, int n, Real* first) {
  Real trace = Real(0);
  for (int i = 0; i < n; ++i) trace += k[i * n + i];
  if (!(trace > Real(0))) return false;
  Real eps = trace * Real(1e-6) / Real(n);
  for (int i = 0; i < n; ++i) {
    k[i * n + i] += eps;
    int f = 0;
    while (f < i && k[i * n + f] == Real(0)) ++f;
    first[i] = Real(f);
  }
  for (int j = 0; j < n; ++j) {
    int fj = static_cast<int>(first[j]);
    Real d = k[j * n + j];
    for (int p = fj; p < j; ++p) d -= k[j * n + p] * k[j * n + p];
    if (!(d > Real(0))) return false;
    d = Sqrt(d);
    k[j * n + j] = d;
    Real inv = Real(1) / d;
    for (int i = j + 1; i < n; ++i) {
      int fi = static_cast<int>(first[i]);
      if (fi > j) continue;  // outside row i's envelope: stays zero
      Real v = k[i * n + j];
      for (int p = Max(fi, fj); p < j; ++p) v -= k[i * n + p] * k[j * n + p];
      k[i * n + j] = v * inv;
    }
  }
  return true;
}
S2R_HD void EnvelopeCholeskySolve(const Real* l, const Real* first, const Real* rhs, int n,
                                  Real* x) {
  for (int i = 0; i < n; ++i) {
    Real v = rhs[i];
    for (int p = static_cast<int>(first[i]); p < i; ++p) v -= l[i * n + p] * x[p];
    x[i] = v / l[i * n + i];
  }
  // L^T x = y column by column: once x_i is known, its terms leave the rows inside i's envelope
  for (int i = n - 1; i >= 0; --i) {
    Real xi = x[i] / l[i * n + i];
    x[i] = xi;
    for (int p = static_cast<int>(first[i]); p < i; ++p) x[p] -= l[i * n + p] * xi;
  }
}

// Once per substep, in the substep-start configuration: factors the joint's lock block
// K = J M^-1 J^T, and records the axis row's inverse effective mass and unit-impulse response.
// The substep's solve and relax passes reuse them while the rows themselves follow the bodies.
// prep[0] = 0 marks an unusable lock block.
S2R_HD void PrepareJointBlock(const ModelView& m, int j, const JointFrame& f, const SolverBody& a,
                              const SolverBody& b, Real* prep, bool lock_block = true) {
  int type = m.joint_type[j];
  int n = LockRowCount(type);
  prep[0] = Real(0);
  prep[kPrepAxisInvMass] = Real(0);
  if (n == 0) return;
  if (type == kJointHinge || type == kJointSlide) {
    Row axis = AxisRow(m, j, f);
    RowResponse r = UnitImpulseResponse(axis, a, b);
    prep[kPrepAxisInvMass] = RowVelocityOfResponse(axis, r);
    StoreVec3(prep + kPrepAxisDv, (r.dvb + Cross(r.dwb, axis.rb)) - (r.dva + Cross(r.dwa, axis.ra)));
    StoreVec3(prep + kPrepAxisDw, r.dwb - r.dwa);
  }
  if (!lock_block) return;
  Row rows[kMaxLockRows];
  for (int k = 0; k < n; ++k) {
    Real c;
    int slot;
    rows[k] = LockRow(type, f, k, &c, &slot);
  }
  for (int col = 0; col < n; ++col) {
    RowResponse resp = UnitImpulseResponse(rows[col], a, b);
    for (int row = col; row < n; ++row) {
      Real v = RowVelocityOfResponse(rows[row], resp);
      prep[row * n + col] = v;
      prep[col * n + row] = v;
    }
  }
  if (!CholeskyFactor(prep, n)) prep[0] = Real(0);
}

// linear impulse at the joint anchor and angular impulse, +B / -A
S2R_HD void ApplyLockImpulse(const JointFrame& f, Vec3 linear, Vec3 angular, SolverBody* a,
                             SolverBody* b) {
  ApplyImpulse(a, f.ra, -linear);
  ApplyImpulse(b, f.rb, linear);
  ApplyAngularImpulse(a, -angular);
  ApplyAngularImpulse(b, angular);
}

S2R_HD void WarmStartJoint(const ModelView& m, int j, const JointFrame& f, const Real* impulse,
                           SolverBody* a, SolverBody* b) {
  int type = m.joint_type[j];
  if (type == kJointFree) return;
  Vec3 linear{0, 0, 0}, angular{0, 0, 0};
  for (int k = 0; k < LockRowCount(type); ++k) {
    Real c;
    int slot;
    Row r = LockRow(type, f, k, &c, &slot);
    if (r.angular) angular += impulse[slot] * r.n;
    else linear += impulse[slot] * r.n;
  }
  ApplyLockImpulse(f, linear, angular, a, b);
  if (type == kJointWeld) return;
  Row axis = AxisRow(m, j, f);
  Real along = impulse[kSlotLowerLimit] - impulse[kSlotUpperLimit] + impulse[kSlotDamping] +
               impulse[kSlotFrictionLoss] + impulse[kSlotArmature];
  RowApply(axis, a, b, along);
}

// --- actuators ---------------------------------------------------------------------------------

// --- per-step coefficients of the axis rows ------------------------------------------------------
//
// What the axis rows need that is fixed for a physics step (controls, gains, gears, force ranges,
// damping, armature, the substep) is computed once per step, so that a solver pass costs
// multiply-adds and one division per force row (the row's effective mass changes with the
// configuration). Layout: kActuatorPrepSize Reals per actuator, then kJointPrepSize per joint.
constexpr int kActuatorPrepSize = 6;
constexpr int kActPrepBiasRate = 0;  // k / (c + h k / 2) for a position actuator, else 0, 1/s
constexpr int kActPrepGamma = 1;     // compliance per substep; <= 0: the row is inactive
constexpr int kActPrepOffset = 2;    // velocity target term without q: -bias_rate u / g, or -u / g
constexpr int kActPrepLo = 3;        // impulse bounds per substep, N s (or N m s)
constexpr int kActPrepHi = 4;
constexpr int kActPrepExplicit = 5;  // h k of an explicit spring without damping (offset: h k u / g)
constexpr int kJointPrepSize = 5;
constexpr int kJointPrepArmatureGamma = 0;  // 1 / armature, 0 without
constexpr int kJointPrepDampingGamma = 1;   // 1 / (damping h), 0 without
constexpr int kJointPrepFrictionLimit = 2;  // friction loss times h, 0 without
constexpr int kJointPrepFrictionReg = 3;    // soft friction loss: R / w = (1 - d) / d; 0: hard
constexpr int kJointPrepFrictionRef = 4;    // soft friction loss: h B - 1 (multiplies qdot0)

S2R_HD int AxisPrepSize(const ModelView& m) {
  return kActuatorPrepSize * m.nactuator + kJointPrepSize * m.njoint + 1;
}

// position and velocity actuators on a joint or a fixed tendon: implicit rows in joint space
S2R_HD bool ActuatorIsImplicit(const ModelView& m, int i) {
  return (m.actuator_trntype[i] == kTransmissionJoint || m.actuator_trntype[i] == kTransmissionTendon) &&
         m.actuator_type[i] != kActuatorMotor;
}

// The control as actuator i reads it, from the world's control u: scale u + offset
// (actuator_ctrlmap; MJCF <general> laws with gainprm[0] != kp, as Menagerie's Robotiq 2F-85
// remapping 0..255 onto the finger travel). The servo's target or the motor's force.
S2R_HDI Real ActuatorInput(const ModelView& m, int world, int i, Real u) {
  const Real* map = m.actuator_ctrlmap.At(world) + 2 * i;
  return map[0] * u + map[1];
}

// Position / velocity actuator i on its joint is one implicit spring-damper row along the axis:
// length = g q, force = kp (u - g q) - kv g qdot  =>  generalized force g * force, clamped to the
// force range. On a fixed tendon q is the tendon length L = sum coef q_k and the row runs along
// the tendon's joint-space direction (solver_coupling.h). `ctrl`: the world's controls for this
// step.
S2R_HD void PrepareAxisRows(const ModelView& m, int world, const Real* ctrl, Real h, Real* prep) {
  for (int i = 0; i < m.nactuator; ++i) {
    Real* p = prep + kActuatorPrepSize * i;
    for (int k = 0; k < kActuatorPrepSize; ++k) p[k] = Real(0);
    p[kActPrepGamma] = Real(-1);
    if (!ActuatorIsImplicit(m, i)) continue;
    Real g = m.actuator_gear.At(world)[6 * i];
    if (g == Real(0)) continue;
    bool position = m.actuator_type[i] == kActuatorPosition;
    Real kp = position ? m.actuator_kp.At(world)[i] : Real(0);
    Real kv = m.actuator_kv.At(world)[i];
    SpringDamper sd = MakeSpringDamper(kp * g * g, kv * g * g, h);
    if (sd.gamma <= Real(0)) continue;
    Real target = ActuatorInput(m, world, i, ctrl[i]) / g;
    p[kActPrepBiasRate] = position ? sd.bias_rate : Real(0);
    p[kActPrepGamma] = sd.gamma;
    p[kActPrepOffset] = position ? -sd.bias_rate * target : -target;
    if (position && m.explicit_servo_spring != 0) {
      // MuJoCo's Euler: the spring force k (u / g - q) from the substep-start q (the solve pass
      // runs in the substep-start frames), the damper c implicit; without damper a fixed impulse
      Real k = kp * g * g, c = kv * g * g;
      if (c > Real(0)) {
        p[kActPrepGamma] = Real(1) / (h * c);
        p[kActPrepBiasRate] = k / c;
        p[kActPrepOffset] = -k * target / c;
      } else {
        p[kActPrepGamma] = Real(1);  // active; unused by the explicit row
        p[kActPrepBiasRate] = Real(0);
        p[kActPrepExplicit] = h * k;
        p[kActPrepOffset] = h * k * target;
      }
    }
    p[kActPrepLo] = Real(-1e30);
    p[kActPrepHi] = Real(1e30);
    if (m.actuator_forcelimited[i]) {
      const Real* fr = m.actuator_forcerange.At(world) + 2 * i;
      Real x = h * g * fr[0], y = h * g * fr[1];
      p[kActPrepLo] = Min(x, y);
      p[kActPrepHi] = Max(x, y);
    }
  }
  Real* jp = prep + kActuatorPrepSize * m.nactuator;
  for (int j = 0; j < m.njoint; ++j, jp += kJointPrepSize) {
    Real armature = m.joint_armature.At(world)[j];
    Real damping = m.joint_damping.At(world)[j];
    Real friction_loss = m.joint_frictionloss.At(world)[j];
    jp[kJointPrepArmatureGamma] = armature > Real(0) ? Real(1) / armature : Real(0);
    jp[kJointPrepDampingGamma] = damping > Real(0) ? Real(1) / (damping * h) : Real(0);
    jp[kJointPrepFrictionLimit] = friction_loss > Real(0) ? friction_loss * h : Real(0);
    // soft friction loss (MuJoCo's solreffriction / solimpfriction): a regularized velocity row
    // with reference acceleration -B qdot0, B = 2 / (dmax timeconst), and regularization
    // R = (1 - d) / d times the row's inverse effective mass, d = dmin (the impedance at zero
    // violation). timeconst is raised to two MJCF timesteps, as MuJoCo does.
    Real timeconst = m.joint_frictionloss_timeconst.At(world)[j];
    jp[kJointPrepFrictionReg] = Real(0);
    jp[kJointPrepFrictionRef] = Real(-1);
    if (friction_loss > Real(0) && timeconst > Real(0)) {
      const Real* imp = m.joint_frictionloss_impedance.At(world) + 2 * j;
      Real dmin = Clamp(imp[0], Real(1e-4), Real(0.9999));
      Real dmax = Clamp(imp[1], Real(1e-4), Real(0.9999));
      Real tc = Max(timeconst, Real(2) * m.timestep);
      jp[kJointPrepFrictionReg] = (Real(1) - dmin) / dmin;
      jp[kJointPrepFrictionRef] = h * Real(2) / (dmax * tc) - Real(1);
    }
  }
}

// The rows along a joint's free axis, in one Gauss-Seidel pass: implicit actuators, armature (as
// a row when the joint's inertia is not in a mass matrix: armature_row), damping, friction loss
// and limits. q: joint coordinate; cdot: its velocity; w: the axis row's inverse effective mass.
// They share one Jacobian, so after an impulse p the velocity is cdot + w p: each row updates
// cdot analytically. Returns the total impulse for the caller to apply along the axis.
// The implicit actuators of one list (a joint's or a tendon's, through actuator_next, from
// `first`) on a row of coordinate q, velocity *cdot and inverse effective mass w: each a
// spring-damper clamped to its force range. Updates *cdot; returns the total impulse.
S2R_HD Real SolveActuatorRows(const ModelView& m, int first, Real q, Real* cdot, Real w,
                              const Real* prep, Real* act_impulse) {
  Real applied = Real(0);
  for (int i = first; i >= 0; i = m.actuator_next[i]) {
    const Real* p = prep + kActuatorPrepSize * i;
    Real gamma = p[kActPrepGamma];
    if (gamma <= Real(0)) continue;
    // total = acc - (cdot + bias_rate q + offset + gamma acc) / (w + gamma), clamped; all but the
    // cdot term is off the velocity chain
    Real acc = act_impulse[i];
    Real total;
    if (p[kActPrepExplicit] > Real(0)) {  // explicit spring: h k (u / g - q), q at the substep start
      total = Clamp(p[kActPrepOffset] - p[kActPrepExplicit] * q, p[kActPrepLo], p[kActPrepHi]);
    } else {
      Real inv_den = Real(1) / (w + gamma);
      Real base = acc - (p[kActPrepBiasRate] * q + p[kActPrepOffset] + gamma * acc) * inv_den;
      total = Clamp(base - *cdot * inv_den, p[kActPrepLo], p[kActPrepHi]);
    }
    Real imp = total - acc;
    act_impulse[i] = total;
    applied += imp;
    *cdot += w * imp;
  }
  return applied;
}

S2R_HD Real SolveAxisRows(const ModelView& m, int world, int j, Real q, Real cdot, Real w,
                          Real* impulse, Softness soft, bool use_bias, Real inv_h, Real qdot0,
                          bool armature_row, const Real* prep, Real* act_impulse) {
  Real applied = Real(0);
  const Real inv_w = Real(1) / w;
  // Force elements (actuators, armature, damping, friction loss) act in the solve pass only:
  // they are physical forces integrated implicitly over the substep, and solving them again
  // after the positions moved would look a further step ahead and over-damp them. The relax
  // pass only removes the bias velocity of the constraints (limits and locks).
  bool forces = use_bias;
  // actuators on this joint: implicit spring-dampers, clamped to their force range
  if (forces) applied += SolveActuatorRows(m, m.joint_actuator[j], q, &cdot, w, prep, act_impulse);
  // implicit rows driving cdot to `target` with compliance gamma (armature: the substep-start
  // velocity; damping: rest): d_lambda = (target - cdot - gamma acc) / (w + gamma), with the
  // cdot term last so only it is on the velocity chain
  auto implicit_row = [&](Real gamma, Real target, Real& acc) {
    Real inv_den = Real(1) / (w + gamma);
    Real imp = (target - gamma * acc) * inv_den - cdot * inv_den;
    acc += imp;
    applied += imp;
    cdot += w * imp;
  };
  const Real* jp = prep + kActuatorPrepSize * m.nactuator + kJointPrepSize * j;
  Real armature_gamma = jp[kJointPrepArmatureGamma];
  if (forces && armature_row && armature_gamma > Real(0)) {
    implicit_row(armature_gamma, qdot0, impulse[kSlotArmature]);
  }
  Real damping_gamma = jp[kJointPrepDampingGamma];
  if (forces && damping_gamma > Real(0)) implicit_row(damping_gamma, Real(0), impulse[kSlotDamping]);
  Real limit = jp[kJointPrepFrictionLimit];
  if (forces && limit > Real(0)) {
    Real& acc = impulse[kSlotFrictionLoss];
    // hard: drive cdot to 0 within the limit. Soft: the regularized row
    // cdot + ref qdot0 + reg w total = 0 (MuJoCo's force -(a0 + B qdot0) / (w + R) over the
    // substep, a0 the other forces' acceleration), within the limit
    Real reg = jp[kJointPrepFrictionReg];
    Real total = reg > Real(0)
                     ? Clamp(acc - (cdot + jp[kJointPrepFrictionRef] * qdot0 + reg * w * acc) /
                                       (w * (Real(1) + reg)),
                             -limit, limit)
                     : Clamp(acc - cdot * inv_w, -limit, limit);
    Real imp = total - acc;
    acc = total;
    applied += imp;
    cdot += w * imp;
  }
  if (m.joint_limited[j]) {
    const Real* range = m.joint_range.At(world) + 2 * j;
    for (int side = 0; side < 2; ++side) {
      // lower: C = q - lo >= 0; upper: C = hi - q >= 0 (row direction flipped)
      Real sign = side == 0 ? Real(1) : Real(-1);
      Real c = side == 0 ? q - range[0] : range[1] - q;
      Real bias = Real(0), mass_scale = Real(1), impulse_scale = Real(0);
      if (c > Real(0)) {
        bias = c * inv_h;
      } else if (use_bias) {
        Softness limit_soft = soft;
        const Real hertz = m.joint_limit_hertz.At(world)[j];
        if (hertz > Real(0)) {  // the joint's own limit stiffness, capped like joint_hertz
          const Real h = Real(1) / inv_h;
          limit_soft = MakeSoft(Min(hertz, Real(0.25) * inv_h), m.joint_damping_ratio.At(world)[0], h);
        }
        bias = limit_soft.bias_rate * c;
        mass_scale = limit_soft.mass_scale;
        impulse_scale = limit_soft.impulse_scale;
      }
      Real& acc = impulse[side == 0 ? kSlotLowerLimit : kSlotUpperLimit];
      Real k = mass_scale * inv_w;
      Real target = acc - k * bias - impulse_scale * acc;
      Real total = Max(target - k * (sign * cdot), Real(0));
      Real imp = sign * (total - acc);
      acc = total;
      applied += imp;
      cdot += w * imp;
    }
  }
  return applied;
}

// One Gauss-Seidel pass over a joint's rows in frame f (the bodies' current configuration).
// qdot0: joint velocity at the substep start; prep: from PrepareJointBlock this step; axis_prep
// (PrepareAxisRows) and act_impulse: the world's axis-row coefficients and accumulated actuator
// impulses; inv_h: 1 / substep. solve_locks
// false leaves the lock rows to SolveLocksTogether (the whole world's locks as one block); the
// caller then carries the returned axis impulse through the locks (ApplyAxisImpulseThroughLocks).
S2R_HD Real SolveJoint(const ModelView& m, int world, int j, const JointFrame& f, Real* impulse,
                       SolverBody* a, SolverBody* b, Softness soft, bool use_bias, Real inv_h,
                       Real qdot0, const Real* prep, const Real* axis_prep, Real* act_impulse,
                       bool solve_locks) {
  int type = m.joint_type[j];
  if (type == kJointFree) return Real(0);

  // Rows along the free axis. They share one Jacobian, so the axis velocity after an impulse p is
  // cdot + w p exactly: each row updates cdot analytically, and the sum joins the lock impulses.
  Vec3 dv = PointVelocity(*b, f.rb) - PointVelocity(*a, f.ra);
  Vec3 dw = b->w - a->w;
  Real applied = Real(0);
  Real w = prep[solve_locks ? kPrepAxisInvMass : kPrepAxisInvMassLocked];
  if (type != kJointWeld && w > Real(0)) {
    Real cdot = Dot(f.axis, type == kJointHinge ? dw : dv);
    applied = SolveAxisRows(m, world, j, f.q, cdot, w, impulse, soft, use_bias, inv_h, qdot0,
                            solve_locks, axis_prep, act_impulse);
    if (applied != Real(0)) {
      dv += applied * LoadVec3(prep + kPrepAxisDv);
      dw += applied * LoadVec3(prep + kPrepAxisDw);
    }
  }

  // lock rows last, as one block: the rows of a joint are strongly coupled (a point mass on a
  // rod makes single-row Gauss-Seidel crawl), so they are solved together, K dlambda = -rhs
  Vec3 linear{0, 0, 0}, angular{0, 0, 0};
  if (type == kJointHinge) angular = applied * f.axis;
  if (type == kJointSlide) linear = applied * f.axis;
  if (solve_locks && prep[0] != Real(0)) {
    int n = LockRowCount(type);
    Row rows[kMaxLockRows];
    Real rhs[kMaxLockRows];
    int slots[kMaxLockRows];
    // rigid at the velocity level (the block is solved exactly), soft only in how fast a position
    // error is corrected: a soft lock would let a light link yield under a strong actuator
    Real mass_scale = Real(1);
    Real impulse_scale = Real(0);
    for (int k = 0; k < n; ++k) {
      Real c;
      rows[k] = LockRow(type, f, k, &c, &slots[k]);
      Real bias = use_bias ? soft.bias_rate * c : Real(0);
      rhs[k] = Dot(rows[k].n, rows[k].angular ? dw : dv) + bias;
    }
    Real dl[kMaxLockRows];
    CholeskySolve(prep, rhs, n, dl);
    // all lock rows share the anchors: one linear and one angular impulse carry them all
    for (int k = 0; k < n; ++k) {
      Real imp = -mass_scale * dl[k] - impulse_scale * impulse[slots[k]];
      impulse[slots[k]] += imp;
      if (rows[k].angular) angular += imp * rows[k].n;
      else linear += imp * rows[k].n;
    }
  }
  ApplyLockImpulse(f, linear, angular, a, b);
  return applied;
}

// The frame fields a slide of a reduced tree uses: its axis (fixed for the step) and q, from the
// step-start coordinate and the bodies' displacement since (nothing in the tree rotates).
S2R_HD void ReducedJointFrame(const ReducedSet& red, int rank, const SolverBody& a,
                              const SolverBody& b, JointFrame* f) {
  f->axis = LoadVec3(red.axis + 3 * rank);
  f->q = red.q0[rank] + Dot(b.delta_pos - a.delta_pos, f->axis);
}

// One pass over the axis rows of a slide in a reduced tree: the joint velocity is its q-dot, the
// inverse effective mass (M^-1)_jj (armature is in M), and the impulse moves the whole tree
// (solver_reduced.h).
S2R_HD void SolveReducedJoint(const ModelView& m, int world, int j, const JointFrame& f,
                              Real* impulse, const ReducedSet& red, Softness soft, bool use_bias,
                              Real inv_h, Real qdot0, const Real* axis_prep, Real* act_impulse) {
  int rank = red.bodies[m.joint_body[j]].reduced;
  Real w = red.minv[rank * red.count + rank];
  Real cdot = red.qdot[rank];
  Real applied = SolveAxisRows(m, world, j, f.q, cdot, w, impulse, soft, use_bias, inv_h, qdot0,
                               false, axis_prep, act_impulse);
  if (applied != Real(0)) ReducedJointImpulse(red, rank, applied);
}

// The frame fields a joint of an articulated tree uses: its axis (the step start's, like the
// tree's Jacobian) and its current coordinate.
S2R_HD void TreeJointFrame(const TreeSet& t, int rank, JointFrame* f) {
  f->axis = LoadVec3(t.axis + 3 * rank);
  f->q = t.q[rank];
}

// One pass over the axis rows of a joint in an articulated tree: the joint velocity is its q-dot,
// the inverse effective mass (M^-1)_kk (armature is in M), and the impulse moves the whole tree.
S2R_HD void SolveTreeJoint(const ModelView& m, int world, int j, const JointFrame& f, Real* impulse,
                           const TreeSet& t, Softness soft, bool use_bias, Real inv_h, Real qdot0,
                           const Real* axis_prep, Real* act_impulse) {
  int rank = t.bodies[m.joint_body[j]].tree;
  Real w = t.minv[rank * t.count + rank];
  Real applied = SolveAxisRows(m, world, j, f.q, t.qdot[rank], w, impulse, soft, use_bias, inv_h,
                               qdot0, false, axis_prep, act_impulse);
  if (applied != Real(0)) TreeJointImpulse(t, rank, applied);
}

// --- every lock row of a world as one block ------------------------------------------------------
//
// Per-joint blocks are exact within a joint but still Gauss-Seidel across joints, and a chain
// with a large mass or inertia ratio (a light carriage carrying a heavy payload on a lever arm)
// then converges too slowly in one pass: the light body is dragged off its joint. When a world has
// at most kMaxTreeLockRows lock rows they are solved together: K = J M^-1 J^T over all of them
// (dense, factored once per substep), one solve per pass. Cost per substep O(R^3 / 6), per pass
// O(R^2). At the velocity level the locks are rigid (solved exactly); only the correction of a
// position error is soft.
// 64: a 7-axis arm with a two-finger gripper (9 joints, 54 rows) fits; past it the per-joint
// blocks are used, and a chain of light links with armature or stiff servos is fragile there
constexpr int kMaxTreeLockRows = 64;

// row r's velocity response to unit impulse `resp` of a row acting on bodies (qa, qb)
S2R_HD Real CrossResponse(const Row& r, int pa, int pb, const RowResponse& resp, int qa, int qb) {
  Vec3 dva{0, 0, 0}, dwa{0, 0, 0}, dvb{0, 0, 0}, dwb{0, 0, 0};
  if (pa == qa) { dva = resp.dva; dwa = resp.dwa; }
  if (pa == qb) { dva = resp.dvb; dwa = resp.dwb; }
  if (pb == qa) { dvb = resp.dva; dwb = resp.dwa; }
  if (pb == qb) { dvb = resp.dvb; dwb = resp.dwb; }
  if (r.angular) return Dot(r.n, dwb - dwa);
  return Dot(r.n, (dvb + Cross(dwb, r.rb)) - (dva + Cross(dwa, r.ra)));
}

// rows of the world's block: every joint's lock rows and armature rows
S2R_HD int TotalBlockRows(const ModelView& m) {
  int n = 0;
  for (int j = 0; j < m.njoint; ++j) n += JointBlockRows(m, j);
  return n;
}

// Assembles and factors the world's lock block from the joint frames (step start). factor holds
// R x R. Returns false if it cannot be factored (then per-joint blocks are used).
S2R_HD bool PrepareLocksTogether(const ModelView& m, int world, const JointFrame* frames,
                                 const SolverBody* bodies, Real* factor, Real* first) {
  int total = TotalBlockRows(m);
  // every lock row with its bodies and its response to a unit impulse
  Row rows[kMaxTreeLockRows];
  RowResponse resp[kMaxTreeLockRows];
  int body_a[kMaxTreeLockRows], body_b[kMaxTreeLockRows];
  int r = 0;
  for (int j = 0; j < m.njoint; ++j) {
    int pa = m.joint_parent[j], pb = m.joint_body[j];
    for (int k = 0; k < JointBlockRows(m, j); ++k, ++r) {
      Real c;
      int slot;
      rows[r] = BlockRow(m, j, frames[j], k, &c, &slot);
      resp[r] = UnitImpulseResponse(rows[r], bodies[pa], bodies[pb]);
      body_a[r] = pa;
      body_b[r] = pb;
    }
  }
  // K: row r2's velocity response to row r's unit impulse, zero unless they share a body
  for (int col = 0; col < total; ++col) {
    for (int row = col; row < total; ++row) {
      bool touches = body_a[row] == body_a[col] || body_a[row] == body_b[col] ||
                     body_b[row] == body_a[col] || body_b[row] == body_b[col];
      Real v = touches ? CrossResponse(rows[row], body_a[row], body_b[row], resp[col], body_a[col],
                                       body_b[col])
                       : Real(0);
      factor[row * total + col] = v;
      factor[col * total + row] = v;
    }
  }
  // armature rows: compliance 1 / armature on the diagonal; without armature, decoupled and inert
  const Real* armature = m.joint_armature.At(world);
  r = 0;
  for (int j = 0; j < m.njoint; ++j) {
    r += JointLockRows(m, j);
    if (!JointHasArmatureRow(m, j)) continue;
    if (armature[j] > Real(0)) {
      factor[r * total + r] += Real(1) / armature[j];
    } else {
      for (int i = 0; i < total; ++i) factor[r * total + i] = factor[i * total + r] = Real(0);
      factor[r * total + r] = Real(1);
    }
    ++r;
  }
  return EnvelopeCholeskyFactor(factor, total, first);
}

// One pass over all lock rows at once. frames: the joints' current frames; scratch: 2 R reals.
S2R_HD void SolveLocksTogether(const ModelView& m, int world, const JointFrame* frames,
                               SolverBody* bodies, Real* joint_impulse /* (njoint, kJointImpulseSlots) */,
                               const Real* factor, const Real* first, Real* scratch, Softness soft,
                               bool use_bias, const Real* qdot0) {
  int total = TotalBlockRows(m);
  Real* rhs = scratch;
  Real* dl = scratch + total;
  const Real* armature = m.joint_armature.At(world);
  int r = 0;
  for (int j = 0; j < m.njoint; ++j) {
    int type = m.joint_type[j];
    int n = JointBlockRows(m, j);
    if (n == 0) continue;
    const SolverBody& a = bodies[m.joint_parent[j]];
    const SolverBody& b = bodies[m.joint_body[j]];
    const JointFrame& f = frames[j];
    Vec3 dv = PointVelocity(b, f.rb) - PointVelocity(a, f.ra);
    Vec3 dw = b.w - a.w;
    for (int k = 0; k < n; ++k, ++r) {
      Real c;
      int slot;
      Row row = BlockRow(m, j, f, k, &c, &slot);
      Real cdot = Dot(row.n, row.angular ? dw : dv);
      if (k < LockRowCount(type)) {
        rhs[r] = cdot + (use_bias ? soft.bias_rate * c : Real(0));
      } else {  // the rotor: cdot' - qdot0 + impulse / armature = 0 (implicit over the substep)
        const Real* imp = joint_impulse + j * kJointImpulseSlots;
        rhs[r] = armature[j] > Real(0) ? cdot - qdot0[j] + imp[kSlotArmature] / armature[j] : Real(0);
      }
    }
  }
  EnvelopeCholeskySolve(factor, first, rhs, total, dl);
  // rigid at the velocity level, soft (bias_rate) only in the position correction
  Real mass_scale = Real(1);
  Real impulse_scale = Real(0);
  r = 0;
  for (int j = 0; j < m.njoint; ++j) {
    int n = JointBlockRows(m, j);
    if (n == 0) continue;
    Real* impulse = joint_impulse + j * kJointImpulseSlots;
    Vec3 linear{0, 0, 0}, angular{0, 0, 0};
    for (int k = 0; k < n; ++k, ++r) {
      Real c;
      int slot;
      Row row = BlockRow(m, j, frames[j], k, &c, &slot);
      Real imp = -mass_scale * dl[r] - impulse_scale * impulse[slot];
      impulse[slot] += imp;
      if (row.angular) angular += imp * row.n;
      else linear += imp * row.n;
    }
    ApplyLockImpulse(frames[j], linear, angular, &bodies[m.joint_parent[j]], &bodies[m.joint_body[j]]);
  }
}

// The axis row's inverse effective mass seen through the locks (a Schur complement):
//   w_eff = J_axis M^-1 J_axis^T - u^T K^-1 u,  u = J_lock M^-1 J_axis^T,
// and `coupling` = K^-1 u (R reals): the lock impulses, per unit axis impulse, that keep the locks'
// velocities where they were (ApplyAxisImpulseThroughLocks). With them an axis impulse moves the
// chain as the articulated system would, so the axis velocity changes by exactly w_eff per unit
// impulse, not by the bare w: for a pendulum on a hinge w_eff is 1 / I_pivot where w is 1 / I_com,
// a factor m L^2 / I_com apart. Rows acting along the axis (limits, servos, damping, armature) use
// w_eff so that one pass gets their impulse right.
S2R_HD Real AxisInvMassThroughLocks(const ModelView& m, int world, int j, const JointFrame* frames,
                                    const SolverBody* bodies, const Real* factor,
                                    const Real* first, Real* scratch, Real* coupling) {
  int total = TotalBlockRows(m);
  int pa = m.joint_parent[j], pb = m.joint_body[j];
  Row axis = AxisRow(m, j, frames[j]);
  RowResponse resp = UnitImpulseResponse(axis, bodies[pa], bodies[pb]);
  Real w = RowVelocityOfResponse(axis, resp);
  Real* u = scratch;
  Real* y = coupling;
  int r = 0;
  for (int j2 = 0; j2 < m.njoint; ++j2) {
    int type2 = m.joint_type[j2];
    int qa = m.joint_parent[j2], qb = m.joint_body[j2];
    bool touches = qa == pa || qa == pb || qb == pa || qb == pb;
    for (int k = 0; k < JointBlockRows(m, j2); ++k, ++r) {
      u[r] = Real(0);
      // an inert armature row (no armature in this world) takes no impulse
      bool inert = k >= LockRowCount(type2) && !(m.joint_armature.At(world)[j2] > Real(0));
      if (!touches || inert) continue;
      Real c;
      int slot;
      Row row = BlockRow(m, j2, frames[j2], k, &c, &slot);
      u[r] = CrossResponse(row, qa, qb, resp, pa, pb);
    }
  }
  EnvelopeCholeskySolve(factor, first, u, total, y);
  Real reduced = w;
  for (int i = 0; i < total; ++i) reduced -= u[i] * y[i];
  // a row the locks fully determine has no inertia left along the axis: keep it well posed
  return Max(reduced, Real(1e-6) * w);
}

// An axis impulse of joint j (`applied`, already given to its two bodies) followed by the lock
// impulses that keep every lock's velocity where it was: -applied coupling_r on lock row r, added
// to the rows' accumulated impulses. Without them the impulse first moves the two bodies alone,
// and the next joints' axis rows in the same pass read velocities off the locks -- for a light
// link many times too large -- and answer them. coupling: from AxisInvMassThroughLocks.
S2R_HD void ApplyAxisImpulseThroughLocks(const ModelView& m, const JointFrame* frames,
                                         SolverBody* bodies, Real* joint_impulse,
                                         const Real* coupling, Real applied) {
  int r = 0;
  for (int j = 0; j < m.njoint; ++j) {
    int n = JointBlockRows(m, j);
    if (n == 0) continue;
    Real* impulse = joint_impulse + j * kJointImpulseSlots;
    Vec3 linear{0, 0, 0}, angular{0, 0, 0};
    bool any = false;
    for (int k = 0; k < n; ++k, ++r) {
      if (coupling[r] == Real(0)) continue;
      Real c;
      int slot;
      Row row = BlockRow(m, j, frames[j], k, &c, &slot);
      Real mu = -applied * coupling[r];
      impulse[slot] += mu;
      if (row.angular) angular += mu * row.n;
      else linear += mu * row.n;
      any = true;
    }
    if (any) ApplyLockImpulse(frames[j], linear, angular, &bodies[m.joint_parent[j]], &bodies[m.joint_body[j]]);
  }
}

// Reals of the locks-together scratch: rhs and solution (2 R), the factor's envelope (R), and
// each joint's coupling vector (njoint R)
S2R_HD int LockScratchSize(const ModelView& m) {
  int r = TotalBlockRows(m);
  return 3 * r + m.njoint * r;
}

}  // namespace s2r
