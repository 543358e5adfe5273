// What the stages of one physics step share (PhysicsStep, step_world.h). The stages, Box2D v3's
// solver stages carried to 3D, each in a file named for it:
//   LoadStep             step_world.h     bodies at the step start; trees' M^-1 and bias forces
//   CollideWorld         step_collide.h   narrow phase over the candidate pairs
//   StepSubsteps         step_collide.h   the step's substeps (by its contact points), softness
//   PrepareContacts      step_contacts.h  contact rows, matched warm starts, manifolds
//   per substep:
//     PrepareJoints      step_joints.h    joint frames, maximal joints' lock factors
//     IntegrateVelocities step_forces.h   gravity, tree dynamics, gravity compensation, motors
//     WarmStart          step_joints.h    last impulses of joints, couplings and contacts
//     SolveAll           step_solve.h     passes over every row, with position bias
//     IntegratePositions step_solve.h     trapezoidal tree correction, then positions
//     SolveAll           step_solve.h     the relax pass, without bias
//   RestituteContacts    step_contacts.h  restitution against the approach speed
//   StoreStep            step_world.h     contacts, forces, health check, bodies, joint_q
#pragma once

#include "kernels/solver_coupling.h"
#include "kernels/step_features.h"
#include "kernels/workspace.h"

namespace s2r {

struct StepSoftness {
  Softness contact;         // dynamic vs dynamic
  Softness contact_static;  // against a static body: twice as stiff (Box2D v3)
  Softness joint;
  Real contact_hertz;  // the scene's contact frequency (contact_hertz, uncapped) and damping ratio
  Real contact_zeta;
};

// One physics step's values that its stages share
struct StepFrame {
  Vec3 gravity;
  ReducedSet red;   // the slide trees, and the articulated trees (red.tree)
  int ncon = 0;     // contact points this step (ws->contacts, ws->constraints)
  int nman = 0;     // their manifolds (ws->manifolds)
  int nsub = 1;     // substeps
  int passes = 1;   // solve passes per substep
  Real h = Real(0);  // the substep
  StepSoftness soft;
  // maximal-coordinate joints (kStepJointBlocks): the world's lock rows, whether they are solved
  // as one block, and whether this step has put the axis rows' masses through it
  int lock_rows = 0;
  bool together = false;
  bool axes_through_locks = false;
};

}  // namespace s2r
