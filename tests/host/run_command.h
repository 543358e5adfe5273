// Runs a shell command for the CLI tests and captures its exit code and output.
#pragma once

#include <sys/wait.h>

#include <cstdio>
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

}  // namespace s2r
