// DatasetWriter: streaming, crash-safe appends of whole episodes to an s2r dataset.
//
// Threads. The producer's thread (Append) copies rows into per-array staging buffers, one inner
// chunk each. A full inner chunk is handed to the encode pool (compression runs there) and its
// encoded bytes come back as a shared future. When the inner chunks of a whole shard (a whole
// chunk for unsharded arrays) are handed over, a FileJob goes on the queue. A dispatcher thread
// takes the queue in order: each FileJob goes to the I/O pool, which waits for the encoded inner
// chunks and writes the shard atomically (temp, fsync, rename; writev of the parts and the
// index); a commit first waits for the I/O pool to drain, so it always follows the shards it
// covers, and no file is ever written by two threads at once.
//
// Commits. A commit makes episodes [0, E) and steps [0, S) visible: the directories of the new
// files are fsynced, every array's shape is advanced (steps arrays to S, episode arrays to E) and
// then the root attribute s2r.commit is rewritten; that record is the authority. Steps commit at
// shard boundaries (at most once per min_commit_interval_s): when step shard k completes, the
// episodes that end inside shards 0..k become committable. Episode arrays are
// small; their partial last chunk is rewritten at each commit. Flush (and Close, and the optional
// commit interval) also writes the partial last step shard, which is replaced by a superset when
// more steps arrive; otherwise every step shard is written exactly once.
//
// Backpressure. Raw bytes handed to the pool and not yet durable are counted; Append blocks
// while they exceed the bound, which is raised to at least two shards of every array so that a
// shard can always complete.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <filesystem>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

#include "host/store/codecs.h"
#include "host/store/dataset.h"
#include "host/store/file_io.h"
#include "host/store/store_error.h"
#include "host/store/zarr_array.h"
#include "host/version.h"


namespace s2r {
namespace {

using json = nlohmann::json;
using Bytes = std::vector<uint8_t>;
using EncodedChunk = std::shared_future<std::shared_ptr<const Bytes>>;

// A few threads that run tasks in submission order (the encode pool, and the I/O pool that keeps
// several fsyncs in flight). Wait() returns when every task submitted so far has finished.
class TaskPool {
 public:
  explicit TaskPool(int threads) {
    for (int i = 0; i < std::max(1, threads); ++i) workers_.emplace_back([this] { Run(); });
  }
  ~TaskPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  void Submit(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(std::move(fn));
      ++outstanding_;
    }
    cv_.notify_one();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [&] { return outstanding_ == 0; });
  }
  // Runs `fn` on the pool; its result (or exception) arrives through the future.
  EncodedChunk SubmitEncode(std::function<Bytes()> fn) {
    auto task = std::make_shared<std::packaged_task<std::shared_ptr<const Bytes>()>>(
        [fn = std::move(fn)] { return std::make_shared<const Bytes>(fn()); });
    EncodedChunk f = task->get_future().share();
    Submit([task] { (*task)(); });
    return f;
  }

 private:
  void Run() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();  // never throws: tasks record their own errors
      {
        std::lock_guard<std::mutex> lock(mu_);
        --outstanding_;
      }
      idle_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_, idle_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> workers_;
  int64_t outstanding_ = 0;
  bool stop_ = false;
};

// One array appended along dimension 0.
struct Column {
  Column(std::string n, bool step, ZarrArray a) : name(std::move(n)), is_step(step), array(std::move(a)) {}
  std::string name;    // "steps/obs"
  bool is_step = true;
  ZarrArray array;     // touched by the I/O thread only, after construction
  DataType dtype = DataType::kFloat32;
  size_t row_bytes = 0;
  int64_t inner_rows = 0;  // rows per inner chunk (== file_rows when unsharded)
  int64_t file_rows = 0;   // rows per shard (chunk when unsharded)
  bool sharded = false;
  CodecConfig sharding;
  std::vector<CodecConfig> inner_codecs;
  std::vector<int64_t> inner_shape, file_shape;
  FillValue fill;
  int64_t rows = 0;                    // rows appended
  Bytes staging;                       // the inner chunk being filled
  std::vector<EncodedChunk> current;   // encoded inner chunks of the file being filled
  std::vector<Bytes> spare;            // encoded staging buffers for reuse (Impl::free_mu)

  size_t inner_bytes() const { return size_t(inner_rows) * row_bytes; }
  int64_t inner_per_file() const { return file_rows / inner_rows; }
  std::vector<int64_t> FileIndex(int64_t k) const {
    std::vector<int64_t> idx(file_shape.size(), 0);
    idx[0] = k;
    return idx;
  }
};

