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

S2R_HD int CollidePlaneBox(const Transform& ta, const Real* size_a, const Transform& tb,
                           const Real* size_b, Real margin, ContactPoint* out) {
  (void)size_a;
  const Vec3 n = Rotate(ta.rot, Vec3{Real(0), Real(0), Real(1)});
  // height of a vertex = height of the centre + (local vertex) . (plane normal in the box frame)
  const Vec3 n_local = InvRotate(tb.rot, n);
  const Real centre_height = Dot(tb.pos - ta.pos, n);
  const Vec3 extent_along_n{size_b[0] * n_local.x, size_b[1] * n_local.y, size_b[2] * n_local.z};

  // heights of all eight vertices; remember those below the margin
  Real height[8];
  int candidate[8];
  int num_candidates = 0;
  for (int v = 0; v < 8; ++v) {
    height[v] = centre_height + ((v & 1) ? extent_along_n.x : -extent_along_n.x) +
                ((v & 2) ? extent_along_n.y : -extent_along_n.y) +
                ((v & 4) ? extent_along_n.z : -extent_along_n.z);
    if (height[v] < margin) candidate[num_candidates++] = v;
  }

  // keep the deepest: partial selection sort of the candidates by height (ties keep index order)
  const int count = Min(num_candidates, kMaxManifoldPoints);
  for (int i = 0; i < count; ++i) {
    int best = i;
    for (int j = i + 1; j < num_candidates; ++j) {
      if (height[candidate[j]] < height[candidate[best]]) best = j;
    }
    const int chosen = candidate[best];
    candidate[best] = candidate[i];
    candidate[i] = chosen;

    const Vec3 local{(chosen & 1) ? size_b[0] : -size_b[0], (chosen & 2) ? size_b[1] : -size_b[1],
                     (chosen & 4) ? size_b[2] : -size_b[2]};
    const Vec3 vertex = TransformPoint(tb, local);
    out[i].point = vertex - (Real(0.5) * height[chosen]) * n;
    out[i].normal = n;
    out[i].separation = height[chosen];
    out[i].feature = static_cast<uint32_t>(chosen);
  }
  return count;
}

}  // namespace s2r
