// Sampling distributions for domain randomization, from Philox bits (kernels/random.h).
//
// Every distribution is sampled by inverse CDF from one uniform in (0, 1): one draw costs the same
// whatever the distribution, a sample is a smooth, monotone function of its bits, and nothing
// loops (no rejection), so the code is the same on the CPU and the device. The normal quantile is
// Acklam's rational approximation (relative error 1.15e-9) refined by one Halley step against
// Phi computed from erfc, which brings it to double precision; the truncated normal inverts the
// CDF restricted to [lo, hi] on the side of the mean where the tail is resolved (for bounds above
// the mean it works with the survival function, so [4, 6] sigma is as accurate as [-6, -4]).
// Sampling is in double precision; the engine takes the result as its Real.
#pragma once

#include "kernels/random.h"

namespace s2r {

enum DistributionKind : int32_t {
  kDistFixed = 0,
  kDistUniform = 1,
  kDistLogUniform = 2,
  kDistNormal = 3,
  kDistTruncNormal = 4,
  kDistChoice = 5,
};

constexpr int kMaxChoices = 16;

struct Distribution {
  int32_t kind;
  double a;       // fixed: the value; uniform/loguniform: low; normal/truncnormal: mean
  double b;       // uniform/loguniform: high; normal/truncnormal: standard deviation
  double lo, hi;  // truncnormal: the truncation interval [lo, hi]
  int32_t nchoices;              // choice: number of values (1..kMaxChoices)
  double choices[kMaxChoices];   // choice: the values
  double weights[kMaxChoices];   // choice: non-negative weights, positive total
};

// Phi(x), the standard normal CDF
S2R_HD double NormalCdf(double x) { return 0.5 * erfc(-x * 0.70710678118654752440); }

// standard normal density
S2R_HD double NormalPdf(double x) { return 0.39894228040143267794 * exp(-0.5 * x * x); }

// Phi^-1(p) for p in (0, 1) by Acklam's rational approximation alone: relative error 1.15e-9, no
// erfc/exp refinement -- for noise, where that precision is plenty and the cost counts
S2R_HD double NormalQuantileApprox(double p) {
  if (p > 0.5) return -NormalQuantileApprox(1.0 - p);
  // Acklam's coefficients: a central rational function and a tail one in sqrt(-2 log p)
  const double a[6] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                       1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  const double b[5] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                       6.680131188771972e+01,  -1.328068155288572e+01};
  const double c[6] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                       -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  const double d[4] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00};
  double x;
  if (p < 0.02425) {
    double q = sqrt(-2.0 * log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  } else {
    double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  }
  return x;
}

// Acklam's approximation of N standard normals from uniforms in (0, 1), in place: the central
// rational function for all of them first (no branches, so the compiler can run them side by
// side), then the tail form for the few (4.85 % each) outside [0.02425, 0.97575]. The same
// approximation as NormalQuantileApprox (the upper half computed directly rather than by
// symmetry, so the last bits may differ). N is a compile-time count so that, on the GPU, the
// loops unroll and the values stay in registers.
template <int N>
S2R_HD void NormalQuantilesApprox(double (&p)[N]) {
  const double a0 = -3.969683028665376e+01, a1 = 2.209460984245205e+02, a2 = -2.759285104469687e+02,
               a3 = 1.383577518672690e+02, a4 = -3.066479806614716e+01, a5 = 2.506628277459239e+00;
  const double b0 = -5.447609879822406e+01, b1 = 1.615858368580409e+02, b2 = -1.556989798598866e+02,
               b3 = 6.680131188771972e+01, b4 = -1.328068155288572e+01;
  const double lo = 0.02425, hi = 1.0 - 0.02425;
  bool tail = false;
  for (int i = 0; i < N; ++i) tail = tail || p[i] < lo || p[i] > hi;
  if (tail) {  // keep the tails' uniforms aside; the central form overwrites p
    double u[N];
    for (int i = 0; i < N; ++i) u[i] = p[i];
    for (int i = 0; i < N; ++i) {
      if (u[i] < lo || u[i] > hi) {
        p[i] = NormalQuantileApprox(u[i]);
      } else {
        const double q = u[i] - 0.5, r = q * q;
        p[i] = (((((a0 * r + a1) * r + a2) * r + a3) * r + a4) * r + a5) * q /
               (((((b0 * r + b1) * r + b2) * r + b3) * r + b4) * r + 1.0);
      }
    }
    return;
  }
  for (int i = 0; i < N; ++i) {
    const double q = p[i] - 0.5, r = q * q;
    p[i] = (((((a0 * r + a1) * r + a2) * r + a3) * r + a4) * r + a5) * q /
           (((((b0 * r + b1) * r + b2) * r + b3) * r + b4) * r + 1.0);
  }
}

// Phi^-1(p) for p in (0, 1), to double precision
S2R_HD double NormalQuantile(double p) {
  if (p > 0.5) return -NormalQuantile(1.0 - p);  // the lower tail is where p has its precision
  const double x = NormalQuantileApprox(p);
  // one Halley step on Phi(x) - p = 0
  const double e = NormalCdf(x) - p;
  const double u = e * 2.50662827463100050242 * exp(0.5 * x * x);
  return x - u / (1.0 + 0.5 * x * u);
}

// the truncation's standardized bounds and its probability mass, on the side where the tail is
// resolved (upper: both bounds above the mean, use the survival function Phi(-x))
struct Truncation {
  double alpha, beta;  // (lo - mean) / std, (hi - mean) / std
  bool upper;
  double p_lo, p_hi;   // lower: Phi(alpha), Phi(beta); upper: Phi(-alpha), Phi(-beta)
  double mass;
};

