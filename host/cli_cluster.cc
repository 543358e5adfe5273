// Sweeps across machines (docs/cluster.md):
//   s2r launch slurm CONFIG --out DIR --shards N [--partition P] [--gpus-per-shard G] [--time T]
//                    [--account A] [--sbatch-arg ARG]... [--container IMAGE] [--threads T] [--dry-run]
//                    [--episodes-from STORE [--select TERMS]] [--policy COMMAND | --policy-net FILE] [--policy-expert]
//   s2r status DIR [--json]
//   s2r merge DIR | STORE... --out STORE [--resume]
// launch writes one sbatch script (a job array of `s2r sweep --shard K/N --resume` tasks), saves it
// in DIR with a copy of the config and the s2r version, submits it and prints the job id; status
// says per shard how far it has got (and what Slurm says of its task); merge turns the shards into
// one store.
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/cli.h"
#include "host/cluster/shards.h"
#include "host/store/dataset.h"
#include "host/store/outcomes.h"
#include "host/store/store_error.h"
#include "host/sweep/policy_net.h"
#include "host/sweep/sweep_config.h"
#include "host/version.h"

namespace s2r {
namespace fs = std::filesystem;
namespace {

using json = nlohmann::json;

// a word for a bash script, single-quoted
std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Captured {
  int exit_code = -1;
  std::string output;
};

Captured Capture(const std::string& command) {
  Captured r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string SelfPath() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("s2r") : p.string();
}

void WriteFileAtomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
  }
  fs::rename(tmp, path);
}

// --- launch ------------------------------------------------------------------------------------

struct LaunchArgs {
  std::string scheduler;
  std::string config;
  std::string out;
  int shards = 0;
  std::string partition, time, account, container;
  int gpus_per_shard = 0;
  int threads = 0;
  std::vector<std::string> sbatch_args;
  bool dry_run = false;
  std::string episodes_from;  // a hard set (docs/sweep.md): this store's episodes that `select` picks
  std::string select = "failed";
  std::string policy;  // sweep --policy: each task's sweep acts with this command (docs/sweep.md)
  double policy_timeout_s = 60;
  bool policy_expert = false;  // sweep --policy-expert
  std::string policy_net;  // sweep --policy-net: each task's sweep acts with this network (an absolute path)
};

std::string SbatchScript(const LaunchArgs& a, const std::string& config_path, const std::string& from_path,
                         const fs::path& dir) {
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# written by s2r " << S2rVersion() << " (" << S2rGitRevision() << ") `s2r launch slurm`: one array task per shard;\n"
    << "# a requeued task resumes its shard after the last committed episode.\n"
    << "#SBATCH --job-name=s2r-sweep\n"
    << "#SBATCH --array=0-" << a.shards - 1 << "\n"
    << "#SBATCH --requeue\n"
    << "#SBATCH --ntasks=1\n"
    << "#SBATCH --output=" << (dir / "logs" / "shard-%a.out").string() << "\n";
  if (a.threads > 0) s << "#SBATCH --cpus-per-task=" << a.threads << "\n";
  if (!a.partition.empty()) s << "#SBATCH --partition=" << a.partition << "\n";
  if (a.gpus_per_shard > 0) s << "#SBATCH --gpus-per-task=" << a.gpus_per_shard << "\n";
  if (!a.time.empty()) s << "#SBATCH --time=" << a.time << "\n";
  if (!a.account.empty()) s << "#SBATCH --account=" << a.account << "\n";
  for (const std::string& extra : a.sbatch_args) s << "#SBATCH " << extra << "\n";
  s << "set -euo pipefail\n"
    << "K=${SLURM_ARRAY_TASK_ID}\n";
  std::ostringstream sweep;
  sweep << "sweep " << ShellQuote(config_path) << " --shard \"$K/" << a.shards << "\" --out "
        << ShellQuote((dir / "shard-").string()) << "\"$K.zarr\" --resume";
  if (a.threads > 0) sweep << " --threads " << a.threads;
  if (!from_path.empty()) sweep << " --episodes-from " << ShellQuote(from_path) << " --select " << ShellQuote(a.select);
  if (!a.policy.empty()) {
    char timeout[32];
    std::snprintf(timeout, sizeof timeout, "%g", a.policy_timeout_s);
    sweep << " --policy " << ShellQuote(a.policy) << " --policy-timeout " << timeout;
  }
  if (!a.policy_net.empty()) sweep << " --policy-net " << ShellQuote(a.policy_net);
  if (a.policy_expert) sweep << " --policy-expert";
  if (a.container.empty()) {
    s << "exec " << ShellQuote(SelfPath()) << " " << sweep.str() << "\n";
  } else {
    // Pyxis/Enroot: the image's s2r, with the sweep folder and the config's folder mounted
    const std::string cfg_dir = fs::path(config_path).parent_path().string();
    std::string mounts = dir.string() + ":" + dir.string();
    if (cfg_dir != dir.string()) mounts += "," + cfg_dir + ":" + cfg_dir;  // a builtin config lives in DIR
    if (!from_path.empty()) mounts += "," + from_path + ":" + from_path;  // the hard set's source store
    if (!a.policy_net.empty()) mounts += "," + a.policy_net + ":" + a.policy_net;  // the policy network's file
    s << "exec srun --container-image=" << ShellQuote(a.container) << " --container-mounts=" << ShellQuote(mounts)
      << " s2r " << sweep.str() << "\n";
  }
  return s.str();
}

