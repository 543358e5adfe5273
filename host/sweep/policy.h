// A policy in another process, for `s2r sweep --policy COMMAND` (docs/sweep.md *Evaluating a
// policy*): s2r starts `/bin/sh -c COMMAND` with pipes on its standard input and output, tells it
// the observation and action layout in one JSON line, then at every control step sends the active
// worlds' episode indices, first-step flags, observations, task parameters, the task's joint
// positions and its target's position, and reads one action row per world back. Little-endian
// binary, float32 values (python/s2r_policy.py speaks it):
//
//   s2r -> policy, once:  a JSON object and '\n' ("protocol": "s2r.policy/2", obs_size, action_size,
//                         task_param_size, joint_size, target_size, expert_size and their names,
//                         control_hz, task, worlds)
//   s2r -> policy, per step:  "S2RS" u32 n  u64 step  |  n x i64 episode  |  n x u8 first  |
//                             n x obs_size f32  |  n x task_param_size f32  |  n x joint_size f32  |
//                             n x target_size f32  |  n x expert_size f32
//   policy -> s2r, per step:  "S2RA" u32 n  |  n x action_size f32
//   s2r -> policy, at the end:  "S2RE" u32 0  u64 step; then its input closes and s2r waits for it
//                               to exit (status 0)
//
// expert_size is action_size when the sweep sends the task's expert's actions (`--policy-expert`:
// what the scripted expert would do in each world at this step, the label for a DAgger-style
// correction of the policy's own episodes), else 0 (the block is empty).
//
// Every failure (the process exits or closes its output, does not answer within the timeout,
// answers another count, a bad header or a non-finite action) is a std::runtime_error naming the
// command, the step and, for an action, the episode and component; the process is killed when the
// PolicyProcess goes out of scope unfinished.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/base.h"

namespace s2r {

// What one control step tells a policy of its n worlds, row by row (one row per active world).
struct PolicyInput {
  std::vector<int64_t> episode;     // the episode each world runs
  std::vector<uint8_t> first;       // 1 on the episode's first step
  std::vector<float> obs;           // (n, obs_size): the observation model's output
  std::vector<float> task_params;   // (n, task_param_size): the episode's task parameters
  std::vector<float> joints;        // (n, joint_size): the positions of the joints the actions drive (true)
  std::vector<float> target;        // (n, target_size): the task's target body's position (true; peg_insert)
  std::vector<float> expert;        // (n, action_size): the task's expert's actions at this step (zero for
                                    // the actuators the task does not drive); sent with --policy-expert
  void clear() {
    episode.clear();
    first.clear();
    obs.clear();
    task_params.clear();
    joints.clear();
    target.clear();
    expert.clear();
  }
};

// Where a sweep's actions come from when not from the task's expert: a policy process, or (s2r
// replay of a policy's episode) the actions a store recorded.
class ActionSource {
 public:
  virtual ~ActionSource() = default;
  // One control step of n worlds -> actions (n x action_size).
  virtual void Act(const PolicyInput& in, std::vector<float>* actions) = 0;
  // After the last step.
  virtual void Finish() {}
  // Whether Act reads PolicyInput::expert (else the caller may leave it empty). The expert's
  // labels are recorded (EpisodeRecord::expert) where this says so or RunnerOptions::policy_expert.
  virtual bool WantsExpert() const { return false; }
};

// One episode's actions as a store recorded them (nactuator per step), step by step, to one world:
// `s2r replay` of a policy's episode. An episode's first step (PolicyInput::first) starts from the
// first row; past the recorded steps the last row is held (the replay ends where the store's
// episode did, or says so).
class RecordedActions : public ActionSource {
 public:
  RecordedActions(std::vector<Real> rows, int nactuator) : rows_(std::move(rows)), na_(nactuator) {}
  void Act(const PolicyInput& in, std::vector<float>* actions) override;

 private:
  std::vector<Real> rows_;
  int na_;
  size_t step_ = 0;
};

class PolicyProcess : public ActionSource {
 public:
  PolicyProcess(const std::string& command, const nlohmann::json& hello, double timeout_s);
  ~PolicyProcess() override;
  PolicyProcess(const PolicyProcess&) = delete;
  PolicyProcess& operator=(const PolicyProcess&) = delete;

  void Act(const PolicyInput& in, std::vector<float>* actions) override;
  // The end: the closing message, then the process must exit with status 0 within the timeout.
  void Finish() override;
  bool WantsExpert() const override { return expert_size_ > 0; }

 private:
  void Write(const void* data, size_t bytes);
  void Read(void* data, size_t bytes);
  [[noreturn]] void Fail(const std::string& what);
  std::string ExitText();  // how the process ended, after it closed its output
  std::string TimeoutText() const;
  std::chrono::steady_clock::time_point Deadline() const;  // timeout_s_ from now

  std::string command_;
  double timeout_s_;
  int obs_size_ = 0, action_size_ = 0, task_param_size_ = 0, joint_size_ = 0, target_size_ = 0, expert_size_ = 0;
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;  // its standard input and output
  uint64_t step_ = 0;        // steps answered so far
  bool finished_ = false;
};

}  // namespace s2r
