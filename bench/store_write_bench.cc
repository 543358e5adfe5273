// s2r_store_bench: write throughput and compression ratio of the Zarr v3 store (host/store) on
// trajectory-like float32 data, for bench/run_store_bench.sh, which runs zarr-python and
// tensorstore (bench/store_write_bench.py) on the same bytes with the same codecs beside it.
//
//   s2r_store_bench [--mb 256 | --data FILE] [--threads T] [--repeats 3] [--config a,b,c]
//                   [--writer zarr_array,dataset_writer] [--dir DIR] [--keep] [--dump-data FILE]
//                   [--profile] [--versions]
//
// Data: `rows` steps x 26 columns, the state of two free bodies (position m, quaternion wxyz,
// linear velocity m/s, angular velocity rad/s) at 50 Hz, in episodes of 200 steps. Velocities are
// damped random walks, positions and orientations their integrals (quaternions renormalized each
// step), so neighbouring rows differ in their low mantissa bits as simulated states do. A fixed
// splitmix64 seed makes it identical on every machine; it is generated before any timing.
//
// Arrays: shape [rows, 26] float32, fill 0, regular grid [65536, 26]. Configurations:
//   a  sharding_indexed, inner chunks [4096, 26]: bytes + blosc(lz4, clevel 5, shuffle, typesize 4) + crc32c
//   b  sharding_indexed, inner chunks [4096, 26]: bytes + zstd(level 3) + crc32c
//   c  unsharded chunks [65536, 26]: bytes + blosc(lz4, clevel 5, shuffle, typesize 4)
// Writers:
//   zarr_array      ZarrArray::Create, then WriteChunkBytes per shard (chunk) from T threads, each
//                   thread owning every T-th shard.
//   dataset_writer  DatasetWriter (host/store/dataset.h) with one feature "state" [26] float32,
//                   appending 200-step episodes, WriterOptions.threads = T; configurations a and b
//                   only (its step arrays are always sharded). It also writes its built-in step and
//                   episode arrays: raw_mb counts the feature only, total_raw_mb everything.
// Each run times create + every write + every fsync (+ Close for the dataset writer) into a fresh
// directory; prints one JSON line per (writer, config) with the median and best of the repeats.
//
// --profile (for finding where the time goes, not for the results table):
//   - the zarr_array path split into its stages (encode, mkdir, write, fsync, rename + directory
//     fsync), mirroring ZarrArray::WriteChunkBytes and WriteFileAtomic step by step, with 1, T and
//     2T threads, and with encoding and durable writes on separate threads (T + 4);
//   - the same with a lean encoder prototype (no copies, SSE4.2 crc32c, a reused zstd context),
//     which writes the same format; every result is read back through ZarrArray and compared;
//   - the bare codecs (blosc / zstd / crc32c on each inner chunk) against EncodeChunk;
//   - DatasetWriter split into open / Append / Close, and without compression and checksums.
// The profile calls c-blosc and zstd directly (bench/store_bench.cmake links them).
#include <blosc.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "host/store/codecs.h"
#include "host/store/crc32c.h"
#include "host/store/file_io.h"
#include "host/store/metadata.h"
#include "host/store/sha256.h"
#include "host/store/zarr_array.h"

#if !defined(S2R_STORE_BENCH_NO_DATASET) && __has_include("host/store/dataset.h")
#include "host/store/dataset.h"
#define S2R_STORE_BENCH_HAS_DATASET 1
#else
#define S2R_STORE_BENCH_HAS_DATASET 0
#endif