// Writes one shard (or chunk) file from encoded inner chunks; `raw` bytes are released after.
struct FileJob {
  Column* col = nullptr;
  int64_t index = 0;
  std::vector<EncodedChunk> inner;  // may be shorter than the shard (tail): the rest is absent
  int64_t raw = 0;
};

struct CommitJob {
  int64_t episodes = 0, steps = 0;
  std::vector<FileJob> tails;  // partial last files, written before the shapes advance
};

struct Job {
  bool is_commit = false;
  FileJob file;
  CommitJob commit;
};

// The codecs of a stored (inner) chunk with `rank` dimensions, the step or episode axis first.
// With storage.transpose a chunk of rank > 1 is stored column by column (the first axis last).
std::vector<CodecConfig> InnerCodecs(const StorageSpec& s, DataType type, size_t rank) {
  std::vector<CodecConfig> c;
  if (s.transpose && rank > 1) {
    std::vector<int64_t> order;
    for (size_t d = 1; d < rank; ++d) order.push_back(int64_t(d));
    order.push_back(0);
    c.push_back(TransposeCodec(order));
  }
  c.push_back(BytesCodec());
  const int typesize = int(DataTypeSize(type));
  if (s.compressor == "blosc-lz4") c.push_back(BloscCodec("lz4", s.level, typesize > 1 ? "shuffle" : "noshuffle", typesize));
  if (s.compressor == "blosc-zstd") c.push_back(BloscCodec("zstd", s.level, typesize > 1 ? "shuffle" : "noshuffle", typesize));
  if (s.compressor == "zstd") c.push_back(ZstdCodec(s.level));
  if (s.compressor == "gzip") c.push_back(GzipCodec(s.level));
  if (s.checksum) c.push_back(Crc32cCodec());
  return c;
}

json ColumnAttributes(const std::string& units, const std::string& description) {
  return {{"units", units}, {"description", description}};
}

std::string RootFile(const std::string& path) { return JoinPath(path, "zarr.json"); }

// Generator fields the writer adds itself; ignored when comparing specs on resume.
const char* kAutoGeneratorKeys[] = {"s2r_version", "git_revision"};

}  // namespace

struct DatasetWriter::Impl {
  std::string path;
  DatasetSpec spec;
  WriterOptions options;
  json root_attrs;  // the full root attributes (schema + commit)
  std::vector<std::unique_ptr<Column>> steps, episodes;  // features first, then built-ins
  std::vector<Column*> feature_cols, builtin_step_cols, builtin_episode_cols, param_cols, metric_cols;
  std::unique_ptr<TaskPool> pool;     // compression
  std::unique_ptr<TaskPool> io_pool;  // file writes

  // Producer-side bookkeeping.
  int64_t episodes_appended = 0;
  std::deque<int64_t> uncommitted_ends;  // end step of each appended, not yet enqueued episode
  int64_t enqueued_episodes = 0, enqueued_steps = 0;
  std::chrono::steady_clock::time_point last_commit = std::chrono::steady_clock::now();
  bool closed = false;

  // Shared with the I/O thread.
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Job> queue;
  std::set<std::string> dirty_dirs;  // directories with renames not yet fsynced
  std::mutex free_mu;                // guards every Column::spare
  int64_t pending_bytes = 0, max_pending = 0;
  int64_t committed_episodes = 0, committed_steps = 0;
  bool failed = false, stop = false;
  std::string error;
  std::thread io;

  // Scratch for built-in columns.
  std::vector<double> ts;
  std::vector<float> reward;
  std::vector<uint8_t> first, last, terminal;
  std::vector<int64_t> ep_index;
  std::vector<int32_t> frame;

  // --- setup ---------------------------------------------------------------------------------

  std::unique_ptr<Column> MakeColumn(const std::string& name, bool is_step, ZarrArray array) {
    auto c = std::make_unique<Column>(name, is_step, std::move(array));
    const ArrayMetadata& m = c->array.metadata();
    c->dtype = m.data_type;
    int64_t row_elems = 1;
    for (size_t d = 1; d < m.shape.size(); ++d) row_elems *= m.shape[d];
    c->row_bytes = size_t(row_elems) * DataTypeSize(m.data_type);
    c->file_shape = m.chunk_shape;
    c->file_rows = m.chunk_shape[0];
    c->fill = m.fill_value;
    if (m.IsSharded()) {
      c->sharded = true;
      c->sharding = m.codecs[0];
      c->inner_codecs = m.codecs[0].codecs;
      c->inner_shape = m.codecs[0].chunk_shape;
    } else {
      c->inner_codecs = m.codecs;
      c->inner_shape = m.chunk_shape;
    }
    c->inner_rows = c->inner_shape[0];
    for (size_t d = 1; d < m.shape.size(); ++d) {
      if (m.chunk_shape[d] != m.shape[d] || c->inner_shape[d] != m.shape[d]) {
        throw StoreError(c->array.path(), "a dataset array must be chunked along its first dimension only");
      }
    }
    c->staging.assign(c->inner_bytes(), 0);
    return c;
  }

