// GJK distance and EPA penetration between two convex shapes given by support maps.
//
// GJK (Gilbert, Johnson, Keerthi 1988; in the form of G. van den Bergen 1999 and C. Ericson,
// "Real-Time Collision Detection" 9.5) walks a simplex of the Minkowski difference A - B towards
// the origin: each step adds the support point in the direction of the origin and keeps the
// smallest sub-simplex whose closest point to the origin is the closest point of the whole
// simplex (Voronoi-region tests). Barycentric weights of that point give the closest points on A
// and B. If the simplex comes to enclose the origin the shapes overlap, and EPA (van den Bergen
// 2001) grows a polytope inside A - B from that simplex, always splitting the face nearest to the
// origin, until the face's support point lies no further out than the face: its distance is the
// penetration depth and its normal the direction to separate along.
//
// Everything is bounded for the GPU: fixed iteration counts, fixed-size arrays on the stack, no
// recursion. Spheres and capsules enter as cores (point, segment) whose radius is subtracted from
// the distance afterwards, so the common shallow contact needs no EPA at all; only when the cores
// themselves overlap does EPA run on the full (rounded) shapes.
#pragma once

#include "kernels/convex_shape.h"

namespace s2r {

// relative convergence tolerance of GJK and EPA (float32 resolves about 1e-7 of a coordinate)
constexpr Real kGjkTolerance = sizeof(Real) == 4 ? Real(2e-6) : Real(1e-10);
constexpr int kGjkMaxIterations = 64;
constexpr int kEpaMaxIterations = 48;
constexpr int kEpaMaxVertices = 52;  // < 256: faces index them with bytes
constexpr int kEpaMaxFaces = 100;
constexpr int kEpaMaxHorizon = 48;

// a point of the Minkowski difference with the support points it came from: w = a - b
struct SupportPoint {
  Vec3 w, a, b;
};

S2R_HD SupportPoint MinkowskiSupport(const ConvexShape& sa, const ConvexShape& sb, Vec3 d,
                                     bool with_radius) {
  SupportPoint p;
  p.a = SupportWorld(sa, d, with_radius);
  p.b = SupportWorld(sb, -d, with_radius);
  p.w = p.a - p.b;
  return p;
}

struct GjkResult {
  bool overlap = false;  // the origin is inside (or on) the simplex: the shapes touch or overlap
  bool beyond = false;   // stopped early: the shapes are further apart than stop_beyond
  Real distance = 0;     // between the shapes, m (0 when they overlap)
  Vec3 point_a, point_b; // closest points, world frame
  SupportPoint simplex[4];
  int count = 0;
};

// Closest point of the simplex s[0..n) to the origin: reduces the simplex to the vertices of the
// Voronoi feature that holds it and writes their weights. Returns false when the origin lies
// inside a (non-degenerate) tetrahedron.
S2R_HD bool ClosestOnSegment(SupportPoint* s, int* n, Real* lambda) {
  const Vec3 ab = s[1].w - s[0].w;
  const Real len2 = LengthSq(ab);
  const Real t = len2 > Real(0) ? -Dot(s[0].w, ab) / len2 : Real(0);
  if (t <= Real(0)) {
    *n = 1;
    lambda[0] = 1;
  } else if (t >= Real(1)) {
    s[0] = s[1];
    *n = 1;
    lambda[0] = 1;
  } else {
    lambda[0] = Real(1) - t;
    lambda[1] = t;
  }
  return true;
}

// Ericson 5.1.5 (closest point on a triangle to a point), with the point at the origin
S2R_HD void ClosestOnTriangle(SupportPoint* s, int* n, Real* lambda) {
  const Vec3 a = s[0].w, b = s[1].w, c = s[2].w;
  const Vec3 ab = b - a, ac = c - a;
  const Real d1 = -Dot(ab, a), d2 = -Dot(ac, a);
  if (d1 <= Real(0) && d2 <= Real(0)) {  // vertex a
    *n = 1;
    lambda[0] = 1;
    return;
  }
  const Real d3 = -Dot(ab, b), d4 = -Dot(ac, b);
  if (d3 >= Real(0) && d4 <= d3) {  // vertex b
    s[0] = s[1];
    *n = 1;
    lambda[0] = 1;
    return;
  }
  const Real vc = d1 * d4 - d3 * d2;
  if (vc <= Real(0) && d1 >= Real(0) && d3 <= Real(0)) {  // edge ab
    const Real v = d1 / (d1 - d3);
    *n = 2;
    lambda[0] = Real(1) - v;
    lambda[1] = v;
    return;
  }
  const Real d5 = -Dot(ab, c), d6 = -Dot(ac, c);
  if (d6 >= Real(0) && d5 <= d6) {  // vertex c
    s[0] = s[2];
    *n = 1;
    lambda[0] = 1;
    return;
  }
  const Real vb = d5 * d2 - d1 * d6;
  if (vb <= Real(0) && d2 >= Real(0) && d6 <= Real(0)) {  // edge ac
    const Real w = d2 / (d2 - d6);
    s[1] = s[2];
    *n = 2;
    lambda[0] = Real(1) - w;
    lambda[1] = w;
    return;
  }
  const Real va = d3 * d6 - d5 * d4;
  if (va <= Real(0) && (d4 - d3) >= Real(0) && (d5 - d6) >= Real(0)) {  // edge bc
    const Real w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    s[0] = s[1];
    s[1] = s[2];
    *n = 2;
    lambda[0] = Real(1) - w;
    lambda[1] = w;
    return;
  }
  const Real sum = va + vb + vc;
  const Real inv = sum != Real(0) ? Real(1) / sum : Real(0);  // degenerate: fall back to vertex a
  if (sum == Real(0)) {
    *n = 1;
    lambda[0] = 1;
    return;
  }
  *n = 3;
  lambda[0] = va * inv;
  lambda[1] = vb * inv;
  lambda[2] = vc * inv;
}

S2R_HD bool ClosestOnTetrahedron(SupportPoint* s, int* n, Real* lambda) {
  // faces with the vertex each leaves out
  const int face[4][4] = {{0, 1, 2, 3}, {0, 3, 1, 2}, {0, 2, 3, 1}, {1, 3, 2, 0}};
  Real best = Real(-1);
  SupportPoint best_s[3];
  Real best_lambda[3];
  int best_n = 0;
  for (int f = 0; f < 4; ++f) {
    const Vec3 a = s[face[f][0]].w, b = s[face[f][1]].w, c = s[face[f][2]].w, d = s[face[f][3]].w;
    const Vec3 normal = Cross(b - a, c - a);
    const Real side_origin = -Dot(a, normal), side_d = Dot(d - a, normal);
    // the origin is beyond this face (or the tetrahedron is flat here): candidate
    const bool flat = Abs(side_d) <= kGjkTolerance * kGjkTolerance * LengthSq(normal);
    if (!flat && side_origin * side_d >= Real(0)) continue;
    SupportPoint t[3] = {s[face[f][0]], s[face[f][1]], s[face[f][2]]};
    int tn = 3;
    Real tl[3];
    ClosestOnTriangle(t, &tn, tl);
    Vec3 p{0, 0, 0};
    for (int i = 0; i < tn; ++i) p += tl[i] * t[i].w;
    const Real dist = LengthSq(p);
    if (best < Real(0) || dist < best) {
      best = dist;
      best_n = tn;
      for (int i = 0; i < tn; ++i) {
        best_s[i] = t[i];
        best_lambda[i] = tl[i];
      }
    }
  }
  if (best < Real(0)) return false;  // inside all four faces
  *n = best_n;
  for (int i = 0; i < best_n; ++i) {
    s[i] = best_s[i];
    lambda[i] = best_lambda[i];
  }
  return true;
}

// GJK distance between two shapes (cores only, or with their radii). It stops as soon as the
// distance is known to exceed stop_beyond (the support plane along -v bounds it from below), so
// pairs outside the contact margin cost a few iterations.
S2R_HD GjkResult Gjk(const ConvexShape& sa, const ConvexShape& sb, bool with_radius,
                     Real stop_beyond = Real(1e30)) {
  GjkResult r;
  Vec3 d = sb.xform.pos - sa.xform.pos;
  if (LengthSq(d) <= Real(0)) d = Vec3{1, 0, 0};
  r.simplex[0] = MinkowskiSupport(sa, sb, d, with_radius);
  r.count = 1;
  Real lambda[4] = {1, 0, 0, 0};
  Vec3 v = r.simplex[0].w;
  // the closest points that go with v: kept with it, so that a step whose reduced simplex comes out
  // further from the origin (round-off on a nearly flat simplex) cannot replace them
  r.point_a = r.simplex[0].a;
  r.point_b = r.simplex[0].b;
  Real scale = LengthSq(v);
  for (int iter = 0; iter < kGjkMaxIterations; ++iter) {
    const Real vv = LengthSq(v);
    if (vv <= kGjkTolerance * kGjkTolerance * Max(scale, Real(1e-12))) {
      r.overlap = true;  // the origin lies on the simplex
      break;
    }
    const SupportPoint p = MinkowskiSupport(sa, sb, -v, with_radius);
    scale = Max(scale, LengthSq(p.w));
    const Real vw = Dot(v, p.w);
    if (vw > Real(0) && vw * vw > stop_beyond * stop_beyond * vv) {
      r.beyond = true;
      r.distance = vw / Sqrt(vv);
      return r;
    }
    // no progress towards the origin: v is the closest point
    if (vv - Dot(v, p.w) <= kGjkTolerance * vv) break;
    bool repeated = false;
    for (int i = 0; i < r.count; ++i) repeated = repeated || LengthSq(r.simplex[i].w - p.w) <= Real(0);
    if (repeated) break;
    r.simplex[r.count++] = p;
    bool outside = true;
    if (r.count == 2) {
      ClosestOnSegment(r.simplex, &r.count, lambda);
    } else if (r.count == 3) {
      ClosestOnTriangle(r.simplex, &r.count, lambda);
    } else {
      outside = ClosestOnTetrahedron(r.simplex, &r.count, lambda);
    }
    if (!outside) {
      // A tetrahedron can only enclose the origin if the origin is in A - B, and then no point of
      // A - B lies beyond it along v: vw > 0 proves the shapes apart (by at least vw / |v|). A
      // nearly flat tetrahedron (the new point all but in the last triangle's plane, as when the
      // closest point lies inside a face of A - B) fails the face-side tests in float and looks
      // closed around the origin; then v, within (vv - vw) / |v| of the distance, is the answer.
      if (vw > Real(0)) break;
      r.overlap = true;
      break;
    }
    Vec3 next{0, 0, 0};
    for (int i = 0; i < r.count; ++i) next += lambda[i] * r.simplex[i].w;
    // float round-off can make the new point no closer: stop at the better one, v, whose closest
    // points are kept (the simplex has already moved on: its weights describe `next`)
    if (LengthSq(next) >= vv) break;
    v = next;
    r.point_a = Vec3{0, 0, 0};
    r.point_b = Vec3{0, 0, 0};
    for (int i = 0; i < r.count; ++i) {
      r.point_a += lambda[i] * r.simplex[i].a;
      r.point_b += lambda[i] * r.simplex[i].b;
    }
  }
  r.distance = r.overlap ? Real(0) : Length(r.point_a - r.point_b);
  return r;
}

struct Penetration {
  bool valid = false;
  Vec3 normal;    // from A to B, unit
  Real depth = 0; // m, >= 0
  Vec3 point_a, point_b;  // deepest points of A in B and of B in A, world frame
};

// a face of the EPA polytope: vertex indices (< kEpaMaxVertices) kept as bytes, so the polytope
// fits a GPU thread's stack frame in a few KB
struct EpaFace {
  Vec3 n;
  Real dist;
  uint8_t v[3];
  bool alive;
};

S2R_HD bool EpaMakeFace(const SupportPoint* verts, int a, int b, int c, EpaFace* f) {
  f->v[0] = static_cast<uint8_t>(a);
  f->v[1] = static_cast<uint8_t>(b);
  f->v[2] = static_cast<uint8_t>(c);
  const Vec3 n = Cross(verts[b].w - verts[a].w, verts[c].w - verts[a].w);
  const Real len = Length(n);
  f->alive = true;
  if (!(len > Real(0))) {
    f->n = Vec3{0, 0, 1};
    f->dist = Real(1e30);  // degenerate: never the closest
    return false;
  }
  f->n = (Real(1) / len) * n;
  f->dist = Dot(f->n, verts[a].w);
  return true;
}

// Penetration depth and normal of two overlapping shapes (full shapes, radii included).
S2R_HD Penetration Epa(const ConvexShape& sa, const ConvexShape& sb) {
  Penetration out;
  GjkResult g = Gjk(sa, sb, true);
  SupportPoint verts[kEpaMaxVertices];
  int nv = g.count;
  for (int i = 0; i < nv; ++i) verts[i] = g.simplex[i];
  Real scale = Real(0);
  for (int i = 0; i < nv; ++i) scale = Max(scale, Length(verts[i].w));
  scale = Max(scale, Real(1e-6));
  const Real eps = Real(1e-4) * scale;

  // blow a lower-dimensional simplex up to a tetrahedron (touching or degenerate contact)
  const Vec3 axes[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  if (nv == 1) {
    for (int k = 0; k < 6 && nv == 1; ++k) {
      const SupportPoint p = MinkowskiSupport(sa, sb, axes[k], true);
      if (Length(p.w - verts[0].w) > eps) verts[nv++] = p;
    }
  }
  if (nv == 2) {
    const Vec3 u = Normalize(verts[1].w - verts[0].w);
    Vec3 t1, t2;
    OrthonormalBasis(u, &t1, &t2);
    for (int k = 0; k < 6 && nv == 2; ++k) {
      const Real angle = Real(k) * kPi / Real(3);
      const Vec3 dir = Cos(angle) * t1 + Sin(angle) * t2;
      const SupportPoint p = MinkowskiSupport(sa, sb, dir, true);
      const Vec3 off = p.w - verts[0].w;
      if (Length(off - Dot(off, u) * u) > eps) verts[nv++] = p;
    }
  }
  if (nv == 3) {
    const Vec3 n = Normalize(Cross(verts[1].w - verts[0].w, verts[2].w - verts[0].w));
    for (int k = 0; k < 2 && nv == 3; ++k) {
      const SupportPoint p = MinkowskiSupport(sa, sb, k == 0 ? n : -n, true);
      if (Abs(Dot(p.w - verts[0].w, n)) > eps) verts[nv++] = p;
    }
  }
  if (nv < 4) return out;  // A - B is flat: a degenerate shape

  // the tetrahedron's faces, wound outwards
  EpaFace faces[kEpaMaxFaces];
  int nf = 0;
  const int tet[4][4] = {{0, 1, 2, 3}, {0, 3, 1, 2}, {0, 2, 3, 1}, {1, 3, 2, 0}};
  for (int f = 0; f < 4; ++f) {
    int a = tet[f][0], b = tet[f][1], c = tet[f][2];
    const Vec3 n = Cross(verts[b].w - verts[a].w, verts[c].w - verts[a].w);
    if (Dot(n, verts[tet[f][3]].w - verts[a].w) > Real(0)) {
      const int tmp = b;
      b = c;
      c = tmp;
    }
    EpaMakeFace(verts, a, b, c, &faces[nf++]);
  }

  int best = 0;
  for (int iter = 0; iter < kEpaMaxIterations; ++iter) {
    // the face nearest to the origin
    best = -1;
    for (int f = 0; f < nf; ++f) {
      if (faces[f].alive && (best < 0 || faces[f].dist < faces[best].dist)) best = f;
    }
    if (best < 0) return out;
    const EpaFace& fb = faces[best];
    const SupportPoint p = MinkowskiSupport(sa, sb, fb.n, true);
    // converged: the support plane along the face normal is the face itself
    if (Dot(p.w, fb.n) - fb.dist <= kGjkTolerance * Real(10) * scale) break;
    if (nv >= kEpaMaxVertices) break;
    const int iv = nv;
    verts[nv++] = p;
    // remove the faces that see the new point; the edges seen once form the horizon
    uint8_t horizon[kEpaMaxHorizon][2];
    int nh = 0;
    bool overflow = false;
    for (int f = 0; f < nf; ++f) {
      if (!faces[f].alive || Dot(faces[f].n, p.w - verts[faces[f].v[0]].w) <= Real(0)) continue;
      faces[f].alive = false;
      for (int e = 0; e < 3; ++e) {
        const int e0 = faces[f].v[e], e1 = faces[f].v[(e + 1) % 3];
        int found = -1;
        for (int h = 0; h < nh; ++h) {
          if (horizon[h][0] == e1 && horizon[h][1] == e0) found = h;
        }
        if (found >= 0) {
          horizon[found][0] = horizon[nh - 1][0];
          horizon[found][1] = horizon[nh - 1][1];
          --nh;
        } else if (nh < kEpaMaxHorizon) {
          horizon[nh][0] = static_cast<uint8_t>(e0);
          horizon[nh][1] = static_cast<uint8_t>(e1);
          ++nh;
        } else {
          overflow = true;
        }
      }
    }
    // fan the horizon to the new point, reusing dead face slots
    int slot = 0;
    for (int h = 0; h < nh; ++h) {
      while (slot < nf && faces[slot].alive) ++slot;
      if (slot >= kEpaMaxFaces) {
        overflow = true;
        break;
      }
      EpaMakeFace(verts, horizon[h][0], horizon[h][1], iv, &faces[slot]);
      if (slot == nf) ++nf;
    }
    if (overflow) break;
  }
  // the best face after the last split (or the one that converged)
  best = -1;
  for (int f = 0; f < nf; ++f) {
    if (faces[f].alive && (best < 0 || faces[f].dist < faces[best].dist)) best = f;
  }
  if (best < 0 || faces[best].dist >= Real(1e29)) return out;
  const EpaFace& f = faces[best];
  // barycentric weights of the origin's projection onto the face
  const Vec3 p = f.dist * f.n;
  const Vec3 a = verts[f.v[0]].w, b = verts[f.v[1]].w, c = verts[f.v[2]].w;
  const Vec3 v0 = b - a, v1 = c - a, v2 = p - a;
  const Real d00 = Dot(v0, v0), d01 = Dot(v0, v1), d11 = Dot(v1, v1);
  const Real d20 = Dot(v2, v0), d21 = Dot(v2, v1);
  const Real denom = d00 * d11 - d01 * d01;
  Real l1 = Real(1) / Real(3), l2 = Real(1) / Real(3);
  if (denom > Real(0)) {
    l1 = (d11 * d20 - d01 * d21) / denom;
    l2 = (d00 * d21 - d01 * d20) / denom;
  }
  const Real l0 = Real(1) - l1 - l2;
  out.valid = true;
  out.normal = f.n;
  out.depth = Max(f.dist, Real(0));
  out.point_a = l0 * verts[f.v[0]].a + l1 * verts[f.v[1]].a + l2 * verts[f.v[2]].a;
  out.point_b = l0 * verts[f.v[0]].b + l1 * verts[f.v[1]].b + l2 * verts[f.v[2]].b;
  return out;
}

}  // namespace s2r
