// Counter-based random numbers: Philox4x32-10.
//
// Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3" (SC'11). A keyed
// bijection of a 128-bit counter: the n-th number of a stream is computed directly, with no state
// to carry, so a sample is a pure function of what it is for. s2r keys it by the sweep seed and
// counts over (episode, stream, draw): episode i's randomization is the same whatever world runs
// it, on any backend, thread count or shard. Ten rounds pass BigCrush (the paper's Table 2).
#pragma once

#include "kernels/base.h"

namespace s2r {

struct U32x4 {
  uint32_t v[4];
};

// the paper's round multipliers and Weyl key increments (golden ratio, sqrt(3) - 1)
constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;
constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;

S2R_HD U32x4 Philox4x32(U32x4 counter, uint32_t key0, uint32_t key1) {
  U32x4 c = counter;
  for (int round = 0; round < 10; ++round) {
    // two 32x32 -> 64-bit products; their halves are mixed with the other words and the key
    const uint64_t p0 = uint64_t(kPhiloxM0) * c.v[0];
    const uint64_t p1 = uint64_t(kPhiloxM1) * c.v[2];
    const uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
    const uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
    c = U32x4{{hi1 ^ c.v[1] ^ key0, lo1, hi0 ^ c.v[3] ^ key1, lo0}};
    key0 += kPhiloxW0;
    key1 += kPhiloxW1;
  }
  return c;
}

// The four words of draw `index` of stream `stream` of episode `episode` of a sweep with `seed`:
// key (seed low, seed high), counter (episode low, episode high, stream, index).
S2R_HD U32x4 RandomBits(uint64_t seed, uint64_t episode, uint32_t stream, uint32_t index) {
  return Philox4x32(U32x4{{uint32_t(episode), uint32_t(episode >> 32), stream, index}}, uint32_t(seed),
                    uint32_t(seed >> 32));
}

// A double in the open interval (0, 1) from two words: 52 bits, (k + 0.5) 2^-52 with
// k = (hi 2^20) xor (lo >> 12) < 2^52. Never 0 or 1 (k + 0.5 is exact below 2^52; with 53 bits the
// largest k would round up to 1), so logs and inverse CDFs stay finite.
S2R_HD double UniformOpen01(uint32_t hi, uint32_t lo) {
  const uint64_t k = (uint64_t(hi) << 20) ^ (uint64_t(lo) >> 12);
  return (double(k) + 0.5) * (1.0 / 4503599627370496.0);
}

// A double in (0, 1) from one word: (x + 0.5) 2^-32. For noise, where 32 bits are plenty (a
// normal from it reaches 6.2 sigma) and a Philox call then gives four draws instead of two.
S2R_HD double UniformOpen01From32(uint32_t x) { return (double(x) + 0.5) * (1.0 / 4294967296.0); }

// FNV-1a, 32 bits, of a NUL-terminated name: a parameter's stream, so adding or reordering
// parameters leaves the others' samples unchanged.
S2R_HD uint32_t StreamOfName(const char* name) {
  uint32_t h = 2166136261u;
  for (const char* p = name; *p != '\0'; ++p) {
    h ^= uint32_t(static_cast<unsigned char>(*p));
    h *= 16777619u;
  }
  return h;
}

}  // namespace s2r