namespace s2r {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int64_t kCols = 26;            // 2 bodies x (pos 3, quat 4, linvel 3, angvel 3)
constexpr int64_t kShardRows = 65536;    // grid (shard, or chunk for config c) rows
constexpr int64_t kInnerRows = 4096;     // inner chunk rows
constexpr int64_t kEpisodeSteps = 200;   // steps per episode
constexpr double kMB = 1e6;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// --- data ----------------------------------------------------------------------------------------

// splitmix64: a fixed, portable stream of 64-bit values.
struct SplitMix64 {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  double Uniform() { return double(Next() >> 11) * (2.0 / 9007199254740992.0) - 1.0; }
  // Roughly standard normal (sum of four uniforms, variance 4/3, rescaled).
  double Normal() { return (Uniform() + Uniform() + Uniform() + Uniform()) * 0.8660254037844386; }
};

// rows x 26 float32, C order: per body pos(3) quat_wxyz(4) linvel(3) angvel(3), 50 Hz, episodes of
// 200 steps that start from a random rest pose.
std::vector<float> MakeTrajectories(int64_t rows) {
  std::vector<float> out(size_t(rows * kCols));
  SplitMix64 rng{0x5232u};
  const double dt = 0.02;
  double pos[2][3], quat[2][4], vel[2][3], ang[2][3];
  for (int64_t t = 0; t < rows; ++t) {
    if (t % kEpisodeSteps == 0) {
      for (int b = 0; b < 2; ++b) {
        for (int i = 0; i < 3; ++i) pos[b][i] = 0.5 * rng.Uniform() + (i == 2 ? 0.6 : 0.0);
        double n = 0;
        for (int i = 0; i < 4; ++i) {
          quat[b][i] = rng.Normal();
          n += quat[b][i] * quat[b][i];
        }
        for (int i = 0; i < 4; ++i) quat[b][i] /= std::sqrt(n);
        for (int i = 0; i < 3; ++i) vel[b][i] = ang[b][i] = 0;
      }
    }
    float* row = out.data() + t * kCols;
    for (int b = 0; b < 2; ++b) {
      // damped random walk of the velocities (accelerations ~ 2 m/s^2, 10 rad/s^2)
      for (int i = 0; i < 3; ++i) {
        vel[b][i] = 0.98 * vel[b][i] + 2.0 * dt * rng.Normal();
        ang[b][i] = 0.98 * ang[b][i] + 10.0 * dt * rng.Normal();
        pos[b][i] += vel[b][i] * dt;
      }
      // q += dt/2 q (0, w), renormalized
      const double* q = quat[b];
      const double* w = ang[b];
      double dq[4] = {-q[1] * w[0] - q[2] * w[1] - q[3] * w[2], q[0] * w[0] + q[2] * w[2] - q[3] * w[1],
                      q[0] * w[1] - q[1] * w[2] + q[3] * w[0], q[0] * w[2] + q[1] * w[1] - q[2] * w[0]};
      double n = 0;
      for (int i = 0; i < 4; ++i) {
        quat[b][i] += 0.5 * dt * dq[i];
        n += quat[b][i] * quat[b][i];
      }
      for (int i = 0; i < 4; ++i) quat[b][i] /= std::sqrt(n);
      float* r = row + 13 * b;
      for (int i = 0; i < 3; ++i) r[i] = float(pos[b][i]);
      for (int i = 0; i < 4; ++i) r[3 + i] = float(quat[b][i]);
      for (int i = 0; i < 3; ++i) r[7 + i] = float(vel[b][i]);
      for (int i = 0; i < 3; ++i) r[10 + i] = float(ang[b][i]);
    }
  }
  return out;
}

// --- configurations ------------------------------------------------------------------------------

struct Config {
  std::string key;   // "a", "b", "c"
  std::string name;  // as in the results
  std::vector<CodecConfig> codecs;
};

Config MakeConfig(const std::string& key) {
  if (key == "a") {
    return {key, "a_shard_blosc_lz4",
            {ShardingCodec({kInnerRows, kCols}, {BytesCodec(), BloscCodec("lz4", 5, "shuffle", 4), Crc32cCodec()})}};
  }
  if (key == "b") {
    return {key, "b_shard_zstd3", {ShardingCodec({kInnerRows, kCols}, {BytesCodec(), ZstdCodec(3), Crc32cCodec()})}};
  }
  if (key == "c") return {key, "c_chunk_blosc_lz4", {BytesCodec(), BloscCodec("lz4", 5, "shuffle", 4)}};
  throw std::invalid_argument("unknown config '" + key + "' (a, b or c)");
}

ArrayMetadata MakeMetadata(const Config& c, int64_t rows) {
  ArrayMetadata m;
  m.shape = {rows, kCols};
  m.data_type = DataType::kFloat32;
  m.chunk_shape = {kShardRows, kCols};
  m.codecs = c.codecs;
  return m;
}

// --- measuring -----------------------------------------------------------------------------------

struct DiskUse {
  int64_t bytes = 0;   // sum of file sizes
  int64_t blocks = 0;  // allocated, as du reports it (bytes)
  int64_t files = 0;
};

DiskUse MeasureDir(const std::string& dir) {
  namespace fs = std::filesystem;
  DiskUse u;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    struct stat st;
    if (::lstat(e.path().c_str(), &st) != 0) continue;
    if (S_ISREG(st.st_mode)) {
      u.bytes += st.st_size;
      ++u.files;
    }
    u.blocks += int64_t(st.st_blocks) * 512;
  }
  return u;
}

// The shard (chunk) at grid row `k`, at full shape: a pointer into the data, or, for the partial
// last one, into `tail` (the rest zero = fill).
const float* ShardPointer(const std::vector<float>& data, int64_t rows, int64_t k, const std::vector<float>& tail) {
  return (k + 1) * kShardRows <= rows ? data.data() + k * kShardRows * kCols : tail.data();
}

std::vector<float> TailShard(const std::vector<float>& data, int64_t rows) {
  const int64_t k = rows / kShardRows;
  std::vector<float> tail(size_t(kShardRows * kCols), 0.f);
  if (rows % kShardRows != 0) {
    std::copy(data.begin() + k * kShardRows * kCols, data.end(), tail.begin());
  }
  return tail;
}

