// Task `peg_insert`: grasp a peg, carry it over a square socket and insert it (configs/scenes/
// peg_insert.xml: the pick_lift gantry, a free 2 x 2 x 10 cm peg standing on the floor between the
// open fingers, a socket of four static walls around a hole with 3 mm of clearance per side).
// The scene's conventions: the peg body's origin is its tip (the centre of its lower face), the
// socket body's origin is the centre of the hole's mouth.
//
// Expert: as pick_lift's, the hand goes over the peg at `grasp_height` (approach), closes both
// fingers to `close_depth` for grasp_s (grasp) and raises a target at lift_speed by lift_height
// (lift). Then it carries the peg at that height to where the peg's tip, as it sits in the grip at
// the transport's start, is over the hole's axis -- missed by (`align_x`, `align_y`), the
// expert's alignment error -- at transport_speed (transport), and once the hand has settled there
// it lowers a target at insert_speed until the tip would be 5 mm deeper than insert_depth
// (insert). The servo's spring below the target is the pushing force: a peg that lands on the
// socket's rim is pressed onto it (or slides up in the grip), one that enters tilted can jam.
//
// Depth: how far the tip is below the mouth while it is within kPegHoleRadius of the hole's axis
// horizontally (a peg beside the socket is not in it: its depth is capped at 0).
// Labels: success (depth at least insert_depth for hold_s); margin: depth - insert_depth at the
// end; grasp_miss (the hand rose 2 cm without the peg following half as much, lift or transport);
// drop (the carried peg fell drop_dist out of its place in the grip, lift or transport); slip (the
// peg was pushed up in the grip by more than slip_limit: it met resistance the grip could not
// hold); collision (the peg pressed the socket with more than collision_force in total while its
// tip was not yet 5 mm into the hole -- it landed on the rim or the walls' top -- or a finger or
// the palm pressed a static geom that hard); stuck (inserting, the depth grew by no more than 1 mm
// for stuck_s: jammed, or resting on the rim under less than collision_force); sim_unstable;
// timeout. min_margin: slip_limit less the largest slip in the grip (how close the grip came to a
// slip). Near miss: a success whose slip was over half slip_limit, or a failure after the peg got
// at least halfway to insert_depth.
#pragma once

#include "kernels/task.h"

