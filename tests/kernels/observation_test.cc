// The observation model (kernels/observation.h): each distortion on its own, against what it
// should do to a known true trajectory.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/observation.h"

namespace s2r {
namespace {

// a true trajectory: the object moves along x and turns about z, the effector follows it
void Truth(int step, Real* t) {
  const Real x = Real(0.01) * step;
  const Quat q = QuatFromAxisAngle(Vec3{0, 0, 1}, Real(0.02) * step);
  Real v[kObsSize] = {x, Real(0.1), Real(0.05), q.w, q.x, q.y, q.z, x - Real(0.08), Real(0.1), Real(0.05)};
  for (int i = 0; i < kObsSize; ++i) t[i] = v[i];
}

// n steps of one episode: observations (n x kObsSize)
std::vector<Real> Observations(const ObservationModel& om, uint64_t episode, int n, ObservationState* os = nullptr) {
  ObservationState local{};
  ObservationState* state = os ? os : &local;
  ObservationReset(om, 77, episode, state);
  std::vector<Real> out(static_cast<size_t>(n) * kObsSize);
  Real t[kObsSize];
  for (int k = 0; k < n; ++k) {
    Truth(k, t);
    Observe(om, 77, episode, t, state, out.data() + k * kObsSize);
  }
  return out;
}

TEST(Observation, WithoutDistortionsThePolicySeesTheTruth) {
  std::vector<Real> out = Observations(ObservationModel{}, 3, 50);
  Real t[kObsSize];
  for (int k = 0; k < 50; ++k) {
    Truth(k, t);
    for (int i = 0; i < kObsSize; ++i) EXPECT_NEAR(out[k * kObsSize + i], t[i], 1e-6) << k << " " << i;
  }
}

// position noise: zero mean, the stated std (5 % over 3 x 2 x 4000 draws), independent of the bias
TEST(Observation, PositionNoiseHasTheStatedSpread) {
  ObservationModel om;
  om.position_noise_std = Real(0.01);
  const int n = 4000;
  std::vector<Real> out = Observations(om, 1, n);
  double sum = 0, sq = 0;
  Real t[kObsSize];
  for (int k = 0; k < n; ++k) {
    Truth(k, t);
    for (int i : {0, 1, 2, 7, 8, 9}) {
      double e = out[k * kObsSize + i] - t[i];
      sum += e;
      sq += e * e;
    }
  }
  const double m = 6.0 * n;
  EXPECT_NEAR(sum / m, 0.0, 5 * 0.01 / std::sqrt(m));
  EXPECT_NEAR(std::sqrt(sq / m), 0.01, 0.05 * 0.01);
}

// a bias is constant within an episode and spread with the stated std across episodes
TEST(Observation, BiasIsConstantPerEpisodeAndVariesAcrossEpisodes) {
  ObservationModel om;
  om.position_bias_std = Real(0.005);
  std::vector<double> biases;
  Real t[kObsSize];
  for (uint64_t e = 0; e < 2000; ++e) {
    std::vector<Real> out = Observations(om, e, 5);
    Truth(0, t);
    const double b0 = out[0] - t[0];
    for (int k = 1; k < 5; ++k) {
      Truth(k, t);
      EXPECT_NEAR(out[k * kObsSize] - t[0], b0, 1e-6) << "episode " << e;
    }
    biases.push_back(b0);
  }
  double sq = 0;
  for (double b : biases) sq += b * b;
  EXPECT_NEAR(std::sqrt(sq / biases.size()), 0.005, 0.005 * 5 / std::sqrt(2.0 * biases.size()));
}

TEST(Observation, LatencyDelaysByTheStatedSteps) {
  ObservationModel om;
  om.latency_steps = 3;
  std::vector<Real> out = Observations(om, 2, 20);
  Real t[kObsSize];
  for (int k = 0; k < 20; ++k) {
    Truth(k >= 3 ? k - 3 : 0, t);
    EXPECT_NEAR(out[k * kObsSize], t[0], 1e-6) << "step " << k;
  }
}

// dropout: the fraction of steps that repeat the previous observation (the truth always moves)
TEST(Observation, DropoutHoldsTheLastObservationAtTheStatedRate) {
  ObservationModel om;
  om.dropout = Real(0.3);
  const int n = 20000;
  std::vector<Real> out = Observations(om, 4, n);
  int held = 0;
  for (int k = 1; k < n; ++k) held += out[k * kObsSize] == out[(k - 1) * kObsSize] ? 1 : 0;
  EXPECT_NEAR(held / double(n - 1), 0.3, 5 * std::sqrt(0.3 * 0.7 / n));
  // the first step always delivers: an episode of steps 0..k all dropped would repeat step 0's
  // observation, and a dropped first step would repeat a stale one from another episode
  ObservationState os{};
  for (uint64_t e = 0; e < 200; ++e) {
    std::vector<Real> first = Observations(om, e, 1, &os);
    EXPECT_NEAR(first[0], Real(0), 1e-7) << "episode " << e;
  }
}

// a camera rotation error turns every observed position about the world origin by the same
// rotation: distances from the origin are kept, and the episode's draws are reproducible
TEST(Observation, CameraErrorIsOneRigidTransformPerEpisode) {
  ObservationModel om;
  om.camera_rotation_std = Real(0.05);
  ObservationState os{};
  std::vector<Real> out = Observations(om, 9, 30, &os);
  Real t[kObsSize];
  for (int k = 0; k < 30; ++k) {
    Truth(k, t);
    EXPECT_NEAR(Length(LoadVec3(out.data() + k * kObsSize)), Length(LoadVec3(t)), 1e-6);
    EXPECT_NEAR(Length(LoadVec3(out.data() + k * kObsSize + 7)), Length(LoadVec3(t + 7)), 1e-6);
  }
  EXPECT_GT(std::abs(out[1] - Real(0.1)), 1e-5) << "the rotation moved the observation";
  std::vector<Real> again = Observations(om, 9, 30);
  EXPECT_EQ(out, again);
  EXPECT_NE(out, Observations(om, 10, 30)) << "another episode, another camera error";
}

}  // namespace
}  // namespace s2r
