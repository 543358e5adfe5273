// The s2r dataset on top of the Zarr store: schema, streaming writer, commits, resume, and crash
// safety under real SIGKILLs of a writer process (tests/host/dataset_fixture.cc).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "host/store/dataset.h"
#include "host/store/file_io.h"
#include "host/store/sha256.h"
#include "host/store/store_error.h"
#include "host/store/zarr_array.h"
#include "tests/host/dataset_fixture.h"
#include "tests/host/store_test_util.h"

extern char** environ;

namespace s2r {
namespace {

StorageSpec SmallStorage() {
  StorageSpec s;
  s.chunk_steps = 16;
  s.shard_steps = 64;
  s.chunk_episodes = 8;
  return s;
}

template <typename T>
std::vector<T> As(const std::vector<uint8_t>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));  // empty: null data()
  return out;
}

// EXPECT_EQ that leaves the enclosing function (returning E) at the first mismatch.
#define S2R_EXPECT_OR_RETURN(a, b)   \
  do {                               \
    EXPECT_EQ(a, b);                 \
    if (!((a) == (b))) return E;     \
  } while (0)

// Checks every committed episode of the store at `path` against the fixture formulas, and that
// the step rows are contiguous, gap-free and in episode order. Returns the committed count.
int64_t CheckFixtureStore(const std::string& path) {
  DatasetReader r(path);
  const int64_t E = r.episodes();
  const std::vector<int64_t> start = r.EpisodeStarts(), length = r.EpisodeLengths();
  const std::vector<uint64_t> seed = r.EpisodeSeeds();
  const std::vector<uint8_t> success = r.EpisodeSuccess();
  const std::vector<int32_t> label = r.EpisodeFailureLabels(), task = r.EpisodeTaskIndices();
  const std::vector<double> friction = r.EpisodeParam("friction"), mass = r.EpisodeParam("mass");
  const std::vector<float> obs = As<float>(r.StepRows("obs", 0, r.steps()));
  const std::vector<float> action = As<float>(r.StepRows("action", 0, r.steps()));
  const std::vector<int64_t> ep_index = As<int64_t>(r.StepRows("episode_index", 0, r.steps()));
  const std::vector<int32_t> frame = As<int32_t>(r.StepRows("frame_index", 0, r.steps()));
  const std::vector<uint8_t> first = r.StepRows("is_first", 0, r.steps());
  const std::vector<uint8_t> last = r.StepRows("is_last", 0, r.steps());
  const std::vector<uint8_t> terminal = r.StepRows("is_terminal", 0, r.steps());
  const std::vector<double> ts = As<double>(r.StepRows("timestamp", 0, r.steps()));
  const std::vector<float> reward = As<float>(r.StepRows("reward", 0, r.steps()));
  int64_t next = 0;
  FixtureEpisode want;
  for (int64_t e = 0; e < E; ++e) {
    MakeFixtureEpisode(e, &want);
    const int64_t L = want.view.length;
    EXPECT_EQ(start[size_t(e)], next) << "episode " << e;
    EXPECT_EQ(length[size_t(e)], L) << "episode " << e;
    EXPECT_EQ(seed[size_t(e)], want.view.seed);
    EXPECT_EQ(success[size_t(e)] != 0, want.view.success);
    EXPECT_EQ(label[size_t(e)], want.view.failure_label);
    EXPECT_EQ(task[size_t(e)], want.view.task_index);
    EXPECT_EQ(friction[size_t(e)], want.params[0]);
    EXPECT_EQ(mass[size_t(e)], want.params[1]);
    if (start[size_t(e)] != next || length[size_t(e)] != L) return E;  // rows below would all differ
    for (int64_t k = 0; k < L; ++k) {
      const size_t row = size_t(next + k);
      for (int j = 0; j < 4; ++j) S2R_EXPECT_OR_RETURN(obs[row * 4 + size_t(j)], want.obs[size_t(k * 4 + j)]);
      for (int j = 0; j < 2; ++j) S2R_EXPECT_OR_RETURN(action[row * 2 + size_t(j)], want.action[size_t(k * 2 + j)]);
      S2R_EXPECT_OR_RETURN(ep_index[row], e);
      S2R_EXPECT_OR_RETURN(frame[row], k);
      S2R_EXPECT_OR_RETURN(first[row], k == 0 ? 1 : 0);
      S2R_EXPECT_OR_RETURN(last[row], k == L - 1 ? 1 : 0);
      S2R_EXPECT_OR_RETURN(terminal[row], k == L - 1 && want.view.terminal ? 1 : 0);
      S2R_EXPECT_OR_RETURN(ts[row], double(k) / 50.0);
      S2R_EXPECT_OR_RETURN(reward[row], want.reward[size_t(k)]);
    }
    next += L;
  }
  EXPECT_EQ(next, r.steps());
  return E;
}

