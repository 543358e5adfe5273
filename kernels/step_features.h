// What a scene's physics step can reach, as a compile-time set: the step functions
// (kernels/step_world.h) take it as a template argument, and a backend runs the smallest
// compiled variant that holds every stage its model needs. A box-push world then never carries
// the maximal-coordinate lock block or GJK/EPA in its code, registers or stack frame (on CUDA the
// stack frame is reserved for the deepest path a kernel could take, whether a scene takes it or
// not).
//
// A variant differs from kStepAll only by stages that a model outside it cannot reach, so it
// produces bit-identical results for every model it holds (tests/host/test_step_features.cc).
#pragma once

#include <type_traits>

#include "kernels/model_view.h"

namespace s2r {

enum StepFeature : unsigned {
  // joints stepped in maximal coordinates (solver_joint.h): per-joint blocks and the lock block
  kStepJointBlocks = 1u << 0,
  // slide trees in reduced coordinates (solver_reduced.h)
  kStepSlideTrees = 1u << 1,
  // articulated trees of hinges and slides (solver_tree.h)
  kStepTrees = 1u << 2,
  // a candidate pair with a cylinder, ellipsoid or mesh: the convex narrow phase (GJK/EPA)
  kStepConvex = 1u << 3,
  kStepAll = (1u << 4) - 1u,
};

// The compiled variants, smallest first: gantries with free objects (the bench and sweep
// scenes), then arms as reduced trees with primitive geoms, then everything.
constexpr unsigned kStepVariants[] = {
    kStepSlideTrees,
    kStepSlideTrees | kStepTrees,
    kStepAll,
};
constexpr int kStepVariantCount = int(sizeof(kStepVariants) / sizeof(kStepVariants[0]));

// The stages model m needs (host code: read once per model upload).
inline unsigned StepFeaturesOf(const ModelView& m) {
  unsigned f = 0;
  for (int j = 0; j < m.njoint; ++j) {
    if (m.joint_type[j] == kJointFree) continue;
    int b = m.joint_body[j];
    if (m.body_reduced != nullptr && m.body_reduced[b] >= 0) f |= kStepSlideTrees;
    else if (m.body_tree != nullptr && m.body_tree[b] >= 0) f |= kStepTrees;
    else f |= kStepJointBlocks;
  }
  // equalities and tendons couple articulated trees' joints (solver_coupling.h); geoms with their
  // own contact softness (geom_contact_hertz) are honoured by the variants with trees only
  if (m.nequality > 0 || m.ntendon > 0) f |= kStepTrees;
  for (int g = 0; g < m.ngeom; ++g) {
    if (m.geom_contact_hertz.At(0)[g] > Real(0)) f |= kStepTrees;
  }
  for (int p = 0; p < m.npair; ++p) {
    for (int k = 0; k < 2; ++k) {
      if (m.geom_type[m.pair_geom[2 * p + k]] > kGeomBox) f |= kStepConvex;
    }
  }
  return f;
}

// A variant's name, as bench/cuda_kernels.py writes its kernels' template argument
// (ControlStepKernel<slide_trees>) and `s2r bench --json` reports it ("step_variant").
inline const char* StepVariantName(int variant) {
  static_assert(kStepVariantCount == 3, "name the new variant");
  switch (variant) {
    case 0: return "slide_trees";
    case 1: return "slide_trees+trees";
    default: return "all";
  }
}

// Index into kStepVariants of the smallest variant holding `features`.
inline int StepVariantFor(unsigned features) {
  for (int v = 0; v < kStepVariantCount; ++v) {
    if ((features & ~kStepVariants[v]) == 0u) return v;
  }
  return kStepVariantCount - 1;
}

// Calls fn(std::integral_constant<unsigned, kStepVariants[variant]>{}), so a caller writes one
// generic lambda and gets every variant compiled.
template <class Fn>
inline void WithStepVariant(int variant, Fn&& fn) {
  static_assert(kStepVariantCount == 3, "add the new variant's case");
  switch (variant) {
    case 0: fn(std::integral_constant<unsigned, kStepVariants[0]>{}); break;
    case 1: fn(std::integral_constant<unsigned, kStepVariants[1]>{}); break;
    default: fn(std::integral_constant<unsigned, kStepVariants[2]>{}); break;
  }
}

}  // namespace s2r
