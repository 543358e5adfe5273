// Small dense linear algebra, all of it in one place: the symmetric positive definite inverse of
// the reduced-coordinate solvers (slide trees, solver_reduced.h; articulated trees,
// solver_tree.h) and the Cholesky and envelope Cholesky factorizations of the maximal joints'
// lock blocks (solver_joint.h). Row-major r x r matrices in Real arrays.
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
  // entries below the block's first column only: the inverse is symmetric, so entry (i, col)
  // with i < col is column i's entry col, which column i's solve (this block or an earlier one)
  // stores; the back substitution stops there (half of it for the whole matrix)
  for (int i = r - 1; i >= col0; --i) {
    Real s[kBlock];
    for (int c = 0; c < kBlock; ++c) s[c] = x[i][c];
    for (int p = i + 1; p < r; ++p) {
      const Real lpi = a[p * r + i];
      for (int c = 0; c < kBlock; ++c) s[c] -= lpi * x[p][c];
    }
    const Real d = a[i * r + i];
    for (int c = 0; c < kBlock; ++c) x[i][c] = s[c] * d;
  }
  // column col and its mirror row from the entries at and below the diagonal: the stored inverse
  // is exactly symmetric, each pair of entries from one solve
  for (int c = 0; c < kBlock && col0 + c < r; ++c) {
    const int col = col0 + c;
    for (int i = col; i < r; ++i) {
      inv[col * r + i] = x[i][c];
      inv[i * r + col] = x[i][c];
    }
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
  // Right-looking, on the upper triangle (row k of U = L^T is column k of L, contiguous): step k
  // takes the pivot, scales row k, and subtracts its outer product from the rows below, whose
  // updates are independent of one another (they overlap and vectorize; a dot product per entry
  // was one serial chain of R^3 / 6 subtractions). Each entry still subtracts its terms in the
  // order p = 0, 1, ..., so L is the same to the bit as the dot-product form's.
  for (int k = 0; k < r; ++k) {
    const Real s = a[k * r + k];
    if (!(s > Real(0))) return false;
    const Real d = Real(1) / Sqrt(s);
    a[k * r + k] = d;
    for (int j = k + 1; j < r; ++j) a[k * r + j] *= d;
    for (int i = k + 1; i < r; ++i) {
      const Real uki = a[k * r + i];
      for (int j = i; j < r; ++j) a[i * r + j] -= uki * a[k * r + j];
    }
  }
  // L in the lower triangle, where the column solves read it
  for (int i = 1; i < r; ++i) {
    for (int k = 0; k < i; ++k) a[i * r + k] = a[k * r + i];
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

// Cholesky factor k = L L^T in place (L in the lower triangle) of a symmetric positive
// (semi-)definite n x n block, with a relative diagonal regularization so a rank-deficient block
// (a joint whose rows the two bodies cannot all resolve) still factors. false: empty block.
S2R_HD bool CholeskyFactor(Real* k, int n) {
  Real trace = Real(0);
  for (int i = 0; i < n; ++i) trace += k[i * n + i];
  if (!(trace > Real(0))) return false;
  Real eps = trace * Real(1e-6) / Real(n);
  for (int i = 0; i < n; ++i) k[i * n + i] += eps;
  for (int j = 0; j < n; ++j) {
    Real d = k[j * n + j];
    for (int p = 0; p < j; ++p) d -= k[j * n + p] * k[j * n + p];
    if (!(d > Real(0))) return false;
    d = Sqrt(d);
    k[j * n + j] = d;
    for (int i = j + 1; i < n; ++i) {
      Real v = k[i * n + j];
      for (int p = 0; p < j; ++p) v -= k[i * n + p] * k[j * n + p];
      k[i * n + j] = v / d;
    }
  }
  return true;
}
// x = (L L^T)^-1 rhs
S2R_HD void CholeskySolve(const Real* l, const Real* rhs, int n, Real* x) {
  for (int i = 0; i < n; ++i) {
    Real v = rhs[i];
    for (int p = 0; p < i; ++p) v -= l[i * n + p] * x[p];
    x[i] = v / l[i * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    Real v = x[i];
    for (int p = i + 1; p < n; ++p) v -= l[p * n + i] * x[p];
    x[i] = v / l[i * n + i];
  }
}

// Envelope (profile) Cholesky: row i of K is zero left of column first[i], and so is row i of its
// factor, so the inner products start at max(first[i], first[j]). A chain of joints ordered from
// the root has a narrow envelope; this turns the O(R^3) dense factor into about O(R b^2).
S2R_HD bool EnvelopeCholeskyFactor(Real* k, int n, Real* first) {
  Real trace = Real(0);
  for (int i = 0; i < n; ++i) trace += k[i * n + i];
  if (!(trace > Real(0))) return false;
  Real eps = trace * Real(1e-6) / Real(n);
  for (int i = 0; i < n; ++i) {
    k[i * n + i] += eps;
    int f = 0;
    while (f < i && k[i * n + f] == Real(0)) ++f;
    first[i] = Real(f);
  }
  for (int j = 0; j < n; ++j) {
    int fj = static_cast<int>(first[j]);
    Real d = k[j * n + j];
    for (int p = fj; p < j; ++p) d -= k[j * n + p] * k[j * n + p];
    if (!(d > Real(0))) return false;
    d = Sqrt(d);
    k[j * n + j] = d;
    Real inv = Real(1) / d;
    for (int i = j + 1; i < n; ++i) {
      int fi = static_cast<int>(first[i]);
      if (fi > j) continue;  // outside row i's envelope: stays zero
      Real v = k[i * n + j];
      for (int p = Max(fi, fj); p < j; ++p) v -= k[i * n + p] * k[j * n + p];
      k[i * n + j] = v * inv;
    }
  }
  return true;
}
S2R_HD void EnvelopeCholeskySolve(const Real* l, const Real* first, const Real* rhs, int n,
                                  Real* x) {
  for (int i = 0; i < n; ++i) {
    Real v = rhs[i];
    for (int p = static_cast<int>(first[i]); p < i; ++p) v -= l[i * n + p] * x[p];
    x[i] = v / l[i * n + i];
  }
  // L^T x = y column by column: once x_i is known, its terms leave the rows inside i's envelope
  for (int i = n - 1; i >= 0; --i) {
    Real xi = x[i] / l[i * n + i];
    x[i] = xi;
    for (int p = static_cast<int>(first[i]); p < i; ++p) x[p] -= l[i * n + p] * xi;
  }
}

}  // namespace s2r
