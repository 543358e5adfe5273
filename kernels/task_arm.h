// A task's effector moved by an arm: the expert's Cartesian target reached through the arm's joints.
//
// The built-in scenes' effectors ride world-aligned slides, so a target position is the slides'
// joint targets directly (SlideTarget). A robot arm (a Menagerie Panda: seven hinges on position
// servos) has no such axes: each control step, the effector's target position and its orientation
// at reset become joint targets by one damped least-squares step of differential inverse
// kinematics (Wampler 1986; Buss, "Introduction to inverse kinematics with Jacobian transpose,
// pseudoinverse and damped least squares methods", 2004):
//
//   e   = (target - p, w r)          position error, m; r the rotation vector from the effector's
//                                      orientation to its reset orientation, rad, weighted by w (m)
//   J   = rows of d(p, w theta)/dq     6 x n, column i for hinge i: (a_i x (p - c_i), w a_i) with
//                                      a_i its world axis and c_i its anchor, from the bodies' poses
//   dq  = J^T (J J^T + lambda^2 I)^-1 e
//       + (I - J^T (J J^T + lambda^2 I)^-1 J) k (q0 - q)      the reset posture, in J's null space
//   ctrl_i = the servo control whose target is q_i + dq_i (within the joint's range) - G_i / kp_i,
//            within the control range
//
// lambda (TaskModel::arm_damping, m) keeps the step bounded near singular poses; e's position part
// is clipped to kArmMaxReach per control step so the servos are not sent far past what they can
// follow in one; the posture term keeps a redundant arm (7 joints for 6 constraints) near its
// reset pose instead of drifting along its self-motion. A position servo under gravity settles
// short of its target by the gravity torque over its stiffness (the MJX Panda's hand hangs 16 mm low
// at "home"), so each target is moved by that: G_i, the torque gravity exerts about hinge i from
// every body it carries (their masses less gravity compensation, at their centres of mass in the
// current pose), over the servo's kp (gravity feed-forward, as a real arm's joint controllers
// compensate gravity). The joints' servos then move them; the next control step starts from where
// they got to, so the scheme closes the loop on the state.
#pragma once

#include "kernels/dense.h"
#include "kernels/task.h"

