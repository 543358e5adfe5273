// The exact signed distance between two boxes, in double precision, as the oracle for the box-box
// and convex narrow phases (tests only).
//
// Separated boxes: the closest pair of points lies on a vertex of one against the other box, or on
// an edge of each, so the distance is the smallest of the 16 vertex-to-box distances and the 144
// edge-to-edge segment distances. Overlapping boxes: the minimum translation that separates them
// is along one of the 15 separating-axis candidates (the Minkowski difference of two boxes has
// faces normal to a face of either box or to a cross product of their edges), so the penetration
// depth is the smallest overlap of their projections on those axes; the result is its negative.
#pragma once

#include "kernels/math_types.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

namespace s2r {
namespace testing_exact {

using D3 = std::array<double, 3>;

inline D3 Sub(const D3& a, const D3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline double Dot3(const D3& a, const D3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
inline D3 Cross3(const D3& a, const D3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
inline double Clamp01(double x) { return std::min(1.0, std::max(0.0, x)); }

// a box in double: centre, unit axes (columns of its rotation), half-sizes
struct ExactBox {
  D3 centre;
  D3 axis[3];
  double half[3];
};

inline ExactBox MakeExactBox(const Transform& t, const Real* h) {
  ExactBox b;
  b.centre = {t.pos.x, t.pos.y, t.pos.z};
  const Mat3 m = QuatToMat3(t.rot);
  for (int k = 0; k < 3; ++k) {
    const Vec3 c = Column(m, k);
    b.axis[k] = {c.x, c.y, c.z};
    b.half[k] = h[k];
  }
  return b;
}

// corner i: bit k set means +half along axis k
inline D3 Corner(const ExactBox& b, int i) {
  D3 v = b.centre;
  for (int k = 0; k < 3; ++k) {
    const double s = (i >> k & 1) ? b.half[k] : -b.half[k];
    for (int j = 0; j < 3; ++j) v[j] += s * b.axis[k][j];
  }
  return v;
}

inline double PointToBox(const D3& p, const ExactBox& b) {
  const D3 d = Sub(p, b.centre);
  double s = 0;
  for (int k = 0; k < 3; ++k) {
    const double outside = std::abs(Dot3(d, b.axis[k])) - b.half[k];
    if (outside > 0) s += outside * outside;
  }
  return std::sqrt(s);
}

// distance between segments p1-q1 and p2-q2 (Ericson, Real-Time Collision Detection 5.1.9)
inline double SegmentToSegment(const D3& p1, const D3& q1, const D3& p2, const D3& q2) {
  const D3 d1 = Sub(q1, p1), d2 = Sub(q2, p2), r = Sub(p1, p2);
  const double a = Dot3(d1, d1), e = Dot3(d2, d2), f = Dot3(d2, r), c = Dot3(d1, r);
  const double b = Dot3(d1, d2), denom = a * e - b * b;
  double s = denom > 1e-300 ? Clamp01((b * f - c * e) / denom) : 0.0;
  double t = (b * s + f) / e;
  if (t < 0) {
    t = 0;
    s = Clamp01(-c / a);
  } else if (t > 1) {
    t = 1;
    s = Clamp01((b - c) / a);
  }
  D3 x;
  for (int j = 0; j < 3; ++j) x[j] = p1[j] + s * d1[j] - p2[j] - t * d2[j];
  return std::sqrt(Dot3(x, x));
}

// gap between the two boxes' projections on unit axis n (negative: overlap)
inline double AxisGap(const ExactBox& a, const ExactBox& b, const D3& n) {
  double ea = 0, eb = 0;
  for (int k = 0; k < 3; ++k) {
    ea += a.half[k] * std::abs(Dot3(a.axis[k], n));
    eb += b.half[k] * std::abs(Dot3(b.axis[k], n));
  }
  return std::abs(Dot3(Sub(b.centre, a.centre), n)) - ea - eb;
}
inline double AxisGap(const ExactBox& a, const ExactBox& b, Vec3 n) {
  const D3 d{n.x, n.y, n.z};
  return AxisGap(a, b, d) / std::sqrt(Dot3(d, d));
}

// the largest gap over the 15 separating-axis candidates
inline double BestAxisGap(const ExactBox& a, const ExactBox& b) {
  double best = -1e300;
  for (int k = 0; k < 3; ++k) {
    best = std::max(best, AxisGap(a, b, a.axis[k]));
    best = std::max(best, AxisGap(a, b, b.axis[k]));
  }
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      D3 n = Cross3(a.axis[i], b.axis[j]);
      const double len = std::sqrt(Dot3(n, n));
      if (len < 1e-9) continue;  // parallel edges: the face axes cover them
      for (double& x : n) x /= len;
      best = std::max(best, AxisGap(a, b, n));
    }
  }
  return best;
}

// the largest |cos| between a unit direction and a face normal of either box
inline double FaceAxisCos(const ExactBox& a, const ExactBox& b, const D3& n) {
  double most = 0;
  for (int k = 0; k < 3; ++k) {
    most = std::max(most, std::abs(Dot3(a.axis[k], n)));
    most = std::max(most, std::abs(Dot3(b.axis[k], n)));
  }
  return most;
}
inline double FaceAxisCos(const ExactBox& a, const ExactBox& b, Vec3 n) {
  const D3 d{n.x, n.y, n.z};
  const double len = std::sqrt(Dot3(d, d));
  return FaceAxisCos(a, b, D3{d[0] / len, d[1] / len, d[2] / len});
}

// FaceAxisCos of the edge axis (of the 9 cross products) with the largest gap
inline double BestEdgeAxisFaceCos(const ExactBox& a, const ExactBox& b) {
  double best = -1e300, cos = 0;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      D3 n = Cross3(a.axis[i], b.axis[j]);
      const double len = std::sqrt(Dot3(n, n));
      if (len < 1e-3) continue;  // as the kernel: nearly parallel edges are left to the face axes
      for (double& x : n) x /= len;
      const double gap = AxisGap(a, b, n);
      if (gap > best) {
        best = gap;
        cos = FaceAxisCos(a, b, n);
      }
    }
  }
  return cos;
}

// signed distance: > 0 apart (exact distance), <= 0 overlapping (minus the penetration depth)
inline double SignedBoxDistance(const ExactBox& a, const ExactBox& b) {
  const double gap = BestAxisGap(a, b);
  if (gap <= 0) return gap;
  double d = 1e300;
  for (int i = 0; i < 8; ++i) {
    d = std::min(d, PointToBox(Corner(a, i), b));
    d = std::min(d, PointToBox(Corner(b, i), a));
  }
  for (int i = 0; i < 8; ++i) {
    for (int k = 0; k < 3; ++k) {
      const int j = i ^ (1 << k);  // the edge from corner i along axis k, once
      if (j < i) continue;
      for (int p = 0; p < 8; ++p) {
        for (int l = 0; l < 3; ++l) {
          const int q = p ^ (1 << l);
          if (q < p) continue;
          d = std::min(d, SegmentToSegment(Corner(a, i), Corner(a, j), Corner(b, p), Corner(b, q)));
        }
      }
    }
  }
  return d;
}

// A random pair of boxes (half-sizes 1-30 cm, any orientations) placed so that about half of the
// pairs near touching overlap: A at the origin, B's centre within 0.6 of their half-diagonals'
// sum along each axis. Every draw is a statement of its own, in a fixed order (compilers evaluate
// function arguments in different orders, which would draw different poses).
struct RandomBoxPair {
  Real ha[3], hb[3];
  Transform ta, tb;
};

inline RandomBoxPair DrawBoxPair(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1), half(0.01, 0.3);
  RandomBoxPair p;
  for (Real& h : p.ha) h = Real(half(rng));
  for (Real& h : p.hb) h = Real(half(rng));
  Real q[8];
  for (Real& x : q) x = Real(u(rng));
  const double reach = 0.6 * (Length(LoadVec3(p.ha)) + Length(LoadVec3(p.hb)));
  Real offset[3];
  for (Real& x : offset) x = Real(reach * u(rng));
  p.ta = Transform{Vec3{0, 0, 0}, NormalizeQuat(Quat{q[0], q[1], q[2], q[3]})};
  p.tb = Transform{LoadVec3(offset), NormalizeQuat(Quat{q[4], q[5], q[6], q[7]})};
  return p;
}

// The pairs of `trials` draws (DrawBoxPair, in order from rng) whose exact signed distance lies
// within (-margin, margin): the draw's index, its poses, the exact boxes and their distance.
struct NearBoxPair {
  int trial;
  RandomBoxPair pose;
  ExactBox a, b;
  double exact;
};

inline std::vector<NearBoxPair> DrawNearBoxPairs(std::mt19937& rng, int trials, double margin) {
  std::vector<NearBoxPair> near;
  for (int trial = 0; trial < trials; ++trial) {
    const RandomBoxPair pose = DrawBoxPair(rng);
    const ExactBox a = MakeExactBox(pose.ta, pose.ha), b = MakeExactBox(pose.tb, pose.hb);
    const double exact = SignedBoxDistance(a, b);
    if (exact >= margin || exact < -margin) continue;
    near.push_back(NearBoxPair{trial, pose, a, b, exact});
  }
  return near;
}

}  // namespace testing_exact
}  // namespace s2r
