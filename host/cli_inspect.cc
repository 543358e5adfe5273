// s2r inspect STORE [--arrays] [--json] [--by NAME [--bins N]] [--select TERMS]
//   (s2r inspect --fields SCENE: cli_fields.cc)
// Looks inside a Zarr v3 directory store. With --arrays, every array under STORE is decoded and
// fingerprinted (SHA-256 of its contents as C-order little-endian bytes), so that a store written
// by s2r can be checked against numpy, zarr-python or tensorstore without moving the data.
// Without --arrays, an s2r dataset is summarised (episodes, steps, success rate, failure counts,
// features with units, parameter ranges: docs/dataset.md); any other store is listed. With --by,
// the episodes' outcomes (success rate, failure labels, near misses) per range of a randomized
// parameter or an episode metric: where in the randomization the failures are. With --select, the
// episodes a selection picks (host/store/outcomes.h; what `s2r sweep --episodes-from` would rerun):
// their count, outcomes and indices, or with --by their outcomes alone by the column.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/cli.h"
#include "host/store/dataset.h"
#include "host/store/metadata.h"
#include "host/store/outcomes.h"
#include "host/store/sha256.h"
#include "host/store/store_error.h"
#include "host/sweep/sweep.h"
#include "host/store/zarr_array.h"

namespace s2r {
namespace {

struct InspectArgs {
  std::string store;
  bool arrays = false;
  bool fields = false;
  bool json = false;
  std::vector<std::string> by;  // per-episode columns to break the outcomes down by
  int bins = 5;
  std::string select;  // a selection of episodes (SelectionMask); empty: all
};

// "bytes", "zstd", "sharding_indexed(bytes,blosc)".
std::vector<std::string> CodecNames(const std::vector<CodecConfig>& codecs) {
  std::vector<std::string> out;
  for (const CodecConfig& c : codecs) {
    std::string name = c.Name();
    if (c.kind == CodecKind::kShardingIndexed) {
      std::string inner;
      for (const std::string& n : CodecNames(c.codecs)) inner += (inner.empty() ? "" : ",") + n;
      name += "(" + inner + ")";
    }
    out.push_back(name);
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// SHA-256 of the decoded array, read one row of chunks at a time to bound memory.
std::string HashArray(const ZarrArray& array) {
  const ArrayMetadata& m = array.metadata();
  // Hashing reads every element: refuse what cannot finish (a sparse array of 2^60 elements).
  constexpr double kMaxHashBytes = double(uint64_t(1) << 40);
  if (double(array.NumElements()) * double(array.element_size()) > kMaxHashBytes) {
    throw StoreError(array.path(), "holds more than 1 TiB when decoded; too large to hash");
  }
  Sha256 hash;
  if (m.shape.empty()) {
    std::vector<uint8_t> all = array.ReadAllBytes();
    hash.Update(all.data(), all.size());
    return hash.HexFinal();
  }
  std::vector<int64_t> start(m.shape.size(), 0), count = m.shape;
  std::vector<uint8_t> slab;
  for (int64_t row = 0; row < m.shape[0]; row += m.chunk_shape[0]) {
    start[0] = row;
    count[0] = std::min(m.chunk_shape[0], m.shape[0] - row);
    int64_t elements = 1;
    for (int64_t c : count) elements *= c;
    slab.resize(size_t(elements) * array.element_size());
    array.ReadRegionBytes(start, count, slab.data(), slab.size());
    hash.Update(slab.data(), slab.size());
  }
  return hash.HexFinal();
}

// A stored config's section (its scalars are the YAML's text) with the scalars that are numbers as numbers.
nlohmann::json ConfigNumbers(const nlohmann::json& v) {
  if (v.is_object() || v.is_array()) {
    nlohmann::json out = v;
    for (auto it = out.begin(); it != out.end(); ++it) *it = ConfigNumbers(*it);
    return out;
  }
  if (!v.is_string()) return v;
  const std::string& t = v.get_ref<const std::string&>();
  char* end = nullptr;
  const double d = std::strtod(t.c_str(), &end);
  return !t.empty() && end == t.c_str() + t.size() && std::isfinite(d) ? nlohmann::json(d) : v;
}

// Where a store's policy departs from the expert's labels of its steps (steps/action against
// steps/expert_action, --policy-expert; or the expert's executed actions against its clean ones,
// under action noise): the mean |action - label| per actuator over all steps, over the successful
// episodes' steps and the failed ones', and per failure label; null where no steps
// count. Null for a store without labels. Read a block of steps at a time (episodes are contiguous
// and in order), so a large store is not loaded whole.
nlohmann::json ExpertAgreement(const DatasetReader& r, const std::vector<uint8_t>& success,
                               const std::vector<int32_t>& labels, const std::map<int32_t, std::string>& names) {
  using nlohmann::json;
  const DatasetSpec& spec = r.spec();
  const FeatureSpec *action = nullptr, *expert = nullptr;
  for (const FeatureSpec& f : spec.features) {
    if (f.name == "action") action = &f;
    if (f.name == "expert_action") expert = &f;
  }
  if (!action || !expert) return nullptr;
  if (action->shape != expert->shape) {
    throw StoreError(r.path() + "/steps/expert_action", "shape " + json(expert->shape).dump() + " is not steps/action's " +
                                                            json(action->shape).dump());
  }
  const size_t na = action->shape.empty() ? 1 : size_t(action->shape[0]);
  const std::vector<int64_t> starts = r.EpisodeStarts(), lengths = r.EpisodeLengths();
  struct Sum {
    std::vector<double> total;
    int64_t steps = 0;
  };
  std::map<std::string, Sum> sums;  // "all", "success", "failure", then failure label names
  std::vector<Sum*> into(starts.size() * 3, nullptr);  // each episode's three sums
  for (size_t k = 0; k < starts.size(); ++k) {
    const std::string label = success[k] ? "" : names.count(labels[k]) ? names.at(labels[k]) : "<not in taxonomy>";
    const std::string keys[3] = {"all", success[k] ? "success" : "failure", label};
    for (int j = 0; j < 3; ++j) {
      if (keys[j].empty()) continue;
      Sum& sum = sums[keys[j]];
      sum.total.resize(na, 0.0);
      sum.steps += lengths[k];
      into[k * 3 + size_t(j)] = &sum;
    }
  }
  constexpr int64_t kBlock = 1 << 16;  // steps read at a time
  size_t k = 0;                        // the episode that holds step t
  for (int64_t t0 = 0; t0 < r.steps(); t0 += kBlock) {
    const int64_t n = std::min(kBlock, r.steps() - t0);
    const std::vector<double> a = r.StepValues("action", t0, n), e = r.StepValues("expert_action", t0, n);
    for (int64_t t = t0; t < t0 + n; ++t) {
      while (k < starts.size() && t >= starts[k] + lengths[k]) ++k;
      if (k == starts.size()) break;
      for (int j = 0; j < 3; ++j) {
        Sum* sum = into[k * 3 + size_t(j)];
        if (!sum) continue;
        for (size_t i = 0; i < na; ++i) sum->total[i] += std::fabs(a[size_t(t - t0) * na + i] - e[size_t(t - t0) * na + i]);
      }
    }
  }
  auto mean = [&](const std::string& key) -> json {
    auto it = sums.find(key);
    if (it == sums.end() || it->second.steps == 0) return nullptr;
    json v = json::array();
    for (double x : it->second.total) v.push_back(x / double(it->second.steps));
    return v;
  };
  json out = {{"names", action->names}, {"units", action->units}, {"all", mean("all")},
              {"success", mean("success")}, {"failure", mean("failure")}};
  json by = json::object();
  for (const auto& [key, sum] : sums) {
    if (key != "all" && key != "success" && key != "failure") by[key] = mean(key);
  }
  out["by_failure_label"] = by;
  return out;
}

// The summary of an s2r dataset: what is in it (episodes, steps, features with units), how it
// went (success rate, failure labels, episode lengths) and what was randomized (ranges seen).
nlohmann::json DatasetSummary(const std::string& store) {
  using nlohmann::json;
  DatasetReader r(store);
  const DatasetSpec& spec = r.spec();
  json out;
  out["store"] = store;
  out["dataset"] = true;
  out["format"] = kDatasetFormat;
  out["format_version"] = kDatasetFormatVersion;
  out["episodes"] = r.episodes();
  out["steps"] = r.steps();
  out["control_hz"] = spec.control_hz;
  out["duration_s"] = double(r.steps()) / spec.control_hz;
  const json& gen = r.root_attributes()["s2r"]["generator"];
  out["generator"] = {{"s2r_version", gen.value("s2r_version", "")}, {"git_revision", gen.value("git_revision", "")}};
  // a sweep's: who acted (the task's expert or a policy command) and which checker labelled
  const std::string checker = StoredChecker(gen);
  if (!checker.empty()) {
    const bool policy = gen["sweep"].contains("policy") && gen["sweep"]["policy"].is_string();
    out["generator"]["policy"] = policy ? json(gen["sweep"]["policy"]) : json(nullptr);
    const bool net = gen["sweep"].contains("policy_net") && gen["sweep"]["policy_net"].is_object();
    out["generator"]["policy_net"] = net ? gen["sweep"]["policy_net"] : json(nullptr);
    out["generator"]["checker"] = checker;
    // the expert labelled the policy's steps (--policy-expert: steps/expert_action)
    out["generator"]["policy_expert"] = gen["sweep"].value("policy_expert", false);
    // the config's action noise on the executed actions (kernels/action_noise.h), as written
    const bool noise = gen.contains("config") && gen["config"].is_object() && gen["config"].contains("action_noise");
    out["generator"]["action_noise"] = noise ? ConfigNumbers(gen["config"]["action_noise"]) : json(nullptr);
  }
  out["embodiment"] = spec.embodiment;

  const std::vector<uint8_t> success = r.EpisodeSuccess();
  const std::vector<int32_t> labels = r.EpisodeFailureLabels();
  const std::vector<int32_t> tasks = r.EpisodeTaskIndices();
  const std::vector<int64_t> lengths = r.EpisodeLengths();
  int64_t successes = 0;
  for (uint8_t v : success) successes += v ? 1 : 0;
  out["success_rate"] = r.episodes() > 0 ? json(double(successes) / double(r.episodes())) : json(nullptr);
  std::map<int32_t, std::string> names;
  json failures = json::object();
  for (const LabelSpec& l : spec.labels) {
    names[l.code] = l.name;
    if (l.code != 0) failures[l.name] = 0;
  }
  int64_t unknown = 0;
  for (int32_t code : labels) {
    auto it = names.find(code);
    if (it == names.end()) {
      ++unknown;
    } else if (code != 0) {
      failures[it->second] = failures[it->second].get<int64_t>() + 1;
    }
  }
  if (unknown > 0) failures["<not in taxonomy>"] = unknown;
  out["failure_counts"] = failures;
  // a labelled policy store: where its actions depart from the expert's
  out["expert_agreement"] = ExpertAgreement(r, success, labels, names);
  if (!lengths.empty()) {
    int64_t lo = lengths[0], hi = lengths[0], sum = 0;
    for (int64_t v : lengths) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
    }
    out["episode_length"] = {{"min", lo}, {"max", hi}, {"mean", double(sum) / double(lengths.size())}};
  }
  json task_list = json::array();
  for (size_t t = 0; t < spec.tasks.size(); ++t) {
    int64_t n = 0;
    for (int32_t v : tasks) n += v == int32_t(t) ? 1 : 0;
    task_list.push_back({{"name", spec.tasks[t].name}, {"instruction", spec.tasks[t].instruction}, {"episodes", n}});
  }
  out["tasks"] = task_list;
  json feats = json::array();
  for (const FeatureSpec& f : spec.features) {
    feats.push_back({{"name", f.name},
                     {"dtype", DataTypeName(f.dtype)},
                     {"shape", f.shape},
                     {"units", f.units},
                     {"names", f.names},
                     {"frame", f.frame},
                     {"rotation", f.rotation}});
  }
  out["features"] = feats;
  json params = json::array();
  for (const ParamSpec& p : spec.params) {
    json entry = {{"name", p.name}, {"distribution", p.distribution}, {"low", p.low}, {"high", p.high},
                  {"units", p.units}};
    const std::vector<double> v = r.EpisodeParam(p.name);
    if (!v.empty()) {
      double lo = v[0], hi = v[0], sum = 0;
      for (double x : v) {
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        sum += x;
      }
      entry["observed"] = {{"min", lo}, {"max", hi}, {"mean", sum / double(v.size())}};
    }
    params.push_back(entry);
  }
  out["params"] = params;
  return out;
}

// The outcomes by one per-episode column (host/store/outcomes.h): per bin of about equal count its
// value range, episodes, success rate, near misses (where the store has the metric) and the count
// of each failure label that occurs in the store.
// Only the episodes `chosen` marks count (all where it is empty); the bins' edges are their values'.
nlohmann::json OutcomesBy(const DatasetReader& r, const std::string& name, int bins, const std::vector<uint8_t>& chosen) {
  using nlohmann::json;
  const EpisodeColumn column = ReadEpisodeColumn(r, name);
  std::vector<double> value;  // the chosen episodes' values; `at` maps them to the store's rows
  std::vector<size_t> at;
  for (size_t e = 0; e < column.values.size(); ++e) {
    if (!chosen.empty() && !chosen[e]) continue;
    value.push_back(column.values[e]);
    at.push_back(e);
  }
  const std::vector<uint8_t> success = r.EpisodeSuccess();
  const std::vector<int32_t> labels = r.EpisodeFailureLabels();
  const bool has_near_miss = HasEpisodeMetric(r, "near_miss");
  const std::vector<double> near = has_near_miss ? r.EpisodeMetric("near_miss") : std::vector<double>();
  const std::vector<double> edges = QuantileEdges(value, bins);
  std::vector<int32_t> occurring;  // failure codes present anywhere in the store, in code order
  for (size_t e = 0; e < labels.size(); ++e) {
    if (!success[e]) occurring.push_back(labels[e]);
  }
  std::sort(occurring.begin(), occurring.end());
  occurring.erase(std::unique(occurring.begin(), occurring.end()), occurring.end());

  const size_t nbin = edges.size() + 1;
  std::vector<int64_t> count(nbin, 0), successes(nbin, 0), near_misses(nbin, 0);
  std::vector<double> lo(nbin, 0), hi(nbin, 0);
  std::vector<std::map<int32_t, int64_t>> failures(nbin);
  int64_t not_a_number = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    const size_t e = at[i];
    if (std::isnan(value[i])) {
      ++not_a_number;
      continue;
    }
    const size_t b = BinOf(edges, value[i]);
    lo[b] = count[b] == 0 ? value[i] : std::min(lo[b], value[i]);
    hi[b] = count[b] == 0 ? value[i] : std::max(hi[b], value[i]);
    ++count[b];
    successes[b] += success[e] ? 1 : 0;
    if (!success[e]) ++failures[b][labels[e]];
    if (has_near_miss) near_misses[b] += near[e] != 0 ? 1 : 0;
  }
  json out = {{"by", name}, {"kind", column.kind}, {"units", column.units}, {"episodes", int64_t(value.size())},
              {"bins", json::array()}};
  if (not_a_number > 0) out["nan_episodes"] = not_a_number;  // in no bin
  for (size_t b = 0; b < nbin; ++b) {
    if (count[b] == 0) continue;
    json f = json::object();
    for (int32_t code : occurring) f[OutcomeName(r.spec(), false, code)] = failures[b][code];
    json bin = {{"low", lo[b]}, {"high", hi[b]}, {"episodes", count[b]},
                {"success_rate", double(successes[b]) / double(count[b])}, {"failure_counts", f}};
    if (has_near_miss) bin["near_misses"] = near_misses[b];
    out["bins"].push_back(bin);
  }
  return out;
}

// The episodes a selection picks: how many of the store's, their outcomes and their indices.
nlohmann::json SelectionSummary(const DatasetReader& r, const std::string& select, const std::vector<uint8_t>& chosen) {
  using nlohmann::json;
  const std::vector<uint8_t> success = r.EpisodeSuccess();
  const std::vector<int32_t> labels = r.EpisodeFailureLabels();
  const std::vector<uint64_t> seeds = r.EpisodeSeeds();
  const bool has_near_miss = HasEpisodeMetric(r, "near_miss");
  const std::vector<double> near = has_near_miss ? r.EpisodeMetric("near_miss") : std::vector<double>();
  int64_t picked = 0, successes = 0, near_misses = 0;
  std::map<int32_t, int64_t> failures;
  std::vector<int64_t> indices;
  for (size_t e = 0; e < chosen.size(); ++e) {
    if (!chosen[e]) continue;
    ++picked;
    successes += success[e] ? 1 : 0;
    if (!success[e]) ++failures[labels[e]];
    if (has_near_miss) near_misses += near[e] != 0 ? 1 : 0;
    indices.push_back(int64_t(seeds[e]));
  }
  std::sort(indices.begin(), indices.end());
  json f = json::object();
  for (const auto& [code, count] : failures) f[OutcomeName(r.spec(), false, code)] = count;
  json out = {{"store", r.path()},
              {"select", select},
              {"episodes_in_store", int64_t(chosen.size())},
              {"episodes", picked},
              {"success_rate", picked > 0 ? json(double(successes) / double(picked)) : json(nullptr)},
              {"failure_counts", f},
              {"episode_indices", indices}};
  if (has_near_miss) out["near_misses"] = near_misses;
  // the config the store's sweep ran (a path or builtin:NAME), for the rerun command
  const nlohmann::json& gen = r.root_attributes()["s2r"]["generator"];
  if (gen.is_object() && gen.contains("config_source") && gen["config_source"].is_string()) {
    out["config"] = gen["config_source"];
  }
  return out;
}

void PrintSelectionSummary(const nlohmann::json& s) {
  const int64_t picked = s["episodes"].get<int64_t>();
  std::printf("--select %s: %lld of %lld episodes\n", s["select"].get<std::string>().c_str(), (long long)picked,
              (long long)s["episodes_in_store"].get<int64_t>());
  if (picked == 0) return;
  std::printf("  success rate %.3f", s["success_rate"].get<double>());
  for (auto it = s["failure_counts"].begin(); it != s["failure_counts"].end(); ++it) {
    std::printf(", %s %lld", it.key().c_str(), (long long)it.value().get<int64_t>());
  }
  if (s.contains("near_misses")) std::printf(", near misses %lld", (long long)s["near_misses"].get<int64_t>());
  std::printf("\n  episodes");
  const nlohmann::json& idx = s["episode_indices"];
  constexpr size_t kShown = 20;
  for (size_t i = 0; i < idx.size() && i < kShown; ++i) std::printf(" %lld", (long long)idx[i].get<int64_t>());
  if (idx.size() > kShown) std::printf(" ... (all %zu with --json)", idx.size());
  std::printf("\n  rerun them: s2r sweep %s --out HARD --episodes-from %s --select '%s'\n",
              s.value("config", std::string("CONFIG")).c_str(), s["store"].get<std::string>().c_str(),
              s["select"].get<std::string>().c_str());
}

void PrintOutcomesBy(const nlohmann::json& o) {
  const nlohmann::json& bins = o["bins"];
  std::printf("outcomes by %s (%s, unit %s; %lld episodes in %zu bins of about equal count)\n",
              o["by"].get<std::string>().c_str(), o["kind"].get<std::string>().c_str(),
              o["units"].get<std::string>().c_str(), (long long)o["episodes"].get<int64_t>(), bins.size());
  if (o.contains("nan_episodes")) {
    std::printf("  (%lld episodes whose value is NaN are in no bin)\n", (long long)o["nan_episodes"].get<int64_t>());
  }
  if (bins.empty()) return;
  std::printf("  %-25s %9s %8s", "range", "episodes", "success");
  for (auto it = bins[0]["failure_counts"].begin(); it != bins[0]["failure_counts"].end(); ++it) {
    std::printf(" %12s", it.key().c_str());
  }
  if (bins[0].contains("near_misses")) std::printf(" %11s", "near_misses");
  std::printf("\n");
  for (const auto& b : bins) {
    char range[64];
    std::snprintf(range, sizeof range, "%.6g .. %.6g", b["low"].get<double>(), b["high"].get<double>());
    std::printf("  %-25s %9lld %8.3f", range, (long long)b["episodes"].get<int64_t>(), b["success_rate"].get<double>());
    for (auto it = b["failure_counts"].begin(); it != b["failure_counts"].end(); ++it) {
      std::printf(" %12lld", (long long)it.value().get<int64_t>());
    }
    if (b.contains("near_misses")) std::printf(" %11lld", (long long)b["near_misses"].get<int64_t>());
    std::printf("\n");
  }
}

std::string UnitsText(const nlohmann::json& units) {
  std::vector<std::string> u = units.get<std::vector<std::string>>();
  bool same = std::all_of(u.begin(), u.end(), [&](const std::string& x) { return x == u[0]; });
  return u.empty() ? "" : same ? u[0] : Join(u, ",");
}

void PrintDatasetSummary(const nlohmann::json& s) {
  std::printf("s2r dataset %s (format %d, written by s2r %s, %s)\n", s["store"].get<std::string>().c_str(),
              s["format_version"].get<int>(), s["generator"]["s2r_version"].get<std::string>().c_str(),
              s["generator"]["git_revision"].get<std::string>().c_str());
  std::printf("  episodes %lld, steps %lld (%.1f s at %g Hz)\n", (long long)s["episodes"].get<int64_t>(),
              (long long)s["steps"].get<int64_t>(), s["duration_s"].get<double>(), s["control_hz"].get<double>());
  if (s.contains("episode_length")) {
    std::printf("  episode length: min %lld, mean %.1f, max %lld steps\n",
                (long long)s["episode_length"]["min"].get<int64_t>(), s["episode_length"]["mean"].get<double>(),
                (long long)s["episode_length"]["max"].get<int64_t>());
  }
  if (s["generator"].contains("checker")) {
    const nlohmann::json& policy = s["generator"]["policy"];
    const nlohmann::json& net = s["generator"]["policy_net"];
    const std::string checker = s["generator"]["checker"].get<std::string>();
    std::string actor = "the task's expert";
    if (!policy.is_null()) actor = "policy '" + policy.get<std::string>() + "'";
    if (net.is_object()) {  // file, sha256, layers, activation
      std::string layers;
      for (const auto& w : net.value("layers", nlohmann::json::array())) {
        layers += (layers.empty() ? "" : "-") + std::to_string(w.get<int>());
      }
      actor = "the policy network " + net.value("file", std::string()) + " (" + layers + ", " +
              net.value("activation", std::string()) + ", sha256 " + net.value("sha256", std::string()).substr(0, 12) + ")";
    }
    std::printf("  acted by %s; labelled by the %s checker\n", actor.c_str(), checker == "phases" ? "phase" : checker.c_str());
    if (s["generator"].value("policy_expert", false)) {
      std::printf("  the task's expert's action recorded at every step (steps/expert_action)\n");
    }
    if (s["generator"].contains("action_noise") && !s["generator"]["action_noise"].is_null()) {
      const bool expert = s["generator"]["policy"].is_null() && s["generator"]["policy_net"].is_null();
      std::printf("  action noise on the executed actions: %s%s\n", s["generator"]["action_noise"].dump().c_str(),
                  expert ? "; the expert's clean actions in steps/expert_action" : "");
    }
  }
  if (s["success_rate"].is_null()) {
    std::printf("  success rate: - (no episodes)\n");
  } else {
    std::printf("  success rate: %.4f\n", s["success_rate"].get<double>());
  }
  std::printf("  failures:");
  if (s["failure_counts"].empty()) std::printf(" (no labels)");
  for (auto it = s["failure_counts"].begin(); it != s["failure_counts"].end(); ++it) {
    std::printf(" %s=%lld", it.key().c_str(), (long long)it.value().get<int64_t>());
  }
  const nlohmann::json& agree = s["expert_agreement"];
  if (agree.is_object()) {
    const bool expert = s["generator"].value("policy", nlohmann::json()).is_null() &&
                        s["generator"].value("policy_net", nlohmann::json()).is_null();
    std::printf("\n  %s, mean |action - expert_action| per step:",
                expert ? "the executed actions against the expert's clean ones (the action noise)"
                       : "the policy against the expert's labels");
    auto text = [](const nlohmann::json& v, size_t i) {
      if (v.is_null()) return std::string("-");
      char b[32];
      std::snprintf(b, sizeof b, "%.4g", v[i].get<double>());
      return std::string(b);
    };
    for (size_t i = 0; i < agree["names"].size(); ++i) {
      const nlohmann::json& units = agree["units"];
      const std::string unit = !units.is_array() || units.empty() ? ""
                               : units.size() > i ? units[i].get<std::string>()
                                                  : units[0].get<std::string>();
      std::printf("\n    %-16s [%s] all %s, success %s, failure %s", agree["names"][i].get<std::string>().c_str(),
                  unit.c_str(), text(agree["all"], i).c_str(), text(agree["success"], i).c_str(),
                  text(agree["failure"], i).c_str());
      std::string by;
      for (auto it = agree["by_failure_label"].begin(); it != agree["by_failure_label"].end(); ++it) {
        by += (by.empty() ? "" : ", ") + it.key() + " " + text(it.value(), i);
      }
      if (!by.empty()) std::printf(" (%s)", by.c_str());
    }
  }
  std::printf("\n  tasks:\n");
  for (const auto& t : s["tasks"]) {
    std::printf("    %-16s %8lld episodes  \"%s\"\n", t["name"].get<std::string>().c_str(),
                (long long)t["episodes"].get<int64_t>(), t["instruction"].get<std::string>().c_str());
  }
  std::printf("  features (per step):\n");
  for (const auto& f : s["features"]) {
    std::printf("    %-16s %-8s %-10s [%s] frame=%s rotation=%s\n", f["name"].get<std::string>().c_str(),
                f["dtype"].get<std::string>().c_str(), f["shape"].dump().c_str(), UnitsText(f["units"]).c_str(),
                f["frame"].get<std::string>().c_str(), f["rotation"].get<std::string>().c_str());
  }
  std::printf("  randomized parameters:\n");
  if (s["params"].empty()) std::printf("    (none)\n");
  for (const auto& p : s["params"]) {
    std::printf("    %-16s %s [%g, %g] %s", p["name"].get<std::string>().c_str(),
                p["distribution"].get<std::string>().c_str(), p["low"].get<double>(), p["high"].get<double>(),
                p["units"].get<std::string>().c_str());
    if (p.contains("observed")) {
      std::printf("  observed [%g, %g] mean %g", p["observed"]["min"].get<double>(), p["observed"]["max"].get<double>(),
                  p["observed"]["mean"].get<double>());
    }
    std::printf("\n");
  }
}

void RunInspect(const InspectArgs& args) {
  if (args.fields) {
    RunInspectFields(args.store, args.json);
    return;
  }
  if (!args.by.empty() || !args.select.empty()) {
    const DatasetReader r = OpenDataset(args.store);
    const std::vector<uint8_t> chosen = args.select.empty() ? std::vector<uint8_t>() : SelectionMask(r, args.select);
    nlohmann::json out = {{"store", args.store}};
    if (!args.select.empty()) out["selection"] = SelectionSummary(r, args.select, chosen);
    if (!args.by.empty()) {
      out["outcomes_by"] = nlohmann::json::array();
      for (const std::string& column : args.by) out["outcomes_by"].push_back(OutcomesBy(r, column, args.bins, chosen));
    }
    if (args.json) {
      std::printf("%s\n", out.dump(2).c_str());
    } else {
      if (out.contains("selection")) PrintSelectionSummary(out["selection"]);
      if (out.contains("outcomes_by")) {
        for (const auto& o : out["outcomes_by"]) PrintOutcomesBy(o);
      }
    }
    std::fflush(stdout);
    return;
  }
  if (!args.arrays) {
    if (DatasetReader::IsDataset(args.store) || DatasetReader::IsDatasetFolder(args.store)) {
      nlohmann::json s = DatasetSummary(args.store);
      if (args.json) {
        std::printf("%s\n", s.dump(2).c_str());
      } else {
        PrintDatasetSummary(s);
      }
      std::fflush(stdout);
      return;
    }
    // Any other Zarr v3 store: the hierarchy.
    std::vector<ZarrNode> nodes = ListNodes(args.store);
    if (args.json) {
      nlohmann::json out = {{"store", args.store}, {"dataset", false}, {"nodes", nlohmann::json::array()}};
      for (const ZarrNode& n : nodes) out["nodes"].push_back({{"path", n.path}, {"array", n.is_array}});
      std::printf("%s\n", out.dump(2).c_str());
    } else {
      std::printf("not an s2r dataset; its nodes (use --arrays for contents):\n");
      for (const ZarrNode& n : nodes) {
        std::printf("%-5s  %s\n", n.is_array ? "array" : "group", n.path.empty() ? "/" : n.path.c_str());
      }
    }
    return;
  }
  std::vector<ZarrNode> nodes = ListNodes(args.store);
  nlohmann::json report = {{"store", args.store}, {"arrays", nlohmann::json::array()}};
  int failures = 0;
  for (const ZarrNode& n : nodes) {
    if (!n.is_array) continue;
    const std::string path = n.path.empty() ? args.store : args.store + "/" + n.path;
    nlohmann::json entry = {{"path", n.path}};
    try {
      ZarrArray array = ZarrArray::Open(path);
      const ArrayMetadata& m = array.metadata();
      entry["shape"] = m.shape;
      entry["chunk_shape"] = m.chunk_shape;
      if (m.IsSharded()) entry["inner_chunk_shape"] = m.codecs[0].chunk_shape;
      entry["dtype"] = DataTypeName(m.data_type);
      entry["fill_value"] = FillValueToJson(m.fill_value, m.data_type);
      entry["codecs"] = CodecNames(m.codecs);
      entry["sha256"] = HashArray(array);
    } catch (const StoreError& e) {
      entry["error"] = e.what();
      ++failures;
    }
    if (args.json) {
      report["arrays"].push_back(entry);
    } else if (entry.contains("error")) {
      std::printf("%s  ERROR %s\n", n.path.empty() ? "/" : n.path.c_str(), entry["error"].get<std::string>().c_str());
    } else {
      std::printf("%s  shape=%s dtype=%s codecs=%s sha256=%s\n", n.path.empty() ? "/" : n.path.c_str(),
                  entry["shape"].dump().c_str(), entry["dtype"].get<std::string>().c_str(),
                  Join(entry["codecs"].get<std::vector<std::string>>(), ",").c_str(),
                  entry["sha256"].get<std::string>().c_str());
    }
  }
  if (args.json) std::printf("%s\n", report.dump(2).c_str());
  std::fflush(stdout);
  if (failures > 0) {
    throw StoreError(args.store, std::to_string(failures) + " array(s) could not be read (see above)");
  }
}

}  // namespace

void AddInspectCommand(CLI::App* app) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app->add_subcommand(
      "inspect",
      "Summarise an s2r dataset, list any Zarr v3 store's arrays with content hashes, or (--fields) list a "
      "scene's randomizable parameters");
  cmd->add_option("store", args->store, "store directory (with --fields: a scene, MJCF file or builtin:<name>)")
      ->required();
  auto* arrays = cmd->add_flag("--arrays", args->arrays, "decode every array and print shape, dtype, codecs and sha256");
  auto* fields = cmd->add_flag("--fields", args->fields,
                "the argument is a scene: list every per-world parameter (address, shape, unit, nominal value, "
                "valid values) and the scene options")
      ->excludes(arrays);
  auto* by = cmd->add_option("--by", args->by,
                             "break a dataset's outcomes (success rate, failure labels, near misses) down by a "
                             "randomized parameter or an episode metric, in bins of about equal count (repeatable)")
                 ->excludes(arrays)
                 ->excludes(fields);
  cmd->add_option("--bins", args->bins, "bins for --by (default 5; a column with this many values or fewer: one per value)")
      ->check(CLI::Range(1, 100))
      ->needs(by);
  cmd->add_option("--select", args->select,
                  "the episodes a selection picks (as sweep --episodes-from would rerun them): outcomes (all, failed, "
                  "success, near_miss, label names) and conditions (NAME<VALUE on a parameter or metric; < <= > >= == "
                  "!=), comma-separated; with --by, the breakdown of those episodes")
      ->excludes(arrays)
      ->excludes(fields);
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->callback([args] { RunInspect(*args); });
}

}  // namespace s2r
