// Philox4x32-10 against the published known answers, the uniform and normal transforms, and each
// distribution's samples against its moments (kernels/random.h, kernels/distributions.h).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/distributions.h"

namespace s2r {
namespace {

// Random123's tests/kat_vectors, "philox4x32 10" lines: counter words, key words, output words.
TEST(Random, PhiloxMatchesTheRandom123KnownAnswers) {
  struct Kat {
    U32x4 counter;
    uint32_t key0, key1;
    U32x4 expect;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
       0xffffffff,
       0xffffffff,
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
       0xa4093822,
       0x299f31d0,
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const Kat& k : kats) {
    U32x4 out = Philox4x32(k.counter, k.key0, k.key1);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out.v[i], k.expect.v[i]) << "word " << i;
  }
}

TEST(Random, RandomBitsMapsSeedEpisodeStreamAndIndex) {
  const uint64_t seed = 0x0123456789abcdefull, episode = 0xfedcba9876543210ull;
  U32x4 direct = Philox4x32(U32x4{{0x76543210u, 0xfedcba98u, 7u, 3u}}, 0x89abcdefu, 0x01234567u);
  U32x4 bits = RandomBits(seed, episode, 7, 3);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(bits.v[i], direct.v[i]);
  // any input changes the words
  const U32x4 other[] = {RandomBits(seed + 1, episode, 7, 3), RandomBits(seed, episode + 1, 7, 3),
                         RandomBits(seed, episode, 8, 3), RandomBits(seed, episode, 7, 4)};
  for (const U32x4& o : other) EXPECT_NE(o.v[0], bits.v[0]);
  EXPECT_EQ(StreamOfName("box_mass"), StreamOfName("box_mass"));
  EXPECT_NE(StreamOfName("box_mass"), StreamOfName("box_masS"));
  EXPECT_EQ(StreamOfName(""), 2166136261u) << "FNV-1a offset basis";
}

TEST(Random, UniformIsInsideTheOpenIntervalWithMeanOneHalf) {
  EXPECT_GT(UniformOpen01(0, 0), 0.0);
  EXPECT_LT(UniformOpen01(0xffffffff, 0xffffffff), 1.0);
  EXPECT_DOUBLE_EQ(UniformOpen01(0, 0), 0.5 / 4503599627370496.0);
  EXPECT_DOUBLE_EQ(UniformOpen01(0xffffffff, 0xffffffff), 1.0 - 0.5 / 4503599627370496.0);
  const int n = 1000000;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    U32x4 b = RandomBits(11, i, 0, 0);
    sum += UniformOpen01(b.v[0], b.v[1]);
  }
  // standard error of the mean: sqrt(1/12 / n) = 2.9e-4; 4 standard errors
  EXPECT_NEAR(sum / n, 0.5, 4 * std::sqrt(1.0 / 12 / n));
}

TEST(Random, NormalQuantileInvertsTheCdf) {
  EXPECT_NEAR(NormalCdf(1.0), 0.8413447460685429, 1e-15);
  EXPECT_NEAR(NormalQuantile(0.975), 1.959963984540054, 1e-12);
  EXPECT_NEAR(NormalQuantile(0.5), 0.0, 1e-15);
  // up to x = 5: above it, p = Phi(x) rounds to within 1e-16 of 1 and no longer determines x (the
  // upper tail is reached through the symmetry, as SampleDistribution's truncnormal does)
  for (double x = -8; x <= 5; x += 0.125) {
    // tolerance 1e-9 (1 + |x|): one Halley step takes Acklam's 1.15e-9 relative error to ~1e-15
    EXPECT_NEAR(NormalQuantile(NormalCdf(x)), x, 1e-9 * (1 + std::abs(x))) << x;
  }
  EXPECT_NEAR(NormalQuantile(1e-300), -37.0471, 1e-3);
}

// n samples of a distribution from consecutive episodes of one stream
std::vector<double> Samples(const Distribution& d, int n) {
  std::vector<double> out(n);
  for (int i = 0; i < n; ++i) out[i] = SampleDistribution(d, RandomBits(2026, i, 99, 0));
  return out;
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / v.size();
}

