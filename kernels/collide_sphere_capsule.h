// Sphere-capsule narrow phase.
//
// A capsule is a sphere swept along a segment, so the sphere touches the capsule's sphere centred
// at the point of the segment closest to the sphere's centre: one clamped projection, then the
// sphere-sphere contact. If the sphere's centre lies on the segment itself any direction
// perpendicular to the axis is as good as another; a fixed one is used.
#pragma once

#include "kernels/collide_sphere_sphere.h"

namespace s2r {
namespace collide_internal {

// Parameter t in [-half_length, half_length] of the point centre + t axis (unit axis) closest to p.
S2R_HD Real ClosestOnSegment(Vec3 p, Vec3 centre, Vec3 axis, Real half_length) {
  return Clamp(Dot(p - centre, axis), -half_length, half_length);
}

}  // namespace collide_internal

template <class Point>
S2R_HD int CollideSphereCapsule(const Transform& ta, const Real* size_a, const Transform& tb,
                                const Real* size_b, Real margin, Point* out) {
  const Vec3 axis = Rotate(tb.rot, Vec3{Real(0), Real(0), Real(1)});
  const Real t = collide_internal::ClosestOnSegment(ta.pos, tb.pos, axis, size_b[1]);
  Vec3 fallback, unused;
  OrthonormalBasis(axis, &fallback, &unused);
  return collide_internal::SphereSphereContact(ta.pos, size_a[0], tb.pos + t * axis, size_b[0],
                                               fallback, margin, 0, out);
}

}  // namespace s2r
