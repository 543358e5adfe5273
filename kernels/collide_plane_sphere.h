// Plane-sphere narrow phase.
//
// The plane is the half-space z <= 0 of its frame, so its outward normal is the frame's +z axis
// and the sphere's signed gap is the height of its centre above the plane minus its radius. The
// pair makes at most one point, placed midway between the plane and the sphere's lowest point.
#pragma once

#include "kernels/contact.h"

namespace s2r {

template <class Point>
S2R_HD int CollidePlaneSphere(const Transform& ta, const Real* size_a, const Transform& tb,
                              const Real* size_b, Real margin, Point* out) {
  (void)size_a;
  const Vec3 n = Rotate(ta.rot, Vec3{Real(0), Real(0), Real(1)});
  const Real radius = size_b[0];
  const Real height = Dot(tb.pos - ta.pos, n);
  const Real sep = height - radius;
  if (!(sep < margin)) return 0;
  // the plane surface is at height 0 below the centre, the sphere's lowest point at height sep
  out[0].point = tb.pos - (height - Real(0.5) * sep) * n;
  out[0].normal = n;
  out[0].separation = sep;
  out[0].feature = 0;
  return 1;
}

}  // namespace s2r
