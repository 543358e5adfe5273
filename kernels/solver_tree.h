// Articulated trees (hinge and slide joints, and ball joints as three hinges) in reduced coordinates.
//
// A robot arm is a tree of hinges (and a gripper's finger slides) hanging from the world or from a
// fixed base (a floating base: a free joint the loader makes three slides and a ball). In maximal
// coordinates each link carries 6 DOFs and each joint 5 lock rows, and the whole lock block (54 rows for a 7-axis arm with two fingers) is refactored every substep; here
// the tree carries one coordinate q per joint and its rate q-dot:
//   - forward kinematics places every tree body from q (a hinge rotates its child about the axis
//     through the anchor, a slide moves it along the axis), and gives its velocity J_c q-dot;
//   - the joint-space mass matrix M(q) = sum_c J_c^T diag(m_c, I_c) J_c comes from composite rigid
//     bodies (CRBA: M_ik = S_i . (wrench of k's subtree moved rigidly by unit S_k)), plus the
//     joints' armature on its diagonal; it is factored (dense Cholesky) and inverted at every
//     substep start, in the configuration reached (TreeRefreshDynamics says why per substep);
//   - the bias forces C (gravity, Coriolis, centrifugal and gyroscopic terms, and the joints'
//     springs -stiffness (q - springref)) come from recursive
//     Newton-Euler with zero joint acceleration, with M: per substep q-dot += h (-M^-1 C), and
//     after the solve pass half the change of -M^-1 C over the substep (trapezoidal Coriolis);
//     damping is implicit in its row;
//   - a joint-space impulse tau changes q-dot by M^-1 tau; a wrench (f, t) on tree body c is the
//     joint-space impulse J_c^T (f, t). Axis rows (limits, damping, friction loss, servos) act on
//     q-dot_k with inverse effective mass (M^-1)_kk; contact rows on tree bodies use the 6-D
//     velocity change J_c M^-1 J^T of the bodies they touch (TreeRowResponse), so the contact
//     solver keeps its per-pair register form and hands the pair's wrenches to q-dot at the end;
//   - after each substep's solve pass q += h q-dot, and the bodies' displacement and rotation
//     since the step start advance by J q-dot h (the contacts' separation updates read them);
//     forward kinematics places the bodies before the next substep's M and C, and at the end.
// The Jacobians J of the contact rows and of wrenches on tree bodies (axes, anchors, COMs) are
// the step start's: within a step the contact rows and the tree agree on one linearization, as
// the maximal path's rows hold their anchors and inverse inertias for the step. The world's body arrays keep ordinary
// maximal states (pose from q, velocity J(q) q-dot), which is what contacts, observations and
// the dataset read; every step starts by reading q and q-dot back from them (a hinge angle from
// the relative orientation, unwrapped into the joint's range when it is limited), and ends by
// placing them from q (forward kinematics), which keeps them on their joints (PrepareTree).
//
// Everything here lives in the step's scratch (TreeScratchSize Reals, rebuilt every step from the
// world's current parameters), so a parameter change or a state upload reaches the next step
// with nothing cached to invalidate.
#pragma once

#include "kernels/dense.h"
#include "kernels/model_view.h"
#include "kernels/solver_body.h"

