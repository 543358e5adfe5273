// The synthetic dataset used by the dataset tests: every value is a formula of (episode, step,
// component), so a test can check any committed episode bit for bit without keeping a copy, and
// tests/python/test_zarr_interop.py recomputes the same numbers with numpy. Keep them in sync.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "host/store/dataset.h"

namespace s2r {

inline DatasetSpec FixtureDatasetSpec(const StorageSpec& storage) {
  DatasetSpec spec;
  FeatureSpec obs;
  obs.name = "obs";
  obs.shape = {4};
  obs.names = {"x", "y", "z", "angle"};
  obs.units = {"m", "m", "m", "rad"};
  obs.frame = "world";
  obs.rotation = "none";
  obs.description = "object position and yaw";
  FeatureSpec action;
  action.name = "action";
  action.shape = {2};
  action.names = {"slide_x", "slide_y"};
  action.units = {"m"};
  action.frame = "world";
  action.rotation = "none";
  action.description = "position targets";
  spec.features = {obs, action};
  spec.params = {{"friction", "uniform", 0.5, 1.0, "1", "sliding friction"},
                 {"mass", "uniform", 0.1, 0.4, "kg", "object mass"}};
  spec.tasks = {{"push", "push the cube to the target"}, {"lift", "lift the cube"}};
  spec.labels = {{0, "none", "no failure"}, {1, "dropped", "object fell"}, {2, "timeout", "time limit"}};
  spec.control_hz = 50;
  spec.embodiment = {{"robot_type", "fixture"},
                     {"joint_names", {"slide_x", "slide_y"}},
                     {"actuator_names", {"slide_x", "slide_y"}},
                     {"action_space", "absolute"},
                     {"gripper", "none"}};
  spec.generator = {{"scene_text", "<mujoco/>"}, {"config_text", "fixture"}};
  spec.storage = storage;
  return spec;
}

inline int64_t FixtureLength(int64_t e) { return 1 + (e * 7919) % 37; }
inline float FixtureObs(int64_t e, int64_t k, int64_t j) { return float(double(e) + double(k) * 0.001 + double(j) * 0.25); }
inline float FixtureAction(int64_t e, int64_t k, int64_t j) { return float(double(e) * 0.5 - double(k) * 0.01 - double(j)); }

struct FixtureEpisode {
  std::vector<float> obs, action, reward;
  std::vector<double> params;
  EpisodeView view;
};

inline void MakeFixtureEpisode(int64_t e, FixtureEpisode* out) {
  const int64_t L = FixtureLength(e);
  out->obs.resize(size_t(L) * 4);
  out->action.resize(size_t(L) * 2);
  out->reward.assign(size_t(L), 0.f);
  for (int64_t k = 0; k < L; ++k) {
    for (int64_t j = 0; j < 4; ++j) out->obs[size_t(k * 4 + j)] = FixtureObs(e, k, j);
    for (int64_t j = 0; j < 2; ++j) out->action[size_t(k * 2 + j)] = FixtureAction(e, k, j);
  }
  const bool success = e % 3 != 0;
  if (success) out->reward[size_t(L - 1)] = 1.f;
  out->params = {0.5 + double(e % 10) * 0.05, 0.1 + double(e % 7) * 0.04};
  EpisodeView& v = out->view;
  v = EpisodeView();
  v.length = L;
  v.seed = uint64_t(1000 + e);
  v.task_index = int32_t(e % 2);
  v.success = success;
  v.failure_label = success ? 0 : (e % 2 ? 1 : 2);
  v.terminal = success;
  v.params = out->params.data();
  v.features = {out->obs.data(), out->action.data()};
  v.reward = out->reward.data();
}

// Writes fixture episodes [first, first + n) into a new dataset at `dir` (chunks of 16 steps, shards
// of 64, 8 episodes per chunk); `edit`, where given, changes each episode before it is appended.
inline void WriteFixtureDataset(const std::string& dir, int64_t first, int64_t n,
                                const std::function<void(int64_t, FixtureEpisode*)>& edit = nullptr) {
  StorageSpec storage;
  storage.chunk_steps = 16;
  storage.shard_steps = 64;
  storage.chunk_episodes = 8;
  DatasetWriter w(dir, FixtureDatasetSpec(storage), OpenMode::kCreate);
  FixtureEpisode ep;
  for (int64_t e = first; e < first + n; ++e) {
    MakeFixtureEpisode(e, &ep);
    if (edit) edit(e, &ep);
    w.Append(ep.view);
  }
  w.Close();
}

}  // namespace s2r
