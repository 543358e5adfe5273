// Plane-box narrow phase.
//
// A box touches a half-space first with its vertices, so the manifold is made of box vertices:
// every vertex whose height above the plane is below the margin qualifies, and when more than
// kMaxManifoldPoints do (a thin box, or a large margin) the deepest ones are kept. A box resting
// on a face therefore gets its four bottom corners. Each point lies midway between the vertex and
// its projection onto the plane; its feature id is the vertex index (bit k set: +size[k] along
// local axis k), which is stable for as long as the vertex stays in contact.
#pragma once

#include "kernels/contact.h"

namespace s2r {

template <class Point>
S2R_HD int CollidePlaneBox(const Transform& ta, const Real* size_a, const Transform& tb,
                           const Real* size_b, Real margin, Point* out) {
  (void)size_a;
  const Vec3 n = Rotate(ta.rot, Vec3{Real(0), Real(0), Real(1)});
  // height of a vertex = height of the centre + (local vertex) . (plane normal in the box frame)
  const Vec3 n_local = InvRotate(tb.rot, n);
  const Real centre_height = Dot(tb.pos - ta.pos, n);
  const Vec3 extent_along_n{size_b[0] * n_local.x, size_b[1] * n_local.y, size_b[2] * n_local.z};

  // height of vertex v, recomputed where it is needed: an array of eight heights indexed by a
  // candidate read at run time would live in local memory on the GPU
  auto height = [&](int v) {
    return centre_height + ((v & 1) ? extent_along_n.x : -extent_along_n.x) +
           ((v & 2) ? extent_along_n.y : -extent_along_n.y) +
           ((v & 4) ? extent_along_n.z : -extent_along_n.z);
  };
  // the vertices below the margin, in index order, three bits each in one word (registers)
  uint32_t candidate = 0;
  int num_candidates = 0;
  for (int v = 0; v < 8; ++v) {
    if (height(v) < margin) candidate |= static_cast<uint32_t>(v) << (3 * num_candidates++);
  }
  auto at = [&](int k) { return static_cast<int>((candidate >> (3 * k)) & 7u); };
  auto put = [&](int k, int v) {
    candidate = (candidate & ~(7u << (3 * k))) | (static_cast<uint32_t>(v) << (3 * k));
  };

  // keep the deepest: partial selection sort of the candidates by height (ties keep index order)
  const int count = Min(num_candidates, kMaxManifoldPoints);
  for (int i = 0; i < count; ++i) {
    int best = i;
    for (int j = i + 1; j < num_candidates; ++j) {
      if (height(at(j)) < height(at(best))) best = j;
    }
    const int chosen = at(best);
    put(best, at(i));
    put(i, chosen);

    const Vec3 local{(chosen & 1) ? size_b[0] : -size_b[0], (chosen & 2) ? size_b[1] : -size_b[1],
                     (chosen & 4) ? size_b[2] : -size_b[2]};
    const Vec3 vertex = TransformPoint(tb, local);
    const Real depth = height(chosen);
    out[i].point = vertex - (Real(0.5) * depth) * n;
    out[i].normal = n;
    out[i].separation = depth;
    out[i].feature = static_cast<uint32_t>(chosen);
  }
  return count;
}

}  // namespace s2r