int64_t NumShards(int64_t rows) { return (rows + kShardRows - 1) / kShardRows; }

struct Run {
  double seconds = 0;
  DiskUse use;
  DiskUse feature_use;  // dataset writer: steps/state alone
};

Run WriteZarrArray(const std::string& dir, const Config& c, const std::vector<float>& data, int64_t rows,
                   const std::vector<float>& tail, int threads) {
  const auto t0 = Clock::now();
  ZarrArray array = ZarrArray::Create(dir, MakeMetadata(c, rows));
  const int64_t shards = NumShards(rows);
  std::vector<std::thread> pool;
  std::vector<std::string> errors(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      try {
        for (int64_t k = t; k < shards; k += threads) {
          array.WriteChunkBytes({k, 0}, ShardPointer(data, rows, k, tail), size_t(kShardRows * kCols) * sizeof(float));
        }
      } catch (const std::exception& e) {
        errors[size_t(t)] = e.what();
      }
    });
  }
  for (auto& th : pool) th.join();
  const auto t1 = Clock::now();
  for (const auto& e : errors) {
    if (!e.empty()) throw std::runtime_error(e);
  }
  Run r;
  r.seconds = Seconds(t0, t1);
  r.use = MeasureDir(dir);
  return r;
}

#if S2R_STORE_BENCH_HAS_DATASET
DatasetSpec MakeDatasetSpec(const Config& c) {
  DatasetSpec spec;
  FeatureSpec f;
  f.name = "state";
  f.dtype = DataType::kFloat32;
  f.shape = {kCols};
  for (const char* body : {"a", "b"}) {
    for (const char* comp : {"x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"}) {
      f.names.push_back(std::string(body) + "_" + comp);
    }
  }
  for (int b = 0; b < 2; ++b) {
    for (const char* u : {"m", "m", "m", "1", "1", "1", "1", "m/s", "m/s", "m/s", "rad/s", "rad/s", "rad/s"}) {
      f.units.push_back(u);
    }
  }
  f.frame = "world";
  f.rotation = "quat_wxyz";
  f.description = "synthetic state of two free bodies (benchmark data)";
  spec.features.push_back(f);
  spec.tasks.push_back({"bench", "benchmark data"});
  spec.control_hz = 50;
  spec.storage.chunk_steps = kInnerRows;
  spec.storage.shard_steps = kShardRows;
  spec.storage.compressor = c.key == "a" ? "blosc-lz4" : "zstd";
  spec.storage.level = c.key == "a" ? 5 : 3;
  spec.storage.checksum = true;
  spec.storage.transpose = false;  // the codec chains tensorstore and zarr-python write in this bench
  return spec;
}

// Raw bytes of everything the dataset writer stores for `rows` steps: the feature, the built-in
// step arrays and the built-in episode arrays.
int64_t DatasetRawBytes(int64_t rows) {
  int64_t per_step = kCols * 4, per_episode = 0;
  for (const BuiltinColumn& b : BuiltinStepColumns()) per_step += int64_t(DataTypeSize(b.dtype));
  for (const BuiltinColumn& b : BuiltinEpisodeColumns()) per_episode += int64_t(DataTypeSize(b.dtype));
  return rows * per_step + rows / kEpisodeSteps * per_episode;
}

Run WriteDataset(const std::string& dir, const Config& c, const std::vector<float>& data, int64_t rows, int threads) {
  const DatasetSpec spec = MakeDatasetSpec(c);
  WriterOptions options;
  options.threads = threads;
  const auto t0 = Clock::now();
  {
    DatasetWriter writer(dir, spec, OpenMode::kCreate, options);
    EpisodeView ep;
    ep.length = kEpisodeSteps;
    ep.features = {nullptr};
    for (int64_t e = 0; e * kEpisodeSteps < rows; ++e) {
      ep.seed = uint64_t(e);
      ep.features[0] = data.data() + e * kEpisodeSteps * kCols;
      writer.Append(ep);
    }
    writer.Close();
  }
  const auto t1 = Clock::now();
  Run r;
  r.seconds = Seconds(t0, t1);
  r.use = MeasureDir(dir);
  r.feature_use = MeasureDir(dir + "/steps/state");
  return r;
}

