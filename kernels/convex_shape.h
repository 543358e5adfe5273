// Convex shapes as support functions: the common language of the GJK/EPA narrow phase.
//
// A convex set S is described by its support map s(d) = argmax_{x in S} d . x; GJK and EPA
// (kernels/collide_gjk.h) need nothing else. Every geom type is one here: boxes, cylinders,
// ellipsoids and mesh hulls directly; spheres and capsules as a "core" (a point, a segment) plus a
// radius, so the distance between two cores is computed exactly and the radii are subtracted
// afterwards (G. van den Bergen, "Collision Detection in Interactive 3D Environments", 2003, 4.3.5).
// The contact manifold (kernels/collide_convex.h) also needs a shape's "feature" in a direction:
// the face, edge or vertex whose points all come within a small tolerance of the support value,
// returned as a few points with ids that stay the same while the feature stays in contact.
#pragma once

#include "kernels/contact.h"
#include "kernels/model_view.h"

namespace s2r {

// A mesh geom's convex hull: its vertices in the geom frame, (count, 3), m.
struct GeomHull {
  const Real* vert = nullptr;
  int count = 0;
};

// A geom as the convex narrow phase sees it. Mesh geoms carry their hull's vertices (geom frame,
// kernels/model_fields.h hull_vert); the other types read `size` (kernels/model_view.h GeomType).
struct ConvexShape {
  int type = 0;
  Transform xform;
  const Real* size = nullptr;
  const Real* vert = nullptr;  // mesh hull vertices, (nvert, 3), geom frame, m
  int nvert = 0;
};

// the radius a shape's core is inflated by (spheres and capsules), 0 for the rest
S2R_HD Real ConvexRadius(const ConvexShape& s) {
  return (s.type == kGeomSphere || s.type == kGeomCapsule) ? s.size[0] : Real(0);
}

// Support point of the shape's core in its own frame along local direction d (any length); the
// index of the vertex it came from goes to *vertex (-1 for curved surfaces).
S2R_HD Vec3 CoreSupportLocal(const ConvexShape& s, Vec3 d, int* vertex) {
  *vertex = -1;
  switch (s.type) {
    case kGeomSphere:  // sphere core: the centre
      return Vec3{0, 0, 0};
    case kGeomCapsule:  // capsule core: the segment along z
      *vertex = d.z >= Real(0) ? 1 : 0;
      return Vec3{0, 0, d.z >= Real(0) ? s.size[1] : -s.size[1]};
    case kGeomBox: {  // box: the corner in the octant of d
      *vertex = (d.x >= Real(0) ? 1 : 0) | (d.y >= Real(0) ? 2 : 0) | (d.z >= Real(0) ? 4 : 0);
      return Vec3{d.x >= Real(0) ? s.size[0] : -s.size[0], d.y >= Real(0) ? s.size[1] : -s.size[1],
                  d.z >= Real(0) ? s.size[2] : -s.size[2]};
    }
    case kGeomCylinder: {  // cylinder: rim point in the direction of d's radial part, cap by d's sign along z
      const Real rxy = Sqrt(d.x * d.x + d.y * d.y);
      const Real k = rxy > Real(1e-12) ? s.size[0] / rxy : Real(0);
      return Vec3{k * d.x, k * d.y, d.z >= Real(0) ? s.size[1] : -s.size[1]};
    }
    case kGeomEllipsoid: {  // ellipsoid: x_i = r_i^2 d_i / |r o d|
      const Vec3 rd{s.size[0] * d.x, s.size[1] * d.y, s.size[2] * d.z};
      const Real len = Length(rd);
      if (len <= Real(0)) return Vec3{s.size[0], 0, 0};
      const Real k = Real(1) / len;
      return Vec3{s.size[0] * rd.x * k, s.size[1] * rd.y * k, s.size[2] * rd.z * k};
    }
    case kGeomMesh: {  // mesh hull: the vertex furthest along d (a linear scan; hulls are capped)
      int best = 0;
      Real best_dot = -Real(1e30);
      for (int i = 0; i < s.nvert; ++i) {
        const Real v = d.x * s.vert[3 * i] + d.y * s.vert[3 * i + 1] + d.z * s.vert[3 * i + 2];
        if (v > best_dot) {
          best_dot = v;
          best = i;
        }
      }
      *vertex = best;
      return s.nvert > 0 ? LoadVec3(s.vert + 3 * best) : Vec3{0, 0, 0};
    }
    default:
      return Vec3{0, 0, 0};
  }
}

// Support point in world coordinates along world direction d: of the core (with_radius false) or
// of the whole shape (true: the core's support pushed out by the radius along d).
S2R_HD Vec3 SupportWorld(const ConvexShape& s, Vec3 d, bool with_radius) {
  int vertex;
  Vec3 p = TransformPoint(s.xform, CoreSupportLocal(s, InvRotate(s.xform.rot, d), &vertex));
  if (with_radius) p += ConvexRadius(s) * Normalize(d);
  return p;
}

// most points a feature contributes to the manifold clipper
constexpr int kMaxFeaturePoints = 12;
// a vertex belongs to the feature when it lies within tan(kFeatureAngle) * extent of the support
// plane: faces tilted up to about this angle (rad) from the contact plane still count as touching
constexpr Real kFeatureAngle = Real(0.02);

// The shape's feature along world unit direction n: up to kMaxFeaturePoints points (world frame,
// on the shape's surface: cores pushed out by their radius) with stable ids. Returns the count.
S2R_HD int ConvexFeature(const ConvexShape& s, Vec3 n, Vec3* pts, int* ids) {
  const Vec3 d = InvRotate(s.xform.rot, n);
  const Real radius = ConvexRadius(s);
  Vec3 local[kMaxFeaturePoints];
  int count = 0;
  const Real sin_tol = kFeatureAngle, cos_tol = Real(1) - Real(0.5) * kFeatureAngle * kFeatureAngle;
  switch (s.type) {
    case kGeomCapsule: {  // capsule: both ends when the segment lies across n
      if (Abs(d.z) <= sin_tol) {
        local[0] = Vec3{0, 0, -s.size[1]};
        local[1] = Vec3{0, 0, s.size[1]};
        ids[0] = 0;
        ids[1] = 1;
        count = 2;
      }
      break;
    }
    case kGeomCylinder: {  // cylinder: a cap's rim (8 points), a side line (2), or one rim point
      const Real rxy = Sqrt(d.x * d.x + d.y * d.y);
      const Real z = d.z >= Real(0) ? s.size[1] : -s.size[1];
      if (Abs(d.z) >= cos_tol) {
        for (int k = 0; k < 8; ++k) {
          const Real a = Real(2) * kPi * Real(k) / Real(8);
          local[k] = Vec3{s.size[0] * Cos(a), s.size[0] * Sin(a), z};
          ids[k] = (d.z >= Real(0) ? 8 : 0) + k;
        }
        count = 8;
      } else if (Abs(d.z) <= sin_tol && rxy > Real(0)) {
        const Real k = s.size[0] / rxy;
        local[0] = Vec3{k * d.x, k * d.y, -s.size[1]};
        local[1] = Vec3{k * d.x, k * d.y, s.size[1]};
        ids[0] = 16;
        ids[1] = 17;
        count = 2;
      }
      break;
    }
    case kGeomBox:
    case kGeomMesh: {  // polytopes: every vertex within the tolerance of the support plane
      int vertex;
      const Vec3 top = CoreSupportLocal(s, d, &vertex);
      const Real top_dot = Dot(top, d);
      const int nv = s.type == kGeomBox ? 8 : s.nvert;
      Real extent = Real(0);
      if (s.type == kGeomBox) {
        extent = Length(LoadVec3(s.size));
      } else {
        for (int i = 0; i < nv; ++i) extent = Max(extent, LengthSq(LoadVec3(s.vert + 3 * i)));
        extent = Sqrt(extent);
      }
      const Real tol = Real(2) * sin_tol * extent;
      auto vertex_at = [&](int i) {
        return s.type == kGeomBox ? Vec3{(i & 1) ? s.size[0] : -s.size[0],
                                         (i & 2) ? s.size[1] : -s.size[1],
                                         (i & 4) ? s.size[2] : -s.size[2]}
                                  : LoadVec3(s.vert + 3 * i);
      };
      int total = 0;
      for (int i = 0; i < nv; ++i) {
        const Vec3 v = vertex_at(i);
        if (Dot(v, d) < top_dot - tol) continue;
        if (count < kMaxFeaturePoints) {
          local[count] = v;
          ids[count++] = i;
        }
        ++total;
      }
      if (total > kMaxFeaturePoints) {
        // a face with more corners than fit (a finely tessellated disc): its extreme corners in
        // kMaxFeaturePoints directions spread around the face, a polygon inscribed in it
        Vec3 t1, t2;
        OrthonormalBasis(Normalize(d), &t1, &t2);
        count = 0;
        for (int k = 0; k < kMaxFeaturePoints; ++k) {
          const Real a = Real(2) * kPi * Real(k) / Real(kMaxFeaturePoints);
          const Vec3 u = Cos(a) * t1 + Sin(a) * t2;
          int best = -1;
          Real best_dot = Real(0);
          for (int i = 0; i < nv; ++i) {
            const Vec3 v = vertex_at(i);
            if (Dot(v, d) < top_dot - tol) continue;
            if (best < 0 || Dot(v, u) > best_dot) {
              best = i;
              best_dot = Dot(v, u);
            }
          }
          bool seen = false;
          for (int j = 0; j < count; ++j) seen = seen || ids[j] == best;
          if (best >= 0 && !seen) {
            local[count] = vertex_at(best);
            ids[count++] = best;
          }
        }
      }
      break;
    }
    default:
      break;
  }
  if (count == 0) {  // a vertex, or a curved surface: the single support point
    int vertex;
    local[0] = CoreSupportLocal(s, d, &vertex);
    ids[0] = vertex < 0 ? 0 : vertex;
    count = 1;
  }
  for (int i = 0; i < count; ++i) pts[i] = TransformPoint(s.xform, local[i]) + radius * n;
  return count;
}

}  // namespace s2r
