// A sweep's YAML config (docs/sweep.md): the scene, the task, the randomization, the horizon,
// the episodes, the seed and the store layout. Loaded from a file, or from the configs compiled
// into s2r as `builtin:<name>` (configs/sweeps/<name>.yaml).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/scene/model.h"
#include "host/store/dataset.h"
#include "host/sweep/randomization.h"
#include "host/sweep/task_setup.h"
#include "kernels/action_noise.h"
#include "kernels/events.h"
#include "kernels/observation.h"

namespace s2r {

struct EmbeddedSweep {
  const char* name;
  const char* yaml;
};
const std::vector<EmbeddedSweep>& EmbeddedSweeps();

// The longest episode a sweep runs, in control steps (11.6 days at 50 Hz): a sweep keeps every
// world's rows for a whole horizon, and row indices are 32-bit.
constexpr int64_t kMaxHorizonSteps = 50'000'000;

struct SweepConfig {
  std::string source;        // as given: a path or builtin:<name>
  std::string text;          // the config file's text
  std::string scene_source;  // the scene, resolved (a path or builtin:<name>)
  Model model;
  TaskSetup task;
  RandomizationSpec randomization;
  ObservationModel observation;  // all zero: the policy sees the true values
  ActionNoise action_noise;      // on the executed actions (docs/sweep.md, action_noise); inactive: none
  std::vector<EventSpec> events;  // at most kMaxEvents
  int64_t episodes = 256;    // episodes of the whole sweep (all shards)
  double horizon_s = 4.0;    // longest episode, s
  int horizon_steps = 200;   // the same in control steps (at most kMaxHorizonSteps)
  uint64_t seed = 0;
  int worlds = 256;          // parallel worlds (the CLI may override)
  StorageSpec storage;
  // `store: {policy_inputs: true}`: every step also records the rest of what a policy is sent
  // (steps/task_params, steps/joints, steps/target where the task has a target), so that a network
  // can be trained from the store alone (docs/sweep.md)
  bool record_policy_inputs = false;
  nlohmann::json canonical;  // the parsed config as JSON, to compare on --resume
  FitFiles fit_files;        // the fit files the randomization centres on, as read (stored by a sweep)
};

// Reads and checks a config; errors are ConfigError with file, line and key path (scene errors
// as the loader reports them).
SweepConfig LoadSweepConfig(const std::string& source);

// The config a sweep store was written with: its stored config text, and its stored scene text
// (so a replay simulates what was simulated, whatever the files say now).
SweepConfig LoadSweepConfigFromStore(const DatasetReader& store);

// The first key path where two canonical configs differ ("" when equal).
std::string FirstDifference(const nlohmann::json& a, const nlohmann::json& b, const std::string& path = "");

}  // namespace s2r
