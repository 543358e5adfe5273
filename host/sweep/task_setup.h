// A sweep's task as the host sets it up: which kernels/ task, the scene entities it uses
// (resolved by name), its parameter vector and the instruction recorded with every episode.
//
// Config (docs/sweep.md, `task:`):
//   task:
//     name: push                       # push | pick_lift | peg_insert
//     instruction: push the box into the goal
//     params: {goal_x: 0.3, hold_s: 0.5}   # any of the task's parameters; the rest default
//     object: box                      # scene names; defaults are the builtin scenes' names
//     effector: pusher_y
//     actuators: [act_x, act_y]
//     target: socket                   # peg_insert: the static body the peg goes into
//     checker: state                   # phases | state: how episodes are labelled (kernels/task.h
//                                      # TaskChecker); default: phases with the expert, state with a policy
//     state_checker: {touch_force: 0.05, closed_target: 0.002, lift_gain: 0.005, put_down_gain: 0.002,
//                     still_tol: 0.001}  # pick_lift, peg_insert: the state checker's thresholds (N, m;
//                                      # kernels/task.h TaskModel), any of them; these are the defaults
// A task parameter is randomized like an engine parameter, addressed as `task.<name>`.
#pragma once

#include <string>
#include <vector>

#include "host/scene/model.h"
#include "host/sweep/config_yaml.h"
#include "kernels/task.h"

namespace s2r {

// what values a task parameter takes (every one is finite)
enum class TaskParamBound { kAny, kPositive, kNonNegative };

struct TaskParamInfo {
  const char* name;
  double value;  // default
  const char* unit;
  TaskParamBound bound;
  const char* description;
};

// whether v is within the bound, and the bound as the error messages state it ("> 0", ">= 0")
bool TaskParamAllows(TaskParamBound bound, double v);
const char* TaskParamBoundText(TaskParamBound bound);

struct TaskInfo {
  const char* name;
  TaskKind kind;
  const char* default_instruction;
  const char* default_object;
  const char* default_effector;
  std::vector<const char*> default_fingers;    // pick_lift: left, right
  std::vector<const char*> default_actuators;  // in the task's actuator order
  std::vector<TaskParamInfo> params;
  const char* default_target = nullptr;        // peg_insert: the socket; nullptr: the task has no target body
};

// The registered tasks; nullptr for an unknown name.
const std::vector<TaskInfo>& Tasks();
const TaskInfo* FindTask(const std::string& name);

struct TaskSetup {
  const TaskInfo* info = nullptr;
  TaskModel model;
  std::vector<double> params;  // one per info->params, the config's values
  std::string instruction;
  int32_t goal_param[2] = {-1, -1};  // indices of the goal's x and y parameters, -1 if the task has none
  int32_t checker = -1;  // TaskChecker from `checker:`; -1: not set (SweepChecker decides)
};

// the checkers' names in configs and stores ("phases", "state"), by TaskChecker
const char* TaskCheckerName(int32_t checker);

// Parses `task:` against the scene; names the key of any unknown task, parameter or entity.
TaskSetup ParseTask(const ConfigNode& node, const Model& model);

// Index of a task parameter by name, -1 if none.
int TaskParamIndex(const TaskInfo& info, const std::string& name);

}  // namespace s2r
