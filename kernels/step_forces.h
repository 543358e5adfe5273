// Forces of a substep (PhysicsStep, step_frame.h): gravity, the trees' smooth dynamics, gravity
// compensation and the actuators with explicit force, as velocity changes before the solve.
#pragma once

#include "kernels/step_frame.h"

namespace s2r {

// --- actuators with explicit force (motors, site transmissions) --------------------------------

template <bool kTrees = true>
S2R_HD void ApplyExplicitActuators(const ModelView& m, const StateView& s, int world,
                                   Workspace* ws, const ReducedSet& red, Real h) {
  const Real* ctrl = s.ctrl(world);
  for (int i = 0; i < m.nactuator; ++i) {
    if (ActuatorIsImplicit(m, i)) continue;
    const Real* gear = m.actuator_gear.At(world) + 6 * i;
    const Real u = ActuatorInput(m, world, i, ctrl[i]);
    if (m.actuator_trntype[i] == kTransmissionJoint) {
      // motor on a joint: generalized force g * u
      int j = m.actuator_trnid[i];
      Real force = u;
      if (m.actuator_forcelimited[i]) {
        const Real* fr = m.actuator_forcerange.At(world) + 2 * i;
        force = Clamp(force, fr[0], fr[1]);
      }
      s.actuator_force(world)[i] = force;
      SolverBody* a = &ws->bodies[m.joint_parent[j]];
      SolverBody* b = &ws->bodies[m.joint_body[j]];
      if (b->reduced >= 0) ReducedJointImpulse(red, b->reduced, h * gear[0] * force);
      else if (kTrees && b->tree >= 0) TreeJointImpulse(red.tree, b->tree, h * gear[0] * force);
      else RowApply(AxisRow(m, j, ws->joint_frame[j]), a, b, h * gear[0] * force);
      continue;
    }
    if (m.actuator_trntype[i] == kTransmissionTendon) {  // motor on a fixed tendon
      if (kTrees) s.actuator_force(world)[i] = ApplyTendonMotor(m, world, red.tree, i, u, h);
      continue;
    }
    // site transmission: wrench gear (force, torque) in the site frame, scaled by the force
    int site = m.actuator_trnid[i];
    SolverBody* b = &ws->bodies[m.site_body[site]];
    Quat site_rot = b->rot * LoadQuat(m.site_quat + 4 * site);
    Vec3 r = Rotate(b->rot, LoadVec3(m.site_pos + 3 * site) - b->ipos);
    Vec3 dir_f = Rotate(site_rot, Vec3{gear[0], gear[1], gear[2]});
    Vec3 dir_t = Rotate(site_rot, Vec3{gear[3], gear[4], gear[5]});
    Vec3 v = b->reduced >= 0 ? TreeBodyVelocity(red, b->reduced) : b->v;
    Vec3 w = b->w;
    if (kTrees && b->tree >= 0) TreeBodyVelocity(red.tree, b->tree, &v, &w);
    Real velocity = Dot(dir_f, v + Cross(w, r)) + Dot(dir_t, w);
    Real force;
    switch (m.actuator_type[i]) {
      case kActuatorPosition:
        force = m.actuator_kp.At(world)[i] * u - m.actuator_kv.At(world)[i] * velocity;
        break;
      case kActuatorVelocity: force = m.actuator_kv.At(world)[i] * (u - velocity); break;
      default: force = u;
    }
    if (m.actuator_forcelimited[i]) {
      const Real* fr = m.actuator_forcerange.At(world) + 2 * i;
      force = Clamp(force, fr[0], fr[1]);
    }
    s.actuator_force(world)[i] = force;
    if (b->reduced >= 0) {
      // a slide tree takes the force; its bearings take the torque
      ReducedBodyImpulse(red, b->reduced, (h * force) * dir_f);
      continue;
    }
    if (kTrees && b->tree >= 0) {  // an articulated tree takes the wrench about the body's COM
      TreeBodyImpulse(red.tree, b->tree, (h * force) * dir_f,
                      (h * force) * (Cross(r, dir_f) + dir_t));
      continue;
    }
    ApplyImpulse(b, r, (h * force) * dir_f);
    ApplyAngularImpulse(b, (h * force) * dir_t);
  }
}

// --- gravity compensation --------------------------------------------------------------------

// MJCF body gravcomp: a force -gravcomp m g at each body's COM (no torque), applied as an impulse
// per substep like gravity itself; a body of a slide tree passes it to its tree (an articulated
// tree has it in its bias forces).
S2R_HD void ApplyGravityCompensation(const ModelView& m, int world, Workspace* ws,
                                     const ReducedSet& red, Vec3 gravity, Real h) {
  const Real* gravcomp = m.body_gravcomp.At(world);
  const Real* mass = m.body_mass.At(world);
  for (int b = 1; b < m.nbody; ++b) {
    if (gravcomp[b] == Real(0)) continue;
    SolverBody* sb = &ws->bodies[b];
    if (IsStatic(*sb)) continue;
    Vec3 impulse = (-h * gravcomp[b] * mass[b]) * gravity;
    if (sb->reduced >= 0) ReducedBodyImpulse(red, sb->reduced, impulse);
    else if (sb->tree < 0) sb->v += sb->inv_mass * impulse;
    // (articulated trees have it in their bias forces, TreeBias)
  }
}

// The substep's velocity changes before the solve: gravity on the free bodies, the slide trees'
// and articulated trees' smooth dynamics (a later substep first refreshes the trees' kinematics,
// bias forces and, once moved far, M^-1: TreeRefreshDynamics), gravity compensation and explicit
// actuators. false: an articulated tree's M could not be factored (the world froze).
template <unsigned kFeatures = kStepAll>
S2R_HD bool IntegrateVelocities(const ModelView& m, const StateView& s, int world, Workspace* ws,
                                const StepFrame& st, int sub) {
  constexpr bool kSlides = (kFeatures & kStepSlideTrees) != 0;
  constexpr bool kTrees = (kFeatures & kStepTrees) != 0;
  const ReducedSet& red = st.red;
  const Real h = st.h;
  for (int b = 1; b < m.nbody; ++b) {
    IntegrateVelocity(&ws->bodies[b], st.gravity, Vec3{0, 0, 0}, Vec3{0, 0, 0}, h);
  }
  if (kSlides) ReducedIntegrateVelocity(red, h);
  if (kTrees && !TreeRefreshDynamics(m, world, red.tree, st.gravity, sub > 0)) {
    s.status(world) |= kWorldNonFinite;
    return false;
  }
  if (kTrees) TreeIntegrateVelocity(red.tree, h);
  ApplyGravityCompensation(m, world, ws, red, st.gravity, h);
  ApplyExplicitActuators<kTrees>(m, s, world, ws, red, h);
  return true;
}

}  // namespace s2r
