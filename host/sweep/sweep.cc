#include "host/sweep/sweep.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <thread>

#include "host/store/sha256.h"
#include "host/store/store_error.h"
#include "host/backend.h"
#include "host/sweep/policy.h"
#include "host/sweep/policy_net.h"
#include "kernels/events.h"
#include "kernels/observation.h"
#include "kernels/tasks.h"

namespace s2r {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr DataType kRealType = sizeof(Real) == 4 ? DataType::kFloat32 : DataType::kFloat64;

// the bodies whose state is recorded: every body that moves, in index order
std::vector<int> MovingBodies(const Model& m) {
  std::vector<int> out;
  for (int b = 1; b < m.nbody(); ++b) {
    if (m.body_dynamic[b]) out.push_back(b);
  }
  return out;
}

// the unit of an actuator's control: a joint target for position actuators, a speed for velocity
// ones, a force for motors (m / rad by the joint's type)
std::string ActionUnit(const Model& m, int a) {
  bool slide = m.actuator_trntype[a] == kTransmissionJoint && m.joint_type[m.actuator_trnid[a]] == kJointSlide;
  if (m.actuator_trntype[a] == kTransmissionTendon) {  // a fixed tendon of slides is a length, m
    const int t = m.actuator_trnid[a];
    slide = true;
    for (int w = m.tendon_wrap[2 * t]; w < m.tendon_wrap[2 * t] + m.tendon_wrap[2 * t + 1]; ++w) {
      slide = slide && m.joint_type[m.wrap_joint[w]] == kJointSlide;
    }
  }
  switch (m.actuator_type[a]) {
    case kActuatorPosition: return slide ? "m" : "rad";
    case kActuatorVelocity: return slide ? "m/s" : "rad/s";
    default: return slide ? "N" : "N m";
  }
}

const char* DistributionName(int kind) {
  switch (kind) {
    case kDistFixed: return "fixed";
    case kDistUniform: return "uniform";
    case kDistLogUniform: return "loguniform";
    case kDistNormal: return "normal";
    case kDistTruncNormal: return "truncnormal";
    default: return "choice";
  }
}

// the observation's components (kernels/observation.h: kObsSize), as steps/obs and a policy name them
const std::vector<std::string>& ObsNames() {
  static const std::vector<std::string> names = {"object_px", "object_py", "object_pz", "object_qw", "object_qx", "object_qy", "object_qz",
               "effector_px", "effector_py", "effector_pz"};
  return names;
}

}  // namespace

const std::vector<std::string>& TaskLabelNames() {
  static const std::vector<std::string> names = {"none",      "grasp_miss", "drop",    "slip",
                                                 "collision", "stuck",      "timeout", "sim_unstable"};
  return names;
}

// the episodes of the whole sweep: the hard set's, or the option's or the config's count
TaskChecker SweepChecker(const SweepConfig& c, bool policy) {
  if (c.task.info->kind == kTaskPush) return kCheckerState;  // its only one (kernels/task_push.h)
  if (c.task.checker >= 0) return static_cast<TaskChecker>(c.task.checker);
  return policy ? kCheckerState : kCheckerPhases;
}

std::string StoredChecker(const nlohmann::json& g) {
  if (!g.is_object() || !g.contains("sweep") || !g["sweep"].is_object()) return "";
  if (g["sweep"].contains("checker") && g["sweep"]["checker"].is_string()) return g["sweep"]["checker"].get<std::string>();
  const bool push = g.contains("config") && g["config"].is_object() && g["config"].contains("task") &&
                    g["config"]["task"].is_object() && g["config"]["task"].value("name", std::string()) == "push";
  return TaskCheckerName(push ? kCheckerState : kCheckerPhases);
}

int64_t SweepEpisodes(const SweepConfig& c, const SweepOptions& o) {
  if (!o.episode_indices.empty()) return static_cast<int64_t>(o.episode_indices.size());
  return o.episodes >= 0 ? o.episodes : c.episodes;
}

// a JSON value at a dotted path ("episodes_from.count"), dumped, or "absent"
std::string DumpAt(const nlohmann::json& j, const std::string& dotted) {
  const nlohmann::json* at = &j;
  for (size_t start = 0; start <= dotted.size();) {
    size_t dot = dotted.find('.', start);
    if (dot == std::string::npos) dot = dotted.size();
    const std::string key = dotted.substr(start, dot - start);
    if (!at->is_object() || !at->contains(key)) return "absent";
    at = &(*at)[key];
    start = dot + 1;
  }
  return at->dump();
}

std::vector<PolicyInputBlock> PolicyInputBlocks(const SweepConfig& c) {
  if (!c.record_policy_inputs) return {};
  const TaskModel& t = c.task.model;
  std::vector<PolicyInputBlock> blocks = {{"task_params", static_cast<int>(c.task.params.size())},
                                          {"joints", t.nactuator}};
  if (t.target_body >= 0) blocks.push_back({"target", 3});
  return blocks;
}

void SplitPolicyInputs(const SweepConfig& c, const EpisodeRecord& f, std::vector<RowVector>* out) {
  const std::vector<PolicyInputBlock> blocks = PolicyInputBlocks(c);
  int row = 0;
  for (const PolicyInputBlock& b : blocks) row += b.size;
  out->resize(blocks.size());
  const size_t len = static_cast<size_t>(f.length);
  if (f.inputs.size() < len * size_t(row)) throw std::logic_error("an episode record without its input rows");
  int at = 0;
  for (size_t k = 0; k < blocks.size(); ++k) {
    RowVector& v = (*out)[k];
    const size_t n = static_cast<size_t>(blocks[k].size);
    v.resize(len * n);
    for (size_t i = 0; i < len; ++i) {
      const Real* from = f.inputs.data() + i * size_t(row) + size_t(at);
      std::copy(from, from + n, v.data() + i * n);
    }
    at += blocks[k].size;
  }
}

