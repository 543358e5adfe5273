// The solve stages of a substep (PhysicsStep, step_frame.h): a pass over every row (contacts,
// joints' axis rows and locks, couplings), with position bias in the solve passes and without in
// the relax pass; and the position update between them.
#pragma once

#include "kernels/step_frame.h"
#include "kernels/step_joints.h"

namespace s2r {

// One pass over every constraint: contacts (all friction, then all normals), then per joint its
// actuators and axis rows, then the joint locks last (they are solved exactly, so each pass ends
// with the joints holding). The solve pass runs in the substep-start configuration (frames from
// the substep start); the relax pass, after positions moved, recomputes the joint frames.
template <unsigned kFeatures = kStepAll>
S2R_HD void SolveAll(const ModelView& m, const StateView& s, int world, Workspace* ws,
                     const ReducedSet& red, int nman, const StepSoftness& soft, bool use_bias,
                     Real h) {
  constexpr bool kBlocks = (kFeatures & kStepJointBlocks) != 0;
  constexpr bool kSlides = (kFeatures & kStepSlideTrees) != 0;
  constexpr bool kTrees = (kFeatures & kStepTrees) != 0;
  const Real inv_h = Real(1) / h;
  Real* act_impulse = s.actuator_impulse(world);
  Real push = m.contact_push_velocity.At(world)[0];
  Real slop = m.linear_slop.At(world)[0];
  // the friction of every manifold, then the normals of every manifold (solver_contact.h)
  for (int k = 0; k < nman; ++k) {
    ContactManifold* mf = &ws->manifolds[k];
    SolveManifoldFriction<kTrees>(red, mf, ws->constraints, &ws->bodies[mf->body_a], &ws->bodies[mf->body_b]);
  }
  for (int k = 0; k < nman; ++k) {
    const ContactManifold& mf = ws->manifolds[k];
    SolverBody* a = &ws->bodies[mf.body_a];
    SolverBody* b = &ws->bodies[mf.body_b];
    bool against_static = IsStatic(*a) || IsStatic(*b);
    Softness contact = against_static ? soft.contact_static : soft.contact;
    // a pair whose geoms set their own frequency (MJCF solref / solimp) above the scene's takes it,
    // doubled against a static body and capped like the scene's; compiled into the variants with
    // articulated trees only (StepFeaturesOf puts a scene whose geoms set it there), which keeps
    // it out of the bench scenes' registers
    if (kTrees && mf.hertz > soft.contact_hertz) {
      contact = MakeSoft(Min(against_static ? Real(2) * mf.hertz : mf.hertz, Real(0.25) * inv_h),
                         soft.contact_zeta, h);
    }
    SolveManifoldNormals<kTrees>(red, mf, ws->constraints, a, b, contact, use_bias, inv_h, push, slop);
  }
  if (kBlocks && ws->locks_together) {
    int rows = TotalBlockRows(m);
    if (use_bias) {
      // the axis rows below read joint velocities: first put the bodies back on their locks (the
      // warm start and the contacts moved them off, a light link far off)
      SolveLocksTogether(m, world, ws->joint_frame, ws->bodies, s.joint_impulse(world, 0),
                         ws->lock_factor, ws->lock_scratch + 2 * rows, ws->lock_scratch, soft.joint,
                         true, ws->joint_qdot0);
    } else {
      // the relax pass runs in the moved configuration: new frames and the block refactored for
      // them. With the substep-start factor one solve leaves a residual that grows with the
      // chain's speed -- armature lost half its effect (a six-joint chain 23 mm off MuJoCo after
      // 2 s, 5 mm now) -- and iterating that solve made fast undamped chains diverge.
      for (int j = 0; j < m.njoint; ++j) {
        if (m.joint_type[j] == kJointFree || JointIsReduced(m, j)) continue;
        ws->joint_frame[j] =
            JointFrameNear(m, s, world, j, ws->bodies[m.joint_parent[j]], ws->bodies[m.joint_body[j]]);
      }
      if (!PrepareLocksTogether(m, world, ws->joint_frame, ws->bodies, ws->lock_factor,
                                ws->lock_scratch + 2 * rows)) {
        ws->locks_together = 0;  // singular: this relax pass leaves the locks alone
      }
    }
  }
  for (int j = 0; j < m.njoint; ++j) {
    if (m.joint_type[j] == kJointFree) continue;
    SolverBody* a = &ws->bodies[m.joint_parent[j]];
    SolverBody* b = &ws->bodies[m.joint_body[j]];
    if (kTrees && b->tree >= 0) {
      if (m.joint_type[j] == kJointWeld) continue;
      if (!use_bias) TreeJointFrame(red.tree, b->tree, &ws->joint_frame[j]);
      SolveTreeJoint(m, world, j, ws->joint_frame[j], s.joint_impulse(world, j), red.tree,
                     soft.joint, use_bias, inv_h, ws->joint_qdot0[j], ws->axis_prep, act_impulse);
      continue;
    }
    if (kSlides && b->reduced >= 0) {
      if (!use_bias) ReducedJointFrame(red, b->reduced, *a, *b, &ws->joint_frame[j]);
      SolveReducedJoint(m, world, j, ws->joint_frame[j], s.joint_impulse(world, j), red, soft.joint,
                        use_bias, inv_h, ws->joint_qdot0[j], ws->axis_prep, act_impulse);
      continue;
    }
    if (!kBlocks) continue;  // the model has no joint outside the trees
    if (!use_bias && !ws->locks_together) ws->joint_frame[j] = JointFrameNear(m, s, world, j, *a, *b);
    Real applied = SolveJoint(m, world, j, ws->joint_frame[j], s.joint_impulse(world, j), a, b,
                              soft.joint, use_bias, inv_h, ws->joint_qdot0[j],
                              ws->joint_factor + j * kJointFactorSize, ws->axis_prep, act_impulse,
                              !ws->locks_together);
    if (ws->locks_together && applied != Real(0)) {
      int rows = TotalBlockRows(m);
      ApplyAxisImpulseThroughLocks(m, ws->joint_frame, ws->bodies, s.joint_impulse(world, 0),
                                   ws->lock_scratch + 3 * rows + j * rows, applied);
    }
  }
  if (kBlocks && ws->locks_together) {
    int rows = TotalBlockRows(m);
    SolveLocksTogether(m, world, ws->joint_frame, ws->bodies, s.joint_impulse(world, 0),
                       ws->lock_factor, ws->lock_scratch + 2 * rows, ws->lock_scratch, soft.joint,
                       use_bias, ws->joint_qdot0);
  }
  // the balls' cone limits, in the trees' joint space (solver_coupling.h)
  if (kTrees && red.tree.ball != 0) {
    for (int k = 0; k < red.tree.count; ++k) {
      if (!TreeIsBall(red.tree, k)) continue;
      const int j = m.body_joint[red.tree.body[k]];
      if (m.joint_limited[j] == 2) {
        SolveBallLimit(m, world, red.tree, k, s.joint_impulse(world, j) + kSlotUpperLimit, soft.joint, use_bias,
                       inv_h);
      }
      k += 2;
    }
  }
  // tendon actuators and equalities, in the trees' joint space (solver_coupling.h)
  if (kTrees && (m.nequality > 0 || m.ntendon > 0)) {
    SolveCouplings(m, world, red.tree, ws->coupling_rows, s.equality_impulse(world), ws->axis_prep,
                   act_impulse, use_bias, h);
  }
}

// Between the solve and relax passes: the trees' trapezoidal correction of their velocity-dependent
// forces (TreeCorrectBias), then positions from the velocities (a tree's q, and its bodies'
// displacements when a contact row reads them).
template <unsigned kFeatures = kStepAll>
S2R_HD void IntegratePositions(const ModelView& m, int world, Workspace* ws, const StepFrame& st) {
  constexpr bool kTrees = (kFeatures & kStepTrees) != 0;
  if (kTrees) TreeCorrectBias(m, world, st.red.tree, st.gravity, st.h);
  SyncTreeVelocities(st.red);
  for (int b = 1; b < m.nbody; ++b) IntegratePosition(&ws->bodies[b], st.h);
  if (kTrees) TreeIntegratePosition(st.red.tree, st.h, st.ncon > 0);
}

}  // namespace s2r
