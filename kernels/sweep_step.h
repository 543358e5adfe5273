// One world's control step of a sweep: perturbation events, the expert's action, the recorded
// rows, the physics, the labels, as one function of the world (S2R_HD).
//
// The CPU backend runs it for every world in one parallel pass, so a control step of a sweep
// crosses one barrier, not three (events, experts and recording; the physics; the labels); the
// CUDA backend runs it as one thread per world, so experts, observations and labels are computed
// on the device and only finished episodes travel to the host. What the host does between steps
// is per finished episode: it takes the world's rows, samples the next episode's parameters,
// resets the world and sets `begin` (host/sweep/sweep.cc).
//
// The order within a world is the one the sweep has always had, so episodes are bit-identical to
// the serial formulation: events whose time has come (a state edit drops the world's kept
// slide-tree block, as Engine::UploadWorlds would), the expert's action, the rows recorded before
// the step (the moving bodies' true state, the observation, the action), ControlStep, then
// TaskEvaluate. A world without an episode (the sweep's tail, when no episodes are left to start)
// does not step: its state is reset before it is used again, so stepping it would be wasted work.
#pragma once

#include <type_traits>
#include <utility>

#include "kernels/action_noise.h"
#include "kernels/events.h"
#include "kernels/observation.h"
#include "kernels/policy_net.h"
#include "kernels/step_world.h"
#include "kernels/tasks.h"

