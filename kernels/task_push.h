// Task `push`: push a box into a goal region on the floor (configs/scenes/box_push.xml: a
// sphere pusher on two world-aligned slides, x then y, and a free box).
//
// Expert: the push line runs from the goal back through the box centre. The pusher first goes to
// the point `standoff` + `realign` behind the box on that line, clear of the box (approach), then
// aims `push_depth` into the box along the line (push): the position servo's spring turns that depth into the pushing force,
// so a heavier or higher-friction box is pushed more slowly or not at all. The line is recomputed
// every step from where the box is; a pusher more than `realign` off the line approaches again.
// While pushing it brakes: a box sliding goalwards faster than it could stop at the goal centre at
// `brake_decel` is let slide (the floor's friction slows it). When the box centre is within
// `goal_radius` of the goal the pusher stops (hold), and the box must stay there for `hold_s`.
//
// Push has one checker, the state checker (TaskChecker; a sweep records it so): its phases follow
// the box and the pusher, whoever acts. Labels: success (box in the goal for hold_s); stuck (pushing, the box came no closer to the goal
// by 1 mm than at the push's start for stuck_s of the push: the time an approach takes does not
// count, so a box that slid past the goal while the expert goes round it is not stuck; or, anywhere
// out of the goal, the pusher and the box still, 1 mm, for stuck_s: a stalled policy, or the expert
// wedged while approaching); sim_unstable;
// timeout. Margin: goal_radius - final distance (how far inside); min_margin: goal_radius - the
// closest distance of the episode. Near miss: a success with less than a quarter of goal_radius to
// spare, or a failure whose box came within half a goal_radius of the goal's edge.
#pragma once

#include "kernels/task.h"
#include "kernels/task_arm.h"