  ArrayMetadata StepArray(DataType type, const std::vector<int64_t>& row_shape) const {
    ArrayMetadata m;
    m.shape = {0};
    m.shape.insert(m.shape.end(), row_shape.begin(), row_shape.end());
    m.data_type = type;
    m.chunk_shape = m.shape;
    m.chunk_shape[0] = spec.storage.shard_steps;
    std::vector<int64_t> inner = m.shape;
    inner[0] = spec.storage.chunk_steps;
    m.codecs = {ShardingCodec(inner, InnerCodecs(spec.storage, type, inner.size()))};
    std::vector<std::optional<std::string>> dims = {std::string("step")};
    for (size_t d = 0; d < row_shape.size(); ++d) {
      dims.push_back(row_shape.size() == 1 ? std::string("component") : "component_" + std::to_string(d));
    }
    m.dimension_names = dims;
    return m;
  }

  ArrayMetadata EpisodeArray(DataType type) const {
    ArrayMetadata m;
    m.shape = {0};
    m.data_type = type;
    m.chunk_shape = {spec.storage.chunk_episodes};
    m.codecs = InnerCodecs(spec.storage, type, 1);
    m.dimension_names = std::vector<std::optional<std::string>>{std::string("episode")};
    return m;
  }

  json SchemaAttributes() const {
    json s = spec.ToJson();
    s["generator"]["s2r_version"] = S2rVersion();
    s["generator"]["git_revision"] = S2rGitRevision();
    return s;
  }

  void WriteRoot(const json& commit) {
    root_attrs["s2r"]["commit"] = commit;
    GroupMetadata g;
    g.attributes = root_attrs;
    const std::string text = GroupMetadataToJson(g).dump(2) + "\n";
    WriteFileAtomic(RootFile(path), text.data(), text.size());
  }

  // Creates every node. The root goes first with a null commit record, which marks a creation in
  // progress; the record {0, 0} is written last.
  void Create() {
    MakeDirs(path);
    root_attrs = json::object();
    root_attrs["s2r"] = SchemaAttributes();
    WriteRoot(nullptr);
    ZarrGroup root = ZarrGroup::Open(path);
    ZarrGroup sg = root.CreateGroup("steps");
    ZarrGroup eg = root.CreateGroup("episodes");
    ZarrGroup pg = eg.CreateGroup("params");
    for (const FeatureSpec& f : spec.features) {
      ArrayMetadata m = StepArray(f.dtype, f.shape);
      m.attributes = {{"units", f.units.size() == 1 ? json(f.units[0]) : json(f.units)},
                      {"names", f.names},
                      {"frame", f.frame},
                      {"rotation", f.rotation},
                      {"description", f.description}};
      sg.CreateArray(f.name, m);
    }
    for (const BuiltinColumn& b : BuiltinStepColumns()) {
      ArrayMetadata m = StepArray(b.dtype, {});
      m.attributes = ColumnAttributes(b.units, b.description);
      sg.CreateArray(b.name, m);
    }
    for (const BuiltinColumn& b : BuiltinEpisodeColumns()) {
      ArrayMetadata m = EpisodeArray(b.dtype);
      m.attributes = ColumnAttributes(b.units, b.description);
      eg.CreateArray(b.name, m);
    }
    for (const ParamSpec& p : spec.params) {
      ArrayMetadata m = EpisodeArray(DataType::kFloat64);
      m.attributes = {{"units", p.units},
                      {"distribution", p.distribution},
                      {"low", p.low},
                      {"high", p.high},
                      {"description", p.description}};
      pg.CreateArray(p.name, m);
    }
    if (!spec.metrics.empty()) {
      ZarrGroup mg = eg.CreateGroup("metrics");
      for (const MetricSpec& ms : spec.metrics) {
        ArrayMetadata m = EpisodeArray(DataType::kFloat64);
        m.attributes = ColumnAttributes(ms.units, ms.description);
        mg.CreateArray(ms.name, m);
      }
    }
    WriteRoot({{"episodes", 0}, {"steps", 0}});
  }

