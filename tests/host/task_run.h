// Runs one world of a built-in sweep's task with its scripted expert until the task ends: the
// label tests' crafted worlds (tests/host/sweep_test.cc, task_pick_lift_test.cc).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "host/engine.h"
#include "host/sweep/sweep_config.h"
#include "kernels/tasks.h"

namespace s2r {
namespace test_util {

struct TaskRun {
  TaskState ts;
  double seconds;  // simulated, at the end
};

// `engine_params`: SetParam(address, values) before the reset; `task_params`: (index, value)
// changes to the config's task parameters; `hook(engine, state, step)` runs after every control
// step (to change something mid-episode); `checker` labels the episode (the expert acts either way).
inline TaskRun RunTask(const std::string& sweep, const std::vector<std::pair<std::string, std::vector<Real>>>& engine_params,
                       const std::vector<std::pair<int, double>>& task_params, int horizon_steps,
                       const std::function<void(Engine&, const TaskState&, int)>& hook = nullptr,
                       TaskChecker checker = kCheckerPhases) {
  SweepConfig c = LoadSweepConfig(sweep);
  c.task.model.checker = checker;
  EngineOptions opt;
  opt.threads = 1;
  Engine e(c.model, opt);
  for (const auto& p : engine_params) e.SetParam(p.first, p.second);
  e.Reset();
  std::vector<Real> params(c.task.params.begin(), c.task.params.end());
  for (const auto& p : task_params) params[p.first] = Real(p.second);
  TaskState ts{};
  const StateView& s = e.state().view;
  TaskReset(c.task.model, e.view(), s, 0, params.data(), &ts);
  std::vector<Real> action(c.model.nactuator(), 0);
  int steps = 0;
  while (!ts.done && steps < 10000) {
    TaskAct(c.task.model, e.view(), s, 0, params.data(), &ts, action.data());
    e.Step(action.data());
    if (hook) hook(e, ts, steps);
    TaskEvaluate(c.task.model, e.view(), s, 0, params.data(), horizon_steps, &ts);
    ++steps;
  }
  return {ts, steps / double(c.model.control_hz)};
}

}  // namespace test_util
}  // namespace s2r
