// Small dense linear algebra shared by the reduced-coordinate solvers (slide trees,
// solver_reduced.h; articulated trees, solver_tree.h): row-major r x r matrices in Real arrays.
#pragma once

#include "kernels/math_types.h"

namespace s2r {

// Columns of the inverse solved side by side (SpdInverse): on the host a block of 8, so the
// column solves' serial dependency chains (each entry subtracts its terms in order) overlap and
// vectorize across columns; on the device one (a block costs 8x the local array per thread, and
// threads already run side by side). Every column's operations and their order are the same
// either way, so the inverse is bit-identical for any block width.
#if defined(__CUDA_ARCH__)
constexpr int kSpdInverseBlock = 1;
#else
constexpr int kSpdInverseBlock = 8;
#endif

// Columns col0 .. col0 + kBlock - 1 of the inverse from the Cholesky factor in `a` (L in the
// lower triangle, 1 / L_ii on the diagonal), solved side by side: x[i][c] is entry i of column
// col0 + c. Columns past r are computed on zeros and not stored.
template <int kMax, int kBlock>
S2R_HD void SpdInverseColumns(const Real* a, Real* inv, int r, int col0) {
  // L y = e_col (y is zero above col), then L^T x = y
  Real x[kMax][kBlock];
  for (int i = 0; i < col0; ++i) {
    for (int c = 0; c < kBlock; ++c) x[i][c] = Real(0);
  }
  for (int i = col0; i < r; ++i) {
    Real s[kBlock];
    for (int c = 0; c < kBlock; ++c) s[c] = i == col0 + c ? Real(1) : Real(0);
    // column col0 + c sums p = col0 + c .. i - 1 (the entries above col0 + c are zero)
    for (int p = col0; p < i; ++p) {
      const Real lip = a[i * r + p];
      for (int c = 0; c < kBlock; ++c) s[c] = p >= col0 + c ? s[c] - lip * x[p][c] : s[c];
    }
    const Real d = a[i * r + i];
    for (int c = 0; c < kBlock; ++c) x[i][c] = i >= col0 + c ? s[c] * d : Real(0);
  }
  for (int i = r - 1; i >= 0; --i) {
    Real s[kBlock];
    for (int c = 0; c < kBlock; ++c) s[c] = x[i][c];
    for (int p = i + 1; p < r; ++p) {
      const Real lpi = a[p * r + i];
      for (int c = 0; c < kBlock; ++c) s[c] -= lpi * x[p][c];
    }
    const Real d = a[i * r + i];
    for (int c = 0; c < kBlock; ++c) x[i][c] = s[c] * d;
  }
  // symmetric: rows = columns
  for (int c = 0; c < kBlock && col0 + c < r; ++c) {
    for (int i = 0; i < r; ++i) inv[(col0 + c) * r + i] = x[i][c];
  }
}

// Inverts the symmetric positive definite r x r matrix `a` (overwritten by its Cholesky factor:
// L in the lower triangle, 1 / L_ii on the diagonal) into `inv`, column by column. kMax bounds r
// (the column solves run in a local array of that size). Returns false, leaving `inv` untouched,
// when `a` is not positive definite (a massless leaf, a joint without armature or inertia).
// The columns go in blocks of kBlock, and the last few in the narrowest block of 4, 2 or 1 that
// holds them (a 10-joint arm: 8 + 2, not 8 + 8 of which 6 are padding).
template <int kMax, int kBlock = kSpdInverseBlock>
S2R_HD bool SpdInverse(Real* a, Real* inv, int r) {
  for (int i = 0; i < r; ++i) {
    for (int k = 0; k <= i; ++k) {
      Real s = a[i * r + k];
      for (int p = 0; p < k; ++p) s -= a[i * r + p] * a[k * r + p];
      if (i == k) {
        if (!(s > Real(0))) return false;
        a[i * r + i] = Real(1) / Sqrt(s);
      } else {
        a[i * r + k] = s * a[k * r + k];
      }
    }
  }
  constexpr int kBlock4 = kBlock < 4 ? kBlock : 4;
  constexpr int kBlock2 = kBlock < 2 ? kBlock : 2;
  int col0 = 0;
  for (; col0 + kBlock <= r; col0 += kBlock) SpdInverseColumns<kMax, kBlock>(a, inv, r, col0);
  for (; r - col0 >= 3; col0 += kBlock4) SpdInverseColumns<kMax, kBlock4>(a, inv, r, col0);
  for (; r - col0 >= 2; col0 += kBlock2) SpdInverseColumns<kMax, kBlock2>(a, inv, r, col0);
  if (col0 < r) SpdInverseColumns<kMax, 1>(a, inv, r, col0);
  return true;
}

}  // namespace s2r