void RunLaunch(const LaunchArgs& a) {
  if (a.scheduler != "slurm") throw std::runtime_error("launch: the scheduler s2r launches on is slurm");
  if (a.shards < 1) throw std::runtime_error("--shards: must be >= 1");
  if (a.policy_expert && a.policy.empty() && a.policy_net.empty()) {
    throw std::runtime_error("--policy-expert labels a policy's steps with the expert's actions; there is no --policy or "
                             "--policy-net");
  }
  LaunchArgs args = a;
  const SweepConfig c = LoadSweepConfig(a.config);  // a bad config fails here, before anything is written
  // a policy network: read and checked against the task here, run by every task from where it is
  PolicyNetFile net;
  if (!a.policy_net.empty()) {
    args.policy_net = fs::absolute(a.policy_net).lexically_normal().string();
    net = LoadPolicyNet(args.policy_net, c);
  }
  const fs::path dir = fs::absolute(a.out);
  // the config as the tasks will read it: builtin configs are written out, files run where they are
  std::string config_path;
  if (a.config.rfind("builtin:", 0) == 0) {
    config_path = (dir / "config.yaml").string();
  } else {
    config_path = fs::absolute(a.config).string();
  }
  if (fs::exists(dir / "launch.json")) {
    std::ifstream in(dir / "launch.json");
    json prev = json::parse(in, nullptr, false);
    if (!prev.is_discarded() && prev.value("config_text", std::string()) != c.text) {
      throw std::runtime_error((dir / "launch.json").string() +
                               ": this folder holds another sweep's launch; use another --out");
    }
  }
  // a hard set: the source store and its selection checked here, before anything is submitted
  std::string from_path;
  int64_t episodes = c.episodes;
  if (!a.episodes_from.empty()) {
    from_path = fs::absolute(a.episodes_from).lexically_normal().string();
    const std::vector<int64_t> picked = SelectEpisodes(OpenDataset(from_path), a.select);
    if (picked.empty()) throw StoreError(from_path, "--select " + a.select + ": selects no episode");
    episodes = static_cast<int64_t>(picked.size());
  }
  const std::string script = SbatchScript(args, config_path, from_path, dir);
  if (a.dry_run) {
    std::fputs(script.c_str(), stdout);
    return;
  }
  fs::create_directories(dir / "logs");
  if (a.config.rfind("builtin:", 0) == 0) WriteFileAtomically(dir / "config.yaml", c.text);
  WriteFileAtomically(dir / "config.copy.yaml", c.text);
  WriteFileAtomically(dir / "sweep.sbatch", script);
  const Captured r = Capture("sbatch --parsable " + ShellQuote((dir / "sweep.sbatch").string()));
  if (r.exit_code == 127 || r.output.find("not found") != std::string::npos) {
    throw std::runtime_error("sbatch is not available here (is this a Slurm login node?); the script is in " +
                             (dir / "sweep.sbatch").string() + " (--dry-run prints it without submitting)");
  }
  if (r.exit_code != 0) throw std::runtime_error("sbatch refused the job: " + Trim(r.output));
  std::string job = Trim(r.output);
  if (job.find(';') != std::string::npos) job = job.substr(0, job.find(';'));  // "jobid;cluster"
  if (job.empty() || job.find_first_not_of("0123456789") != std::string::npos) {
    throw std::runtime_error("sbatch answered '" + Trim(r.output) + "', not a job id");
  }
  json launch = {{"s2r_version", S2rVersion()},
                       {"git_revision", S2rGitRevision()},
                       {"scheduler", "slurm"},
                       {"job_id", job},
                       {"config", config_path},
                       {"config_text", c.text},
                       {"shards", a.shards},
                       {"episodes", episodes},
                       {"seed", c.seed},
                       {"submitted_unix", static_cast<int64_t>(std::time(nullptr))}};
  if (!from_path.empty()) launch["episodes_from"] = {{"store", from_path}, {"select", a.select}};
  if (!a.policy.empty()) launch["policy"] = a.policy;
  if (a.policy_expert) launch["policy_expert"] = true;
  if (!a.policy_net.empty()) launch["policy_net"] = net.Describe();
  WriteFileAtomically(dir / "launch.json", launch.dump(2) + "\n");
  std::printf("%s\n", job.c_str());
  std::fprintf(stderr, "submitted job %s: %d shards of %s into %s (s2r status %s)\n", job.c_str(), a.shards,
               a.config.c_str(), dir.c_str(), dir.c_str());
}