double Variance(const std::vector<double>& v) {
  double m = Mean(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / (v.size() - 1);
}

Distribution Make(int kind, double a, double b, double lo = 0, double hi = 0) {
  Distribution d{};
  d.kind = kind;
  d.a = a;
  d.b = b;
  d.lo = lo;
  d.hi = hi;
  return d;
}

// Each distribution's samples: inside the support, mean within 5 standard errors of the analytic
// mean (n = 200k), variance within 2 % where it is simple.
TEST(Distributions, SamplesMatchTheirMomentsAndSupport) {
  const int n = 200000;
  struct Case {
    Distribution d;
    double variance;  // analytic, or < 0 when not checked
  };
  const Case cases[] = {
      {Make(kDistUniform, -1, 3), 16.0 / 12},
      {Make(kDistLogUniform, 0.1, 10), -1},
      {Make(kDistNormal, 2, 0.5), 0.25},
      {Make(kDistTruncNormal, 0, 1, -0.5, 2), -1},
      {Make(kDistTruncNormal, 0, 1, 4, 6), -1},     // the far upper tail
      {Make(kDistTruncNormal, 1, 2, -10, -7), -1},  // the far lower tail
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("kind " + std::to_string(c.d.kind) + " a " + std::to_string(c.d.a) + " lo " + std::to_string(c.d.lo));
    ASSERT_EQ(DistributionError(c.d), nullptr);
    std::vector<double> s = Samples(c.d, n);
    double lo = 0, hi = 0;
    DistributionSupport(c.d, &lo, &hi);
    for (double x : s) ASSERT_TRUE(x >= lo && x <= hi) << x;
    const double var = Variance(s);
    EXPECT_NEAR(Mean(s), DistributionMean(c.d), 5 * std::sqrt(var / n));
    if (c.variance > 0) EXPECT_NEAR(var, c.variance, 0.02 * c.variance);
  }
  // log-uniform: the median is the geometric mean of the ends
  std::vector<double> s = Samples(Make(kDistLogUniform, 0.1, 10), n);
  int below = 0;
  for (double x : s) below += x < 1.0 ? 1 : 0;
  EXPECT_NEAR(below / double(n), 0.5, 5 * std::sqrt(0.25 / n));
  // fixed
  for (double x : Samples(Make(kDistFixed, 0.7, 0), 100)) EXPECT_EQ(x, 0.7);
}

TEST(Distributions, ChoiceFrequenciesFollowTheWeights) {
  Distribution d{};
  d.kind = kDistChoice;
  d.nchoices = 4;
  const double values[] = {1, 2, 3, 4}, weights[] = {1, 0, 2, 5};
  for (int i = 0; i < 4; ++i) {
    d.choices[i] = values[i];
    d.weights[i] = weights[i];
  }
  ASSERT_EQ(DistributionError(d), nullptr);
  const int n = 80000;
  int count[5] = {0, 0, 0, 0, 0};
  for (double x : Samples(d, n)) count[int(x)] += 1;
  EXPECT_EQ(count[2], 0) << "a zero weight is never chosen";
  for (int i : {0, 2, 3}) {
    double p = weights[i] / 8.0;
    EXPECT_NEAR(count[int(values[i])] / double(n), p, 5 * std::sqrt(p * (1 - p) / n)) << "value " << values[i];
  }
  EXPECT_DOUBLE_EQ(DistributionMean(d), (1 * 1 + 3 * 2 + 4 * 5) / 8.0);
}

TEST(Distributions, InvalidParametersAreNamed) {
  EXPECT_NE(DistributionError(Make(kDistUniform, 2, 1)), nullptr);
  EXPECT_NE(DistributionError(Make(kDistLogUniform, 0, 1)), nullptr);
  EXPECT_NE(DistributionError(Make(kDistNormal, 0, 0)), nullptr);
  EXPECT_NE(DistributionError(Make(kDistNormal, NAN, 1)), nullptr);
  EXPECT_NE(DistributionError(Make(kDistTruncNormal, 0, 1, 1, 1)), nullptr);
  const char* excluded = DistributionError(Make(kDistTruncNormal, 0, 1, 50, 60));
  ASSERT_NE(excluded, nullptr);
  EXPECT_NE(std::string(excluded).find("excludes the whole support"), std::string::npos);
  Distribution none{};
  none.kind = kDistChoice;
  EXPECT_NE(DistributionError(none), nullptr);
  none.nchoices = 2;
  EXPECT_NE(DistributionError(none), nullptr) << "all weights zero";
  none.weights[0] = -1;
  none.weights[1] = 2;
  EXPECT_NE(DistributionError(none), nullptr) << "negative weight";
  EXPECT_EQ(DistributionError(Make(kDistTruncNormal, 0, 1, 4, 6)), nullptr);
}

TEST(Distributions, TheSameBitsGiveTheSameSample) {
  Distribution d = Make(kDistTruncNormal, 0.3, 0.1, 0.1, 0.6);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(SampleDistribution(d, RandomBits(5, i, 1, 0)), SampleDistribution(d, RandomBits(5, i, 1, 0)));
  }
}

}  // namespace
}  // namespace s2r
