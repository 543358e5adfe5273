// Capsule-box narrow phase.
//
// Works in the box frame, where the box is |x_k| <= size[k] and the capsule is its core segment
// c + t u, t in [-half_length, half_length], grown by the radius. Three cases:
//
//  * Separated segment (the common resting case, the segment stays outside the box): the exact
//    segment-box distance is the smallest over the two segment ends against the box (clamping)
//    and the segment against the 12 box edges (segment-segment). These candidates are complete:
//    if neither closest point is an end or on an edge, the segment lies parallel to a face over
//    its interior and an end is just as close.
//  * Segment touching or inside the box (penetration deeper than the radius): separating-axis
//    test of the segment against the box. The box swept along the segment is a zonotope whose
//    facet normals are the 3 face normals and the 3 products u x e_k, so the least-penetration
//    axis among those 6 is exact. Face axes win ties (a small bias), edge axes give one point at
//    the closest points of the segment and that box edge.
//  * Whenever the contact normal is (within ~2.5 degrees) a face normal, the manifold is the
//    segment clipped to that face's prism, one point at each end of the clipped piece, each with
//    its own height above the face (the piece is widened to reach the exact closest point when
//    that lies just outside the prism). A capsule lying on a face thus rests on two points, and
//    a capsule standing on its cap gets one (the upper end is beyond the margin).
//
// Feature ids: face contacts 2 * face + end (face = 2 * axis + (outward normal negative)), a
// segment end against the box region 16 + end, the segment against box edge k/corner
// 32 + 4 k + corner.
#pragma once

#include "kernels/collide_capsule_capsule.h"
#include "kernels/contact.h"

