// The s2r dataset: episodes of a simulated (or real) robot, stored as a Zarr v3 hierarchy that
// training code reads with zarr-python, tensorstore or LeRobot-style loaders. docs/dataset.md is
// the schema's reference; this header is its C++ form.
//
//   STORE/zarr.json                 root group; attributes["s2r"] holds the schema (format
//                                   version, generator, embodiment, features, tasks,
//                                   randomization, labels) and the commit record
//   STORE/steps/<name>              one row per control step, along dimension "step"
//   STORE/episodes/<name>           one row per episode, along dimension "episode"
//   STORE/episodes/params/<name>    the randomized parameters of each episode
//   STORE/episodes/metrics/<name>   per-episode outcomes beside the labels (phase, margins, ...)
//
// Writing is streaming and crash-safe (DatasetWriter): the producer hands over whole episodes; the
// writer stages rows into inner chunks, compresses them on a small thread pool, writes every step
// shard exactly once through temp + fsync + rename, and only then advances the arrays' shapes and
// the commit record. A writer killed at any moment leaves a store whose commit record names
// episodes that are all complete on disk; opening with OpenMode::kResume continues right after
// them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/store/dtype.h"
#include "host/store/metadata.h"

namespace s2r {

inline constexpr const char* kDatasetFormat = "s2r.dataset";
inline constexpr int kDatasetFormatVersion = 1;

// A per-step feature (observation, state, action, ...). Stored as steps/<name> with shape
// [steps, shape...].
struct FeatureSpec {
  std::string name;  // node name: [A-Za-z0-9_.-]+, not a built-in step array
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;            // per-step shape; {} for a scalar
  std::vector<std::string> names;        // per-component names of the last dimension (or empty)
  std::vector<std::string> units;        // SI unit per component (or one for all; "1" = unitless)
  std::string frame;                     // reference frame: "world", "body:<name>", "joint", ...
  std::string rotation;                  // rotation convention: "quat_wxyz", "none", ...
  std::string description;
};

// A randomized (or fixed) episode parameter, stored as episodes/params/<name> (float64).
struct ParamSpec {
  std::string name;
  std::string distribution = "uniform";  // "uniform", "loguniform", "normal", "fixed", ...
  double low = 0, high = 0;              // range (normal: mean and standard deviation)
  std::string units = "1";
  std::string description;
};

// A per-episode outcome measure, stored as episodes/metrics/<name> (float64): what a label alone
// does not say (the task phase at the end, a success margin, a near miss).
struct MetricSpec {
  std::string name;
  std::string units = "1";
  std::string description;
};

struct TaskSpec {
  std::string name;
  std::string instruction;  // natural-language instruction (RLDS language_instruction)
};

// One entry of the failure-label taxonomy. Code 0 is reserved for "none" (no failure).
struct LabelSpec {
  int32_t code = 0;
  std::string name;
  std::string description;
};

// How step and episode arrays are chunked and compressed.
struct StorageSpec {
  int64_t chunk_steps = 4096;    // rows per inner chunk of a step array
  int64_t shard_steps = 65536;   // rows per step shard (a multiple of chunk_steps); the commit unit
  int64_t chunk_episodes = 4096; // rows per (unsharded) chunk of an episode array
  std::string compressor = "blosc-lz4";  // "blosc-lz4", "blosc-zstd", "zstd", "gzip", "none"
  int level = 5;                 // compression level of the chosen compressor
  bool checksum = true;          // crc32c on every inner chunk
  // Step arrays with several columns store each inner chunk column by column (Zarr's transpose
  // codec, the step axis last): constant and smooth columns then compress well, and faster.
  bool transpose = true;
};

struct DatasetSpec {
  std::vector<FeatureSpec> features;
  std::vector<ParamSpec> params;
  std::vector<MetricSpec> metrics;  // optional; stores without them read as none
  std::vector<TaskSpec> tasks;    // at least one (task_index refers to it)
  std::vector<LabelSpec> labels;  // taxonomy; code 0 "none" is added when missing
  double control_hz = 0;          // > 0: rate of the steps
  // Free-form but documented objects (docs/dataset.md): embodiment {robot_type, joint_names,
  // actuator_names, action_space, gripper}; generator {scene_path, scene_text, config_text, ...}
  // (s2r version and git revision are added by the writer).
  nlohmann::json embodiment = nlohmann::json::object();
  nlohmann::json generator = nlohmann::json::object();
  StorageSpec storage;

