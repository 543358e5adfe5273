// Narrow phase for cylinders, ellipsoids and mesh hulls: GJK/EPA plus a clipped manifold.
//
// Every pair that involves one of these shapes (except with a plane) goes through one path:
//   1. GJK/EPA (kernels/collide_gjk.h) gives the normal, the signed separation and one point pair;
//      pairs further apart than the margin stop here.
//   2. The manifold: a box resting on a mesh face needs up to four points, or it rocks. Each shape
//      reports its feature towards the other (ConvexFeature: the face, edge or vertex within a
//      small angle of the contact plane). When one of them is a polygon, the other feature is
//      clipped against it in the contact plane (Sutherland-Hodgman, the classic face-clipping of
//      Box2D's and Bullet's polytope manifolds); each clipped point's gap is measured along the
//      normal between the incident feature (exact, linear along its edges) and the reference
//      polygon's plane. Points within the margin are kept, and more than four are reduced to the
//      deepest, the one furthest from it, and the two that span the largest area.
//   3. Otherwise (edge against edge, curved surfaces) the GJK/EPA point is the contact.
// Feature ids combine the incident vertex (or incident edge x reference edge for a crossing) with
// the side it came from, so a resting contact keeps its ids from step to step.
//
// A plane against a convex shape is simpler and exact: the shape's lowest points (hull vertices;
// a cylinder's lowest rim points and its lower cap's quadrants; an ellipsoid's support point)
// below the margin, reduced to four the same way.
#pragma once

#include "kernels/collide_gjk.h"