  void OpenColumns() {
    for (const FeatureSpec& f : spec.features) {
      steps.push_back(MakeColumn("steps/" + f.name, true, ZarrArray::Open(JoinPath(path, "steps/" + f.name))));
      feature_cols.push_back(steps.back().get());
    }
    for (const BuiltinColumn& b : BuiltinStepColumns()) {
      steps.push_back(MakeColumn(std::string("steps/") + b.name, true,
                                 ZarrArray::Open(JoinPath(path, std::string("steps/") + b.name))));
      builtin_step_cols.push_back(steps.back().get());
    }
    for (const BuiltinColumn& b : BuiltinEpisodeColumns()) {
      episodes.push_back(MakeColumn(std::string("episodes/") + b.name, false,
                                    ZarrArray::Open(JoinPath(path, std::string("episodes/") + b.name))));
      builtin_episode_cols.push_back(episodes.back().get());
    }
    for (const ParamSpec& p : spec.params) {
      episodes.push_back(MakeColumn("episodes/params/" + p.name, false,
                                    ZarrArray::Open(JoinPath(path, "episodes/params/" + p.name))));
      param_cols.push_back(episodes.back().get());
    }
    for (const MetricSpec& m : spec.metrics) {
      episodes.push_back(MakeColumn("episodes/metrics/" + m.name, false,
                                    ZarrArray::Open(JoinPath(path, "episodes/metrics/" + m.name))));
      metric_cols.push_back(episodes.back().get());
    }
    for (const auto& c : steps) {
      if (c->file_rows != spec.storage.shard_steps || c->inner_rows != spec.storage.chunk_steps) {
        throw StoreError(c->array.path(), "chunking differs from the dataset's storage spec");
      }
    }
  }

  // Resume: check the schema, roll every array back to the commit record, drop what lies beyond
  // it, and reload the partial last files into the staging buffers.
  void Resume(const json& attrs) {
    const std::string file = RootFile(path);
    if (!attrs.contains("s2r") || !attrs["s2r"].is_object()) {
      throw StoreError(file, "not an s2r dataset (no attributes.s2r); refusing to write into it");
    }
    json stored = attrs["s2r"];
    json commit = stored.contains("commit") ? stored["commit"] : json();
    stored.erase("commit");
    DatasetSpec::FromJson(stored, file);  // validates the stored schema
    if (stored.contains("generator") && stored["generator"].is_object()) {
      for (const char* k : kAutoGeneratorKeys) stored["generator"].erase(k);
    }
    json mine = spec.ToJson();
    if (stored != mine) {
      std::string key = "?";
      for (auto it = mine.begin(); it != mine.end(); ++it) {
        if (!stored.contains(it.key()) || stored[it.key()] != it.value()) {
          key = it.key();
          break;
        }
      }
      throw StoreError(file, "the stored dataset schema differs from this run's (first difference: attributes.s2r." +
                                 key + "); resume needs the same scene, features, parameters and storage");
    }
    root_attrs = attrs;
    if (commit.is_null()) {
      // Creation was interrupted: nothing was ever committed. Start over.
      for (const char* node : {"steps", "episodes"}) {
        std::error_code ec;
        std::filesystem::remove_all(JoinPath(path, node), ec);
        if (ec) throw StoreError(JoinPath(path, node), "cannot remove an interrupted creation: " + ec.message());
      }
      Create();
      OpenColumns();
      return;
    }
    if (!commit.is_object() || !commit.contains("episodes") || !commit.contains("steps") ||
        !commit["episodes"].is_number_integer() || !commit["steps"].is_number_integer() ||
        commit["episodes"].get<int64_t>() < 0 || commit["steps"].get<int64_t>() < 0) {
      throw StoreError(file, "attributes.s2r.commit must be {\"episodes\": N, \"steps\": M}");
    }
    const int64_t E = commit["episodes"].get<int64_t>(), S = commit["steps"].get<int64_t>();
    OpenColumns();
    // before anything is changed: the committed episodes must be where the record says
    CheckEpisodeTable(path, spec, E, S);
    // Metadata writes interrupted by a kill leave NAME.tmp files beside the nodes' zarr.json.
    RemoveFileIfExists(RootFile(path) + ".tmp");
    for (auto* list : {&steps, &episodes}) {
      for (auto& c : *list) RemoveFileIfExists(JoinPath(c->array.path(), "zarr.json.tmp"));
    }
    for (auto* list : {&steps, &episodes}) {
      for (auto& c : *list) {
        const int64_t rows = c->is_step ? S : E;
        std::vector<int64_t> shape = c->array.metadata().shape;
        if (shape[0] < rows) {
          throw StoreError(c->array.path(), "holds " + std::to_string(shape[0]) + " rows but the commit record says " +
                                                std::to_string(rows) + ": the store was modified outside s2r");
        }
        if (shape[0] != rows) {
          shape[0] = rows;
          c->array.Resize(shape);  // also removes chunks beyond
        } else {
          c->array.RemoveChunksOutsideShape();
        }
        // Reload the partial last file; its rows are encoded again when the file is rewritten.
        const int64_t k = rows / c->file_rows;
        const int64_t r = rows - k * c->file_rows;
        c->rows = k * c->file_rows;
        if (r > 0) {
          std::vector<int64_t> start(shape.size(), 0), count = shape;
          start[0] = k * c->file_rows;
          count[0] = r;
          Bytes tail(size_t(r) * c->row_bytes);
          c->array.ReadRegionBytes(start, count, tail.data(), tail.size());
          AppendRows(c.get(), tail.data(), r);
        }
      }
    }
    episodes_appended = enqueued_episodes = committed_episodes = E;
    enqueued_steps = committed_steps = S;
  }

