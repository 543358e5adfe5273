// Joint frames and constraint rows of maximal-coordinate joints, shared by the joint solvers
// (solver_joint.h: the locks; solver_axis.h: the rows along a joint's free axis).
//
// Every body keeps its own 6-DOF state; a joint removes the DOFs it locks with rows solved like
// contacts (soft with bias in the solve pass, rigid in the relax pass):
//   hinge  3 linear (anchor points coincide) + 2 angular (axes stay parallel)
//   slide  2 linear (perpendicular to the axis) + 3 angular (relative rotation fixed)
//   weld   3 linear + 3 angular
// The joint's free axis carries the rows that act along the joint coordinate q (solver_axis.h).
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

}  // namespace s2r