void WriteFixtureEpisodes(DatasetWriter* w, int64_t from, int64_t to) {
  FixtureEpisode ep;
  for (int64_t e = from; e < to; ++e) {
    MakeFixtureEpisode(e, &ep);
    w->Append(ep.view);
  }
}

// SHA-256 of every array's decoded contents, by path.
std::map<std::string, std::string> ArrayHashes(const std::string& root) {
  std::map<std::string, std::string> out;
  for (const ZarrNode& n : ListNodes(root)) {
    if (!n.is_array) continue;
    std::vector<uint8_t> bytes = ZarrArray::Open(JoinPath(root, n.path)).ReadAllBytes();
    Sha256 h;
    h.Update(bytes.data(), bytes.size());
    out[n.path] = h.HexFinal();
  }
  return out;
}

TEST(StoreDataset, RoundTripThroughReader) {
  const std::string dir = FreshDir() + "/ds";
  {
    DatasetWriter w(dir, FixtureDatasetSpec(SmallStorage()), OpenMode::kCreate);
    WriteFixtureEpisodes(&w, 0, 57);
    w.Close();
    EXPECT_EQ(w.episodes_committed(), 57);
  }
  EXPECT_EQ(CheckFixtureStore(dir), 57);
  DatasetReader r(dir);
  int64_t steps = 0;
  for (int64_t e = 0; e < 57; ++e) steps += FixtureLength(e);
  EXPECT_EQ(r.steps(), steps);
  // The stored schema reads back as the spec that wrote it.
  // (The writer adds its version and git revision to the generator.)
  nlohmann::json stored = r.spec().ToJson();
  stored["generator"].erase("s2r_version");
  stored["generator"].erase("git_revision");
  EXPECT_EQ(stored, FixtureDatasetSpec(SmallStorage()).ToJson());
  const nlohmann::json& gen = r.root_attributes()["s2r"]["generator"];
  EXPECT_TRUE(gen.contains("s2r_version"));
  EXPECT_TRUE(gen.contains("git_revision"));
  // Per-array attributes carry units and names; dimension names label the axes.
  ZarrArray obs = ZarrArray::Open(dir + "/steps/obs");
  EXPECT_EQ(obs.metadata().attributes["units"], nlohmann::json({"m", "m", "m", "rad"}));
  ASSERT_TRUE(obs.metadata().dimension_names.has_value());
  EXPECT_EQ(*(*obs.metadata().dimension_names)[0], "step");
  EXPECT_TRUE(obs.metadata().IsSharded());
}

