// Box-box narrow phase.
//
// Separating-axis test over the 15 candidate axes: the 3 face normals of each box and the 9 cross
// products of an edge direction of one with an edge direction of the other. Along an axis n each
// box projects to an interval of half-width sum_k h_k |a_k . n| about its centre, so the gap along
// n is |d . n| minus both half-widths (d: centre to centre). If any gap exceeds the margin the
// boxes are (speculatively) apart and there is no contact; otherwise the axis with the largest gap
// (least penetration) is the contact normal. To keep the choice from flickering between nearly
// equal axes, B's faces must beat A's by a small tolerance and an edge axis must beat the best face
// by a tolerance plus 5% of the depth; when the boxes overlap, an edge axis within 0.1 rad of a
// face normal never wins (a twisted face-face contact, kEdgeNearFaceCos).
//
// Face axis: the box that owns it is the reference, the other the incident box. The incident face
// is the one whose normal is most anti-parallel to the reference normal; its quad is clipped
// (Sutherland-Hodgman) against the four side planes of the reference face, and every clipped
// vertex below the margin becomes a point, midway between it and the reference face plane. More
// than kMaxManifoldPoints are reduced to the deepest plus the three that maximise the area.
//
// Separated boxes whose nearest features are not face to face (the face clip has cut away the
// incident box's nearest part, or the axis is an edge pair whose closest points may be an edge's
// end): one point at the exact closest pair (corner to box, edge to edge), its distance and
// direction, instead of gaps that over- or understate it.
//
// Edge axis: one point, midway between the closest points of the two supporting edges.
//
// Feature ids. A clipped vertex is an incident vertex, or the crossing of an incident edge with a
// reference side plane, or a reference face corner (crossing of two side planes); the clipper
// tracks which, giving a code in 0..23 that does not change under small motions. The id packs
// (reference is B) << 11 | reference face << 8 | incident face << 5 | code, with faces numbered
// 2 * axis + (outward normal along -axis). Edge contacts: 1 << 12 | edge of A << 4 | edge of B,
// edges numbered 4 * axis + corner. Exact closest pairs: 1 << 13 | the candidate (BoxBoxClosest).
#pragma once

#include "kernels/collide_capsule_capsule.h"
#include "kernels/contact.h"

