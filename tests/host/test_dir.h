// One scratch directory per test, removed when the test passes.
//
// TestDir() is <tmp>/s2r_test_<pid>/<suite>.<test>: unique per process (ctest runs tests in
// parallel processes, and two runs of the suite may share a machine) and per test. A listener
// (test_dir.cc) removes the directory when its test passes and keeps it, with a note of its path,
// when the test fails, so a failure can be looked at; the process directory goes when it is empty.
#pragma once

#include <string>

namespace s2r {

// The running test's directory, created on first use.
std::string TestDir();

}  // namespace s2r