// A float feature read as doubles whatever precision wrote it (a float32 store read by a float64
// build: s2r replay, inspect's expert agreement): float32 and float64 features value for value, a
// range of steps, and anything that is not a float feature named.
TEST(StoreDataset, StepValuesReadFloatFeaturesAsDoubles) {
  const std::string dir = FreshDir() + "/ds";
  DatasetSpec spec = FixtureDatasetSpec(SmallStorage());
  spec.features[1].dtype = DataType::kFloat64;  // action: float64, obs: float32
  {
    DatasetWriter w(dir, spec, OpenMode::kCreate);
    std::vector<double> action;
    for (int64_t e = 0; e < 9; ++e) {
      FixtureEpisode ep;
      MakeFixtureEpisode(e, &ep);
      action.assign(ep.action.begin(), ep.action.end());
      for (size_t i = 0; i < action.size(); ++i) action[i] += 1e-12 * double(i + 1);  // not a float32 value
      ep.view.features = {ep.obs.data(), action.data()};
      w.Append(ep.view);
    }
    w.Close();
  }
  DatasetReader r(dir);
  const std::vector<int64_t> start = r.EpisodeStarts();
  const std::vector<double> obs = r.StepValues("obs", 0, r.steps());
  const std::vector<double> action = r.StepValues("action", start[3], FixtureLength(3));
  ASSERT_EQ(obs.size(), size_t(r.steps()) * 4);
  ASSERT_EQ(action.size(), size_t(FixtureLength(3)) * 2);
  for (int64_t e = 0; e < 9; ++e) {
    for (int64_t k = 0; k < FixtureLength(e); ++k) {
      for (int64_t j = 0; j < 4; ++j) ASSERT_EQ(obs[size_t((start[e] + k) * 4 + j)], double(FixtureObs(e, k, j)));
    }
  }
  for (int64_t k = 0; k < FixtureLength(3); ++k) {
    for (int64_t j = 0; j < 2; ++j) {
      ASSERT_EQ(action[size_t(k * 2 + j)], double(FixtureAction(3, k, j)) + 1e-12 * double(k * 2 + j + 1));
    }
  }
  for (const char* bad : {"episode_index", "velocity"}) {
    try {
      r.StepValues(bad, 0, 1);
      ADD_FAILURE() << bad << " read as a float feature";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find(dir + "/steps/" + bad), std::string::npos) << e.what();
    }
  }
}

// A store created and closed before its first episode (what a kill just after creation leaves)
// reads as empty: every per-episode and per-step read returns nothing, through the same checks
// (the sanitizer build once caught the test's own copy of an empty read through a null pointer,
// found only when a random kill landed there).
TEST(StoreDataset, AStoreWithNoEpisodeReadsAsEmpty) {
  const std::string dir = FreshDir() + "/ds";
  {
    DatasetWriter w(dir, FixtureDatasetSpec(SmallStorage()), OpenMode::kCreate);
    w.Close();
    EXPECT_EQ(w.episodes_committed(), 0);
  }
  EXPECT_EQ(CheckFixtureStore(dir), 0);
  DatasetReader r(dir);
  EXPECT_EQ(r.steps(), 0);
  EXPECT_TRUE(r.StepRows("obs", 0, 0).empty());
  EXPECT_TRUE(r.EpisodeParam("friction").empty());
}

// Steps commit at shard boundaries: each commit covers exactly the episodes that end inside the
// completed shards, and the final Close commits the rest.
TEST(StoreDataset, CommitsFollowShardBoundaries) {
  const std::string dir = FreshDir() + "/ds";
  std::vector<std::pair<int64_t, int64_t>> commits;
  WriterOptions opt;
  opt.min_commit_interval_s = 0;
  opt.on_commit = [&](int64_t e, int64_t s) { commits.emplace_back(e, s); };
  const int64_t N = 40;
  {
    DatasetWriter w(dir, FixtureDatasetSpec(SmallStorage()), OpenMode::kCreate, opt);
    WriteFixtureEpisodes(&w, 0, N);
    w.Close();
  }
  // Expected: after appending episode e, if a new 64-step boundary is complete, commit every
  // episode ending at or before it.
  std::vector<std::pair<int64_t, int64_t>> want;
  int64_t steps = 0, enqueued = 0;
  std::vector<int64_t> ends;
  for (int64_t e = 0; e < N; ++e) {
    steps += FixtureLength(e);
    ends.push_back(steps);
    const int64_t durable = steps / 64 * 64;
    int64_t E = enqueued;
    while (E < int64_t(ends.size()) && ends[size_t(E)] <= durable) ++E;
    if (E > enqueued) {
      want.emplace_back(E, ends[size_t(E - 1)]);
      enqueued = E;
    }
  }
  if (enqueued < N) want.emplace_back(N, steps);
  EXPECT_EQ(commits, want);
  EXPECT_GT(want.size(), 5u);
}

