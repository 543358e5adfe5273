// Sphere-box narrow phase.
//
// Everything happens in the box frame, where the box is the axis-aligned set |x_k| <= size[k].
// Outside the box, the closest box point is the sphere's centre clamped to the box and the
// normal runs from the centre to it. When the centre is inside (deep penetration) or so close
// to the surface that the offset has no reliable direction, the sphere is pushed out through the
// face it is nearest to: the normal is that face's inward normal and the gap is minus the
// centre's depth below the face, minus the radius. One point at most.
#pragma once

#include "kernels/contact.h"

namespace s2r {

template <class Point>
S2R_HD int CollideSphereBox(const Transform& ta, const Real* size_a, const Transform& tb,
                            const Real* size_b, Real margin, Point* out) {
  const Real radius = size_a[0];
  const Real h[3] = {size_b[0], size_b[1], size_b[2]};
  const Vec3 c = InvTransformPoint(tb, ta.pos);  // sphere centre in the box frame
  const Real p[3] = {c.x, c.y, c.z};

  // closest box point: the centre clamped to the box
  const Vec3 q{Clamp(c.x, -h[0], h[0]), Clamp(c.y, -h[1], h[1]), Clamp(c.z, -h[2], h[2])};
  const Vec3 offset = q - c;
  const Real dist = Length(offset);
  // below this the offset is rounding noise relative to the geometry's size
  const Real tiny = Real(1e-5) * (h[0] + h[1] + h[2] + radius);

  Vec3 n;          // box frame, from the sphere to the box
  Vec3 box_point;  // box frame, on the box surface
  Real sep;
  if (dist > tiny) {
    sep = dist - radius;
    if (!(sep < margin)) return 0;
    n = (Real(1) / dist) * offset;
    box_point = q;
  } else {
    // centre inside (or on) the box: leave through the nearest face
    int axis = 0;
    Real depth = h[0] - Abs(p[0]);
    for (int k = 1; k < 3; ++k) {
      const Real dk = h[k] - Abs(p[k]);
      if (dk < depth) {
        depth = dk;
        axis = k;
      }
    }
    sep = -depth - radius;
    if (!(sep < margin)) return 0;
    const Real side = p[axis] >= Real(0) ? Real(1) : Real(-1);
    Real nn[3] = {Real(0), Real(0), Real(0)};
    nn[axis] = -side;  // the face's outward normal is side * e_axis; the normal points into it
    n = Vec3{nn[0], nn[1], nn[2]};
    Real bp[3] = {p[0], p[1], p[2]};
    bp[axis] = side * h[axis];
    box_point = Vec3{bp[0], bp[1], bp[2]};
  }
  // midway between the sphere's surface point along the normal and the box surface point
  const Vec3 mid = Real(0.5) * ((c + radius * n) + box_point);
  out[0].point = TransformPoint(tb, mid);
  out[0].normal = Rotate(tb.rot, n);
  out[0].separation = sep;
  out[0].feature = 0;
  return 1;
}

}  // namespace s2r
