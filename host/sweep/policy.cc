#include "host/sweep/policy.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace s2r {

void RecordedActions::Act(const PolicyInput& in, std::vector<float>* actions) {
  step_ = in.first[0] ? 0 : step_ + 1;
  const size_t steps = na_ > 0 ? rows_.size() / size_t(na_) : 0;
  const size_t k = std::min(step_, steps > 0 ? steps - 1 : 0);
  actions->assign(size_t(na_), 0.f);
  for (int i = 0; i < na_ && steps > 0; ++i) (*actions)[size_t(i)] = static_cast<float>(rows_[k * size_t(na_) + size_t(i)]);
}

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kStepMagic[4] = {'S', '2', 'R', 'S'};
constexpr char kActionMagic[4] = {'S', '2', 'R', 'A'};
constexpr char kEndMagic[4] = {'S', '2', 'R', 'E'};

// the per-step header: magic, world count, step
struct StepHeader {
  char magic[4];
  uint32_t n;
  uint64_t step;
};
static_assert(sizeof(StepHeader) == 16, "the protocol's header is 16 bytes");

// Waits until `fd` is ready for `events` (POLLIN, POLLOUT); false when the deadline passes first.
bool Ready(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::ceil(left * 1000)));
    if (ready > 0) return true;  // ready, or hung up / in error: the read or write says which
    if (ready < 0 && errno != EINTR) return true;
  }
}

std::string StatusText(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + std::to_string(WTERMSIG(status));
  return "stopped";
}

}  // namespace

PolicyProcess::PolicyProcess(const std::string& command, const nlohmann::json& hello, double timeout_s)
    : command_(command), timeout_s_(timeout_s) {
  obs_size_ = hello.at("obs_size").get<int>();
  action_size_ = hello.at("action_size").get<int>();
  task_param_size_ = hello.at("task_param_size").get<int>();
  joint_size_ = hello.at("joint_size").get<int>();
  target_size_ = hello.at("target_size").get<int>();
  expert_size_ = hello.value("expert_size", 0);
  // a policy that exits makes our writes fail with EPIPE, not kill s2r
  ::signal(SIGPIPE, SIG_IGN);
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    throw std::runtime_error("--policy: cannot make pipes: " + std::string(std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  // its own process group, so that a kill reaches what the shell started too (a `sleep` left
  // holding our standard output would keep whoever reads it waiting)
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  const int rc = ::posix_spawn(&pid_, "/bin/sh", &actions, &attr, const_cast<char**>(argv), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  to_ = in[1];
  from_ = out[0];
  if (rc != 0) {
    pid_ = -1;
    Fail("cannot start /bin/sh: " + std::string(std::strerror(rc)));
  }
  const std::string line = hello.dump() + "\n";
  Write(line.data(), line.size());
}

PolicyProcess::~PolicyProcess() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  if (to_ >= 0) ::close(to_);
  if (from_ >= 0) ::close(from_);
}

void PolicyProcess::Fail(const std::string& what) {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  throw std::runtime_error("--policy '" + command_ + "': " + what);
}

std::string PolicyProcess::ExitText() {
  // it closed its output: give it a moment to exit, and say how it did
  for (int i = 0; i < 100 && pid_ > 0; ++i) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return StatusText(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "closed its output";
}

void PolicyProcess::Write(const void* data, size_t bytes) {
  // in pieces of at most PIPE_BUF, each once poll says the pipe has room: a policy that stops
  // reading times out here rather than blocking s2r for ever
  const char* p = static_cast<const char*>(data);
  const Clock::time_point deadline = Deadline();
  while (bytes > 0) {
    if (!Ready(to_, POLLOUT, deadline)) {
      Fail("did not read step " + std::to_string(step_) + " within " + TimeoutText() + " (--policy-timeout)");
    }
    const ssize_t n = ::write(to_, p, std::min<size_t>(bytes, PIPE_BUF));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0 && errno == EPIPE) Fail(ExitText() + " before reading step " + std::to_string(step_));
    if (n < 0) Fail("cannot write to it: " + std::string(std::strerror(errno)));
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

std::chrono::steady_clock::time_point PolicyProcess::Deadline() const {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s_));
}

std::string PolicyProcess::TimeoutText() const {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", timeout_s_);
  return text;
}

void PolicyProcess::Read(void* data, size_t bytes) {
  char* p = static_cast<char*>(data);
  const Clock::time_point deadline = Deadline();
  while (bytes > 0) {
    if (!Ready(from_, POLLIN, deadline)) {
      Fail("did not answer step " + std::to_string(step_) + " within " + TimeoutText() + " (--policy-timeout)");
    }
    const ssize_t n = ::read(from_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) Fail("cannot read from it: " + std::string(std::strerror(errno)));
    if (n == 0) Fail(ExitText() + " before answering step " + std::to_string(step_));
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void PolicyProcess::Act(const PolicyInput& in, std::vector<float>* actions) {
  const std::vector<int64_t>& episode = in.episode;
  const size_t n = episode.size();
  if (in.first.size() != n || in.obs.size() != n * size_t(obs_size_) || in.task_params.size() != n * size_t(task_param_size_) ||
      in.joints.size() != n * size_t(joint_size_) || in.target.size() != n * size_t(target_size_) ||
      (expert_size_ > 0 && in.expert.size() != n * size_t(expert_size_))) {
    throw std::logic_error("PolicyProcess::Act: the step's blocks do not match the layout sent");
  }
  StepHeader head{};
  std::memcpy(head.magic, kStepMagic, 4);
  head.n = static_cast<uint32_t>(n);
  head.step = step_;
  Write(&head, sizeof head);
  Write(episode.data(), n * sizeof(int64_t));
  Write(in.first.data(), n);
  Write(in.obs.data(), in.obs.size() * sizeof(float));
  Write(in.task_params.data(), in.task_params.size() * sizeof(float));
  Write(in.joints.data(), in.joints.size() * sizeof(float));
  Write(in.target.data(), in.target.size() * sizeof(float));
  if (expert_size_ > 0) Write(in.expert.data(), in.expert.size() * sizeof(float));
  char magic[4];
  uint32_t count = 0;
  Read(magic, 4);
  if (std::memcmp(magic, kActionMagic, 4) != 0) {
    Fail("answered step " + std::to_string(step_) + " with a header that does not start with S2RA");
  }
  Read(&count, sizeof count);
  if (count != n) {
    Fail("answered step " + std::to_string(step_) + " with " + std::to_string(count) + " action rows for " +
         std::to_string(n) + " worlds");
  }
  actions->resize(n * static_cast<size_t>(action_size_));
  Read(actions->data(), actions->size() * sizeof(float));
  for (size_t i = 0; i < actions->size(); ++i) {
    if (!std::isfinite((*actions)[i])) {
      const size_t row = i / static_cast<size_t>(action_size_);
      Fail("answered step " + std::to_string(step_) + " with a non-finite action (episode " +
           std::to_string(episode[row]) + ", component " + std::to_string(i % static_cast<size_t>(action_size_)) + ")");
    }
  }
  ++step_;
}

void PolicyProcess::Finish() {
  StepHeader head{};
  std::memcpy(head.magic, kEndMagic, 4);
  head.step = step_;
  Write(&head, sizeof head);
  ::close(to_);
  to_ = -1;
  const Clock::time_point deadline = Deadline();
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) != pid_) {
    if (Clock::now() > deadline) Fail("did not exit within the timeout after the last step");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pid_ = -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("--policy '" + command_ + "': " + StatusText(status) + " after the last step");
  }
  finished_ = true;
}

}  // namespace s2r
