// s2r_dataset_fixture STORE --episodes N [--resume] [--chunk-steps C --shard-steps S
//                     --chunk-episodes E] [--threads T] [--delay-us D] [--commit-interval SEC]
//                     [--min-commit-interval-ms MS] (default 0: commit at every step shard)
// Streams the synthetic episodes of dataset_fixture.h into STORE with DatasetWriter, printing
// "commit EPISODES STEPS" (flushed) after every durable commit and "done" at the end. The crash
// tests kill it with SIGKILL at random moments and check that every printed commit survived.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "tests/host/dataset_fixture.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: s2r_dataset_fixture STORE --episodes N [--resume] ...\n");
    return 2;
  }
  std::string store = argv[1];
  int64_t episodes = 100;
  bool resume = false;
  s2r::StorageSpec storage;
  storage.chunk_steps = 16;
  storage.shard_steps = 64;
  storage.chunk_episodes = 8;
  s2r::WriterOptions options;
  int delay_us = 0;
  options.min_commit_interval_s = 0;  // commit at every shard: the crash tests want many commits
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> long long {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "s2r_dataset_fixture: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return std::atoll(argv[++i]);
    };
    if (a == "--episodes") episodes = next();
    else if (a == "--resume") resume = true;
    else if (a == "--chunk-steps") storage.chunk_steps = next();
    else if (a == "--shard-steps") storage.shard_steps = next();
    else if (a == "--chunk-episodes") storage.chunk_episodes = next();
    else if (a == "--threads") options.threads = int(next());
    else if (a == "--delay-us") delay_us = int(next());
    else if (a == "--commit-interval") options.commit_interval_s = double(next());
    else if (a == "--min-commit-interval-ms") options.min_commit_interval_s = double(next()) / 1000;
    else if (a == "--compressor" && i + 1 < argc) storage.compressor = argv[++i];
    else {
      std::fprintf(stderr, "s2r_dataset_fixture: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  options.on_commit = [](int64_t e, int64_t s) {
    std::printf("commit %lld %lld\n", (long long)e, (long long)s);
    std::fflush(stdout);
  };
  try {
    s2r::DatasetWriter writer(store, s2r::FixtureDatasetSpec(storage),
                              resume ? s2r::OpenMode::kResume : s2r::OpenMode::kCreate, options);
    s2r::FixtureEpisode ep;
    for (int64_t e = writer.episodes_appended(); e < episodes; ++e) {
      s2r::MakeFixtureEpisode(e, &ep);
      writer.Append(ep.view);
      if (delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    }
    writer.Close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "s2r_dataset_fixture: error: %s\n", e.what());
    return 1;
  }
  std::printf("done\n");
  return 0;
}