namespace s2r {

// the push task's parameters, in order: X(name, default, unit, description)
#define S2R_PUSH_PARAMS(X)                                                                  \
  X(goal_x, 0.25, "m", "goal centre, world x")                                              \
  X(goal_y, 0.0, "m", "goal centre, world y")                                               \
  X(goal_radius, 0.03, "m", "the box centre within this of the goal counts as in the goal") \
  X(standoff, 0.085, "m", "distance behind the box centre where a push starts")             \
  X(push_depth, 0.08, "m", "how far into the box the pusher aims while pushing")            \
  X(approach_speed, 0.4, "m/s", "pusher speed while approaching")                           \
  X(realign, 0.03, "m", "a pusher this far off the push line approaches again")             \
  X(stuck_s, 1.0, "s", "no progress for this long is a failure (stuck)")                    \
  X(hold_s, 0.2, "s", "the box must stay in the goal this long")                            \
  X(brake_decel, 2.0, "m/s^2", "pushing, a box too fast to stop at the goal centre at this is let slide; 0: never")

enum PushParam : int32_t {
#define S2R_PUSH_PARAM_ID(name, ...) kPush_##name,
  S2R_PUSH_PARAMS(S2R_PUSH_PARAM_ID)
#undef S2R_PUSH_PARAM_ID
  kNumPushParams
};
static_assert(kNumPushParams <= kTaskMaxParams, "push parameters exceed kTaskMaxParams");

// the goal direction and the push line's start behind the box (floor plane)
struct PushLine {
  Vec3 dir;     // unit, box -> goal
  Vec3 behind;  // standoff behind the box centre, at the pusher's height
  Vec3 approach;  // realign further back: where an approach ends, clear of the box
  Real distance;  // box centre to goal, m
};

S2R_HD PushLine ComputePushLine(const Real* p, Vec3 box, Real pusher_z) {
  Vec3 to_goal{p[kPush_goal_x] - box.x, p[kPush_goal_y] - box.y, Real(0)};
  Real d = Length(to_goal);
  PushLine line;
  line.distance = d;
  line.dir = d > Real(1e-6) ? (Real(1) / d) * to_goal : Vec3{1, 0, 0};
  line.behind = Vec3{box.x, box.y, pusher_z} - p[kPush_standoff] * line.dir;
  line.approach = line.behind - p[kPush_realign] * line.dir;
  return line;
}

S2R_HD void PushReset(const TaskModel& t, const ModelView& m, const StateView& s, int world, const Real*,
                      TaskState* ts) {
  TaskResetCommon(t, m, s, world, ts);
}

// The expert's joint targets for this control step: action[0] slide x, action[1] slide y (the
// task's actuator order), or an arm's joint targets that move the pusher there at its reset height.
template <bool kArm = true>
S2R_HD void PushAct(const TaskModel& t, const ModelView& m, const StateView& s, int world, const Real* p,
                    TaskState* ts, Real* action) {
  const Vec3 box = BodyPosition(s, world, t.object_body);
  const Vec3 pusher = BodyPosition(s, world, t.effector_body);
  const PushLine line = ComputePushLine(p, box, pusher.z);
  const Real dt = m.timestep * Real(m.steps_per_control);
  Vec3 target = pusher;
  if (ts->phase == kPhaseApproach) {
    // towards the approach point, at most approach_speed * dt per step
    Vec3 to = line.approach - pusher;
    Real len = Length(to), step = p[kPush_approach_speed] * dt;
    target = len > step ? pusher + (step / len) * to : line.approach;
  } else if (ts->phase == kPhasePush) {
    target = Vec3{box.x, box.y, pusher.z} + (p[kPush_push_depth] - p[kPush_standoff]) * line.dir;
    // braking: a box sliding towards the goal faster than it could stop at the centre at
    // brake_decel is let slide (the pusher holds where it is; the floor's friction slows the box),
    // so a box on a slippery floor does not slide through the goal when the pusher stops in it
    // (docs/sweep.md: builtin:push's successes at floor friction 0.3-0.4 went from 65 to 98 %)
    const Real decel = p[kPush_brake_decel];
    const Real along = Dot(LoadVec3(s.body_linvel(world, t.object_body)), line.dir);
    if (decel > Real(0) && along > Real(0) && along * along > Real(2) * decel * line.distance) target = pusher;
  }
  target.z = ts->effector0[2];
  DriveEffector<kArm>(t, m, s, world, ts, target, 2, action);
}

// After the control step: phases, progress, labels.
S2R_HD void PushEvaluate(const TaskModel& t, const ModelView& m, const StateView& s, int world, const Real* p,
                         int horizon_steps, TaskState* ts) {
  if (ts->done) return;
  const Real dt = m.timestep * Real(m.steps_per_control);
  ts->steps += 1;
  ts->phase_time += dt;
  const Vec3 box = BodyPosition(s, world, t.object_body);
  const Vec3 pusher = BodyPosition(s, world, t.effector_body);
  const PushLine line = ComputePushLine(p, box, pusher.z);
  const Real radius = p[kPush_goal_radius];
  // progress while pushing: the box at least 1 mm closer than ever since this push began
  if (ts->phase == kPhasePush) {
    if (line.distance < ts->best - Real(0.001)) {
      ts->best = line.distance;
      ts->progress_time = Real(0);
    } else {
      ts->progress_time += dt;
    }
  }
  // the closest approach of the episode
  ts->min_margin = ts->steps == 1 ? radius - line.distance : Max(ts->min_margin, radius - line.distance);
  ts->margin = radius - line.distance;

  // phases
  const Real off_approach = Length(pusher - line.approach);
  int next = ts->phase;
  if (line.distance <= radius) {
    next = kPhaseHold;
  } else if (ts->phase == kPhaseHold) {
    next = kPhaseApproach;
  } else if (ts->phase == kPhaseApproach && off_approach < Real(0.01)) {
    next = kPhasePush;
  } else if (ts->phase == kPhasePush) {
    // off the line: the component of the pusher's offset across the push direction
    Vec3 rel = pusher - line.behind;
    Vec3 across = rel - Dot(rel, line.dir) * line.dir;
    if (Length(across) > p[kPush_realign] || Dot(rel, line.dir) < -p[kPush_realign]) next = kPhaseApproach;
  }
  if (next != ts->phase) {
    ts->phase = next;
    ts->phase_time = Real(0);
    if (next == kPhasePush) {  // a push begins: its progress is measured from here
      ts->best = line.distance;
      ts->progress_time = Real(0);
    }
  }

  // labels
  if (ts->phase == kPhaseHold && ts->phase_time >= p[kPush_hold_s] - Real(1e-6)) TaskEnd(ts, kLabelNone, 1);
  if (!ts->done && ts->phase == kPhasePush && ts->progress_time >= p[kPush_stuck_s]) TaskEnd(ts, kLabelStuck, 1);
  // anywhere else: the pusher and the box still (1 mm) for stuck_s out of the goal (a policy that
  // stalls off the expert's push line; the expert stalled while going round the box)
  const Real still = StateStillTime(t, s, world, box, pusher, t.nactuator, dt, ts);
  if (!ts->done && ts->phase != kPhaseHold && still >= p[kPush_stuck_s] - Real(1e-6)) TaskEnd(ts, kLabelStuck, 1);
  TaskEvaluateCommon(s, world, horizon_steps, ts);
  ts->stage = ts->phase;  // both checkers: the phases follow the state (see the top)
  if (ts->done) {
    ts->near_miss = ts->success ? (ts->margin < Real(0.25) * radius) : (ts->min_margin > Real(-0.5) * radius);
  }
}

}  // namespace s2r