namespace s2r {

constexpr int kBodyStateSize = 13;  // per recorded body and step: pos xyz, quat wxyz, linvel, angvel
constexpr int kSweepMaxBodies = 32;  // recorded bodies per world

// One world's episode, kept between control steps (on the device with the CUDA backend).
struct SweepWorld {
  int64_t episode;   // the episode index the world runs (-1: none)
  int32_t begin;     // set by the host after it reset the world: start `episode` at the next step
  int32_t active;    // an episode is running (cleared when it ends; the host then collects it)
  TaskState task;
  ObservationState observation;
  EventDraw events[kMaxEvents];
};

// One world's rows for its current episode: (horizon, nbody * kBodyStateSize), (horizon, kObsSize),
// (horizon, nactuator), and where the expert labels a policy's steps (SweepStepArgs::expert_labels)
// (horizon, nactuator), else null; where the sweep records a policy's other inputs
// (SweepStepArgs::input_row > 0) (horizon, input_row), else null.
struct SweepRows {
  Real* state;
  Real* obs;
  Real* action;
  Real* expert;
  Real* inputs;
};

// One world's inputs to a policy at a control step (kSweepObserve and kSweepActObserve passes write
// a.policy_rows[w]; a kSweepNet pass builds it in the world's thread),
// in the protocol's float32 (host/sweep/policy.h): the same on every backend, so that a policy sees
// the same numbers whichever stepped the worlds.
struct SweepPolicyRow {
  int64_t episode;
  int32_t active;  // 1: the world runs an episode and takes the policy's actions in this step
  int32_t first;   // 1 on the episode's first step
  float obs[kObsSize];                  // the observation model's output (the obs row)
  float task_params[kTaskMaxParams];    // the episode's task parameters (events may have edited them)
  float joints[kTaskMaxActuators];      // the task joints' positions (true), TaskModel::joint order
  float target[3];                      // the task's target body's position (true), where it has one
  // what the task's expert would do at this step (TaskAct on the world's task state, whose phases
  // the task's evaluation advances whoever acts), TaskModel actuator order: sent to a policy that
  // asks for it (--policy-expert, SweepStepArgs::expert_labels; else not written), the label of a
  // DAgger-style correction (recorded as steps/expert_action too)
  float expert[kTaskMaxActuators];
};

// Everything the per-world step reads besides the model and the state. The pointers are in the
// stepping backend's memory (host or device).
struct SweepStepArgs {
  TaskModel task;
  ObservationModel observation;
  EventSpec events[kMaxEvents];
  int32_t nevents = 0;
  int32_t goal[2] = {-1, -1};  // the task's goal x, y parameter indices (goal-change events)
  ActionNoise action_noise;    // on the actions executed, whoever acts (inactive: none)
  uint64_t seed = 0;
  int32_t horizon = 0;            // control steps
  int32_t nbody = 0;              // recorded bodies
  int32_t body[kSweepMaxBodies] = {};  // their indices (the moving bodies)
  int32_t nactuator = 0;          // actuators: the action row's size
  int32_t action_stride = 1;      // max(nactuator, 1): a world's stride in `actions`
  SweepWorld* worlds = nullptr;   // (nworld)
  Real* task_params = nullptr;    // (nworld, kTaskMaxParams): the episode's task parameters (events edit them)
  Real* actions = nullptr;        // (nworld, action_stride): each world's actions in its current step
  // (nworld, kTaskMaxActuators): each world's action noise of its last step, where action_noise is
  // active, else null (outside SweepWorld, so that a sweep without noise stages no more per world)
  Real* noise_state = nullptr;
  Real* state_rows = nullptr;     // (nworld, horizon, nbody * kBodyStateSize)
  Real* obs_rows = nullptr;       // (nworld, horizon, kObsSize)
  Real* action_rows = nullptr;    // (nworld, horizon, nactuator)
  Real* expert_rows = nullptr;    // (nworld, horizon, nactuator) where expert_labels is set, else null
  // (nworld, horizon, input_row) where input_row > 0, else null: at each step the rest of what a
  // policy is sent besides the obs row (SweepPolicyRow's task_params, joints and target, in the
  // build's Real): input_params task parameters, task.nactuator joint positions, 3 target
  // coordinates where task.target_body >= 0 (steps/task_params, steps/joints, steps/target)
  Real* input_rows = nullptr;
  int32_t input_row = 0;
  int32_t input_params = 0;
  // (nworld) or null: where each world's episode writes its rows, when not in the arrays above.
  // The CPU backend gives every world buffers of its own and hands them to the finished episode
  // (the host swaps in fresh ones): the rows are never copied on their way to the store.
  const SweepRows* world_rows = nullptr;
  SweepPolicyRow* policy_rows = nullptr;  // (nworld): a kSweepObserve / kSweepActObserve pass's policy inputs
  PolicyNet net;                          // a kSweepNet pass's policy (kernels/policy_net.h)
  // where a backend's kSweepNet pass keeps the forward pass's buffers outside the thread's frame
  // (SweepNetBuffers: the CUDA backend, in the world's step block, whose scratch the physics has not
  // yet used in the step): NetBufferBytes(net) per world; `net_buffers` (nworld x that, device) where
  // the step block is too small for them, else null
  int64_t net_buffer_bytes = 0;
  char* net_buffers = nullptr;
  // 1: the expert labels the steps. A policy's (--policy-expert): a kSweepObserve / kSweepActObserve
  // pass fills policy_rows[w].expert, and every policy pass (kSweepNet too) records the expert's
  // action in the rows' `expert` (steps/expert_action). The expert's own, where action noise
  // perturbs them (kSweepExpert): its clean action, before the noise.
  int32_t expert_labels = 0;
  int32_t* ended = nullptr;       // (nworld): 1 when the world's episode ended in the last pass
  // control steps per pass (SweepWorldPass): a world takes up to `steps` in one go, stopping after
  // the one that ends its episode; `stepped` (nworld) says how many it took in the last pass
  int32_t steps = 1;
  int32_t* stepped = nullptr;

