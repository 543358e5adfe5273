// kernels/dense.h: the inverse of a symmetric positive definite matrix, solved a block of columns
// at a time on the host, one at a time on the device, is the same to the bit either way.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/dense.h"

namespace s2r {
namespace {

// a random SPD matrix: B B^T + r I, with some zero rows/columns of B (a welded rank's row is e_k)
std::vector<Real> RandomSpd(int r, std::mt19937* rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> b(r * r);
  for (double& x : b) x = u(*rng);
  std::vector<Real> a(r * r);
  for (int i = 0; i < r; ++i) {
    for (int k = 0; k < r; ++k) {
      double s = i == k ? 0.1 * r : 0;
      for (int p = 0; p < r; ++p) s += b[i * r + p] * b[k * r + p];
      a[i * r + k] = Real(s);
    }
  }
  if (r > 2) {  // a weld-like rank: 1 on the diagonal, zeros elsewhere
    for (int k = 0; k < r; ++k) a[1 * r + k] = a[k * r + 1] = Real(0);
    a[1 * r + 1] = Real(1);
  }
  return a;
}

TEST(Dense, SpdInverseBlockWidthIsBitIdentical) {
  std::mt19937 rng(7);
  for (int r = 1; r <= 32; ++r) {
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<Real> a = RandomSpd(r, &rng);
      std::vector<Real> a1 = a, a4 = a, a8 = a, inv1(r * r), inv4(r * r), inv8(r * r);
      ASSERT_TRUE((SpdInverse<32, 1>(a1.data(), inv1.data(), r)));
      ASSERT_TRUE((SpdInverse<32, 4>(a4.data(), inv4.data(), r)));
      ASSERT_TRUE((SpdInverse<32, 8>(a8.data(), inv8.data(), r)));
      EXPECT_EQ(std::memcmp(inv1.data(), inv4.data(), sizeof(Real) * r * r), 0) << "r = " << r;
      EXPECT_EQ(std::memcmp(inv1.data(), inv8.data(), sizeof(Real) * r * r), 0) << "r = " << r;
      // and it is the inverse: A A^-1 = I within float rounding of a condition number of ~100
      double worst = 0;
      for (int i = 0; i < r; ++i) {
        for (int k = 0; k < r; ++k) {
          double s = 0;
          for (int p = 0; p < r; ++p) s += double(a[i * r + p]) * double(inv8[p * r + k]);
          worst = std::fmax(worst, std::fabs(s - (i == k ? 1.0 : 0.0)));
        }
      }
      EXPECT_LT(worst, 1e-3) << "r = " << r;
    }
  }
  // not positive definite: false
  std::vector<Real> bad = {1, 2, 2, 1}, inv(4);
  EXPECT_FALSE((SpdInverse<32, 8>(bad.data(), inv.data(), 2)));
}

// The right-looking factorization subtracts each entry's terms in the dot-product form's order, so
// its L is that form's to the bit; and the stored inverse is exactly symmetric (each pair of
// entries comes from one column solve).
TEST(Dense, FactorMatchesTheDotProductFormAndTheInverseIsSymmetric) {
  std::mt19937 rng(11);
  for (int r = 1; r <= 32; ++r) {
    std::vector<Real> a = RandomSpd(r, &rng);
    std::vector<Real> ref = a;
    for (int i = 0; i < r; ++i) {  // L by dot products, row by row (1 / L_ii on the diagonal)
      for (int k = 0; k <= i; ++k) {
        Real s = ref[i * r + k];
        for (int p = 0; p < k; ++p) s -= ref[i * r + p] * ref[k * r + p];
        ref[i * r + k] = i == k ? Real(1) / std::sqrt(s) : s * ref[k * r + k];
      }
    }
    std::vector<Real> f = a, inv(r * r);
    ASSERT_TRUE((SpdInverse<32, 8>(f.data(), inv.data(), r)));
    for (int i = 0; i < r; ++i) {
      for (int k = 0; k <= i; ++k) {
        EXPECT_EQ(f[i * r + k], ref[i * r + k]) << "r = " << r << ", L(" << i << ", " << k << ")";
        EXPECT_EQ(inv[i * r + k], inv[k * r + i]) << "r = " << r << ", (" << i << ", " << k << ")";
      }
    }
  }
}

}  // namespace
}  // namespace s2r
