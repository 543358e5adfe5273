// s2r replay STORE --episode I [--out traj.csv]
// Re-simulates episode I of a sweep store from what the store recorded (its config text, scene
// text and seed) and compares it with the stored steps and parameters: exit 0 when they match bit
// for bit (the same build and backend), 1 with the largest differences otherwise. --out writes the
// replayed steps as CSV (time, each moving body's state, each actuator's action).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "host/cli.h"
#include "host/store/dataset.h"
#include "host/store/store_error.h"
#include "host/sweep/policy.h"
#include "host/sweep/sweep.h"

namespace s2r {
namespace {

struct ReplayArgs {
  std::string store;
  int64_t episode = -1;
  std::string out;
};

// largest |a - b| over two equal-length arrays, and whether they are bitwise equal
template <typename A, typename B>
double MaxDiff(const A& a, const B& b, bool* identical) {
  using T = typename A::value_type;
  static_assert(std::is_same_v<T, typename B::value_type>, "same element type");
  double d = 0;
  *identical = a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
  if (a.size() != b.size()) return HUGE_VAL;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(double(a[i]) - double(b[i])));
  return d;
}

// the stored rows in this build's precision (a float32 store read by a float64 build, or the other
// way round, converted value by value)
std::vector<Real> StoredRows(const DatasetReader& r, const char* feature, int64_t start, int64_t length) {
  const std::vector<double> v = r.StepValues(feature, start, length);
  return std::vector<Real>(v.begin(), v.end());
}

void WriteCsv(const std::string& path, const SweepConfig& c, const EpisodeRecord& e) {
  const Model& m = c.model;
  std::vector<std::string> bodies;
  for (int b = 1; b < m.nbody(); ++b) {
    if (m.body_dynamic[b]) bodies.push_back(m.body_name[b]);
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << "time";
    const char* parts[] = {"px", "py", "pz", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"};
    for (const std::string& b : bodies) {
      for (const char* p : parts) f << "," << b << "." << p;
    }
    for (const std::string& a : m.actuator_name) f << "," << a;
    f << "\n";
    const size_t ns = bodies.size() * 13, na = m.actuator_name.size();
    for (int64_t k = 0; k < e.length; ++k) {
      f << double(k) / m.control_hz;
      for (size_t i = 0; i < ns; ++i) f << "," << e.state[k * ns + i];
      for (size_t i = 0; i < na; ++i) f << "," << e.action[k * na + i];
      f << "\n";
    }
    if (!f) throw std::runtime_error(path + ": cannot write");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error(path + ": cannot write");
}

void RunReplay(const ReplayArgs& a) {
  DatasetReader r(a.store);
  const std::vector<uint64_t> seeds = r.EpisodeSeeds();
  auto it = std::find(seeds.begin(), seeds.end(), static_cast<uint64_t>(a.episode));
  if (a.episode < 0 || it == seeds.end()) {
    throw StoreError(a.store, "holds no episode " + std::to_string(a.episode) + " (" + std::to_string(seeds.size()) +
                                  " committed episodes)");
  }
  const int64_t row = it - seeds.begin();
  SweepConfig c = LoadSweepConfigFromStore(r);
  const nlohmann::json& sweep = r.root_attributes()["s2r"]["generator"]["sweep"];
  const uint64_t seed = sweep["seed"].get<uint64_t>();
  const int64_t start = r.EpisodeStarts()[row], length = r.EpisodeLengths()[row];
  // a policy's episode is replayed with the actions it recorded (the policy is not run again); an
  // expert's by its expert
  std::unique_ptr<RecordedActions> recorded;
  if (sweep.contains("policy") || sweep.contains("policy_net")) {
    const std::string who = sweep.contains("policy") ? "the policy '" + sweep["policy"].get<std::string>() + "'"
                                                     : "the policy network " + sweep["policy_net"].value("file", std::string());
    std::printf("episode %lld was acted by %s: replayed with its recorded actions\n", (long long)a.episode, who.c_str());
    recorded = std::make_unique<RecordedActions>(StoredRows(r, "action", start, length), c.model.nactuator());
  }
  // steps the expert labelled (steps/expert_action) are labelled again: a policy's (--policy-expert),
  // or the expert's own under action noise (its clean actions; the replay runs the expert, whose
  // noise is drawn again from the seed, and labels where the noise is)
  bool labels_recorded = false;
  for (const FeatureSpec& f : r.spec().features) labels_recorded = labels_recorded || f.name == "expert_action";
  EpisodeRecord e = ReplayEpisode(c, seed, a.episode, recorded.get(), recorded && labels_recorded);
  if (labels_recorded && e.expert.empty()) {
    throw StoreError(a.store, "holds steps/expert_action, but its generator record says neither --policy-expert nor "
                              "action noise labelled the steps: the store was modified outside s2r");
  }
  // a store another precision's build wrote cannot replay bit for bit here: say so before the figures
  const char* mine = sizeof(Real) == 4 ? "float32" : "float64";
  for (const FeatureSpec& f : r.spec().features) {
    if (f.name == "state" && DataTypeName(f.dtype) != std::string(mine)) {
      std::printf("the store was written by a %s build and this s2r computes in %s: expect differences of "
                  "rounding, not bit-identical rows\n",
                  DataTypeName(f.dtype), mine);
    }
  }

  // compare with the stored steps and parameters
  bool all = length == e.length;
  std::printf("episode %lld (row %lld): stored %lld steps, replayed %lld\n", (long long)a.episode, (long long)row,
              (long long)length, (long long)e.length);
  if (length == e.length) {
    std::vector<std::pair<const char*, const RowVector*>> features = {
        {"state", &e.state}, {"obs", &e.obs}, {"action", &e.action}};
    if (labels_recorded) features.push_back({"expert_action", &e.expert});
    // a policy's other inputs, where the store records them (store.policy_inputs)
    const std::vector<PolicyInputBlock> blocks = PolicyInputBlocks(c);
    std::vector<RowVector> inputs;
    if (!blocks.empty()) SplitPolicyInputs(c, e, &inputs);
    for (size_t k = 0; k < blocks.size(); ++k) features.push_back({blocks[k].name.c_str(), &inputs[k]});
    for (const auto& f : features) {
      bool same = false;
      double d = MaxDiff(StoredRows(r, f.first, start, length), *f.second, &same);
      all = all && same;
      std::printf("  steps/%-13s %s (largest difference %g)\n", f.first, same ? "identical" : "DIFFERS", d);
    }
  }
  std::vector<double> stored;
  for (const ParamSpec& p : r.spec().params) stored.push_back(r.EpisodeParam(p.name)[row]);
  bool same = false;
  double d = MaxDiff(stored, e.params, &same);
  all = all && same;
  std::printf("  params              %s (largest difference %g)\n", same ? "identical" : "DIFFERS", d);
  const bool labels = r.EpisodeSuccess()[row] == uint8_t(e.task.success) && r.EpisodeFailureLabels()[row] == e.task.label;
  all = all && labels;
  std::printf("  labels              %s\n", labels ? "identical" : "DIFFER");
  if (!a.out.empty()) WriteCsv(a.out, c, e);
  std::printf("%s\n", all ? "bit-identical" : "the replay differs from the store");
  std::fflush(stdout);
  if (!all) throw std::runtime_error("episode " + std::to_string(a.episode) + " does not replay bit for bit");
}

}  // namespace

void AddReplayCommand(CLI::App* app) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* cmd = app->add_subcommand("replay", "Re-simulate one episode of a sweep store and compare it with the store");
  cmd->add_option("store", args->store, "a store written by s2r sweep")->required();
  cmd->add_option("--episode", args->episode, "the episode index (episodes/seed)")->required();
  cmd->add_option("--out", args->out, "write the replayed steps as CSV");
  cmd->callback([args] { RunReplay(*args); });
}

}  // namespace s2r