namespace s2r {
namespace collide_internal {

// Narrows [*t0, *t1] to the t with |c + t u| <= h (one coordinate of a line against a slab);
// returns false when the interval becomes empty.
S2R_HD bool ClipToSlab(Real c, Real u, Real h, Real* t0, Real* t1) {
  if (Abs(u) < Real(1e-12)) return Abs(c) <= h && *t0 <= *t1;
  const Real inv = Real(1) / u;
  Real a = (-h - c) * inv;
  Real b = (h - c) * inv;
  if (a > b) {
    const Real tmp = a;
    a = b;
    b = tmp;
  }
  *t0 = Max(*t0, a);
  *t1 = Min(*t1, b);
  return *t0 <= *t1;
}

// Face manifold of a capsule (box frame: centre c, unit axis u, half-length hl) on the box face
// whose outward normal is side * e_axis: the segment clipped to the face's prism, one point per
// end of the clipped piece. `closest` (when in [-hl, hl]) is the parameter of the segment's
// closest point to the box; the piece is widened to contain it, because a steep segment whose
// closest point lies just outside the prism would otherwise be measured too far up the face.
// Writes world-frame points; returns the count, or -1 when the piece is empty.
template <class Point>
S2R_HD int CapsuleBoxFacePoints(const Real* c, const Real* u, Real hl, Real radius, const Real* h,
                                int axis, Real side, Real closest, Real margin, const Transform& tb,
                                Point* out) {
  Real t0 = -hl, t1 = hl;
  bool hit = true;
  for (int k = 0; k < 3 && hit; ++k) {
    if (k != axis) hit = ClipToSlab(c[k], u[k], h[k], &t0, &t1);
  }
  const bool has_closest = closest >= -hl && closest <= hl;
  if (!hit) {
    if (!has_closest) return -1;
    t0 = closest;
    t1 = closest;
  } else if (has_closest) {
    t0 = Min(t0, closest);
    t1 = Max(t1, closest);
  }
  // a clipped piece shorter than this is one point
  const int num_ends = t1 - t0 > Real(1e-4) * (hl + radius) ? 2 : 1;
  if (num_ends == 1) t0 = Real(0.5) * (t0 + t1);
  Real f[3] = {Real(0), Real(0), Real(0)};
  f[axis] = side;
  const Vec3 face_normal{f[0], f[1], f[2]};  // outward, towards the capsule
  const Vec3 normal = Rotate(tb.rot, -face_normal);
  const uint32_t face = static_cast<uint32_t>(2 * axis + (side < Real(0) ? 1 : 0));
  int count = 0;
  for (int end = 0; end < num_ends; ++end) {
    const Real t = end == 0 ? t0 : t1;
    const Vec3 p{c[0] + t * u[0], c[1] + t * u[1], c[2] + t * u[2]};
    const Real height = side * Component(p, axis) - h[axis];  // segment point above the face
    const Real sep = height - radius;
    if (!(sep < margin)) continue;
    // midway between the capsule surface (height - radius) and the face (height 0)
    const Vec3 mid = p - (Real(0.5) * (height + radius)) * face_normal;
    out[count].point = TransformPoint(tb, mid);
    out[count].normal = normal;
    out[count].separation = sep;
    out[count].feature = 2 * face + static_cast<uint32_t>(end);
    ++count;
  }
  return count;
}

// Writes one contact given the closest points (box frame) and the normal from capsule to box.
template <class Point>
S2R_HD int CapsuleBoxOnePoint(Vec3 seg_point, Vec3 box_point, Vec3 n, Real radius, Real sep,
                              uint32_t feature, const Transform& tb, Point* out) {
  out->point = TransformPoint(tb, Real(0.5) * ((seg_point + radius * n) + box_point));
  out->normal = Rotate(tb.rot, n);
  out->separation = sep;
  out->feature = feature;
  return 1;
}

}  // namespace collide_internal

template <class Point>
S2R_HD int CollideCapsuleBox(const Transform& ta, const Real* size_a, const Transform& tb,
                             const Real* size_b, Real margin, Point* out) {
  using collide_internal::CapsuleBoxFacePoints;
  using collide_internal::CapsuleBoxOnePoint;
  const Real radius = size_a[0];
  const Real hl = size_a[1];
  const Real h[3] = {size_b[0], size_b[1], size_b[2]};
  const Vec3 z{Real(0), Real(0), Real(1)};
  const Vec3 cv = InvTransformPoint(tb, ta.pos);
  const Vec3 uv = InvRotate(tb.rot, Rotate(ta.rot, z));
  const Real c[3] = {cv.x, cv.y, cv.z};
  const Real u[3] = {uv.x, uv.y, uv.z};
  const Real scale = h[0] + h[1] + h[2] + hl + radius;
  // a gap below this has no reliable direction (rounding of the inputs)
  const Real tiny = Real(1e-4) * scale;

  // does the segment touch the box? (clip it to the three slabs)
  Real t0 = -hl, t1 = hl;
  bool touching = true;
  for (int k = 0; k < 3 && touching; ++k) {
    touching = collide_internal::ClipToSlab(c[k], u[k], h[k], &t0, &t1);
  }

  // separated: exact distance over the segment ends and the 12 box edges
  Vec3 seg_point{}, box_point{};
  Real dist = Real(0);
  uint32_t closest_feature = 0;
  if (!touching) {
    Real best = Real(1e30);
    for (int end = 0; end < 2; ++end) {
      const Vec3 p = cv + (end == 0 ? -hl : hl) * uv;
      const Vec3 q{Clamp(p.x, -h[0], h[0]), Clamp(p.y, -h[1], h[1]), Clamp(p.z, -h[2], h[2])};
      const Real d2 = LengthSq(q - p);
      if (d2 < best) {
        best = d2;
        seg_point = p;
        box_point = q;
        closest_feature = 16 + static_cast<uint32_t>(end);
      }
    }
    for (int k = 0; k < 3; ++k) {
      for (int corner = 0; corner < 4; ++corner) {
        Real ec[3], ek[3] = {Real(0), Real(0), Real(0)};
        ec[k] = Real(0);
        ec[(k + 1) % 3] = (corner & 1) ? h[(k + 1) % 3] : -h[(k + 1) % 3];
        ec[(k + 2) % 3] = (corner & 2) ? h[(k + 2) % 3] : -h[(k + 2) % 3];
        ek[k] = Real(1);
        const Vec3 edge_centre{ec[0], ec[1], ec[2]};
        const Vec3 edge_dir{ek[0], ek[1], ek[2]};
        Real s, t;
        collide_internal::ClosestSegmentSegment(cv, uv, hl, edge_centre, edge_dir, h[k], &s, &t);
        const Vec3 p = cv + s * uv;
        const Vec3 q = edge_centre + t * edge_dir;
        const Real d2 = LengthSq(q - p);
        if (d2 < best) {
          best = d2;
          seg_point = p;
          box_point = q;
          closest_feature = 32 + 4 * static_cast<uint32_t>(k) + static_cast<uint32_t>(corner);
        }
      }
    }
    dist = Sqrt(best);
    if (!(dist - radius < margin)) return 0;
    if (dist > tiny) {
      const Vec3 n = (Real(1) / dist) * (box_point - seg_point);  // capsule -> box
      // normal along a face normal: the face manifold
      int axis = 0;
      for (int k = 1; k < 3; ++k) {
        if (Abs(Component(n, k)) > Abs(Component(n, axis))) axis = k;
      }
      if (Abs(Component(n, axis)) > Real(1) - Real(1e-3)) {
        const Real side = Component(n, axis) > Real(0) ? Real(-1) : Real(1);
        const Real closest = Clamp(Dot(seg_point - cv, uv), -hl, hl);
        const int count =
            CapsuleBoxFacePoints(c, u, hl, radius, h, axis, side, closest, margin, tb, out);
        if (count > 0) return count;
      }
      return CapsuleBoxOnePoint(seg_point, box_point, n, radius, dist - radius, closest_feature, tb,
                                out);
    }
  }

  // touching, or too close to tell: separating axes of the segment against the box.
  // face axes: the segment spans c_k +- hl |u_k|, the box +- h_k
  int face_axis = 0;
  Real face_depth = Real(1e30);
  for (int k = 0; k < 3; ++k) {
    const Real depth = h[k] + hl * Abs(u[k]) - Abs(c[k]);
    if (depth < face_depth) {
      face_depth = depth;
      face_axis = k;
    }
  }
  // edge axes u x e_k: the segment projects to one value, the box to +- sum_j h_j |n_j|
  int edge_axis = -1;
  Real edge_depth = Real(1e30);
  Vec3 edge_n{};
  for (int k = 0; k < 3; ++k) {
    Real ek[3] = {Real(0), Real(0), Real(0)};
    ek[k] = Real(1);
    const Vec3 axis_cross = Cross(uv, Vec3{ek[0], ek[1], ek[2]});
    const Real len = Length(axis_cross);
    if (len < Real(1e-3)) continue;  // segment along the edge: the face axes cover it
    const Vec3 n = (Real(1) / len) * axis_cross;
    const Real extent = h[0] * Abs(n.x) + h[1] * Abs(n.y) + h[2] * Abs(n.z);
    const Real proj = Dot(cv, n);
    const Real depth = extent - Abs(proj);
    if (depth < edge_depth) {
      edge_depth = depth;
      edge_axis = k;
      edge_n = proj >= Real(0) ? n : -n;  // from the box towards the segment
    }
  }
  const Real bias = Real(0.05) * Abs(face_depth) + Real(1e-3) * scale;

  if (edge_axis < 0 || !(edge_depth < face_depth - bias)) {
    // face axis: the face manifold
    const Real side = c[face_axis] >= Real(0) ? Real(1) : Real(-1);
    // a segment that does not quite touch the box still has its closest point; one inside has
    // none (a parameter outside [-hl, hl])
    const Real closest =
        touching ? Real(2) * hl + Real(1) : Clamp(Dot(seg_point - cv, uv), -hl, hl);
    const int count =
        CapsuleBoxFacePoints(c, u, hl, radius, h, face_axis, side, closest, margin, tb, out);
    if (count >= 0) return count;
    // (defensive: a touching segment always crosses the face's prism) the closest points
    Real f[3] = {Real(0), Real(0), Real(0)};
    f[face_axis] = -side;
    return CapsuleBoxOnePoint(seg_point, box_point, Vec3{f[0], f[1], f[2]}, radius, dist - radius,
                              closest_feature, tb, out);
  }

  // edge axis: the box edge along e_k that is furthest towards the segment
  const Real sep = -edge_depth - radius;
  if (!(sep < margin)) return 0;
  const int k = edge_axis;
  Real ec[3], ek[3] = {Real(0), Real(0), Real(0)};
  ec[k] = Real(0);
  const Real n1 = Component(edge_n, (k + 1) % 3);
  const Real n2 = Component(edge_n, (k + 2) % 3);
  ec[(k + 1) % 3] = n1 >= Real(0) ? h[(k + 1) % 3] : -h[(k + 1) % 3];
  ec[(k + 2) % 3] = n2 >= Real(0) ? h[(k + 2) % 3] : -h[(k + 2) % 3];
  ek[k] = Real(1);
  const Vec3 edge_centre{ec[0], ec[1], ec[2]};
  const Vec3 edge_dir{ek[0], ek[1], ek[2]};
  Real s, t;
  collide_internal::ClosestSegmentSegment(cv, uv, hl, edge_centre, edge_dir, h[k], &s, &t);
  const uint32_t corner = (n1 >= Real(0) ? 1u : 0u) + (n2 >= Real(0) ? 2u : 0u);
  return CapsuleBoxOnePoint(cv + s * uv, edge_centre + t * edge_dir, -edge_n, radius, sep,
                            32 + 4 * static_cast<uint32_t>(k) + corner, tb, out);
}

}  // namespace s2r