  // --- producer side -------------------------------------------------------------------------

  void CheckFailed() {
    std::lock_guard<std::mutex> lock(mu);
    if (failed) throw StoreError(path, "an earlier write failed: " + error);
  }

  void Enqueue(Job job) {
    {
      std::lock_guard<std::mutex> lock(mu);
      queue.push_back(std::move(job));
    }
    cv.notify_all();
  }

  // Staging buffers are recycled once encoded: a fresh inner chunk of a few hundred KB would be
  // zero-filled and page-faulted in for every chunk. A recycled buffer holds stale rows until
  // they are overwritten; only whole chunks are encoded from it (tails are copied and padded).
  Bytes TakeBuffer(Column* c) {
    {
      std::lock_guard<std::mutex> lock(free_mu);
      if (!c->spare.empty()) {
        Bytes b = std::move(c->spare.back());
        c->spare.pop_back();
        return b;
      }
    }
    return Bytes(c->inner_bytes(), 0);
  }

  void SubmitStaging(Column* c) {
    const size_t n = c->inner_bytes();
    Bytes data = std::move(c->staging);
    c->staging = TakeBuffer(c);
    c->current.push_back(Encode(c, std::move(data)));
    {
      std::lock_guard<std::mutex> lock(mu);
      pending_bytes += int64_t(n);
    }
  }

  EncodedChunk Encode(Column* c, Bytes data) {
    return pool->SubmitEncode([this, c, data = std::move(data)]() mutable -> Bytes {
      Bytes out = EncodeChunk(c->inner_codecs, c->dtype, c->inner_shape, c->fill, data.data(), c->array.path());
      std::lock_guard<std::mutex> lock(free_mu);
      if (c->spare.size() < 4) c->spare.push_back(std::move(data));
      return out;
    });
  }

  void AppendRows(Column* c, const void* src, int64_t n) {
    const auto* p = static_cast<const uint8_t*>(src);
    while (n > 0) {
      const int64_t in_chunk = c->rows % c->inner_rows;
      const int64_t take = std::min(n, c->inner_rows - in_chunk);
      std::memcpy(c->staging.data() + size_t(in_chunk) * c->row_bytes, p, size_t(take) * c->row_bytes);
      p += size_t(take) * c->row_bytes;
      n -= take;
      c->rows += take;
      if (c->rows % c->inner_rows == 0) SubmitStaging(c);
      if (c->rows % c->file_rows == 0) {
        Job job;
        job.file.col = c;
        job.file.index = c->rows / c->file_rows - 1;
        job.file.inner = std::move(c->current);
        job.file.raw = int64_t(c->file_rows) * int64_t(c->row_bytes);
        c->current.clear();
        Enqueue(std::move(job));
      }
    }
  }

  // The partial last file of a column as it stands (nothing when the column ends on a boundary).
  std::optional<FileJob> TailJob(Column* c) {
    if (c->rows % c->file_rows == 0) return std::nullopt;
    FileJob f;
    f.col = c;
    f.index = c->rows / c->file_rows;
    f.inner = c->current;
    if (c->rows % c->inner_rows != 0) {
      // The rows so far, the rest of the inner chunk zero (the fill value of dataset arrays).
      const size_t used = size_t(c->rows % c->inner_rows) * c->row_bytes;
      Bytes tail(c->inner_bytes(), 0);
      std::memcpy(tail.data(), c->staging.data(), used);
      f.inner.push_back(Encode(c, std::move(tail)));
    }
    f.raw = 0;
    return f;
  }

