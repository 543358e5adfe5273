// A sweep split over machines: the shard stores `s2r sweep --shard K/N` writes, read as one sweep.
//
// OpenShards finds the shard stores of one sweep (in a folder, or listed), checks that they were
// made from one config, seed, episode count, shard count and s2r build, and says which shards are
// missing and how far each has got. MergeShards streams them, chunk by chunk, into one store
// whose episodes are in index order and whose arrays equal those of the same sweep run unsharded.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace s2r {

struct ShardInfo {
  std::string path;
  int shard = 0;                   // K
  int64_t episodes_expected = 0;   // the episodes i < E with i mod N == K
  int64_t episodes_committed = 0;  // in the store now
  int64_t steps_committed = 0;
  bool complete() const { return episodes_committed == episodes_expected; }
};

struct ShardSet {
  std::vector<ShardInfo> shards;  // found, by K
  std::vector<int> missing;       // K with no store
  int shard_count = 0;            // N
  int64_t episodes = 0;           // E, the whole sweep
  uint64_t seed = 0;
  nlohmann::json generator;       // shard 0's (or the first found) s2r.generator
  std::string version;            // "<s2r_version> <git_revision>"
  int64_t episodes_committed() const;
  bool complete() const;
};

// `inputs`: one folder holding the shard stores (every s2r dataset directly inside it; the
// launcher names them shard-<K>.zarr), or a list of shard stores. Throws StoreError naming the
// store when one is not a sweep's, belongs to another sweep (config, seed, episodes, shard count
// or s2r version differs: the first difference is named), or repeats a shard.
ShardSet OpenShards(const std::vector<std::string>& inputs);

struct MergeOptions {
  bool resume = false;  // continue an interrupted merge (`out`.merging)
  int64_t stop_after = -1;  // tests: stop after this many episodes, as an interruption would
  std::function<void(int64_t done, int64_t total)> progress;
};

// Merges a complete shard set into one store at `out`, which must not exist. Refuses, naming them,
// missing or incomplete shards; nothing is written then. The merge is written to `out`.merging and
// renamed to `out` when complete, so a failed or killed merge never leaves a short store at `out`;
// `resume` continues `out`.merging. Memory: a few chunks per shard.
void MergeShards(const ShardSet& set, const std::string& out, const MergeOptions& options = {});

}  // namespace s2r
