// Launchers for the CUDA kernels, declared in plain C++ so host code never includes CUDA headers.
// Each __global__ body (launch.cu) finds its world, bounds-checks, and calls the kernels/ function.
#pragma once

#include "kernels/step_world.h"

namespace s2r {

// device scratch for all worlds (kernels/workspace.h): world w's blocks start at
// w * layout.step_bytes and w * layout.world_bytes
struct DeviceWorkspaces {
  char* step_blocks;
  char* world_blocks;
  WorkspaceLayout layout;
};

void LaunchResetWorlds(const ModelView& m, const StateView& s, void* stream);
// resets the `count` worlds listed in the device array `worlds` and clears their world blocks'
// validity words
void LaunchResetWorldList(const ModelView& m, const StateView& s, const DeviceWorkspaces& ws, const int32_t* worlds,
                          int count, void* stream);
// `variant` indexes kStepVariants (kernels/step_features.h): the step compiled for what the model
// contains
void LaunchControlStep(const ModelView& m, const StateView& s, const DeviceWorkspaces& ws,
                       const Real* actions, int variant, void* stream);

}  // namespace s2r