TEST(StoreDataset, ResumeContinuesWithoutGapsOrDuplicates) {
  const std::string base = FreshDir();
  const std::string once = base + "/once", twice = base + "/twice";
  {
    DatasetWriter w(once, FixtureDatasetSpec(SmallStorage()), OpenMode::kCreate);
    WriteFixtureEpisodes(&w, 0, 50);
  }  // the destructor closes
  for (int64_t stop : {17, 18, 33, 50}) {
    DatasetWriter w(twice, FixtureDatasetSpec(SmallStorage()), OpenMode::kResume);
    WriteFixtureEpisodes(&w, w.episodes_appended(), stop);
    w.Close();
    EXPECT_EQ(w.episodes_committed(), stop);
  }
  EXPECT_EQ(CheckFixtureStore(twice), 50);
  EXPECT_EQ(ArrayHashes(once), ArrayHashes(twice));
}

// Random storage layouts, episode lengths from 1 step to several shards, flushes and
// close/resume cycles at random points: the result always equals one uninterrupted write.
TEST(StoreDataset, RandomLayoutsFlushesAndResumesEqualOneWrite) {
  std::mt19937 rng(4242);
  for (int trial = 0; trial < 6; ++trial) {
    StorageSpec st;
    st.chunk_steps = std::vector<int64_t>{1, 3, 8}[rng() % 3];
    st.shard_steps = st.chunk_steps * std::vector<int64_t>{1, 2, 5}[rng() % 3];
    st.chunk_episodes = std::vector<int64_t>{1, 2, 7}[rng() % 3];
    st.compressor = trial % 2 ? "zstd" : "blosc-lz4";
    const DatasetSpec spec = FixtureDatasetSpec(st);
    const int64_t n = 25;
    std::vector<int64_t> lengths(n);
    for (int64_t& L : lengths) L = 1 + int64_t(rng() % uint32_t(3 * st.shard_steps));
    // Episode e: the fixture's values, with its own length.
    auto episode = [&](int64_t e, std::vector<float>* obs, std::vector<float>* act, std::vector<double>* params) {
      const int64_t L = lengths[size_t(e)];
      obs->resize(size_t(L) * 4);
      act->resize(size_t(L) * 2);
      for (int64_t k = 0; k < L; ++k) {
        for (int64_t j = 0; j < 4; ++j) (*obs)[size_t(k * 4 + j)] = FixtureObs(e, k, j);
        for (int64_t j = 0; j < 2; ++j) (*act)[size_t(k * 2 + j)] = FixtureAction(e, k, j);
      }
      *params = {double(e), -double(e)};
      EpisodeView v;
      v.length = L;
      v.seed = uint64_t(e);
      v.task_index = int32_t(e % 2);
      v.success = e % 3 == 0;
      v.failure_label = v.success ? 0 : 1;
      v.params = params->data();
      v.features = {obs->data(), act->data()};
      return v;
    };
    std::vector<float> obs, act;
    std::vector<double> params;
    const std::string base = FreshDir("_" + std::to_string(trial));
    {
      DatasetWriter w(base + "/once", spec, OpenMode::kCreate);
      for (int64_t e = 0; e < n; ++e) w.Append(episode(e, &obs, &act, &params));
    }
    WriterOptions opt;
    opt.min_commit_interval_s = 0;
    auto w = std::make_unique<DatasetWriter>(base + "/pieces", spec, OpenMode::kCreate, opt);
    for (int64_t e = 0; e < n; ++e) {
      w->Append(episode(e, &obs, &act, &params));
      const uint32_t dice = rng() % 10;
      if (dice == 0) w->Flush();
      if (dice == 1) {
        w->Close();
        w = std::make_unique<DatasetWriter>(base + "/pieces", spec, OpenMode::kResume, opt);
        ASSERT_EQ(w->episodes_appended(), e + 1) << "trial " << trial;
      }
    }
    w->Close();
    EXPECT_EQ(ArrayHashes(base + "/once"), ArrayHashes(base + "/pieces"))
        << "trial " << trial << " chunk " << st.chunk_steps << " shard " << st.shard_steps;
    DatasetReader r(base + "/pieces");
    EXPECT_EQ(r.episodes(), n);
    EXPECT_EQ(r.EpisodeLengths(), lengths);
  }
}

