#include "tests/host/test_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <system_error>

namespace s2r {
namespace {

namespace fs = std::filesystem;

fs::path ProcessRoot() {
  std::string base = ::testing::TempDir().empty() ? std::string("/tmp/") : ::testing::TempDir();
  return fs::path(base) / ("s2r_test_" + std::to_string(::getpid()));
}

// one folder per test, directly under the process's root: a parameterized suite's name
// ("Backends/BackendParity") and test name ("Scene/cuda") have slashes, which would nest it
fs::path PathOf(const ::testing::TestInfo& info) {
  std::string name = std::string(info.test_suite_name()) + "." + info.name();
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  return ProcessRoot() / name;
}

class TestDirCleaner : public ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo& info) override {
    fs::path dir = PathOf(info);
    std::error_code ec;
    if (!fs::exists(dir, ec)) return;
    if (!info.result()->Failed()) {  // passed or skipped
      fs::remove_all(dir, ec);
    } else {
      std::fprintf(stderr, "kept the failed test's files in %s\n", dir.c_str());
    }
  }
  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    std::error_code ec;
    fs::remove(ProcessRoot(), ec);  // only when empty
  }
};

// registered before main() runs the tests (gtest_main owns main)
const bool kRegistered = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new TestDirCleaner);
  return true;
}();

}  // namespace

std::string TestDir() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = info != nullptr ? PathOf(*info) : ProcessRoot() / "global";
  fs::create_directories(dir);
  return dir.string();
}

}  // namespace s2r
