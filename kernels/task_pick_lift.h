// Task `pick_lift`: grasp the object, lift it by lift_height and hold it there (configs/scenes/
// pick_lift.xml: a hand on three world-aligned slides, two force-limited fingers on slides that
// close towards each other, a free box standing between the open fingers).
//
// Expert: move the hand over the object at `grasp_height` (the hand's height when the fingers
// straddle it; approach), close both fingers to `close_depth` (their joint target: the servo's
// spring beyond first touch is the grip force) for grasp_s (grasp), raise the hand by lift_height
// (lift) and keep it there (hold). A heavy or slippery object slips or drops out of a grip the
// fingers' force limit caps; a grasp too high closes on nothing; a grasp too low drives the
// fingers into the floor.
//
// Labels: success (the object held at least lift_height - 1 cm above its start for hold_s, or
// timeout if it is held lower);
// margin: the object's height above its start less (lift_height - 1 cm); min_margin: drop_dist
// less the largest slip;
// grasp_miss (the hand rose 2 cm without the object following half as much); drop (the object
// fell drop_dist below its place in the grip after leaving the floor); slip (it moved slip_limit
// in the grip, measured at the end, without dropping); collision (a finger or the palm pressed the
// floor harder than collision_force); stuck (approaching, the hand came no closer to the grasp
// pose by 1 mm for stuck_s: fingers pressed onto the floor by a grasp height below reach, under
// collision_force, hold the gantry as it drags them); sim_unstable; timeout. Near miss: a success
// whose slip was over half the limit, or a slip or drop that came within half the limit of holding
// (a drop falls drop_dist, over 1.5 slip_limit with the defaults: never a near miss then).
#pragma once

#include "kernels/task.h"

