// Sweeps across machines (host/cluster, host/cli_cluster.cc): shards of one sweep merge into a
// store whose arrays equal the unsharded run's; status reports progress; merge refuses shards that
// are missing or from another sweep, and an existing target; launch --dry-run writes the sbatch
// script of a job array that resumes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "host/cluster/shards.h"
#include "host/store/store_error.h"
#include "host/sweep/sweep.h"
#include "tests/host/run_command.h"
#include "tests/host/test_dir.h"

namespace s2r {
namespace {

namespace fs = std::filesystem;
const std::string kBin = S2R_BINARY;

// a small push sweep: 11 episodes of at most 1 s, small chunks so the merge crosses chunk borders
std::string SmallConfig(const std::string& dir, int seed = 5) {
  const std::string path = dir + "/sweep" + std::to_string(seed) + ".yaml";
  std::ofstream(path) << "scene: builtin:box_push\n"
                         "task:\n  name: push\n  params: {goal_x: 0.25, goal_y: 0.0, goal_radius: 0.03, hold_s: 0.2, stuck_s: 1.0}\n"
                         "episodes: 11\nhorizon_s: 1.0\nworlds: 4\nseed: " +
                             std::to_string(seed) +
                             "\nrandomization:\n  - name: box_mass\n    targets: [\"body_mass[box]\"]\n"
                             "    mode: scale\n    distribution: uniform\n    low: 0.7\n    high: 1.3\n"
                             "store: {chunk_steps: 32, shard_steps: 64, chunk_episodes: 4}\n";
  return path;
}

void RunShards(const std::string& config, const std::string& dir, int shards) {
  const SweepConfig c = LoadSweepConfig(config);
  for (int k = 0; k < shards; ++k) {
    SweepOptions o;
    o.threads = 1;
    o.shard = k;
    o.shards = shards;
    RunSweep(c, dir + "/shard-" + std::to_string(k) + ".zarr", o);
  }
}

// The small sweep run whole into DIR/whole.zarr and as 3 shards into DIR/run; returns the config.
std::string WholeAndShards(const std::string& dir) {
  const std::string config = SmallConfig(dir);
  SweepOptions o;
  o.threads = 1;
  RunSweep(LoadSweepConfig(config), dir + "/whole.zarr", o);
  fs::create_directories(dir + "/run");
  RunShards(config, dir + "/run", 3);
  return config;
}

TEST(Cluster, MergedShardsEqualTheUnshardedRun) {
  const std::string dir = TestDir();
  const std::string config = WholeAndShards(dir);
  // status: complete, exit 0
  const CommandResult st = RunCommand(kBin + " status " + dir + "/run --json", false);
  ASSERT_EQ(st.exit_code, 0) << st.output;
  const nlohmann::json sj = nlohmann::json::parse(st.output);
  EXPECT_EQ(sj["episodes"], 11);
  EXPECT_TRUE(sj["complete"].get<bool>());
  EXPECT_EQ(sj["shards"][2]["expected"], 3);  // episodes 2, 5, 8
  // the folder reads as one dataset without a merge: s2r inspect's summary is the unsharded run's
  auto summary = [&](const std::string& store) {
    const CommandResult r = RunCommand(kBin + " inspect " + store + " --json", false);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    nlohmann::json j = nlohmann::json::parse(r.output);
    j.erase("store");
    return j;
  };
  EXPECT_EQ(summary(dir + "/run"), summary(dir + "/whole.zarr"));
  const CommandResult m = RunCommand(kBin + " merge " + dir + "/run --out " + dir + "/merged.zarr");
  ASSERT_EQ(m.exit_code, 0) << m.output;
  const auto whole = ArrayHashes(kBin, dir + "/whole.zarr"), merged = ArrayHashes(kBin, dir + "/merged.zarr");
  ASSERT_GT(whole.size(), 10u);
  EXPECT_EQ(whole, merged);
  // the merged store is the unsharded sweep's: it can be resumed as one (nothing left to do)
  const CommandResult resume = RunCommand(kBin + " sweep " + config + " --out " + dir + "/merged.zarr --resume --threads 1");
  EXPECT_EQ(resume.exit_code, 0) << resume.output;
  EXPECT_EQ(ArrayHashes(kBin, dir + "/merged.zarr"), whole);
  // listing the shard stores instead of the folder does the same
  const CommandResult listed = RunCommand(kBin + " merge " + dir + "/run/shard-2.zarr " + dir + "/run/shard-0.zarr " + dir +
                                          "/run/shard-1.zarr --out " + dir + "/merged2.zarr");
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_EQ(ArrayHashes(kBin, dir + "/merged2.zarr"), whole);
}

// A hard set (--episodes-from, docs/sweep.md) split into shards merges into the store its
// unsharded run writes: the merged episodes follow the hard set's list, not 0 .. E-1.
TEST(Cluster, AHardSetsShardsMergeIntoItsUnshardedRun) {
  const std::string dir = TestDir();
  const std::string config = WholeAndShards(dir);
  // the near misses (8 of the 11 episodes in float32), so the merge interleaves a list with gaps
  const std::string from = " --episodes-from " + dir + "/whole.zarr --select near_miss --threads 1";
  CommandResult r = RunCommand(kBin + " sweep " + config + " --out " + dir + "/hard.zarr" + from);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  fs::create_directories(dir + "/hrun");
  for (int k = 0; k < 2; ++k) {
    r = RunCommand(kBin + " sweep " + config + " --out " + dir + "/hrun/shard-" + std::to_string(k) + ".zarr --shard " +
                   std::to_string(k) + "/2" + from);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  EXPECT_EQ(RunCommand(kBin + " status " + dir + "/hrun").exit_code, 0);
  r = RunCommand(kBin + " merge " + dir + "/hrun --out " + dir + "/merged.zarr");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto hard = ArrayHashes(kBin, dir + "/hard.zarr");
  ASSERT_GT(hard.size(), 10u);
  EXPECT_EQ(ArrayHashes(kBin, dir + "/merged.zarr"), hard);
  // not the whole sweep: the hard set holds fewer episodes
  EXPECT_NE(hard, ArrayHashes(kBin, dir + "/whole.zarr"));
}

TEST(Cluster, MergeRefusesMissingForeignAndExistingNamingThem) {
  const std::string dir = TestDir();
  fs::create_directories(dir + "/run");
  RunShards(SmallConfig(dir), dir + "/run", 3);
  // a target that exists
  fs::create_directories(dir + "/taken");
  std::ofstream(dir + "/taken/keep.txt") << "mine";
  CommandResult r = RunCommand(kBin + " merge " + dir + "/run --out " + dir + "/taken");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("taken: exists"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(dir + "/taken/keep.txt"));
  // a shard missing: status says so (exit 1), merge refuses and writes nothing
  fs::rename(dir + "/run/shard-1.zarr", dir + "/shard-1.zarr");
  r = RunCommand(kBin + " status " + dir + "/run");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("7 of 11 episodes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("shard   1         0 / 4        no store yet"), std::string::npos) << r.output;
  r = RunCommand(kBin + " merge " + dir + "/run --out " + dir + "/m1.zarr");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("shard 1 is missing"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/m1.zarr"));
  // a shard of another sweep (another seed)
  fs::create_directories(dir + "/other");
  RunShards(SmallConfig(dir, 6), dir + "/other", 3);
  fs::rename(dir + "/other/shard-1.zarr", dir + "/run/shard-1.zarr");
  r = RunCommand(kBin + " merge " + dir + "/run --out " + dir + "/m2.zarr");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("shard-1.zarr: belongs to another sweep"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("generator.config"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/m2.zarr"));
}

TEST(Cluster, AnInterruptedMergeResumesAndACorruptShardLeavesNoStore) {
  const std::string dir = TestDir();
  const std::string config = WholeAndShards(dir);
  // interrupted after 5 of 11 episodes: nothing at the target, the part in .merging
  MergeOptions stop;
  stop.stop_after = 5;
  MergeShards(OpenShards({dir + "/run"}), dir + "/m.zarr", stop);
  EXPECT_FALSE(fs::exists(dir + "/m.zarr"));
  ASSERT_TRUE(fs::exists(dir + "/m.zarr.merging"));
  CommandResult r = RunCommand(kBin + " merge " + dir + "/run --out " + dir + "/m.zarr");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("m.zarr.merging: holds an interrupted merge; pass --resume"), std::string::npos) << r.output;
  r = RunCommand(kBin + " merge " + dir + "/run --out " + dir + "/m.zarr --resume");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/m.zarr.merging"));
  EXPECT_EQ(ArrayHashes(kBin, dir + "/m.zarr"), ArrayHashes(kBin, dir + "/whole.zarr"));
  // a shard whose step data is damaged: the merge fails naming the chunk, and leaves no store
  bool damaged = false;
  for (const auto& e : fs::recursive_directory_iterator(dir + "/run/shard-2.zarr/steps/state")) {
    if (e.is_regular_file() && e.path().filename() != "zarr.json") {
      std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << "not a chunk";
      damaged = true;
      break;
    }
  }
  ASSERT_TRUE(damaged);
  r = RunCommand(kBin + " merge " + dir + "/run --out " + dir + "/bad.zarr");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("shard-2.zarr/steps/state"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/bad.zarr"));
}

TEST(Cluster, LaunchDryRunWritesAJobArrayThatResumesEachShard) {
  const std::string dir = TestDir();
  const CommandResult r = RunCommand(kBin + " launch slurm builtin:push --out " + dir + "/run --shards 4 --partition gpu"
                                     " --gpus-per-shard 1 --time 02:00:00 --sbatch-arg=--qos=low --dry-run",
                                     false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* line : {"#SBATCH --array=0-3", "#SBATCH --requeue", "#SBATCH --partition=gpu", "#SBATCH --gpus-per-task=1",
                           "#SBATCH --time=02:00:00", "#SBATCH --qos=low", "--shard \"$K/4\"", "shard-'\"$K.zarr\" --resume"}) {
    EXPECT_NE(r.output.find(line), std::string::npos) << "missing " << line << " in:\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(dir + "/run"));  // a dry run writes nothing
  // in a container (Pyxis): the folder mounted once for a builtin config, which lives in it
  const CommandResult c = RunCommand(kBin + " launch slurm builtin:push --out " + dir + "/run --shards 2 --container "
                                     "nvcr.io#s2r:latest --dry-run", false);
  ASSERT_EQ(c.exit_code, 0) << c.output;
  EXPECT_NE(c.output.find("srun --container-image='nvcr.io#s2r:latest' --container-mounts='" + dir + "/run:" + dir +
                          "/run' s2r sweep"),
            std::string::npos)
      << c.output;
  // the script `launch slurm builtin:push --shards 2 OPTIONS --dry-run` prints, which must succeed
  const auto dry_run = [&](const std::string& options) {
    const CommandResult r = RunCommand(kBin + " launch slurm builtin:push --out " + dir + "/run --shards 2 " + options +
                                       " --dry-run", false);
    EXPECT_EQ(r.exit_code, 0) << options << "\n" << r.output;
    return r.output;
  };
  // a hard set: each task runs its shard of the selection, the source store mounted in a container;
  // a selection that picks nothing is refused before anything is written
  RunShards(SmallConfig(dir), dir + "/src", 1);
  const std::string src = dir + "/src/shard-0.zarr";
  const std::string h = dry_run("--container img --episodes-from " + src + " --select success");
  EXPECT_NE(h.find("--resume --episodes-from '" + src + "' --select 'success'"), std::string::npos) << h;
  EXPECT_NE(h.find("," + src + ":" + src + "' s2r sweep"), std::string::npos) << h;
  const CommandResult none = RunCommand(kBin + " launch slurm builtin:push --out " + dir + "/run --shards 2 "
                                        "--episodes-from " + src + " --select sim_unstable --dry-run");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.output.find("--select sim_unstable: selects no episode"), std::string::npos) << none.output;
  EXPECT_FALSE(fs::exists(dir + "/run"));
  // a policy: each task's sweep acts with it, quoted as one argument
  const std::string p = dry_run("--policy 'python3 my_policy.py --ckpt a.pt' --policy-timeout 5");
  EXPECT_NE(p.find("--resume --policy 'python3 my_policy.py --ckpt a.pt' --policy-timeout 5"), std::string::npos) << p;
  EXPECT_EQ(p.find("--policy-expert"), std::string::npos) << p;
  // ... sent the expert's actions (--policy-expert) where asked
  const std::string pe = dry_run("--policy 'python3 dagger.py' --policy-expert");
  EXPECT_NE(pe.find("--policy 'python3 dagger.py' --policy-timeout 60 --policy-expert"), std::string::npos) << pe;
  // a policy network: checked against the task before anything is written, its absolute path passed
  // to each task and mounted into a container
  const std::string net = std::string(S2R_SOURCE_DIR) + "/python/examples/push_net.npz";
  const std::string n = dry_run("--container img --policy-net " + net);
  EXPECT_NE(n.find("--resume --policy-net '" + net + "'"), std::string::npos) << n;
  EXPECT_NE(n.find("," + net + ":" + net + "' s2r sweep"), std::string::npos) << n;
  // ... its steps labelled by the expert (--policy-expert: steps/expert_action); the flag alone is refused
  const std::string ne = dry_run("--policy-net " + net + " --policy-expert");
  EXPECT_NE(ne.find("--resume --policy-net '" + net + "' --policy-expert"), std::string::npos) << ne;
  const CommandResult alone = RunCommand(kBin + " launch slurm builtin:push --out " + dir + "/run --shards 2 "
                                         "--policy-expert --dry-run");
  EXPECT_EQ(alone.exit_code, 1);
  EXPECT_NE(alone.output.find("--policy-expert labels a policy's steps with the expert's actions; there is no "
                              "--policy or --policy-net"),
            std::string::npos)
      << alone.output;
  EXPECT_FALSE(fs::exists(dir + "/run"));
  const CommandResult wrong = RunCommand(kBin + " launch slurm builtin:pick_lift --out " + dir + "/run --shards 2 "
                                         "--policy-net " + net + " --dry-run");
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.output.find(net + ": layer0.weight: shape (64, 22); expected (out, "), std::string::npos)
      << wrong.output;
  // without sbatch on the PATH, a real launch fails clearly (the script is kept for the record)
  const CommandResult no = RunCommand("PATH=/nonexistent " + kBin + " launch slurm builtin:push --out " + dir +
                                      "/run --shards 2");
  EXPECT_EQ(no.exit_code, 1);
  EXPECT_NE(no.output.find("sbatch is not available here"), std::string::npos) << no.output;
  EXPECT_FALSE(fs::exists(dir + "/run/launch.json"));
}

}  // namespace
}  // namespace s2r