// The dataset writer's time split: opening (creating every node), the producer's time inside
// Append (copies into staging, plus backpressure waits) and Close (the rest of the encoding and
// writing, tails and the last commit). `bare`: no compression and no checksum, which leaves the
// writer's file and commit work.
json ProfileDataset(const std::string& dir, const Config& c, const std::vector<float>& data, int64_t rows, int threads,
                    bool bare) {
  std::filesystem::remove_all(dir);
  DatasetSpec spec = MakeDatasetSpec(c);
  if (bare) {
    spec.storage.compressor = "none";
    spec.storage.checksum = false;
  }
  WriterOptions options;
  options.threads = threads;
  double append_s = 0;
  const auto t0 = Clock::now();
  DatasetWriter writer(dir, spec, OpenMode::kCreate, options);
  const auto t_open = Clock::now();
  EpisodeView ep;
  ep.length = kEpisodeSteps;
  ep.features = {nullptr};
  for (int64_t e = 0; e * kEpisodeSteps < rows; ++e) {
    ep.seed = uint64_t(e);
    ep.features[0] = data.data() + e * kEpisodeSteps * kCols;
    const auto a0 = Clock::now();
    writer.Append(ep);
    append_s += Seconds(a0, Clock::now());
  }
  const auto t_close = Clock::now();
  writer.Close();
  const auto t1 = Clock::now();
  const DiskUse use = MeasureDir(dir);
  std::filesystem::remove_all(dir);
  const double raw = double(rows * kCols * 4);
  return {{"writer", "s2r_dataset_writer_profile"},
          {"config", bare ? std::string("none_no_checksum") : c.name},
          {"threads", threads},
          {"raw_mb", raw / kMB},
          {"seconds", Seconds(t0, t1)},
          {"mb_per_s", raw / kMB / Seconds(t0, t1)},
          {"open_s", Seconds(t0, t_open)},
          {"append_s", append_s},
          {"close_s", Seconds(t_close, t1)},
          {"files", use.files},
          {"total_stored_mb", double(use.bytes) / kMB}};
}
#endif

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// --- profile: the zarr_array path stage by stage ----------------------------------------------------

struct Stages {
  double encode = 0, mkdir = 0, write = 0, fsync = 0, rename_dirsync = 0;
  double encode_cpu = 0, io_cpu = 0;  // CPU time of the calling thread: encoding, and everything else
  Stages& operator+=(const Stages& o) {
    encode += o.encode, mkdir += o.mkdir, write += o.write, fsync += o.fsync, rename_dirsync += o.rename_dirsync;
    encode_cpu += o.encode_cpu, io_cpu += o.io_cpu;
    return *this;
  }
};

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

void CheckSys(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what + ": " + std::strerror(errno));
}

// MakeDirs, then what WriteFileAtomic does (temp file, write, fsync, rename, directory fsync),
// with a clock between stages.
void ProfiledWriteFile(const std::string& file, const uint8_t* bytes, size_t n, Stages* s) {
  auto t1 = Clock::now();
  const double c1 = ThreadCpuSeconds();
  const std::string dir = file.substr(0, file.find_last_of('/'));
  MakeDirs(dir);
  auto t2 = Clock::now();
  const std::string tmp = file + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  CheckSys(fd >= 0, "open " + tmp);
  size_t done = 0;
  while (done < n) {
    ssize_t w = ::write(fd, bytes + done, n - done);
    CheckSys(w > 0 || errno == EINTR, "write " + tmp);
    if (w > 0) done += size_t(w);
  }
  auto t3 = Clock::now();
  CheckSys(::fsync(fd) == 0, "fsync " + tmp);
  ::close(fd);
  auto t4 = Clock::now();
  CheckSys(::rename(tmp.c_str(), file.c_str()) == 0, "rename " + tmp);
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  CheckSys(dfd >= 0, "open " + dir);
  ::fsync(dfd);
  ::close(dfd);
  auto t5 = Clock::now();
  s->io_cpu += ThreadCpuSeconds() - c1;
  s->mkdir += Seconds(t1, t2);
  s->write += Seconds(t2, t3);
  s->fsync += Seconds(t3, t4);
  s->rename_dirsync += Seconds(t4, t5);
}

// --- profile: a lean encoder, to size what EncodeChunk leaves on the table ------------------------
//
// The same bytes on disk as EncodeChunk (for data without all-fill inner chunks), made without
// copies: each inner chunk is compressed straight from the caller's rows (inner chunks of a
// [65536, 26] shard are contiguous row ranges) into one reused per-thread shard buffer, its
// crc32c computed with the SSE4.2 instruction and appended in place, then the index. zstd reuses
// one context per thread.

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(const uint8_t* p, size_t n) {
  uint64_t c = 0xFFFFFFFFu;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
  }
  uint32_t c32 = uint32_t(c);
  for (; n > 0; ++p, --n) c32 = __builtin_ia32_crc32qi(c32, *p);
  return ~c32;
}
#endif

uint32_t FastCrc32c(const uint8_t* p, size_t n) {
#if defined(__x86_64__)
  static const bool hw = __builtin_cpu_supports("sse4.2");
  if (hw) return Crc32cSse42(p, n);
#endif
  return Crc32c(p, n);
}

void PutLe32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}