// --- status ------------------------------------------------------------------------------------

// Slurm's word on each array task of `job`, by task index: sacct, then squeue; empty when neither
// can tell.
std::map<int, std::string> SlurmStates(const std::string& job, int shards) {
  std::map<int, std::string> states;
  auto parse = [&](const std::string& text, char sep) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      const size_t bar = line.find(sep);
      if (bar == std::string::npos) continue;
      const std::string id = Trim(line.substr(0, bar)), state = Trim(line.substr(bar + 1));
      const size_t us = id.find('_');
      if (us == std::string::npos || id.substr(0, us) != job) continue;
      std::string tasks = id.substr(us + 1);
      std::string word = state.substr(0, state.find(' '));
      if (!tasks.empty() && tasks.front() == '[') {  // a pending range: [0-3] or [1,3-4%2]
        tasks = tasks.substr(1, tasks.find_first_of("]%") - 1);
        std::istringstream parts(tasks);
        for (std::string part; std::getline(parts, part, ',');) {
          const size_t dash = part.find('-');
          const int lo = std::atoi(part.substr(0, dash).c_str());
          const int hi = dash == std::string::npos ? lo : std::atoi(part.substr(dash + 1).c_str());
          for (int k = lo; k <= hi && k < shards; ++k) states[k] = word;
        }
      } else if (tasks.find_first_not_of("0123456789") == std::string::npos && !tasks.empty()) {
        states[std::atoi(tasks.c_str())] = word;  // the latest line wins (a requeued task's last state)
      }
    }
  };
  const Captured sacct = Capture("sacct -n -X -P -j " + job + " -o JobID,State");
  if (sacct.exit_code == 0) parse(sacct.output, '|');
  const Captured squeue = Capture("squeue -h -r -j " + job + " -o '%i|%T'");
  if (squeue.exit_code == 0) parse(squeue.output, '|');  // what is queued or running now is the freshest word
  return states;
}

