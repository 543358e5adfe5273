// s2r compare BEFORE AFTER [--by NAME [--bins N]] [--select TERMS] [--max-broken K] [--json]
// Two datasets' episodes matched by seed (the episode index a sweep draws each episode's worlds
// from): the outcome of each in both, so that a change (an expert, the engine, a fit centred
// on) shows which failures it fixed and which successes it broke, episode by episode, not only
// how the rates moved. Also which randomized parameters differ between the matched episodes (none:
// the same worlds, so every change of outcome is the change's), and with --by the same per range
// of a parameter or metric of BEFORE. --select keeps the episodes BEFORE's selection picks (as `sweep
// --episodes-from`). The report starts with what differs between the two runs: the code revision,
// the sweep's seed, the scene and every key of the config. --max-broken K makes it a gate: exit 1
// when more than K episodes went from success to failure. Datasets of different tasks are refused.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "host/cli.h"
#include "host/store/dataset.h"
#include "host/store/outcomes.h"
#include "host/sweep/sweep.h"
#include "host/trajectory_io.h"

namespace s2r {
namespace {

struct CompareArgs {
  std::string before, after;
  std::vector<std::string> by;
  int bins = 5;
  int64_t max_broken = -1;  // < 0: no gate
  bool json = false;
  std::string select;  // BEFORE's episodes to compare (SelectionMask); empty: all
};

// A JSON document's leaves by path ("task.params.goal_x", "events[1].kind") as their dumped text.
void Flatten(const nlohmann::json& j, const std::string& path, std::map<std::string, std::string>* out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) Flatten(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
  } else if (j.is_array() && !j.empty()) {
    for (size_t i = 0; i < j.size(); ++i) Flatten(j[i], path + "[" + std::to_string(i) + "]", out);
  } else {
    (*out)[path] = j.is_string() ? j.get<std::string>() : j.dump();
  }
}

// What differs between the runs that wrote two datasets, from their generator records: the code
// revision, the sweep's seed, the policy that acted (sweep --policy; not set: the expert) and
// whether it was sent the expert's actions (--policy-expert), the
// checker that labelled the episodes, the scene (its text), and each key of the config as loaded (or its text, for a store without the
// parsed config). Keys absent on one side show as "(not set)".
nlohmann::json RunChanges(const DatasetReader& rb, const DatasetReader& ra) {
  const nlohmann::json& gb = rb.root_attributes()["s2r"]["generator"];
  const nlohmann::json& ga = ra.root_attributes()["s2r"]["generator"];
  std::map<std::string, std::string> b, a;
  const auto take = [](const nlohmann::json& g, std::map<std::string, std::string>* m) {
    for (const char* key : {"s2r_version", "git_revision", "scene_path"}) {
      if (g.contains(key)) Flatten(g[key], key, m);
    }
    if (g.contains("sweep") && g["sweep"].contains("seed")) Flatten(g["sweep"]["seed"], "seed", m);
    if (g.contains("sweep") && g["sweep"].contains("policy")) Flatten(g["sweep"]["policy"], "policy", m);
    if (g.contains("sweep") && g["sweep"].contains("policy_expert")) {  // the policy was sent the expert's actions
      Flatten(g["sweep"]["policy_expert"], "policy_expert", m);
    }
    if (g.contains("sweep") && g["sweep"].contains("policy_net") && g["sweep"]["policy_net"].is_object()) {
      const nlohmann::json& n = g["sweep"]["policy_net"];  // one entry: the file and what it holds
      std::string layers;
      for (const auto& w : n.value("layers", nlohmann::json::array())) layers += (layers.empty() ? "" : "-") + w.dump();
      (*m)["policy_net"] = n.value("file", std::string()) + " (" + layers + " " + n.value("activation", std::string()) +
                           ", sha256 " + n.value("sha256", std::string()).substr(0, 12) + ")";
    }
    const std::string checker = StoredChecker(g);  // what labelled the episodes
    if (!checker.empty()) (*m)["checker"] = checker;
    if (g.contains("scene_text")) (*m)["scene (its text)"] = g["scene_text"].dump();
    if (g.contains("config") && g["config"].is_object()) {
      Flatten(g["config"], "config", m);
    } else if (g.contains("config_text")) {
      (*m)["config (its text)"] = g["config_text"].dump();
    }
  };
  take(gb, &b);
  take(ga, &a);
  std::set<std::string> keys;
  for (const auto& [k, v] : b) keys.insert(k);
  for (const auto& [k, v] : a) keys.insert(k);
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& k : keys) {
    const auto ib = b.find(k), ia = a.find(k);
    const std::string vb = ib == b.end() ? "(not set)" : ib->second, va = ia == a.end() ? "(not set)" : ia->second;
    if (vb == va) continue;
    nlohmann::json change = {{"key", k}};
    if (k.find("(its text)") == std::string::npos) {
      change["before"] = vb;
      change["after"] = va;
    }
    out.push_back(change);
  }
  return out;
}