TEST(StoreDataset, FlushCommitsEverythingAppended) {
  const std::string dir = FreshDir() + "/ds";
  DatasetWriter w(dir, FixtureDatasetSpec(SmallStorage()), OpenMode::kCreate);
  WriteFixtureEpisodes(&w, 0, 3);
  w.Flush();
  EXPECT_EQ(w.episodes_committed(), 3);
  EXPECT_EQ(CheckFixtureStore(dir), 3);  // a reader sees them while the writer is open
  WriteFixtureEpisodes(&w, 3, 9);
  w.Flush();
  EXPECT_EQ(CheckFixtureStore(dir), 9);
  w.Close();
}

TEST(StoreDataset, BackpressureBoundStillWritesEverything) {
  const std::string dir = FreshDir() + "/ds";
  WriterOptions opt;
  opt.max_pending_bytes = 1;  // raised to the two-shard floor
  opt.threads = 1;
  DatasetWriter w(dir, FixtureDatasetSpec(SmallStorage()), OpenMode::kCreate, opt);
  WriteFixtureEpisodes(&w, 0, 120);
  w.Close();
  EXPECT_EQ(CheckFixtureStore(dir), 120);
}

TEST(StoreDataset, CompressorsRoundTrip) {
  for (const char* c : {"blosc-zstd", "zstd", "gzip", "none"}) {
    const std::string dir = FreshDir(std::string("_") + c) + "/ds";
    StorageSpec s = SmallStorage();
    s.compressor = c;
    s.checksum = std::string(c) != "none";
    {
      DatasetWriter w(dir, FixtureDatasetSpec(s), OpenMode::kCreate);
      WriteFixtureEpisodes(&w, 0, 12);
    }
    EXPECT_EQ(CheckFixtureStore(dir), 12) << c;
  }
}

TEST(StoreDataset, RejectsBadUse) {
  const std::string dir = FreshDir() + "/ds";
  {
    DatasetWriter w(dir, FixtureDatasetSpec(SmallStorage()), OpenMode::kCreate);
    WriteFixtureEpisodes(&w, 0, 2);
    FixtureEpisode ep;
    MakeFixtureEpisode(2, &ep);
    ep.view.task_index = 7;
    EXPECT_THROW(w.Append(ep.view), std::invalid_argument);
    ep.view.task_index = 0;
    ep.view.failure_label = 9;
    EXPECT_THROW(w.Append(ep.view), std::invalid_argument);
    ep.view.failure_label = 0;
    ep.view.features.pop_back();
    EXPECT_THROW(w.Append(ep.view), std::invalid_argument);
    MakeFixtureEpisode(2, &ep);
    ep.view.length = 0;
    EXPECT_THROW(w.Append(ep.view), std::invalid_argument);
    WriteFixtureEpisodes(&w, 2, 4);  // the writer is still usable
  }
  EXPECT_EQ(CheckFixtureStore(dir), 4);
  // Creating over an existing store, resuming with another schema, writing into a foreign dir.
  EXPECT_THROW(DatasetWriter(dir, FixtureDatasetSpec(SmallStorage()), OpenMode::kCreate), StoreError);
  DatasetSpec other = FixtureDatasetSpec(SmallStorage());
  other.control_hz = 25;
  try {
    DatasetWriter w(dir, other, OpenMode::kResume);
    ADD_FAILURE() << "resume with a different schema was accepted";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("control_hz"), std::string::npos) << e.what();
  }
  const std::string foreign = FreshDir("_foreign");
  WriteText(foreign + "/notes.txt", "hello");
  EXPECT_THROW(DatasetWriter(foreign, FixtureDatasetSpec(SmallStorage()), OpenMode::kResume), StoreError);
  DatasetSpec bad = FixtureDatasetSpec(SmallStorage());
  bad.features[0].units = {"m", "m"};
  EXPECT_THROW(DatasetWriter(FreshDir("_bad") + "/ds", bad, OpenMode::kCreate), std::invalid_argument);
  bad = FixtureDatasetSpec(SmallStorage());
  bad.storage.shard_steps = 50;  // not a multiple of chunk_steps
  EXPECT_THROW(DatasetWriter(FreshDir("_bad2") + "/ds", bad, OpenMode::kCreate), std::invalid_argument);
  bad = FixtureDatasetSpec(SmallStorage());
  bad.features[1].name = "reward";  // a built-in
  EXPECT_THROW(DatasetWriter(FreshDir("_bad3") + "/ds", bad, OpenMode::kCreate), std::invalid_argument);
}