DatasetSpec SweepDatasetSpec(const SweepConfig& c, const SweepOptions& o) {
  const Model& m = c.model;
  DatasetSpec spec;
  spec.control_hz = m.control_hz;
  spec.storage = c.storage;
  // features
  const std::vector<int> bodies = MovingBodies(m);
  std::vector<std::string> body_names;
  for (int b : bodies) body_names.push_back(m.body_name[b]);
  FeatureSpec state;
  state.name = "state";
  state.dtype = kRealType;
  state.shape = {static_cast<int64_t>(bodies.size()), kBodyStateSize};
  state.names = {"px", "py", "pz", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"};
  state.units = {"m", "m", "m", "1", "1", "1", "1", "m/s", "m/s", "m/s", "rad/s", "rad/s", "rad/s"};
  state.frame = "world";
  state.rotation = "quat_wxyz";
  std::string listed;
  for (const std::string& n : body_names) listed += (listed.empty() ? "" : ", ") + n;
  state.description = "true state of the moving bodies (" + listed +
                      "): body origin, orientation, COM velocity, angular velocity";
  FeatureSpec obs;
  obs.name = "obs";
  obs.dtype = kRealType;
  obs.shape = {kObsSize};
  obs.names = ObsNames();
  obs.units = {"m", "m", "m", "1", "1", "1", "1", "m", "m", "m"};
  obs.frame = "world";
  obs.rotation = "quat_wxyz";
  const ObservationModel& om = c.observation;
  char noise[512];
  std::snprintf(noise, sizeof(noise),
                "position noise %g m, orientation noise %g rad, position bias %g m per episode, camera error %g rad "
                "and %g m per episode, dropout %g, latency %d control steps",
                double(om.position_noise_std), double(om.orientation_noise_std), double(om.position_bias_std),
                double(om.camera_rotation_std), double(om.camera_translation_std), double(om.dropout),
                om.latency_steps);
  obs.description = "what the policy observes: object '" + m.body_name[c.task.model.object_body] + "' pose and effector '" +
                    m.body_name[c.task.model.effector_body] + "' position, world frame as the (miscalibrated) camera sees it; " +
                    noise + " (docs/sweep.md, observation); the true values are in steps/state";
  FeatureSpec action;
  action.name = "action";
  action.dtype = kRealType;
  action.shape = {m.nactuator()};
  action.names = m.actuator_name;
  for (int a = 0; a < m.nactuator(); ++a) action.units.push_back(ActionUnit(m, a));
  action.frame = "joint";
  action.rotation = "none";
  const bool acted = !o.policy.empty() || o.policy_net;  // a policy acted, not the task's expert
  const ActionNoise& an = c.action_noise;
  std::string act_noise;  // the action noise, where the config has some
  if (an.active) {
    const TaskModel& t = c.task.model;
    for (int i = 0; i < t.nactuator; ++i) {
      char v[96];
      std::snprintf(v, sizeof(v), "%s %g %s", m.actuator_name[t.actuator[i]].c_str(), double(an.std[i]),
                    ActionUnit(m, t.actuator[i]).c_str());
      act_noise += (act_noise.empty() ? "" : ", ") + std::string(v);
    }
    char tail[160];
    if (an.keep > 0) {
      std::snprintf(tail, sizeof(tail), " per step, correlated with time constant %g s (docs/sweep.md, action_noise)",
                    double(an.time_constant_s));
    } else {
      std::snprintf(tail, sizeof(tail), " per step, independent between steps (docs/sweep.md, action_noise)");
    }
    act_noise = "action noise " + act_noise + tail;
  }
  action.description = std::string(acted ? "the policy's" : "the scripted expert's") +
                       " actuator controls (absolute joint targets for position actuators)" +
                       (an.active ? " as the actuators received them: with the " + act_noise +
                                        (acted ? "" : "; the expert's clean actions are steps/expert_action")
                                  : std::string());
  spec.features = {state, obs, action};
  if (SweepLabelsSteps(c, o)) {  // the expert's label of each step
    FeatureSpec expert = action;
    expert.name = "expert_action";
    expert.description =
        acted ? "what the task's scripted expert would have done at this step (its action in the state the "
                "policy reached, with the phase the task's evaluation gave it; zeros for the actuators the "
                "task does not drive): the label of a DAgger-style correction (--policy-expert)"
              : "the scripted expert's action at this step before the action noise (steps/action is it with the "
                "noise, what the actuators received; zeros for the actuators the task does not drive): the label of "
                "DART-style data collection";
    spec.features.push_back(expert);
  }
  // a policy's other inputs (store.policy_inputs), as a policy process is sent them
  for (const PolicyInputBlock& b : PolicyInputBlocks(c)) {
    FeatureSpec f;
    f.name = b.name;
    f.dtype = kRealType;
    f.shape = {b.size};
    const TaskModel& t = c.task.model;
    if (f.name == "task_params") {
      for (const TaskParamInfo& p : c.task.info->params) {
        f.names.push_back(p.name);
        f.units.push_back(p.unit);
      }
      f.frame = "none";  // the task's own quantities (goal coordinates are world-frame)
      f.rotation = "none";
      f.description = "the episode's task parameters at this step, as a policy is sent them (events may edit "
                      "them within an episode; docs/sweep.md, store.policy_inputs)";
    } else if (f.name == "joints") {
      for (int i = 0; i < t.nactuator; ++i) {
        f.names.push_back(m.joint_name[t.joint[i]]);
        f.units.push_back(m.joint_type[t.joint[i]] == kJointSlide ? "m" : "rad");
      }
      f.frame = "joint";
      f.rotation = "none";
      f.description = "the positions of the joints the task's actions drive (true, as encoders read them), as a "
                      "policy is sent them";
    } else {
      f.names = {"target_x", "target_y", "target_z"};
      f.units = {"m"};
      f.frame = "world";
      f.rotation = "none";
      f.description = "the task's target body '" + m.body_name[t.target_body] +
                      "' position (true), as a policy is sent it";
    }
    spec.features.push_back(f);
  }
  // the randomized parameters
  for (const RandomParam& p : c.randomization.params) {
    ParamSpec ps;
    ps.name = p.name;
    ps.distribution = DistributionName(p.distribution.kind);
    DistributionSupport(p.distribution, &ps.low, &ps.high);
    if (p.distribution.kind == kDistNormal || p.distribution.kind == kDistTruncNormal) {
      ps.low = p.distribution.a;   // the dataset's convention for normals: low = mean, high = std
      ps.high = p.distribution.b;
    }
    ps.units = p.units;
    std::string targets;
    for (const RandomTarget& t : p.targets) targets += (targets.empty() ? "" : ", ") + t.text;
    ps.description = (p.description.empty() ? "" : p.description + "; ") + "targets: " + targets + "; mode: " +
                     (p.mode == RandomMode::kScale ? "scale" : p.mode == RandomMode::kOffset ? "offset" : "absolute") +
                     (p.fit_source.empty() ? "" : "; centred on " + p.fit_source);
    spec.params.push_back(ps);
  }
  // the observation model's per-episode draws
  static const char* const kObsParams[kObsEpisodeParams] = {
      "obs.bias_object_x", "obs.bias_object_y", "obs.bias_object_z", "obs.bias_effector_x",
      "obs.bias_effector_y", "obs.bias_effector_z", "obs.camera_rx", "obs.camera_ry",
      "obs.camera_rz", "obs.camera_tx", "obs.camera_ty", "obs.camera_tz"};
  const double obs_std[4] = {om.position_bias_std, om.position_bias_std, om.camera_rotation_std,
                             om.camera_translation_std};
  for (int i = 0; i < kObsEpisodeParams; ++i) {
    ParamSpec ps;
    ps.name = kObsParams[i];
    ps.distribution = "normal";
    ps.low = 0;  // mean
    ps.high = obs_std[i / 3];
    ps.units = i >= 6 && i < 9 ? "rad" : "m";
    ps.description = i < 6 ? "observation bias of the body's position, per episode"
                           : "camera-extrinsics error (rotation vector / translation), per episode";
    spec.params.push_back(ps);
  }
  spec.metrics = {
      {"phase", "1", "task phase when the episode ended (kernels/task.h TaskPhase: 0 approach, 1 push, 2 grasp, 3 lift, 4 hold, "
               "5 transport, 6 insert)"},
      {"margin", "m",
       "at the end: how far inside the success region (push: goal_radius - distance; peg_insert: depth - "
       "insert_depth), < 0 outside"},
      {"min_margin", "m",
       "closest approach to success seen (push: goal_radius - closest distance), or to a failure threshold "
       "(pick_lift: drop_dist - max_slip; peg_insert: slip_limit - max_slip)"},
      {"max_slip", "m", "largest slip of a held object (grasping tasks; 0 for push)"},
      {"near_miss", "1", "1 when the task calls the episode a near miss (docs/sweep.md)"}};
  static const char* const kEventKinds[] = {"displace_object", "push_object", "goal_change"};
  for (size_t i = 0; i < c.events.size(); ++i) {
    const std::string prefix = "event" + std::to_string(i) + "_";
    const std::string what = std::string("event ") + std::to_string(i) + " (" + kEventKinds[c.events[i].kind] + ")";
    const char* unit = c.events[i].kind == kEventPushObject ? "m/s" : "m";
    spec.metrics.push_back({prefix + "fired", "1", "1 when " + what + " happened before the episode ended"});
    spec.metrics.push_back({prefix + "time", "s", "when " + what + " was drawn to happen (whether or not it did)"});
    spec.metrics.push_back({prefix + "magnitude", unit, "the size drawn for " + what});
    spec.metrics.push_back({prefix + "direction", "rad", "its horizontal direction, about world z"});
  }
  spec.tasks = {{c.task.info->name, c.task.instruction}};
  static const char* const kLabelDescriptions[] = {
      "success",
      "the fingers closed without holding the object",
      "a lifted object fell out of the grasp",
      "a held object slid in the grasp beyond the slip limit",
      "a contact force with a non-target object above the threshold",
      "no progress towards the goal for stuck_s",
      "the horizon ended before success",
      "the engine froze the world (non-finite or runaway state)"};
  for (int l = 0; l < kNumTaskLabels; ++l) spec.labels.push_back({l, TaskLabelNames()[l], kLabelDescriptions[l]});
  spec.embodiment = {{"robot_type", c.scene_source},
                     {"joint_names", m.joint_name},
                     {"actuator_names", m.actuator_name},
                     {"body_names", body_names},
                     {"action_space", "absolute"},
                     {"gripper", c.task.info->kind == kTaskPickLift || c.task.info->kind == kTaskPegInsert ? "opening_m" : "none"}};
  const int64_t seed = o.seed >= 0 ? o.seed : static_cast<int64_t>(c.seed);
  const int64_t episodes = SweepEpisodes(c, o);
  spec.generator = {{"command", "s2r sweep"},
                    {"config_source", c.source},
                    {"config_text", c.text},
                    {"fit_files", c.fit_files},
                    {"config", c.canonical},
                    {"scene_path", c.scene_source},
                    {"scene_text", m.source_text},
                    {"sweep", {{"seed", seed}, {"episodes", episodes}, {"shard", o.shard}, {"shards", o.shards}}}};
  if (!o.policy.empty()) spec.generator["sweep"]["policy"] = o.policy;
  if (o.policy_expert) spec.generator["sweep"]["policy_expert"] = true;
  if (o.policy_net) spec.generator["sweep"]["policy_net"] = o.policy_net->Describe();
  spec.generator["sweep"]["checker"] = TaskCheckerName(SweepChecker(c, !o.policy.empty() || o.policy_net));
  if (!o.episode_indices.empty()) {
    spec.generator["sweep"]["episodes_from"] = {
        {"store", o.episodes_from_store},
        {"select", o.episodes_from_select},
        {"count", episodes},
        {"first", o.episode_indices.front()},
        {"last", o.episode_indices.back()},
        {"sha256", Sha256Hex(o.episode_indices.data(), o.episode_indices.size() * sizeof(int64_t))}};
  }
  return spec;
}

bool SweepLabelsSteps(const SweepConfig& c, const SweepOptions& o) {
  const bool acted = !o.policy.empty() || o.policy_net;
  return acted ? o.policy_expert : c.action_noise.active != 0;
}

namespace {

// What a policy needs of a sweep: labels that do not follow the expert.
void CheckPolicySweep(const SweepConfig& c) {
  if (c.task.info->kind != kTaskPush && SweepChecker(c, true) == kCheckerPhases) {
    throw std::runtime_error(c.source + ": task.checker: 'phases' labels " + c.task.info->name +
                             "'s episodes by its expert's phases, which advance on the expert's timers, so a policy's "
                             "episodes would be mislabelled; --policy and --policy-net need the state checker "
                             "(task.checker: state, the default with a policy)");
  }
}

// The policy process of a sweep (RunnerOptions::policy), told the layout of what it receives and
// answers (host/sweep/policy.h).
std::unique_ptr<PolicyProcess> StartPolicy(const SweepConfig& c, const RunnerOptions& o, int nworld) {
  std::vector<std::string> task_params, joints;
  for (const TaskParamInfo& p : c.task.info->params) task_params.push_back(p.name);
  const TaskModel& t = c.task.model;
  for (int i = 0; i < t.nactuator; ++i) joints.push_back(c.model.joint_name[t.joint[i]]);
  const bool target = t.target_body >= 0;
  const nlohmann::json hello = {
      {"protocol", "s2r.policy/2"},
      {"task", c.task.info->name},
      {"instruction", c.task.instruction},
      {"control_hz", c.model.control_hz},
      {"worlds", nworld},
      {"obs_size", kObsSize},
      {"obs_names", ObsNames()},
      {"action_size", c.model.nactuator()},
      {"action_names", c.model.actuator_name},
      {"task_param_size", static_cast<int>(task_params.size())},
      {"task_param_names", task_params},
      {"joint_size", t.nactuator},
      {"joint_names", joints},
      {"target_size", target ? 3 : 0},
      {"target_names", target ? std::vector<std::string>{"target_x", "target_y", "target_z"} : std::vector<std::string>{}},
      {"target_body", target ? c.model.body_name[t.target_body] : std::string()},
      {"expert_size", o.policy_expert ? c.model.nactuator() : 0},
      {"expert_names", o.policy_expert ? c.model.actuator_name : std::vector<std::string>{}}};
  return std::make_unique<PolicyProcess>(o.policy, hello, o.policy_timeout_s);
}

// What one control step sends a policy and gets back (kept between steps for their capacity).
struct PolicyBatch {
  bool observed = false;  // the first observation was made (SweepBuffers::Observe)
  PolicyInput in;
  std::vector<float> actions;
  std::vector<int> world;
};

// One control step of every world with the policy's actions: ask, act, observe the next step (the
// first call observes first). What the policy is told of each active world is its row of the last
// observation (SweepPolicyRow, written by the backend's pass: on the device with CUDA); a world
// begun since is observed by this step's pass and asked at the next.
// Returns the seconds the policy took to answer.
double PolicyStep(const SweepConfig& c, int nworld, SweepBuffers& buffers, ActionSource* policy, PolicyBatch* batch,
                  const std::function<void()>& overlap) {
  if (!batch->observed) {
    buffers.Observe();
    batch->observed = true;
  }
  const SweepStepArgs& h = buffers.host();
  PolicyInput& in = batch->in;
  std::vector<int>& world = batch->world;
  in.clear();
  world.clear();
  const int ntask = static_cast<int>(c.task.params.size());
  const int njoint = c.task.model.nactuator;
  const int ntarget = c.task.model.target_body >= 0 ? 3 : 0;
  // the observing pass filled the rows' expert; packed for a source that reads it
  const bool expert = h.expert_labels != 0 && policy->WantsExpert();
  for (int w = 0; w < nworld; ++w) {
    const SweepPolicyRow& r = h.policy_rows[w];
    if (!r.active) continue;
    world.push_back(w);
    in.episode.push_back(r.episode);
    in.first.push_back(static_cast<uint8_t>(r.first));
    in.obs.insert(in.obs.end(), r.obs, r.obs + kObsSize);
    in.task_params.insert(in.task_params.end(), r.task_params, r.task_params + ntask);
    in.joints.insert(in.joints.end(), r.joints, r.joints + njoint);
    in.target.insert(in.target.end(), r.target, r.target + ntarget);
    // the expert's action row: its task actuators' values where they are, zero elsewhere (as in
    // the expert's own episodes, whose other actuators stay at their reset's zero)
    if (!expert) continue;
    const size_t at = in.expert.size();
    in.expert.resize(at + size_t(h.nactuator), 0.0f);
    for (int i = 0; i < njoint; ++i) in.expert[at + size_t(c.task.model.actuator[i])] = r.expert[i];
  }
  std::vector<float>& actions = batch->actions;
  double seconds = 0;
  if (!world.empty()) {
    const auto asked = Clock::now();
    policy->Act(in, &actions);
    seconds = std::chrono::duration<double>(Clock::now() - asked).count();
  }
  const int na = h.nactuator;
  for (size_t i = 0; i < world.size(); ++i) {
    Real* act = h.actions + static_cast<size_t>(world[i]) * h.action_stride;
    for (int k = 0; k < na; ++k) act[k] = static_cast<Real>(actions[i * na + k]);
  }
  buffers.ActAndObserve(overlap);
  return seconds;
}

}  // namespace

void RunEpisodes(const SweepConfig& c, uint64_t seed, int64_t first_slot, int64_t planned,
                 const std::function<int64_t(int64_t)>& index_of, const RunnerOptions& o,
                 const std::function<void(EpisodeRecord&)>& emit, SweepSummary* summary_out) {
  const auto start_time = Clock::now();

  // the batch
  const Model& m = c.model;
  const int nworld = static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>(o.worlds > 0 ? o.worlds : c.worlds, std::max<int64_t>(planned - first_slot, 1))));
  EngineOptions eo;
  eo.nworld = nworld;
  eo.threads = o.threads;
  eo.backend = o.backend;
  Engine engine(m, eo);
  Randomizer randomizer(c.randomization, engine.model(), nworld, seed, c.task.params);
  const std::vector<int> bodies = MovingBodies(m);
  const int na = m.nactuator();
  const int nparam = static_cast<int>(c.randomization.params.size());  // then kObsEpisodeParams
  const int ntask = static_cast<int>(c.task.params.size());

  // the per-world step (kernels/sweep_step.h) and its buffers on the stepping backend
  SweepStepArgs shape;
  shape.task = c.task.model;
  const int sources = int(o.actions != nullptr) + int(!o.policy.empty()) + int(o.net != nullptr);
  if (sources > 1) {
    throw std::invalid_argument("a sweep takes its actions from one of a policy process, a policy network or "
                                "recorded actions");
  }
  if (sources > 0) CheckPolicySweep(c);  // not the expert: labels that do not follow it
  const TaskChecker checker = SweepChecker(c, sources > 0);
  shape.task.checker = checker;
  shape.observation = c.observation;
  shape.nevents = static_cast<int32_t>(c.events.size());
  for (size_t k = 0; k < c.events.size(); ++k) shape.events[k] = c.events[k];
  shape.goal[0] = c.task.goal_param[0];
  shape.goal[1] = c.task.goal_param[1];
  shape.seed = seed;
  shape.horizon = c.horizon_steps;
  if (bodies.size() > static_cast<size_t>(kSweepMaxBodies)) {
    throw std::invalid_argument(c.source + ": the scene has " + std::to_string(bodies.size()) +
                                " moving bodies; a sweep records at most " + std::to_string(kSweepMaxBodies));
  }
  if (ntask > kTaskMaxParams) throw std::logic_error("task parameters exceed kTaskMaxParams");
  shape.nbody = static_cast<int32_t>(bodies.size());
  for (size_t i = 0; i < bodies.size(); ++i) shape.body[i] = bodies[i];
  shape.nactuator = na;
  shape.action_stride = std::max(na, 1);
  if (o.net) {  // the network acts in the step (SweepBuffers::Step runs kSweepNet passes)
    if (o.net->net.width[o.net->net.nlayer] != na) throw std::logic_error("the policy network's outputs are not the actions");
    shape.net = o.net->view();
  }
  shape.steps = o.steps_per_pass > 0                ? o.steps_per_pass
                : o.backend == BackendKind::kCpu ? kSweepStepsPerPassCpu
                                                 : kSweepStepsPerPassCuda;
  // the expert's actions, asked only where a policy acts and they are read or recorded: a process
  // told so or a network (--policy-expert: recorded as steps/expert_action), or an in-process source
  // that wants them
  if (o.action_noise) shape.action_noise = c.action_noise;
  // or the expert's own, where action noise perturbs them (the clean actions: DART-style labels)
  shape.expert_labels = (sources > 0 && o.policy_expert) || (o.actions && o.actions->WantsExpert()) ||
                        (sources == 0 && shape.action_noise.active);
  for (const PolicyInputBlock& b : PolicyInputBlocks(c)) shape.input_row += b.size;  // store.policy_inputs
  shape.input_params = ntask;
  std::unique_ptr<SweepBuffers> buffers = engine.MakeSweepBuffers(shape);
  const SweepStepArgs& h = buffers->host();
  std::unique_ptr<PolicyProcess> process;  // --policy's
  PolicyBatch batch;
  ActionSource* policy = o.actions;
  if (!policy && !o.policy.empty()) {
    process = StartPolicy(c, o, nworld);
    policy = process.get();
  }

  SweepSummary& summary = *summary_out;
  int64_t next_slot = first_slot;
  int64_t next_write = next_slot;
  struct WorldSlot {
    int64_t slot = -1;           // position in this shard's episode sequence; -1: idle
    std::vector<double> params;  // the episode's sampled parameters
  };
  std::vector<WorldSlot> runs(nworld);
  std::map<int64_t, EpisodeRecord> finished;
  int64_t world_steps = 0;
  auto last_progress = Clock::now();

  // gives idle worlds the next episodes: samples, reset; the task's reset runs in their next step
  auto start_episodes = [&]() {
    std::vector<int32_t> worlds;
    std::vector<int64_t> indices;
    for (int w = 0; w < nworld && next_slot < planned; ++w) {
      if (runs[w].slot >= 0) continue;
      runs[w].slot = next_slot;
      worlds.push_back(w);
      indices.push_back(index_of(next_slot));
      ++next_slot;
    }
    if (worlds.empty()) return;
    std::vector<double> samples;
    randomizer.Apply(&engine, worlds, indices, &samples);
    engine.ResetWorlds(worlds);
    for (size_t i = 0; i < worlds.size(); ++i) {
      const int w = worlds[i];
      runs[w].params.assign(samples.begin() + i * nparam, samples.begin() + (i + 1) * nparam);
      SweepWorld& sw = h.worlds[w];
      sw.episode = indices[i];
      sw.begin = 1;
      sw.active = 0;
      const Real* tp = randomizer.TaskParams(w);
      std::copy(tp, tp + ntask, h.task_params + static_cast<size_t>(w) * kTaskMaxParams);
    }
    buffers->Begin(worlds.data(), static_cast<int>(worlds.size()));
  };
  // finished episodes go out in slot order
  std::vector<EpisodeRecord> spare;  // written records, their buffers reused for the next ones
  auto write_ready = [&]() {
    for (auto it = finished.find(next_write); it != finished.end(); it = finished.find(next_write)) {
      emit(it->second);
      spare.push_back(std::move(it->second));
      finished.erase(it);
      ++next_write;
    }
  };

  start_episodes();
  std::vector<int32_t> ended;
  std::vector<FetchedEpisode> fetched;
  // Episodes that finished at a step are handed over right after it and completed and written
  // during the next one (Step's overlap touches only the records, the fetched copies and the
  // store, never the sweep's buffers): on the CPU that work runs beside the parallel pass, on CUDA
  // beside the kernel, while the fetched rows' copy to the host finishes. What must happen before
  // the next step happens here: a world's rows and episode state are taken (CPU: its buffers are
  // swapped out and its SweepWorld copied) before it starts its next episode.
  struct Pending {
    int64_t slot;
    size_t fetched;    // index in `fetched`
    bool taken;        // world and rows already in `record` (CPU); else read them from `fetched`
    SweepWorld world;  // the finished episode's state, when taken
    EpisodeRecord record;
  };
  std::vector<Pending> pending;
  auto complete = [&](Pending& p) {
    if (!p.taken) p.world = *fetched[p.fetched].world;
    const SweepWorld& r = p.world;
    EpisodeRecord& f = p.record;
    f.episode = r.episode;
    f.length = r.task.steps;
    f.task = r.task;
    f.params.insert(f.params.end(), r.observation.episode, r.observation.episode + kObsEpisodeParams);
    f.metrics.assign({double(checker == kCheckerState ? r.task.stage : r.task.phase), double(r.task.margin), double(r.task.min_margin), double(r.task.max_slip),
                      double(r.task.near_miss)});
    for (size_t k = 0; k < c.events.size(); ++k) {
      const EventDraw& d = r.events[k];
      f.metrics.insert(f.metrics.end(), {double(d.fired), double(d.time), double(d.magnitude), double(d.direction)});
    }
    const size_t len = static_cast<size_t>(f.length);
    if (p.taken) {  // the world's own buffers, no copy
      f.state.resize(len * h.state_row());
      f.obs.resize(len * kObsSize);
      f.action.resize(len * na);
      if (h.expert_labels) f.expert.resize(len * na);
      if (h.input_row > 0) f.inputs.resize(len * size_t(h.input_row));
    } else {
      const FetchedEpisode& e = fetched[p.fetched];
      f.state.assign(e.state, e.state + len * h.state_row());
      f.obs.assign(e.obs, e.obs + len * kObsSize);
      f.action.assign(e.action, e.action + len * na);
      if (e.expert) f.expert.assign(e.expert, e.expert + len * na);
      if (e.inputs) f.inputs.assign(e.inputs, e.inputs + len * size_t(h.input_row));
    }
    finished.emplace(p.slot, std::move(f));
  };
  auto complete_and_write = [&]() {
    bool wait = false;
    for (const Pending& p : pending) wait = wait || !p.taken;
    if (wait) buffers->WaitFetched();
    for (Pending& p : pending) complete(p);
    pending.clear();
    write_ready();
  };
  int64_t collected = first_slot;  // episodes that ended (this run starts at the first slot)
  summary.setup_seconds = std::chrono::duration<double>(Clock::now() - start_time).count();
  while (collected < planned) {
    const auto step_start = Clock::now();
    double asked = 0;  // the policy's time is its own, not the steps'
    if (policy) {
      asked = PolicyStep(c, nworld, *buffers, policy, &batch, complete_and_write);
    } else {
      buffers->Step(complete_and_write);
    }
    summary.policy_seconds += asked;
    summary.step_seconds += std::chrono::duration<double>(Clock::now() - step_start).count() - asked;
    for (int w = 0; w < nworld; ++w) world_steps += h.stepped[w];
    // finished episodes leave their world
    ended.clear();
    for (int w = 0; w < nworld; ++w) {
      if (h.ended[w] && runs[w].slot >= 0) ended.push_back(w);
    }
    if (!ended.empty()) buffers->Fetch(ended.data(), static_cast<int>(ended.size()), &fetched);
    for (size_t i = 0; i < ended.size(); ++i) {
      const int w = ended[i];
      pending.emplace_back();
      Pending& p = pending.back();
      p.slot = runs[w].slot;
      p.fetched = i;
      if (!spare.empty()) {
        p.record = std::move(spare.back());
        spare.pop_back();
      }
      p.record.params.swap(runs[w].params);  // the world's next episode refills the other buffer
      p.taken = buffers->TakeRows(w, &p.record.state, &p.record.obs, &p.record.action, &p.record.expert,
                                  &p.record.inputs);
      if (p.taken) p.world = *fetched[i].world;  // before the world's next episode overwrites it
      runs[w].slot = -1;
      ++collected;
    }
    start_episodes();
    if (o.progress && Clock::now() - last_progress > std::chrono::seconds(1)) {
      last_progress = Clock::now();
      summary.seconds = std::chrono::duration<double>(last_progress - start_time).count();
      summary.env_steps_per_s = world_steps / std::max(summary.seconds, 1e-9);
      summary.episodes_total = next_write;
      o.progress(summary);
    }
  }
  complete_and_write();  // the last step's episodes
  if (policy) policy->Finish();
  summary.seconds = std::chrono::duration<double>(Clock::now() - start_time).count();
  summary.world_steps = world_steps;
  summary.env_steps_per_s = world_steps / std::max(summary.seconds, 1e-9);
  summary.physics_seconds = buffers->PhysicsSeconds();
  summary.net_seconds = o.net ? buffers->NetSeconds() : -1;
}