// The names of a dataset's tasks, sorted.
std::vector<std::string> TaskNames(const DatasetReader& r) {
  std::vector<std::string> names;
  for (const TaskSpec& t : r.spec().tasks) names.push_back(t.name);
  std::sort(names.begin(), names.end());
  return names;
}

// One dataset's episode table, the columns compare reads.
struct Episodes {
  std::vector<uint64_t> seed;
  std::vector<uint8_t> success;
  std::vector<std::string> outcome;
  explicit Episodes(const DatasetReader& r) : seed(r.EpisodeSeeds()), success(r.EpisodeSuccess()) {
    const std::vector<int32_t> labels = r.EpisodeFailureLabels();
    for (size_t e = 0; e < seed.size(); ++e) outcome.push_back(OutcomeName(r.spec(), success[e] != 0, labels[e]));
  }
};

nlohmann::json Compare(const CompareArgs& a) {
  using nlohmann::json;
  const DatasetReader rb = OpenDataset(a.before), ra = OpenDataset(a.after);
  if (TaskNames(rb) != TaskNames(ra)) {
    const auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (const std::string& n : v) s += (s.empty() ? "" : ", ") + n;
      return s.empty() ? std::string("none") : s;
    };
    throw InputError(a.before + " holds episodes of the task(s) " + list(TaskNames(rb)) + ", " + a.after + " of " +
                     list(TaskNames(ra)) + ": episodes of different tasks do not compare");
  }
  const Episodes eb(rb), ea(ra);
  const std::vector<uint8_t> chosen = a.select.empty() ? std::vector<uint8_t>() : SelectionMask(rb, a.select);
  std::unordered_map<uint64_t, size_t> in_after;
  for (size_t e = 0; e < ea.seed.size(); ++e) {
    if (!in_after.emplace(ea.seed[e], e).second) {
      throw InputError(a.after + ": holds the seed " + std::to_string(ea.seed[e]) + " twice: not one sweep's episodes");
    }
  }
  std::vector<std::pair<size_t, size_t>> matched;  // (before, after), in BEFORE's order
  std::set<uint64_t> seen;
  int64_t not_selected = 0;  // BEFORE's episodes --select leaves out
  for (size_t e = 0; e < eb.seed.size(); ++e) {
    if (!seen.insert(eb.seed[e]).second) {
      throw InputError(a.before + ": holds the seed " + std::to_string(eb.seed[e]) + " twice: not one sweep's episodes");
    }
    if (!chosen.empty() && !chosen[e]) {
      ++not_selected;
      continue;
    }
    auto it = in_after.find(eb.seed[e]);
    if (it != in_after.end()) matched.push_back({e, it->second});
  }
  if (matched.empty()) {
    if (!chosen.empty()) throw InputError(a.before + ": --select " + a.select + " picks no episode that " + a.after + " holds");
    throw InputError(a.before + " and " + a.after + " share no episode (no seed in both)");
  }
  const int64_t n = int64_t(matched.size());
  json out = {{"before", a.before}, {"after", a.after}, {"changes", RunChanges(rb, ra)}, {"matched", n},
              {"only_before", int64_t(eb.seed.size()) - not_selected - n}, {"only_after", 0}};
  int64_t only_after = 0;  // AFTER's episodes whose seed BEFORE lacks (not those --select left out)
  for (uint64_t s : ea.seed) only_after += seen.count(s) == 0;
  out["only_after"] = only_after;
  if (!chosen.empty()) out["select"] = {{"terms", a.select}, {"left_out", not_selected}};

  // outcomes: rates, the transition counts, fixed and broken
  int64_t ok_before = 0, ok_after = 0, fixed = 0, broken = 0, relabelled = 0;
  std::map<std::string, std::map<std::string, int64_t>> transitions;
  json broken_episodes = json::array();  // their seeds (episode indices), for s2r replay
  for (const auto& [b, f] : matched) {
    ok_before += eb.success[b];
    ok_after += ea.success[f];
    fixed += !eb.success[b] && ea.success[f];
    broken += eb.success[b] && !ea.success[f];
    if (eb.success[b] && !ea.success[f]) broken_episodes.push_back(eb.seed[b]);
    relabelled += !eb.success[b] && !ea.success[f] && eb.outcome[b] != ea.outcome[f];
    ++transitions[eb.outcome[b]][ea.outcome[f]];
  }
  out["success_rate"] = {{"before", double(ok_before) / double(n)}, {"after", double(ok_after) / double(n)}};
  out["fixed"] = fixed;
  out["broken"] = broken;
  out["broken_episodes"] = broken_episodes;
  out["failure_changed"] = relabelled;
  out["transitions"] = transitions;

  // the randomized parameters: equal in every matched episode, or how many differ
  json params = json::array();
  std::set<std::string> after_params;
  for (const ParamSpec& p : ra.spec().params) after_params.insert(p.name);
  for (const ParamSpec& p : rb.spec().params) {
    if (!after_params.count(p.name)) {
      params.push_back({{"name", p.name}, {"in", "before only"}});
      continue;
    }
    const std::vector<double> vb = rb.EpisodeParam(p.name), va = ra.EpisodeParam(p.name);
    int64_t differ = 0;
    for (const auto& [b, f] : matched) differ += vb[b] != va[f] && !(std::isnan(vb[b]) && std::isnan(va[f]));
    params.push_back({{"name", p.name}, {"differ", differ}});
    after_params.erase(p.name);
  }
  for (const std::string& name : after_params) params.push_back({{"name", name}, {"in", "after only"}});
  out["params"] = params;

  // per range of BEFORE's columns
  json by = json::array();
  for (const std::string& name : a.by) {
    const EpisodeColumn column = ReadEpisodeColumn(rb, name);
    std::vector<double> values;
    for (const auto& [b, f] : matched) values.push_back(column.values[b]);
    const std::vector<double> edges = QuantileEdges(values, a.bins);
    struct Bin {
      double lo = 0, hi = 0;
      int64_t episodes = 0, ok_before = 0, ok_after = 0, fixed = 0, broken = 0;
    };
    std::vector<Bin> bins(edges.size() + 1);
    int64_t not_a_number = 0;
    for (size_t k = 0; k < matched.size(); ++k) {
      const auto [b, f] = matched[k];
      if (std::isnan(values[k])) {
        ++not_a_number;
        continue;
      }
      Bin& bin = bins[BinOf(edges, values[k])];
      bin.lo = bin.episodes == 0 ? values[k] : std::min(bin.lo, values[k]);
      bin.hi = bin.episodes == 0 ? values[k] : std::max(bin.hi, values[k]);
      ++bin.episodes;
      bin.ok_before += eb.success[b];
      bin.ok_after += ea.success[f];
      bin.fixed += !eb.success[b] && ea.success[f];
      bin.broken += eb.success[b] && !ea.success[f];
    }
    json rows = json::array();
    for (const Bin& bin : bins) {
      if (bin.episodes == 0) continue;
      rows.push_back({{"low", bin.lo}, {"high", bin.hi}, {"episodes", bin.episodes},
                      {"success_rate_before", double(bin.ok_before) / double(bin.episodes)},
                      {"success_rate_after", double(bin.ok_after) / double(bin.episodes)},
                      {"fixed", bin.fixed}, {"broken", bin.broken}});
    }
    by.push_back({{"by", name}, {"kind", column.kind}, {"units", column.units}, {"bins", rows}});
    if (not_a_number > 0) by.back()["nan_episodes"] = not_a_number;  // in no bin
  }
  if (!a.by.empty()) out["by"] = by;
  return out;
}

