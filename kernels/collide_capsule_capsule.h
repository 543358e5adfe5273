// Capsule-capsule narrow phase, and the segment-segment closest points that capsule-box and
// box-box (edge against edge) also use.
//
// Two capsules touch where their core segments come closest, so the contact is the sphere-sphere
// contact between the closest points of the segments. Closest points of segments: solve for the
// closest points of the two infinite lines, clamp the first parameter to its segment, take the
// second as the closest point to that, clamp it, and finally re-project the first onto the second
// (this alternation is exact for segments because the squared distance is a convex quadratic).
//
// Parallel segments have a whole interval of closest points. A single point there would let one
// capsule lying along another spin about the contact, so when the axes are (nearly) parallel and
// their projections overlap, the two ends of the overlap interval are both reported. Each point
// is measured exactly (closest point on the other segment), so a small angle only moves the
// points, never misstates the gap at them.
#pragma once

#include "kernels/collide_sphere_sphere.h"

namespace s2r {
namespace collide_internal {

// Closest points of the segments ca + s ua, s in [-ha, ha], and cb + t ub, t in [-hb, hb] (ua, ub
// unit). Writes s and t. Parallel segments: the middle of the overlap of their projections (or
// the nearest ends when they do not overlap).
S2R_HD void ClosestSegmentSegment(Vec3 ca, Vec3 ua, Real ha, Vec3 cb, Vec3 ub, Real hb, Real* s_out,
                                  Real* t_out) {
  const Vec3 r = ca - cb;
  const Real b = Dot(ua, ub);
  const Real c = Dot(ua, r);
  const Real f = Dot(ub, r);
  const Real denom = Real(1) - b * b;  // sin^2 of the angle between the axes
  // below this, denom is mostly rounding error of b (float: ~1e-7) and the lines are parallel
  const Real parallel = sizeof(Real) == 4 ? Real(1e-7) : Real(1e-13);
  Real s;
  if (denom > parallel) {
    // closest points of the infinite lines, clamped to a's segment
    s = Clamp((b * f - c) / denom, -ha, ha);
  } else {
    // parallel: b's segment projects onto a's line as [-c - hb, -c + hb]
    const Real lo = Max(-ha, -c - hb);
    const Real hi = Min(ha, -c + hb);
    s = Clamp(Real(0.5) * (lo + hi), -ha, ha);
  }
  // closest point of b's segment to a(s), then of a's segment to that
  const Real t = Clamp(f + b * s, -hb, hb);
  s = Clamp(b * t - c, -ha, ha);
  *s_out = s;
  *t_out = t;
}

}  // namespace collide_internal

template <class Point>
S2R_HD int CollideCapsuleCapsule(const Transform& ta, const Real* size_a, const Transform& tb,
                                 const Real* size_b, Real margin, Point* out) {
  using collide_internal::SphereSphereContact;
  const Vec3 z{Real(0), Real(0), Real(1)};
  const Vec3 ua = Rotate(ta.rot, z);
  const Vec3 ub = Rotate(tb.rot, z);
  const Real ra = size_a[0], ha = size_a[1];
  const Real rb = size_b[0], hb = size_b[1];
  const Vec3 axis_cross = Cross(ua, ub);
  const Real sin2 = LengthSq(axis_cross);

  // direction used when the segments touch: across both axes (or across a's axis when parallel),
  // oriented from a towards b
  Vec3 fallback;
  if (sin2 > Real(1e-8)) {
    fallback = Normalize(axis_cross);
  } else {
    Vec3 unused;
    OrthonormalBasis(ua, &fallback, &unused);
  }
  if (Dot(fallback, tb.pos - ta.pos) < Real(0)) fallback = -fallback;

  // (nearly) parallel axes (angle below ~0.01 rad) with overlapping projections: the two ends of
  // the overlap, each paired with its closest point on b's segment
  if (sin2 < Real(1e-4)) {
    const Real centre_b = Dot(tb.pos - ta.pos, ua);  // b's centre along a's axis
    const Real reach_b = hb * Abs(Dot(ua, ub));
    const Real lo = Max(-ha, centre_b - reach_b);
    const Real hi = Min(ha, centre_b + reach_b);
    if (hi - lo > Real(1e-3) * (ha + hb + ra + rb)) {
      int count = 0;
      for (int end = 0; end < 2; ++end) {
        const Vec3 pa = ta.pos + (end == 0 ? lo : hi) * ua;
        const Real t = Clamp(Dot(pa - tb.pos, ub), -hb, hb);
        count += SphereSphereContact(pa, ra, tb.pos + t * ub, rb, fallback, margin,
                                     static_cast<uint32_t>(1 + end), out + count);
      }
      return count;
    }
  }

  // general position: one point at the closest points of the segments
  Real s, t;
  collide_internal::ClosestSegmentSegment(ta.pos, ua, ha, tb.pos, ub, hb, &s, &t);
  return SphereSphereContact(ta.pos + s * ua, ra, tb.pos + t * ub, rb, fallback, margin, 0, out);
}

}  // namespace s2r
