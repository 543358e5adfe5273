// The action noise (kernels/action_noise.h) against its definition: every step's spread is the
// stated std, white noise is uncorrelated between steps and the AR(1)'s lag-1 correlation is its
// keep, episodes draw apart, and only the task's actuators are touched.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/action_noise.h"

namespace s2r {
namespace {

// a task driving actuators 3 and 1 of a vector of 5 (TaskModel order: 3 first)
TaskModel TwoActuators() {
  TaskModel t;
  t.nactuator = 2;
  t.actuator[0] = 3;
  t.actuator[1] = 1;
  return t;
}

// the noise of `steps` control steps of one episode, per task actuator (steps x 2), the other
// actuators' values checked untouched
std::vector<double> Noise(const ActionNoise& an, uint64_t episode, int steps) {
  const TaskModel t = TwoActuators();
  std::vector<double> out;
  Real e[kTaskMaxActuators] = {};
  for (int k = 0; k < steps; ++k) {
    Real act[5] = {Real(0.5), Real(-0.25), Real(2), Real(0.125), Real(7)};
    ApplyActionNoise(an, t, 99, episode, k, e, act);
    EXPECT_EQ(act[0], Real(0.5));
    EXPECT_EQ(act[2], Real(2));
    EXPECT_EQ(act[4], Real(7));
    out.push_back(double(act[3]) - 0.125);
    out.push_back(double(act[1]) + 0.25);
  }
  return out;
}

ActionNoise Make(double std0, double std1, double keep) {
  ActionNoise an;
  an.std[0] = Real(std0);
  an.std[1] = Real(std1);
  an.keep = Real(keep);
  an.fresh = Real(std::sqrt(1 - keep * keep));
  an.active = 1;
  return an;
}

// std, mean and lag-1 correlation of actuator i's noise over many episodes' steps
struct Moments {
  double mean = 0, std = 0, lag1 = 0;
};
Moments Measure(const ActionNoise& an, int i, int episodes, int steps) {
  double sum = 0, sq = 0, cross = 0;
  int64_t n = 0, pairs = 0;
  for (int e = 0; e < episodes; ++e) {
    const std::vector<double> v = Noise(an, uint64_t(e), steps);
    for (int k = 0; k < steps; ++k) {
      const double x = v[size_t(2 * k + i)];
      sum += x;
      sq += x * x;
      ++n;
      if (k > 0) {
        cross += x * v[size_t(2 * (k - 1) + i)];
        ++pairs;
      }
    }
  }
  Moments m;
  m.mean = sum / double(n);
  m.std = std::sqrt(sq / double(n) - m.mean * m.mean);
  m.lag1 = (cross / double(pairs) - m.mean * m.mean) / (m.std * m.std);
  return m;
}

// white: the stated std per actuator (3 % over 20,000 draws: the std's standard error is 0.5 %),
// zero mean (within 4 standard errors), no correlation between steps (|lag1| < 0.03)
TEST(ActionNoise, WhiteNoiseHasTheStatedSpreadAndNoMemory) {
  const ActionNoise an = Make(0.01, 0.002, 0);
  for (int i = 0; i < 2; ++i) {
    const double want = i == 0 ? 0.01 : 0.002;
    const Moments m = Measure(an, i, 100, 200);
    EXPECT_NEAR(m.std, want, 0.03 * want) << "actuator " << i;
    EXPECT_LT(std::fabs(m.mean), 4 * want / std::sqrt(20000.0)) << "actuator " << i;
    EXPECT_LT(std::fabs(m.lag1), 0.03) << "actuator " << i;
  }
}

// AR(1): every step's spread is still the stated std, the first step's too (stationary start:
// within 10 % over 2,000 episodes' first steps), and the lag-1 correlation is keep (within 0.03)
TEST(ActionNoise, CorrelatedNoiseKeepsItsSpreadAndHasTheStatedMemory) {
  const double keep = std::exp(-1.0 / (50 * 0.1));  // 50 Hz, time constant 0.1 s
  const ActionNoise an = Make(0.005, 0.005, keep);
  const Moments m = Measure(an, 0, 100, 200);
  EXPECT_NEAR(m.std, 0.005, 0.05 * 0.005);  // correlated draws: fewer independent samples
  EXPECT_NEAR(m.lag1, keep, 0.03);
  double sq = 0;
  for (int e = 0; e < 2000; ++e) {
    const double x = Noise(an, uint64_t(e), 1)[0];
    sq += x * x;
  }
  EXPECT_NEAR(std::sqrt(sq / 2000), 0.005, 0.1 * 0.005);
}

// the same (seed, episode, step) give the same noise; other episodes other noise; std 0 none
TEST(ActionNoise, IsAFunctionOfTheEpisodeAndStep) {
  const ActionNoise an = Make(0.01, 0.01, 0.5);
  EXPECT_EQ(Noise(an, 5, 30), Noise(an, 5, 30));
  const std::vector<double> a = Noise(an, 5, 30), b = Noise(an, 6, 30);
  int same = 0;
  for (size_t k = 0; k < a.size(); ++k) same += a[k] == b[k];
  EXPECT_EQ(same, 0);
  const ActionNoise quiet = Make(0, 0.01, 0);
  for (size_t k = 0; k < 60; k += 2) EXPECT_EQ(Noise(quiet, 5, 30)[k], 0.0);
}

}  // namespace
}  // namespace s2r
