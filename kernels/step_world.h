// The physics step of one world: every backend calls these same functions, the CPU once per
// world on a thread pool, CUDA once per thread.
//
//   ResetWorld    - initial state from the (per-world) model parameters
//   ControlStep   - latency buffer -> ctrl, then steps_per_control physics steps
//   PhysicsStep   - slide trees projected and their responses built (solver_reduced.h),
//                   articulated trees projected, M^-1 and bias built (solver_tree.h),
//                   collide once, then `substeps` soft-step substeps (Box2D v3 order;
//                   substeps_no_contact of them in a step without contact points and
//                   substeps_soft_contact in one whose points are all of the scene's
//                   stiffness, when set: SubstepsOfStep):
//                     integrate velocities, warm start, solve (bias), integrate positions,
//                     relax (no bias); after the loop restitution and the health check.
// A world whose status is non-zero is frozen: every stage returns at once.
#pragma once

#include "kernels/solver_coupling.h"
#include "kernels/step_features.h"
#include "kernels/workspace.h"

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

// --- collision -----------------------------------------------------------------------------------

// Narrow phase over the model's candidate pairs (bounding-sphere culled); returns the point count
// and counts the points that did not fit in the pool.
template <unsigned kFeatures = kStepAll>
S2R_HD int CollideWorld(const ModelView& m, const StateView& s, int world, Workspace* ws) {
  for (int g = 0; g < m.ngeom; ++g) {
    const SolverBody& b = ws->bodies[m.geom_body[g]];
    Transform body{b.com - Rotate(b.rot, b.ipos), b.rot};
    Transform local{LoadVec3(m.geom_pos.At(world) + 3 * g), LoadQuat(m.geom_quat.At(world) + 4 * g)};
    ws->geom_xform[g] = Compose(body, local);
  }
  const Real* size = m.geom_size.At(world);
  // each geom's bounding radius and how far its points can travel within the step (its body's
  // speed plus its spin times the radius), once per geom rather than once per pair
  for (int g = 0; g < m.ngeom; ++g) {
    const SolverBody& b = ws->bodies[m.geom_body[g]];
    const Real r = GeomBoundingRadius(m.geom_type[g], size + 3 * g);
    ws->geom_reach[2 * g] = r;
    ws->geom_reach[2 * g + 1] = m.timestep * (Length(b.v) + Length(b.w) * Max(r, Real(0)));
  }
  const Real speculative = m.speculative_distance.At(world)[0];
  int count = 0;
  for (int p = 0; p < m.npair; ++p) {
    int ga = m.pair_geom[2 * p], gb = m.pair_geom[2 * p + 1];
    int ta = m.geom_type[ga], tb = m.geom_type[gb];
    const Real ra = ws->geom_reach[2 * ga], rb = ws->geom_reach[2 * gb];
    // speculative margin: the fixed distance plus how far the pair can close within the step,
    // so a fast body meets the surface instead of tunnelling into it
    Real margin = speculative + ws->geom_reach[2 * ga + 1] + ws->geom_reach[2 * gb + 1];
    // bounding spheres; a plane (unbounded, a half-space) against the other's bounding sphere:
    // its centre's height above the plane
    if (ra >= Real(0) && rb >= Real(0)) {
      Real reach = ra + rb + margin;
      if (LengthSq(ws->geom_xform[ga].pos - ws->geom_xform[gb].pos) > reach * reach) continue;
    } else if (ta == kGeomPlane && rb >= Real(0)) {
      const Transform& plane = ws->geom_xform[ga];
      if (Dot(Rotate(plane.rot, Vec3{0, 0, 1}), ws->geom_xform[gb].pos - plane.pos) > rb + margin) continue;
    } else if (tb == kGeomPlane && ra >= Real(0)) {
      const Transform& plane = ws->geom_xform[gb];
      if (Dot(Rotate(plane.rot, Vec3{0, 0, 1}), ws->geom_xform[ga].pos - plane.pos) > ra + margin) continue;
    }
    ContactPoint pts[kMaxManifoldPoints];
    // mesh geoms carry their hull (shared by every world)
    GeomHull hull_a, hull_b;
    if ((kFeatures & kStepConvex) && ta == kGeomMesh) hull_a = GeomHull{m.hull_vert + 3 * m.geom_hull[2 * ga], m.geom_hull[2 * ga + 1]};
    if ((kFeatures & kStepConvex) && tb == kGeomMesh) hull_b = GeomHull{m.hull_vert + 3 * m.geom_hull[2 * gb], m.geom_hull[2 * gb + 1]};
    int n = CollideGeoms<(kFeatures & kStepConvex) != 0>(ta, ws->geom_xform[ga], size + 3 * ga, tb, ws->geom_xform[gb],
                         size + 3 * gb, margin, pts, hull_a, hull_b);
    for (int k = 0; k < n; ++k) {
      if (count >= m.contact_capacity) {
        s.contact_overflow(world) += 1;
        continue;
      }
      Contact& c = ws->contacts[count++];
      c.geom_a = ga;
      c.geom_b = gb;
      c.feature = pts[k].feature;
      c.separation = pts[k].separation;
      c.point = pts[k].point;
      c.normal = pts[k].normal;
      c.normal_force = Real(0);
      c.friction_force = Vec3{0, 0, 0};
    }
  }
  return count;
}

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

