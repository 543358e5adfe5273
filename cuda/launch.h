// Launchers for the CUDA kernels, declared in plain C++ so host code never includes CUDA headers.
// Each __global__ body (launch.cu) finds its world, bounds-checks, and calls the kernels/ function.
#pragma once

#include "kernels/step_world.h"

namespace s2r {

// device scratch for all worlds: world w uses [w * per-world count, ...)
struct DeviceWorkspaces {
  SolverBody* bodies;
  ContactConstraint* constraints;
  ContactManifold* manifolds;
  Contact* contacts;
  Transform* geom_xform;
  Real* joint_qdot0;
  JointFrame* joint_frame;
  Real* joint_factor;
  Real* lock_factor;   // (R * R) per world, or null when R > kMaxTreeLockRows
  Real* lock_scratch;  // (LockScratchSize) per world
  int32_t lock_rows;   // R
  Real* reduced;       // (ReducedScratchSize(nreduced)) per world, or null when nreduced = 0
  uint32_t* reduced_valid;  // (1) per world: what of its reduced block is current
  Real* axis_prep;     // (AxisPrepSize) per world
};

void LaunchResetWorlds(const ModelView& m, const StateView& s, void* stream);
void LaunchControlStep(const ModelView& m, const StateView& s, const DeviceWorkspaces& ws,
                       const Real* actions, void* stream);

}  // namespace s2r
