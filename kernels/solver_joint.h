// Maximal-coordinate joints: the lock rows of each joint solved as one block (its Cholesky factor
// per substep), or every lock row of a world as one block (the lock block, at most
// kMaxTreeLockRows rows), with the joint's axis rows (solver_axis.h) between. Joints in slide or
// articulated trees (solver_reduced.h, solver_tree.h) have no lock rows and do not come here.
#pragma once

#include "kernels/dense.h"
#include "kernels/joint_rows.h"
#include "kernels/solver_axis.h"

namespace s2r {

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