class LeanEncoder {
 public:
  LeanEncoder() : zctx_(ZSTD_createCCtx()) { ZSTD_CCtx_setParameter(zctx_, ZSTD_c_compressionLevel, 3); }
  ~LeanEncoder() { ZSTD_freeCCtx(zctx_); }
  LeanEncoder(const LeanEncoder&) = delete;
  LeanEncoder& operator=(const LeanEncoder&) = delete;

  // Encodes the shard (chunk) of full shape at `shard` whose first `valid_rows` rows lie inside
  // the array into `out` (grown when too small, otherwise reused as it is); inner chunks wholly
  // past the end are left out (all fill). Returns the byte count of the encoded shard.
  size_t Encode(const Config& c, const uint8_t* shard, int64_t valid_rows, std::vector<uint8_t>* out) {
    std::vector<uint8_t>& out_ = *out;
    auto Reserve = [&](size_t n) {
      if (out_.size() < n) out_.resize(n);
    };
    const size_t shard_bytes = size_t(kShardRows * kCols * 4);
    if (c.key == "c") {
      Reserve(shard_bytes + BLOSC_MAX_OVERHEAD);
      int n = blosc_compress_ctx(5, 1, 4, shard_bytes, shard, out_.data(), out_.size(), "lz4", 0, 1);
      if (n <= 0) throw std::runtime_error("blosc failed");
      return size_t(n);
    }
    const int64_t inner = kShardRows / kInnerRows;
    const size_t inner_bytes = size_t(kInnerRows * kCols * 4);
    const size_t bound = std::max<size_t>(inner_bytes + BLOSC_MAX_OVERHEAD, ZSTD_compressBound(inner_bytes)) + 4;
    Reserve(size_t(inner) * bound + size_t(inner) * 16 + 4);
    std::vector<uint64_t> index(size_t(2 * inner), ~uint64_t(0));
    size_t pos = 0;
    for (int64_t u = 0; u < inner; ++u) {
      if (u * kInnerRows >= valid_rows) continue;
      const uint8_t* src = shard + size_t(u) * inner_bytes;
      size_t n;
      if (c.key == "a") {
        int r = blosc_compress_ctx(5, 1, 4, inner_bytes, src, out_.data() + pos, bound - 4, "lz4", 0, 1);
        if (r <= 0) throw std::runtime_error("blosc failed");
        n = size_t(r);
      } else {
        n = ZSTD_compress2(zctx_, out_.data() + pos, bound - 4, src, inner_bytes);
        if (ZSTD_isError(n)) throw std::runtime_error("zstd failed");
      }
      PutLe32(out_.data() + pos + n, FastCrc32c(out_.data() + pos, n));
      index[size_t(2 * u)] = pos;
      index[size_t(2 * u + 1)] = n + 4;
      pos += n + 4;
    }
    std::memcpy(out_.data() + pos, index.data(), index.size() * 8);
    PutLe32(out_.data() + pos + index.size() * 8, FastCrc32c(out_.data() + pos, index.size() * 8));
    return pos + index.size() * 8 + 4;
  }

 private:
  ZSTD_CCtx* zctx_;
};

