// Running a sweep: N worlds step in parallel with continuous batching, and every finished episode
// goes into the dataset store in episode order.
//
// Each world runs one episode at a time. When its episode ends (the task's labels, or the
// horizon), its rows are kept until every earlier episode has been written, the world is given
// the next episode index of this shard, its parameters are sampled for that index
// (host/sweep/randomization.h), and it is reset alone (Engine::ResetWorlds): nothing waits for
// the slowest world. An episode's rows depend only on (config, seed, episode index), so the store
// is the same for any world count, thread count or shard split (--shard K/N runs the episodes
// i with i mod N == K), and a hard set (an explicit list of episode indices, --episodes-from)
// reruns exactly the worlds those indices drew in a sweep of the same config and seed.
//
// Per control step an episode records (docs/sweep.md): steps/state, the true state of the moving
// bodies; steps/obs, what a policy sees (object pose and effector position); steps/action, the
// actions taken (the expert's joint targets, or a policy's); with --policy-expert, steps/expert_action,
// what the expert would have done in the policy's states. Per episode: the sampled parameters, success and failure label, seed
// (the episode index), task index.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host/backend.h"
#include "host/engine.h"
#include "host/sweep/sweep_config.h"
#include "kernels/task.h"

namespace s2r {

struct SweepOptions {
  int worlds = 0;             // 0: the config's
  int threads = 0;            // CPU threads; 0: all
  int64_t episodes = -1;      // -1: the config's
  int64_t seed = -1;          // -1: the config's
  int shard = 0, shards = 1;  // --shard K/N
  // a hard set (--episodes-from STORE --select ...): run exactly these episode indices (ascending,
  // distinct) instead of 0 .. episodes - 1; the shard takes every N-th of them. Where they came
  // from is recorded in the store (generator.sweep.episodes_from) and checked on resume.
  std::vector<int64_t> episode_indices;
  std::string episodes_from_store, episodes_from_select;
  bool resume = false;        // continue after the store's last committed episode
  bool overwrite = false;     // replace an existing store
  BackendKind backend = BackendKind::kCpu;
  int steps_per_pass = 0;     // control steps a world takes per pass (RunnerOptions); 0: the default
  // a policy process instead of the task's expert (RunnerOptions::policy); recorded in the store
  // (generator.sweep.policy) and checked on resume
  std::string policy;
  double policy_timeout_s = 60;
  // --policy-expert (RunnerOptions), with --policy or --policy-net: steps/expert_action; recorded
  // (generator.sweep.policy_expert)
  bool policy_expert = false;
  // or a policy network in the step (RunnerOptions::net, --policy-net FILE: LoadPolicyNet);
  // recorded in the store (generator.sweep.policy_net: file, sha256, layers, ...), checked on resume
  std::shared_ptr<const struct PolicyNetFile> policy_net;
  // called about once a second and at the end with the running summary
  std::function<void(const struct SweepSummary&)> progress;
};

struct SweepSummary {
  int64_t episodes = 0;          // written by this run (resumed ones not included)
  int64_t episodes_total = 0;    // this shard's episodes in the store at the end
  int64_t episodes_planned = 0;  // this shard's episodes in all
  int64_t steps = 0;             // control steps recorded by this run
  int64_t successes = 0;
  std::vector<int64_t> failure_counts;  // by TaskLabel (index 0 unused)
  int64_t near_misses = 0;       // episodes the task called near misses (docs/sweep.md)
  double seconds = 0;
  double physics_seconds = -1;   // of which in the physics (ControlStep) alone, averaged over the
                                 // threads; -1 where the backend cannot tell (CUDA)
  double step_seconds = 0;       // of which in the worlds' steps: physics, experts, observations, labels
                                 // and recording (SweepWorldPass; the rest: collecting episodes,
                                 // randomization, resets, the store, a policy)
  double policy_seconds = 0;     // of which asking a policy (--policy): its inputs sent, its answers
                                 // read (its own computing in between); 0 without one
  double net_seconds = -1;       // of step_seconds, in a policy network's forward passes (--policy-net),
                                 // averaged over the threads as physics_seconds; -1 without a network
                                 // or where the backend cannot tell (CUDA)
  double setup_seconds = 0;      // of which before the first pass: the engine, its buffers, the
                                 // first episodes' sampling and resets
  double close_seconds = 0;      // of which closing the store: the last commit, made durable
  int64_t world_steps = 0;       // control steps the worlds took (all in episodes: a world without
                                 // one does not step)
  double env_steps_per_s = 0;    // world_steps per second
};

// One simulated episode as the runner hands it over.
struct EpisodeRecord {
  int64_t episode = 0;  // the episode index
  int64_t length = 0;   // control steps
  TaskState task{};     // labels and metrics at the end
  std::vector<double> params;  // the randomized parameters, then the observation model's draws
  std::vector<double> metrics;  // as SweepDatasetSpec's metrics: the task's, then 4 per event
  RowVector state, obs, action;  // (length, ...) rows, as stored
  RowVector expert;              // (length, nactuator): the expert's labels where recorded (SweepLabelsSteps), else empty
  RowVector inputs;              // (length, input_row): a policy's other inputs where recorded (store.policy_inputs)
};

struct RunnerOptions {
  int worlds = 0;   // 0: the config's
  int threads = 0;
  BackendKind backend = BackendKind::kCpu;
  // control steps a world takes per pass before the host collects ended episodes and starts new
  // ones (kernels/sweep_step.h SweepWorldPass); 0: the backend's default below. Stored episodes
  // do not depend on it; throughput does (fewer passes, worlds hot in cache; a world that ends
  // early in a pass waits for the pass to end before its next episode starts).
  int steps_per_pass = 0;
  // `/bin/sh -c policy` acts instead of the task's expert (host/sweep/policy.h), one control step
  // per pass, on the CPU backend; empty: the expert. An answer must come within policy_timeout_s.
  std::string policy;
  double policy_timeout_s = 60;
  // the task's expert labels the policy's steps (a process or a network): its action at each step,
  // what it would do where the policy's episode is, recorded (EpisodeRecord::expert) and sent to a
  // policy process (its hello's expert_size; host/sweep/policy.h)
  bool policy_expert = false;
  // or this in-process source of actions (s2r replay of a policy's episode); not owned
  class ActionSource* actions = nullptr;
  // or this policy network, evaluated in the worlds' step (kernels/policy_net.h: on the device with
  // CUDA), up to steps_per_pass control steps per pass as the expert; not owned
  const struct PolicyNetFile* net = nullptr;
  // the config's action_noise perturbs the actions (kernels/action_noise.h); false where the actions
  // are a store's, which hold their noise already (ReplayEpisode with recorded actions)
  bool action_noise = true;
  std::function<void(const struct SweepSummary&)> progress;
};
// The defaults: on the CPU a waiting world costs nothing (the threads step the others), so long
// passes pay (bench/results/dev-2core/sweep_bench.md: 16 against 4 and 1); on CUDA a waiting world
// is an idle lane of its warp for the rest of the pass.
constexpr int kSweepStepsPerPassCpu = 16;
constexpr int kSweepStepsPerPassCuda = 4;

// The sweep's engine loop (continuous batching): runs the episodes index_of(slot) for slots
// [first_slot, planned) and calls `emit` with each, in slot order. `summary` gets the timing.
void RunEpisodes(const SweepConfig& config, uint64_t seed, int64_t first_slot, int64_t planned,
                 const std::function<int64_t(int64_t)>& index_of, const RunnerOptions& options,
                 const std::function<void(EpisodeRecord&)>& emit, struct SweepSummary* summary);

// Simulates episode `episode` of a sweep alone (one world): what `s2r replay` compares with a store.
// With `actions`, they act instead of the task's expert (a policy's episode, its recorded actions),
// and with `expert_labels` the expert labels their steps (EpisodeRecord::expert, as --policy-expert).
EpisodeRecord ReplayEpisode(const SweepConfig& config, uint64_t seed, int64_t episode,
                            class ActionSource* actions = nullptr, bool expert_labels = false);

// Whether a sweep records the expert's label of every step (steps/expert_action): a policy's steps
// where --policy-expert asks, the expert's own where action noise perturbs them (its clean action).
bool SweepLabelsSteps(const SweepConfig& config, const SweepOptions& options);

// The step features a sweep records of a policy's inputs besides the obs (store.policy_inputs):
// task_params, joints and, where the task has a target body, target, in the order of the input
// rows (SweepStepArgs::input_rows); none without store.policy_inputs
struct PolicyInputBlock {
  std::string name;
  int size;
};
std::vector<PolicyInputBlock> PolicyInputBlocks(const SweepConfig& config);
// An episode's input rows (EpisodeRecord::inputs) as one row array per block, for the store
void SplitPolicyInputs(const SweepConfig& config, const EpisodeRecord& record, std::vector<RowVector>* out);

// The dataset layout a sweep writes (features, params, tasks, labels, embodiment, generator).
DatasetSpec SweepDatasetSpec(const SweepConfig& config, const SweepOptions& options);

// Runs the sweep into `out`. Throws ConfigError / StoreError / std::runtime_error with a clear
// message: an existing store without --resume or --overwrite is an error and is left untouched;
// --resume refuses a store made from another config, naming the first differing key.
SweepSummary RunSweep(const SweepConfig& config, const std::string& out, const SweepOptions& options);

// The checker a sweep labels its episodes with (kernels/task.h TaskChecker): the config's
// `task.checker`, else the phase checker for the expert and the state checker for a policy; push
// has the state checker alone.
TaskChecker SweepChecker(const SweepConfig& config, bool policy);

// The checker that labelled a sweep store's episodes, from its generator record: the recorded
// `sweep.checker`, or for a store from before it was recorded (2026-12-07) push's "state" and the
// other tasks' "phases"; "" for a store no sweep wrote.
std::string StoredChecker(const nlohmann::json& generator);

// names of the failure labels (index = TaskLabel)
const std::vector<std::string>& TaskLabelNames();

}  // namespace s2r
