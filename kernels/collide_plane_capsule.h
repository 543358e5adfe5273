// Plane-capsule narrow phase.
//
// A capsule is the set of points within `radius` of a segment, so against a half-space its signed
// gap is a linear function along the segment and is smallest at one of the two ends. Both ends
// are reported (when within the margin): a capsule lying on the plane then rests on two points
// and does not roll about its own axis or rock. Feature ids are the end index (0: -z end,
// 1: +z end of the capsule frame).
#pragma once

#include "kernels/contact.h"

namespace s2r {

template <class Point>
S2R_HD int CollidePlaneCapsule(const Transform& ta, const Real* size_a, const Transform& tb,
                               const Real* size_b, Real margin, Point* out) {
  (void)size_a;
  const Vec3 n = Rotate(ta.rot, Vec3{Real(0), Real(0), Real(1)});
  const Vec3 axis = Rotate(tb.rot, Vec3{Real(0), Real(0), Real(1)});
  const Real radius = size_b[0];
  const Real half_length = size_b[1];
  int count = 0;
  // each segment end is the centre of a sphere of the capsule's radius
  for (int end = 0; end < 2; ++end) {
    const Vec3 centre = tb.pos + (end == 0 ? -half_length : half_length) * axis;
    const Real height = Dot(centre - ta.pos, n);
    const Real sep = height - radius;
    if (!(sep < margin)) continue;
    out[count].point = centre - (height - Real(0.5) * sep) * n;
    out[count].normal = n;
    out[count].separation = sep;
    out[count].feature = static_cast<uint32_t>(end);
    ++count;
  }
  return count;
}

}  // namespace s2r
