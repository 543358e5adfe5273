// Every task, dispatched on TaskModel::kind: what the sweep calls per world and control step.
#pragma once

#include "kernels/task.h"
#include "kernels/task_peg_insert.h"
#include "kernels/task_pick_lift.h"
#include "kernels/task_push.h"

namespace s2r {

S2R_HD void TaskReset(const TaskModel& t, const ModelView& m, const StateView& s, int world, const Real* params,
                      TaskState* ts) {
  switch (t.kind) {
    case kTaskPush: PushReset(t, m, s, world, params, ts); break;
    case kTaskPickLift: PickLiftReset(t, m, s, world, params, ts); break;
    case kTaskPegInsert: PegInsertReset(t, m, s, world, params, ts); break;
    default: TaskResetCommon(t, m, s, world, ts); break;
  }
}

// The expert's action for this control step, written into the world's actuator vector `action`
// (nactuator values; entries the task does not drive are left as they are). kArm: whether a task's
// arm may be driven (task_arm.h DriveEffector; false in the sweep kernels without articulated trees).
template <bool kArm = true>
S2R_HD void TaskAct(const TaskModel& t, const ModelView& m, const StateView& s, int world, const Real* params,
                    TaskState* ts, Real* action) {
  switch (t.kind) {
    case kTaskPush: PushAct<kArm>(t, m, s, world, params, ts, action); break;
    case kTaskPickLift: PickLiftAct(t, m, s, world, params, ts, action); break;
    case kTaskPegInsert: PegInsertAct(t, m, s, world, params, ts, action); break;
    default: break;
  }
}

// After the control step: progress, labels, and whether the episode ended.
S2R_HD void TaskEvaluate(const TaskModel& t, const ModelView& m, const StateView& s, int world, const Real* params,
                         int horizon_steps, TaskState* ts) {
  switch (t.kind) {
    case kTaskPush: PushEvaluate(t, m, s, world, params, horizon_steps, ts); break;
    case kTaskPickLift: PickLiftEvaluate(t, m, s, world, params, horizon_steps, ts); break;
    case kTaskPegInsert: PegInsertEvaluate(t, m, s, world, params, horizon_steps, ts); break;
    default:
      ts->steps += 1;
      TaskEvaluateCommon(s, world, horizon_steps, ts);
      break;
  }
}

}  // namespace s2r