  void EnqueueCommit(int64_t E, int64_t S, bool step_tails) {
    Job job;
    job.is_commit = true;
    job.commit.episodes = E;
    job.commit.steps = S;
    for (auto& c : episodes) {
      if (auto t = TailJob(c.get())) job.commit.tails.push_back(std::move(*t));
    }
    if (step_tails) {
      for (auto& c : steps) {
        if (auto t = TailJob(c.get())) job.commit.tails.push_back(std::move(*t));
      }
    }
    enqueued_episodes = E;
    enqueued_steps = S;
    last_commit = std::chrono::steady_clock::now();
    Enqueue(std::move(job));
  }

  void Append(const EpisodeView& ep) {
    if (closed) throw std::logic_error("DatasetWriter: Append after Close");
    CheckFailed();
    const std::string where = "episode " + std::to_string(episodes_appended) + ": ";
    if (ep.length <= 0) throw std::invalid_argument(where + "length must be positive");
    if (ep.features.size() != spec.features.size()) {
      throw std::invalid_argument(where + std::to_string(ep.features.size()) + " feature buffers for " +
                                  std::to_string(spec.features.size()) + " features");
    }
    for (size_t i = 0; i < ep.features.size(); ++i) {
      if (!ep.features[i]) throw std::invalid_argument(where + "feature '" + spec.features[i].name + "' has no data");
    }
    if (!spec.params.empty() && !ep.params) throw std::invalid_argument(where + "params are missing");
    if (!spec.metrics.empty() && !ep.metrics) throw std::invalid_argument(where + "metrics are missing");
    if (ep.task_index < 0 || size_t(ep.task_index) >= spec.tasks.size()) {
      throw std::invalid_argument(where + "task_index " + std::to_string(ep.task_index) + " is not a task");
    }
    if (ep.failure_label != 0 && std::none_of(spec.labels.begin(), spec.labels.end(), [&](const LabelSpec& l) {
          return l.code == ep.failure_label;
        })) {
      throw std::invalid_argument(where + "failure_label " + std::to_string(ep.failure_label) + " is not in the taxonomy");
    }
    // Backpressure: wait until the bytes in flight fall under the bound.
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return failed || pending_bytes <= max_pending; });
      if (failed) throw StoreError(path, "an earlier write failed: " + error);
    }
    const int64_t L = ep.length;
    const int64_t start = steps.front()->rows;
    for (size_t i = 0; i < feature_cols.size(); ++i) AppendRows(feature_cols[i], ep.features[i], L);
    ts.resize(size_t(L));
    reward.assign(size_t(L), 0.f);
    first.assign(size_t(L), 0);
    last.assign(size_t(L), 0);
    terminal.assign(size_t(L), 0);
    ep_index.assign(size_t(L), episodes_appended);
    frame.resize(size_t(L));
    for (int64_t k = 0; k < L; ++k) {
      ts[size_t(k)] = ep.timestamp ? ep.timestamp[k] : double(k) / spec.control_hz;
      frame[size_t(k)] = int32_t(k);
    }
    if (ep.reward) std::copy(ep.reward, ep.reward + L, reward.begin());
    first[0] = 1;
    last[size_t(L - 1)] = 1;
    terminal[size_t(L - 1)] = ep.terminal ? 1 : 0;
    const void* builtin[] = {ts.data(), reward.data(), first.data(), last.data(), terminal.data(), ep_index.data(),
                             frame.data()};
    for (size_t i = 0; i < builtin_step_cols.size(); ++i) AppendRows(builtin_step_cols[i], builtin[i], L);
    const int64_t length = L;
    const uint64_t seed = ep.seed;
    const int32_t task = ep.task_index;
    const uint8_t success = ep.success ? 1 : 0;
    const int32_t label = ep.failure_label;
    const void* row[] = {&start, &length, &seed, &task, &success, &label};
    for (size_t i = 0; i < builtin_episode_cols.size(); ++i) AppendRows(builtin_episode_cols[i], row[i], 1);
    for (size_t i = 0; i < param_cols.size(); ++i) AppendRows(param_cols[i], &ep.params[i], 1);
    for (size_t i = 0; i < metric_cols.size(); ++i) AppendRows(metric_cols[i], &ep.metrics[i], 1);
    ++episodes_appended;
    uncommitted_ends.push_back(start + L);

    // Episodes that end inside completed step shards can be committed now (at most once per
    // min_commit_interval_s: a commit rewrites every array's zarr.json).
    const int64_t durable = steps.front()->rows / spec.storage.shard_steps * spec.storage.shard_steps;
    const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_commit).count();
    if (since >= options.min_commit_interval_s && !uncommitted_ends.empty() && uncommitted_ends.front() <= durable) {
      int64_t E = enqueued_episodes, S = enqueued_steps;
      while (!uncommitted_ends.empty() && uncommitted_ends.front() <= durable) {
        S = uncommitted_ends.front();
        uncommitted_ends.pop_front();
        ++E;
      }
      EnqueueCommit(E, S, false);
    } else if (options.commit_interval_s > 0 && since >= options.commit_interval_s) {
      EnqueueAll();
    }
  }

  void EnqueueAll() {
    if (episodes_appended == enqueued_episodes) return;
    const int64_t S = steps.front()->rows;
    uncommitted_ends.clear();
    EnqueueCommit(episodes_appended, S, true);
  }

  void Flush() {
    CheckFailed();
    EnqueueAll();
    const int64_t target = enqueued_episodes;
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return failed || (committed_episodes >= target && queue.empty() && !busy); });
    if (failed) throw StoreError(path, "an earlier write failed: " + error);
  }

  // --- I/O thread ----------------------------------------------------------------------------

  bool busy = false;

  void WriteFile(const FileJob& f) {
    Column* c = f.col;
    std::vector<std::shared_ptr<const Bytes>> held;
    for (const EncodedChunk& e : f.inner) held.push_back(e.get());  // rethrows encode errors
    const std::string file = c->array.ChunkPath(c->FileIndex(f.index));
    if (c->sharded) {
      // The shard is written straight from the encoded inner chunks and its index (writev).
      std::vector<const Bytes*> parts(size_t(c->inner_per_file()), nullptr);
      for (size_t i = 0; i < held.size(); ++i) parts[i] = held[i].get();
      const Bytes index = EncodeShardIndex(c->sharding, c->file_shape, parts, file);
      std::vector<ConstBytes> pieces;
      if (!c->sharding.index_at_end) pieces.push_back({index.data(), index.size()});
      for (const Bytes* b : parts) {
        if (b) pieces.push_back({b->data(), b->size()});
      }
      if (c->sharding.index_at_end) pieces.push_back({index.data(), index.size()});
      MakeDirs(Parent(file));
      WriteFileAtomicParts(file, pieces, /*sync_directory=*/false);
    } else {
      MakeDirs(Parent(file));
      WriteFileAtomicParts(file, {{held.at(0)->data(), held.at(0)->size()}}, /*sync_directory=*/false);
    }
    // The directory entry is made durable by the next commit, before anything refers to it.
    std::lock_guard<std::mutex> lock(mu);
    dirty_dirs.insert(Parent(file));
  }

  static std::string Parent(const std::string& file) {
    const size_t slash = file.rfind('/');
    return slash == std::string::npos ? std::string(".") : file.substr(0, slash);
  }

  // Runs `fn` on the I/O pool; a failure is recorded (the first one wins) and stops commits.
  void IoTask(std::function<void()> fn) {
    io_pool->Submit([this, fn = std::move(fn)] {
      try {
        fn();
      } catch (const std::exception& e) {
        Fail(e.what());
      }
    });
  }

  void Fail(const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!failed) {
        failed = true;
        error = why;
      }
    }
    cv.notify_all();
  }

  bool Failed() {
    std::lock_guard<std::mutex> lock(mu);
    return failed;
  }

  // Every file the commit covers is durable when it starts (the pool has drained). Its own
  // writes run in parallel in two waves: the partial last files, then every array's shape;
  // the root record last.
  void SyncDirtyDirectories() {
    std::set<std::string> dirs;
    {
      std::lock_guard<std::mutex> lock(mu);
      dirs.swap(dirty_dirs);
    }
    for (const std::string& d : dirs) IoTask([d] { FsyncDirectory(d); });
    io_pool->Wait();
  }

  void RunCommit(const CommitJob& j) {
    io_pool->Wait();
    if (Failed()) return;
    for (const FileJob& t : j.tails) IoTask([this, t] { WriteFile(t); });
    io_pool->Wait();
    if (Failed()) return;
    SyncDirtyDirectories();
    if (Failed()) return;
    for (auto* list : {&steps, &episodes}) {
      for (auto& c : *list) {
        const int64_t rows = c->is_step ? j.steps : j.episodes;
        if (c->array.metadata().shape[0] == rows) continue;
        Column* col = c.get();
        IoTask([col, rows] {
          std::vector<int64_t> shape = col->array.metadata().shape;
          shape[0] = rows;
          col->array.Resize(shape);
        });
      }
    }
    io_pool->Wait();
    if (Failed()) return;
    WriteRoot({{"episodes", j.episodes}, {"steps", j.steps}});
  }

  void IoLoop() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stop || !queue.empty(); });
        if (queue.empty()) {
          lock.unlock();
          io_pool->Wait();
          return;
        }
        job = std::move(queue.front());
        queue.pop_front();
        busy = true;
      }
      if (!job.is_commit) {
        // Shard files go to the I/O pool; their raw bytes are released when each is durable.
        FileJob f = std::move(job.file);
        const int64_t raw = f.raw;
        io_pool->Submit([this, f = std::move(f), raw] {
          try {
            if (!Failed()) WriteFile(f);
          } catch (const std::exception& e) {
            Fail(e.what());
          }
          {
            std::lock_guard<std::mutex> lock(mu);
            pending_bytes -= raw;
          }
          cv.notify_all();
        });
        std::lock_guard<std::mutex> lock(mu);
        busy = false;
        continue;
      }
      try {
        RunCommit(job.commit);
      } catch (const std::exception& e) {
        Fail(e.what());
      }
      bool ok;
      {
        std::lock_guard<std::mutex> lock(mu);
        ok = !failed;
        if (ok) {
          committed_episodes = job.commit.episodes;
          committed_steps = job.commit.steps;
        }
        busy = false;
      }
      if (ok && options.on_commit) options.on_commit(job.commit.episodes, job.commit.steps);
      cv.notify_all();
    }
  }

  void StopThreads() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    cv.notify_all();
    if (io.joinable()) io.join();
    io_pool.reset();
    pool.reset();
  }
};

