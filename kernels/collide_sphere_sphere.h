// Sphere-sphere narrow phase, and the sphere-pair contact that the capsule pairs build on.
//
// Two spheres touch along the line through their centres: the gap is the centre distance minus
// both radii. Sphere-capsule and capsule-capsule reduce to this once the closest points of their
// core segments are known, so the helper lives here and those headers include this one. When the
// centres coincide the direction is undefined and the caller supplies a fallback normal.
#pragma once

#include "kernels/contact.h"

namespace s2r {
namespace collide_internal {

// One contact between the sphere (ca, ra) and the sphere (cb, rb), written to `out` when its
// separation is below `margin`; returns the number of points written (0 or 1). The normal points
// from a to b; `fallback` (unit) is used when the centres are too close to define one.
template <class Point>
S2R_HD int SphereSphereContact(Vec3 ca, Real ra, Vec3 cb, Real rb, Vec3 fallback, Real margin,
                               uint32_t feature, Point* out) {
  const Vec3 d = cb - ca;
  const Real dist = Length(d);
  const Real sep = dist - ra - rb;
  if (!(sep < margin)) return 0;
  // below ~1e-6 of the radii the centre offset is rounding noise, not a direction
  const Real tiny = Real(1e-6) * (ra + rb);
  const Vec3 n = dist > tiny ? (Real(1) / dist) * d : fallback;
  // midway between a's surface point (ca + ra n) and b's (cb - rb n)
  out->point = Real(0.5) * ((ca + ra * n) + (cb - rb * n));
  out->normal = n;
  out->separation = sep;
  out->feature = feature;
  return 1;
}

}  // namespace collide_internal

template <class Point>
S2R_HD int CollideSphereSphere(const Transform& ta, const Real* size_a, const Transform& tb,
                               const Real* size_b, Real margin, Point* out) {
  return collide_internal::SphereSphereContact(ta.pos, size_a[0], tb.pos, size_b[0],
                                               Vec3{Real(0), Real(0), Real(1)}, margin, 0, out);
}

}  // namespace s2r