namespace s2r {

// cos(0.1 rad): an edge axis closer than this to a face normal of either box is a face contact
constexpr Real kEdgeNearFaceCos = Real(0.99500417);

namespace collide_internal {

// A vertex of the polygon being clipped: position, feature code (< 24), and the line its outgoing
// edge (to the next vertex) lies on: 0..3 an incident face edge, 4..7 a reference side plane.
// 16 bytes: the polygon (8 of them, clipped in place) is most of a bench scene's narrow-phase frame
// (docs/gpu.md).
struct ClipVertex {
  Vec3 p;
  uint16_t code;
  int16_t line;
};

// Code of the vertex where an edge lying on `line` crosses side plane `plane` (0: +u, 1: -u,
// 2: +v, 3: -v): incident edge e -> 4 + 4 e + plane; side plane -> reference corner 20..23.
S2R_HD uint32_t ClipCode(int line, int plane) {
  if (line < 4) return static_cast<uint32_t>(4 + 4 * line + plane);
  const int other = line - 4;
  const int u_plane = other < 2 ? other : plane;
  const int v_plane = other < 2 ? plane : other;
  return static_cast<uint32_t>(20 + (u_plane & 1) + 2 * (v_plane & 1));
}

// Clips the convex polygon `poly` (n < capacity vertices; a full array loses its last) to the
// half-space Dot(p, plane_n) <= offset, in place: returns the new count (at most n + 1).
// Sutherland-Hodgman walks the edges in order and writes its output over the input it has read:
// edge i reads vertex i + 1 (a copy of the first, at n, closes the loop) before it writes, and a
// convex polygon's output never runs more than one vertex ahead of the input (one leaving crossing
// before the vertices outside), so a write lands on a vertex already read. A polygon that rounding
// has made slightly non-convex could cross the plane more than twice: a vertex that would land on
// one not yet read, or past `capacity`, is dropped rather than written.
S2R_HD int ClipPolygon(ClipVertex* poly, int n, Vec3 plane_n, Real offset, int plane, int capacity) {
  if (n <= 0) return 0;
  if (n >= capacity) n = capacity - 1;  // a full array has no room for the closing copy
  poly[n] = poly[0];  // the closing edge's end, read before anything is written over it
  ClipVertex from = poly[0];
  Real d_from = Dot(from.p, plane_n) - offset;
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const ClipVertex to = poly[i + 1];
    const Real d_to = Dot(to.p, plane_n) - offset;
    const int room = Min(i + 2, capacity);  // positions up to i + 1 hold vertices already read
    if (d_from <= Real(0) && m < room) {
      poly[m] = from;
      // a vertex exactly on the plane whose edge leaves: the boundary continues along the plane
      if (d_from == Real(0) && d_to > Real(0)) poly[m].line = static_cast<int16_t>(4 + plane);
      ++m;
    }
    if (((d_from < Real(0) && d_to > Real(0)) || (d_from > Real(0) && d_to < Real(0))) && m < room) {
      const Real t = d_from / (d_from - d_to);
      poly[m].p = from.p + t * (to.p - from.p);
      poly[m].code = static_cast<uint16_t>(ClipCode(from.line, plane));
      // leaving: the boundary runs along the plane to where the polygon comes back in;
      // entering: it continues along the edge it came in on
      poly[m].line = static_cast<int16_t>(d_from < Real(0) ? 4 + plane : from.line);
      ++m;
    }
    from = to;
    d_from = d_to;
  }
  return m;
}

// The clipped incident vertex v as a contact: its gap to the reference face plane (normal n,
// offset face_offset) and the point midway between it and that plane. Computed where needed
// rather than stored: the same expression gives the same bits each time (the CPU build does not
// contract to FMA), and the device frame does not carry eight gaps.
S2R_HD Real FaceGap(const ClipVertex& v, Vec3 n, Real face_offset) {
  return Dot(v.p, n) - face_offset;
}
S2R_HD Vec3 FaceMidpoint(const ClipVertex& v, Vec3 n, Real face_offset) {
  return v.p - (Real(0.5) * FaceGap(v, n, face_offset)) * n;
}

// Keeps at most kMaxManifoldPoints of the n clipped vertices v (their contacts as FaceGap and
// FaceMidpoint give them): the deepest, the one farthest from it, the one making the largest
// triangle with those two, and the one adding the most area outside that triangle (areas measured
// in the plane normal to `normal`). Returns how many, and the kept indices a byte each in *keep
// (the k-th in bits 8k..8k+7), so that no index array needs an address.
S2R_HD int ReduceManifold(const ClipVertex* v, int n, Vec3 normal, Real face_offset,
                          uint32_t* keep) {
  if (n <= kMaxManifoldPoints) {
    *keep = 0x03020100u;
    return n;
  }
  auto mid = [&](int i) { return FaceMidpoint(v[i], normal, face_offset); };
  int i0 = 0;
  Real gap0 = FaceGap(v[0], normal, face_offset);
  for (int i = 1; i < n; ++i) {
    const Real gap = FaceGap(v[i], normal, face_offset);
    if (gap < gap0) {
      i0 = i;
      gap0 = gap;
    }
  }
  const Vec3 p0 = mid(i0);
  int i1 = i0 == 0 ? 1 : 0;
  Real best = Real(-1);
  for (int i = 0; i < n; ++i) {
    const Real d2 = LengthSq(mid(i) - p0);
    if (i != i0 && d2 > best) {
      best = d2;
      i1 = i;
    }
  }
  Vec3 p1 = mid(i1);
  int i2 = -1;
  best = Real(-1);
  for (int i = 0; i < n; ++i) {
    if (i == i0 || i == i1) continue;
    const Real area = Abs(Dot(Cross(p1 - p0, mid(i) - p0), normal));
    if (area > best) {
      best = area;
      i2 = i;
    }
  }
  Vec3 p2 = mid(i2);
  // orient the triangle counter-clockwise about the normal
  if (Dot(Cross(p1 - p0, p2 - p0), normal) < Real(0)) {
    const int i_tmp = i1;
    i1 = i2;
    i2 = i_tmp;
    const Vec3 p_tmp = p1;
    p1 = p2;
    p2 = p_tmp;
  }
  int i3 = -1;
  best = Real(0);
  for (int i = 0; i < n; ++i) {
    if (i == i0 || i == i1 || i == i2) continue;
    // area of the triangle it forms with a triangle edge it lies outside of
    const Vec3 q = mid(i);
    Real added = Real(0);
    added = Max(added, -Dot(Cross(p1 - p0, q - p0), normal));
    added = Max(added, -Dot(Cross(p2 - p1, q - p1), normal));
    added = Max(added, -Dot(Cross(p0 - p2, q - p2), normal));
    if (i3 < 0 || added > best) {
      best = added;
      i3 = i;
    }
  }
  *keep = static_cast<uint32_t>(i0) | static_cast<uint32_t>(i1) << 8 |
          static_cast<uint32_t>(i2) << 16 | static_cast<uint32_t>(i3) << 24;
  return 4;
}

// The exact closest pair of two boxes that do not overlap: the nearest of the 16 corner-to-box and
// the 144 edge-to-edge candidates, which between them hold every closest pair of two convex
// polyhedra that are apart (a corner against a face, edge or corner; an edge against an edge).
struct BoxBoxPair {
  Vec3 on_a, on_b;
  Real distance;
  uint32_t which;  // 0-7 A's corners, 8-15 B's, 16 + 12 * edge of A + edge of B (4 * axis + corner)
};

S2R_HD BoxBoxPair BoxBoxClosest(Transform ta, const Real* ha, Transform tb, const Real* hb) {
  const Mat3 ma = QuatToMat3(ta.rot), mb = QuatToMat3(tb.rot);
  const Vec3 a[3] = {Column(ma, 0), Column(ma, 1), Column(ma, 2)};
  const Vec3 b[3] = {Column(mb, 0), Column(mb, 1), Column(mb, 2)};
  BoxBoxPair best{ta.pos, tb.pos, Real(1e30), 0};
  Real best2 = Real(1e30);
  // The loops over axes are unrolled (the axes stay in registers: an array indexed at run time
  // would live in the thread's local memory); those over corners are not (code size).
  S2R_UNROLL
  for (int side = 0; side < 2; ++side) {  // corners of A against B, then of B against A
    const Vec3 from = side ? tb.pos : ta.pos, to = side ? ta.pos : tb.pos;
    const Vec3 f0 = side ? b[0] : a[0], f1 = side ? b[1] : a[1], f2 = side ? b[2] : a[2];
    const Vec3 t0 = side ? a[0] : b[0], t1 = side ? a[1] : b[1], t2 = side ? a[2] : b[2];
    const Real* fh = side ? hb : ha;
    const Real* th = side ? ha : hb;
    S2R_NO_UNROLL
    for (int i = 0; i < 8; ++i) {
      const Vec3 corner = from + ((i & 1) ? fh[0] : -fh[0]) * f0 + ((i & 2) ? fh[1] : -fh[1]) * f1 +
                          ((i & 4) ? fh[2] : -fh[2]) * f2;
      const Vec3 r = corner - to;
      // the corner clamped into the other box
      const Vec3 q = to + Clamp(Dot(r, t0), -th[0], th[0]) * t0 + Clamp(Dot(r, t1), -th[1], th[1]) * t1 +
                     Clamp(Dot(r, t2), -th[2], th[2]) * t2;
      const Real d2 = LengthSq(corner - q);
      if (d2 < best2) {
        best2 = d2;
        best.on_a = side ? q : corner;
        best.on_b = side ? corner : q;
        best.which = static_cast<uint32_t>(8 * side + i);
      }
    }
  }
  S2R_UNROLL
  for (int ka = 0; ka < 3; ++ka) {
    const int ka1 = (ka + 1) % 3, ka2 = (ka + 2) % 3;
    S2R_UNROLL
    for (int kb = 0; kb < 3; ++kb) {
      const int kb1 = (kb + 1) % 3, kb2 = (kb + 2) % 3;
      S2R_NO_UNROLL
      for (int ca = 0; ca < 4; ++ca) {
        const Vec3 centre_a = ta.pos + ((ca & 1) ? ha[ka1] : -ha[ka1]) * a[ka1] +
                              ((ca & 2) ? ha[ka2] : -ha[ka2]) * a[ka2];
        S2R_NO_UNROLL
        for (int cb = 0; cb < 4; ++cb) {
          const Vec3 centre_b = tb.pos + ((cb & 1) ? hb[kb1] : -hb[kb1]) * b[kb1] +
                                ((cb & 2) ? hb[kb2] : -hb[kb2]) * b[kb2];
          Real s, t;
          ClosestSegmentSegment(centre_a, a[ka], ha[ka], centre_b, b[kb], hb[kb], &s, &t);
          const Vec3 qa = centre_a + s * a[ka], qb = centre_b + t * b[kb];
          const Real d2 = LengthSq(qb - qa);
          if (d2 < best2) {
            best2 = d2;
            best.on_a = qa;
            best.on_b = qb;
            best.which = static_cast<uint32_t>(16 + 12 * (4 * ka + ca) + 4 * kb + cb);
          }
        }
      }
    }
  }
  best.distance = Sqrt(best2);
  return best;
}

// One point at the exact closest pair of two separated boxes, or none beyond the margin; `axis`
// (from A to B) stands in for the normal if the pair touches. Not inlined: a rare path, whose
// loops would otherwise add to the step kernel's registers (docs/gpu.md); its arguments are
// values (or the model's sizes), so calling it takes no caller's variable's address.
template <class Point>
S2R_HD_NOINLINE int BoxBoxClosestPoint(Transform ta, const Real* ha, Transform tb, const Real* hb,
                                       Vec3 axis, Real margin, Point* out) {
  const BoxBoxPair p = BoxBoxClosest(ta, ha, tb, hb);
  if (!(p.distance < margin)) return 0;
  out[0].point = Real(0.5) * (p.on_a + p.on_b);
  out[0].normal = p.distance > Real(1e-12) ? (Real(1) / p.distance) * (p.on_b - p.on_a) : axis;
  out[0].separation = p.distance;
  out[0].feature = (1u << 13) | p.which;
  return 1;
}

}  // namespace collide_internal

