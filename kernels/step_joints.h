// Joint stages of a substep (PhysicsStep, step_frame.h): the joints' frames at the substep start
// and the maximal joints' lock factors; the warm start of every joint, coupling and contact row.
#pragma once

#include "kernels/step_frame.h"

namespace s2r {

// A maximal-coordinate joint's frame, its hinge angle put on the turn of joint_q when the hinge
// is unlimited (the angle read from the bodies is only known modulo 2 pi; joint_q, the last step's
// end, is within a step's motion of it). A limited hinge keeps the angle as read.
S2R_HD JointFrame JointFrameNear(const ModelView& m, const StateView& s, int world, int j,
                                 const SolverBody& a, const SolverBody& b) {
  JointFrame f = ComputeJointFrame(m, j, a, b);
  if (m.joint_type[j] == kJointHinge && !m.joint_limited[j]) f.q = UnwrapNear(f.q, s.joint_q(world)[j]);
  return f;
}

// Joint frames and lock-block factors at the substep start (a slide's lever arm changes as it
// extends, so the factors cannot be held for a whole step); joint velocities before this substep's
// forces (armature rows need them).
template <unsigned kFeatures = kStepAll>
S2R_HD void PrepareJoints(const ModelView& m, const StateView& s, int world, Workspace* ws, StepFrame* st) {
  constexpr bool kBlocks = (kFeatures & kStepJointBlocks) != 0;
  constexpr bool kSlides = (kFeatures & kStepSlideTrees) != 0;
  constexpr bool kTrees = (kFeatures & kStepTrees) != 0;
  const ReducedSet& red = st->red;
  const int lock_rows = st->lock_rows;
  const bool together = st->together;
  for (int j = 0; j < m.njoint; ++j) {
    if (m.joint_type[j] == kJointFree) continue;
    const SolverBody& a = ws->bodies[m.joint_parent[j]];
    const SolverBody& b = ws->bodies[m.joint_body[j]];
    if (kSlides && b.reduced >= 0) {  // no lock block; its tree's response is per step
      ReducedJointFrame(red, b.reduced, a, b, &ws->joint_frame[j]);
      ws->joint_qdot0[j] = red.qdot[b.reduced];
      continue;
    }
    if (kTrees && b.tree >= 0) {
      TreeJointFrame(red.tree, b.tree, &ws->joint_frame[j]);
      ws->joint_qdot0[j] = red.tree.qdot[b.tree];
      continue;
    }
    if (!kBlocks) continue;  // the model has no joint outside the trees
    JointFrame f = JointFrameNear(m, s, world, j, a, b);
    ws->joint_frame[j] = f;
    bool axial = m.joint_type[j] == kJointHinge || m.joint_type[j] == kJointSlide;
    ws->joint_qdot0[j] = axial ? RowVelocity(AxisRow(m, j, f), a, b) : Real(0);
    PrepareJointBlock(m, j, f, a, b, ws->joint_factor + j * kJointFactorSize, !together);
  }
  ws->locks_together =
      kBlocks && together && PrepareLocksTogether(m, world, ws->joint_frame, ws->bodies, ws->lock_factor,
                                        ws->lock_scratch + 2 * lock_rows);
  // the axis rows' effective masses and lock couplings through the locks change slowly with
  // the configuration: once per step, at the first substep whose locks factor (a stale value
  // only slows convergence; the locks are solved exactly in every pass)
  if (kBlocks && ws->locks_together && !st->axes_through_locks) {
    st->axes_through_locks = true;
    for (int j = 0; j < m.njoint; ++j) {
      int type = m.joint_type[j];
      Real* coupling = ws->lock_scratch + 3 * lock_rows + j * lock_rows;
      if ((type != kJointHinge && type != kJointSlide) || JointIsReduced(m, j)) {
        for (int r = 0; r < lock_rows; ++r) coupling[r] = Real(0);
        continue;
      }
      ws->joint_factor[j * kJointFactorSize + kPrepAxisInvMassLocked] = AxisInvMassThroughLocks(
          m, world, j, ws->joint_frame, ws->bodies, ws->lock_factor, ws->lock_scratch + 2 * lock_rows,
          ws->lock_scratch, coupling);
    }
  }
  if (kBlocks && together && !ws->locks_together) {  // singular: fall back to per-joint blocks
    for (int j = 0; j < m.njoint; ++j) {
      if (m.joint_type[j] == kJointFree || JointIsReduced(m, j)) continue;
      PrepareJointBlock(m, j, ws->joint_frame[j], ws->bodies[m.joint_parent[j]],
                        ws->bodies[m.joint_body[j]], ws->joint_factor + j * kJointFactorSize);
    }
  }
}

// The last step's impulses (per substep) applied again: each joint's axis rows and actuators (a
// tree joint's as one joint-space impulse), its locks (maximal joints), the couplings (equalities,
// tendons) and every contact manifold.
template <unsigned kFeatures = kStepAll>
S2R_HD void WarmStart(const ModelView& m, const StateView& s, int world, Workspace* ws, const StepFrame& st) {
  constexpr bool kBlocks = (kFeatures & kStepJointBlocks) != 0;
  constexpr bool kSlides = (kFeatures & kStepSlideTrees) != 0;
  constexpr bool kTrees = (kFeatures & kStepTrees) != 0;
  const ReducedSet& red = st.red;
  Real* act_impulse = s.actuator_impulse(world);
  for (int j = 0; j < m.njoint; ++j) {
    if (m.joint_type[j] == kJointFree) continue;
    SolverBody* a = &ws->bodies[m.joint_parent[j]];
    SolverBody* b = &ws->bodies[m.joint_body[j]];
    const JointFrame& f = ws->joint_frame[j];
    if ((kSlides && b->reduced >= 0) || (kTrees && b->tree >= 0)) {
      const Real* imp = s.joint_impulse(world, j);
      // (a ball's cone limit keeps its impulse in the upper-limit slot: below, along its row)
      Real along = imp[kSlotLowerLimit] - (m.joint_limited[j] == 2 ? Real(0) : imp[kSlotUpperLimit]) +
                   imp[kSlotDamping] + imp[kSlotFrictionLoss];
      for (int i = m.joint_actuator[j]; i >= 0; i = m.actuator_next[i]) along += act_impulse[i];
      if (kSlides && b->reduced >= 0) ReducedJointImpulse(red, b->reduced, along);
      else if (kTrees && m.joint_type[j] != kJointWeld) TreeJointImpulse(red.tree, b->tree, along);
      continue;
    }
    if (!kBlocks) continue;  // the model has no joint outside the trees
    WarmStartJoint(m, j, f, s.joint_impulse(world, j), a, b);
    for (int i = m.joint_actuator[j]; i >= 0; i = m.actuator_next[i]) {
      RowApply(AxisRow(m, j, f), a, b, act_impulse[i]);
    }
  }
  if (kTrees && red.tree.ball != 0) {  // the balls' cone limits (solver_coupling.h)
    for (int k = 0; k < red.tree.count; ++k) {
      if (!TreeIsBall(red.tree, k)) continue;
      const int j = m.body_joint[red.tree.body[k]];
      if (m.joint_limited[j] == 2) WarmStartBallLimit(m, world, red.tree, k, s.joint_impulse(world, j)[kSlotUpperLimit]);
      k += 2;
    }
  }
  if (kTrees && (m.nequality > 0 || m.ntendon > 0)) {
    PrepareBodyCouplings(m, world, red.tree, ws->coupling_rows);
    WarmStartCouplings(m, world, red.tree, ws->coupling_rows, s.equality_impulse(world), act_impulse);
  }
  for (int k = 0; k < st.nman; ++k) {
    const ContactManifold& mf = ws->manifolds[k];
    WarmStartManifold<kTrees>(red, mf, ws->constraints, &ws->bodies[mf.body_a], &ws->bodies[mf.body_b]);
  }
}

}  // namespace s2r
