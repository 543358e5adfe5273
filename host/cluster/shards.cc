#include "host/cluster/shards.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

#include "host/store/dataset.h"
#include "host/store/store_error.h"
#include "host/store/zarr_array.h"
#include "host/sweep/sweep_config.h"

namespace s2r {
namespace fs = std::filesystem;
namespace {

using json = nlohmann::json;

int64_t ExpectedEpisodes(int64_t episodes, int shard, int shards) {
  return episodes > shard ? (episodes - shard + shards - 1) / shards : 0;
}

// what identifies the sweep a shard belongs to: everything in the generator but the shard index
json Identity(const json& generator) {
  json id = generator;
  if (id.contains("sweep") && id["sweep"].is_object()) id["sweep"].erase("shard");
  return id;
}

// Step rows of one feature of one shard, read a chunk-sized block at a time as the merge walks the
// shard's episodes in order.
class StepCursor {
 public:
  StepCursor(const DatasetReader* r, std::string name, int64_t row_bytes, int64_t block_rows)
      : r_(r), name_(std::move(name)), row_bytes_(row_bytes), block_rows_(std::max<int64_t>(block_rows, 1)) {}
  // rows [start, start + count) of the array, which must not go backwards
  const uint8_t* Rows(int64_t start, int64_t count) {
    if (start < first_ || start + count > first_ + static_cast<int64_t>(buf_.size()) / row_bytes_) {
      const int64_t n = std::min(std::max(count, block_rows_), r_->steps() - start);
      buf_ = r_->StepRows(name_, start, n);
      first_ = start;
    }
    return buf_.data() + (start - first_) * row_bytes_;
  }

