// Runs a shell command for the CLI tests and captures its exit code and output.
#pragma once

#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace s2r {

struct CommandResult {
  int exit_code;       // -1 when the command did not exit normally (signal)
  std::string output;  // stdout, plus stderr when merged
};

inline CommandResult RunCommand(const std::string& command, bool merge_stderr = true) {
  const std::string cmd = command + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return {-1, "popen failed: " + cmd};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// path -> sha256 of every array's contents of a store, as `BIN inspect STORE --arrays --json`
// reports them
inline std::map<std::string, std::string> ArrayHashes(const std::string& bin, const std::string& store) {
  const CommandResult r = RunCommand(bin + " inspect " + store + " --arrays --json", false);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::map<std::string, std::string> out;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  for (const auto& a : j["arrays"]) out[a["path"].get<std::string>()] = a["sha256"].get<std::string>();
  return out;
}

}  // namespace s2r