// The zarr_array path with a clock between stages. `lean`: LeanEncoder instead of EncodeChunk
// (the result is read back through ZarrArray and compared with the source). `io_threads` 0: each
// of the `threads` threads encodes and then writes its own shards, as ZarrArray::WriteChunkBytes
// does; > 0: the `threads` threads only encode and hand each shard to `io_threads` threads that do
// the durable writes (at most 2 x io_threads shards wait between them), so that fsync waits overlap
// with encoding and with each other, as tensorstore's separate data-copy and file-I/O pools do.
json ProfileZarrArray(const std::string& dir, const Config& c, const std::vector<float>& data, int64_t rows,
                      const std::vector<float>& tail, int threads, bool lean, int io_threads) {
  std::filesystem::remove_all(dir);
  const auto t0 = Clock::now();
  ZarrArray array = ZarrArray::Create(dir, MakeMetadata(c, rows));
  const auto t_create = Clock::now();
  const int64_t shards = NumShards(rows);
  std::vector<Stages> per(static_cast<size_t>(threads + io_threads));

  // encoded shards on their way to the I/O threads, and spare buffers
  struct Encoded {
    int64_t k;
    std::vector<uint8_t> bytes;
    size_t n;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Encoded> ready;
  std::vector<std::vector<uint8_t>> spare;
  int encoders_left = threads;

  auto encode = [&](LeanEncoder* encoder, int64_t k, std::vector<uint8_t>* out, Stages* s) -> size_t {
    const float* shard = ShardPointer(data, rows, k, tail);
    const double c0 = ThreadCpuSeconds();
    const auto e0 = Clock::now();
    size_t n;
    if (lean) {
      n = encoder->Encode(c, reinterpret_cast<const uint8_t*>(shard), rows - k * kShardRows, out);
    } else {
      const ArrayMetadata& m = array.metadata();
      *out = EncodeChunk(m.codecs, m.data_type, m.chunk_shape, m.fill_value, reinterpret_cast<const uint8_t*>(shard),
                         array.ChunkPath({k, 0}));
      n = out->size();
    }
    s->encode += Seconds(e0, Clock::now());
    s->encode_cpu += ThreadCpuSeconds() - c0;
    return n;
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      LeanEncoder encoder;
      std::vector<uint8_t> own;
      Stages* s = &per[size_t(t)];
      for (int64_t k = t; k < shards; k += threads) {
        if (io_threads == 0) {
          const size_t n = encode(&encoder, k, &own, s);
          ProfiledWriteFile(array.ChunkPath({k, 0}), own.data(), n, s);
          continue;
        }
        std::vector<uint8_t> buf;
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return ready.size() < size_t(2 * io_threads); });
          if (!spare.empty()) {
            buf = std::move(spare.back());
            spare.pop_back();
          }
        }
        const size_t n = encode(&encoder, k, &buf, s);
        {
          std::lock_guard<std::mutex> lock(mu);
          ready.push_back({k, std::move(buf), n});
        }
        cv.notify_all();
      }
      std::lock_guard<std::mutex> lock(mu);
      --encoders_left;
      cv.notify_all();
    });
  }
  for (int t = 0; t < io_threads; ++t) {
    pool.emplace_back([&, t] {
      Stages* s = &per[size_t(threads + t)];
      for (;;) {
        Encoded e;
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return !ready.empty() || encoders_left == 0; });
          if (ready.empty()) return;
          e = std::move(ready.front());
          ready.pop_front();
        }
        cv.notify_all();
        ProfiledWriteFile(array.ChunkPath({e.k, 0}), e.bytes.data(), e.n, s);
        std::lock_guard<std::mutex> lock(mu);
        spare.push_back(std::move(e.bytes));
      }
    });
  }
  for (auto& th : pool) th.join();
  const auto t1 = Clock::now();
  Stages sum;
  for (const Stages& s : per) sum += s;
  const DiskUse use = MeasureDir(dir);
  const std::vector<float> back = ZarrArray::Open(dir).ReadAll<float>();
  const bool same =
      back.size() == data.size() && std::memcmp(back.data(), data.data(), data.size() * sizeof(float)) == 0;
  std::filesystem::remove_all(dir);
  const double raw = double(rows * kCols * 4);
  return {{"writer", lean ? "lean_prototype_profile" : "s2r_zarr_array_profile"},
          {"encoder", lean ? "lean" : "EncodeChunk"},
          {"read_back_equal", same},
          {"config", c.name},
          {"threads", threads},
          {"io_threads", io_threads},
          {"raw_mb", raw / kMB},
          {"seconds", Seconds(t0, t1)},
          {"mb_per_s", raw / kMB / Seconds(t0, t1)},
          {"stored_mb", double(use.bytes) / kMB},
          {"ratio", raw / double(use.bytes)},
          {"create_s", Seconds(t0, t_create)},
          // thread-seconds summed over the writer threads
          {"encode_s", sum.encode},
          {"mkdir_s", sum.mkdir},
          {"write_s", sum.write},
          {"fsync_s", sum.fsync},
          {"rename_dirsync_s", sum.rename_dirsync},
          {"encode_cpu_s", sum.encode_cpu},
          {"io_cpu_s", sum.io_cpu}};
}