 private:
  const DatasetReader* r_;
  std::string name_;
  int64_t row_bytes_, block_rows_;
  int64_t first_ = 0;
  std::vector<uint8_t> buf_;
};

int64_t ElementBytes(DataType t) {
  switch (t) {
    case DataType::kBool:
    case DataType::kInt8:
    case DataType::kUint8: return 1;
    case DataType::kInt16:
    case DataType::kUint16: return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat32: return 4;
    default: return 8;
  }
}

// One open shard: its reader, episode table and cursors.
struct OpenShard {
  std::unique_ptr<DatasetReader> reader;
  std::vector<int64_t> starts, lengths;
  std::vector<uint64_t> seeds;
  std::vector<uint8_t> success;
  std::vector<int32_t> labels, tasks;
  std::vector<std::vector<double>> params, metrics;  // per spec entry, per episode
  std::vector<StepCursor> features;
  std::unique_ptr<StepCursor> timestamp, reward, terminal;
};

}  // namespace

int64_t ShardSet::episodes_committed() const {
  int64_t n = 0;
  for (const ShardInfo& s : shards) n += s.episodes_committed;
  return n;
}

bool ShardSet::complete() const {
  if (!missing.empty()) return false;
  for (const ShardInfo& s : shards) {
    if (!s.complete()) return false;
  }
  return true;
}

ShardSet OpenShards(const std::vector<std::string>& inputs) {
  std::vector<std::string> stores;
  if (inputs.size() == 1 && fs::is_directory(inputs[0]) && !DatasetReader::IsDataset(inputs[0])) {
    for (const auto& e : fs::directory_iterator(inputs[0])) {
      if (e.is_directory() && DatasetReader::IsDataset(e.path().string())) stores.push_back(e.path().string());
    }
    std::sort(stores.begin(), stores.end());
    if (stores.empty()) throw StoreError(inputs[0], "holds no shard stores (s2r datasets)");
  } else {
    stores = inputs;
  }
  ShardSet set;
  std::map<int, ShardInfo> found;
  json identity;
  std::string identity_from;
  for (const std::string& path : stores) {
    // a store whose creation has not finished (no commit record yet) is not a shard yet
    const json doc = ReadZarrJson(path);
    const json attrs = doc.value("attributes", json::object());
    if (attrs.contains("s2r") && attrs["s2r"].is_object() && attrs["s2r"].contains("commit") &&
        attrs["s2r"]["commit"].is_null() && inputs.size() == 1) {
      continue;
    }
    DatasetReader r(path);
    const json& s2r = r.root_attributes()["s2r"];
    const json gen = s2r.value("generator", json::object());
    if (gen.value("command", "") != "s2r sweep" || !gen.contains("sweep") || !gen["sweep"].is_object()) {
      throw StoreError(path, "was not written by s2r sweep: not a sweep shard");
    }
    const json& sw = gen["sweep"];
    const int k = sw.value("shard", 0), n = sw.value("shards", 1);
    const json id = Identity(gen);
    if (identity_from.empty()) {
      identity = id;
      identity_from = path;
      set.shard_count = n;
      set.episodes = sw.value("episodes", int64_t(0));
      set.seed = sw.value("seed", uint64_t(0));
      set.generator = gen;
      set.version = gen.value("s2r_version", std::string("?")) + " " + gen.value("git_revision", std::string("?"));
    } else {
      const std::string d = FirstDifference(identity, id);
      if (!d.empty()) {
        throw StoreError(path, "belongs to another sweep than " + identity_from + ": generator." + d + " differs (" +
                                   (id.contains(d) ? id[d].dump() : std::string("see the store")) + ")");
      }
    }
    if (found.count(k)) throw StoreError(path, "repeats shard " + std::to_string(k) + " of " + found[k].path);
    ShardInfo info;
    info.path = path;
    info.shard = k;
    info.episodes_expected = ExpectedEpisodes(set.episodes, k, n);
    info.episodes_committed = r.episodes();
    info.steps_committed = r.steps();
    found[k] = info;
  }
  for (int k = 0; k < set.shard_count; ++k) {
    if (found.count(k)) {
      set.shards.push_back(found[k]);
    } else {
      set.missing.push_back(k);
    }
  }
  return set;
}

void MergeShards(const ShardSet& set, const std::string& out, const MergeOptions& o) {
  // refuse before anything is written
  std::string problems;
  for (int k : set.missing) problems += (problems.empty() ? "" : "; ") + std::string("shard ") + std::to_string(k) + " is missing";
  for (const ShardInfo& s : set.shards) {
    if (!s.complete()) {
      problems += (problems.empty() ? "" : "; ") + s.path + " holds " + std::to_string(s.episodes_committed) + " of its " +
                  std::to_string(s.episodes_expected) + " episodes";
    }
  }
  if (!problems.empty()) throw StoreError(out, "cannot merge an incomplete sweep: " + problems);
  // the merge is written beside `out` and renamed into place when complete: a merge that fails
  // or is killed leaves `out.merging` (which --resume continues), never a short store at `out`
  std::error_code ec;
  if (fs::exists(out, ec)) throw StoreError(out, "exists; merge into a new store");
  const std::string partial = out + ".merging";
  if (!o.resume && fs::exists(partial, ec)) {
    throw StoreError(partial, "holds an interrupted merge; pass --resume to finish it, or remove it");
  }
  const int n = set.shard_count;
  std::vector<OpenShard> shards(n);
  DatasetSpec spec;
  for (int k = 0; k < n; ++k) {
    OpenShard& s = shards[k];
    s.reader = std::make_unique<DatasetReader>(set.shards[k].path);
    const DatasetReader& r = *s.reader;
    s.starts = r.EpisodeStarts();
    s.lengths = r.EpisodeLengths();
    s.seeds = r.EpisodeSeeds();
    s.success = r.EpisodeSuccess();
    s.labels = r.EpisodeFailureLabels();
    s.tasks = r.EpisodeTaskIndices();
    for (const ParamSpec& p : r.spec().params) s.params.push_back(r.EpisodeParam(p.name));
    for (const MetricSpec& m : r.spec().metrics) s.metrics.push_back(r.EpisodeMetric(m.name));
    const int64_t block = r.spec().storage.chunk_steps;
    for (const FeatureSpec& f : r.spec().features) {
      int64_t elems = 1;
      for (int64_t d : f.shape) elems *= d;
      s.features.emplace_back(&r, f.name, elems * ElementBytes(f.dtype), block);
    }
    s.timestamp = std::make_unique<StepCursor>(&r, "timestamp", 8, block);
    s.reward = std::make_unique<StepCursor>(&r, "reward", 4, block);
    s.terminal = std::make_unique<StepCursor>(&r, "is_terminal", 1, block);
    if (k == 0) spec = r.spec();
  }
  // the merged store is what the unsharded sweep writes: shard 0 of 1
  spec.generator["sweep"]["shard"] = 0;
  spec.generator["sweep"]["shards"] = 1;
  spec.generator.erase("s2r_version");
  spec.generator.erase("git_revision");
  DatasetWriter writer(partial, spec, o.resume ? OpenMode::kResume : OpenMode::kCreate);
  std::vector<double> params, metrics;
  std::vector<std::vector<uint8_t>> copies(spec.features.size());
  // the merged store's i-th episode is episode i of the sweep, or of a hard set (--episodes-from,
  // docs/sweep.md) the i-th of its list, whose indices only ascend
  const bool hard_set = spec.generator["sweep"].contains("episodes_from");
  auto seed_at = [&](int64_t i) { return shards[i % n].seeds[i / n]; };
  for (int64_t i = writer.episodes_appended(); i < set.episodes; ++i) {
    OpenShard& s = shards[i % n];
    const int64_t j = i / n;
    if (!hard_set && s.seeds[j] != static_cast<uint64_t>(i)) {
      throw StoreError(set.shards[i % n].path, "episode row " + std::to_string(j) + " holds episode " +
                                                  std::to_string(s.seeds[j]) + ", expected " + std::to_string(i));
    }
    if (hard_set && i > 0 && s.seeds[j] <= seed_at(i - 1)) {
      throw StoreError(set.shards[i % n].path, "episode row " + std::to_string(j) + " holds episode " +
                                                  std::to_string(s.seeds[j]) + ", expected one after " +
                                                  std::to_string(seed_at(i - 1)) + " (the hard set's order)");
    }
    const int64_t start = s.starts[j], len = s.lengths[j];
    EpisodeView ev;
    ev.length = len;
    ev.seed = s.seeds[j];
    ev.task_index = s.tasks[j];
    ev.success = s.success[j] != 0;
    ev.failure_label = s.labels[j];
    ev.terminal = s.terminal->Rows(start + len - 1, 1)[0] != 0;
    params.clear();
    for (const auto& column : s.params) params.push_back(column[j]);
    metrics.clear();
    for (const auto& column : s.metrics) metrics.push_back(column[j]);
    ev.params = params.data();
    ev.metrics = metrics.data();
    // the cursors' buffers move on with the next read: copy each episode's rows once
    for (size_t f = 0; f < s.features.size(); ++f) {
      int64_t elems = 1;
      for (int64_t d : spec.features[f].shape) elems *= d;
      const int64_t bytes = len * elems * ElementBytes(spec.features[f].dtype);
      const uint8_t* rows = s.features[f].Rows(start, len);
      copies[f].assign(rows, rows + bytes);
      ev.features.push_back(copies[f].data());
    }
    std::vector<double> timestamp(len);
    std::memcpy(timestamp.data(), s.timestamp->Rows(start, len), len * 8);
    std::vector<float> reward(len);
    std::memcpy(reward.data(), s.reward->Rows(start, len), len * 4);
    ev.timestamp = timestamp.data();
    ev.reward = reward.data();
    writer.Append(ev);
    if (o.progress && (i % 256 == 255 || i + 1 == set.episodes)) o.progress(i + 1, set.episodes);
    if (o.stop_after >= 0 && i + 1 >= o.stop_after) {
      writer.Close();
      return;  // (tests) as if killed here: the committed part stays in out.merging
    }
  }
  writer.Close();
  fs::rename(partial, out, ec);
  if (ec) throw StoreError(out, "cannot move the finished merge into place: " + ec.message());
}

}  // namespace s2r
