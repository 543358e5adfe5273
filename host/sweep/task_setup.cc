#include "host/sweep/task_setup.h"

#include <cmath>
#include <initializer_list>

#include "kernels/task_peg_insert.h"
#include "kernels/task_pick_lift.h"
#include "kernels/task_push.h"

namespace s2r {
namespace {

std::string Quote(const std::string& s) { return "'" + s + "'"; }

// a parameter's bound: those named in `any` may be any finite number, those in `non_negative` 0
// too; the rest (lengths, speeds, times, forces) must be > 0
TaskParamBound BoundOf(const std::string& name, std::initializer_list<const char*> any,
                       std::initializer_list<const char*> non_negative = {}) {
  for (const char* n : any) {
    if (name == n) return TaskParamBound::kAny;
  }
  for (const char* n : non_negative) {
    if (name == n) return TaskParamBound::kNonNegative;
  }
  return TaskParamBound::kPositive;
}

std::vector<TaskParamInfo> PushParams() {
  std::vector<TaskParamInfo> out;
  // brake_decel 0: the expert never brakes
#define S2R_PUSH_PARAM_INFO(name, value, unit, description) \
  out.push_back({#name, value, unit, BoundOf(#name, {"goal_x", "goal_y"}, {"brake_decel"}), description});
  S2R_PUSH_PARAMS(S2R_PUSH_PARAM_INFO)
#undef S2R_PUSH_PARAM_INFO
  return out;
}

int BodyByName(const ConfigNode& at, const Model& m, const std::string& name) {
  int id = m.BodyId(name);
  if (id < 0) at.Fail("the scene has no body " + Quote(name));
  return id;
}

std::vector<TaskParamInfo> PickLiftParams() {
  std::vector<TaskParamInfo> out;
#define S2R_PICK_LIFT_PARAM_INFO(name, value, unit, description) \
  out.push_back({#name, value, unit, BoundOf(#name, {}), description});
  S2R_PICK_LIFT_PARAMS(S2R_PICK_LIFT_PARAM_INFO)
#undef S2R_PICK_LIFT_PARAM_INFO
  return out;
}

std::vector<TaskParamInfo> PegInsertParams() {
  std::vector<TaskParamInfo> out;
  // the expert's alignment error may have either sign
#define S2R_PEG_INSERT_PARAM_INFO(name, value, unit, description) \
  out.push_back({#name, value, unit, BoundOf(#name, {"align_x", "align_y"}), description});
  S2R_PEG_INSERT_PARAMS(S2R_PEG_INSERT_PARAM_INFO)
#undef S2R_PEG_INSERT_PARAM_INFO
  return out;
}

// The task's actuators on the scene's slides (task.actuators, or the task's default names): a
// position servo on a slide joint each, in the task's order.
void ParseSlideActuators(const ConfigNode& node, const TaskInfo& info, const Model& m, TaskModel* out) {
  TaskModel& t = *out;
  std::vector<std::string> actuators(info.default_actuators.begin(), info.default_actuators.end());
  if (node.Has("actuators")) actuators = node["actuators"].Strings();
  const ConfigNode at = node["actuators"];
  if (actuators.size() != info.default_actuators.size()) {
    at.Fail("task " + Quote(info.name) + " drives " + std::to_string(info.default_actuators.size()) + " actuators");
  }
  t.nactuator = static_cast<int32_t>(actuators.size());
  for (size_t i = 0; i < actuators.size(); ++i) {
    int a = m.ActuatorId(actuators[i]);
    if (a < 0) at.Fail("the scene has no actuator " + Quote(actuators[i]));
    if (m.actuator_trntype[a] != kTransmissionJoint || m.actuator_type[a] != kActuatorPosition ||
        m.joint_type[m.actuator_trnid[a]] != kJointSlide) {
      at.Fail("actuator " + Quote(actuators[i]) + " must be a position actuator on a slide joint");
    }
    t.actuator[i] = a;
    t.joint[i] = m.actuator_trnid[a];
  }
}

// task.arm: the effector is moved by an arm's hinge servos (kernels/task_arm.h), each on a joint
// between the world and the effector; push only (the grasping tasks' fingers are slides).
void ParseArm(const ConfigNode& node, const TaskInfo& info, const Model& m, TaskModel* out) {
  TaskModel& t = *out;
  const ConfigNode arm = node["arm"];
  if (node.Has("actuators")) {
    node["actuators"].Fail("a task with an arm has its actuators in arm.actuators");
  }
  if (info.kind != kTaskPush) {
    arm.Fail("task " + Quote(info.name) + " closes fingers on slides: an arm drives task 'push' only");
  }
  if (!arm.IsMap()) arm.Fail("must be a mapping (actuators, damping)");
  arm.CheckKeys({"actuators", "damping"});
  const ConfigNode at = arm.Required("actuators");
  const std::vector<std::string> actuators = at.Strings();
  if (actuators.empty() || actuators.size() > size_t(kTaskMaxActuators)) {
    at.Fail("an arm has 1 to " + std::to_string(kTaskMaxActuators) + " actuators, got " +
            std::to_string(actuators.size()));
  }
  // the bodies from the effector to the world: each arm joint must move one of them
  std::vector<bool> carries(size_t(m.nbody()), false);
  for (int b = t.effector_body; b >= 0; b = m.body_parent[b]) carries[size_t(b)] = true;
  t.nactuator = static_cast<int32_t>(actuators.size());
  for (size_t i = 0; i < actuators.size(); ++i) {
    const int a = m.ActuatorId(actuators[i]);
    if (a < 0) at.Fail("the scene has no actuator " + Quote(actuators[i]));
    for (size_t k = 0; k < i; ++k) {
      if (t.actuator[k] == a) at.Fail("actuator " + Quote(actuators[i]) + " is listed twice");
    }
    if (m.actuator_trntype[a] != kTransmissionJoint || m.actuator_type[a] != kActuatorPosition ||
        m.joint_type[m.actuator_trnid[a]] != kJointHinge ||
        m.joint_part[m.actuator_trnid[a]] != 0) {
      at.Fail("actuator " + Quote(actuators[i]) + " must be a position actuator on a hinge joint");
    }
    const int j = m.actuator_trnid[a];
    // the sweep kernels carry the arm's inverse kinematics in the step variants with articulated
    // trees only (kernels/sweep_step.h SweepWorldPass): a hinge is stepped in one
    if (m.body_tree[m.joint_body[j]] < 0) {
      at.Fail("the joint of actuator " + Quote(actuators[i]) + " is not in an articulated tree");
    }
    if (!carries[size_t(m.joint_body[j])]) {
      at.Fail("the joint of actuator " + Quote(actuators[i]) + " does not move the effector " +
              Quote(m.body_name[t.effector_body]));
    }
    t.actuator[i] = a;
    t.joint[i] = j;
  }
  if (arm.Has("damping")) t.arm_damping = static_cast<Real>(arm["damping"].Number(1e-4, 1));
  t.arm = 1;
}

}  // namespace

const char* TaskCheckerName(int32_t checker) { return checker == kCheckerState ? "state" : "phases"; }

bool TaskParamAllows(TaskParamBound bound, double v) {
  switch (bound) {
    case TaskParamBound::kPositive: return v > 0;
    case TaskParamBound::kNonNegative: return v >= 0;
    case TaskParamBound::kAny: break;
  }
  return std::isfinite(v);
}

const char* TaskParamBoundText(TaskParamBound bound) {
  switch (bound) {
    case TaskParamBound::kPositive: return "> 0";
    case TaskParamBound::kNonNegative: return ">= 0";
    case TaskParamBound::kAny: break;
  }
  return "finite";
}

const std::vector<TaskInfo>& Tasks() {
  static const std::vector<TaskInfo> tasks = {
      {"push", kTaskPush, "push the box into the goal region", "box", "pusher_y", {}, {"act_x", "act_y"},
       PushParams()},
      {"pick_lift", kTaskPickLift, "pick up the box and hold it up", "object", "hand", {"finger_left", "finger_right"},
       {"act_x", "act_y", "act_z", "act_finger_left", "act_finger_right"}, PickLiftParams()},
      {"peg_insert", kTaskPegInsert, "put the peg into the hole", "peg", "hand", {"finger_left", "finger_right"},
       {"act_x", "act_y", "act_z", "act_finger_left", "act_finger_right"}, PegInsertParams(), "socket"},
  };
  return tasks;
}

const TaskInfo* FindTask(const std::string& name) {
  for (const TaskInfo& t : Tasks()) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

int TaskParamIndex(const TaskInfo& info, const std::string& name) {
  for (size_t i = 0; i < info.params.size(); ++i) {
    if (name == info.params[i].name) return static_cast<int>(i);
  }
  return -1;
}

TaskSetup ParseTask(const ConfigNode& node, const Model& m) {
  node.CheckKeys({"name", "instruction", "params", "object", "effector", "fingers", "actuators", "arm", "target", "checker",
                  "state_checker"});
  TaskSetup setup;
  const ConfigNode name = node.Required("name");
  setup.info = FindTask(name.String());
  if (setup.info == nullptr) {
    std::string names;
    for (const TaskInfo& t : Tasks()) names += (names.empty() ? "" : ", ") + std::string(t.name);
    name.Fail("unknown task " + Quote(name.String()) + " (tasks: " + names + ")");
  }
  const TaskInfo& info = *setup.info;
  setup.instruction = node["instruction"].String(info.default_instruction);

  // the scene's entities
  TaskModel& t = setup.model;
  t.kind = info.kind;
  t.object_body = BodyByName(node["object"], m, node["object"].String(info.default_object));
  t.effector_body = BodyByName(node["effector"], m, node["effector"].String(info.default_effector));
  if (info.default_target != nullptr) {
    const ConfigNode at = node["target"];
    t.target_body = BodyByName(at, m, at.String(info.default_target));
    if (m.body_dynamic[t.target_body]) at.Fail("the target body " + Quote(m.body_name[t.target_body]) + " must be static");
  } else if (node.Has("target")) {
    node["target"].Fail("task " + Quote(info.name) + " has no target body");
  }
  std::vector<std::string> fingers(info.default_fingers.begin(), info.default_fingers.end());
  if (node.Has("fingers")) fingers = node["fingers"].Strings();
  if (fingers.size() != info.default_fingers.size()) {
    node["fingers"].Fail("task " + Quote(info.name) + " needs " + std::to_string(info.default_fingers.size()) +
                         " finger bodies");
  }
  for (size_t i = 0; i < fingers.size(); ++i) t.finger_body[i] = BodyByName(node["fingers"], m, fingers[i]);
  if (node.Has("arm")) {
    ParseArm(node, info, m, &t);
  } else {
    ParseSlideActuators(node, info, m, &t);
  }

  if (node.Has("checker")) {
    const ConfigNode checker = node["checker"];
    const std::string value = checker.String();
    if (value == TaskCheckerName(kCheckerPhases) && info.kind == kTaskPush) {
      checker.Fail("task 'push' has one checker, 'state': its phases follow the box and the pusher, whoever acts");
    } else if (value == TaskCheckerName(kCheckerPhases)) {
      setup.checker = kCheckerPhases;
    } else if (value == TaskCheckerName(kCheckerState)) {
      setup.checker = kCheckerState;
    } else {
      checker.Fail("unknown checker " + Quote(value) + " (phases: by the expert's phases; state: by the state alone)");
    }
  }

  // the state checker's thresholds (kernels/task.h TaskModel), where the built-in scenes' do not fit
  if (node.Has("state_checker")) {
    const ConfigNode sc = node["state_checker"];
    if (info.kind == kTaskPush) {
      sc.Fail("task 'push' has no grip: the state checker's thresholds are pick_lift's and peg_insert's");
    }
    sc.CheckKeys({"touch_force", "closed_target", "lift_gain", "put_down_gain", "still_tol"});
    const std::pair<const char*, Real*> thresholds[] = {{"touch_force", &t.touch_force},
                                                        {"closed_target", &t.closed_target},
                                                        {"lift_gain", &t.lift_gain},
                                                        {"put_down_gain", &t.put_down_gain},
                                                        {"still_tol", &t.still_tol}};
    for (const auto& [key, value] : thresholds) {
      if (!sc.Has(key)) continue;
      const double v = sc[key].Number();
      if (!(v > 0)) sc[key].Fail("must be > 0, got " + std::to_string(v));
      *value = static_cast<Real>(v);
    }
    if (!(t.put_down_gain < t.lift_gain)) {
      sc.Fail("put_down_gain (" + std::to_string(t.put_down_gain) + ") must be below lift_gain (" +
              std::to_string(t.lift_gain) + "): an object is put down lower than it is carried");
    }
  }

  setup.goal_param[0] = TaskParamIndex(info, "goal_x");
  setup.goal_param[1] = TaskParamIndex(info, "goal_y");

  // parameters: defaults, then the config's
  for (const TaskParamInfo& p : info.params) setup.params.push_back(p.value);
  const ConfigNode params = node["params"];
  if (params.defined()) {
    if (!params.IsMap()) params.Fail("must be a mapping of parameter names to numbers");
    for (auto it = params.yaml().begin(); it != params.yaml().end(); ++it) {
      const std::string key = it->first.Scalar();
      int i = TaskParamIndex(info, key);
      if (i < 0) {
        std::string names;
        for (const TaskParamInfo& p : info.params) names += (names.empty() ? "" : ", ") + std::string(p.name);
        params[key].Fail("unknown parameter " + Quote(key) + " of task " + Quote(info.name) + " (" + names + ")");
      }
      double v = params[key].Number();
      if (!TaskParamAllows(info.params[i].bound, v)) {
        params[key].Fail(std::string("must be ") + TaskParamBoundText(info.params[i].bound) + ", got " + std::to_string(v));
      }
      setup.params[i] = v;
    }
  }
  return setup;
}

}  // namespace s2r