namespace s2r {

constexpr Real kArmMaxReach = Real(0.006);      // m: the largest position error one control step corrects
constexpr Real kArmOrientationWeight = Real(0.2);  // m per rad: orientation rows' weight against position
constexpr Real kArmPostureGain = Real(0.2);     // 1/step: share of the posture error the null space corrects

// The servo control of actuator i that holds its joint at q against a generalized force `load`
// (N m on a hinge) at rest: the servo's length is gear q, its force kp (input - gear q) acts on the
// joint times gear, its input is scale u + offset (actuator_ctrlmap).
S2R_HD Real ServoControlFor(const ModelView& m, int world, int i, Real q, Real load) {
  const Real* map = m.actuator_ctrlmap.At(world) + 2 * i;
  const Real gear = m.actuator_gear.At(world)[6 * i];
  const Real kp = m.actuator_kp.At(world)[i];
  const Real input = gear * q - (kp > Real(0) ? load / (gear * kp) : Real(0));
  return (input - map[1]) / map[0];
}

// The torque gravity exerts about a hinge (world anchor and unit axis) from every body it carries
// (the joint's body and its descendants): their masses less their gravity compensation, at their
// centres of mass in the state's pose.
S2R_HD Real GravityTorque(const ModelView& m, const StateView& s, int world, int joint, Vec3 anchor, Vec3 axis) {
  const int root = m.joint_body[joint];
  const Vec3 g = LoadVec3(m.gravity.At(world));
  Real tau = Real(0);
  for (int k = root; k < m.nbody; ++k) {
    int b = k;
    while (b > root) b = m.body_parent[b];  // a parent's index is below its children's
    if (b != root) continue;
    const Real weight = m.body_mass.At(world)[k] * (Real(1) - m.body_gravcomp.At(world)[k]);
    const Vec3 com = BodyPosition(s, world, k) + Rotate(LoadQuat(s.body_quat(world, k)), LoadVec3(m.body_ipos.At(world) + 3 * k));
    tau += Dot(axis, Cross(com - anchor, weight * g));
  }
  return tau;
}

// Column i of the arm's Jacobian at the effector position p (rows: d p, then the weighted d theta),
// and hinge i's world anchor and axis.
S2R_HD void ArmColumn(const TaskModel& t, const ModelView& m, const StateView& s, int world, int i, Vec3 p, Real* col,
                      Vec3* anchor, Vec3* axis) {
  const int j = t.joint[i], b = m.joint_body[j];
  const Quat rb = LoadQuat(s.body_quat(world, b));
  *axis = Rotate(rb, LoadVec3(m.joint_axis_child + 3 * j));
  *anchor = BodyPosition(s, world, b) + Rotate(rb, LoadVec3(m.joint_pos_child + 3 * j));
  const Vec3 lin = Cross(*axis, p - *anchor), ang = kArmOrientationWeight * *axis;
  col[0] = lin.x, col[1] = lin.y, col[2] = lin.z, col[3] = ang.x, col[4] = ang.y, col[5] = ang.z;
}

// The arm's joint targets (t.actuator[0 .. t.nactuator), on the hinges t.joint[]) that move the
// effector towards `target` (world, m) and keep its reset orientation (ts->effector_quat0).
// A call the device keeps (like the action noise): only arm tasks take it, and inlined its factor
// and loops would cost the gantry tasks' sweep kernels registers and spills. The Jacobian is not
// stored: its columns are made twice (for J J^T and J z, then for J^T y), which keeps the call's
// frame to the 6 x 6 factor and a few vectors.
S2R_HD_NOINLINE void ArmJointTargets(const TaskModel& t, const ModelView& m, const StateView& s, int world,
                                     const TaskState* ts, Vec3 target, Real* action) {
  const int n = t.nactuator;
  const Real* q = s.joint_q(world);
  const Vec3 p = BodyPosition(s, world, t.effector_body);
  Vec3 ep = target - p;
  const Real reach = Length(ep);
  if (reach > kArmMaxReach) ep = (kArmMaxReach / reach) * ep;
  // the rotation from now to the reset orientation, world frame: 2 v for the shorter way's (w, v)
  const float* q_ref = ts->effector_quat0;
  const Quat ref{Real(q_ref[0]), Real(q_ref[1]), Real(q_ref[2]), Real(q_ref[3])};
  const Quat d = ref * Conjugate(LoadQuat(s.body_quat(world, t.effector_body)));
  const Vec3 er = ((d.w < Real(0) ? Real(-2) : Real(2)) * kArmOrientationWeight) * Vec3{d.x, d.y, d.z};
  // A = J J^T + lambda^2 I and rhs = e - J z, z the posture step: dq = z + J^T A^-1 (e - J z), which
  // is the two terms above
  Real a[36], rhs[6] = {ep.x, ep.y, ep.z, er.x, er.y, er.z}, col[6];
  for (int k = 0; k < 36; ++k) a[k] = (k % 7 == 0) ? t.arm_damping * t.arm_damping : Real(0);
  Vec3 anchor, axis;
  for (int i = 0; i < n; ++i) {
    ArmColumn(t, m, s, world, i, p, col, &anchor, &axis);
    const Real z = kArmPostureGain * (ts->q0[i] - q[t.joint[i]]);
    for (int r = 0; r < 6; ++r) {
      rhs[r] -= col[r] * z;
      for (int c = 0; c <= r; ++c) a[r * 6 + c] += col[r] * col[c];
    }
  }
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < r; ++c) a[c * 6 + r] = a[r * 6 + c];
  }
  if (!CholeskyFactor(a, 6)) return;  // a non-finite state: the engine freezes such a world
  Real y[6];
  CholeskySolve(a, rhs, 6, y);
  for (int i = 0; i < n; ++i) {
    ArmColumn(t, m, s, world, i, p, col, &anchor, &axis);
    const int j = t.joint[i];
    Real dq = kArmPostureGain * (ts->q0[i] - q[j]);
    for (int r = 0; r < 6; ++r) dq += col[r] * y[r];
    Real goal = q[j] + dq;
    if (m.joint_limited[j]) {
      const Real* range = m.joint_range.At(world) + 2 * j;
      goal = Clamp(goal, range[0], range[1]);
    }
    const int a = t.actuator[i];
    Real u = ServoControlFor(m, world, a, goal, GravityTorque(m, s, world, j, anchor, axis));
    if (m.actuator_ctrllimited[a]) {  // what the servo receives (the step clamps it so too)
      const Real* range = m.actuator_ctrlrange.At(world) + 2 * a;
      u = Clamp(u, range[0], range[1]);
    }
    action[a] = u;
  }
}

// The task's effector towards `target` (world, m): through the arm where the task has one, else
// through its first `axes` slides (world-aligned, from where they were at reset). kArm false
// compiles the arm's path out: the sweep kernels of the step variants without articulated trees
// (kStepTrees), which no scene with an arm (hinges) runs, do not carry its call.
template <bool kArm = true>
S2R_HD void DriveEffector(const TaskModel& t, const ModelView& m, const StateView& s, int world, const TaskState* ts,
                          Vec3 target, int axes, Real* action) {
  if constexpr (kArm) {
    if (t.arm) {
      ArmJointTargets(t, m, s, world, ts, target, action);
      return;
    }
  }
  const Vec3 delta = target - LoadVec3(ts->effector0);
  for (int i = 0; i < axes && i < t.nactuator; ++i) action[t.actuator[i]] = SlideTarget(m, t.joint[i], ts->q0[i], delta);
}

}  // namespace s2r
