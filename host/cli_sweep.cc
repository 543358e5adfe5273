// s2r sweep CONFIG --out STORE [--episodes E] [--worlds N] [--seed S] [--backend cpu|cuda] [--threads T]
//                  [--shard K/N] [--resume] [--overwrite] [--summary-json FILE]
//                  [--episodes-from STORE [--select failed|success|near_miss|all|LABEL|NAME<VALUE,...]]
//                  [--policy COMMAND [--policy-timeout S] | --policy-net FILE.npz]
// Runs a sweep (host/sweep/sweep.h) into a dataset store. A progress line on stderr when stderr is
// a terminal; at the end a table of episodes, success rate, failures by kind, near misses and
// throughput (and the same numbers as JSON with --summary-json). --episodes-from reruns a hard set:
// the episodes of an earlier store the selection picks (by default its failures), the same worlds
// where the config and seed are the same (the seed defaults to that store's).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "host/cli.h"
#include "host/store/dataset.h"
#include "host/store/outcomes.h"
#include "host/store/store_error.h"
#include "host/sweep/policy_net.h"
#include "host/sweep/sweep.h"

namespace s2r {
namespace {

struct SweepArgs {
  std::string config;
  std::string out;
  int64_t episodes = -1;
  int worlds = 0;
  int64_t seed = -1;
  std::string backend = "cpu";
  int threads = 0;
  int steps_per_pass = 0;
  std::string shard = "0/1";
  bool resume = false;
  bool overwrite = false;
  std::string summary_json;
  std::string episodes_from;
  std::string select = "failed";
  std::string policy;
  double policy_timeout_s = 60;
  bool policy_expert = false;
  std::string policy_net;
};

nlohmann::json SummaryJson(const SweepSummary& s) {
  nlohmann::json failures = nlohmann::json::object();
  for (int l = 1; l < kNumTaskLabels; ++l) failures[TaskLabelNames()[l]] = s.failure_counts[l];
  return {{"episodes", s.episodes},
          {"episodes_in_store", s.episodes_total},
          {"episodes_planned", s.episodes_planned},
          {"steps", s.steps},
          {"success_rate", s.episodes > 0 ? nlohmann::json(double(s.successes) / double(s.episodes)) : nlohmann::json(nullptr)},
          {"successes", s.successes},
          {"failure_counts", failures},
          {"near_miss_count", s.near_misses},
          {"seconds", s.seconds},
          {"step_seconds", s.step_seconds},
          {"policy_seconds", s.policy_seconds},
          {"setup_seconds", s.setup_seconds},
          {"close_seconds", s.close_seconds},
          {"world_steps", s.world_steps},
          {"physics_seconds", s.physics_seconds >= 0 ? nlohmann::json(s.physics_seconds) : nlohmann::json(nullptr)},
          {"net_seconds", s.net_seconds >= 0 ? nlohmann::json(s.net_seconds) : nlohmann::json(nullptr)},
          {"env_steps_per_s", s.env_steps_per_s}};
}

void PrintTable(const SweepSummary& s) {
  std::printf("episodes        %lld written (%lld of %lld in the store)\n", (long long)s.episodes,
              (long long)s.episodes_total, (long long)s.episodes_planned);
  std::printf("success rate    %.3f (%lld)\n", s.episodes > 0 ? double(s.successes) / double(s.episodes) : 0.0,
              (long long)s.successes);
  std::printf("failures\n");
  for (int l = 1; l < kNumTaskLabels; ++l) {
    std::printf("  %-14s %8lld  %5.1f%%\n", TaskLabelNames()[l].c_str(), (long long)s.failure_counts[l],
                s.episodes > 0 ? 100.0 * double(s.failure_counts[l]) / double(s.episodes) : 0.0);
  }
  std::printf("near misses     %lld\n", (long long)s.near_misses);
  std::printf("steps           %lld control steps in %.1f s: %.0f env-steps/s", (long long)s.steps, s.seconds,
              s.env_steps_per_s);
  const double share = s.seconds > 0 ? 100 / s.seconds : 0.0;
  if (s.physics_seconds >= 0) {
    std::printf(" (physics %.0f%%", share * s.physics_seconds);
  } else {
    std::printf(" (world steps %.0f%%", share * s.step_seconds);
  }
  if (s.policy_seconds > 0) std::printf(", the policy %.0f%%", share * s.policy_seconds);
  if (s.net_seconds >= 0) std::printf(", the network %.0f%%", share * s.net_seconds);
  std::printf(" of the time)\n");
  std::fflush(stdout);
}

void RunSweepCommand(const SweepArgs& a) {
  SweepOptions o;
  o.worlds = a.worlds;
  o.threads = a.threads;
  o.steps_per_pass = a.steps_per_pass;
  o.policy = a.policy;
  o.policy_timeout_s = a.policy_timeout_s;
  o.policy_expert = a.policy_expert;
  o.episodes = a.episodes;
  o.seed = a.seed;
  o.resume = a.resume;
  o.overwrite = a.overwrite;
  if (a.resume && a.overwrite) throw std::runtime_error("--resume and --overwrite exclude each other");
  if (a.policy_expert && a.policy.empty() && a.policy_net.empty()) {
    throw std::runtime_error("--policy-expert labels a policy's steps with the expert's actions; there is no --policy or "
                             "--policy-net");
  }
  o.backend = ParseBackendKind(a.backend);
  int k = 0, n = 0;
  char tail = 0;
  if (std::sscanf(a.shard.c_str(), "%d/%d%c", &k, &n, &tail) != 2 || n < 1 || k < 0 || k >= n) {
    throw std::runtime_error("--shard must be K/N with 0 <= K < N, got '" + a.shard + "'");
  }
  o.shard = k;
  o.shards = n;
  if (!a.episodes_from.empty()) {
    const DatasetReader from = OpenDataset(a.episodes_from);
    o.episode_indices = SelectEpisodes(from, a.select);
    if (o.episode_indices.empty()) {
      throw StoreError(a.episodes_from, "--select " + a.select + ": selects no episode");
    }
    o.episodes_from_store = a.episodes_from;
    o.episodes_from_select = a.select;
    // the same worlds need the same seed: that store's, unless --seed says otherwise
    const nlohmann::json& gen = from.root_attributes()["s2r"]["generator"];
    if (o.seed < 0 && gen.contains("sweep") && gen["sweep"].contains("seed")) {
      o.seed = gen["sweep"]["seed"].get<int64_t>();
    }
  }
  if (::isatty(STDERR_FILENO)) {
    o.progress = [](const SweepSummary& s) {
      double rate = s.episodes > 0 ? double(s.successes) / double(s.episodes) : 0.0;
      double left = s.episodes > 0 && s.episodes_planned > s.episodes_total
                        ? s.seconds / double(s.episodes) * double(s.episodes_planned - s.episodes_total)
                        : 0.0;
      std::fprintf(stderr, "\r%lld/%lld episodes, %.0f env-steps/s, success %.3f, ETA %.0f s   ",
                   (long long)s.episodes_total, (long long)s.episodes_planned, s.env_steps_per_s, rate, left);
      std::fflush(stderr);
    };
  }
  SweepConfig config = LoadSweepConfig(a.config);
  if (!a.policy_net.empty()) o.policy_net = std::make_shared<PolicyNetFile>(LoadPolicyNet(a.policy_net, config));
  SweepSummary s = RunSweep(config, a.out, o);
  if (o.progress) std::fprintf(stderr, "\n");
  PrintTable(s);
  nlohmann::json summary = SummaryJson(s);
  if (!o.episode_indices.empty()) {
    std::printf("hard set        %zu episodes of %s (--select %s), seed %lld\n", o.episode_indices.size(),
                o.episodes_from_store.c_str(), o.episodes_from_select.c_str(),
                (long long)(o.seed >= 0 ? uint64_t(o.seed) : config.seed));
    summary["episodes_from"] = {{"store", o.episodes_from_store}, {"select", o.episodes_from_select},
                                {"count", o.episode_indices.size()}};
  }
  if (!a.summary_json.empty()) {
    const std::string tmp = a.summary_json + ".tmp";
    {
      std::ofstream f(tmp);
      f << summary.dump(2) << "\n";
      if (!f) throw std::runtime_error(a.summary_json + ": cannot write the summary");
    }
    if (std::rename(tmp.c_str(), a.summary_json.c_str()) != 0) {
      throw std::runtime_error(a.summary_json + ": cannot write the summary");
    }
  }
}

}  // namespace

void AddSweepCommand(CLI::App* app) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app->add_subcommand("sweep", "Run a task in many randomized worlds into a dataset store");
  cmd->add_option("config", args->config, "sweep config: a YAML file or builtin:push")->required();
  cmd->add_option("--out", args->out, "dataset store directory")->required();
  auto* episodes = cmd->add_option("--episodes", args->episodes, "episodes of the whole sweep (default: the config's)");
  cmd->add_option("--worlds", args->worlds, "parallel worlds (default: the config's)");
  cmd->add_option("--seed", args->seed, "sweep seed (default: the config's)");
  cmd->add_option("--backend", args->backend, "cpu, cuda, or cuda-emulation (the CUDA code on the CPU, for testing)");
  cmd->add_option("--threads", args->threads, "CPU threads (default: all)");
  cmd->add_option("--steps-per-pass", args->steps_per_pass,
                  "control steps a world takes between the host's passes (default 16 on the CPU, 4 on CUDA); the "
                  "stored episodes do not "
                  "depend on it")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--shard", args->shard, "K/N: run the episodes i with i mod N == K");
  cmd->add_flag("--resume", args->resume, "continue the store after its last committed episode");
  cmd->add_flag("--overwrite", args->overwrite, "replace an existing store (an s2r dataset only)");
  cmd->add_option("--summary-json", args->summary_json, "write the end-of-run numbers as JSON");
  auto* from = cmd->add_option("--episodes-from", args->episodes_from,
                               "rerun a hard set: the episodes of this earlier store that --select picks (the same "
                               "worlds for the same config; the seed defaults to that store's)")
                   ->excludes(episodes);
  cmd->add_option("--select", args->select,
                  "with --episodes-from: outcomes, any of failed (default), success, near_miss, all or failure "
                  "label names (stuck, timeout, ...), and conditions that must all hold, NAME<VALUE on a parameter "
                  "or metric (< <= > >= == !=); comma-separated, e.g. stuck,timeout,box_mass>1.5")
      ->needs(from);
  auto* policy = cmd->add_option("--policy", args->policy,
                                 "act with this command's answers instead of the task's expert: /bin/sh -c COMMAND, "
                                 "fed each control step's observations and joint positions (docs/sweep.md, "
                                 "python/s2r_policy.py), one control step per exchange; the episodes are labelled by "
                                 "the state checker");
  cmd->add_option("--policy-timeout", args->policy_timeout_s, "seconds the policy may take to answer a step (default 60)")
      ->check(CLI::PositiveNumber)
      ->needs(policy);
  cmd->add_flag("--policy-expert", args->policy_expert,
                "with --policy or --policy-net: label every step of the policy's episodes with the task's expert's "
                "action (what the scripted expert would do in that world now), recorded as steps/expert_action and "
                "sent to a --policy process: labels for DAgger-style training on the policy's own episodes "
                "(docs/sweep.md)");
  cmd->add_option("--policy-net", args->policy_net,
                  "act with this policy network instead of the task's expert: an .npz of torch-style layers "
                  "(layer0.weight, layer0.bias, ..., activation) evaluated inside each world's step, on the device "
                  "with CUDA (docs/sweep.md); the episodes are labelled by the state checker")
      ->excludes(policy);
  cmd->callback([args] { RunSweepCommand(*args); });
}

}  // namespace s2r