// The bare codec work of one configuration, single-threaded: each inner chunk (config c: each
// chunk) through blosc or zstd and crc32c directly, plus the copies EncodeChunk makes.
json ProfileCodecFloor(const Config& c, const std::vector<float>& data, int64_t rows, const std::vector<float>& tail) {
  const bool sharded = c.key != "c";
  const int64_t unit_rows = sharded ? kInnerRows : kShardRows;
  const size_t unit_bytes = size_t(unit_rows * kCols * 4);
  std::vector<uint8_t> in(unit_bytes), out(unit_bytes + BLOSC_MAX_OVERHEAD + ZSTD_compressBound(unit_bytes));
  double t_copy = 0, t_compress = 0, t_crc = 0, t_crc_hw = 0;
  size_t compressed = 0;
  uint32_t crc_sink = 0;
  ZSTD_CCtx* zctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(zctx, ZSTD_c_compressionLevel, 3);
  const int64_t shards = NumShards(rows);
  for (int64_t k = 0; k < shards; ++k) {
    const auto* shard = reinterpret_cast<const uint8_t*>(ShardPointer(data, rows, k, tail));
    for (int64_t u = 0; u < kShardRows / unit_rows; ++u) {
      auto t0 = Clock::now();
      std::memcpy(in.data(), shard + size_t(u) * unit_bytes, unit_bytes);
      auto t1 = Clock::now();
      size_t n;
      if (c.key == "b") {
        n = ZSTD_compress2(zctx, out.data(), out.size(), in.data(), in.size());
      } else {
        n = size_t(blosc_compress_ctx(5, 1, 4, in.size(), in.data(), out.data(), out.size(), "lz4", 0, 1));
      }
      auto t2 = Clock::now();
      if (sharded) crc_sink ^= Crc32c(out.data(), n);
      auto t3 = Clock::now();
      if (sharded) crc_sink ^= FastCrc32c(out.data(), n);
      t_crc_hw += Seconds(t3, Clock::now());
      compressed += n;
      t_copy += Seconds(t0, t1);
      t_compress += Seconds(t1, t2);
      t_crc += Seconds(t2, t3);
    }
  }
  ZSTD_freeCCtx(zctx);
  const double raw = double(shards * kShardRows * kCols * 4);
  // EncodeChunk on the same shards, single-threaded, for comparison with the bare codecs
  const std::vector<int64_t> shape = {kShardRows, kCols};
  const FillValue fill(4, 0);
  auto e0 = Clock::now();
  size_t enc_bytes = 0;
  for (int64_t k = 0; k < shards; ++k) {
    enc_bytes += EncodeChunk(c.codecs, DataType::kFloat32, shape, fill,
                             reinterpret_cast<const uint8_t*>(ShardPointer(data, rows, k, tail)), "profile")
                     .size();
  }
  auto e1 = Clock::now();
  return {{"writer", "s2r_codec_floor_profile"},
          {"config", c.name},
          {"threads", 1},
          {"raw_mb_padded", raw / kMB},
          {"copy_s", t_copy},
          {"compress_s", t_compress},
          {"crc32c_s", t_crc},            // s2r::Crc32c (slicing-by-8)
          {"crc32c_sse42_s", t_crc_hw},   // the SSE4.2 instruction, one stream
          {"compress_mb_per_s", raw / kMB / t_compress},
          {"bare_mb", double(compressed) / kMB},
          {"encode_chunk_s", Seconds(e0, e1)},
          {"encode_chunk_mb_per_s", raw / kMB / Seconds(e0, e1)},
          {"encode_chunk_mb", double(enc_bytes) / kMB},
          {"crc_sink", crc_sink}};
}

// --- main ----------------------------------------------------------------------------------------

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t next = s.find(',', pos);
    if (next == std::string::npos) next = s.size();
    if (next > pos) out.push_back(s.substr(pos, next - pos));
    pos = next + 1;
  }
  return out;
}