template <class Point>
S2R_HD int CollideBoxBox(const Transform& ta, const Real* size_a, const Transform& tb,
                         const Real* size_b, Real margin, Point* out) {
  using collide_internal::ClipVertex;
  const Mat3 ma = QuatToMat3(ta.rot);
  const Mat3 mb = QuatToMat3(tb.rot);
  const Vec3 ax[3] = {Column(ma, 0), Column(ma, 1), Column(ma, 2)};
  const Vec3 bx[3] = {Column(mb, 0), Column(mb, 1), Column(mb, 2)};
  const Real ha[3] = {size_a[0], size_a[1], size_a[2]};
  const Real hb[3] = {size_b[0], size_b[1], size_b[2]};
  const Vec3 d = tb.pos - ta.pos;

  // |a_i . b_j| and the centre offset in each box's axes
  Real abs_dot[3][3];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) abs_dot[i][j] = Abs(Dot(ax[i], bx[j]));
  }
  const Real da[3] = {Dot(d, ax[0]), Dot(d, ax[1]), Dot(d, ax[2])};
  const Real db[3] = {Dot(d, bx[0]), Dot(d, bx[1]), Dot(d, bx[2])};

  // face axes of A, then of B
  int face_a = 0, face_b = 0;
  Real sep_a = Real(-1e30), sep_b = Real(-1e30);
  for (int i = 0; i < 3; ++i) {
    const Real sep = Abs(da[i]) - ha[i] -
                     (hb[0] * abs_dot[i][0] + hb[1] * abs_dot[i][1] + hb[2] * abs_dot[i][2]);
    if (sep > margin) return 0;
    if (sep > sep_a) {
      sep_a = sep;
      face_a = i;
    }
  }
  for (int j = 0; j < 3; ++j) {
    const Real sep = Abs(db[j]) - hb[j] -
                     (ha[0] * abs_dot[0][j] + ha[1] * abs_dot[1][j] + ha[2] * abs_dot[2][j]);
    if (sep > margin) return 0;
    if (sep > sep_b) {
      sep_b = sep;
      face_b = j;
    }
  }
  // edge axes a_i x b_j; (nearly) parallel edges are covered by the face axes
  int edge_i = -1, edge_j = -1;
  Real sep_e = Real(-1e30);
  Vec3 edge_n{};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const Vec3 axis_cross = Cross(ax[i], bx[j]);
      const Real len = Length(axis_cross);
      if (len < Real(1e-3)) continue;
      const Vec3 n = (Real(1) / len) * axis_cross;
      const Real extent_a =
          ha[0] * Abs(Dot(ax[0], n)) + ha[1] * Abs(Dot(ax[1], n)) + ha[2] * Abs(Dot(ax[2], n));
      const Real extent_b =
          hb[0] * Abs(Dot(bx[0], n)) + hb[1] * Abs(Dot(bx[1], n)) + hb[2] * Abs(Dot(bx[2], n));
      const Real proj = Dot(d, n);
      const Real sep = Abs(proj) - extent_a - extent_b;
      if (sep > margin) return 0;
      if (sep > sep_e) {
        sep_e = sep;
        edge_i = i;
        edge_j = j;
        edge_n = proj >= Real(0) ? n : -n;  // from A towards B
      }
    }
  }

  // pick the axis: A's face, unless B's face or an edge is clearly better
  const Real length_scale = Min(ha[0] + ha[1] + ha[2], hb[0] + hb[1] + hb[2]) / Real(3);
  const Real tol = Real(1e-3) * length_scale;
  const bool use_b = sep_b > sep_a + tol;
  const Real sep_face = use_b ? sep_b : sep_a;
  // Overlapping, an edge axis within 0.1 rad of a face normal (kEdgeNearFaceCos) is a face pressed
  // on a twisted or tilted face, not two edges crossing: a finger pad on a peg turned by 0.01 rad
  // won the edge test by 0.1 mm and its four points became one, every other step, dropping the
  // grip's torque. Such a pair takes the face path: the clip gives the points of the incident face
  // (or edge) under the reference face, each at its own depth. (Apart, the edge axis proves the gap:
  // it keeps the exact closest pair below.)
  bool edge_near_face = false;
  if (edge_i >= 0 && sep_e <= Real(0)) {
    Real most = Real(0);
    for (int k = 0; k < 3; ++k) most = Max(most, Max(Abs(Dot(edge_n, ax[k])), Abs(Dot(edge_n, bx[k]))));
    edge_near_face = most > kEdgeNearFaceCos;
  }
  if (edge_i >= 0 && !edge_near_face && sep_e > sep_face + Real(0.05) * Abs(sep_face) + tol) {
    // edge-edge: the edge of each box that is furthest towards the other
    const Real sep = sep_e;
    if (!(sep < margin)) return 0;
    // apart, the gap along the axis is only a lower bound of the distance (the closest points may
    // be an edge's end): the exact closest pair instead (see the face case below)
    if (sep > Real(0)) {
      return collide_internal::BoxBoxClosestPoint(ta, size_a, tb, size_b, edge_n, margin, out);
    }
    Vec3 centre_a = ta.pos, centre_b = tb.pos;
    uint32_t corner_a = 0, corner_b = 0;
    for (int m = 1; m < 3; ++m) {
      const int ka = (edge_i + m) % 3;
      const bool pos_a = Dot(ax[ka], edge_n) >= Real(0);
      centre_a += (pos_a ? ha[ka] : -ha[ka]) * ax[ka];
      if (pos_a) corner_a |= 1u << (m - 1);
      const int kb = (edge_j + m) % 3;
      const bool pos_b = Dot(bx[kb], edge_n) < Real(0);
      centre_b += (pos_b ? hb[kb] : -hb[kb]) * bx[kb];
      if (pos_b) corner_b |= 1u << (m - 1);
    }
    Real s, t;
    collide_internal::ClosestSegmentSegment(centre_a, ax[edge_i], ha[edge_i], centre_b, bx[edge_j],
                                            hb[edge_j], &s, &t);
    out[0].point = Real(0.5) * ((centre_a + s * ax[edge_i]) + (centre_b + t * bx[edge_j]));
    out[0].normal = edge_n;
    out[0].separation = sep;
    out[0].feature = (1u << 12) | ((4 * static_cast<uint32_t>(edge_i) + corner_a) << 4) |
                     (4 * static_cast<uint32_t>(edge_j) + corner_b);
    return 1;
  }

  // face contact: reference box R owns the face, incident box I is clipped against it
  const Vec3* ref_axes = use_b ? bx : ax;
  const Vec3* inc_axes = use_b ? ax : bx;
  const Real* ref_h = use_b ? hb : ha;
  const Real* inc_h = use_b ? ha : hb;
  const Vec3 ref_pos = use_b ? tb.pos : ta.pos;
  const Vec3 inc_pos = use_b ? ta.pos : tb.pos;
  const int ref_axis = use_b ? face_b : face_a;
  // the reference face is the one facing the incident box
  const Real toward = use_b ? -db[face_b] : da[face_a];
  const Real ref_side = toward >= Real(0) ? Real(1) : Real(-1);
  const Vec3 n = ref_side * ref_axes[ref_axis];  // outward from R towards I

  // incident face: normal most anti-parallel to n
  int inc_axis = 0;
  Real inc_dot = Dot(inc_axes[0], n);
  for (int k = 1; k < 3; ++k) {
    const Real dk = Dot(inc_axes[k], n);
    if (Abs(dk) > Abs(inc_dot)) {
      inc_dot = dk;
      inc_axis = k;
    }
  }
  const Real inc_side = inc_dot > Real(0) ? Real(-1) : Real(1);
  const Vec3 inc_centre = inc_pos + (inc_side * inc_h[inc_axis]) * inc_axes[inc_axis];
  const Vec3 inc_u = inc_h[(inc_axis + 1) % 3] * inc_axes[(inc_axis + 1) % 3];
  const Vec3 inc_v = inc_h[(inc_axis + 2) % 3] * inc_axes[(inc_axis + 2) % 3];
  // one polygon, clipped in place: a quad gains at most one vertex per side plane
  constexpr int kPolyCapacity = 8;
  ClipVertex poly[kPolyCapacity];
  poly[0] = ClipVertex{inc_centre + inc_u + inc_v, 0, 0};
  poly[1] = ClipVertex{inc_centre - inc_u + inc_v, 1, 1};
  poly[2] = ClipVertex{inc_centre - inc_u - inc_v, 2, 2};
  poly[3] = ClipVertex{inc_centre + inc_u - inc_v, 3, 3};
  int num = 4;

  // clip against the reference face's side planes: +u, -u, +v, -v. The planes are pushed out by
  // a hair (far below any physical scale, far above rounding) so that an incident vertex lying on
  // a side plane, as with equal boxes stacked flush, stays a vertex instead of flickering between
  // vertex and edge-crossing ids with rounding noise.
  const Real slack = Real(2e-5) * length_scale;
  const int k1 = (ref_axis + 1) % 3, k2 = (ref_axis + 2) % 3;
  for (int plane = 0; plane < 4; ++plane) {
    const int k = plane < 2 ? k1 : k2;
    const Vec3 plane_n = (plane & 1) ? -ref_axes[k] : ref_axes[k];
    const Real offset = Dot(ref_pos, plane_n) + ref_h[k] + slack;
    num = collide_internal::ClipPolygon(poly, num, plane_n, offset, plane, kPolyCapacity);
    if (num == 0) break;
  }

  // points below the margin, midway between the incident surface and the reference face
  const Real face_offset = Dot(ref_pos, n) + ref_h[ref_axis];
  const Vec3 normal = use_b ? -n : n;  // from A to B
  const uint32_t ref_face = static_cast<uint32_t>(2 * ref_axis + (ref_side < Real(0) ? 1 : 0));
  const uint32_t inc_face = static_cast<uint32_t>(2 * inc_axis + (inc_side < Real(0) ? 1 : 0));
  const uint32_t id_base = (use_b ? 1u << 11 : 0u) | (ref_face << 8) | (inc_face << 5);
  // Each clipped vertex's gap to the reference face plane, and the nearest. Along a separating
  // face axis the boxes' projections are sep_face apart: some part of the incident box comes that
  // close to the reference face's plane. If the clip has kept it, the face manifold is right. If it
  // has cut it away (it lies beyond the reference face's edges: boxes offset sideways, meeting
  // edge to edge or corner to edge), every clipped vertex is further away than the boxes are, or
  // nothing is left: the points would promise room that is not there, or leave a pair within the
  // margin without any. Neither the face axis nor its gap is the pair's then (lowering the points
  // to that gap deflects boxes that would pass by: ghost contacts), so the exact closest pair
  // gives the one point, as Box2D v3 does for separated polygons whose nearest features are not
  // face to face.
  Real nearest = Real(1e30);
  for (int i = 0; i < num; ++i) {
    nearest = Min(nearest, collide_internal::FaceGap(poly[i], n, face_offset));
  }
  if (sep_face > Real(0) && !(nearest <= sep_face + tol)) {
    return collide_internal::BoxBoxClosestPoint(ta, size_a, tb, size_b, normal, margin, out);
  }
  // the vertices within the margin, moved in place to the front of `poly` (count <= i)
  int count = 0;
  for (int i = 0; i < num; ++i) {
    if (!(collide_internal::FaceGap(poly[i], n, face_offset) < margin)) continue;
    poly[count] = poly[i];
    ++count;
  }
  uint32_t keep = 0;
  const int kept = collide_internal::ReduceManifold(poly, count, n, face_offset, &keep);
  for (int k = 0; k < kept; ++k) {
    const ClipVertex& v = poly[(keep >> (8 * k)) & 0xffu];
    out[k].point = collide_internal::FaceMidpoint(v, n, face_offset);
    out[k].normal = normal;
    out[k].separation = collide_internal::FaceGap(v, n, face_offset);
    out[k].feature = id_base | v.code;
  }
  return kept;
}

}  // namespace s2r
