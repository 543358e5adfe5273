// s2r kernels: the one macro and scalar type every engine function is built on.
//
// Everything under kernels/ is plain C++ that both g++ and nvcc compile: header-only, no
// allocation, no I/O, no exceptions, no virtual calls, no globals. Functions are marked S2R_HD so
// the same source runs in the CPU backend (one call per world, worlds spread over threads) and in
// the CUDA backend (one thread per world). Scalars go through the wrappers below so a float64
// reference build (S2R_DOUBLE) is a compile flag, not a fork.
#pragma once

#include <stdint.h>
#include <math.h>

#if defined(__CUDACC__)
#define S2R_HD __host__ __device__ inline
#define S2R_HDI __host__ __device__ __forceinline__
#define S2R_HD_NOINLINE __host__ __device__ __noinline__ inline
#if defined(__CUDA_ARCH__)  // the device pass; the host compiler does not know the pragma
#define S2R_NO_UNROLL _Pragma("unroll 1")
#define S2R_UNROLL _Pragma("unroll")
#else
#define S2R_NO_UNROLL
#define S2R_UNROLL
#endif
#else
#define S2R_HD inline
#define S2R_HDI inline __attribute__((always_inline))
#define S2R_HD_NOINLINE inline __attribute__((noinline))
#define S2R_NO_UNROLL
#define S2R_UNROLL
#endif
// S2R_HD_NOINLINE, S2R_NO_UNROLL, S2R_UNROLL: for a rare path with long loops (box-box's exact
// closest pair), kept out of its caller so that its registers do not add to the step kernel's
// pressure; on the device its loops over corners are not unrolled (code size) and those over axes
// are (an array indexed at run time lives in local memory)
// S2R_HDI: the small vector and quaternion operations (kernels/math_types.h), always inlined --
// g++ otherwise leaves Rotate and the products as calls in the solver's hot loops

// S2R_HOST_AVX2: on an x86-64 host built by g++, the function is compiled twice, for AVX2 and for
// the baseline, and the loader picks the one the CPU runs (GCC's target_clones, an ifunc). For the
// dense kernels whose loops vectorize across columns (kernels/dense.h): 8 lanes instead of 4. FMA
// is not enabled, so no product is fused and the AVX2 clone's results equal the baseline's to the
// bit (the same IEEE operations in the same order, wider). Nothing on the device or other hosts.
#if !defined(__CUDACC__) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define S2R_HOST_AVX2 __attribute__((target_clones("avx2", "default")))
#else
#define S2R_HOST_AVX2
#endif

namespace s2r {

#if defined(S2R_DOUBLE)
using Real = double;
#else
using Real = float;
#endif

constexpr Real kPi = Real(3.14159265358979323846);

S2R_HD float Sqrt(float x) { return sqrtf(x); }
S2R_HD double Sqrt(double x) { return sqrt(x); }
S2R_HD float Abs(float x) { return fabsf(x); }
S2R_HD double Abs(double x) { return fabs(x); }
// On the device, sinf / cosf (and sin / cos) carry a large-argument reduction (Payne-Hanek) whose
// table of words lives in local memory: 64 B more frame in every kernel that inlines one (the sweep
// kernel's observation noise and push events, the arms' hinges). The angles here (joint angles,
// noise, sampling directions) are far below where that reduction is needed; sinpi / cospi of
// x / pi reduce exactly without it. x / pi rounds the argument by half an ulp: in float an
// absolute error of about |x| * 6e-8 (numpy, float32 arguments over [-2 pi, 2 pi]: at most 4e-8
// within 0.5 rad, 2.2e-7 within pi, 4.4e-7 at 2 pi; sinf's is about 6e-8). The CPU keeps sin / cos
// (its state hashes are pinned); the backends' parity tests allow rounding.
constexpr double kInvPi = 0.318309886183790671538;
S2R_HD float Sin(float x) {
#if defined(__CUDA_ARCH__)
  return sinpif(x * float(kInvPi));
#else
  return sinf(x);
#endif
}
S2R_HD double Sin(double x) {
#if defined(__CUDA_ARCH__)
  return sinpi(x * kInvPi);
#else
  return sin(x);
#endif
}
S2R_HD float Cos(float x) {
#if defined(__CUDA_ARCH__)
  return cospif(x * float(kInvPi));
#else
  return cosf(x);
#endif
}
S2R_HD double Cos(double x) {
#if defined(__CUDA_ARCH__)
  return cospi(x * kInvPi);
#else
  return cos(x);
#endif
}
S2R_HD float Floor(float x) { return floorf(x); }
S2R_HD double Floor(double x) { return floor(x); }
S2R_HD float Atan2(float y, float x) { return atan2f(y, x); }
S2R_HD double Atan2(double y, double x) { return atan2(y, x); }
S2R_HD bool IsFinite(float x) { return isfinite(x); }
S2R_HD bool IsFinite(double x) { return isfinite(x); }

template <typename T>
S2R_HD T Min(T a, T b) { return a < b ? a : b; }
template <typename T>
S2R_HD T Max(T a, T b) { return a > b ? a : b; }
template <typename T>
S2R_HD T Clamp(T x, T lo, T hi) { return x < lo ? lo : (x > hi ? hi : x); }

// The angle equal to `angle` modulo 2 pi that lies within pi of `near` (an angle read from an
// orientation, put on the turn of a continuous reference).
S2R_HD Real UnwrapNear(Real angle, Real near) {
  const Real two_pi = Real(2) * kPi;
  return angle + two_pi * Floor((near - angle) / two_pi + Real(0.5));
}

}  // namespace s2r