  // Checks names, shapes, units and the taxonomy; throws std::invalid_argument naming the field.
  void Validate() const;
  // The schema as stored in the root attributes (without the commit record), and back.
  nlohmann::json ToJson() const;
  static DatasetSpec FromJson(const nlohmann::json& schema, const std::string& path);
};

// One finished episode, as the producer hands it over. Pointers are read during Append only.
struct EpisodeView {
  int64_t length = 0;            // steps, >= 1
  uint64_t seed = 0;
  int32_t task_index = 0;
  bool success = false;
  int32_t failure_label = 0;     // a LabelSpec code; 0 when none
  bool terminal = false;         // ended in a terminal state (vs. truncated by a time limit)
  const double* params = nullptr;              // one per ParamSpec, in spec order
  const double* metrics = nullptr;             // one per MetricSpec, in spec order
  std::vector<const void*> features;           // one per FeatureSpec: length x shape, C order
  const double* timestamp = nullptr;           // seconds from episode start; null: k / control_hz
  const float* reward = nullptr;               // null: zeros
};

enum class OpenMode {
  kCreate,  // the store must not exist (or be an empty directory)
  kResume,  // continue an existing store after its last committed episode; create it when absent
};

struct WriterOptions {
  int threads = 2;                          // compression threads
  int io_threads = 4;                       // file writers (several fsyncs in flight)
  int64_t max_pending_bytes = 256 << 20;    // raw bytes staged but not yet durable (backpressure)
  // Commits happen when a step shard completes, but at most once per min_commit_interval_s
  // (each rewrites every array's zarr.json and the root); > 0 commit_interval_s also commits
  // everything appended (writing partial last shards) when that long has passed.
  double min_commit_interval_s = 1.0;
  double commit_interval_s = 0;
  // Called on the writer's I/O thread after each commit is durable: (episodes, steps).
  std::function<void(int64_t, int64_t)> on_commit;
};

class DatasetWriter {
 public:
  // Creates or resumes the store at `path`. On resume the stored schema must equal `spec`
  // (storage included) and is repaired first: shapes beyond the commit record are rolled back,
  // chunks beyond it and stale temporary files are removed.
  DatasetWriter(const std::string& path, const DatasetSpec& spec, OpenMode mode, WriterOptions options = {});
  // Closes (commits everything appended) if Close was not called; errors are printed, not thrown.
  ~DatasetWriter();
  DatasetWriter(const DatasetWriter&) = delete;
  DatasetWriter& operator=(const DatasetWriter&) = delete;

  // Appends one episode; blocks while too much data is pending (backpressure). Throws
  // std::invalid_argument on a malformed episode and StoreError when an earlier write failed.
  void Append(const EpisodeView& episode);
  // Commits every episode appended so far (writing partial tail shards) and waits until durable.
  void Flush();
  // Flush, then stop the threads. The writer cannot be used afterwards.
  void Close();

  // Episodes appended (including those found committed when resuming), and those durable.
  int64_t episodes_appended() const;
  int64_t episodes_committed() const;
  int64_t steps_committed() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A read-only view of a committed dataset (what `s2r inspect` summarises).
class DatasetReader {
 public:
  // `path` is a dataset, or a folder of datasets with one schema (a sweep's shard stores: every
  // dataset directly inside it), read as one dataset without copying: its episodes in the order
  // of their seed column (a sweep's episode index), their steps one after another.
  explicit DatasetReader(const std::string& path);
  ~DatasetReader();
  DatasetReader(DatasetReader&&) noexcept;
  // the datasets a folder view is made of (empty for a plain dataset)
  int parts() const { return static_cast<int>(parts_.size()); }
  const DatasetSpec& spec() const { return spec_; }
  const std::string& path() const { return path_; }
  int64_t episodes() const { return episodes_; }
  int64_t steps() const { return steps_; }
  const nlohmann::json& root_attributes() const { return attrs_; }

  // Episode-table columns over the committed episodes.
  std::vector<int64_t> EpisodeStarts() const;
  std::vector<int64_t> EpisodeLengths() const;
  std::vector<uint64_t> EpisodeSeeds() const;
  std::vector<uint8_t> EpisodeSuccess() const;
  std::vector<int32_t> EpisodeFailureLabels() const;
  std::vector<int32_t> EpisodeTaskIndices() const;
  std::vector<double> EpisodeParam(const std::string& name) const;
  std::vector<double> EpisodeMetric(const std::string& name) const;
  // Steps [start, start + count) of a step array as raw native bytes.
  std::vector<uint8_t> StepRows(const std::string& name, int64_t start, int64_t count) const;
  // ... of a float feature (float32 or float64, as the writing build computed), as doubles; any other
  // dtype is a StoreError naming the array
  std::vector<double> StepValues(const std::string& name, int64_t start, int64_t count) const;

  // Whether `path` holds an s2r dataset (root attributes with the format marker).
  static bool IsDataset(const std::string& path);
  // Whether `path` is a folder (no Zarr node itself) with s2r datasets directly inside it: what
  // the constructor reads as one dataset of parts.
  static bool IsDatasetFolder(const std::string& path);

 private:
  void OpenParts();
  template <typename T, typename F>
  std::vector<T> Gather(F&& column) const;

  std::string path_;
  nlohmann::json attrs_;
  DatasetSpec spec_;
  int64_t episodes_ = 0, steps_ = 0;
  // a folder view: its datasets, and per episode (in seed order) its dataset, row and first step
  std::vector<std::unique_ptr<DatasetReader>> parts_;
  std::vector<std::pair<int, int64_t>> order_;
  std::vector<int64_t> starts_;
};

// The built-in step and episode arrays every dataset has, beside the features and params.
// (name, dtype, units, description)
struct BuiltinColumn {
  const char* name;
  DataType dtype;
  const char* units;
  const char* description;
};
const std::vector<BuiltinColumn>& BuiltinStepColumns();
const std::vector<BuiltinColumn>& BuiltinEpisodeColumns();

// Checks the committed episode table of the dataset at `path` (one store, not a folder) against its
// commit record (`episodes`, `steps`) and schema: every length positive, the episodes' steps one
// after another from step 0 (start[i] = start[i - 1] + length[i - 1]) ending at `steps`, success
// 0 or 1, every failure label in the taxonomy and every task index a task. A store edited outside
// s2r fails here with a StoreError naming the column's array, the row and what it holds, rather
// than feeding wrong episode boundaries to a reader or a resumed writer. DatasetReader runs it on
// every store it opens, and a resumed DatasetWriter before it changes anything.
void CheckEpisodeTable(const std::string& path, const DatasetSpec& spec, int64_t episodes, int64_t steps);

}  // namespace s2r
