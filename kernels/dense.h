// Small dense linear algebra shared by the reduced-coordinate solvers (slide trees,
// solver_reduced.h; articulated trees, solver_tree.h): row-major r x r matrices in Real arrays.
#pragma once

#include "kernels/math_types.h"

namespace s2r {

// Inverts the symmetric positive definite r x r matrix `a` (overwritten by its Cholesky factor:
// L in the lower triangle, 1 / L_ii on the diagonal) into `inv`, column by column. kMax bounds r
// (the column solves run in a local array of that size). Returns false, leaving `inv` untouched,
// when `a` is not positive definite (a massless leaf, a joint without armature or inertia).
template <int kMax>
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
  for (int col = 0; col < r; ++col) {
    // L y = e_col (y is zero above col), then L^T x = y
    Real x[kMax];
    for (int i = 0; i < col; ++i) x[i] = Real(0);
    for (int i = col; i < r; ++i) {
      Real s = i == col ? Real(1) : Real(0);
      for (int p = col; p < i; ++p) s -= a[i * r + p] * x[p];
      x[i] = s * a[i * r + i];
    }
    for (int i = r - 1; i >= 0; --i) {
      Real s = x[i];
      for (int p = i + 1; p < r; ++p) s -= a[p * r + i] * x[p];
      x[i] = s * a[i * r + i];
    }
    for (int i = 0; i < r; ++i) inv[col * r + i] = x[i];  // symmetric: rows = columns
  }
  return true;
}

}  // namespace s2r