void PrintCompare(const nlohmann::json& c) {
  std::printf("%s -> %s: %lld episodes matched by seed", c["before"].get<std::string>().c_str(),
              c["after"].get<std::string>().c_str(), (long long)c["matched"].get<int64_t>());
  if (c.contains("select")) {
    std::printf(" (--select %s: %lld of before's left out)", c["select"]["terms"].get<std::string>().c_str(),
                (long long)c["select"]["left_out"].get<int64_t>());
  }
  if (c["only_before"].get<int64_t>() > 0 || c["only_after"].get<int64_t>() > 0) {
    std::printf(" (%lld only before, %lld only after: left out)", (long long)c["only_before"].get<int64_t>(),
                (long long)c["only_after"].get<int64_t>());
  }
  const nlohmann::json& changes = c["changes"];
  if (changes.empty()) {
    std::printf("\n  runs: the same code, seed, policy, checker, scene and config");
  } else {
    std::printf("\n  runs differ in:");
    constexpr size_t kShown = 8;
    for (size_t i = 0; i < changes.size() && i < kShown; ++i) {
      const nlohmann::json& d = changes[i];
      std::printf("%s %s", i ? "," : "", d["key"].get<std::string>().c_str());
      if (d.contains("before")) {
        std::printf(" %s -> %s", d["before"].get<std::string>().c_str(), d["after"].get<std::string>().c_str());
      }
    }
    if (changes.size() > kShown) std::printf(" ... (%zu in all; --json lists them)", changes.size());
  }
  std::printf("\n  success rate %.4f -> %.4f\n", c["success_rate"]["before"].get<double>(),
              c["success_rate"]["after"].get<double>());
  std::printf("  fixed (failure -> success) %lld, broken (success -> failure) %lld, another failure %lld\n",
              (long long)c["fixed"].get<int64_t>(), (long long)c["broken"].get<int64_t>(),
              (long long)c["failure_changed"].get<int64_t>());
  const nlohmann::json& broke = c["broken_episodes"];
  if (!broke.empty()) {
    std::printf("  broken episodes:");
    for (size_t i = 0; i < broke.size() && i < 10; ++i) std::printf(" %llu", (unsigned long long)broke[i].get<uint64_t>());
    if (broke.size() > 10) std::printf(" ... (%zu in all; --json lists them)", broke.size());
    std::printf("  (s2r replay %s --episode %llu re-simulates one)\n", c["after"].get<std::string>().c_str(),
                (unsigned long long)broke[0].get<uint64_t>());
  }
  // the transition table: rows before, columns after, over every outcome either side has
  std::set<std::string> names;
  for (auto row = c["transitions"].begin(); row != c["transitions"].end(); ++row) {
    names.insert(row.key());
    for (auto col = row.value().begin(); col != row.value().end(); ++col) names.insert(col.key());
  }
  std::vector<std::string> order(names.begin(), names.end());
  std::stable_partition(order.begin(), order.end(), [](const std::string& s) { return s == "success"; });
  std::printf("  outcomes (rows: before, columns: after):\n    %-14s", "");
  for (const std::string& col : order) std::printf(" %12s", col.c_str());
  std::printf("\n");
  for (const std::string& row : order) {
    std::printf("    %-14s", row.c_str());
    for (const std::string& col : order) {
      const auto& t = c["transitions"];
      const int64_t v = t.contains(row) && t[row].contains(col) ? t[row][col].get<int64_t>() : 0;
      std::printf(" %12lld", (long long)v);
    }
    std::printf("\n");
  }
  std::vector<std::string> differ, one_side;
  int64_t equal = 0;
  for (const auto& p : c["params"]) {
    if (p.contains("in")) {
      one_side.push_back(p["name"].get<std::string>() + " (" + p["in"].get<std::string>() + ")");
    } else if (p["differ"].get<int64_t>() > 0) {
      differ.push_back(p["name"].get<std::string>() + " (" + std::to_string(p["differ"].get<int64_t>()) + ")");
    } else {
      ++equal;
    }
  }
  std::printf("  randomized parameters: %lld equal in every matched episode", (long long)equal);
  if (!differ.empty()) {
    std::printf("; differ (episodes): ");
    for (size_t i = 0; i < differ.size(); ++i) std::printf("%s%s", i ? ", " : "", differ[i].c_str());
  }
  if (!one_side.empty()) {
    std::printf("; in one store only: ");
    for (size_t i = 0; i < one_side.size(); ++i) std::printf("%s%s", i ? ", " : "", one_side[i].c_str());
  }
  std::printf("\n");
  if (!c.contains("by")) return;
  for (const auto& o : c["by"]) {
    std::printf("by %s (%s of before, unit %s):\n", o["by"].get<std::string>().c_str(),
                o["kind"].get<std::string>().c_str(), o["units"].get<std::string>().c_str());
    if (o.contains("nan_episodes")) {
      std::printf("  (%lld episodes whose value is NaN are in no bin)\n", (long long)o["nan_episodes"].get<int64_t>());
    }
    std::printf("  %-25s %9s %8s %8s %7s %7s\n", "range", "episodes", "before", "after", "fixed", "broken");
    for (const auto& b : o["bins"]) {
      char range[64];
      std::snprintf(range, sizeof range, "%.6g .. %.6g", b["low"].get<double>(), b["high"].get<double>());
      std::printf("  %-25s %9lld %8.3f %8.3f %7lld %7lld\n", range, (long long)b["episodes"].get<int64_t>(),
                  b["success_rate_before"].get<double>(), b["success_rate_after"].get<double>(),
                  (long long)b["fixed"].get<int64_t>(), (long long)b["broken"].get<int64_t>());
    }
  }
}

