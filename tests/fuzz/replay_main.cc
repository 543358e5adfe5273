// A plain main() for the libFuzzer harnesses: feeds every file under the given paths (files or
// directories, recursively, in sorted order) to LLVMFuzzerTestOneInput once. Built with the
// project compiler and no libFuzzer, it lets ctest replay the committed corpus in every build, so
// each input that once crashed stays a regression test.
//
//   s2r_fuzz_replay_X [--max-memory-mb N] PATH...   replay; exit 1 if any input fails
//   s2r_fuzz_replay_X --write-seeds DIR             write the harness's encoder-made seeds
//
// An input fails when the harness aborts or crashes (the file is named on stderr before the
// process dies) or lets an exception escape (reported, and the replay goes on). Address space
// is capped (default 1024 MB, the -malloc_limit_mb run_fuzz.sh gives libFuzzer), so an input
// that makes the decoder allocate whatever a header claims fails with std::bad_alloc here too.
#include <cxxabi.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// Defined by harnesses that can make seeds from s2r's own encoder.
extern "C" int S2RFuzzWriteSeeds(const char* dir) __attribute__((weak));

namespace {

namespace fs = std::filesystem;

// The input being replayed, for the crash handler (set before each call).
char g_current[4096] = "";

void OnCrash(int sig) {
  const char prefix[] = "\nreplay_main: input crashed the harness: ";
  ssize_t ignored = write(STDERR_FILENO, prefix, sizeof(prefix) - 1);
  ignored = write(STDERR_FILENO, g_current, strnlen(g_current, sizeof(g_current)));
  ignored = write(STDERR_FILENO, "\n", 1);
  (void)ignored;
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// ASan and TSan reserve terabytes of shadow address space: an address-space cap breaks them
bool ShadowSanitized() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return true;
#endif
#endif
  return false;
}

std::string TypeName(const std::exception& e) {
  int status = 0;
  char* name = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status);
  std::string out = status == 0 && name ? name : typeid(e).name();
  std::free(name);
  return out;
}

int Usage() {
  std::fprintf(stderr, "usage: replay_main [--max-memory-mb N] PATH...\n       replay_main --write-seeds DIR\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> roots;
  long max_memory_mb = 1024;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--write-seeds" && i + 1 < argc) {
      if (!S2RFuzzWriteSeeds) {
        std::fprintf(stderr, "replay_main: this harness writes no seeds\n");
        return 2;
      }
      fs::create_directories(argv[i + 1]);
      return S2RFuzzWriteSeeds(argv[i + 1]);
    } else if (arg == "--max-memory-mb" && i + 1 < argc) {
      max_memory_mb = std::atol(argv[++i]);
    } else if (arg.rfind("--", 0) == 0) {
      return Usage();
    } else {
      roots.push_back(arg);
    }
  }
  if (roots.empty()) return Usage();

  // the cap is for builds without a sanitizer's shadow memory
  if (max_memory_mb > 0 && !ShadowSanitized()) {
    rlimit limit{};
    limit.rlim_cur = limit.rlim_max = rlim_t(max_memory_mb) << 20;
    setrlimit(RLIMIT_AS, &limit);
  }

  // Collect the inputs, sorted so a failure always shows up at the same place.
  std::vector<std::string> files;
  for (const std::string& root : roots) {
    std::error_code ec;
    if (fs::is_regular_file(root, ec)) {
      files.push_back(root);
    } else if (fs::is_directory(root, ec)) {
      for (const auto& e : fs::recursive_directory_iterator(root)) {
        if (e.is_regular_file()) files.push_back(e.path().string());
      }
    } else {
      std::fprintf(stderr, "replay_main: %s is neither a file nor a directory\n", root.c_str());
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "replay_main: no inputs under the given paths\n");
    return 1;
  }

  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, OnCrash);
  int failures = 0;
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.eof() && in.fail()) {
      std::fprintf(stderr, "replay_main: cannot read %s\n", file.c_str());
      ++failures;
      continue;
    }
    std::snprintf(g_current, sizeof(g_current), "%s", file.c_str());
    // An exact-size heap copy, as libFuzzer passes it (nullptr-free even when empty).
    std::unique_ptr<uint8_t[]> data(new uint8_t[bytes.size() + 1]);
    std::copy(bytes.begin(), bytes.end(), data.get());
    try {
      LLVMFuzzerTestOneInput(data.get(), bytes.size());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "FAIL %s: uncaught %s: %s\n", file.c_str(), TypeName(e).c_str(), e.what());
      ++failures;
    } catch (...) {
      std::fprintf(stderr, "FAIL %s: uncaught non-std exception\n", file.c_str());
      ++failures;
    }
  }
  std::printf("replay_main: %zu inputs, %d failed\n", files.size(), failures);
  return failures == 0 ? 0 : 1;
}
