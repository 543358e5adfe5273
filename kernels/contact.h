// Contact points: what narrow phase produces and what a world keeps between steps.
#pragma once

#include "kernels/math_types.h"

namespace s2r {

// most points one geom pair contributes (a box-box face manifold is reduced to 4)
constexpr int kMaxManifoldPoints = 4;

// One narrow-phase result. The normal points from geom A to geom B; `point` lies midway between
// the two surfaces; separation is the signed gap along the normal (negative: penetration), m.
// `feature` identifies the pair of features (vertex, edge, face) that made the point, so the
// solver can warm-start a point that persists from one step to the next. The narrow-phase
// functions (collide.h) write these four fields, into a ContactPoint or, in the step, straight into
// the pool's Contact (below), which has them too.
struct ContactPoint {
  Vec3 point;
  Vec3 normal;
  Real separation;
  uint32_t feature;
};

// A contact as a world keeps it after a step: identity for warm starting, geometry for logging,
// and the forces the solver converged to in the step's last substep.
struct Contact {
  int32_t geom_a;
  int32_t geom_b;
  uint32_t feature;
  Real separation;        // m, at collision time
  Vec3 point;             // world frame, m
  Vec3 normal;            // world frame, from A to B
  Real normal_force;      // N (>= 0), pushing B away from A
  Vec3 friction_force;    // N, world frame, tangent to the normal, acting on B
};

}  // namespace s2r