void RunCompare(const CompareArgs& a) {
  const nlohmann::json c = Compare(a);
  if (a.json) {
    std::printf("%s\n", c.dump(2).c_str());
  } else {
    PrintCompare(c);
  }
  std::fflush(stdout);
  const int64_t broken = c["broken"].get<int64_t>();
  if (a.max_broken >= 0 && broken > a.max_broken) {
    throw std::runtime_error(std::to_string(broken) + " episodes went from success to failure, more than --max-broken " +
                             std::to_string(a.max_broken));
  }
}

}  // namespace

void AddCompareCommand(CLI::App* app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app->add_subcommand(
      "compare",
      "Compare two datasets episode by episode (matched by seed): success rates, fixed and broken episodes, the "
      "table of outcomes before and after, which randomized parameters differ");
  cmd->add_option("before", args->before, "the dataset before the change (store or folder of shard stores)")->required();
  cmd->add_option("after", args->after, "the dataset after it")->required();
  auto* by = cmd->add_option("--by", args->by,
                             "also per range of a randomized parameter or episode metric of BEFORE, in bins of about "
                             "equal count (repeatable)");
  cmd->add_option("--bins", args->bins, "bins for --by (default 5)")->check(CLI::Range(1, 100))->needs(by);
  cmd->add_option("--select", args->select,
                  "compare only the episodes of BEFORE this selection picks (as sweep --episodes-from: failed, "
                  "success, near_miss, all, label names, NAME<VALUE conditions; comma-separated)");
  cmd->add_option("--max-broken", args->max_broken,
                  "a gate: exit 1 (after the report) when more than this many episodes went from success to failure")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->callback([args] { RunCompare(*args); });
}

}  // namespace s2r