namespace s2r {

// X(name, default, unit, description)
#define S2R_PICK_LIFT_PARAMS(X)                                                                 \
  X(grasp_height, 0.10, "m", "hand height (world z of the hand body) while grasping")           \
  X(close_depth, 0.03, "m", "finger joint target while grasping (0 = open)")                    \
  X(lift_height, 0.1, "m", "how far to lift the object")                                        \
  X(approach_speed, 0.3, "m/s", "hand speed while approaching")                                 \
  X(lift_speed, 0.2, "m/s", "hand speed while lifting")                                         \
  X(grasp_s, 0.3, "s", "time the fingers close before the lift")                                \
  X(hold_s, 0.5, "s", "the object must be held at the height this long")                        \
  X(slip_limit, 0.01, "m", "movement of the object in the grip that counts as a slip")          \
  X(drop_dist, 0.03, "m", "fall of the object out of its place in the grip that counts as a drop") \
  X(collision_force, 20.0, "N", "total normal force of a finger or of the palm on the static geoms (the sum over its points) that counts as a collision") \
  X(stuck_s, 1.0, "s", "approaching without 1 mm of progress towards the grasp pose for this long is stuck")

enum PickLiftParam : int32_t {
#define S2R_PICK_LIFT_PARAM_ID(name, ...) kPick_##name,
  S2R_PICK_LIFT_PARAMS(S2R_PICK_LIFT_PARAM_ID)
#undef S2R_PICK_LIFT_PARAM_ID
  kNumPickLiftParams
};
static_assert(kNumPickLiftParams <= kTaskMaxParams, "pick_lift parameters exceed kTaskMaxParams");

// pick_lift's actuators, in the task's order
enum PickLiftActuator : int32_t { kPickX = 0, kPickY = 1, kPickZ = 2, kPickFingerLeft = 3, kPickFingerRight = 4 };

S2R_HD void PickLiftReset(const TaskModel& t, const ModelView& m, const StateView& s, int world, const Real*,
                          TaskState* ts) {
  TaskResetCommon(t, m, s, world, ts);
}

S2R_HD void PickLiftAct(const TaskModel& t, const ModelView& m, const StateView& s, int world, const Real* p,
                        TaskState* ts, Real* action) {
  const Vec3 object = BodyPosition(s, world, t.object_body);
  const Vec3 hand = BodyPosition(s, world, t.effector_body);
  const Real dt = m.timestep * Real(m.steps_per_control);
  Vec3 target = hand;
  Real fingers = Real(0);
  switch (ts->phase) {
    case kPhaseApproach: {
      // over the object, at most approach_speed * dt per step horizontally, straight to the grasp
      // height vertically (a grasp height below reach presses the fingers into the floor)
      Vec3 to{object.x - hand.x, object.y - hand.y, Real(0)};
      Real len = Length(to), step = p[kPick_approach_speed] * dt;
      target = len > step ? hand + (step / len) * to : Vec3{object.x, object.y, hand.z};
      target.z = p[kPick_grasp_height];
      break;
    }
    case kPhaseGrasp:
      target = Vec3{ts->grasp_xy[0], ts->grasp_xy[1], p[kPick_grasp_height]};
      fingers = p[kPick_close_depth];
      break;
    default: {  // lift and hold: a target rising at lift_speed from the lift's start to lift_height above it
      Real top = ts->lift_start + p[kPick_lift_height];
      Real z = Min(top, ts->lift_start + p[kPick_lift_speed] * (ts->phase == kPhaseLift ? ts->phase_time + dt : Real(1e9)));
      target = Vec3{ts->grasp_xy[0], ts->grasp_xy[1], z};
      fingers = p[kPick_close_depth];
    }
  }
  const Vec3 delta = target - LoadVec3(ts->effector0);
  for (int i = 0; i < 3 && i < t.nactuator; ++i) action[t.actuator[i]] = SlideTarget(m, t.joint[i], ts->q0[i], delta);
  for (int i = kPickFingerLeft; i < t.nactuator; ++i) action[t.actuator[i]] = fingers;
}

// The state checker's labels (kCheckerState: whoever acts). Success: carried, both fingers on it,
// at least lift_height - 1 cm above its start for hold_s without a break (slip instead when it
// slid more than slip_limit in the grip on the way); grasp_miss: the fingers closed and the hand
// rose 2 cm above its lowest point since without the object following half as far (StateGrasp
// Missed); drop: it fell drop_dist out of its place in the grip after leaving the floor; collision
// as the expert's; stuck: the hand, the fingers and the object all still (1 mm) for stuck_s short
// of the goal (a held object the arm cannot raise to the height ends so, where the phase checker
// says timeout), or slip if the object was carried and slid more than slip_limit in the grip. The
// `phase` metric is the stage the state shows.
S2R_HD void PickLiftStateLabels(const TaskModel& t, const ModelView& m, const StateView& s, int world, const Real* p,
                                Real dt, Vec3 object, Vec3 hand, Real gain, TaskState* ts) {
  const bool held = StateGripUpdate(t, m, s, world, object, hand, gain, kPickFingerLeft, ts);
  ts->held_time = ts->grip == 2 && held && ts->margin >= Real(0) ? ts->held_time + dt : Real(0);
  ts->stage = ts->grip == 2 ? (ts->held_time > Real(0) ? kPhaseHold : kPhaseLift)
                            : (ts->closing ? kPhaseGrasp : kPhaseApproach);
  const Real still = StateStillTime(t, s, world, object, hand, kPickFingerLeft, dt, ts);
  Real sag = Real(0);
  if (ts->grip > 0) {
    sag = ts->grip_ref - (object.z - hand.z);  // how far the object fell in the grip
    ts->max_slip = Max(ts->max_slip, Abs(sag));
    ts->min_margin = p[kPick_drop_dist] - ts->max_slip;
  }
  if (StateGraspMissed(ts, hand, gain)) TaskEnd(ts, kLabelGraspMiss, 1);
  if (!ts->done && ts->grip > 0 && gain > Real(0.005) && sag > p[kPick_drop_dist]) TaskEnd(ts, kLabelDrop, 1);
  if (!ts->done && HandStaticForce(t, m, s, world) > p[kPick_collision_force]) TaskEnd(ts, kLabelCollision, 1);
  if (!ts->done && ts->held_time >= p[kPick_hold_s] - Real(1e-6)) {
    TaskEnd(ts, ts->max_slip > p[kPick_slip_limit] ? kLabelSlip : kLabelNone, 1);
  }
  if (!ts->done && ts->held_time == Real(0) && still >= p[kPick_stuck_s] - Real(1e-6)) {
    // at rest short of the goal; carried with more than slip_limit of slip, the grip is why
    TaskEnd(ts, ts->grip == 2 && ts->max_slip > p[kPick_slip_limit] ? kLabelSlip : kLabelStuck, 1);
  }
}

S2R_HD void PickLiftEvaluate(const TaskModel& t, const ModelView& m, const StateView& s, int world, const Real* p,
                             int horizon_steps, TaskState* ts) {
  if (ts->done) return;
  const Real dt = m.timestep * Real(m.steps_per_control);
  ts->steps += 1;
  ts->phase_time += dt;
  const Vec3 object = BodyPosition(s, world, t.object_body);
  const Vec3 hand = BodyPosition(s, world, t.effector_body);
  const Vec3 object0 = LoadVec3(ts->object0);
  const Real gain = object.z - object0.z;  // how far the object is above its start
  ts->margin = gain - (p[kPick_lift_height] - Real(0.01));

  // phases
  int next = ts->phase;
  if (ts->phase == kPhaseApproach) {
    // the hand's horizontal distance from over the object, and its height error
    const Real off = Length(Vec3{object.x - hand.x, object.y - hand.y, Real(0)});
    const Real dz = Abs(p[kPick_grasp_height] - hand.z);
    // progress: the hand at least 1 mm closer to the grasp pose (the two distances summed) than ever
    if (off + dz < ts->best - Real(0.001)) {
      ts->best = off + dz;
      ts->progress_time = Real(0);
    } else {
      ts->progress_time += dt;
    }
    // aligned over the object, and at the grasp height or as low as the hand gets (1 s)
    const bool low = dz < Real(0.005) || ts->phase_time > Real(1);
    if (off < Real(0.005) && low) {
      next = kPhaseGrasp;
      ts->grasp_xy[0] = object.x;
      ts->grasp_xy[1] = object.y;
    }
  } else if (ts->phase == kPhaseGrasp && ts->phase_time >= p[kPick_grasp_s] - Real(1e-6)) {
    // the lift starts here; where the object sits in the grip is the reference for slips and drops
    next = kPhaseLift;
    ts->lift_start = p[kPick_grasp_height];
    ts->grip_offset = object.z - hand.z;
  } else if (ts->phase == kPhaseLift && p[kPick_lift_speed] * ts->phase_time >= p[kPick_lift_height]) {
    next = kPhaseHold;  // the lift's target is at the top
  }
  if (next != ts->phase) {
    ts->phase = next;
    ts->phase_time = Real(0);
  }

  // labels
  if (t.checker == kCheckerState) {
    PickLiftStateLabels(t, m, s, world, p, dt, object, hand, gain, ts);
  } else {
    if (ts->phase == kPhaseLift || ts->phase == kPhaseHold) {
      const Real rise = hand.z - ts->lift_start;
      const Real sag = ts->grip_offset - (object.z - hand.z);  // how far the object fell in the grip
      ts->max_slip = Max(ts->max_slip, Abs(sag));
      ts->min_margin = p[kPick_drop_dist] - ts->max_slip;  // how close it came to a drop
      if (rise > Real(0.02) && gain < Real(0.5) * rise && gain < Real(0.01)) TaskEnd(ts, kLabelGraspMiss, 1);
      if (!ts->done && gain > Real(0.005) && sag > p[kPick_drop_dist]) TaskEnd(ts, kLabelDrop, 1);
    }
    if (!ts->done && HandStaticForce(t, m, s, world) > p[kPick_collision_force]) TaskEnd(ts, kLabelCollision, 1);
    if (!ts->done && ts->phase == kPhaseApproach && ts->progress_time >= p[kPick_stuck_s] - Real(1e-6)) {
      TaskEnd(ts, kLabelStuck, 1);
    }
    if (!ts->done && ts->phase == kPhaseHold && ts->phase_time >= p[kPick_hold_s] - Real(1e-6)) {
      // held: success when high enough; a slip beyond the limit fails; an object held too low (the
      // arm sags under a heavy load) did not achieve the task in time
      TaskEnd(ts, ts->max_slip > p[kPick_slip_limit] ? kLabelSlip : (ts->margin >= 0 ? kLabelNone : kLabelTimeout), 1);
    }
  }
  TaskEvaluateCommon(s, world, horizon_steps, ts);
  if (ts->done) {
    const Real limit = p[kPick_slip_limit];
    ts->near_miss = ts->success ? (ts->max_slip > Real(0.5) * limit)
                                : ((ts->label == kLabelSlip || ts->label == kLabelDrop) && ts->max_slip < Real(1.5) * limit);
  }
}

}  // namespace s2r