namespace {

// A sweep keeps each world's rows for a whole horizon (kernels/sweep_step.h SweepRows: every
// feature of `spec` per control step), and an ended episode's rows wait to be written while a fresh
// set takes its place: about twice worlds x horizon x row bytes. Checked against the machine's memory
// before the store is made, so a horizon or world count that cannot fit is an error naming both,
// not an allocation failure (or the kernel's OOM killer) part way through.
void CheckEpisodeBuffers(const SweepConfig& c, const DatasetSpec& spec, int64_t worlds) {
  int64_t row = 0;  // values per control step
  for (const FeatureSpec& f : spec.features) {
    int64_t n = 1;
    for (int64_t d : f.shape) n *= d;
    row += n;
  }
  const double need = 2.0 * double(worlds) * double(c.horizon_steps) * double(row) * double(sizeof(Real));
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return;  // unknown: let the allocation say
  const double have = double(pages) * double(page);
  constexpr double kGiB = double(1 << 30);
  if (need > 0.8 * have) {
    char text[256];
    std::snprintf(text, sizeof text,
                  ": horizon_s %g s (%d control steps) in %lld worlds needs about %.1f GiB of episode buffers "
                  "(2 x worlds x steps x %lld values of %zu B), more than 80%% of this machine's %.1f GiB; lower "
                  "horizon_s or --worlds",
                  c.horizon_s, c.horizon_steps, (long long)worlds, need / kGiB, (long long)row, sizeof(Real), have / kGiB);
    throw ConfigError(c.source + text);
  }
}

}  // namespace