int Main(int argc, char** argv) {
  double mb = 256;
  int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  int repeats = 3;
  std::string configs = "a,b,c", writers = "zarr_array,dataset_writer", base;
  std::string dump, source;
  bool keep = false, profile = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--mb") mb = std::stod(value());
    else if (a == "--threads") threads = std::stoi(value());
    else if (a == "--repeats") repeats = std::stoi(value());
    else if (a == "--config") configs = value();
    else if (a == "--writer") writers = value();
    else if (a == "--dir") base = value();
    else if (a == "--dump-data") dump = value();
    else if (a == "--data") source = value();
    else if (a == "--keep") keep = true;
    else if (a == "--profile") profile = true;
    else if (a == "--versions") {
      json v = {{"c_blosc", BLOSC_VERSION_STRING}, {"zstd", ZSTD_versionString()}};
      std::printf("%s\n", v.dump().c_str());
      return 0;
    }
    else if (a == "-h" || a == "--help") {
      std::printf(
          "usage: s2r_store_bench [--mb 256 | --data FILE] [--threads T] [--repeats 3] [--config a,b,c]\n"
          "                       [--writer zarr_array,dataset_writer] [--dir DIR] [--keep] [--dump-data FILE]\n"
          "                       [--profile] [--versions]\n"
          "Prints JSON lines. --keep leaves DIR/s2r-WRITER-CONFIG of the last repeat for verification.\n"
          "--dump-data writes the source data (rows x 26 float32, little-endian, C order) and exits;\n"
          "--data reads it back instead of generating it. --profile: time splits (see the file's comment).\n");
      return 0;
    } else {
      throw std::invalid_argument("unknown argument '" + a + "' (see --help)");
    }
  }
  if (threads < 1 || repeats < 1 || mb <= 0) throw std::invalid_argument("--threads, --repeats, --mb must be positive");
  int64_t rows = std::max<int64_t>(1, int64_t(mb * kMB / double(kCols * 4) / kEpisodeSteps)) * kEpisodeSteps;

  std::vector<float> data;
  if (source.empty()) {
    data = MakeTrajectories(rows);
  } else {
    // the bytes of an earlier --dump-data (any whole number of episodes)
    auto bytes = ReadFileIfExists(source);
    if (!bytes) throw std::invalid_argument(source + ": no such file");
    const size_t episode_bytes = size_t(kEpisodeSteps * kCols) * sizeof(float);
    if (bytes->empty() || bytes->size() % episode_bytes != 0) {
      throw std::invalid_argument(source + ": not a whole number of 200-step episodes of 26 float32");
    }
    data.resize(bytes->size() / sizeof(float));
    std::memcpy(data.data(), bytes->data(), bytes->size());
    rows = int64_t(data.size()) / kCols;
  }
  const double raw = double(data.size() * sizeof(float));
  if (!dump.empty()) {
    WriteFileAtomic(dump, data.data(), data.size() * sizeof(float));
    json d = {{"rows", rows}, {"cols", kCols}, {"dtype", "float32"}, {"raw_mb", raw / kMB},
              {"sha256", Sha256Hex(data.data(), data.size() * sizeof(float))}, {"file", dump}};
    std::printf("%s\n", d.dump().c_str());
    return 0;
  }
  if (base.empty()) throw std::invalid_argument("--dir DIR is required (a directory on the disk under test)");
  std::filesystem::create_directories(base);
  const std::vector<float> tail = TailShard(data, rows);

  if (profile) {
    for (const std::string& key : Split(configs)) {
      const Config c = MakeConfig(key);
      std::printf("%s\n", ProfileCodecFloor(c, data, rows, tail).dump().c_str());
      std::vector<int> counts = {1, threads, 2 * threads};
      counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
      for (bool lean : {false, true}) {
        for (int t : counts) {
          std::printf("%s\n", ProfileZarrArray(base + "/s2r-profile", c, data, rows, tail, t, lean, 0).dump().c_str());
          std::fflush(stdout);
        }
        // encoding on `threads` threads, durable writes on 4 others
        std::printf("%s\n", ProfileZarrArray(base + "/s2r-profile", c, data, rows, tail, threads, lean, 4).dump().c_str());
        std::fflush(stdout);
      }
#if S2R_STORE_BENCH_HAS_DATASET
      if (key != "c") {
        std::printf("%s\n", ProfileDataset(base + "/s2r-profile", c, data, rows, threads, false).dump().c_str());
        if (key == "a") {
          std::printf("%s\n", ProfileDataset(base + "/s2r-profile", c, data, rows, threads, true).dump().c_str());
        }
        std::fflush(stdout);
      }
#endif
    }
    return 0;
  }

  for (const std::string& writer : Split(writers)) {
    for (const std::string& key : Split(configs)) {
      const Config c = MakeConfig(key);
      if (writer == "dataset_writer" && key == "c") continue;  // dataset step arrays are always sharded
      const std::string dir = base + "/s2r-" + writer + "-" + c.name;
      std::vector<double> times;
      Run last;
      for (int r = 0; r < repeats; ++r) {
        std::filesystem::remove_all(dir);
        if (writer == "zarr_array") {
          last = WriteZarrArray(dir, c, data, rows, tail, threads);
#if S2R_STORE_BENCH_HAS_DATASET
        } else if (writer == "dataset_writer") {
          last = WriteDataset(dir, c, data, rows, threads);
#endif
        } else {
          throw std::invalid_argument("writer '" + writer + "' is unknown or not built");
        }
        times.push_back(last.seconds);
        if (!(keep && r + 1 == repeats)) std::filesystem::remove_all(dir);
      }
      const double med = Median(times), best = *std::min_element(times.begin(), times.end());
      json out = {{"writer", "s2r_" + writer},
                  {"config", c.name},
                  {"threads", threads},
                  {"rows", rows},
                  {"raw_mb", raw / kMB},
                  {"seconds", med},
                  {"mb_per_s", raw / kMB / med},
                  {"best_seconds", best},
                  {"best_mb_per_s", raw / kMB / best},
                  {"run_seconds", times},
                  {"stored_mb", double(last.use.bytes) / kMB},
                  {"disk_mb", double(last.use.blocks) / kMB},
                  {"files", last.use.files},
                  {"ratio", raw / double(last.use.bytes)}};
#if S2R_STORE_BENCH_HAS_DATASET
      if (writer == "dataset_writer") {
        // raw_mb / mb_per_s: the feature; ratio: the feature's array alone
        const double total = double(DatasetRawBytes(rows));
        out["ratio"] = raw / double(last.feature_use.bytes);
        out["feature_stored_mb"] = double(last.feature_use.bytes) / kMB;
        out["stored_mb"] = double(last.feature_use.bytes) / kMB;
        out["total_stored_mb"] = double(last.use.bytes) / kMB;
        out["total_raw_mb"] = total / kMB;
        out["total_mb_per_s"] = total / kMB / med;
        out["total_ratio"] = total / double(last.use.bytes);
      }
#endif
      if (keep) out["store"] = dir;
      std::printf("%s\n", out.dump().c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace s2r

int main(int argc, char** argv) {
  try {
    return s2r::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "s2r_store_bench: %s\n", e.what());
    return 1;
  }
}