// A write that fails (here: a directory squats on the path of a future shard) stops the writer
// cleanly: the error names the file, later calls keep failing, nothing hangs, and the store still
// opens with every episode committed before the failure.
TEST(StoreDataset, FailedWriteStopsCommitsAndNamesTheFile) {
  const std::string dir = FreshDir() + "/ds";
  WriterOptions opt;
  opt.min_commit_interval_s = 0;
  int64_t committed = 0;
  {
    DatasetWriter w(dir, FixtureDatasetSpec(SmallStorage()), OpenMode::kCreate, opt);
    WriteFixtureEpisodes(&w, 0, 10);
    w.Flush();
    committed = w.episodes_committed();
    ASSERT_EQ(committed, 10);
    // Step shard 5 of steps/obs (rows 320..383) cannot be written: its path is a directory.
    std::filesystem::create_directories(dir + "/steps/obs/c/5/0/blocker");
    std::string why;
    try {
      WriteFixtureEpisodes(&w, 10, 60);
      w.Flush();
    } catch (const StoreError& e) {
      why = e.what();
    }
    EXPECT_NE(why.find("steps/obs/c/5/0"), std::string::npos) << why;
    EXPECT_THROW(w.Flush(), StoreError);
    FixtureEpisode ep;
    MakeFixtureEpisode(60, &ep);
    EXPECT_THROW(w.Append(ep.view), StoreError);
    EXPECT_THROW(w.Close(), StoreError);
  }
  const int64_t have = CheckFixtureStore(dir);
  EXPECT_GE(have, committed);
  int64_t steps = 0;
  for (int64_t e = 0; e < have; ++e) steps += FixtureLength(e);
  EXPECT_LE(steps, 320);  // nothing past the shard that failed was committed
}

TEST(StoreDataset, ReaderRejectsBrokenCommitRecord) {
  const std::string dir = FreshDir() + "/ds";
  {
    DatasetWriter w(dir, FixtureDatasetSpec(SmallStorage()), OpenMode::kCreate);
    WriteFixtureEpisodes(&w, 0, 5);
  }
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(dir + "/zarr.json"));
  doc["attributes"]["s2r"]["commit"]["steps"] = 100000;  // beyond the arrays
  WriteText(dir + "/zarr.json", doc.dump());
  EXPECT_THROW(DatasetReader r(dir), StoreError);
  doc["attributes"]["s2r"]["commit"] = "yes";
  WriteText(dir + "/zarr.json", doc.dump());
  EXPECT_THROW(DatasetReader r(dir), StoreError);
  doc["attributes"]["s2r"]["format_version"] = 99;
  WriteText(dir + "/zarr.json", doc.dump());
  try {
    DatasetReader r(dir);
    ADD_FAILURE() << "format_version 99 was accepted";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("format_version"), std::string::npos) << e.what();
  }
}