SweepSummary RunSweep(const SweepConfig& c, const std::string& out, const SweepOptions& o) {
  if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards) {
    throw std::invalid_argument("--shard K/N needs 0 <= K < N, got " + std::to_string(o.shard) + "/" +
                                std::to_string(o.shards));
  }
  if (o.backend == BackendKind::kCuda && !CudaAvailable()) {  // before the store is touched
    throw std::runtime_error(std::string("--backend cuda: ") +
                             (CudaBackendCompiled() ? "no CUDA device is present" : "s2r was built without CUDA"));
  }
  const uint64_t seed = o.seed >= 0 ? static_cast<uint64_t>(o.seed) : c.seed;
  for (size_t i = 0; i < o.episode_indices.size(); ++i) {
    if (o.episode_indices[i] < 0 || (i > 0 && o.episode_indices[i] <= o.episode_indices[i - 1])) {
      throw std::invalid_argument("the episode indices of a hard set must be ascending, distinct and >= 0");
    }
  }
  const int64_t episodes = SweepEpisodes(c, o);
  const int64_t planned = episodes > o.shard ? (episodes - o.shard + o.shards - 1) / o.shards : 0;
  if (!o.policy.empty() || o.policy_net) CheckPolicySweep(c);  // before the store is made
  if (!o.policy.empty() && o.policy_net) throw std::invalid_argument("--policy and --policy-net: one or the other");
  if (o.policy_expert && o.policy.empty() && !o.policy_net) {
    throw std::invalid_argument("--policy-expert labels a policy's steps with the expert's actions; there is no --policy or "
                                "--policy-net");
  }
  DatasetSpec spec = SweepDatasetSpec(c, o);
  CheckEpisodeBuffers(c, spec, std::min<int64_t>(o.worlds > 0 ? o.worlds : c.worlds, std::max<int64_t>(planned, 1)));
  // the episode index (seed column) of the shard's slot-th episode
  const auto index_of = [&o](int64_t slot) {
    const int64_t i = o.shard + slot * o.shards;
    return o.episode_indices.empty() ? i : o.episode_indices[size_t(i)];
  };

  // the store: new, resumed or replaced; an existing one is never touched without a flag
  std::error_code ec;
  const bool empty_dir = fs::is_directory(out, ec) && fs::is_empty(out, ec);  // given: kept, if emptied again
  const bool exists = fs::exists(out, ec) && !empty_dir;
  if (exists && !o.resume && !o.overwrite) {
    throw StoreError(out, "exists; pass --resume to continue it or --overwrite to replace it");
  }
  if (exists && o.overwrite) {
    if (!DatasetReader::IsDataset(out)) throw StoreError(out, "is not an s2r dataset; refusing to overwrite it");
    fs::remove_all(out);
  }
  if (exists && o.resume) {
    DatasetReader r(out);
    const nlohmann::json& gen = r.root_attributes()["s2r"]["generator"];
    if (gen.value("command", "") != "s2r sweep" || !gen.contains("config")) {
      throw StoreError(out, "was not written by s2r sweep; cannot resume it");
    }
    std::string diff = FirstDifference(gen["config"], c.canonical);
    if (!diff.empty()) {
      throw ConfigError(c.source + ": " + diff + ": differs from the config the store at " + out +
                        " was made with; resume with the same config");
    }
    for (const auto& [file, text] : c.fit_files) {
      const nlohmann::json& was = gen.contains("fit_files") ? gen["fit_files"] : nlohmann::json::object();
      if (!was.contains(file) || was[file] != text) {
        throw ConfigError(c.source + ": fit file " + file + " differs from the one the store at " + out +
                          " was made with (the sweep centres its randomization on it); resume with the same file");
      }
    }
    nlohmann::json was = gen["sweep"];
    if (was.is_object()) was["checker"] = StoredChecker(gen);  // recorded, or what labelled an older store
    diff = FirstDifference(was, spec.generator["sweep"]);
    if (!diff.empty()) {
      throw ConfigError(out + ": sweep." + diff + " differs (" + DumpAt(was, diff) + " in the store, " +
                        DumpAt(spec.generator["sweep"], diff) +
                        " now); resume with the same seed, episodes, shard and --episodes-from selection, and the same "
                        "--policy or --policy-net");
    }
    // a store from before the checker was recorded (2026-12-07) labelled as this run does: keep its
    // schema as it is, so the writer resumes it
    if (gen["sweep"].is_object() && !gen["sweep"].contains("checker")) spec.generator["sweep"].erase("checker");
    // the features' descriptions are the store's, from when it was made (a policy's store from before
    // 2026-12-07 calls its actions the expert's); their layout must be the same, and the writer checks it
    const nlohmann::json& stored = r.root_attributes()["s2r"];
    const nlohmann::json features = stored.contains("features") && stored["features"].is_object()
                                        ? stored["features"]
                                        : nlohmann::json::object();
    for (FeatureSpec& f : spec.features) {
      if (features.contains(f.name) && features[f.name].is_object() && features[f.name].contains("description") &&
          features[f.name]["description"].is_string()) {
        f.description = features[f.name]["description"].get<std::string>();
      }
    }
    // the committed episodes must be this sweep's first ones, in its order
    const std::vector<uint64_t> seeds = r.EpisodeSeeds();
    if (int64_t(seeds.size()) > planned) {
      throw StoreError(out, "holds " + std::to_string(seeds.size()) + " episodes, more than the " +
                                std::to_string(planned) + " this sweep (shard) plans: the store was modified outside s2r");
    }
    for (size_t k = 0; k < seeds.size(); ++k) {
      if (seeds[k] != uint64_t(index_of(int64_t(k)))) {
        throw StoreError(out + "/episodes/seed", "row " + std::to_string(k) + " holds " + std::to_string(seeds[k]) +
                                                     ", but this sweep's episode " + std::to_string(k) + " is " +
                                                     std::to_string(index_of(int64_t(k))) +
                                                     ": the store was modified outside s2r");
      }
    }
  }
  auto writer = std::make_unique<DatasetWriter>(out, spec, o.resume ? OpenMode::kResume : OpenMode::kCreate);
  const bool made_here = !exists || o.overwrite;  // this run made the store (not a resumed one)
  const auto run_start = Clock::now();  // the sweep's own time: not preparing or replacing the store
  SweepSummary summary;
  summary.failure_counts.assign(kNumTaskLabels, 0);
  summary.episodes_planned = planned;
  const int64_t first = writer->episodes_appended();  // resume after the committed episodes
  RunnerOptions ro;
  ro.worlds = o.worlds;
  ro.threads = o.threads;
  ro.backend = o.backend;
  ro.steps_per_pass = o.steps_per_pass;
  ro.policy = o.policy;
  ro.policy_timeout_s = o.policy_timeout_s;
  ro.policy_expert = o.policy_expert;
  ro.net = o.policy_net.get();
  ro.progress = o.progress;
  const bool labels = SweepLabelsSteps(c, o);
  std::vector<RowVector> inputs;  // an episode's policy inputs, a row array per feature (store.policy_inputs)
  try {
    RunEpisodes(c, seed, first, planned, index_of, ro,
        [&](EpisodeRecord& f) {
          EpisodeView ev;
          ev.length = f.length;
          ev.seed = static_cast<uint64_t>(f.episode);
          ev.task_index = 0;
          ev.success = f.task.success != 0;
          ev.failure_label = f.task.label;
          ev.terminal = f.task.terminal != 0;
          ev.params = f.params.data();
          ev.metrics = f.metrics.data();
          ev.features = {f.state.data(), f.obs.data(), f.action.data()};
          if (labels) ev.features.push_back(f.expert.data());
          if (c.record_policy_inputs) {
            SplitPolicyInputs(c, f, &inputs);
            for (const RowVector& v : inputs) ev.features.push_back(v.data());
          }
          writer->Append(ev);
          summary.episodes += 1;
          summary.steps += f.length;
          summary.successes += f.task.success ? 1 : 0;
          summary.failure_counts[f.task.label] += f.task.success ? 0 : 1;
          summary.near_misses += f.task.near_miss ? 1 : 0;
        },
        &summary);
  } catch (...) {
    // A sweep that fails before its first episode (a policy that cannot start or answer, the
    // engine's buffers refused) leaves no store it made: an empty one would stand in the way of the
    // next run (--overwrite) and hold nothing to resume. A resumed store, or one with episodes in
    // it, is kept: what was committed stays.
    if (made_here && summary.episodes == 0) {
      writer.reset();  // closed (nothing appended) before it is removed
      if (empty_dir) {
        for (const fs::directory_entry& e : fs::directory_iterator(out, ec)) fs::remove_all(e.path(), ec);
      } else {
        fs::remove_all(out, ec);
      }
    }
    throw;
  }
  const auto close_start = Clock::now();
  writer->Close();
  summary.close_seconds = std::chrono::duration<double>(Clock::now() - close_start).count();
  summary.episodes_total = writer->episodes_committed();
  summary.seconds = std::chrono::duration<double>(Clock::now() - run_start).count();
  summary.env_steps_per_s = double(summary.world_steps) / std::max(summary.seconds, 1e-9);
  if (o.progress) o.progress(summary);
  return summary;
}

EpisodeRecord ReplayEpisode(const SweepConfig& c, uint64_t seed, int64_t episode, ActionSource* actions,
                            bool expert_labels) {
  EpisodeRecord out;
  SweepSummary summary;
  summary.failure_counts.assign(kNumTaskLabels, 0);
  RunnerOptions ro;
  ro.worlds = 1;
  ro.threads = 1;
  ro.actions = actions;
  ro.policy_expert = expert_labels;
  ro.action_noise = actions == nullptr;  // recorded actions hold their noise
  RunEpisodes(
      c, seed, 0, 1, [episode](int64_t) { return episode; }, ro, [&out](EpisodeRecord& r) { out = std::move(r); },
      &summary);
  return out;
}

}  // namespace s2r