namespace s2r {

// how far a joint moves within a physics step before a later substep rebuilds M and C there
// (TreeRefreshDynamics): rad for a hinge, m for a slide
constexpr Real kTreeRefreshTurn = Real(1e-2);
constexpr Real kTreeRefreshSlide = Real(1e-3);

// relative size below which a joint-space row entry is cancellation noise (TreeRowResponse)
constexpr Real kTreeRowCancellation = Real(1e-5);

// Most joints (= bodies) in articulated trees per model; trees beyond it stay in maximal
// coordinates. 32: two 7-axis arms with their grippers, or a humanoid's limbs on a fixed torso.
constexpr int kMaxTreeDofs = 32;

struct TreeSet {
  int32_t count = 0;                // R
  const int32_t* body = nullptr;    // (R) body of each rank (the model's tree_body), parents first
  const int32_t* parent = nullptr;  // (R) rank of the parent body, -1 when it is fixed
  SolverBody* bodies = nullptr;     // the world's solver bodies
  Real* minv = nullptr;             // (R, R) M^-1
  Real* factor = nullptr;           // (R, R) M and its Cholesky factor (scratch)
  Real* axis = nullptr;             // (R, 3) joint axis, world, step start
  Real* anchor = nullptr;           // (R, 3) joint anchor (the child's), world, step start, m
  Real* com0 = nullptr;             // (R, 3) body COM, world, step start, m
  const Real* q_prev = nullptr;     // (njoint) joint positions at the last step's end (joint_q)
  Real* axis_now = nullptr;         // (R, 3) joint axis, world, last forward kinematics
  Real* anchor_now = nullptr;       // (R, 3) joint anchor, world, last forward kinematics, m
  Real* inertia_now = nullptr;      // (R, 9) body inertia about its COM, world frame, row-major,
                                    // at the last TreeMassMatrix (its configuration), kg m^2
  Real* inv_mass = nullptr;         // (R) 1 / body mass, 1/kg
  Real* q = nullptr;                // (R) joint coordinate, rad or m
  Real* qdot = nullptr;             // (R) joint rate: the tree's velocity, rad/s or m/s
  Real* bias_dq = nullptr;          // (R) -M^-1 C: q-dot change per second without forces
  Real* q_built = nullptr;          // (R) q of the last TreeMassMatrix (TreeRefreshDynamics)
  uint32_t hinge = 0;               // bit k: rank k's joint is a hinge
  uint32_t weld = 0;                // bit k: rank k is welded to its parent (no coordinate: q and
                                    // q-dot stay 0, its Jacobian column is zero, M_kk = 1)
  uint32_t ball = 0;                // bit k: rank k is the first hinge of a ball joint (ranks k,
                                    // k + 1, k + 2: about x, y, z; TreeRebaseBall)
  Real* chart = nullptr;            // (R, 4) a ball's first hinge: parent^-1 * child rotation where
                                    // its three angles are 0 (in place of joint_qrel0), w x y z
};
static_assert(kMaxTreeDofs <= 32, "joint-kind masks are 32-bit");

S2R_HD int TreeScratchSize(int r) { return 2 * r * r + 15 * r + 4 * r + 9 * r + r + 4 * r; }

S2R_HD TreeSet MakeTreeSet(const ModelView& m, SolverBody* bodies, Real* scratch) {
  TreeSet t;
  int r = m.ntree;
  t.count = scratch != nullptr ? r : 0;
  t.body = m.tree_body;
  t.parent = m.tree_parent;
  t.bodies = bodies;
  if (t.count == 0) return t;
  t.minv = scratch;
  t.factor = t.minv + r * r;
  t.axis = t.factor + r * r;
  t.anchor = t.axis + 3 * r;
  t.com0 = t.anchor + 3 * r;
  t.axis_now = t.com0 + 3 * r;
  t.anchor_now = t.axis_now + 3 * r;
  t.inv_mass = t.anchor_now + 3 * r;
  t.q = t.inv_mass + r;
  t.qdot = t.q + r;
  t.bias_dq = t.qdot + r;
  t.inertia_now = t.bias_dq + r;
  t.q_built = t.inertia_now + 9 * r;
  t.chart = t.q_built + r;
  for (int k = 0; k < r; ++k) {
    const int j = m.body_joint[t.body[k]];
    int type = m.joint_type[j];
    if (type == kJointHinge) t.hinge |= 1u << k;
    if (type == kJointWeld) t.weld |= 1u << k;
    if (m.joint_part[j] == 1) t.ball |= 1u << k;
  }
  return t;
}

S2R_HDI bool TreeIsHinge(const TreeSet& t, int k) { return (t.hinge >> k) & 1u; }
S2R_HDI bool TreeIsWeld(const TreeSet& t, int k) { return (t.weld >> k) & 1u; }
S2R_HDI bool TreeIsBall(const TreeSet& t, int k) { return (t.ball >> k) & 1u; }
// joint j is one of a ball's (or a floating base's rotation's) three hinges
S2R_HDI bool TreeIsBallPart(const ModelView& m, int j) { return m.joint_part[j] >= 1 && m.joint_part[j] <= 3; }

// Ball joints. MJCF's ball is three hinges here, about the child's x, y and z axes through its
// anchor (ranks k, k + 1, k + 2; the loader inserts the massless links between them), so the
// tree's one-coordinate-per-rank algebra carries it unchanged. The three angles are local
// coordinates, not a global parametrization: every step starts them at 0 in the orientation the
// ball has reached -- its chart, the parent^-1 * child rotation there, takes the place of the
// first hinge's reference rotation -- so at the step start the three axes are the child's,
// orthogonal, and the rates are the child's angular velocity relative to the parent in its own
// frame (MuJoCo's ball qvel). Within a step (or a control step's physics steps) the angles stay
// small, far from the middle hinge's 90 degrees where Euler angles lock; an orientation is never
// stored as angles. The links are placed on the chart (the child keeps its pose).
S2R_HD void TreeRebaseBall(const ModelView& m, const TreeSet& t, int k) {
  SolverBody& child = t.bodies[t.body[k + 2]];
  const SolverBody& sp = t.bodies[m.body_parent[t.body[k]]];
  const Quat chart = NormalizeQuat(Conjugate(sp.rot) * child.rot);
  StoreQuat(t.chart + 4 * k, chart);
  const Quat rot = NormalizeQuat(sp.rot * chart);
  const Vec3 w_rel = child.w - sp.w;
  const int j = m.body_joint[t.body[k]];
  const Vec3 anchor = sp.com + Rotate(sp.rot, LoadVec3(m.joint_pos_parent + 3 * j) - sp.ipos);
  for (int i = 0; i < 3; ++i) {
    const int ji = m.body_joint[t.body[k + i]];
    t.q[k + i] = Real(0);
    t.qdot[k + i] = Dot(w_rel, Rotate(rot, LoadVec3(m.joint_axis_child + 3 * ji)));
    if (i == 2) break;
    SolverBody& link = t.bodies[t.body[k + i]];
    link.rot = rot;
    link.com = anchor + Rotate(rot, link.ipos - LoadVec3(m.joint_pos_child + 3 * ji));
  }
}

// A ball's position as joint_q reports it: the rotation vector (rad) of the child's orientation
// relative to its reference one (joint_qrel0 of the ball's first hinge), in the child's reference
// frame; x, y, z on the ball's three hinges.
S2R_HD Vec3 BallRotationVector(Quat parent_rot, Quat child_rot, Quat qrel0) {
  Quat d = NormalizeQuat(Conjugate(parent_rot * qrel0) * child_rot);
  if (d.w < Real(0)) d = Quat{-d.w, -d.x, -d.y, -d.z};
  const Vec3 v{d.x, d.y, d.z};
  const Real s = Length(v);
  if (!(s > Real(0))) return Vec3{0, 0, 0};
  return (Real(2) * Atan2(s, d.w) / s) * v;
}

// Column k of tree body c's Jacobian (k an ancestor of c or c itself), step-start configuration:
// the linear velocity of c's COM and its angular velocity per unit q-dot_k.
S2R_HDI void TreeJacobianColumn(const TreeSet& t, int k, Vec3 com, Vec3* lin, Vec3* ang) {
  Vec3 a = LoadVec3(t.axis + 3 * k);
  if (TreeIsHinge(t, k)) {
    *lin = Cross(a, com - LoadVec3(t.anchor + 3 * k));
    *ang = a;
  } else if (TreeIsWeld(t, k)) {
    *lin = Vec3{0, 0, 0};
    *ang = Vec3{0, 0, 0};
  } else {
    *lin = a;
    *ang = Vec3{0, 0, 0};
  }
}

// tree body c's velocity J_c q-dot (step-start Jacobian)
S2R_HD void TreeBodyVelocity(const TreeSet& t, int c, Vec3* v, Vec3* w) {
  Vec3 com = LoadVec3(t.com0 + 3 * c);
  Vec3 lv{0, 0, 0}, av{0, 0, 0};
  for (int k = c; k >= 0; k = t.parent[k]) {
    Vec3 lin, ang;
    TreeJacobianColumn(t, k, com, &lin, &ang);
    lv += t.qdot[k] * lin;
    av += t.qdot[k] * ang;
  }
  *v = lv;
  *w = av;
}

// generalized impulse on rank k's joint: q-dot += M^-1 e_k impulse. Joints of other trees (and
// welded ranks) do not couple: their entries are exact zeros and add nothing. No test on the
// entries, so the loop vectorizes (with a test per entry the Panda's step ran 1.3 % more
// instructions).
S2R_HD void TreeJointImpulse(const TreeSet& t, int k, Real impulse) {
  const int r = t.count;
  const Real* row = t.minv + k * r;
  for (int i = 0; i < r; ++i) t.qdot[i] += impulse * row[i];
}

// joint-space form of a wrench (force f through the COM, torque t) on tree body c, added to tau;
// scale (optional) collects a bound on each entry's magnitude before cancellation
S2R_HD void TreeAddWrench(const TreeSet& t, int c, Vec3 f, Vec3 torque, Real* tau,
                          Real* scale = nullptr) {
  Vec3 com = LoadVec3(t.com0 + 3 * c);
  for (int k = c; k >= 0; k = t.parent[k]) {
    Vec3 lin, ang;
    TreeJacobianColumn(t, k, com, &lin, &ang);
    tau[k] += Dot(lin, f) + Dot(ang, torque);
    if (scale != nullptr) scale[k] += Length(lin) * Length(f) + Length(ang) * Length(torque);
  }
}

// wrench on tree body c: q-dot += M^-1 J_c^T (f, t)
S2R_HD void TreeBodyImpulse(const TreeSet& t, int c, Vec3 f, Vec3 torque) {
  const int r = t.count;
  Real tau[kMaxTreeDofs];
  for (int k = 0; k < r; ++k) tau[k] = Real(0);
  TreeAddWrench(t, c, f, torque, tau);
  for (int k = c; k >= 0; k = t.parent[k]) TreeJointImpulse(t, k, tau[k]);
}

// The velocity changes of tree bodies a and b (ranks, -1: not a tree body) when wrench (fa, ta)
// acts on a and (fb, tb) on b: J_x M^-1 (J_a^T (fa, ta) + J_b^T (fb, tb)) for x = a, b.
S2R_HD void TreeRowResponse(const TreeSet& t, int a, Vec3 fa, Vec3 ta, int b, Vec3 fb, Vec3 tb,
                            Vec3* dva, Vec3* dwa, Vec3* dvb, Vec3* dwb) {
  const int r = t.count;
  Real tau[kMaxTreeDofs], scale[kMaxTreeDofs], x[kMaxTreeDofs];
  for (int k = 0; k < r; ++k) {
    tau[k] = Real(0);
    scale[k] = Real(0);
    x[k] = Real(0);
  }
  if (a >= 0) TreeAddWrench(t, a, fa, ta, tau, scale);
  if (b >= 0) TreeAddWrench(t, b, fb, tb, tau, scale);
  for (int k = 0; k < r; ++k) {
    // A row the joint cannot move (a normal along a hinge's axis, or two bodies' terms above
    // their common ancestor) sums to rounding noise, not zero: dropped, or the row's effective
    // mass 1 / (j M^-1 j) would be ~1e12 and its impulse times that noise would fling the tree.
    if (Abs(tau[k]) <= kTreeRowCancellation * scale[k]) continue;
    for (int i = 0; i < r; ++i) x[i] += t.minv[k * r + i] * tau[k];
  }
  Vec3 zero{0, 0, 0};
  *dva = zero;
  *dwa = zero;
  *dvb = zero;
  *dwb = zero;
  const int ranks[2] = {a, b};
  Vec3* dv[2] = {dva, dvb};
  Vec3* dw[2] = {dwa, dwb};
  for (int s = 0; s < 2; ++s) {
    int c = ranks[s];
    if (c < 0) continue;
    Vec3 com = LoadVec3(t.com0 + 3 * c);
    for (int k = c; k >= 0; k = t.parent[k]) {
      Vec3 lin, ang;
      TreeJacobianColumn(t, k, com, &lin, &ang);
      *dv[s] += x[k] * lin;
      *dw[s] += x[k] * ang;
    }
  }
}

// Pushing a penetration out along a row costs the tree kinetic energy bias^2 / (2 k), k the row's
// inverse effective mass J M^-1 J^T: for a direction the joints can barely move (two links of one
// arm interpenetrating across a hinge's axis, a base link in the table) k is tiny and the push
// would fling the arm (the maximal path's bodies slide off their soft locks instead). The push
// velocity is scaled by sqrt(k / k_free), k_free the row's inverse mass were the tree bodies free,
// so the energy is at most what the free bodies would take; rows the tree moves as easily as a
// free body push as before.
S2R_HD Real TreePushScale(Real k, Real k_free) {
  if (!(k > Real(0)) || !(k_free > Real(0))) return Real(0);
  return k >= k_free ? Real(1) : Sqrt(k / k_free);
}
// a tree body's own free-body inverse mass along a linear row (direction d, angular part ang)
S2R_HD Real TreeFreeMobility(const TreeSet& t, const SolverBody& b, Vec3 ang, Vec3 d) {
  (void)d;
  Mat3 inv_i = RotateDiagonal(QuatToMat3(b.rot * b.iquat),
                              Vec3{Real(1) / b.inertia.x, Real(1) / b.inertia.y, Real(1) / b.inertia.z});
  return t.inv_mass[b.tree] + Dot(ang, inv_i * ang);
}

// Forward kinematics from q and q-dot: every tree body's pose and velocity, parents first (a
// root's parent is fixed, a tree parent already placed; a weld is a slide held at q = 0). record:
// also store the step-start axes, anchors and COMs (the Jacobian of this step). place = false
// keeps the bodies' poses as they are (they must already sit on their joints at q: see
// PrepareTree) and derives only the axes, anchors and velocities from them.
S2R_HOST_AVX2 S2R_HD void TreeForward(const ModelView& m, const TreeSet& t, bool record, bool place = true) {
  for (int k = 0; k < t.count; ++k) {
    int b = t.body[k];
    int j = m.body_joint[b];
    SolverBody& sb = t.bodies[b];
    const SolverBody& sp = t.bodies[m.body_parent[b]];
    // a ball's first hinge turns from its chart (TreeRebaseBall), any other joint from the
    // reference configuration
    const bool ball = TreeIsBall(t, k);
    const Quat qrel = ball ? LoadQuat(t.chart + 4 * k) : LoadQuat(m.joint_qrel0 + 4 * j);
    Vec3 axis = ball ? Rotate(sp.rot * qrel, LoadVec3(m.joint_axis_child + 3 * j))
                     : Rotate(sp.rot, LoadVec3(m.joint_axis_parent + 3 * j));
    Vec3 anchor = sp.com + Rotate(sp.rot, LoadVec3(m.joint_pos_parent + 3 * j) - sp.ipos);
    Vec3 w = sp.w;
    if (TreeIsHinge(t, k)) {
      w += t.qdot[k] * axis;
    } else {
      anchor += t.q[k] * axis;
    }
    if (place) {
      Quat rot = sp.rot * qrel;
      if (TreeIsHinge(t, k)) rot = rot * QuatFromAxisAngle(LoadVec3(m.joint_axis_child + 3 * j), t.q[k]);
      sb.rot = NormalizeQuat(rot);
      sb.com = anchor + Rotate(sb.rot, sb.ipos - LoadVec3(m.joint_pos_child + 3 * j));
    }
    // the anchor moves with the parent (plus the slide's rate); the child turns about it at w
    Vec3 v_anchor = sp.v + Cross(sp.w, anchor - sp.com);
    if (!TreeIsHinge(t, k)) v_anchor += t.qdot[k] * axis;
    sb.v = v_anchor + Cross(w, sb.com - anchor);
    sb.w = w;
    StoreVec3(t.axis_now + 3 * k, axis);
    StoreVec3(t.anchor_now + 3 * k, anchor);
    if (record) {
      StoreVec3(t.axis + 3 * k, axis);
      StoreVec3(t.anchor + 3 * k, anchor);
      StoreVec3(t.com0 + 3 * k, sb.com);
    }
  }
}

// TreeForward's velocities alone, for a configuration TreeForward placed and nothing moved since
// (q unchanged, only q-dot): the same expressions on the poses, axes and anchors it left, so the
// bodies' velocities come out bit-identical to a full TreeForward's, without its rotations.
S2R_HD void TreeForwardVelocity(const TreeSet& t, const int32_t* body_parent) {
  for (int k = 0; k < t.count; ++k) {
    SolverBody& sb = t.bodies[t.body[k]];
    const SolverBody& sp = t.bodies[body_parent[t.body[k]]];
    Vec3 axis = LoadVec3(t.axis_now + 3 * k);
    Vec3 anchor = LoadVec3(t.anchor_now + 3 * k);
    Vec3 w = sp.w;
    if (TreeIsHinge(t, k)) w += t.qdot[k] * axis;
    Vec3 v_anchor = sp.v + Cross(sp.w, anchor - sp.com);
    if (!TreeIsHinge(t, k)) v_anchor += t.qdot[k] * axis;
    sb.v = v_anchor + Cross(w, sb.com - anchor);
    sb.w = w;
  }
}

// Bias forces C (gravity, Coriolis, centrifugal, gyroscopic) in the bodies' current configuration
// (the last forward kinematics) and bias_dq = -M^-1 C with this step's M^-1. The world inertias
// are the ones TreeMassMatrix stored for that configuration (inertia_now).
S2R_HOST_AVX2 S2R_HD void TreeBias(const ModelView& m, int world, const TreeSet& t, Vec3 gravity) {
  // bias C: recursive Newton-Euler with zero joint acceleration. Forward: each body's angular
  // acceleration and COM acceleration from its parent's and the joint's rate (a fixed parent
  // does not move); backward: each subtree's wrench (the bodies' m (a - g) and I alpha + w x I w)
  // about its joint's anchor, children folded into parents, projected on that joint. O(R): one
  // fold per body (a sum over every body's ancestors was O(R x depth)).
  const int r = t.count;
  const Real* mass = m.body_mass.At(world);
  Real c_bias[kMaxTreeDofs];
  // acc / alpha hold each body's COM and angular acceleration, then (second loop) its own wrench,
  // force and torque about its joint anchor, then (the fold) its subtree's: one pair of arrays
  // instead of two keeps the device's stack frame (local memory) from growing by 768 B
  Vec3 acc[kMaxTreeDofs], alpha[kMaxTreeDofs];
  for (int k = 0; k < r; ++k) {
    const SolverBody& sb = t.bodies[t.body[k]];
    int p = t.parent[k];
    const SolverBody& sp = t.bodies[m.body_parent[t.body[k]]];
    Vec3 acc_p = p >= 0 ? acc[p] : Vec3{0, 0, 0};
    Vec3 alpha_p = p >= 0 ? alpha[p] : Vec3{0, 0, 0};
    Vec3 w_p = p >= 0 ? sp.w : Vec3{0, 0, 0};
    Vec3 a = LoadVec3(t.axis_now + 3 * k);
    Vec3 anchor = LoadVec3(t.anchor_now + 3 * k);
    Vec3 d = anchor - sp.com;
    Vec3 acc_anchor = acc_p + Cross(alpha_p, d) + Cross(w_p, Cross(w_p, d));
    if (TreeIsHinge(t, k)) {
      alpha[k] = alpha_p + Cross(w_p, t.qdot[k] * a);
    } else {
      alpha[k] = alpha_p;
      acc_anchor += Real(2) * Cross(w_p, t.qdot[k] * a);  // Coriolis of the sliding anchor
    }
    Vec3 e = sb.com - anchor;
    acc[k] = acc_anchor + Cross(alpha[k], e) + Cross(sb.w, Cross(sb.w, e));
  }
  Vec3* force = acc;    // from here: subtree force
  Vec3* moment = alpha;  // and torque about the joint anchor
  for (int k = 0; k < r; ++k) {
    const SolverBody& sb = t.bodies[t.body[k]];
    Vec3 e = sb.com - LoadVec3(t.anchor_now + 3 * k);
    Real mk = mass[t.body[k]];
    // gravity, less the body's gravity compensation (MJCF gravcomp), in C with the current J
    Vec3 f = mk * (acc[k] - (Real(1) - m.body_gravcomp.At(world)[t.body[k]]) * gravity);
    Mat3 ib;
    for (int i = 0; i < 9; ++i) ib.m[i / 3][i % 3] = t.inertia_now[9 * k + i];
    Vec3 torque = ib * alpha[k] + Cross(sb.w, ib * sb.w);
    force[k] = f;
    moment[k] = torque + Cross(e, f);
  }
  // leaves first: a rank's children come after it, so they are folded in before it is read
  const Real* stiffness = m.joint_stiffness.At(world);
  const Real* springref = m.joint_springref.At(world);
  for (int k = r - 1; k >= 0; --k) {
    Vec3 a = LoadVec3(t.axis_now + 3 * k);
    c_bias[k] = TreeIsWeld(t, k) ? Real(0) : TreeIsHinge(t, k) ? Dot(a, moment[k]) : Dot(a, force[k]);
    // the joint's spring (MJCF stiffness, springref), explicit as in MuJoCo's passive forces
    const int j = m.body_joint[t.body[k]];
    if (!TreeIsBallPart(m, j)) c_bias[k] += stiffness[j] * (t.q[k] - springref[j]);
    int p = t.parent[k];
    if (p < 0) continue;
    Vec3 lever = LoadVec3(t.anchor_now + 3 * k) - LoadVec3(t.anchor_now + 3 * p);
    force[p] += force[k];
    moment[p] += moment[k] + Cross(lever, force[k]);
  }
  if (t.ball != 0) {
    // A ball's armature acts on the rate of change of its child-frame angular velocity w (MuJoCo's
    // ball coordinates), where M carries it on the angles' accelerations: at the chart (angles 0)
    // w = q-dot but w-dot = q-ddot + (q1' q2', -q0' q2', q0' q1'), so the difference, armature
    // times that product, is a bias force. Without it a ball with armature drifts from MuJoCo by an
    // amount that does not shrink with the step (31 mm in 1 s for a pendulum with 0.001 kg m^2).
    // A ball's spring (MJCF stiffness): torque -stiffness times its rotation vector from the
    // reference orientation, in the child's frame (MuJoCo's), on the three hinges.
    const Real* armature = m.joint_armature.At(world);
    for (int k = 0; k < r; ++k) {
      if (!TreeIsBall(t, k)) continue;
      const Real* qd = t.qdot + k;
      const int j = m.body_joint[t.body[k]];
      c_bias[k] += armature[j] * qd[1] * qd[2];
      c_bias[k + 1] -= armature[j + 1] * qd[0] * qd[2];
      c_bias[k + 2] += armature[j + 2] * qd[0] * qd[1];
      if (stiffness[j] != Real(0) || stiffness[j + 1] != Real(0) || stiffness[j + 2] != Real(0)) {
        const Vec3 v = BallRotationVector(t.bodies[m.body_parent[t.body[k]]].rot, t.bodies[t.body[k + 2]].rot,
                                          LoadQuat(m.joint_qrel0 + 4 * j));
        c_bias[k] += stiffness[j] * v.x;
        c_bias[k + 1] += stiffness[j + 1] * v.y;
        c_bias[k + 2] += stiffness[j + 2] * v.z;
      }
    }
  }
  for (int i = 0; i < r; ++i) {
    Real dq = Real(0);
    for (int k = 0; k < r; ++k) dq -= t.minv[i * r + k] * c_bias[k];
    t.bias_dq[i] = dq;
  }
}

// M(q) in the bodies' current configuration (the last forward kinematics), factored and
// inverted, then the bias response. false: M cannot be factored.
S2R_HOST_AVX2 S2R_HD bool TreeMassMatrix(const ModelView& m, int world, const TreeSet& t, Vec3 gravity) {
  const int r = t.count;
  // composite rigid bodies: mass, COM and inertia (world, about the composite's COM) of each
  // rank's subtree, children folded into parents
  const Real* mass = m.body_mass.At(world);
  Real cm[kMaxTreeDofs];
  Vec3 cc[kMaxTreeDofs];
  Mat3 ci[kMaxTreeDofs];
  for (int k = 0; k < r; ++k) {
    const SolverBody& sb = t.bodies[t.body[k]];
    cm[k] = mass[t.body[k]];
    cc[k] = sb.com;
    ci[k] = RotateDiagonal(QuatToMat3(sb.rot * sb.iquat), sb.inertia);
    // kept for TreeBias, here and after the solve pass (TreeCorrectBias): same configuration
    for (int e = 0; e < 9; ++e) t.inertia_now[9 * k + e] = ci[k].m[e / 3][e % 3];
  }
  for (int k = r - 1; k >= 0; --k) {
    int p = t.parent[k];
    if (p < 0) continue;
    Real mt = cm[p] + cm[k];
    Vec3 c = (Real(1) / mt) * (cm[p] * cc[p] + cm[k] * cc[k]);
    // parallel axis: I + m (|d|^2 E - d d^T), d from the new COM
    Vec3 dp = cc[p] - c, dk = cc[k] - c;
    const Real vp[3] = {dp.x, dp.y, dp.z}, vk[3] = {dk.x, dk.y, dk.z};
    const Real lp = cm[p] * LengthSq(dp), lk = cm[k] * LengthSq(dk);
    Mat3 sum;
    for (int i = 0; i < 3; ++i) {
      for (int e = 0; e < 3; ++e) {
        sum.m[i][e] = ci[p].m[i][e] + ci[k].m[i][e] - cm[p] * vp[i] * vp[e] - cm[k] * vk[i] * vk[e];
      }
      sum.m[i][i] += lp + lk;
    }
    cm[p] = mt;
    cc[p] = c;
    ci[p] = sum;
  }
  // M_ik (i = k or an ancestor of k): S_i . wrench of k's subtree moved by unit S_k
  Real* mm = t.factor;
  for (int e = 0; e < r * r; ++e) mm[e] = Real(0);
  for (int k = 0; k < r; ++k) {
    if (TreeIsWeld(t, k)) continue;
    Vec3 ak = LoadVec3(t.axis_now + 3 * k);
    Vec3 f, torque_c;  // momentum of the subtree: linear, and angular about its COM
    if (TreeIsHinge(t, k)) {
      f = cm[k] * Cross(ak, cc[k] - LoadVec3(t.anchor_now + 3 * k));
      torque_c = ci[k] * ak;
    } else {
      f = cm[k] * ak;
      torque_c = Vec3{0, 0, 0};
    }
    for (int i = k; i >= 0; i = t.parent[i]) {
      if (TreeIsWeld(t, i)) continue;
      Vec3 ai = LoadVec3(t.axis_now + 3 * i);
      Real v = TreeIsHinge(t, i) ? Dot(ai, torque_c + Cross(cc[k] - LoadVec3(t.anchor_now + 3 * i), f))
                                 : Dot(ai, f);
      mm[i * r + k] = v;
      mm[k * r + i] = v;
    }
  }
  const Real* armature = m.joint_armature.At(world);
  for (int k = 0; k < r; ++k) {
    mm[k * r + k] += TreeIsWeld(t, k) ? Real(1) : armature[m.body_joint[t.body[k]]];
  }

  // M^-1 by a dense Cholesky factorization (kernels/dense.h)
  if (!SpdInverse<kMaxTreeDofs>(mm, t.minv, r)) return false;
  for (int k = 0; k < r; ++k) t.q_built[k] = t.q[k];

  TreeBias(m, world, t, gravity);
  return true;
}

// Whether a joint has moved further than kTreeRefreshTurn (a hinge) or kTreeRefreshSlide (a slide)
// since M^-1 was built (q_built).
S2R_HD bool TreeMovedFar(const TreeSet& t) {
  bool far = false;
  for (int k = 0; k < t.count; ++k) {
    const Real moved_by = Abs(t.q[k] - t.q_built[k]);
    far = far || moved_by > (TreeIsHinge(t, k) ? kTreeRefreshTurn : kTreeRefreshSlide);
  }
  return far;
}

// Once per physics step, after the bodies are loaded: q and q-dot read from the bodies, the bodies
// projected onto them (forward kinematics), then M^-1 and the bias response. Returns false when M
// cannot be factored (a massless leaf without armature): the caller flags the world.
S2R_HD bool PrepareTree(const ModelView& m, int world, const TreeSet& t, Vec3 gravity,
                        bool carried = false) {
  const int r = t.count;
  if (r == 0) return true;
  if (carried) {
    // The last physics step of this control step left q, q-dot and the forward kinematics of its
    // end (TreeFinishStep) in this scratch, and the bodies were stored from them and loaded back:
    // the step starts from that q and q-dot, and the Jacobian of this step is that configuration's.
    // Nothing outside the step can change the parameters or the state between the physics steps
    // of one control step (ControlStep), so nothing is stale; reading q back from the poses
    // (an arctangent per hinge) and deriving the axes again cost 11 % of the Panda's step.
    // Ball joints are re-based at every step (their angles back to 0), and the axes derived. M^-1
    // was built in an earlier chart: to first order it is as far from this one as the ball has
    // turned since, so the angles it turned in the last chart (its q at the step's end) come off
    // the angles it was built at, and the rule below holds it as for a hinge.
    if (t.ball != 0) {
      for (int k = 0; k < r; ++k) {
        if (!TreeIsBall(t, k)) continue;
        for (int i = 0; i < 3; ++i) t.q_built[k + i] -= t.q[k + i];
        TreeRebaseBall(m, t, k);
        k += 2;
      }
      TreeForward(m, t, true, false);
      if (!TreeMovedFar(t)) {
        TreeBias(m, world, t, gravity);
        return true;
      }
      return TreeMassMatrix(m, world, t, gravity);
    }
    for (int k = 0; k < r; ++k) {
      for (int e = 0; e < 3; ++e) {
        t.axis[3 * k + e] = t.axis_now[3 * k + e];
        t.anchor[3 * k + e] = t.anchor_now[3 * k + e];
      }
      StoreVec3(t.com0 + 3 * k, t.bodies[t.body[k]].com);
    }
    // M^-1 (and the world inertias TreeBias reads) carry over too while no joint has moved
    // further than the substeps' refresh rule allows since they were built (TreeRefreshDynamics):
    // at a 2 ms step a joint turning at 1 rad/s rebuilds them every fifth step. The first physics
    // step of a control step always builds them.
    if (!TreeMovedFar(t)) {
      TreeBias(m, world, t, gravity);
      return true;
    }
    return TreeMassMatrix(m, world, t, gravity);
  }
  // q and q-dot relative to the parent as loaded (relative quantities: the projection below only
  // removes the drift of the stored poses)
  for (int k = 0; k < r; ++k) {
    if (TreeIsBall(t, k)) {  // its three ranks: angles 0 in the orientation reached
      TreeRebaseBall(m, t, k);
      k += 2;
      continue;
    }
    int b = t.body[k];
    int j = m.body_joint[b];
    SolverBody& sb = t.bodies[b];
    const SolverBody& sp = t.bodies[m.body_parent[b]];
    Vec3 axis = Rotate(sp.rot, LoadVec3(m.joint_axis_parent + 3 * j));
    Quat base = sp.rot * LoadQuat(m.joint_qrel0 + 4 * j);
    if (TreeIsWeld(t, k)) {
      t.q[k] = Real(0);
      t.qdot[k] = Real(0);
    } else if (TreeIsHinge(t, k)) {
      Quat rel = Conjugate(base) * sb.rot;
      if (rel.w < Real(0)) rel = Quat{-rel.w, -rel.x, -rel.y, -rel.z};
      Real q = Real(2) * Atan2(Dot(Vec3{rel.x, rel.y, rel.z}, LoadVec3(m.joint_axis_child + 3 * j)), rel.w);
      if (m.joint_limited[j]) {
        // the angle is read modulo 2 pi: take the turn nearest the range (ranges may pass pi)
        const Real* range = m.joint_range.At(world) + 2 * j;
        Real mid = Real(0.5) * (range[0] + range[1]);
        const Real two_pi = Real(6.283185307179586);
        while (q - mid > Real(0.5) * two_pi) q -= two_pi;
        while (mid - q > Real(0.5) * two_pi) q += two_pi;
      } else if (t.q_prev != nullptr) {
        // an unlimited hinge keeps its turns: the angle nearest the last step's
        q = UnwrapNear(q, t.q_prev[j]);
      }
      t.q[k] = q;
      t.qdot[k] = Dot(sb.w - sp.w, axis);
    } else {
      Vec3 pa = sp.com + Rotate(sp.rot, LoadVec3(m.joint_pos_parent + 3 * j) - sp.ipos);
      Vec3 pb = sb.com + Rotate(sb.rot, LoadVec3(m.joint_pos_child + 3 * j) - sb.ipos);
      t.q[k] = Dot(pb - pa, axis);
      t.qdot[k] = Dot(sb.v - (sp.v + Cross(sp.w, sb.com - sp.com)), axis);
    }
  }
  // The poses as loaded are the last step's forward kinematics (TreeFinishStep), stored and
  // loaded unchanged, so they already sit on their joints at q (to rounding: q is read back from
  // them): they are kept, and only the step's axes, anchors and velocities are derived. Placing
  // them again cost 4 % of the Panda's step (its sines, cosines and quaternion products). A state
  // written from outside with tree bodies off their joints is projected by its first step's end.
  TreeForward(m, t, true, false);
  for (int k = 0; k < r; ++k) t.inv_mass[k] = Real(1) / m.body_mass.At(world)[t.body[k]];
  return TreeMassMatrix(m, world, t, gravity);
}

// Before each later substep (moved): forward kinematics places the bodies at the current q, and
// M^-1 and the bias forces are rebuilt there; TreeCorrectBias then corrects the velocity-dependent
// terms at the substep's end. Per substep, not per step, and the correction, because the smooth
// dynamics are then semi-implicit Euler at the substep with trapezoidal Coriolis terms: on
// hinge_chain.xml (a 0.01 s step of four substeps) the chain ended 58 mm off MuJoCo's reference
// after 2 s with M held for the step, 15 mm with M and C per substep, 5 mm with the correction
// (the maximal path: 5 mm; MuJoCo's own Euler at 0.0025 s: 18 mm). (An explicit midpoint in the
// rates, which ignores damping and constraints, made the chain without armature worse: 38 mm.)
// The contact rows' Jacobian stays the step start's. false: M cannot be factored.
S2R_HD bool TreeRefreshDynamics(const ModelView& m, int world, const TreeSet& t, Vec3 gravity,
                                bool moved) {
  if (t.count == 0) return true;
  if (!moved) return true;  // PrepareTree built them for the step start
  TreeForward(m, t, false);
  // M^-1 is kept while no joint has moved further than kTreeRefreshTurn (a hinge) or
  // kTreeRefreshSlide (a slide) since it was built: M changes by about that fraction (MuJoCo's
  // Euler holds it for its whole step). The bias forces are rebuilt at every substep: gravity's
  // torque turns with the links (a pendulum's M is constant, its C is not).
  if (!TreeMovedFar(t)) {
    TreeBias(m, world, t, gravity);
    return true;
  }
  return TreeMassMatrix(m, world, t, gravity);
}

// After a substep's solve pass (rates known at its end): the bias forces' change over the
// substep, half of it, as a trapezoidal correction of the velocity-dependent terms:
// q-dot += h/2 (a(q, q-dot_end) - a(q, q-dot_start)), a = -M^-1 C.
S2R_HD void TreeCorrectBias(const ModelView& m, int world, const TreeSet& t, Vec3 gravity, Real h) {
  if (t.count == 0) return;
  Real before[kMaxTreeDofs];
  for (int k = 0; k < t.count; ++k) before[k] = t.bias_dq[k];
  // q has not moved since the substep start's forward kinematics (PrepareTree or
  // TreeRefreshDynamics): only the velocities change
  TreeForwardVelocity(t, m.body_parent);
  TreeBias(m, world, t, gravity);
  for (int k = 0; k < t.count; ++k) t.qdot[k] += Real(0.5) * h * (t.bias_dq[k] - before[k]);
}

// smooth dynamics over a substep on the joint rates
S2R_HD void TreeIntegrateVelocity(const TreeSet& t, Real h) {
  for (int k = 0; k < t.count; ++k) t.qdot[k] += h * t.bias_dq[k];
}

// the step's end: every tree body's pose from q and velocity J(q) q-dot
S2R_HD void TreeFinishStep(const ModelView& m, const TreeSet& t) {
  if (t.count > 0) TreeForward(m, t, false);
}

// Position stage of a substep: q += h q-dot, and the bodies' displacement and rotation since the
// step start advanced by their velocities J q-dot (what the contacts' separation updates read, to
// first order like a free body's). Within a step nothing reads the tree bodies' poses (the rows
// use the step start's anchors and Jacobian), so forward kinematics runs once, at the step's end
// (TreeFinishStep), not per substep.
// Without contact points in the step nothing reads the displacements (track = false): q alone.
S2R_HD void TreeIntegratePosition(const TreeSet& t, Real h, bool track = true) {
  for (int k = 0; k < t.count; ++k) {
    if (!track) {
      t.q[k] += h * t.qdot[k];
      continue;
    }
    Vec3 v, w;
    TreeBodyVelocity(t, k, &v, &w);
    SolverBody& sb = t.bodies[t.body[k]];
    sb.delta_pos += h * v;
    sb.delta_angle += h * w;
    t.q[k] += h * t.qdot[k];
  }
}

}  // namespace s2r