S2R_HD Truncation TruncationOf(const Distribution& d) {
  Truncation t;
  t.alpha = (d.lo - d.a) / d.b;
  t.beta = (d.hi - d.a) / d.b;
  t.upper = t.alpha > 0;
  t.p_lo = t.upper ? NormalCdf(-t.alpha) : NormalCdf(t.alpha);
  t.p_hi = t.upper ? NormalCdf(-t.beta) : NormalCdf(t.beta);
  t.mass = t.upper ? t.p_lo - t.p_hi : t.p_hi - t.p_lo;
  return t;
}

S2R_HD double SampleDistribution(const Distribution& d, U32x4 bits) {
  const double u = UniformOpen01(bits.v[0], bits.v[1]);
  switch (d.kind) {
    case kDistFixed: return d.a;
    case kDistUniform: return d.a + (d.b - d.a) * u;
    case kDistLogUniform: return exp(log(d.a) + (log(d.b) - log(d.a)) * u);
    case kDistNormal: return d.a + d.b * NormalQuantile(u);
    case kDistTruncNormal: {
      const Truncation t = TruncationOf(d);
      double x = t.upper ? -NormalQuantile(t.p_lo - u * (t.p_lo - t.p_hi)) : NormalQuantile(t.p_lo + u * (t.p_hi - t.p_lo));
      x = x < t.alpha ? t.alpha : (x > t.beta ? t.beta : x);
      double v = d.a + d.b * x;
      return v < d.lo ? d.lo : (v > d.hi ? d.hi : v);
    }
    default: {  // choice: the value whose cumulative-weight interval holds u * total
      double total = 0;
      for (int i = 0; i < d.nchoices; ++i) total += d.weights[i];
      const double target = u * total;
      double cumulative = 0;
      int last = 0;
      for (int i = 0; i < d.nchoices; ++i) {
        if (d.weights[i] <= 0) continue;
        last = i;
        cumulative += d.weights[i];
        if (target < cumulative) return d.choices[i];
      }
      return d.choices[last];
    }
  }
}

// nullptr when d is usable, else why not
S2R_HD const char* DistributionError(const Distribution& d) {
  auto finite = [](double x) { return x == x && x - x == 0; };
  switch (d.kind) {
    case kDistFixed:
      return finite(d.a) ? nullptr : "the value must be finite";
    case kDistUniform:
      if (!finite(d.a) || !finite(d.b)) return "low and high must be finite";
      return d.a < d.b ? nullptr : "low must be below high";
    case kDistLogUniform:
      if (!finite(d.a) || !finite(d.b)) return "low and high must be finite";
      if (!(d.a > 0)) return "a log-uniform distribution needs low > 0";
      return d.a < d.b ? nullptr : "low must be below high";
    case kDistNormal:
      if (!finite(d.a) || !finite(d.b)) return "mean and std must be finite";
      return d.b > 0 ? nullptr : "std must be > 0";
    case kDistTruncNormal:
      if (!finite(d.a) || !finite(d.b) || !finite(d.lo) || !finite(d.hi)) return "mean, std, low and high must be finite";
      if (!(d.b > 0)) return "std must be > 0";
      if (!(d.lo < d.hi)) return "low must be below high";
      return TruncationOf(d).mass > 1e-12 ? nullptr
                                          : "the truncation [low, high] excludes the whole support (probability < 1e-12)";
    case kDistChoice: {
      if (d.nchoices < 1 || d.nchoices > kMaxChoices) return "a choice needs 1 to 16 values";
      double total = 0;
      for (int i = 0; i < d.nchoices; ++i) {
        if (!finite(d.choices[i]) || !finite(d.weights[i])) return "values and weights must be finite";
        if (d.weights[i] < 0) return "weights must be >= 0";
        total += d.weights[i];
      }
      return total > 0 ? nullptr : "the weights must not all be 0";
    }
    default:
      return "unknown distribution kind";
  }
}

// the support's ends (normal: +-HUGE_VAL)
S2R_HD void DistributionSupport(const Distribution& d, double* low, double* high) {
  switch (d.kind) {
    case kDistFixed: *low = *high = d.a; return;
    case kDistUniform:
    case kDistLogUniform: *low = d.a; *high = d.b; return;
    case kDistNormal: *low = -HUGE_VAL; *high = HUGE_VAL; return;
    case kDistTruncNormal: *low = d.lo; *high = d.hi; return;
    default: {
      double lo = HUGE_VAL, hi = -HUGE_VAL;
      for (int i = 0; i < d.nchoices; ++i) {
        if (d.weights[i] <= 0) continue;
        lo = d.choices[i] < lo ? d.choices[i] : lo;
        hi = d.choices[i] > hi ? d.choices[i] : hi;
      }
      *low = lo;
      *high = hi;
    }
  }
}

S2R_HD double DistributionMean(const Distribution& d) {
  switch (d.kind) {
    case kDistFixed: return d.a;
    case kDistUniform: return 0.5 * (d.a + d.b);
    case kDistLogUniform: return (d.b - d.a) / (log(d.b) - log(d.a));
    case kDistNormal: return d.a;
    case kDistTruncNormal: {
      const Truncation t = TruncationOf(d);
      return d.a + d.b * (NormalPdf(t.alpha) - NormalPdf(t.beta)) / t.mass;
    }
    default: {
      double total = 0, sum = 0;
      for (int i = 0; i < d.nchoices; ++i) {
        total += d.weights[i];
        sum += d.weights[i] * d.choices[i];
      }
      return sum / total;
    }
  }
}

}  // namespace s2r