// --- one physics step --------------------------------------------------------------------------

struct StepSoftness {
  Softness contact;         // dynamic vs dynamic
  Softness contact_static;  // against a static body: twice as stiff (Box2D v3)
  Softness joint;
  Real contact_hertz;  // the scene's contact frequency (contact_hertz, uncapped) and damping ratio
  Real contact_zeta;
};

// One pass over every constraint: contacts, then per joint its actuators and axis rows, then the
// joint locks last (they are solved exactly, so each pass ends with the joints holding). The
// solve pass runs in the substep-start configuration (frames from the substep start); the relax
// pass, after positions moved, recomputes the joint frames.
// A maximal-coordinate joint's frame, its hinge angle put on the turn of joint_q when the hinge
// is unlimited (the angle read from the bodies is only known modulo 2 pi; joint_q, the last step's
// end, is within a step's motion of it). A limited hinge keeps the angle as read.
S2R_HD JointFrame JointFrameNear(const ModelView& m, const StateView& s, int world, int j,
                                 const SolverBody& a, const SolverBody& b) {
  JointFrame f = ComputeJointFrame(m, j, a, b);
  if (m.joint_type[j] == kJointHinge && !m.joint_limited[j]) f.q = UnwrapNear(f.q, s.joint_q(world)[j]);
  return f;
}

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
  for (int k = 0; k < nman; ++k) {
    ContactManifold* mf = &ws->manifolds[k];
    SolverBody* a = &ws->bodies[mf->body_a];
    SolverBody* b = &ws->bodies[mf->body_b];
    bool against_static = IsStatic(*a) || IsStatic(*b);
    Softness contact = against_static ? soft.contact_static : soft.contact;
    // a pair whose geoms set their own frequency (MJCF solref / solimp) above the scene's takes it,
    // doubled against a static body and capped like the scene's; compiled into the variants with
    // articulated trees only (StepFeaturesOf puts a scene whose geoms set it there), which keeps
    // it out of the bench scenes' registers
    if (kTrees && mf->hertz > soft.contact_hertz) {
      contact = MakeSoft(Min(against_static ? Real(2) * mf->hertz : mf->hertz, Real(0.25) * inv_h),
                         soft.contact_zeta, h);
    }
    SolveManifold<kTrees>(red, mf, ws->constraints, a, b, contact, use_bias, inv_h, push, slop);
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
  // tendon actuators and equalities, in the trees' joint space (solver_coupling.h)
  if (kTrees && (m.nequality > 0 || m.ntendon > 0)) {
    SolveCouplings(m, world, red.tree, ws->coupling_rows, s.equality_impulse(world), ws->axis_prep,
                   act_impulse, use_bias, h);
  }
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

// The substeps of a physics step whose collision found the `n` points `pts` (Model::ChooseSubsteps
// sets the counts): substeps_no_contact without points, when the model sets it;
// substeps_soft_contact when every point takes the scene's contact frequency (no pair of a
// geom with a stiffer geom_contact_hertz, which would be capped at a quarter of a longer
// substep's rate), when the model sets it; else substeps.
S2R_HD int SubstepsOfStep(const ModelView& m, int world, const Contact* pts, int n) {
  if (n == 0) return m.substeps_no_contact > 0 ? m.substeps_no_contact : m.substeps;
  if (m.substeps_soft_contact > 0) {
    const Real scene = m.contact_hertz.At(world)[0];
    const Real* hertz = m.geom_contact_hertz.At(world);
    for (int c = 0; c < n; ++c) {
      if (Max(hertz[pts[c].geom_a], hertz[pts[c].geom_b]) > scene) return m.substeps;
    }
    return m.substeps_soft_contact;
  }
  return m.substeps;
}

template <unsigned kFeatures = kStepAll>
S2R_HD void PhysicsStep(const ModelView& m, const StateView& s, int world, Workspace* ws,
                        bool carried = false) {
  constexpr bool kBlocks = (kFeatures & kStepJointBlocks) != 0;
  constexpr bool kSlides = (kFeatures & kStepSlideTrees) != 0;
  constexpr bool kTrees = (kFeatures & kStepTrees) != 0;
  if (s.status(world) != kWorldOk) return;

  // bodies at the step start, derived quantities from the current parameters
  for (int b = 0; b < m.nbody; ++b) LoadSolverBody(m, s, world, b, &ws->bodies[b]);
  Vec3 gravity = LoadVec3(m.gravity.At(world));
  ReducedSet red;
  if (kSlides) red = MakeReducedSet(m, ws->bodies, ws->reduced, ws->reduced_valid);
  if (kTrees) {
    red.tree = MakeTreeSet(m, ws->bodies, ws->tree);
    red.tree.q_prev = s.joint_q(world);
  }
  if (kSlides && !PrepareReduced(m, world, red, gravity)) {  // a slide tree without mass along an axis
    s.status(world) |= kWorldNonFinite;
    return;
  }
  if (kTrees && !PrepareTree(m, world, red.tree, gravity, carried)) {  // an articulated tree M cannot be factored
    s.status(world) |= kWorldNonFinite;
    return;
  }

  // collide, then prepare one normal row per point, warm-started from last step's point with the
  // same feature pair; failing that (clipping can renumber the points of a face contact when the
  // faces are exactly aligned), from the nearest point of the same geom pair within the match
  // radius
  int ncon = CollideWorld<kFeatures>(m, s, world, ws);

  // substeps by the step's contact points (SubstepsOfStep). The joint, actuator and equality warm
  // starts are impulses per substep: when the count differs from the last step's (known from its
  // contact points) they are rescaled to the same force.
  const int nsub = SubstepsOfStep(m, world, ws->contacts, ncon);
  const int nsub_last = SubstepsOfStep(m, world, s.contacts(world), s.contact_count(world));
  const Real h = m.timestep / Real(nsub);
  // solve passes per substep: at least solve_passes in the step (a coupling's rows converge over
  // the passes, Model::ChooseSubsteps)
  const int passes = (m.solve_passes + nsub - 1) / nsub;
  if (nsub != nsub_last) {
    const Real scale = Real(nsub_last) / Real(nsub);
    for (int j = 0; j < m.njoint; ++j) {
      for (int k = 0; k < kJointImpulseSlots; ++k) s.joint_impulse(world, j)[k] *= scale;
    }
    for (int i = 0; i < m.nactuator; ++i) s.actuator_impulse(world)[i] *= scale;
    for (int e = 0; e < kEqualityImpulseSlots * m.nequality; ++e) s.equality_impulse(world)[e] *= scale;
  }

  // softness: stiffness capped at a quarter of the substep rate for stability
  Real max_hertz = Real(0.25) / h;
  Real contact_hertz = Min(m.contact_hertz.At(world)[0], max_hertz);
  Real contact_zeta = m.contact_damping_ratio.At(world)[0];
  StepSoftness soft;
  soft.contact = MakeSoft(contact_hertz, contact_zeta, h);
  soft.contact_hertz = m.contact_hertz.At(world)[0];
  soft.contact_zeta = contact_zeta;
  soft.contact_static = MakeSoft(Min(Real(2) * contact_hertz, max_hertz), contact_zeta, h);
  soft.joint = MakeSoft(Min(m.joint_hertz.At(world)[0], max_hertz),
                        m.joint_damping_ratio.At(world)[0], h);
  PrepareAxisRows(m, world, s.ctrl(world), h, ws->axis_prep);

  if (kSlides && red.count > 0) {
    // the tree bodies that take linear impulses this step: in contact, or site-actuated
    uint32_t mask = 0;
    for (int c = 0; c < ncon; ++c) {
      int ra = m.body_reduced[m.geom_body[ws->contacts[c].geom_a]];
      int rb = m.body_reduced[m.geom_body[ws->contacts[c].geom_b]];
      if (ra >= 0) mask |= 1u << ra;
      if (rb >= 0) mask |= 1u << rb;
    }
    for (int i = 0; i < m.nactuator; ++i) {
      if (m.actuator_trntype[i] != kTransmissionSite) continue;
      int rs = m.body_reduced[m.site_body[m.actuator_trnid[i]]];
      if (rs >= 0) mask |= 1u << rs;
    }
    for (int b = 1; b < m.nbody; ++b) {  // gravity-compensated
      if (m.body_gravcomp.At(world)[b] != Real(0) && m.body_reduced[b] >= 0) {
        mask |= 1u << m.body_reduced[b];
      }
    }
    PrepareReducedImpulseResponse(red, mask);
  }
  const Contact* old = s.contacts(world);
  int nold = s.contact_count(world);
  const Real* friction = m.geom_friction.At(world);
  const Real* restitution = m.geom_restitution.At(world);
  const Real* geom_hertz = m.geom_contact_hertz.At(world);
  Real match_radius = Real(2) * m.speculative_distance.At(world)[0];
  // last step's points of the current geom pair: [old_first, old_end) (each pair's points are
  // contiguous, in the same narrow-phase order)
  int old_first = 0, old_end = 0;
  for (int c = 0; c < ncon; ++c) {
    const Contact& pt = ws->contacts[c];
    ContactConstraint* cc = &ws->constraints[c];
    cc->body_a = m.geom_body[pt.geom_a];
    cc->body_b = m.geom_body[pt.geom_b];
    PrepareContactPoint<kTrees>(red, cc, ws->bodies[cc->body_a], ws->bodies[cc->body_b], pt.point,
                        pt.normal, pt.separation);
    cc->restitution = Max(restitution[pt.geom_a], restitution[pt.geom_b]);
    cc->normal_impulse = Real(0);
    if (c == 0 || pt.geom_a != ws->contacts[c - 1].geom_a || pt.geom_b != ws->contacts[c - 1].geom_b) {
      old_first = 0;
      while (old_first < nold &&
             (old[old_first].geom_a != pt.geom_a || old[old_first].geom_b != pt.geom_b)) {
        ++old_first;
      }
      old_end = old_first;
      while (old_end < nold && old[old_end].geom_a == pt.geom_a && old[old_end].geom_b == pt.geom_b) {
        ++old_end;
      }
    }
    int match = -1;
    Real best = match_radius * match_radius;
    for (int o = old_first; o < old_end; ++o) {
      if (old[o].feature == pt.feature) {
        match = o;
        break;
      }
      Real d2 = LengthSq(old[o].point - pt.point);
      if (d2 < best) {
        best = d2;
        match = o;
      }
    }
    if (match >= 0) cc->normal_impulse = old[match].normal_force * h;
  }
  // manifolds: the points of one geom pair are contiguous in narrow-phase order
  int nman = 0;
  for (int c = 0; c < ncon;) {
    int first = c;
    while (c < ncon && ws->contacts[c].geom_a == ws->contacts[first].geom_a &&
           ws->contacts[c].geom_b == ws->contacts[first].geom_b) {
      ++c;
    }
    ContactManifold* mf = &ws->manifolds[nman++];
    const SolverBody& a = ws->bodies[ws->constraints[first].body_a];
    const SolverBody& b = ws->bodies[ws->constraints[first].body_b];
    PrepareManifold<kTrees>(red, mf, ws->constraints, first, c - first, a, b);
    int ga = ws->contacts[first].geom_a, gb = ws->contacts[first].geom_b;
    mf->friction = Max(friction[ga], friction[gb]);
    mf->hertz = kTrees ? Max(geom_hertz[ga], geom_hertz[gb]) : Real(0);  // SolveAll
    WarmStartManifoldFriction(mf, old, nold, ga, gb, a.com + mf->anchor_a, h);
  }

  int lock_rows = kBlocks ? TotalBlockRows(m) : 0;
  bool together = kBlocks && lock_rows > 0 && lock_rows <= kMaxTreeLockRows && ws->lock_factor != nullptr;
  Real* act_impulse = s.actuator_impulse(world);
  bool axes_through_locks = false;  // AxisInvMassThroughLocks done this step
  for (int sub = 0; sub < nsub; ++sub) {
    // joint frames and lock-block factors at the substep start (a slide's lever arm changes as
    // it extends, so the factors cannot be held for a whole step); joint velocities before this
    // substep's forces (armature rows need them)
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
    if (kBlocks && ws->locks_together && !axes_through_locks) {
      axes_through_locks = true;
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
    // external forces
    for (int b = 1; b < m.nbody; ++b) {
      IntegrateVelocity(&ws->bodies[b], gravity, Vec3{0, 0, 0}, Vec3{0, 0, 0}, h);
    }
    if (kSlides) ReducedIntegrateVelocity(red, h);
    if (kTrees && !TreeRefreshDynamics(m, world, red.tree, gravity, sub > 0)) {
      s.status(world) |= kWorldNonFinite;
      return;
    }
    if (kTrees) TreeIntegrateVelocity(red.tree, h);
    ApplyGravityCompensation(m, world, ws, red, gravity, h);
    ApplyExplicitActuators<kTrees>(m, s, world, ws, red, h);
    // warm start
    for (int j = 0; j < m.njoint; ++j) {
      if (m.joint_type[j] == kJointFree) continue;
      SolverBody* a = &ws->bodies[m.joint_parent[j]];
      SolverBody* b = &ws->bodies[m.joint_body[j]];
      const JointFrame& f = ws->joint_frame[j];
      if ((kSlides && b->reduced >= 0) || (kTrees && b->tree >= 0)) {
        const Real* imp = s.joint_impulse(world, j);
        Real along = imp[kSlotLowerLimit] - imp[kSlotUpperLimit] + imp[kSlotDamping] +
                     imp[kSlotFrictionLoss];
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
    if (kTrees && (m.nequality > 0 || m.ntendon > 0)) {
      PrepareBodyCouplings(m, world, red.tree, ws->coupling_rows);
      WarmStartCouplings(m, world, red.tree, ws->coupling_rows, s.equality_impulse(world), act_impulse);
    }
    for (int k = 0; k < nman; ++k) {
      const ContactManifold& mf = ws->manifolds[k];
      WarmStartManifold<kTrees>(red, mf, ws->constraints, &ws->bodies[mf.body_a], &ws->bodies[mf.body_b]);
    }
    // solve, integrate, relax
    for (int pass = 0; pass < passes; ++pass) {
      SolveAll<kFeatures>(m, s, world, ws, red, nman, soft, true, h);
    }
    if (kTrees) TreeCorrectBias(m, world, red.tree, gravity, h);
    SyncTreeVelocities(red);
    for (int b = 1; b < m.nbody; ++b) IntegratePosition(&ws->bodies[b], h);
    if (kTrees) TreeIntegratePosition(red.tree, h, ncon > 0);
    SolveAll<kFeatures>(m, s, world, ws, red, nman, soft, false, h);
  }

  // restitution once per step, against the approach speed at the step start
  Real threshold = m.restitution_threshold.At(world)[0];
  for (int c = 0; c < ncon; ++c) {
    ContactConstraint* cc = &ws->constraints[c];
    ApplyRestitution<kTrees>(red, cc, &ws->bodies[cc->body_a], &ws->bodies[cc->body_b], threshold);
  }
  SyncTreeVelocities(red);  // the relax pass and restitution moved q-dot
  if (kTrees) TreeFinishStep(m, red.tree);  // poses from q, velocities from q-dot

  // store: contact forces (of the last substep), actuator forces, bodies
  Contact* out = s.contacts(world);
  for (int k = 0; k < nman; ++k) {
    const ContactManifold& mf = ws->manifolds[k];
    for (int i = 0; i < mf.count; ++i) {
      int c = mf.first + i;
      Contact pt = ws->contacts[c];
      pt.normal_force = ws->constraints[c].normal_impulse / h;
      pt.friction_force = PointFrictionForce(mf, ws->constraints, i, Real(1) / h);
      out[c] = pt;
    }
  }
  s.contact_count(world) = ncon;
  for (int i = 0; i < m.nactuator; ++i) {
    if (!ActuatorIsImplicit(m, i)) continue;
    Real g = m.actuator_gear.At(world)[6 * i];
    s.actuator_force(world)[i] = g != Real(0) ? act_impulse[i] / (h * g) : Real(0);
  }
  CheckHealth(m, s, world, ws);
  if (s.status(world) != kWorldOk) return;  // frozen with the last finite state
  for (int b = 1; b < m.nbody; ++b) {
    if (m.body_dynamic[b]) StoreSolverBody(ws->bodies[b], s, world, b);
  }
  StoreJointPositions<kTrees>(m, s, world, ws, red.tree);
  s.time(world) += m.timestep;
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