namespace s2r {

// --- four out of many: deepest, furthest, largest triangle, largest quadrilateral -------------

// Picks up to kMaxManifoldPoints of n candidate points (positions p, separations sep) and writes
// their indices to keep; returns how many. The points are compared in the plane normal to n.
S2R_HD int ReduceManifold(const Vec3* p, const Real* sep, int n, Vec3 normal, int* keep) {
  if (n <= kMaxManifoldPoints) {
    for (int i = 0; i < n; ++i) keep[i] = i;
    return n;
  }
  int i0 = 0;
  for (int i = 1; i < n; ++i) {
    if (sep[i] < sep[i0]) i0 = i;
  }
  auto planar = [&](Vec3 d) { return d - Dot(d, normal) * normal; };
  int i1 = -1;
  Real best = Real(0);
  for (int i = 0; i < n; ++i) {
    const Real d = LengthSq(planar(p[i] - p[i0]));
    if (d > best) {
      best = d;
      i1 = i;
    }
  }
  if (i1 < 0) {
    keep[0] = i0;
    return 1;
  }
  int i2 = -1;
  Real best_area = Real(0);
  Real sign = Real(1);
  for (int i = 0; i < n; ++i) {
    const Real a = Dot(Cross(p[i1] - p[i0], p[i] - p[i0]), normal);
    if (Abs(a) > best_area) {
      best_area = Abs(a);
      i2 = i;
      sign = a > Real(0) ? Real(1) : Real(-1);
    }
  }
  keep[0] = i0;
  keep[1] = i1;
  if (i2 < 0) return 2;
  keep[2] = i2;
  // the point furthest outside the triangle's edges (the triangle is wound by `sign`)
  int i3 = -1;
  Real best_out = Real(0);
  for (int i = 0; i < n; ++i) {
    const Real e0 = -sign * Dot(Cross(p[i1] - p[i0], p[i] - p[i0]), normal);
    const Real e1 = -sign * Dot(Cross(p[i2] - p[i1], p[i] - p[i1]), normal);
    const Real e2 = -sign * Dot(Cross(p[i0] - p[i2], p[i] - p[i2]), normal);
    const Real out = Max(e0, Max(e1, e2));
    if (out > best_out) {
      best_out = out;
      i3 = i;
    }
  }
  if (i3 < 0) return 3;
  keep[3] = i3;
  return 4;
}

// --- plane against a convex shape --------------------------------------------------------------

template <class Point>
S2R_HD int CollidePlaneConvex(const Transform& ta, const ConvexShape& sb, Real margin,
                              Point* out) {
  const Vec3 n = Rotate(ta.rot, Vec3{Real(0), Real(0), Real(1)});
  const Vec3 nl = InvRotate(sb.xform.rot, n);  // plane normal in the shape frame
  // the candidates, in the shape frame: a hull's vertices, or a few computed points
  Real buffer[3 * 5];
  const Real* verts = buffer;
  int nverts = 0;
  if (sb.type == kGeomMesh) {
    verts = sb.vert;
    nverts = sb.nvert;
  } else if (sb.type == kGeomEllipsoid) {
    int vertex;
    StoreVec3(buffer, CoreSupportLocal(sb, -nl, &vertex));
    nverts = 1;
  } else if (sb.type == kGeomCylinder) {
    // lowest rim point of each cap, and the lower cap's rim a quarter turn apart from it; a
    // cylinder standing on its end takes four fixed quadrants of its frame
    const Real r = sb.size[0], h = sb.size[1];
    const Real rxy = Sqrt(nl.x * nl.x + nl.y * nl.y);
    Real cx = Real(1), cy = Real(0);
    if (rxy > kFeatureAngle) {
      cx = -nl.x / rxy;
      cy = -nl.y / rxy;
    }
    const Real lower = nl.z > Real(0) ? -h : h;  // the cap further down the normal
    const Real q[4][2] = {{cx, cy}, {-cy, cx}, {-cx, -cy}, {cy, -cx}};
    for (int k = 0; k < 4; ++k) StoreVec3(buffer + 3 * k, Vec3{r * q[k][0], r * q[k][1], lower});
    StoreVec3(buffer + 12, Vec3{r * cx, r * cy, -lower});
    nverts = 5;
  } else {
    return 0;
  }
  // heights above the plane; the deepest first, then the reduction in the plane
  const Real centre_height = Dot(sb.xform.pos - ta.pos, n);
  auto height = [&](int i) { return centre_height + Dot(LoadVec3(verts + 3 * i), nl); };
  int i0 = -1;
  for (int i = 0; i < nverts; ++i) {
    if (height(i) < margin && (i0 < 0 || height(i) < height(i0))) i0 = i;
  }
  if (i0 < 0) return 0;
  auto planar = [&](int i) {
    const Vec3 v = LoadVec3(verts + 3 * i);
    return v - Dot(v, nl) * nl;
  };
  const Real eps = Real(1e-6) * (Real(1) + Length(planar(i0)));
  int keep[kMaxManifoldPoints] = {i0, -1, -1, -1};
  int count = 1;
  // furthest from the deepest
  Real best = eps * eps;
  for (int i = 0; i < nverts; ++i) {
    if (height(i) >= margin) continue;
    const Real d = LengthSq(planar(i) - planar(i0));
    if (d > best) {
      best = d;
      keep[1] = i;
    }
  }
  if (keep[1] >= 0) {
    count = 2;
    const Vec3 p0 = planar(i0), p1 = planar(keep[1]);
    Real best_area = eps * Length(p1 - p0);
    Real sign = Real(1);
    for (int i = 0; i < nverts; ++i) {
      if (height(i) >= margin) continue;
      const Real a = Dot(Cross(p1 - p0, planar(i) - p0), nl);
      if (Abs(a) > best_area) {
        best_area = Abs(a);
        keep[2] = i;
        sign = a > Real(0) ? Real(1) : Real(-1);
      }
    }
    if (keep[2] >= 0) {
      count = 3;
      const Vec3 p2 = planar(keep[2]);
      Real best_out = eps * Length(p1 - p0);
      for (int i = 0; i < nverts; ++i) {
        if (height(i) >= margin) continue;
        const Vec3 pi = planar(i);
        const Real e0 = -sign * Dot(Cross(p1 - p0, pi - p0), nl);
        const Real e1 = -sign * Dot(Cross(p2 - p1, pi - p1), nl);
        const Real e2 = -sign * Dot(Cross(p0 - p2, pi - p2), nl);
        const Real o = Max(e0, Max(e1, e2));
        if (o > best_out) {
          best_out = o;
          keep[3] = i;
        }
      }
      if (keep[3] >= 0) count = 4;
    }
  }
  for (int k = 0; k < count; ++k) {
    const int i = keep[k];
    const Real hk = height(i);
    const Vec3 vertex = TransformPoint(sb.xform, LoadVec3(verts + 3 * i));
    out[k].point = vertex - (Real(0.5) * hk) * n;
    out[k].normal = n;
    out[k].separation = hk;
    out[k].feature = static_cast<uint32_t>(i);
  }
  return count;
}

// --- convex against convex -----------------------------------------------------------------------

// the query's answer: normal from A to B, signed gap, and the closest (or deepest) point pair
struct ConvexContact {
  bool valid = false;
  Vec3 normal;
  Real separation = 0;
  Vec3 point_a, point_b;
};

// (margin: pairs further apart than this are reported invalid, the query stops early for them)
S2R_HD ConvexContact ConvexQuery(const ConvexShape& sa, const ConvexShape& sb,
                                 Real margin = Real(1e30)) {
  ConvexContact c;
  const Real ra = ConvexRadius(sa), rb = ConvexRadius(sb);
  const GjkResult g = Gjk(sa, sb, false, margin + ra + rb);
  if (g.beyond) return c;
  // separated cores: the exact distance, minus the radii
  const Real tiny = Real(1e-4) * (ra + rb) + Real(1e-9);
  if (!g.overlap && g.distance > tiny) {
    c.valid = true;
    c.normal = (Real(1) / g.distance) * (g.point_b - g.point_a);
    c.separation = g.distance - ra - rb;
    c.point_a = g.point_a + ra * c.normal;
    c.point_b = g.point_b - rb * c.normal;
    return c;
  }
  // overlapping cores (or touching polytopes): EPA on the whole shapes
  const Penetration p = Epa(sa, sb);
  if (!p.valid) return c;
  c.valid = true;
  c.normal = p.normal;
  c.separation = -p.depth;
  c.point_a = p.point_a;
  c.point_b = p.point_b;
  return c;
}

// a point of a feature in the contact plane: (u, v) in the plane, h along the normal
struct ClipPoint {
  Real u, v, h;
  uint32_t id;
};

constexpr int kMaxClipPoints = 2 * kMaxFeaturePoints + 2;

// Orders a feature's points counter-clockwise around their centroid (insertion sort by angle).
S2R_HD void SortByAngle(ClipPoint* p, int n) {
  Real cu = Real(0), cv = Real(0);
  for (int i = 0; i < n; ++i) {
    cu += p[i].u;
    cv += p[i].v;
  }
  cu /= Real(n);
  cv /= Real(n);
  Real angle[kMaxFeaturePoints];
  for (int i = 0; i < n; ++i) angle[i] = Atan2(p[i].v - cv, p[i].u - cu);
  for (int i = 1; i < n; ++i) {
    const ClipPoint pi = p[i];
    const Real ai = angle[i];
    int j = i - 1;
    while (j >= 0 && angle[j] > ai) {
      p[j + 1] = p[j];
      angle[j + 1] = angle[j];
      --j;
    }
    p[j + 1] = pi;
    angle[j + 1] = ai;
  }
}

// feature id of a manifold point: kind (1 incident vertex, 2 edge crossing, 3 query point), the
// side the incident feature came from, and the vertex ids involved
S2R_HD uint32_t ManifoldFeature(uint32_t kind, uint32_t side, uint32_t incident, uint32_t ref) {
  return (kind << 29) | (side << 28) | ((incident & 0x3FFFu) << 14) | (ref & 0x3FFFu);
}

// The plane normal of a feature's points pts[0..n) (n >= 3), turned to point along `toward`: the
// normal of the largest of the triangles through pts[0], the point farthest from it, and a third.
// Zero when the points are (nearly) collinear.
S2R_HD Vec3 FeaturePlaneNormal(const Vec3* pts, int n, Vec3 toward) {
  int i1 = 0;
  Real far2 = Real(0);
  for (int i = 1; i < n; ++i) {
    const Real d2 = LengthSq(pts[i] - pts[0]);
    if (d2 > far2) {
      far2 = d2;
      i1 = i;
    }
  }
  Vec3 best{0, 0, 0};
  Real best2 = Real(0);
  for (int i = 1; i < n; ++i) {
    const Vec3 c = Cross(pts[i1] - pts[0], pts[i] - pts[0]);
    if (LengthSq(c) > best2) {
      best2 = LengthSq(c);
      best = c;
    }
  }
  // a triangle whose area is below 1e-3 of the square of its longest side is a sliver
  if (!(best2 > Real(1e-6) * far2 * far2)) return Vec3{0, 0, 0};
  const Vec3 u = (Real(1) / Sqrt(best2)) * best;
  return Dot(u, toward) >= Real(0) ? u : -u;
}

// The gap between two convex shapes along unit axis u (from A to B): the distance between their
// support planes, surfaces included. At most the distance between the shapes, equal to it along
// the axis that realises it.
S2R_HD Real AxisGap(const ConvexShape& sa, const ConvexShape& sb, Vec3 u) {
  return Dot(SupportWorld(sb, -u, true), u) - Dot(SupportWorld(sa, u, true), u);
}

template <class Point>
S2R_HD int CollideConvex(const ConvexShape& sa, const ConvexShape& sb, Real margin,
                         Point* out) {
  const ConvexContact c = ConvexQuery(sa, sb, margin);
  if (!c.valid || !(c.separation < margin)) return 0;
  Vec3 n = c.normal;

  // the two features facing each other, in the contact plane's coordinates
  Vec3 fa[kMaxFeaturePoints], fb[kMaxFeaturePoints];
  int ida[kMaxFeaturePoints], idb[kMaxFeaturePoints];
  int na = ConvexFeature(sa, n, fa, ida);
  int nb = ConvexFeature(sb, -n, fb, idb);
  // Apart, GJK's normal is the direction between its two closest points: when the shapes nearly
  // touch, that is the difference of two nearly equal points, and float rounding tilts it (by up to
  // ~1e-2 rad within 0.5 mm for box hulls 30 cm across). The features give well-conditioned
  // candidates, as in SAT: a face's plane normal, or the cross product of an edge of each (any two
  // points of a feature of up to four). Along any axis the shapes' gap is at most their distance;
  // a candidate within kFeatureAngle of GJK's normal whose gap is the distance (to a rounding
  // tolerance) is the pair's normal, faces first (a face's manifold keeps an edge or face lying
  // on it steady), the largest gap winning. An edge pair's contact is its one closest point. None
  // realising the distance (a corner against an edge or a corner, curved surfaces) keeps GJK's.
  if (c.separation > Real(0) && (na >= 3 || nb >= 3 || (na == 2 && nb == 2))) {
    const Real cos_tol = Real(1) - Real(0.5) * kFeatureAngle * kFeatureAngle;
    // rounding at the shapes' scale (their centres to the closest points)
    const Real tol =
        Real(1e-6) * (Length(c.point_a - sa.xform.pos) + Length(c.point_b - sb.xform.pos));
    Vec3 u{0, 0, 0};
    Real gap = Real(-1e30);
    auto consider = [&](Vec3 w) {  // w: unit, along n, or zero
      if (!(Dot(w, n) >= cos_tol)) return;
      const Real g = AxisGap(sa, sb, w);
      if (g > gap) {
        gap = g;
        u = w;
      }
    };
    if (na >= 3) consider(FeaturePlaneNormal(fa, na, n));
    if (nb >= 3) consider(FeaturePlaneNormal(fb, nb, n));
    if (gap >= c.separation - tol) {
      n = u;
      na = ConvexFeature(sa, n, fa, ida);
      nb = ConvexFeature(sb, -n, fb, idb);
    } else if (na <= 4 && nb <= 4) {
      for (int i = 0; i + 1 < na; ++i) {
        for (int j = i + 1; j < na; ++j) {
          const Vec3 ea = fa[j] - fa[i];
          for (int k = 0; k + 1 < nb; ++k) {
            for (int l = k + 1; l < nb; ++l) {
              const Vec3 eb = fb[l] - fb[k];
              const Vec3 e = Cross(ea, eb);
              const Real e2 = LengthSq(e);
              // parallel edges: a face axis covers them
              if (!(e2 > Real(1e-6) * LengthSq(ea) * LengthSq(eb))) continue;
              const Real sign = Dot(e, n) >= Real(0) ? Real(1) : Real(-1);
              consider((sign / Sqrt(e2)) * e);
            }
          }
        }
      }
      if (gap >= c.separation - tol) {  // an edge pair: its one closest point (no polygon below)
        n = u;
        na = nb = 0;
      }
    }
  }
  const Vec3 origin = Real(0.5) * (c.point_a + c.point_b);
  Vec3 t1, t2;
  OrthonormalBasis(n, &t1, &t2);
  // reference polygon: A's feature if it is a polygon, else B's; the other is incident
  const bool ref_is_a = na >= 3;
  const int nref = ref_is_a ? na : nb, ninc = ref_is_a ? nb : na;
  ClipPoint ref[kMaxFeaturePoints], inc[kMaxClipPoints];
  for (int i = 0; i < nref; ++i) {
    const Vec3 d = (ref_is_a ? fa[i] : fb[i]) - origin;
    ref[i] = ClipPoint{Dot(d, t1), Dot(d, t2), Dot(d, n), uint32_t(ref_is_a ? ida[i] : idb[i])};
  }
  for (int i = 0; i < ninc; ++i) {
    const Vec3 d = (ref_is_a ? fb[i] : fa[i]) - origin;
    inc[i] = ClipPoint{Dot(d, t1), Dot(d, t2), Dot(d, n), uint32_t(ref_is_a ? idb[i] : ida[i])};
  }
  const uint32_t side = ref_is_a ? 1u : 0u;  // 1: the incident feature is B's

  int count = 0;
  Vec3 pts[kMaxClipPoints];
  Real seps[kMaxClipPoints];
  uint32_t ids[kMaxClipPoints];
  if (nref >= 3) {
    SortByAngle(ref, nref);
    // the reference plane h(u, v) through the polygon (Newell's normal)
    Real nx = 0, ny = 0, nz = 0, cu = 0, cv = 0, ch = 0;
    for (int i = 0; i < nref; ++i) {
      const ClipPoint& p = ref[i];
      const ClipPoint& q = ref[(i + 1) % nref];
      nx += (p.v - q.v) * (p.h + q.h);
      ny += (p.h - q.h) * (p.u + q.u);
      nz += (p.u - q.u) * (p.v + q.v);
      cu += p.u;
      cv += p.v;
      ch += p.h;
    }
    cu /= Real(nref);
    cv /= Real(nref);
    ch /= Real(nref);
    // a flat polygon (collinear points seen edge-on) has no plane: use the query point
    Real extent2 = Real(0);
    for (int i = 0; i < nref; ++i) {
      extent2 = Max(extent2, (ref[i].u - cu) * (ref[i].u - cu) + (ref[i].v - cv) * (ref[i].v - cv));
    }
    if (nz > Real(1e-3) * extent2) {
      // clip the incident feature against each reference edge (inside: to the left)
      int nin = ninc;
      if (nin >= 3) SortByAngle(inc, nin);
      ClipPoint buf[kMaxClipPoints];
      ClipPoint* src = inc;
      ClipPoint* dst = buf;
      for (int e = 0; e < nref && nin > 0; ++e) {
        const ClipPoint& p0 = ref[e];
        const ClipPoint& p1 = ref[(e + 1) % nref];
        const Real eu = p1.u - p0.u, ev = p1.v - p0.v;
        auto side_of = [&](const ClipPoint& q) { return eu * (q.v - p0.v) - ev * (q.u - p0.u); };
        int nout = 0;
        if (nin == 1) {
          if (side_of(src[0]) >= Real(0)) dst[nout++] = src[0];
        } else {
          // a segment is a closed polygon of two vertices: visit its one edge once
          const int edges = nin == 2 ? 1 : nin;
          if (nin == 2) {
            const Real s0 = side_of(src[0]), s1 = side_of(src[1]);
            if (s0 >= Real(0)) dst[nout++] = src[0];
            if ((s0 >= Real(0)) != (s1 >= Real(0))) {
              const Real t = s0 / (s0 - s1);
              dst[nout++] = ClipPoint{src[0].u + t * (src[1].u - src[0].u),
                                      src[0].v + t * (src[1].v - src[0].v),
                                      src[0].h + t * (src[1].h - src[0].h),
                                      ManifoldFeature(2, side, s0 >= Real(0) ? src[1].id : src[0].id, p0.id)};
            }
            if (s1 >= Real(0)) dst[nout++] = src[1];
          } else {
            for (int i = 0; i < edges && nout < kMaxClipPoints - 1; ++i) {
              const ClipPoint& a = src[i];
              const ClipPoint& b = src[(i + 1) % nin];
              const Real sa_ = side_of(a), sb_ = side_of(b);
              if (sa_ >= Real(0)) dst[nout++] = a;
              if ((sa_ >= Real(0)) != (sb_ >= Real(0))) {
                const Real t = sa_ / (sa_ - sb_);
                dst[nout++] = ClipPoint{a.u + t * (b.u - a.u), a.v + t * (b.v - a.v),
                                        a.h + t * (b.h - a.h), ManifoldFeature(2, side, a.id, p0.id)};
              }
            }
          }
        }
        ClipPoint* tmp = src;
        src = dst;
        dst = tmp;
        nin = nout;
      }
      // the gap of each clipped point between the incident feature and the reference plane
      for (int i = 0; i < nin; ++i) {
        const ClipPoint& q = src[i];
        const Real href = ch - (nx * (q.u - cu) + ny * (q.v - cv)) / nz;
        const Real sep = ref_is_a ? q.h - href : href - q.h;
        if (!(sep < margin)) continue;
        const uint32_t id = (q.id >> 29) == 2u ? q.id : ManifoldFeature(1, side, q.id, 0);
        pts[count] = origin + q.u * t1 + q.v * t2 + (Real(0.5) * (q.h + href)) * n;
        seps[count] = sep;
        ids[count] = id;
        ++count;
      }
    }
  }
  if (count == 0) {  // no polygon (or nothing survived the clip): the query's own point
    out[0].point = Real(0.5) * (c.point_a + c.point_b);
    out[0].normal = n;
    out[0].separation = c.separation;
    out[0].feature = ManifoldFeature(3, 0, uint32_t(ida[0]), uint32_t(idb[0]));
    return 1;
  }
  int keep[kMaxManifoldPoints];
  const int kept = ReduceManifold(pts, seps, count, n, keep);
  for (int k = 0; k < kept; ++k) {
    out[k].point = pts[keep[k]];
    out[k].normal = n;
    out[k].separation = seps[keep[k]];
    out[k].feature = ids[keep[k]];
  }
  return kept;
}

}  // namespace s2r