int RunStatus(const std::string& dir, bool as_json) {
  json launch;
  if (fs::exists(fs::path(dir) / "launch.json")) {
    std::ifstream in(fs::path(dir) / "launch.json");
    launch = json::parse(in, nullptr, false);
    if (launch.is_discarded()) throw std::runtime_error(dir + "/launch.json: malformed JSON");
  }
  ShardSet set;
  // no store yet is a state (the tasks are queued); a store that cannot be read is an error
  const bool any_store = !launch.is_null() ? DatasetReader::IsDatasetFolder(dir) : true;
  if (any_store) set = OpenShards({dir});
  if (!any_store) {
    set.shard_count = launch.value("shards", 0);
    set.episodes = launch.value("episodes", int64_t(0));
    for (int k = 0; k < set.shard_count; ++k) set.missing.push_back(k);
  } else if (!launch.is_null() && launch.value("shards", set.shard_count) != set.shard_count) {
    throw std::runtime_error(dir + ": the stores are shards of " + std::to_string(set.shard_count) +
                             ", the launch asked for " + std::to_string(launch.value("shards", 0)));
  }
  const std::string job = launch.is_null() ? "" : launch.value("job_id", std::string());
  const std::map<int, std::string> slurm = job.empty() ? std::map<int, std::string>{} : SlurmStates(job, set.shard_count);
  json rows = json::array();
  int64_t done = 0;
  for (int k = 0; k < set.shard_count; ++k) {
    int64_t expected = set.episodes > k ? (set.episodes - k + set.shard_count - 1) / set.shard_count : 0, have = 0;
    std::string path;
    for (const ShardInfo& s : set.shards) {
      if (s.shard == k) {
        have = s.episodes_committed;
        path = s.path;
      }
    }
    done += have;
    auto it = slurm.find(k);
    rows.push_back({{"shard", k},
                    {"episodes", have},
                    {"expected", expected},
                    {"store", path.empty() ? json(nullptr) : json(path)},
                    {"slurm", it == slurm.end() ? json(nullptr) : json(it->second)}});
  }
  const bool complete = set.complete() && set.shard_count > 0;
  if (as_json) {
    const json out = {{"dir", dir},           {"job_id", job.empty() ? json(nullptr) : json(job)},
                      {"shards", rows},       {"episodes", done},
                      {"expected", set.episodes}, {"complete", complete}};
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("sweep in %s%s: %d shards, %lld of %lld episodes (%.1f%%)%s\n", dir.c_str(),
                job.empty() ? "" : (", Slurm job " + job).c_str(), set.shard_count, (long long)done,
                (long long)set.episodes, set.episodes > 0 ? 100.0 * double(done) / double(set.episodes) : 0.0,
                complete ? ", complete" : "");
    for (const json& r : rows) {
      std::string note = r["store"].is_null() ? "no store yet" : "";
      if (!r["slurm"].is_null()) note += (note.empty() ? "" : ", ") + std::string("Slurm: ") + r["slurm"].get<std::string>();
      std::printf("  shard %3d  %8lld / %-8lld %s\n", r["shard"].get<int>(), (long long)r["episodes"].get<int64_t>(),
                  (long long)r["expected"].get<int64_t>(), note.c_str());
    }
  }
  return complete ? 0 : 1;
}

// --- merge -------------------------------------------------------------------------------------

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string out;
  bool resume = false;
};