namespace s2r {

// X(name, default, unit, description)
#define S2R_PEG_INSERT_PARAMS(X)                                                                         \
  X(grasp_height, 0.12, "m", "hand height (world z of the hand body) while grasping")                    \
  X(close_depth, 0.025, "m", "finger joint target while grasping (0 = open)")                            \
  X(lift_height, 0.07, "m", "how far the hand rises before carrying the peg")                            \
  X(approach_speed, 0.3, "m/s", "hand speed while approaching the peg")                                  \
  X(lift_speed, 0.2, "m/s", "hand speed while lifting")                                                  \
  X(transport_speed, 0.3, "m/s", "hand speed while carrying the peg to above the hole")                  \
  X(insert_speed, 0.1, "m/s", "speed of the hand's target while lowering the peg")                       \
  X(align_x, 0.0, "m", "the expert's alignment error: where it puts the peg's tip relative to the hole's axis, x") \
  X(align_y, 0.0, "m", "the expert's alignment error, y")                                                \
  X(grasp_s, 0.3, "s", "time the fingers close before the lift")                                         \
  X(insert_depth, 0.03, "m", "the tip this far below the hole's mouth counts as inserted")               \
  X(hold_s, 0.1, "s", "the peg must stay inserted this long")                                            \
  X(slip_limit, 0.01, "m", "the peg pushed up in the grip this far is a slip")                           \
  X(drop_dist, 0.03, "m", "fall of the carried peg out of its place in the grip that counts as a drop")  \
  X(collision_force, 8.0, "N", "total contact force of the peg on the socket's top (or of a finger or the palm on the static geoms, summed over its points) that counts as a collision") \
  X(stuck_s, 0.5, "s", "inserting without 1 mm of depth progress for this long is stuck")

enum PegInsertParam : int32_t {
#define S2R_PEG_INSERT_PARAM_ID(name, ...) kPeg_##name,
  S2R_PEG_INSERT_PARAMS(S2R_PEG_INSERT_PARAM_ID)
#undef S2R_PEG_INSERT_PARAM_ID
  kNumPegInsertParams
};
static_assert(kNumPegInsertParams <= kTaskMaxParams, "peg_insert parameters exceed kTaskMaxParams");

// peg_insert's actuators, in the task's order (pick_lift's)
enum PegInsertActuator : int32_t { kPegX = 0, kPegY = 1, kPegZ = 2, kPegFingerLeft = 3, kPegFingerRight = 4 };

// The tip within this of the hole's axis (horizontally) can be in the hole: the built-in socket's
// hole is 1.3 cm from its axis to a wall, and a peg standing beside its walls (2.3 cm out) has its
// tip at least 3.3 cm from the axis.
constexpr Real kPegHoleRadius = Real(0.02);
// the insert phase's last target puts the tip this much deeper than insert_depth
constexpr Real kPegInsertOvershoot = Real(0.005);
// the peg's tip less than this into the hole: contact with the socket is on its top (the rim)
constexpr Real kPegRimDepth = Real(0.005);

// How far the peg's tip is below the hole's mouth, m; capped at 0 when the tip is not over the hole.
S2R_HD Real PegDepth(Vec3 tip, Vec3 mouth) {
  const Real dx = tip.x - mouth.x, dy = tip.y - mouth.y;
  const Real depth = mouth.z - tip.z;
  return dx * dx + dy * dy < kPegHoleRadius * kPegHoleRadius ? depth : Min(depth, Real(0));
}

// How long the transport's smoothstep takes: its peak speed, 1.5 times the mean, is transport_speed.
S2R_HD Real PegTransportTime(const TaskState* ts, const Real* p) {
  const Real dx = ts->place_xy[0] - ts->grasp_xy[0], dy = ts->place_xy[1] - ts->grasp_xy[1];
  return Max(Real(1.5) * Sqrt(dx * dx + dy * dy) / p[kPeg_transport_speed], Real(1e-3));
}

S2R_HD void PegInsertReset(const TaskModel& t, const ModelView& m, const StateView& s, int world, const Real*,
                           TaskState* ts) {
  TaskResetCommon(t, m, s, world, ts);
  ts->best = Real(-1e30);  // deepest insertion so far
}

S2R_HD void PegInsertAct(const TaskModel& t, const ModelView& m, const StateView& s, int world, const Real* p,
                         TaskState* ts, Real* action) {
  const Vec3 peg = BodyPosition(s, world, t.object_body);
  const Vec3 hand = BodyPosition(s, world, t.effector_body);
  const Real dt = m.timestep * Real(m.steps_per_control);
  const Real top = ts->lift_start + p[kPeg_lift_height];  // the carrying height
  Vec3 target = hand;
  Real fingers = p[kPeg_close_depth];
  switch (ts->phase) {
    case kPhaseApproach: {
      // over the peg, at most approach_speed * dt per step horizontally, straight to the grasp height
      Vec3 to{peg.x - hand.x, peg.y - hand.y, Real(0)};
      Real len = Length(to), step = p[kPeg_approach_speed] * dt;
      target = len > step ? hand + (step / len) * to : Vec3{peg.x, peg.y, hand.z};
      target.z = p[kPeg_grasp_height];
      fingers = Real(0);
      break;
    }
    case kPhaseGrasp:
      target = Vec3{ts->grasp_xy[0], ts->grasp_xy[1], p[kPeg_grasp_height]};
      break;
    case kPhaseLift: {
      Real z = Min(top, ts->lift_start + p[kPeg_lift_speed] * (ts->phase_time + dt));
      target = Vec3{ts->grasp_xy[0], ts->grasp_xy[1], z};
      break;
    }
    case kPhaseTransport: {
      // from where the grasp held the hand to the place over the hole along a smoothstep (no jolt
      // at either end to swing the peg in the grip), at the carrying height
      const Real tau = Min(Real(1), (ts->phase_time + dt) / PegTransportTime(ts, p));
      const Real f = tau * tau * (Real(3) - Real(2) * tau);
      target = Vec3{ts->grasp_xy[0] + f * (ts->place_xy[0] - ts->grasp_xy[0]),
                    ts->grasp_xy[1] + f * (ts->place_xy[1] - ts->grasp_xy[1]), top};
      break;
    }
    default: {  // insert: a target falling at insert_speed from the carrying height to the last one
      const Vec3 mouth = BodyPosition(s, world, t.target_body);
      // the hand height that puts the tip insert_depth + overshoot below the mouth, with the peg
      // where it sat in the grip when the lift began
      const Real bottom = mouth.z - (p[kPeg_insert_depth] + kPegInsertOvershoot) - ts->grip_offset;
      Real z = Max(bottom, top - p[kPeg_insert_speed] * (ts->phase_time + dt));
      target = Vec3{ts->place_xy[0], ts->place_xy[1], z};
    }
  }
  const Vec3 delta = target - LoadVec3(ts->effector0);
  for (int i = 0; i < 3 && i < t.nactuator; ++i) action[t.actuator[i]] = SlideTarget(m, t.joint[i], ts->q0[i], delta);
  for (int i = kPegFingerLeft; i < t.nactuator; ++i) action[t.actuator[i]] = fingers;
}

// Contact forces, N: `rim` the total normal force between the peg and the socket's geoms, `hand`
// the hand's push on the static geoms (HandStaticForce).
struct PegContactForces {
  Real rim;
  Real hand;
};

S2R_HD PegContactForces PegForces(const TaskModel& t, const ModelView& m, const StateView& s, int world) {
  PegContactForces f{Real(0), Real(0)};
  const Contact* c = s.contacts(world);
  for (int i = 0; i < s.contact_count(world); ++i) {
    const int ba = m.geom_body[c[i].geom_a], bb = m.geom_body[c[i].geom_b];
    if ((ba == t.object_body && bb == t.target_body) || (bb == t.object_body && ba == t.target_body)) {
      f.rim += c[i].normal_force;
    }
  }
  f.hand = HandStaticForce(t, m, s, world);
  return f;
}

// The state checker's labels (kCheckerState: whoever acts), with the grip of StateGripUpdate.
// Success: the tip at least insert_depth below the mouth for hold_s; grasp_miss as pick_lift's;
// drop: the peg fell drop_dist out of its place in the grip while not in the hole (a peg let go
// over the hole falls into it); slip: it was pushed up in the grip by slip_limit; collision: the
// carried peg pressed the socket with more than collision_force while its tip was not kPegRimDepth
// into the hole, or the hand pressed a static geom that hard; stuck: at the socket (the tip within
// 2 kPegHoleRadius of the hole's axis and less than 1 cm above the mouth) without 1 mm of depth
// progress for stuck_s, or the hand, the fingers and the peg all still (1 mm) for stuck_s short
// of the goal. Near miss uses the deepest insertion of the episode.
S2R_HD void PegInsertStateLabels(const TaskModel& t, const ModelView& m, const StateView& s, int world, const Real* p,
                                 Real dt, Vec3 peg, Vec3 hand, Vec3 mouth, Real depth, TaskState* ts) {
  const Real gain = peg.z - ts->object0[2];
  StateGripUpdate(t, m, s, world, peg, hand, gain, kPegFingerLeft, ts);
  ts->deepest = Max(ts->deepest, depth);
  ts->held_time = depth >= p[kPeg_insert_depth] ? ts->held_time + dt : Real(0);
  const Real dx = peg.x - mouth.x, dy = peg.y - mouth.y;
  const bool at_socket =
      dx * dx + dy * dy < Real(4) * kPegHoleRadius * kPegHoleRadius && peg.z < mouth.z + Real(0.01);
  if (at_socket && depth > ts->depth_best + Real(0.001)) {
    ts->depth_best = depth;
    ts->depth_time = Real(0);
  } else if (at_socket) {
    ts->depth_time += dt;
  } else {
    ts->depth_best = depth;
    ts->depth_time = Real(0);
  }
  ts->stage = ts->grip == 2 ? (at_socket ? kPhaseInsert : kPhaseTransport) : (ts->closing ? kPhaseGrasp : kPhaseApproach);
  const Real still = StateStillTime(t, s, world, peg, hand, kPegFingerLeft, dt, ts);
  Real sag = Real(0);  // > 0: fell in the grip; < 0: pushed up
  if (ts->grip > 0) {
    sag = ts->grip_ref - (peg.z - hand.z);
    ts->max_slip = Max(ts->max_slip, Abs(sag));
    ts->min_margin = p[kPeg_slip_limit] - ts->max_slip;
  }
  if (StateGraspMissed(ts, hand, gain)) TaskEnd(ts, kLabelGraspMiss, 1);
  if (!ts->done && ts->grip > 0 && gain > Real(0.005) && sag > p[kPeg_drop_dist] && depth < kPegRimDepth) {
    TaskEnd(ts, kLabelDrop, 1);
  }
  if (!ts->done && ts->grip > 0 && -sag > p[kPeg_slip_limit]) TaskEnd(ts, kLabelSlip, 1);
  if (!ts->done) {
    const PegContactForces f = PegForces(t, m, s, world);
    const bool on_rim = ts->grip == 2 && mouth.z - peg.z < kPegRimDepth;
    if ((on_rim && f.rim > p[kPeg_collision_force]) || f.hand > p[kPeg_collision_force]) TaskEnd(ts, kLabelCollision, 1);
  }
  if (!ts->done && ts->held_time >= p[kPeg_hold_s] - Real(1e-6)) TaskEnd(ts, kLabelNone, 1);
  if (!ts->done && ts->held_time == Real(0) && (ts->depth_time >= p[kPeg_stuck_s] || still >= p[kPeg_stuck_s])) {
    TaskEnd(ts, kLabelStuck, 1);
  }
}

S2R_HD void PegInsertEvaluate(const TaskModel& t, const ModelView& m, const StateView& s, int world, const Real* p,
                              int horizon_steps, TaskState* ts) {
  if (ts->done) return;
  const Real dt = m.timestep * Real(m.steps_per_control);
  ts->steps += 1;
  ts->phase_time += dt;
  const Vec3 peg = BodyPosition(s, world, t.object_body);
  const Vec3 hand = BodyPosition(s, world, t.effector_body);
  const Vec3 mouth = BodyPosition(s, world, t.target_body);
  const Vec3 peg0 = LoadVec3(ts->object0);
  const Real depth = PegDepth(peg, mouth);
  ts->margin = depth - p[kPeg_insert_depth];

  // phases
  int next = ts->phase;
  if (ts->phase == kPhaseApproach) {
    // aligned over the peg, and at the grasp height or as low as the hand gets (1 s)
    Vec3 off{peg.x - hand.x, peg.y - hand.y, Real(0)};
    const bool low = Abs(p[kPeg_grasp_height] - hand.z) < Real(0.005) || ts->phase_time > Real(1);
    if (Length(off) < Real(0.005) && low) {
      next = kPhaseGrasp;
      ts->grasp_xy[0] = peg.x;
      ts->grasp_xy[1] = peg.y;
    }
  } else if (ts->phase == kPhaseGrasp && ts->phase_time >= p[kPeg_grasp_s] - Real(1e-6)) {
    // the lift starts here; where the peg sits in the grip is the reference for slips and drops
    next = kPhaseLift;
    ts->lift_start = p[kPeg_grasp_height];
    ts->grip_offset = peg.z - hand.z;
  } else if (ts->phase == kPhaseLift && p[kPeg_lift_speed] * ts->phase_time >= p[kPeg_lift_height]) {
    next = kPhaseTransport;  // the lift's target is at the top
  } else if (ts->phase == kPhaseTransport && ts->phase_time >= PegTransportTime(ts, p)) {
    // the target has arrived; settled over the place: within 1 mm, slower than 1 cm/s horizontally
    const Vec3 v = LoadVec3(s.body_linvel(world, t.effector_body));
    const Real off_x = hand.x - ts->place_xy[0], off_y = hand.y - ts->place_xy[1];
    if (off_x * off_x + off_y * off_y < Real(1e-6) && v.x * v.x + v.y * v.y < Real(1e-4)) {
      next = kPhaseInsert;
      ts->progress_time = Real(0);
    }
  }
  if (next == kPhaseTransport) {
    // the place: the hand where the tip, as it sits in the grip now (tilted by the carrying,
    // perhaps), is over the hole's axis plus the expert's alignment error; fixed once inserting
    ts->place_xy[0] = mouth.x + p[kPeg_align_x] - (peg.x - hand.x);
    ts->place_xy[1] = mouth.y + p[kPeg_align_y] - (peg.y - hand.y);
  }
  if (next != ts->phase) {
    ts->phase = next;
    ts->phase_time = Real(0);
  }

  // labels
  if (t.checker == kCheckerState) {
    PegInsertStateLabels(t, m, s, world, p, dt, peg, hand, mouth, depth, ts);
  } else {
    // depth progress while inserting: 1 mm deeper than ever before
    if (ts->phase == kPhaseInsert) {
      if (depth > ts->best + Real(0.001)) {
        ts->best = depth;
        ts->progress_time = Real(0);
      } else {
        ts->progress_time += dt;
      }
      ts->inserted_time = depth >= p[kPeg_insert_depth] ? ts->inserted_time + dt : Real(0);
    }

    const bool carried = ts->phase == kPhaseLift || ts->phase == kPhaseTransport || ts->phase == kPhaseInsert;
    if (carried) {
      const Real rise = hand.z - ts->lift_start;
      const Real gain = peg.z - peg0.z;                        // how far the peg is above its start
      const Real sag = ts->grip_offset - (peg.z - hand.z);     // > 0: fell in the grip; < 0: pushed up
      ts->max_slip = Max(ts->max_slip, Abs(sag));
      ts->min_margin = p[kPeg_slip_limit] - ts->max_slip;
      const bool carrying = ts->phase == kPhaseLift || ts->phase == kPhaseTransport;
      if (carrying && rise > Real(0.02) && gain < Real(0.5) * rise && gain < Real(0.01)) TaskEnd(ts, kLabelGraspMiss, 1);
      if (!ts->done && carrying && gain > Real(0.005) && sag > p[kPeg_drop_dist]) TaskEnd(ts, kLabelDrop, 1);
      if (!ts->done && -sag > p[kPeg_slip_limit]) TaskEnd(ts, kLabelSlip, 1);
    }
    if (!ts->done) {
      const PegContactForces f = PegForces(t, m, s, world);
      const bool on_rim = carried && mouth.z - peg.z < kPegRimDepth;
      if ((on_rim && f.rim > p[kPeg_collision_force]) || f.hand > p[kPeg_collision_force]) {
        TaskEnd(ts, kLabelCollision, 1);
      }
    }
    if (!ts->done && ts->phase == kPhaseInsert && ts->inserted_time >= p[kPeg_hold_s] - Real(1e-6)) {
      TaskEnd(ts, kLabelNone, 1);
    }
    if (!ts->done && ts->phase == kPhaseInsert && ts->progress_time >= p[kPeg_stuck_s]) TaskEnd(ts, kLabelStuck, 1);
  }
  TaskEvaluateCommon(s, world, horizon_steps, ts);
  if (ts->done) {
    const Real limit = p[kPeg_slip_limit];
    const Real deepest = t.checker == kCheckerState ? ts->deepest : ts->best;
    ts->near_miss = ts->success ? (ts->max_slip > Real(0.5) * limit) : (deepest >= Real(0.5) * p[kPeg_insert_depth]);
  }
}

}  // namespace s2r
