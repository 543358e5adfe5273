// Perturbation events: the task layer of the sim-to-real gap. A person moves the target object,
// something knocks it, the goal changes mid-episode.
//
// An event kind has a probability per episode, a time window and a magnitude distribution; per
// episode it is drawn once (does it happen, when, how much, in which horizontal direction) from
// the episode's own Philox stream, so which episodes are perturbed, and how, is as reproducible as
// the physics. It fires at the first control step at or after its time, before the expert acts.
#pragma once

#include "kernels/distributions.h"
#include "kernels/state_view.h"
#include "kernels/task.h"

namespace s2r {

enum EventKind : int32_t {
  kEventDisplaceObject = 0,  // the object is moved `magnitude` m horizontally (as a person would)
  kEventPushObject = 1,      // the object's velocity changes by `magnitude` m/s horizontally
  kEventGoalChange = 2,      // the goal moves `magnitude` m horizontally (tasks with a goal)
};

constexpr int kMaxEvents = 4;

struct EventSpec {
  int32_t kind;
  Real probability;        // per episode
  Real window_lo, window_hi;  // s after the episode's start
  Distribution magnitude;  // m or m/s
};

// one event's draw for one episode
struct EventDraw {
  int32_t happens;
  int32_t fired;     // it has been applied
  Real time;         // s
  Real magnitude;
  Real direction;    // rad, about world z
};

S2R_HD EventDraw DrawEvent(const EventSpec& e, uint64_t seed, uint64_t episode, int index) {
  const uint32_t stream = StreamOfName("events") + uint32_t(index);
  const U32x4 a = RandomBits(seed, episode, stream, 0), b = RandomBits(seed, episode, stream, 1);
  EventDraw d;
  d.happens = UniformOpen01(a.v[0], a.v[1]) < double(e.probability) ? 1 : 0;
  d.fired = 0;
  d.time = e.window_lo + (e.window_hi - e.window_lo) * Real(UniformOpen01(a.v[2], a.v[3]));
  d.magnitude = Real(SampleDistribution(e.magnitude, b));
  d.direction = Real(2 * 3.14159265358979323846 * UniformOpen01(b.v[2], b.v[3]));
  return d;
}

// Fires the event if its time has come: edits the world's state (the caller re-uploads it) or its
// task parameters (`goal` holds the indices of the task's goal x and y, or -1). Returns whether it
// fired now.
S2R_HD bool MaybeFireEvent(const EventSpec& e, EventDraw* d, const TaskModel& t, const StateView& s, int world,
                           const int32_t goal[2], Real* task_params) {
  if (!d->happens || d->fired || s.time(world) < d->time) return false;
  d->fired = 1;
  const Vec3 dir{Cos(d->direction), Sin(d->direction), Real(0)};
  switch (e.kind) {
    case kEventDisplaceObject:
      StoreVec3(s.body_pos(world, t.object_body), LoadVec3(s.body_pos(world, t.object_body)) + d->magnitude * dir);
      break;
    case kEventPushObject:
      StoreVec3(s.body_linvel(world, t.object_body), LoadVec3(s.body_linvel(world, t.object_body)) + d->magnitude * dir);
      break;
    default:
      if (goal[0] >= 0) task_params[goal[0]] += d->magnitude * dir.x;
      if (goal[1] >= 0) task_params[goal[1]] += d->magnitude * dir.y;
      break;
  }
  return true;
}

}  // namespace s2r