void RunMerge(const MergeArgs& a) {
  const ShardSet set = OpenShards(a.inputs);
  MergeOptions o;
  o.resume = a.resume;
  const bool tty = isatty(fileno(stderr)) != 0;
  const auto t0 = std::chrono::steady_clock::now();
  if (tty) {
    o.progress = [](int64_t done, int64_t total) {
      std::fprintf(stderr, "\rmerge: %lld / %lld episodes", (long long)done, (long long)total);
    };
  }
  MergeShards(set, a.out, o);
  if (tty) std::fputc('\n', stderr);
  std::printf("merged %d shards, %lld episodes into %s in %.1f s\n", set.shard_count, (long long)set.episodes,
              a.out.c_str(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace

void AddClusterCommands(CLI::App* app) {
  auto launch = std::make_shared<LaunchArgs>();
  CLI::App* cmd = app->add_subcommand("launch", "Launch a sweep as shards on a cluster scheduler (Slurm job array)");
  cmd->add_option("scheduler", launch->scheduler, "slurm")->required()->check(CLI::IsMember({"slurm"}));
  cmd->add_option("config", launch->config, "sweep config (YAML) or builtin:<name>")->required();
  cmd->add_option("--out", launch->out, "folder for the script, logs and shard stores")->required();
  cmd->add_option("--shards", launch->shards, "number of shards (array tasks)")->required()->check(CLI::Range(1, 100000));
  cmd->add_option("--partition", launch->partition, "Slurm partition");
  cmd->add_option("--gpus-per-shard", launch->gpus_per_shard, "GPUs per array task")->check(CLI::NonNegativeNumber);
  cmd->add_option("--time", launch->time, "time limit per task (Slurm format)");
  cmd->add_option("--account", launch->account, "Slurm account");
  cmd->add_option("--sbatch-arg", launch->sbatch_args, "extra #SBATCH line (repeatable), e.g. --sbatch-arg=--qos=low");
  auto* from = cmd->add_option("--episodes-from", launch->episodes_from,
                               "run a hard set: the episodes of this store that --select picks (s2r sweep "
                               "--episodes-from); it must be readable from every node");
  cmd->add_option("--select", launch->select, "with --episodes-from: the selection, as s2r sweep --select (outcomes and conditions, "
                  "e.g. stuck,timeout,box_mass>1.5)")
      ->needs(from);
  auto* policy = cmd->add_option("--policy", launch->policy,
                                 "each task's sweep acts with this policy command (s2r sweep --policy); it must run "
                                 "on every node (in the container, with --container)");
  cmd->add_option("--policy-timeout", launch->policy_timeout_s, "s2r sweep --policy-timeout")
      ->check(CLI::PositiveNumber)
      ->needs(policy);
  cmd->add_flag("--policy-expert", launch->policy_expert, "s2r sweep --policy-expert (with --policy or --policy-net)");
  cmd->add_option("--policy-net", launch->policy_net,
                  "each task's sweep acts with this policy network (s2r sweep --policy-net); checked against the task "
                  "here, read by every task from where it is (mounted into the container, with --container)")
      ->excludes(policy);
  cmd->add_option("--container", launch->container, "run each task in this image (Pyxis/Enroot --container-image)");
  cmd->add_option("--threads", launch->threads, "CPU threads per task (--cpus-per-task)")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--dry-run", launch->dry_run, "print the sbatch script; write and submit nothing");
  cmd->callback([launch] { RunLaunch(*launch); });

  auto status_dir = std::make_shared<std::string>();
  auto status_json = std::make_shared<bool>(false);
  CLI::App* st = app->add_subcommand("status", "Progress of a sharded sweep: per shard, episodes committed and Slurm state");
  st->add_option("dir", *status_dir, "the launch folder (or a folder of shard stores)")->required();
  st->add_flag("--json", *status_json, "print JSON");
  st->callback([status_dir, status_json] {
    const int code = RunStatus(*status_dir, *status_json);
    if (code != 0) throw CLI::RuntimeError(code);
  });

  auto merge = std::make_shared<MergeArgs>();
  CLI::App* mg = app->add_subcommand("merge", "Merge a sweep's shard stores into one store, episodes in index order");
  mg->add_option("inputs", merge->inputs, "the launch folder, or the shard stores")->required();
  mg->add_option("--out", merge->out, "the merged store (must not exist)")->required();
  mg->add_flag("--resume", merge->resume, "finish an interrupted merge into --out");
  mg->callback([merge] { RunMerge(*merge); });
}

}  // namespace s2r
