// The physics step of one world: every backend calls these same functions, the CPU once per
// world on a thread pool, CUDA once per thread.
//
//   ResetWorld    - initial state from the (per-world) model parameters
//   ControlStep   - latency buffer -> ctrl, then steps_per_control physics steps
//   PhysicsStep   - a short list of stages, each in a file named for it (step_frame.h lists
//                   them): bodies and trees at the step start, collide once, contact rows,
//                   then `substeps` soft-step substeps (Box2D v3 order; fewer in a step without
//                   contact points or with only soft ones: SubstepsOfStep), each: joint frames,
//                   integrate velocities, warm start, solve (bias), integrate positions, relax
//                   (no bias); after them restitution and the store with its health check.
// A world whose status is non-zero is frozen: every stage returns at once.
#pragma once

#include "kernels/step_collide.h"
#include "kernels/step_contacts.h"
#include "kernels/step_forces.h"
#include "kernels/step_frame.h"
#include "kernels/step_joints.h"
#include "kernels/step_solve.h"

namespace s2r {

// Initial state. Free and static bodies take body_pos0 / body_quat0 and body_linvel0 /
// body_angvel0; a body below a hinge, slide or weld is placed from its parent (bodies come after
// their parents) by the joint at joint_qpos0 -- its anchor on the parent's anchor, rotated about
// (hinge) or moved along (slide) the axis from the reference configuration -- and moves with its
// parent plus joint_qvel0 along the axis. So randomizing an arm's start is one joint_qpos0 (and
// joint_qvel0) array, and no world starts with a violated joint.
S2R_HD void ResetWorld(const ModelView& m, const StateView& s, int world) {
  for (int b = 0; b < m.nbody; ++b) {
    int j = m.body_joint[b];
    int type = j >= 0 ? m.joint_type[j] : kJointFree;
    if (type == kJointFree) {
      for (int k = 0; k < 3; ++k) s.body_pos(world, b)[k] = m.body_pos0.At(world)[3 * b + k];
      StoreQuat(s.body_quat(world, b), NormalizeQuat(LoadQuat(m.body_quat0.At(world) + 4 * b)));
    } else {
      int p = m.body_parent[b];
      Quat parent_rot = LoadQuat(s.body_quat(world, p));
      Vec3 anchor = LoadVec3(s.body_pos(world, p)) +
                    Rotate(parent_rot, LoadVec3(m.joint_pos_parent + 3 * j));
      Quat rot = parent_rot * LoadQuat(m.joint_qrel0 + 4 * j);
      Real q = m.joint_qpos0.At(world)[j];
      if (type == kJointHinge) rot = rot * QuatFromAxisAngle(LoadVec3(m.joint_axis_child + 3 * j), q);
      if (type == kJointSlide) anchor += q * Rotate(parent_rot, LoadVec3(m.joint_axis_parent + 3 * j));
      rot = NormalizeQuat(rot);
      StoreQuat(s.body_quat(world, b), rot);
      StoreVec3(s.body_pos(world, b), anchor - Rotate(rot, LoadVec3(m.joint_pos_child + 3 * j)));
      // velocity: the parent's motion at the child's COM plus the joint's own rate
      Vec3 com = LoadVec3(s.body_pos(world, b)) + Rotate(rot, LoadVec3(m.body_ipos.At(world) + 3 * b));
      Vec3 parent_com = LoadVec3(s.body_pos(world, p)) +
                        Rotate(parent_rot, LoadVec3(m.body_ipos.At(world) + 3 * p));
      Vec3 w = LoadVec3(s.body_angvel(world, p));
      Vec3 v = LoadVec3(s.body_linvel(world, p)) + Cross(w, com - parent_com);
      Real qdot = m.joint_qvel0.At(world)[j];
      Vec3 axis = Rotate(parent_rot, LoadVec3(m.joint_axis_parent + 3 * j));
      if (type == kJointHinge) {
        w += qdot * axis;
        v += Cross(qdot * axis, com - anchor);
      }
      if (type == kJointSlide) v += qdot * axis;
      StoreVec3(s.body_linvel(world, b), v);
      StoreVec3(s.body_angvel(world, b), w);
      continue;
    }
    for (int k = 0; k < 3; ++k) {
      s.body_linvel(world, b)[k] = m.body_linvel0.At(world)[3 * b + k];
      s.body_angvel(world, b)[k] = m.body_angvel0.At(world)[3 * b + k];
    }
  }
  for (int j = 0; j < m.njoint; ++j) {
    for (int k = 0; k < kJointImpulseSlots; ++k) s.joint_impulse(world, j)[k] = Real(0);
    int type = m.joint_type[j];
    s.joint_q(world)[j] = type == kJointHinge || type == kJointSlide ? m.joint_qpos0.At(world)[j] : Real(0);
  }
  for (int j = 0; j < m.njoint; ++j) {  // a ball reports its rotation vector (StoreJointPositions)
    if (m.joint_part[j] != 1) continue;
    const Vec3 r = BallRotationVector(LoadQuat(s.body_quat(world, m.joint_parent[j])),
                                      LoadQuat(s.body_quat(world, m.joint_body[j + 2])), LoadQuat(m.joint_qrel0 + 4 * j));
    s.joint_q(world)[j] = r.x;
    s.joint_q(world)[j + 1] = r.y;
    s.joint_q(world)[j + 2] = r.z;
  }
  for (int e = 0; e < kEqualityImpulseSlots * m.nequality; ++e) s.equality_impulse(world)[e] = Real(0);
  for (int i = 0; i < m.nactuator; ++i) {
    s.ctrl(world)[i] = Real(0);
    s.actuator_impulse(world)[i] = Real(0);
    s.actuator_force(world)[i] = Real(0);
    for (int slot = 0; slot < m.latency_capacity; ++slot) s.ctrl_queue(world, slot)[i] = Real(0);
  }
  s.contact_count(world) = 0;
  s.contact_overflow(world) = 0;
  s.status(world) = kWorldOk;
  s.control_step(world) = 0;
  s.time(world) = Real(0);
}

S2R_HD void CheckHealth(const ModelView& m, const StateView& s, int world, Workspace* ws) {
  Real max_speed = m.max_linear_speed.At(world)[0];
  int status = kWorldOk;
  for (int b = 1; b < m.nbody; ++b) {
    const SolverBody& sb = ws->bodies[b];
    Real sum = sb.com.x + sb.com.y + sb.com.z + sb.rot.w + sb.rot.x + sb.rot.y + sb.rot.z +
               sb.v.x + sb.v.y + sb.v.z + sb.w.x + sb.w.y + sb.w.z;
    if (!IsFinite(sum)) status |= kWorldNonFinite;
    else if (LengthSq(sb.v) > max_speed * max_speed) status |= kWorldRunaway;
  }
  s.status(world) |= status;
}

// Each joint's position at the step's end into joint_q: a tree joint's integrated q (continuous
// through the step), another hinge's angle read from its bodies and unwrapped to within pi of the
// last step's (a joint turns far less than pi per step), a slide's offset. So joint_q follows an
// unlimited hinge through any number of turns, and the next step's tree reads its angle near it.
template <bool kTrees = true>
S2R_HD void StoreJointPositions(const ModelView& m, const StateView& s, int world, Workspace* ws,
                                const TreeSet& tree) {
  Real* q = s.joint_q(world);
  for (int j = 0; j < m.njoint; ++j) {
    int type = m.joint_type[j];
    if (type != kJointHinge && type != kJointSlide) continue;
    int b = m.joint_body[j];
    if (kTrees && m.joint_part[j] == 1) {  // a ball's rotation vector (its angles are per step)
      const Vec3 r = BallRotationVector(ws->bodies[m.joint_parent[j]].rot, ws->bodies[m.joint_body[j + 2]].rot,
                                        LoadQuat(m.joint_qrel0 + 4 * j));
      q[j] = r.x;
      q[j + 1] = r.y;
      q[j + 2] = r.z;
      j += 2;
      continue;
    }
    if (kTrees && ws->bodies[b].tree >= 0) {
      q[j] = tree.q[ws->bodies[b].tree];
      continue;
    }
    Real qj = JointPosition(m, j, ws->bodies[m.joint_parent[j]], ws->bodies[b]);
    q[j] = type == kJointHinge ? UnwrapNear(qj, q[j]) : qj;
  }
}

// Stage: the bodies at the step start, derived quantities from the current parameters; the slide
// trees projected and their responses built (solver_reduced.h); the articulated trees projected,
// M^-1 and bias built (solver_tree.h; `carried`: a later physics step of the control step, whose
// trees continue from the last one's). false: a tree cannot be stepped (the world froze).
template <unsigned kFeatures = kStepAll>
S2R_HD bool LoadStep(const ModelView& m, const StateView& s, int world, Workspace* ws, bool carried,
                     StepFrame* st) {
  constexpr bool kSlides = (kFeatures & kStepSlideTrees) != 0;
  constexpr bool kTrees = (kFeatures & kStepTrees) != 0;
  for (int b = 0; b < m.nbody; ++b) LoadSolverBody(m, s, world, b, &ws->bodies[b]);
  st->gravity = LoadVec3(m.gravity.At(world));
  ReducedSet& red = st->red;
  if (kSlides) red = MakeReducedSet(m, ws->bodies, ws->reduced, ws->reduced_valid);
  if (kTrees) {
    red.tree = MakeTreeSet(m, ws->bodies, ws->tree);
    red.tree.q_prev = s.joint_q(world);
  }
  if (kSlides && !PrepareReduced(m, world, red, st->gravity)) {  // a slide tree without mass along an axis
    s.status(world) |= kWorldNonFinite;
    return false;
  }
  if (kTrees && !PrepareTree(m, world, red.tree, st->gravity, carried)) {  // an articulated tree M cannot be factored
    s.status(world) |= kWorldNonFinite;
    return false;
  }
  return true;
}

// Stage: what the step leaves: its contact points and forces, the implicit actuators' forces, the
// health check (a world gone non-finite or runaway freezes with its last finite state), the
// bodies, joint_q and the time.
template <unsigned kFeatures = kStepAll>
S2R_HD void StoreStep(const ModelView& m, const StateView& s, int world, Workspace* ws, const StepFrame& st) {
  constexpr bool kTrees = (kFeatures & kStepTrees) != 0;
  StoreContacts(s, world, ws, st);
  const Real* act_impulse = s.actuator_impulse(world);
  for (int i = 0; i < m.nactuator; ++i) {
    if (!ActuatorIsImplicit(m, i)) continue;
    Real g = m.actuator_gear.At(world)[6 * i];
    s.actuator_force(world)[i] = g != Real(0) ? act_impulse[i] / (st.h * g) : Real(0);
  }
  CheckHealth(m, s, world, ws);
  if (s.status(world) != kWorldOk) return;  // frozen with the last finite state
  for (int b = 1; b < m.nbody; ++b) {
    if (m.body_dynamic[b]) StoreSolverBody(ws->bodies[b], s, world, b);
  }
  StoreJointPositions<kTrees>(m, s, world, ws, st.red.tree);
  s.time(world) += m.timestep;
}

// One physics step: the stages in order (step_frame.h).
template <unsigned kFeatures = kStepAll>
S2R_HD void PhysicsStep(const ModelView& m, const StateView& s, int world, Workspace* ws,
                        bool carried = false) {
  constexpr bool kBlocks = (kFeatures & kStepJointBlocks) != 0;
  constexpr bool kTrees = (kFeatures & kStepTrees) != 0;
  if (s.status(world) != kWorldOk) return;
  StepFrame st;
  if (!LoadStep<kFeatures>(m, s, world, ws, carried, &st)) return;
  st.ncon = CollideWorld<kFeatures>(m, s, world, ws);
  StepSubsteps(m, s, world, ws, &st);
  PrepareContacts<kFeatures>(m, s, world, ws, &st);
  st.lock_rows = kBlocks ? TotalBlockRows(m) : 0;
  st.together = kBlocks && st.lock_rows > 0 && st.lock_rows <= kMaxTreeLockRows && ws->lock_factor != nullptr;
  for (int sub = 0; sub < st.nsub; ++sub) {
    PrepareJoints<kFeatures>(m, s, world, ws, &st);
    if (!IntegrateVelocities<kFeatures>(m, s, world, ws, st, sub)) return;
    WarmStart<kFeatures>(m, s, world, ws, st);
    for (int pass = 0; pass < st.passes; ++pass) {
      SolveAll<kFeatures>(m, s, world, ws, st.red, st.nman, st.soft, true, st.h);
    }
    IntegratePositions<kFeatures>(m, world, ws, st);
    SolveAll<kFeatures>(m, s, world, ws, st.red, st.nman, st.soft, false, st.h);  // relax
  }
  RestituteContacts<kTrees>(m, world, ws, st);
  SyncTreeVelocities(st.red);  // the relax pass and restitution moved q-dot
  if (kTrees) TreeFinishStep(m, st.red.tree);  // poses from q, velocities from q-dot
  StoreStep<kFeatures>(m, s, world, ws, st);
}

// One control step: the action enters the latency ring buffer and the action given
// latency_steps control steps plus latency_timesteps physics steps ago takes effect (zeros before
// the first), clamped to ctrlrange. With latency_timesteps = r + f (r whole, 0 <= f < 1) the
// physics steps before step r of the control step still run the action one control step older,
// step r runs the blend f old + (1 - f) new (what a switch f of the way into that step averages
// to), and the later steps the newer one. So a delay of D = latency_steps * steps_per_control +
// latency_timesteps physics steps is exact on the physics-step grid and continuous between its
// points, which lets system identification fit it like any other parameter.
S2R_HD void ApplyDelayedAction(const ModelView& m, const StateView& s, int world, int64_t older, Real older_weight) {
  const int cap = m.latency_capacity;
  const int64_t newer = older + 1;
  Real* ctrl = s.ctrl(world);
  for (int i = 0; i < m.nactuator; ++i) {
    Real a = older >= 0 ? s.ctrl_queue(world, static_cast<int>(older % cap))[i] : Real(0);
    Real b = newer >= 0 ? s.ctrl_queue(world, static_cast<int>(newer % cap))[i] : Real(0);
    if (m.actuator_ctrllimited[i]) {
      const Real* r = m.actuator_ctrlrange.At(world) + 2 * i;
      a = Clamp(a, r[0], r[1]);
      b = Clamp(b, r[0], r[1]);
    }
    ctrl[i] = older_weight == Real(0) ? b : older_weight == Real(1) ? a : older_weight * a + (Real(1) - older_weight) * b;
  }
}

template <unsigned kFeatures = kStepAll>
S2R_HD void ControlStep(const ModelView& m, const StateView& s, int world, Workspace* ws,
                        const Real* action) {
  if (s.status(world) != kWorldOk) return;
  int64_t step = s.control_step(world);
  const int cap = m.latency_capacity;
  Real part = cap > 1 && m.steps_per_control > 1 ? m.latency_timesteps.At(world)[0] : Real(0);
  part = Clamp(part, Real(0), Real(m.steps_per_control) - Real(1e-6));
  const int whole = static_cast<int>(Floor(part));
  const Real fraction = part - Real(whole);
  const int delay = Clamp(m.latency_steps.At(world)[0], 0, cap - 1 - (part > Real(0) ? 1 : 0));
  Real* slot = s.ctrl_queue(world, static_cast<int>(step % cap));
  for (int i = 0; i < m.nactuator; ++i) slot[i] = action[i];
  const int64_t older = step - delay - 1;  // the action before the one due this control step
  for (int k = 0; k < m.steps_per_control; ++k) {
    if (part == Real(0)) {
      if (k == 0) ApplyDelayedAction(m, s, world, older, Real(0));
    } else if (k == 0 || k == whole || k == whole + 1) {
      ApplyDelayedAction(m, s, world, older, k < whole ? Real(1) : k == whole ? fraction : Real(0));
    }
    // after the first, each physics step continues from the tree coordinates the last one left
    // in this world's step scratch (PrepareTree)
    PhysicsStep<kFeatures>(m, s, world, ws, k > 0);
  }
  s.control_step(world) = step + 1;
}

}  // namespace s2r
