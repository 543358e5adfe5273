// Tasks: a scripted expert, a success checker and failure detectors per manipulation task, run
// per world beside the physics (the same S2R_HD code on the CPU and, later, on the device).
//
// A sweep episode is: TaskReset after the world is reset, then each control step TaskAct (the
// expert's action), the engine's step, and TaskEvaluate (progress, labels, whether the episode
// ended). Everything a task keeps between control steps is in its world's TaskState; everything
// it reads from the scene is resolved once, by name, into a TaskModel; its tunable numbers (goal,
// expert gains and timing, thresholds) are a per-world parameter vector, so the sweep can
// randomize them like any engine parameter (`task.push_speed`): experts then sometimes fail for
// physical reasons, which is the point.
//
// One label taxonomy for all tasks (docs/sweep.md says how each is computed per task). The code
// of the first failure is kept; success ends the episode with kLabelNone.
#pragma once

#include "kernels/math_types.h"
#include "kernels/model_view.h"
#include "kernels/state_view.h"

namespace s2r {

constexpr int kTaskMaxParams = 16;
constexpr int kTaskMaxActuators = 8;

enum TaskKind : int32_t {
  kTaskPush = 0,      // push a box into a goal region (configs/scenes/box_push.xml)
  kTaskPickLift = 1,  // grasp, lift above a height, hold (configs/scenes/pick_lift.xml)
  kTaskPegInsert = 2,  // grasp a peg, carry it over a socket, insert it (configs/scenes/peg_insert.xml)
  kNumTaskKinds = 3,
};

enum TaskLabel : int32_t {
  kLabelNone = 0,          // success, or still running
  kLabelGraspMiss = 1,     // the fingers closed without holding the object
  kLabelDrop = 2,          // a lifted object fell out of the grasp
  kLabelSlip = 3,          // a held object slid in the grasp beyond the slip limit
  kLabelCollision = 4,     // a contact force with a non-target object above the threshold
  kLabelStuck = 5,         // no progress towards the goal for stuck_s
  kLabelTimeout = 6,       // the horizon ended before success
  kLabelSimUnstable = 7,   // the engine froze the world (non-finite or runaway state)
  kNumTaskLabels = 8,
};

enum TaskPhase : int32_t {
  kPhaseApproach = 0,  // moving to the object
  kPhasePush = 1,      // pushing it towards the goal
  kPhaseGrasp = 2,     // closing the fingers on it
  kPhaseLift = 3,      // raising it
  kPhaseHold = 4,      // holding it at the target (or at the goal) for hold_s
  kPhaseTransport = 5, // carrying it to above the place where it goes
  kPhaseInsert = 6,    // lowering it into the hole
  kNumTaskPhases = 7,
};

// How a task labels its episodes (TaskModel::checker; docs/sweep.md *Checkers*).
enum TaskChecker : int32_t {
  kCheckerPhases = 0,  // by the expert's phases: a grasp is judged when the expert's grasp_s is over, a
                       // hold when its lift target is at the top (only the expert's actions fit them)
  kCheckerState = 1,   // by the state alone, whoever acts: a grip is both fingers pressing the object,
                       // a hold is the object at the height for hold_s (a policy's episodes)
};

// What a task reads and drives in the scene, resolved from names by the host.
struct TaskModel {
  int32_t kind = kTaskPush;
  int32_t object_body = -1;                  // the manipulated object (a free body)
  int32_t effector_body = -1;                // the pusher / the hand
  int32_t finger_body[2] = {-1, -1};         // pick_lift, peg_insert: left, right
  int32_t target_body = -1;                  // peg_insert: the socket (a static body; origin at the hole's mouth)
  int32_t nactuator = 0;                     // the task's actuators, in its own order:
  int32_t actuator[kTaskMaxActuators] = {};  //   push: x, y; pick_lift, peg_insert: x, y, z, finger_left, finger_right;
                                             //   with an arm (push only): its servos, root first
  int32_t joint[kTaskMaxActuators] = {};     //   the joint each drives (a slide; an arm's hinges)
  int32_t arm = 0;                           // 1: the actuators are an arm's hinge servos, which move the
                                             // effector to the expert's targets (task_arm.h; push only)
  Real arm_damping = Real(0.05);             // m: the arm's damped least squares (task_arm.h)
  int32_t checker = kCheckerPhases;          // TaskChecker (push: one and the same; see task_push.h)
  // the state checker's thresholds (kCheckerState, pick_lift and peg_insert; config
  // task.state_checker, host/sweep/task_setup.h), set for the built-in scenes
  Real touch_force = Real(0.05);      // N: a finger pressing the object with more touches it
  Real closed_target = Real(0.002);   // m: a finger's target in effect beyond this is closed
  Real lift_gain = Real(0.005);       // m: the gripped object this far above its start is carried
  Real put_down_gain = Real(0.002);   // m: back within this with no grip, it was put down
  Real still_tol = Real(0.001);       // m: hand, object and finger joints each within this are still
};

// One world's task state, kept across the control steps of an episode.
struct TaskState {
  int32_t phase;
  int32_t label;          // TaskLabel of the first failure (kLabelNone: success or running)
  int32_t done;           // the episode ended (success, failure or horizon)
  int32_t success;
  int32_t steps;          // control steps evaluated
  int32_t terminal;       // ended in a terminal state (not cut by the horizon)
  int32_t near_miss;      // the task's near-miss verdict at the end (docs/sweep.md)
  Real phase_time;        // s in the current phase
  Real progress_time;     // s since the last progress (stuck detection; push: pushing time only)
  Real best;              // push: smallest goal distance this push; pick_lift: to the grasp pose; peg: depth, m
  Real margin;            // at the end: how far inside the success region (m), < 0 if outside
  Real min_margin;        // near miss: push: the closest approach (largest margin); grasps: smallest margin to a failure, m
  Real max_slip;          // largest slip of a held object, m
  Real lift_start;        // pick_lift, peg_insert: hand height when the lift began, m
  Real grip_offset;       // pick_lift, peg_insert: object z - hand z when the lift began, m
  Real grasp_xy[2];       // pick_lift, peg_insert: where the hand holds its x, y from the grasp on, m
  Real place_xy[2];       // peg_insert: the hand's x, y over the hole, fixed when the transport began, m
  Real inserted_time;     // peg_insert: s the peg has stayed at the insertion depth without a break
  Real effector0[3];      // effector body position at reset, world, m
  Real object0[3];        // object position at reset, world, m
  Real q0[kTaskMaxActuators];  // the task joints' positions at reset (actions are joint targets)
  float effector_quat0[4];  // effector body orientation at reset, world (an arm holds it, task_arm.h;
                            // float in every build, as still_ref: float64 pick_lift's sweep record
                            // keeps within the CUDA step's 32 KB local block)
  // the state checker's (kCheckerState), pick_lift and peg_insert
  int32_t stage;          // what the state shows, a TaskPhase (the episode's `phase` metric)
  int32_t grip;           // 0: no grip; 1: both fingers on the object, on the floor; 2: carried (off the
                          // floor since, not put down and let go)
  int32_t closing;        // both finger targets in effect are closed
  Real grip_ref;          // object z - hand z when the grip began, m
  Real close_z;           // the hand's lowest z since the fingers closed, m
  Real held_time;         // s at the goal without a break (pick_lift: held at the height; peg: inserted)
  Real still_time;        // s since the hand, a finger or the object last moved 1 mm
  float still_ref[8];     // where they were then: hand xyz, object xyz, finger joints left, right (float
                          // in every build: compared to 1 mm; it keeps float64 pick_lift's sweep record
                          // within the CUDA step's 32 KB local block, docs/gpu.md)
  Real deepest;           // peg_insert: the deepest insertion of the episode, m
  Real depth_best;        // peg_insert: the depth when it last grew by 1 mm at the socket, m
  Real depth_time;        // peg_insert: s at the socket since then
};

// A world's effector / object position, world frame.
S2R_HD Vec3 BodyPosition(const StateView& s, int world, int body) { return LoadVec3(s.body_pos(world, body)); }

// The hand's push on the static geoms: for the palm and each finger, the sum of the normal forces
// of its points against static geoms; the largest of the three. A sum, not the largest point: how
// a face's load is shared among its points is the solver's business (the order it visits them in),
// the force on the finger is not.
S2R_HD Real HandStaticForce(const TaskModel& t, const ModelView& m, const StateView& s, int world) {
  Real palm = Real(0), left = Real(0), right = Real(0);
  const Contact* c = s.contacts(world);
  for (int i = 0; i < s.contact_count(world); ++i) {
    const int ba = m.geom_body[c[i].geom_a], bb = m.geom_body[c[i].geom_b];
    int hand = -1;  // the hand body of a hand-static pair
    if (!m.body_dynamic[ba]) hand = bb;
    else if (!m.body_dynamic[bb]) hand = ba;
    if (hand < 0) continue;
    if (hand == t.effector_body) palm += c[i].normal_force;
    if (hand == t.finger_body[0]) left += c[i].normal_force;
    if (hand == t.finger_body[1]) right += c[i].normal_force;
  }
  return Max(palm, Max(left, right));
}

// The joint target (ctrl) that moves a slide joint's child body by `delta` along the joint's axis,
// in the world frame, from where it was at reset. The tasks' gantries are world-aligned slides.
S2R_HD Real SlideTarget(const ModelView& m, int joint, Real q0, Vec3 delta) {
  Vec3 axis = LoadVec3(m.joint_axis_parent + 3 * joint);
  return q0 + Dot(delta, axis);
}

// What every task records at reset: where the effector and the object start, and the joints' q.
S2R_HD void TaskResetCommon(const TaskModel& t, const ModelView& m, const StateView& s, int world, TaskState* ts) {
  ts->phase = kPhaseApproach;
  ts->label = kLabelNone;
  ts->done = 0;
  ts->success = 0;
  ts->steps = 0;
  ts->terminal = 0;
  ts->near_miss = 0;
  ts->phase_time = Real(0);
  ts->progress_time = Real(0);
  ts->best = Real(1e30);
  ts->margin = Real(-1e30);
  ts->min_margin = Real(1e30);
  ts->max_slip = Real(0);
  ts->lift_start = Real(0);
  ts->grip_offset = Real(0);
  ts->grasp_xy[0] = ts->grasp_xy[1] = Real(0);
  ts->place_xy[0] = ts->place_xy[1] = Real(0);
  ts->inserted_time = Real(0);
  StoreVec3(ts->effector0, BodyPosition(s, world, t.effector_body));
  StoreVec3(ts->object0, BodyPosition(s, world, t.object_body));
  const Real* rot = s.body_quat(world, t.effector_body);
  for (int i = 0; i < 4; ++i) ts->effector_quat0[i] = static_cast<float>(rot[i]);
  for (int i = 0; i < kTaskMaxActuators; ++i) {
    ts->q0[i] = i < t.nactuator ? m.joint_qpos0.At(world)[t.joint[i]] : Real(0);
  }
  ts->stage = kPhaseApproach;
  ts->grip = 0;
  ts->closing = 0;
  ts->grip_ref = Real(0);
  ts->close_z = Real(0);
  ts->held_time = Real(0);
  ts->still_time = Real(0);
  for (int i = 0; i < 8; ++i) ts->still_ref[i] = 0.f;
  ts->deepest = Real(-1e30);
  ts->depth_best = Real(-1e30);
  ts->depth_time = Real(0);
}

// --- the state checker's pieces (kCheckerState), shared by the grasping tasks -----------------

// (the thresholds are TaskModel's: touch_force, closed_target, lift_gain, put_down_gain, still_tol)

// The normal force each finger presses the object with (summed over its points), N.
S2R_HD void FingerObjectForces(const TaskModel& t, const ModelView& m, const StateView& s, int world, Real* left,
                               Real* right) {
  *left = *right = Real(0);
  const Contact* c = s.contacts(world);
  for (int i = 0; i < s.contact_count(world); ++i) {
    const int ba = m.geom_body[c[i].geom_a], bb = m.geom_body[c[i].geom_b];
    const int other = ba == t.object_body ? bb : (bb == t.object_body ? ba : -1);
    if (other < 0) continue;
    if (other == t.finger_body[0]) *left += c[i].normal_force;
    if (other == t.finger_body[1]) *right += c[i].normal_force;
  }
}

// The grip as the state shows it, updated every control step: whether both fingers press the
// object (returned), whether the finger targets in effect are closed and the hand's lowest height
// since they closed, and the grip (TaskState::grip): it begins when both fingers press the object
// (grip_ref: where it sits in the hand then; slips are measured from there), is carried once the
// object is t.lift_gain above its start, and ends when the fingers let go of it on the floor.
// `gain` is the object's height above its start; `finger_left` the task's first finger actuator.
S2R_HD bool StateGripUpdate(const TaskModel& t, const ModelView& m, const StateView& s, int world, Vec3 object, Vec3 hand,
                            Real gain, int finger_left, TaskState* ts) {
  Real left, right;
  FingerObjectForces(t, m, s, world, &left, &right);
  const bool held = left > t.touch_force && right > t.touch_force;
  const Real* ctrl = s.ctrl(world);
  bool closing = t.nactuator > finger_left + 1;
  for (int i = finger_left; i < t.nactuator; ++i) closing = closing && ctrl[t.actuator[i]] > t.closed_target;
  if (closing && !ts->closing) ts->close_z = hand.z;
  if (closing) ts->close_z = Min(ts->close_z, hand.z);
  ts->closing = closing ? 1 : 0;
  if (ts->grip == 0 && held) {
    ts->grip = 1;
    ts->grip_ref = object.z - hand.z;
  }
  if (ts->grip == 1 && held && gain > t.lift_gain) ts->grip = 2;
  if ((ts->grip == 1 && !held) || (ts->grip == 2 && !held && gain < t.put_down_gain)) ts->grip = 0;
  return held;
}

// A grasp that lifted the hand and not the object: the fingers closed, the hand rose 2 cm above its
// lowest point since, and the object followed less than half as far and under 1 cm (the expert's
// rule, with the hand's height at the close for the expert's grasp height).
S2R_HD bool StateGraspMissed(const TaskState* ts, Vec3 hand, Real gain) {
  const Real rise = hand.z - ts->close_z;
  return ts->closing && rise > Real(0.02) && gain < Real(0.5) * rise && gain < Real(0.01);
}

// How long nothing has moved: the hand, the object and the two finger joints each within
// t.still_tol (1 mm) of where they were when one of them last moved that far. Returns still_time, s.
S2R_HD Real StateStillTime(const TaskModel& t, const StateView& s, int world, Vec3 object, Vec3 hand, int finger_left,
                           Real dt, TaskState* ts) {
  const Real* q = s.joint_q(world);
  const Real now[8] = {hand.x, hand.y, hand.z, object.x, object.y, object.z,
                       t.nactuator > finger_left ? q[t.joint[finger_left]] : Real(0),
                       t.nactuator > finger_left + 1 ? q[t.joint[finger_left + 1]] : Real(0)};
  bool moved = ts->steps <= 1;
  for (int i = 0; i < 8; ++i) moved = moved || Abs(now[i] - Real(ts->still_ref[i])) > t.still_tol;
  if (moved) {
    for (int i = 0; i < 8; ++i) ts->still_ref[i] = static_cast<float>(now[i]);
    ts->still_time = Real(0);
  } else {
    ts->still_time += dt;
  }
  return ts->still_time;
}

// Ends the episode: the first failure label is kept.
S2R_HD void TaskEnd(TaskState* ts, int32_t label, int32_t terminal) {
  if (ts->done) return;
  ts->done = 1;
  ts->label = label;
  ts->success = label == kLabelNone ? 1 : 0;
  ts->terminal = terminal;
}

// The checks every task makes after its own: a frozen world, and the horizon.
S2R_HD void TaskEvaluateCommon(const StateView& s, int world, int horizon_steps, TaskState* ts) {
  if (!ts->done && s.status(world) != kWorldOk) TaskEnd(ts, kLabelSimUnstable, 1);
  if (!ts->done && ts->steps >= horizon_steps) TaskEnd(ts, kLabelTimeout, 0);
}

}  // namespace s2r