// Sets row `row` of the episode column `column` (an int64 or int32 array) to `value`, as an edit
// outside s2r would.
void EditEpisodeColumn(const std::string& dir, const std::string& column, int64_t row, int64_t value) {
  ZarrArray a = ZarrArray::Open(dir + "/episodes/" + column);
  const int64_t n = a.metadata().shape[0];
  if (a.metadata().data_type == DataType::kInt64) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    a.ReadRegion({0}, {n}, v.data(), v.size());
    v[static_cast<size_t>(row)] = value;
    a.WriteAll(v);
  } else {
    std::vector<int32_t> v(static_cast<size_t>(n));
    a.ReadRegion({0}, {n}, v.data(), v.size());
    v[static_cast<size_t>(row)] = static_cast<int32_t>(value);
    a.WriteAll(v);
  }
}

// An episode table edited outside s2r (lengths, starts, labels, task indices that do not fit the
// commit record or the schema) is refused by the reader and by a resume, naming the array and the
// row, and the refused resume changes nothing.
TEST(StoreDataset, ReaderAndResumeRefuseAnEditedEpisodeTable) {
  struct Edit {
    std::string column;
    int64_t row, value;
    std::string message;
  };
  // the fixture's first lengths: 1 + (e * 7919) % 37 = 1, 1, 2, 3, ...; 10 episodes
  const int64_t start3 = FixtureLength(0) + FixtureLength(1) + FixtureLength(2);
  const std::vector<Edit> edits = {
      {"length", 4, 0, "/episodes/length: row 4 holds 0, not a length from step"},
      {"length", 9, 1 << 30, "/episodes/length: row 9 holds 1073741824, not a length from step"},
      {"length", 2, FixtureLength(2) + 1, "/episodes/start: row 3 holds " + std::to_string(start3) +
                                               ", but the episodes before it end at step " + std::to_string(start3 + 1)},
      {"start", 0, 1, "/episodes/start: row 0 holds 1, but the episodes before it end at step 0"},
      {"start", 6, -1, "/episodes/start: row 6 holds -1"},
      {"failure_label", 3, 9, "/episodes/failure_label: row 3 holds 9, a code not in the dataset's label taxonomy"},
      {"task_index", 7, 2, "/episodes/task_index: row 7 holds 2, but the dataset has 2 task(s)"},
      {"task_index", 1, -1, "/episodes/task_index: row 1 holds -1"},
  };
  for (const Edit& edit : edits) {
    const std::string dir = FreshDir("_" + edit.column + std::to_string(edit.row)) + "/ds";
    {
      DatasetWriter w(dir, FixtureDatasetSpec(SmallStorage()), OpenMode::kCreate);
      WriteFixtureEpisodes(&w, 0, 10);
    }
    ASSERT_NO_THROW(DatasetReader r(dir));
    EditEpisodeColumn(dir, edit.column, edit.row, edit.value);
    const std::map<std::string, std::string> before = ArrayHashes(dir);
    try {
      DatasetReader r(dir);
      ADD_FAILURE() << edit.column << ": the reader accepted the edit";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find(dir + edit.message), std::string::npos) << e.what();
    }
    try {
      DatasetWriter w(dir, FixtureDatasetSpec(SmallStorage()), OpenMode::kResume);
      ADD_FAILURE() << edit.column << ": the resume accepted the edit";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find(dir + edit.message), std::string::npos) << e.what();
    }
    EXPECT_EQ(ArrayHashes(dir), before) << edit.column << ": the refused resume changed the store";
  }
  // the commit record's step count against the episodes' end
  const std::string dir = FreshDir("_steps") + "/ds";
  {
    DatasetWriter w(dir, FixtureDatasetSpec(SmallStorage()), OpenMode::kCreate);
    WriteFixtureEpisodes(&w, 0, 10);
  }
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(dir + "/zarr.json"));
  const int64_t steps = doc["attributes"]["s2r"]["commit"]["steps"].get<int64_t>();
  doc["attributes"]["s2r"]["commit"]["steps"] = steps - 1;
  WriteText(dir + "/zarr.json", doc.dump());
  try {
    DatasetReader r(dir);
    ADD_FAILURE() << "a commit record one step short was accepted";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("/episodes/length: row 9 holds " + std::to_string(FixtureLength(9))),
              std::string::npos)
        << e.what();
  }
}