DatasetWriter::DatasetWriter(const std::string& path, const DatasetSpec& spec, OpenMode mode, WriterOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.path = path;
  m.spec = spec;
  m.options = std::move(options);
  spec.Validate();
  m.pool = std::make_unique<TaskPool>(m.options.threads);
  m.io_pool = std::make_unique<TaskPool>(m.options.io_threads);
  const std::string root = RootFile(path);
  const bool exists = FileExists(root);
  if (exists && mode == OpenMode::kCreate) {
    throw StoreError(path, "a store already exists here (resume it, or choose another path)");
  }
  if (!exists && IsDirectory(path)) {
    // A kill during creation can leave the root's temporary file and nothing else.
    RemoveFileIfExists(root + ".tmp");
    std::error_code ec;
    if (!std::filesystem::is_empty(path, ec)) {
      throw StoreError(path, "directory is not empty and holds no Zarr store; refusing to write into it");
    }
  }
  if (exists) {
    m.Resume(ReadZarrJson(path).value("attributes", json::object()));
  } else {
    m.Create();
    m.OpenColumns();
  }
  int64_t floor = 0;
  for (const auto& c : m.steps) floor += 2 * int64_t(c->file_rows) * int64_t(c->row_bytes);
  for (const auto& c : m.episodes) floor += 2 * int64_t(c->file_rows) * int64_t(c->row_bytes);
  m.max_pending = std::max(m.options.max_pending_bytes, floor);
  m.io = std::thread([&m] { m.IoLoop(); });
}

DatasetWriter::~DatasetWriter() {
  if (!impl_) return;
  if (!impl_->closed) {
    try {
      Close();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "s2r: closing dataset %s: %s\n", impl_->path.c_str(), e.what());
      impl_->StopThreads();
    }
  }
}

void DatasetWriter::Append(const EpisodeView& episode) { impl_->Append(episode); }

void DatasetWriter::Flush() {
  if (impl_->closed) throw std::logic_error("DatasetWriter: Flush after Close");
  impl_->Flush();
}

void DatasetWriter::Close() {
  if (impl_->closed) return;
  impl_->closed = true;
  try {
    impl_->Flush();
  } catch (...) {
    impl_->StopThreads();
    throw;
  }
  impl_->StopThreads();
}

int64_t DatasetWriter::episodes_appended() const { return impl_->episodes_appended; }
int64_t DatasetWriter::episodes_committed() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->committed_episodes;
}
int64_t DatasetWriter::steps_committed() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->committed_steps;
}

}  // namespace s2r