  S2R_HD int state_row() const { return nbody * kBodyStateSize; }
  // world w's rows at control step `step` of its episode
  S2R_HD SweepRows RowsAt(int w, int32_t step) const {
    if (world_rows) {
      const SweepRows& r = world_rows[w];
      return {r.state + int64_t(step) * state_row(), r.obs + int64_t(step) * kObsSize,
              r.action + int64_t(step) * nactuator, r.expert ? r.expert + int64_t(step) * nactuator : nullptr,
              r.inputs ? r.inputs + int64_t(step) * input_row : nullptr};
    }
    const int64_t row = int64_t(w) * horizon + step;
    return {state_rows + row * state_row(), obs_rows + row * kObsSize, action_rows + row * nactuator,
            expert_rows ? expert_rows + row * nactuator : nullptr, input_rows ? input_rows + row * input_row : nullptr};
  }
};

// The episode's start, after the host reset the world and gave it its parameters: the task's and
// the observation model's reset, the events' draws, zero actions. `r` is world w's record
// (a.worlds[w], or a copy of it: SweepWorldPass).
S2R_HD void SweepBeginEpisode(const SweepStepArgs& a, const ModelView& m, const StateView& s, int w, SweepWorld& r) {
  const uint64_t episode = static_cast<uint64_t>(r.episode);
  ObservationReset(a.observation, a.seed, episode, &r.observation);
  for (int k = 0; k < a.nevents; ++k) r.events[k] = DrawEvent(a.events[k], a.seed, episode, k);
  Real* act = a.actions + static_cast<int64_t>(w) * a.action_stride;
  for (int i = 0; i < a.action_stride; ++i) act[i] = Real(0);
  TaskReset(a.task, m, s, w, a.task_params + static_cast<int64_t>(w) * kTaskMaxParams, &r.task);
  r.begin = 0;
  r.active = 1;
}

// The start of world w's control step: the episode's start where the host began one, then the
// events whose time has come. false: the world has no episode.
S2R_HD bool SweepWorldPrepare(const SweepStepArgs& a, const ModelView& m, const StateView& s, int w, Workspace* ws,
                              SweepWorld& r) {
  a.ended[w] = 0;
  if (r.begin) SweepBeginEpisode(a, m, s, w, r);
  if (!r.active) return false;
  Real* params = a.task_params + static_cast<int64_t>(w) * kTaskMaxParams;
  bool state_edited = false;
  for (int k = 0; k < a.nevents; ++k) {
    if (MaybeFireEvent(a.events[k], &r.events[k], a.task, s, w, a.goal, params)) {
      state_edited = state_edited || a.events[k].kind != kEventGoalChange;
    }
  }
  if (state_edited) *ws->reduced_valid = kReducedEdited;  // a tree's fixed parent may have moved: rebuild
  return true;
}

// A policy's inputs besides the obs at the step, as T: the first `nparams` of the episode's task
// parameters (as events left them), `njoints` joint positions (the task joints', zeros past them)
// and, where `target` is not null, the target's position (zeros for a task without one). Both a
// policy's row (SweepWorldPolicyRow: float32, padded to the maxima) and the recorded input row
// (SweepWorldInputRow: Real, the task's sizes) are made here.
template <typename T>
S2R_HD void SweepWorldInputValues(const SweepStepArgs& a, const StateView& s, int w, int nparams, int njoints,
                                  T* params, T* joints, T* target) {
  const Real* p = a.task_params + static_cast<int64_t>(w) * kTaskMaxParams;
  for (int i = 0; i < nparams; ++i) params[i] = static_cast<T>(p[i]);
  const Real* q = s.joint_q(w);
  for (int i = 0; i < njoints; ++i) joints[i] = i < a.task.nactuator ? static_cast<T>(q[a.task.joint[i]]) : T(0);
  if (!target) return;
  const Real* x = a.task.target_body >= 0 ? s.body_pos(w, a.task.target_body) : nullptr;
  for (int i = 0; i < 3; ++i) target[i] = x ? static_cast<T>(x[i]) : T(0);
}

// ... as the row the sweep records (steps/task_params, steps/joints, steps/target). A call of its
// own on the device, as ApplyActionNoise: inlined, the observing kernels took 2 more registers
// (<all>) and 8-16 B more spills.
S2R_HD_NOINLINE void SweepWorldInputRow(const SweepStepArgs& a, const StateView& s, int w, Real* row) {
  Real* joints = row + a.input_params;
  SweepWorldInputValues(a, s, w, a.input_params, a.task.nactuator, row, joints,
                        a.task.target_body >= 0 ? joints + a.task.nactuator : nullptr);
}

// The rows before the step, `rows` = a.RowsAt(w, r.task.steps) (the row index is the control steps
// evaluated so far, < horizon while active): the moving bodies' true state and the observation,
// and where the sweep records them a policy's other inputs.
S2R_HD void SweepWorldRecordState(const SweepStepArgs& a, const StateView& s, int w, SweepWorld& r,
                                   const SweepRows& rows) {
  Real* state = rows.state;
  for (int i = 0; i < a.nbody; ++i) {
    const int b = a.body[i];
    Real* out = state + i * kBodyStateSize;
    StoreVec3(out, LoadVec3(s.body_pos(w, b)));
    StoreQuat(out + 3, LoadQuat(s.body_quat(w, b)));
    StoreVec3(out + 7, LoadVec3(s.body_linvel(w, b)));
    StoreVec3(out + 10, LoadVec3(s.body_angvel(w, b)));
  }
  Real truth[kObsSize];
  StoreVec3(truth, LoadVec3(s.body_pos(w, a.task.object_body)));
  StoreQuat(truth + 3, LoadQuat(s.body_quat(w, a.task.object_body)));
  StoreVec3(truth + 7, LoadVec3(s.body_pos(w, a.task.effector_body)));
  Observe(a.observation, a.seed, static_cast<uint64_t>(r.episode), truth, &r.observation, rows.obs);
  if (rows.inputs) SweepWorldInputRow(a, s, w, rows.inputs);
}

// ... and the step's action row
S2R_HD void SweepWorldRecordAction(const SweepStepArgs& a, const SweepRows& rows, const Real* act) {
  Real* action_row = rows.action;
  for (int i = 0; i < a.nactuator; ++i) action_row[i] = act[i];
}

// The expert's action `act` (the world's actuator vector after TaskAct) as a label row: the task's
// actuators' values, zeros for the others (as in the expert's own episodes, whose other actuators
// keep their reset's zeros).
S2R_HD void SweepWorldLabelRow(const SweepStepArgs& a, const Real* act, Real* row) {
  for (int i = 0; i < a.nactuator; ++i) row[i] = Real(0);
  for (int i = 0; i < a.task.nactuator; ++i) row[a.task.actuator[i]] = act[a.task.actuator[i]];
}

// The action noise of the world's step (before its action row is recorded: the row is what the
// actuators receive, so that a replay of the row is the episode), where the sweep has any.
S2R_HD void SweepWorldActionNoise(const SweepStepArgs& a, int w, const SweepWorld& r, Real* act) {
  if (!a.action_noise.active) return;
  ApplyActionNoise(a.action_noise, a.task, a.seed, static_cast<uint64_t>(r.episode), r.task.steps,
                   a.noise_state + static_cast<int64_t>(w) * kTaskMaxActuators, act);
}

// One control step of world w, in three parts so that a backend may time the physics alone:
// SweepWorldBefore (the episode's start, events, the expert, the rows before the step) returns
// the world's actions, ControlStep steps it, SweepWorldAfter evaluates the task. `ws` has the
// world's block bound (BindWorkspace).
template <bool kArm = true>
S2R_HD Real* SweepWorldBefore(const SweepStepArgs& a, const ModelView& m, const StateView& s, int w, Workspace* ws,
                              SweepWorld& r) {
  const bool active = SweepWorldPrepare(a, m, s, w, ws, r);
  Real* act = a.actions + static_cast<int64_t>(w) * a.action_stride;
  if (!active) return act;  // no episode (SweepWorldPass does not step such a world)
  TaskAct<kArm>(a.task, m, s, w, a.task_params + static_cast<int64_t>(w) * kTaskMaxParams, &r.task, act);
  const SweepRows rows = a.RowsAt(w, r.task.steps);
  SweepWorldRecordState(a, s, w, r, rows);
  if (a.action_noise.active) {  // DART-style: the clean action is the step's label
    if (rows.expert) SweepWorldLabelRow(a, act, rows.expert);
    SweepWorldActionNoise(a, w, r, act);
  }
  SweepWorldRecordAction(a, rows, act);
  return act;
}

S2R_HD void SweepWorldAfter(const SweepStepArgs& a, const ModelView& m, const StateView& s, int w, SweepWorld& r) {
  if (!r.active) return;
  TaskEvaluate(a.task, m, s, w, a.task_params + static_cast<int64_t>(w) * kTaskMaxParams, a.horizon, &r.task);
  if (r.task.done) {
    r.active = 0;
    a.ended[w] = 1;
  }
}

// the physics of one control step, untimed (SweepWorldPass's default `physics`), and a policy
// network's forward pass (kSweepNet)
template <unsigned kFeatures>
struct SweepControlStep {
  S2R_HD void operator()(const ModelView& m, const StateView& s, int w, Workspace* ws, const Real* act) const {
    ControlStep<kFeatures>(m, s, w, ws, act);
  }
  S2R_HD void Net(const PolicyNet& net, float* x, float* scratch, float* out, int hidden = kNetMaxWidth) const {
    NetForward(net, x, scratch, out, hidden);
  }
};

// What a sweep pass does (SweepWorldPass): the task's expert acts, or a policy outside the
// backend does (`s2r sweep --policy`, host/sweep/policy.h), with the host between passes: a
// kSweepObserve pass first (the episode's start, events, the rows before the step, and the
// policy's inputs, SweepPolicyRow), then, with the policy's answers in a.actions, a kSweepActObserve
// pass per control step: the action row, the physics and the task's evaluation of the worlds the
// last observation left active, then the next step's observation of every world still active or
// begun by the host since (one pass, one staging of the world, per control step). A world whose
// episode ends in a pass is begun again by the host after it, and observed in the next pass: its
// next episode's first step is asked one exchange later than the others' steps. Or a policy network
// acts inside the pass (`s2r sweep --policy-net`, a.net): kSweepNet, the expert's pass with the
// network's actions for the expert's, computed from the row a policy process would be sent. The
// task's checkers run as with the expert; its TaskAct only to label the network's steps (--policy-expert,
// a.expert_labels: steps/expert_action). A kSweepNet pass takes up to
// a.steps control steps, as the expert's.
enum SweepPassMode : int32_t {
  kSweepExpert = 0,
  kSweepObserve = 1,
  kSweepActObserve = 2,
  kSweepNet = 3,
};

// world w's policy row `p`, after the rows before its step were recorded (`obs` is its obs row)
S2R_HD void SweepWorldPolicyRow(const SweepStepArgs& a, const StateView& s, int w, const SweepWorld& r,
                                const Real* obs, SweepPolicyRow& p) {
  p.episode = r.episode;
  p.active = 1;
  p.first = r.task.steps == 0 ? 1 : 0;
  for (int i = 0; i < kObsSize; ++i) p.obs[i] = static_cast<float>(obs[i]);
  SweepWorldInputValues(a, s, w, kTaskMaxParams, kTaskMaxActuators, p.task_params, p.joints, p.target);
}

// world w's expert's action at its step (TaskAct after SweepWorldPrepare, as SweepWorldBefore
// calls it), written into `act` (the world's actuator vector: its values must be spent, the step
// that used them done) and recorded in the expert row `row` (zeros for the actuators the task does
// not drive, as in the expert's own episodes, whose other actuators keep their reset's zeros).
template <bool kArm = true>
S2R_HD void SweepWorldExpertAct(const SweepStepArgs& a, const ModelView& m, const StateView& s, int w, SweepWorld& r,
                                Real* act, Real* row) {
  TaskAct<kArm>(a.task, m, s, w, a.task_params + static_cast<int64_t>(w) * kTaskMaxParams, &r.task, act);
  if (row) SweepWorldLabelRow(a, act, row);  // else the buffers record no labels (they do whenever expert_labels is set)
}

// ... into p.expert too (TaskModel actuator order, float32), in an observing pass: a.actions' row w
// holds the actions the act half stepped with, and the host writes the next ones before the next
// pass
template <bool kArm = true>
S2R_HD void SweepWorldExpertRow(const SweepStepArgs& a, const ModelView& m, const StateView& s, int w, SweepWorld& r,
                                const SweepRows& rows, SweepPolicyRow& p) {
  Real* act = a.actions + static_cast<int64_t>(w) * a.action_stride;
  SweepWorldExpertAct<kArm>(a, m, s, w, r, act, rows.expert);
  for (int i = 0; i < kTaskMaxActuators; ++i) {
    p.expert[i] = i < a.task.nactuator ? static_cast<float>(act[a.task.actuator[i]]) : 0.0f;
  }
}

// The network's inputs from a policy row and the world's last actions (`last`: its actuator vector
// before this step's, the network's own output, zeros at the episode's start): the blocks in the
// network's order (kernels/policy_net.h).
S2R_HD void NetInputs(const PolicyNet& net, const SweepPolicyRow& p, const Real* last, float* x) {
  int n = 0;
  for (int k = 0; k < net.ninput; ++k) {
    const int block = net.input[k];
    if (block == kNetInputLastAction) {
      for (int i = 0; i < net.input_size[k]; ++i) x[n++] = static_cast<float>(last[i]);
      continue;
    }
    const float* from = block == kNetInputObs           ? p.obs
                        : block == kNetInputTaskParams ? p.task_params
                        : block == kNetInputJoints     ? p.joints
                                                       : p.target;
    for (int i = 0; i < net.input_size[k]; ++i) x[n++] = from[i];
  }
}

// Where a kSweepNet step keeps the forward pass's buffers: the policy row, the inputs, the hidden
// layers' two buffers and the outputs, sized by the network (NetBufferBytes).
struct SweepNetBuffers {
  SweepPolicyRow* row;
  float* x;        // width[0]
  float* scratch;  // 2 x hidden
  float* out;      // width[nlayer]
  int hidden;      // NetHiddenWidth, at least 1
};
S2R_HD int64_t NetBufferAlign(int64_t bytes) { return (bytes + 15) / 16 * 16; }
// their offsets from the buffers' base (16-byte aligned), and the bytes in all
struct SweepNetBufferLayout {
  int64_t x, scratch, out, bytes;
  int hidden;
};
S2R_HD SweepNetBufferLayout NetBufferLayout(const PolicyNet& net) {
  SweepNetBufferLayout l;
  l.hidden = NetHiddenWidth(net) > 0 ? NetHiddenWidth(net) : 1;
  l.x = NetBufferAlign(sizeof(SweepPolicyRow));
  l.scratch = l.x + NetBufferAlign(int64_t(net.width[0]) * 4);
  l.out = l.scratch + NetBufferAlign(int64_t(2) * l.hidden * 4);
  l.bytes = l.out + NetBufferAlign(int64_t(net.width[net.nlayer]) * 4);
  return l;
}
S2R_HD int64_t NetBufferBytes(const PolicyNet& net) { return NetBufferLayout(net).bytes; }
S2R_HD SweepNetBuffers NetBuffersAt(const PolicyNet& net, char* base) {
  const SweepNetBufferLayout l = NetBufferLayout(net);
  return {reinterpret_cast<SweepPolicyRow*>(base), reinterpret_cast<float*>(base + l.x),
          reinterpret_cast<float*>(base + l.scratch), reinterpret_cast<float*>(base + l.out), l.hidden};
}

// The network's step with its buffers `b`: the policy row, the inputs (`act` holds the last step's
// actions), the expert's label where asked, the forward pass, the actions into `act`.
template <bool kArm, typename Physics>
S2R_HD void SweepWorldNetAct(const SweepStepArgs& a, const ModelView& m, const StateView& s, int w, SweepWorld& r,
                             const SweepRows& rows, Real* act, const Physics& physics, const SweepNetBuffers& b) {
  SweepWorldPolicyRow(a, s, w, r, rows.obs, *b.row);
  NetInputs(a.net, *b.row, act, b.x);  // act: the last step's actions, not yet overwritten
  // the expert's label (--policy-expert), into act: its last values are in x, the network's next
  // overwrite it
  if (a.expert_labels) SweepWorldExpertAct<kArm>(a, m, s, w, r, act, rows.expert);
  physics.Net(a.net, b.x, b.scratch, b.out, b.hidden);
  for (int i = 0; i < a.nactuator; ++i) act[i] = static_cast<Real>(b.out[i]);
}

// Whether a sweep's physics keeps the forward pass's buffers outside the pass's frame: it has
// `char* NetBuffers(int w) const` (the CUDA backend's DeviceNetStep), else they are the pass's own.
template <typename Physics, typename = void>
struct NetBuffersOutside {
  static constexpr bool value = false;
};
template <typename Physics>
struct NetBuffersOutside<Physics, std::void_t<decltype(std::declval<const Physics&>().NetBuffers(0))>> {
  static constexpr bool value = true;
};

// A kSweepNet step's start: as SweepWorldBefore, with the network's actions for the expert's
// (`physics.Net` runs the forward pass: a backend may time it, as the physics). The buffers are the
// function's own, or where `physics.NetBuffers(w)` says (NetBuffersOutside: the CUDA
// backend's step block, so that the kernel's frame does not hold the widest network's).
template <bool kArm, typename Physics>
S2R_HD Real* SweepWorldNetBefore(const SweepStepArgs& a, const ModelView& m, const StateView& s, int w, Workspace* ws,
                                 SweepWorld& r, const Physics& physics) {
  const bool active = SweepWorldPrepare(a, m, s, w, ws, r);
  Real* act = a.actions + static_cast<int64_t>(w) * a.action_stride;
  if (!active) return act;
  const SweepRows rows = a.RowsAt(w, r.task.steps);
  SweepWorldRecordState(a, s, w, r, rows);
  if constexpr (NetBuffersOutside<Physics>::value) {
    SweepWorldNetAct<kArm>(a, m, s, w, r, rows, act, physics, NetBuffersAt(a.net, physics.NetBuffers(w)));
  } else {
    SweepPolicyRow p;
    float x[kNetMaxInputs], scratch[2 * kNetMaxWidth], out[kNetMaxOutputs];
    SweepWorldNetAct<kArm>(a, m, s, w, r, rows, act, physics, SweepNetBuffers{&p, x, scratch, out, kNetMaxWidth});
  }
  SweepWorldActionNoise(a, w, r, act);  // the next step's last-action input is this, as executed
  SweepWorldRecordAction(a, rows, act);
  return act;
}

// One pass of world w. kSweepExpert and kSweepNet: up to a.steps control steps, stopping after the
// step that ends its episode (the host collects it and starts the world's next one between passes).
// kSweepObserve / kSweepActObserve: a policy process's observation, then its actions and the next
// observation, one control step a pass (above). Several
// steps per pass keep a world's state in cache (CPU) or in its thread (CUDA) and spread the host's
// work between passes over more steps. An episode's rows do not depend on how its steps fell into
// passes. A world with no episode to run or start takes none (the sweep's tail).
// `physics(m, s, w, ws, act)` steps the world and `physics.Net(net, x, scratch, out, hidden)` runs a policy
// network (a backend may wrap ControlStep and NetForward to time them: the CPU backend reports the
// sweep's physics and network shares). `record` is the world's episode record to use, when
// not a.worlds[w] itself: the CUDA step kernel passes a copy in the thread's local memory and
// writes it back after the pass. The mode is a template parameter: the CUDA backend compiles a
// kernel per mode (cuda/backend_cuda.cu), and the expert's is the code it was before the policy's
// modes existed (its registers and spills unchanged).
template <unsigned kFeatures, int kMode = kSweepExpert, typename Physics = SweepControlStep<kFeatures>>
S2R_HD void SweepWorldPass(const SweepStepArgs& a, const ModelView& m, const StateView& s, int w, Workspace* ws,
                           const Physics& physics = Physics(), SweepWorld* record = nullptr) {
  // the record is looked up again after the physics rather than kept live across it (registers)
  auto r = [&]() -> SweepWorld& { return record ? *record : a.worlds[w]; };
  // an arm (task.arm: hinges) is an articulated tree, so only the variants with them carry its
  // inverse kinematics (kernels/task_arm.h; the host checks a config's arm against the variant)
  constexpr bool kArm = (kFeatures & kStepTrees) != 0;
  if (!r().active && !r().begin) {  // no episode to run or start
    a.ended[w] = 0;
    if constexpr (kMode != kSweepObserve) a.stepped[w] = 0;
    if constexpr (kMode == kSweepObserve || kMode == kSweepActObserve) a.policy_rows[w].active = 0;
    return;
  }
  if constexpr (kMode == kSweepObserve || kMode == kSweepActObserve) {
    if constexpr (kMode == kSweepActObserve) {
      // the act half: the worlds the last observation left active (a begun world is not: it
      // starts in the observe half below), with the policy's actions the host wrote
      a.ended[w] = 0;
      a.stepped[w] = 0;
      if (r().active) {
        Real* act = a.actions + static_cast<int64_t>(w) * a.action_stride;
        SweepWorldActionNoise(a, w, r(), act);
        SweepWorldRecordAction(a, a.RowsAt(w, r().task.steps), act);
        physics(m, s, w, ws, act);
        SweepWorldAfter(a, m, s, w, r());  // an episode that ends leaves a.ended[w] set
        a.stepped[w] = 1;
      }
    }
    // the observe half: a world still active, or begun by the host (after its last episode ended
    // in an earlier pass), starts its next step and sends its row
    if (r().active || r().begin) {
      SweepWorldPrepare(a, m, s, w, ws, r());  // its a.ended[w] = 0 is not a flag this pass set
      const SweepRows rows = a.RowsAt(w, r().task.steps);
      SweepWorldRecordState(a, s, w, r(), rows);
      SweepWorldPolicyRow(a, s, w, r(), rows.obs, a.policy_rows[w]);
      if (a.expert_labels) SweepWorldExpertRow<kArm>(a, m, s, w, r(), rows, a.policy_rows[w]);
    } else {
      a.policy_rows[w].active = 0;
    }
  } else {
    int k = 0;
    do {
      Real* act;
      if constexpr (kMode == kSweepExpert) {
        act = SweepWorldBefore<kArm>(a, m, s, w, ws, r());
      } else {
        act = SweepWorldNetBefore<kArm>(a, m, s, w, ws, r(), physics);
      }
      physics(m, s, w, ws, act);
      SweepWorldAfter(a, m, s, w, r());
      ++k;
    } while (k < a.steps && !a.ended[w]);
    a.stepped[w] = k;
  }
}

}  // namespace s2r