// --- crash safety with real kills -----------------------------------------------------------------

struct FixtureRun {
  int64_t last_commit = 0;  // the highest episode count the process reported durable
  bool done = false;
  bool killed = false;
  int exit_code = -1;
};

// Runs the fixture writer on `store`; when `kill_after_us` >= 0, SIGKILLs it after that long.
FixtureRun RunFixture(const std::string& store, const std::string& log, int64_t episodes, int64_t kill_after_us) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const std::string n = std::to_string(episodes);
  const char* argv[] = {S2R_DATASET_FIXTURE, store.c_str(), "--episodes", n.c_str(), "--resume", "--delay-us", "300",
                        nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, S2R_DATASET_FIXTURE, &actions, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "cannot start " << S2R_DATASET_FIXTURE;
  FixtureRun run;
  if (rc != 0) return run;
  if (kill_after_us >= 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(kill_after_us));
    run.killed = ::kill(pid, SIGKILL) == 0;
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) {
    run.exit_code = WEXITSTATUS(status);
    run.killed = false;
  }
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string word;
    ls >> word;
    if (word == "commit") ls >> run.last_commit;
    if (word == "done") run.done = true;
  }
  return run;
}

TEST(StoreDatasetCrash, SigkillAtRandomMomentsLosesNoCommittedEpisode) {
  const std::string base = FreshDir();
  const std::string store = base + "/ds", log = base + "/log.txt";
  const int64_t N = 400;
  std::mt19937 rng(20261203);
  std::uniform_int_distribution<int64_t> delay(0, 250000);
  int64_t promised = 0;  // episodes some run reported committed
  int kills = 0;
  // At least 10 kills, however fast the machine: a run that finishes its store before then (the
  // writer outran the random delays) starts the next trials on a fresh store.
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t after = trial < 3 ? trial * 2000 : delay(rng);  // also kill during creation
    FixtureRun run = RunFixture(store, log, N, after);
    if (!run.killed) {
      ASSERT_EQ(run.exit_code, 0) << "trial " << trial;
      ASSERT_TRUE(run.done);
      EXPECT_EQ(CheckFixtureStore(store), N) << "trial " << trial;
      if (kills >= 10) break;
      std::filesystem::remove_all(store);
      promised = 0;
      continue;
    }
    ++kills;
    promised = std::max(promised, run.last_commit);
    if (!FileExists(store + "/zarr.json")) {
      ASSERT_EQ(promised, 0) << "the store vanished after commits were reported";
      continue;
    }
    // The store opens cleanly (unless creation itself was cut short) and holds every promise.
    std::string why;
    int64_t have = -1;
    try {
      have = CheckFixtureStore(store);
    } catch (const StoreError& e) {
      why = e.what();
    }
    if (have < 0) {
      ASSERT_EQ(promised, 0) << "trial " << trial << ": " << why;
      ASSERT_NE(why.find("creation never finished"), std::string::npos) << why;
      continue;
    }
    ASSERT_GE(have, promised) << "trial " << trial << " killed after " << after << " us";
    promised = have;
  }
  EXPECT_GE(kills, 10);
  // Finish the job, then compare with a run that was never interrupted.
  FixtureRun last = RunFixture(store, log, N, -1);
  ASSERT_EQ(last.exit_code, 0);
  ASSERT_TRUE(last.done);
  EXPECT_EQ(CheckFixtureStore(store), N);
  const std::string clean = base + "/clean";
  FixtureRun ref = RunFixture(clean, base + "/clean_log.txt", N, -1);
  ASSERT_TRUE(ref.done);
  EXPECT_EQ(ArrayHashes(store), ArrayHashes(clean));
}

}  // namespace
}  // namespace s2r
