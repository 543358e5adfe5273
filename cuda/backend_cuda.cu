// CUDA backend: model, state and per-world scratch on the device; one thread per world.
//
// This is the only CUDA translation unit (kernels, launchers and the Backend implementation), to
// keep the build to one nvcc invocation. The per-world functions are the same kernels/ code the
// CPU backend runs; nothing in a world's step uses atomics, so runs are reproducible.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <type_traits>
#include <string>
#include <vector>

#include "cuda/device_buffer.h"
#include "host/backend.h"
#include "kernels/step_world.h"

// A launch: `S2R_LAUNCH(kernel, grid, block, stream)(args...)`, which cuda/emulation.h queues on
// the CPU in the emulated build.
#if !defined(S2R_CUDA_EMULATION)
#include <nvtx3/nvToolsExt.h>
#define S2R_LAUNCH(kernel, grid, block, stream) kernel<<<(grid), (block), 0, (stream)>>>
#endif

namespace s2r {
namespace {
using namespace S2R_CUDA_NAMESPACE;

// device scratch for all worlds (kernels/workspace.h): world w's blocks start at
// w * layout.step_bytes and w * layout.world_bytes. With `step_in_local` the step block is the
// thread's local memory instead (LocalStepBlock) and `step_blocks` is null; with `state_in_local`
// the world's state is staged there too, after the step block, for the launch (WorldStateBytes:
// `state_bytes`), and in a sweep the world's episode record after it; with `world_in_local` (only
// with state_in_local) the world block is staged as well, between the step block and the state,
// and the device's world blocks are interleaved by world like the state (DeviceWorldWord).
struct DeviceWorkspaces {
  char* step_blocks;
  char* world_blocks;
  WorkspaceLayout layout;
  int32_t step_in_local;
  int32_t state_in_local;
  int32_t world_in_local;
  int32_t state_bytes;
  int32_t nworld;
};

// The 32-bit word at `byte_offset` in world w's world block in device memory: world-major (world
// w's block at w * world_bytes), or interleaved by word where the kernels stage the block (word k
// of world w at k * nworld + w), so that a warp's staging copies coalesce.
S2R_HDI uint32_t* DeviceWorldWord(const DeviceWorkspaces& dw, int world, int64_t byte_offset) {
  uint32_t* words = reinterpret_cast<uint32_t*>(dw.world_blocks);
  if (dw.world_in_local) return words + byte_offset / 4 * dw.nworld + world;
  return words + (int64_t(world) * dw.layout.world_bytes + byte_offset) / 4;
}

constexpr int kThreadsPerBlock = 128;

// Model and state views are kernel parameters marked __grid_constant__: the step functions take
// them by reference, and a reference to an ordinary parameter makes the compiler copy the whole
// struct (about 1.2 KB) into every thread's local memory; a grid constant is read in place from
// the parameter bank.

// Resident blocks per SM a step kernel is compiled for (__launch_bounds__), which caps its
// registers at 65536 / (128 * blocks). The bench scenes' variant asks for 4 (128 registers, 16
// warps): ptxas then spills 116 B (the control step) and 460 B (the sweep pass), where 8 blocks (64
// registers, 32 warps) spill 964 and 1,488 B (docs/gpu.md). Which is faster is for a device to say: configure with
// -DS2R_CUDA_STEP_MIN_BLOCKS=N to build that variant for N blocks. The arms' <slide_trees+trees>
// asks for 3 (168 registers, 12 warps: its sweep kernel took 175 once it staged, 8 warps), <all>
// spills at 255 registers already and is left unbounded.
#ifndef S2R_CUDA_STEP_MIN_BLOCKS
#define S2R_CUDA_STEP_MIN_BLOCKS 4
#endif
template <unsigned kFeatures>
constexpr int StepMinBlocks() {
  return kFeatures == kStepVariants[0] ? S2R_CUDA_STEP_MIN_BLOCKS : kFeatures == kStepVariants[1] ? 3 : 1;
}

// The step block in local memory (docs/gpu.md, "The step block and the state"). A world's step
// block (contact rows, manifolds, solver bodies: scratch written and read within one launch,
// kernels/workspace.h) is private to its thread, which is what local memory is: the hardware
// interleaves it by 32-bit word across the threads of a warp, so the warp's 32 accesses to one
// offset of their blocks are one 128-byte transaction, cached in L1. In global memory, world-major,
// the same 32 accesses are 32 sectors `step_bytes` apart.
// - The variant that runs the bench and sweep scenes reserves S2R_CUDA_LOCAL_STEP_BYTES per thread
//   (peg_insert's block, the largest of those scenes', is 24,896 B); the arms' variants
//   (<slide_trees+trees>, <all>) reserve S2R_CUDA_ARM_LOCAL_STEP_BYTES, 64 KB: the UR5e with the
//   Robotiq 2F-85's block, state and world block (47,936 + 6,528 + 64 B in float32; panda_pick's
//   are 35,520 B). A model whose block does not fit, and S2R_CUDA_STEP_BLOCK=global, use
//   per-world global blocks.
// - Where the world's state (and a sweep's episode record, SweepWorld) fits after the step block,
//   the kernel stages it there for the launch (StageWorldState, copied back at the end), so the
//   physics steps of a control step, and the control steps of a sweep's pass, work on the local
//   copy, and the device state is kept interleaved by world (StateView::interleaved) so that the
//   copies coalesce too; S2R_CUDA_STATE=global leaves the state world-major and in place.
// - Where the world block (the slide trees' responses and velocities, kept between steps and read
//   in every physics step) fits as well, it is staged the same way, and the device's world blocks
//   are interleaved by world (DeviceWorldWord); S2R_CUDA_STATE=global leaves them in place too.
// - The driver backs every thread an SM can hold with the whole frame: 33 KB x 2,048 x 132 SMs,
//   about 8.9 GB on an H100 or H200, for the bench scenes; 80 KB (64 + the step's own 14.6 KB),
//   21.7 GB, while an <all> scene runs.
#ifndef S2R_CUDA_LOCAL_STEP_BYTES
#define S2R_CUDA_LOCAL_STEP_BYTES 32768
#endif
#ifndef S2R_CUDA_ARM_LOCAL_STEP_BYTES
#define S2R_CUDA_ARM_LOCAL_STEP_BYTES 65536
#endif
template <unsigned kFeatures>
constexpr int64_t LocalStepBytes() {
  return kFeatures == kStepVariants[0] ? S2R_CUDA_LOCAL_STEP_BYTES : S2R_CUDA_ARM_LOCAL_STEP_BYTES;
}

template <int64_t kBytes>
struct LocalStepBlock {
  alignas(kWorkspaceAlign) char bytes[kBytes];
  S2R_HDI char* get(const DeviceWorkspaces& dw, int world) {
    if (!dw.step_in_local) return dw.step_blocks + static_cast<int64_t>(world) * dw.layout.step_bytes;
#if defined(S2R_CUDA_EMULATION)
    memset(bytes, 0xFF, sizeof(bytes));  // as device memory starts (cuda/emulation.h): nothing carries
#endif
    return bytes;
  }
  // the places of what is staged after the step block: the world block (where it is staged), the
  // state, and the sweep record (the backend checked that they fit)
  S2R_HDI char* world(const DeviceWorkspaces& dw) { return bytes + AlignUp(dw.layout.step_bytes, kWorkspaceAlign); }
  S2R_HDI char* state(const DeviceWorkspaces& dw) { return world(dw) + (dw.world_in_local ? dw.layout.world_bytes : 0); }
  S2R_HDI SweepWorld* record(const DeviceWorkspaces& dw) {
    return reinterpret_cast<SweepWorld*>(state(dw) + dw.state_bytes);
  }
};
#if S2R_CUDA_LOCAL_STEP_BYTES == 0 || S2R_CUDA_ARM_LOCAL_STEP_BYTES == 0  // a variant without a block
template <>
struct LocalStepBlock<0> {
  S2R_HDI char* get(const DeviceWorkspaces& dw, int world) {
    return dw.step_blocks + static_cast<int64_t>(world) * dw.layout.step_bytes;
  }
  // no state() or record(): a variant without a local block never stages (the kernels' if constexpr)
};
#endif

// World w's world block for a launch (kernels/workspace.h, lifetime World): where the kernel stages
// it (world_in_local), copied from the interleaved device blocks into `local` and returned, else
// the world-major block in place.
S2R_HDI char* StageWorldBlock(const DeviceWorkspaces& dw, int world, char* local) {
  if (!dw.world_in_local) return reinterpret_cast<char*>(DeviceWorldWord(dw, world, 0));
#if defined(S2R_CUDA_EMULATION)
  cuda_emulation::EmulationCounts().world_block_stagings.fetch_add(1, std::memory_order_relaxed);
#endif
  CopyStateWords(DeviceWorldWord(dw, world, 0), local, dw.layout.world_bytes, dw.nworld);
  return local;
}
// Copies a staged world block back, only where the launch built something in it, as its validity
// word says (kernels/solver_reduced.h: the base block, or more response columns). Nothing else in
// the block carries from one step to the next (q0 and q-dot are set from the state in every step),
// and within a launch the word only gains bits, or is dropped by a sweep event and rebuilt, which
// sets kReducedEdited (cleared here on the way back, so the device's words never hold it). So a
// block whose word did not change is the one in device memory, and the steady state writes nothing.
S2R_HDI void UnstageWorldBlock(const DeviceWorkspaces& dw, int world, char* staged) {
  if (!dw.world_in_local) return;
  const int64_t valid = dw.layout.offset[static_cast<int>(WorkspaceArray::reduced_valid)];
  uint32_t& word = *reinterpret_cast<uint32_t*>(staged + valid);
  if (word == *DeviceWorldWord(dw, world, valid)) return;
#if defined(S2R_CUDA_EMULATION)
  cuda_emulation::EmulationCounts().world_block_writebacks.fetch_add(1, std::memory_order_relaxed);
  if (word & kReducedEdited) {
    cuda_emulation::EmulationCounts().world_block_edited_writebacks.fetch_add(1, std::memory_order_relaxed);
  }
#endif
  word &= ~kReducedEdited;
  CopyStateWords(staged, DeviceWorldWord(dw, world, 0), dw.layout.world_bytes, 1, dw.nworld);
}

// A reset writes the device state in its layout: in place where it is world-major, through a
// staged copy in local memory where it is interleaved (StateView::interleaved; the state then fits
// the model's variant's block, kBytes, the backend checked; never where the variant has none). The
// reset kernels are compiled per block size (ResetWorldsKernel<32768>, <65536>), so a scene's
// run reserves no more local memory than its step kernels do.
template <int64_t kBytes>
S2R_HDI void ResetDeviceWorld(const ModelView& m, const StateView& s, int world) {
  if constexpr (kBytes > 0) {
    if (s.interleaved) {
      LocalStepBlock<kBytes> local;
      const StateView staged = StageWorldState(s, world, local.bytes);
      ResetWorld(m, staged, world);
      UnstageWorldState(staged, s);
      return;
    }
  }
  ResetWorld(m, s, world);
}

template <int64_t kBytes>
__global__ void ResetWorldsKernel(const __grid_constant__ ModelView m, const __grid_constant__ StateView s) {
  int world = blockIdx.x * blockDim.x + threadIdx.x;
  if (world >= s.nworld) return;
  ResetDeviceWorld<kBytes>(m, s, world);
}

template <int64_t kBytes>
__global__ void ResetWorldListKernel(const __grid_constant__ ModelView m, const __grid_constant__ StateView s, DeviceWorkspaces dw, const int32_t* worlds,
                                     int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  int world = worlds[i];
  ResetDeviceWorld<kBytes>(m, s, world);
  *DeviceWorldWord(dw, world, dw.layout.offset[static_cast<int>(WorkspaceArray::reduced_valid)]) = 0u;
}

// One kernel per step variant (kernels/step_features.h): a scene runs the smallest one that holds
// what it contains, so its registers and stack frame are not those of the deepest path any scene
// could take.
template <unsigned kFeatures>
__global__ void __launch_bounds__(kThreadsPerBlock, StepMinBlocks<kFeatures>()) ControlStepKernel(const __grid_constant__ ModelView m, const __grid_constant__ StateView s, DeviceWorkspaces dw,
                                  const Real* actions) {
  int world = blockIdx.x * blockDim.x + threadIdx.x;
  if (world >= s.nworld) return;
  LocalStepBlock<LocalStepBytes<kFeatures>()> local;
  char* step_block = local.get(dw, world);  // first: the emulation fills the block
  const Real* act = actions + static_cast<int64_t>(world) * m.nactuator;
  if constexpr (LocalStepBytes<kFeatures>() > 0) {
    // one call of the step, whichever view it gets (two would inline the step twice)
    Workspace ws = BindWorkspace(dw.layout, step_block, StageWorldBlock(dw, world, local.world(dw)));
    const StateView view = dw.state_in_local ? StageWorldState(s, world, local.state(dw)) : s;
    ControlStep<kFeatures>(m, view, world, &ws, act);
    if (dw.state_in_local) UnstageWorldState(view, s);
    UnstageWorldBlock(dw, world, local.world(dw));  // recomputed, not kept live
  } else {  // never staged: the step reads the parameter's view and the world block in place
    Workspace ws = BindWorkspace(dw.layout, step_block, reinterpret_cast<char*>(DeviceWorldWord(dw, world, 0)));
    ControlStep<kFeatures>(m, s, world, &ws, act);
  }
}

// One control step as a call the compiler keeps (ControlStepsKernel's loop): inlined into the
// loop, ptxas hoisted the step's loop-invariant loads out of it and spilled 328 B where the
// one-step kernel spills 116; as a call, 252.
#if defined(S2R_CUDA_EMULATION)
#define S2R_KEEP_CALL
#else
#define S2R_KEEP_CALL __noinline__
#endif
template <unsigned kFeatures>
__device__ S2R_KEEP_CALL void ControlStepCall(const ModelView& m, const StateView& s, int world, Workspace* ws,
                                              const Real* act) {
  ControlStep<kFeatures>(m, s, world, ws, act);
}

// `nsteps` control steps of each world in one launch, on one staging of its state and world block
// (Engine::StepMany: the actions known in advance, (nsteps, nworld, nactuator) in `actions`). Its
// own kernel, so the one-step kernel keeps its registers; compiled for the bench scenes' variant
// only (the others launch ControlStepKernel once per step, LaunchControlSteps).
template <unsigned kFeatures>
__global__ void __launch_bounds__(kThreadsPerBlock, StepMinBlocks<kFeatures>()) ControlStepsKernel(const __grid_constant__ ModelView m, const __grid_constant__ StateView s, DeviceWorkspaces dw,
                                  const Real* actions, int nsteps) {
  int world = blockIdx.x * blockDim.x + threadIdx.x;
  if (world >= s.nworld) return;
  LocalStepBlock<LocalStepBytes<kFeatures>()> local;
  char* step_block = local.get(dw, world);  // first: the emulation fills the block
  // step k's actions from k and the parameters: only k stays live across the steps
  auto act = [&](int k) { return actions + (int64_t(k) * s.nworld + world) * m.nactuator; };
  if constexpr (LocalStepBytes<kFeatures>() > 0) {
    Workspace ws = BindWorkspace(dw.layout, step_block, StageWorldBlock(dw, world, local.world(dw)));
    const StateView view = dw.state_in_local ? StageWorldState(s, world, local.state(dw)) : s;
    for (int k = 0; k < nsteps; ++k) ControlStepCall<kFeatures>(m, view, world, &ws, act(k));
    if (dw.state_in_local) UnstageWorldState(view, s);
    UnstageWorldBlock(dw, world, local.world(dw));
  } else {  // a build without the local block (S2R_CUDA_LOCAL_STEP_BYTES=0): nothing staged
    Workspace ws = BindWorkspace(dw.layout, step_block, reinterpret_cast<char*>(DeviceWorldWord(dw, world, 0)));
    for (int k = 0; k < nsteps; ++k) ControlStepCall<kFeatures>(m, s, world, &ws, act(k));
  }
}

// The sweep's physics for a kSweepNet pass: the forward pass's buffers (the policy row, inputs, the
// hidden layers', outputs: NetBufferBytes of the network, not the widest one's) in the world's step
// block, whose scratch the step has not used yet when the network runs and overwrites after (its
// lifetime is a step: kernels/workspace.h), or in the device buffers the backend gave where the
// block is smaller than they are (SweepStepArgs::net_buffers). So the kernel's frame does not hold
// them (docs/gpu.md).
template <unsigned kFeatures>
struct DeviceNetStep : SweepControlStep<kFeatures> {
  char* buffers;
  S2R_HDI char* NetBuffers(int /*w*/) const { return buffers; }
};
// the physics a `kMode` pass of world w steps with: DeviceNetStep for a network's, else the plain step
template <unsigned kFeatures, int kMode>
S2R_HDI auto SweepPhysics(const SweepStepArgs& a, int world, char* step_block) {
  if constexpr (kMode == kSweepNet) {
    DeviceNetStep<kFeatures> physics;
    physics.buffers = a.net_buffers ? a.net_buffers + int64_t(world) * a.net_buffer_bytes : step_block;
    return physics;
  } else {
    return SweepControlStep<kFeatures>();
  }
}

// One pass of a sweep's worlds (kernels/sweep_step.h, SweepWorldPass in `kMode`), the body of the
// three sweep kernels: experts, observations, labels and recording on the device. `args` lives in
// device memory (it is larger than a kernel's parameters should be).
template <unsigned kFeatures, int kMode>
__device__ __forceinline__ void SweepKernelPass(const ModelView& m, const StateView& s, const DeviceWorkspaces& dw,
                                                const SweepStepArgs* args) {
  int world = blockIdx.x * blockDim.x + threadIdx.x;
  if (world >= s.nworld) return;
  LocalStepBlock<LocalStepBytes<kFeatures>()> local;
  char* step_block = local.get(dw, world);  // first: the emulation fills the block
  const SweepStepArgs& a = *args;
  if constexpr (LocalStepBytes<kFeatures>() > 0) {
    // a world that takes no steps in this pass (neither active nor beginning) touches neither its
    // state nor its world block, so it stages nothing (both may be interleaved: not addressable
    // in place)
    const bool stage = dw.state_in_local && (a.worlds[world].active || a.worlds[world].begin);
    Workspace ws = BindWorkspace(dw.layout, step_block,
                                 stage ? StageWorldBlock(dw, world, local.world(dw))
                                       : reinterpret_cast<char*>(DeviceWorldWord(dw, world, 0)));
    const StateView view = stage ? StageWorldState(s, world, local.state(dw)) : s;
    SweepWorld* record = stage ? local.record(dw) : nullptr;
    if (stage) CopyStateWords(&a.worlds[world], record, sizeof(SweepWorld));
    SweepWorldPass<kFeatures, kMode>(a, m, view, world, &ws, SweepPhysics<kFeatures, kMode>(a, world, step_block),
                                     record);
    if (stage) {
      UnstageWorldState(view, s);
      UnstageWorldBlock(dw, world, local.world(dw));
      CopyStateWords(record, &a.worlds[world], sizeof(SweepWorld));
    }
  } else {
    Workspace ws = BindWorkspace(dw.layout, step_block, reinterpret_cast<char*>(DeviceWorldWord(dw, world, 0)));
    SweepWorldPass<kFeatures, kMode>(a, m, s, world, &ws, SweepPhysics<kFeatures, kMode>(a, world, step_block));
  }
}

// A pass of the expert's control steps (`s2r sweep`).
template <unsigned kFeatures>
__global__ void __launch_bounds__(kThreadsPerBlock, StepMinBlocks<kFeatures>()) SweepStepKernel(const __grid_constant__ ModelView m, const __grid_constant__ StateView s, DeviceWorkspaces dw, const SweepStepArgs* args) {
  SweepKernelPass<kFeatures, kSweepExpert>(m, s, dw, args);
}
// A policy process's control steps (`s2r sweep --policy`), the host asking the policy between
// launches: the observe pass once at the start (the episodes' start, events, the rows before the
// step, each world's policy inputs into a.policy_rows; no physics), then, with the policy's actions
// in a.actions, one act-and-observe pass per control step (the action row, the physics, the labels,
// then the next step's observation: one staging of the world a step). Their own kernels, so the
// expert's keeps its registers and spills.
template <unsigned kFeatures>
__global__ void __launch_bounds__(kThreadsPerBlock, StepMinBlocks<kFeatures>()) SweepObserveKernel(const __grid_constant__ ModelView m, const __grid_constant__ StateView s, DeviceWorkspaces dw, const SweepStepArgs* args) {
  SweepKernelPass<kFeatures, kSweepObserve>(m, s, dw, args);
}
template <unsigned kFeatures>
__global__ void __launch_bounds__(kThreadsPerBlock, StepMinBlocks<kFeatures>()) SweepActObserveKernel(const __grid_constant__ ModelView m, const __grid_constant__ StateView s, DeviceWorkspaces dw, const SweepStepArgs* args) {
  SweepKernelPass<kFeatures, kSweepActObserve>(m, s, dw, args);
}

// A pass of a policy network's control steps (`s2r sweep --policy-net`): the expert's pass with the
// network's forward pass (kernels/policy_net.h) for the expert's action, the weights read by every
// thread of a warp at once (one broadcast). Its own kernel, so the expert's keeps its footprint.
template <unsigned kFeatures>
__global__ void __launch_bounds__(kThreadsPerBlock, StepMinBlocks<kFeatures>()) SweepNetKernel(const __grid_constant__ ModelView m, const __grid_constant__ StateView s, DeviceWorkspaces dw, const SweepStepArgs* args) {
  SweepKernelPass<kFeatures, kSweepNet>(m, s, dw, args);
}

// The sweep's episode starts and finished episodes travel in one packed copy each way, not one
// copy per world and array: a slot per listed world, `slot_bytes` apart, holding the world's
// SweepWorld (and, in a start, its task parameters; in a finish, its rows: state, obs, action,
// and where recorded the expert's labels and a policy's other inputs, horizon rows each). A block
// per listed world copies its slot with all its threads.
struct SweepSlotLayout {
  int64_t slot_bytes;    // bytes per slot (16-byte multiple)
  int64_t params_off;    // start slots: the task parameters (kTaskMaxParams Reals)
  // finish slots: the rows (expert_off: -1 without labels, inputs_off: -1 without inputs)
  int64_t state_off, obs_off, action_off, expert_off, inputs_off;
};

__global__ void SweepScatterStartsKernel(const SweepStepArgs* args, const int32_t* worlds, int count,
                                         const char* slots, SweepSlotLayout l) {
  const int i = blockIdx.x;
  if (i >= count) return;
  const int w = worlds[i];
  const char* slot = slots + int64_t(i) * l.slot_bytes;
  const int words = int(sizeof(SweepWorld) / sizeof(int32_t));
  const int32_t* src = reinterpret_cast<const int32_t*>(slot);
  int32_t* dst = reinterpret_cast<int32_t*>(args->worlds + w);
  for (int k = threadIdx.x; k < words; k += blockDim.x) dst[k] = src[k];
  const Real* params = reinterpret_cast<const Real*>(slot + l.params_off);
  for (int k = threadIdx.x; k < kTaskMaxParams; k += blockDim.x) args->task_params[int64_t(w) * kTaskMaxParams + k] = params[k];
}

__global__ void SweepGatherFinishedKernel(const SweepStepArgs* args, const int32_t* worlds, int count, char* slots,
                                          SweepSlotLayout l) {
  const int i = blockIdx.x;
  if (i >= count) return;
  const SweepStepArgs& a = *args;
  const int w = worlds[i];
  char* slot = slots + int64_t(i) * l.slot_bytes;
  const int words = int(sizeof(SweepWorld) / sizeof(int32_t));
  const int32_t* src = reinterpret_cast<const int32_t*>(a.worlds + w);
  int32_t* dst = reinterpret_cast<int32_t*>(slot);
  for (int k = threadIdx.x; k < words; k += blockDim.x) dst[k] = src[k];
  const int64_t len = a.worlds[w].task.steps;  // rows recorded
  const int64_t row0 = int64_t(w) * a.horizon;
  auto copy = [&](const Real* from, int64_t off, int64_t row) {
    Real* to = reinterpret_cast<Real*>(slot + off);
    for (int64_t k = threadIdx.x; k < len * row; k += blockDim.x) to[k] = from[row0 * row + k];
  };
  copy(a.state_rows, l.state_off, a.state_row());
  copy(a.obs_rows, l.obs_off, kObsSize);
  copy(a.action_rows, l.action_off, a.nactuator);
  if (a.expert_rows) copy(a.expert_rows, l.expert_off, a.nactuator);
  if (a.input_rows) copy(a.input_rows, l.inputs_off, a.input_row);
}

int Blocks(int n) { return (n + kThreadsPerBlock - 1) / kThreadsPerBlock; }

// The error check after a launch of a kernel whose frame holds `variant`'s local step block. The
// driver backs every thread the GPU can hold with the kernel's whole frame when it launches, so a
// launch refused for memory is most likely that reservation (another process holding the GPU's
// memory, or a smaller GPU): say so, with the figures, and how to shrink it.
void CheckFramedLaunch(const char* kernel, int variant) {
  const cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return;
  std::string what = std::string("CUDA error launching ") + kernel + "<" + StepVariantName(variant) +
                     ">: " + cudaGetErrorString(err);
  int64_t block = 0;
  WithStepVariant(variant, [&](auto features) { block = LocalStepBytes<features.value>(); });
  if ((err == cudaErrorMemoryAllocation || err == cudaErrorLaunchOutOfResources) && block > 0) {
    int device = 0, sms = 0, threads = 0;
    size_t free_bytes = 0, total_bytes = 0;
    const bool known = cudaGetDevice(&device) == cudaSuccess &&
                       cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess &&
                       cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, device) == cudaSuccess &&
                       cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess;
    const char* knob = variant == 0 ? "S2R_CUDA_LOCAL_STEP_BYTES" : "S2R_CUDA_ARM_LOCAL_STEP_BYTES";
    char figures[320] = "";
    if (known) {
      std::snprintf(figures, sizeof(figures), ": %lld B x %d threads x %d SMs = %.1f GB for the blocks alone, with %.1f of %.1f GB free now",
                    static_cast<long long>(block), threads, sms, double(block) * threads * sms / 1e9, free_bytes / 1e9,
                    total_bytes / 1e9);
    }
    what += ". Its stack frame holds a " + std::to_string(block) + " B step block per thread (" + knob +
            ": the step's scratch in local memory), and the driver backs every thread the GPU can hold with the "
            "whole frame" + figures + ". Free the GPU memory other processes hold, or rebuild with -D" + knob +
            "=0 (per-world step blocks in device memory, which need no reservation but do not coalesce) or a "
            "smaller size (docs/gpu.md, *The step block and the state*)";
  }
  throw std::runtime_error(what);
}

// `variant` indexes kStepVariants: the reset stages through a block of that variant's size
void LaunchResetWorlds(const ModelView& m, const StateView& s, int variant, void* stream) {
  WithStepVariant(variant, [&](auto features) {
    S2R_LAUNCH(ResetWorldsKernel<LocalStepBytes<features.value>()>, Blocks(s.nworld), kThreadsPerBlock,
               static_cast<cudaStream_t>(stream))(m, s);
  });
  CheckFramedLaunch("ResetWorldsKernel", variant);
}

// resets the `count` worlds listed in the device array `worlds` and clears their world blocks'
// validity words
void LaunchResetWorldList(const ModelView& m, const StateView& s, const DeviceWorkspaces& ws, const int32_t* worlds,
                          int count, int variant, void* stream) {
  if (count <= 0) return;
  WithStepVariant(variant, [&](auto features) {
    S2R_LAUNCH(ResetWorldListKernel<LocalStepBytes<features.value>()>, Blocks(count), kThreadsPerBlock,
               static_cast<cudaStream_t>(stream))(m, s, ws, worlds, count);
  });
  CheckFramedLaunch("ResetWorldListKernel", variant);
}

// `variant` indexes kStepVariants (kernels/step_features.h): the step compiled for what the model
// contains
void LaunchControlStep(const ModelView& m, const StateView& s, const DeviceWorkspaces& ws,
                       const Real* actions, int variant, void* stream) {
  WithStepVariant(variant, [&](auto features) {
    S2R_LAUNCH(ControlStepKernel<features.value>, Blocks(s.nworld), kThreadsPerBlock,
               static_cast<cudaStream_t>(stream))(m, s, ws, actions);
  });
  CheckFramedLaunch("ControlStepKernel", variant);
}

// `nsteps` control steps, `actions` (nsteps, nworld, nactuator) on the device: one launch of
// ControlStepsKernel for the bench scenes' variant, else one ControlStepKernel launch per step
void LaunchControlSteps(const ModelView& m, const StateView& s, const DeviceWorkspaces& ws, const Real* actions,
                        int nsteps, int variant, void* stream) {
  if (nsteps > 1 && variant == 0) {
    S2R_LAUNCH(ControlStepsKernel<kStepVariants[0]>, Blocks(s.nworld), kThreadsPerBlock,
               static_cast<cudaStream_t>(stream))(m, s, ws, actions, nsteps);
    CheckFramedLaunch("ControlStepsKernel", variant);
    return;
  }
  for (int k = 0; k < nsteps; ++k) {
    LaunchControlStep(m, s, ws, actions + int64_t(k) * s.nworld * m.nactuator, variant, stream);
  }
}

class NvtxRange {
 public:
  explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
  ~NvtxRange() { nvtxRangePop(); }
};

class CudaBackend : public Backend {
 public:
  CudaBackend(const StateView& host, int nworld) : host_(host), nworld_(nworld) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      throw std::runtime_error("CUDA backend: no CUDA device is present");
    }
    S2R_CUDA_CHECK(cudaStreamCreate(&stream_));
  }
  ~CudaBackend() override {
    if (stream_) {
      cudaStreamSynchronize(stream_);  // queued steps may still read the pinned actions
      cudaStreamDestroy(stream_);
    }
    for (int i = 0; i < kActionSlots; ++i) {
      if (actions_uploaded_[i]) cudaEventDestroy(actions_uploaded_[i]);
      if (pinned_actions_[i]) cudaFreeHost(pinned_actions_[i]);
    }
  }

  void SetModel(const ModelView& v, FieldId changed, const int32_t* worlds, int nworlds) override {
    NvtxRange range("s2r.upload_model");
    const bool first = !allocated_;
    model_ = v;
    variant_ = StepVariantFor(StepFeaturesOf(v));  // from the host view, before it points to the device
    // topology: uploaded once
    ForEachTopology(model_, [&](FieldId id, auto*& ptr) {
      using T = std::remove_const_t<std::remove_pointer_t<std::remove_reference_t<decltype(ptr)>>>;
      DeviceBuffer& buf = model_buffers_[static_cast<int>(id)];
      const FieldInfo& f = FieldInfoOf(id);
      size_t count = ptr == nullptr ? 0 : size_t(EntityCount(v, f.entity)) * f.per;
      if (first) buf.Upload(ptr, count * sizeof(T), stream_);
      ptr = count > 0 ? buf.get<T>() : nullptr;
    });
    // per-world parameters: uploaded when they change (stride 0: one set, else nworld sets)
    ForEachParam(model_, [&](FieldId id, auto& field) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(field.data)>>;
      DeviceBuffer& buf = model_buffers_[static_cast<int>(id)];
      const FieldInfo& f = FieldInfoOf(id);
      size_t per_world = size_t(EntityCount(v, f.entity)) * f.per;
      size_t count = field.world_stride == 0 ? per_world : size_t(field.world_stride) * nworld_;
      if (first || changed == FieldId::kCount || changed == id) buf.Upload(field.data, count * sizeof(T), stream_);
      field.data = buf.get<T>();
    });
    if (first) AllocateState(ComputeWorkspaceLayout(v));  // the layout reads model arrays: the host view's
    if (worlds == nullptr || nworlds > 64) {
      InvalidateWorldBlocks();
    } else {
      const int64_t offset = workspaces_.layout.offset[static_cast<int>(WorkspaceArray::reduced_valid)];
      for (int i = 0; i < nworlds; ++i) {
        S2R_CUDA_CHECK(cudaMemsetAsync(DeviceWorldWord(workspaces_, worlds[i], offset), 0, sizeof(uint32_t), stream_));
      }
    }
    S2R_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void Reset() override {
    NvtxRange range("s2r.reset");
    InvalidateWorldBlocks();
    LaunchResetWorlds(model_, device_, variant_, stream_);
    S2R_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void ResetWorlds(const int32_t* worlds, int count) override {
    NvtxRange range("s2r.reset_worlds");
    if (count <= 0) return;
    world_list_.Upload(worlds, sizeof(int32_t) * size_t(count), stream_);
    LaunchResetWorldList(model_, device_, workspaces_, world_list_.get<int32_t>(), count, variant_, stream_);
    S2R_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // Does not wait for the device: the step is queued behind the ones before it, and the host goes
  // on (to compute the next actions) while it runs. The actions go through one of kActionSlots
  // pinned buffers in turn; a buffer is refilled only after the upload that last read it has run
  // (its event), so the host runs at most kActionSlots steps ahead. Everything that reads results
  // (Download) or changes what queued steps read (Upload, SetModel, resets) waits for the stream.
  // `nsteps` steps (Engine::StepMany) are one launch: their actions go up together.
  void Step(const Real* actions, int nsteps) override {
    NvtxRange range("s2r.control_step");
    ReserveActionSteps(nsteps);
    const int slot = action_slot_;
    action_slot_ = (action_slot_ + 1) % kActionSlots;
    S2R_CUDA_CHECK(cudaEventSynchronize(actions_uploaded_[slot]));
    Real* pinned = pinned_actions_[slot];
    const size_t bytes = sizeof(Real) * size_t(nworld_) * size_t(model_.nactuator) * size_t(nsteps);
    if (actions) {
      std::memcpy(pinned, actions, bytes);
    } else {
      std::memset(pinned, 0, bytes);  // null: zeros for every step
    }
    if (bytes > 0) {
      S2R_CUDA_CHECK(cudaMemcpyAsync(actions_.get<void>(), pinned, bytes, cudaMemcpyHostToDevice, stream_));
    }
    S2R_CUDA_CHECK(cudaEventRecord(actions_uploaded_[slot], stream_));
    LaunchControlSteps(model_, device_, workspaces_, actions_.get<Real>(), nsteps, variant_, stream_);
  }
  void Synchronize() override { S2R_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  void Download(const StateView& h) override {
    NvtxRange range("s2r.download");
    Copy(h, /*to_host=*/true);
  }
  void Upload(const StateView& h, const int32_t*, int) override {
    InvalidateWorldBlocks();  // the whole state is copied; every world's block is rebuilt
    Copy(h, /*to_host=*/false);
  }
  int threads() const override { return 0; }
  int64_t ScratchBytesPerWorld() const override { return workspaces_.layout.step_bytes + workspaces_.layout.world_bytes; }
  // a world's step block (its scratch for one step: kernels/workspace.h), in local or global memory
  int64_t StepBlockBytes() const { return workspaces_.layout.step_bytes; }
  const char* StepBlockMemory() const override {
    if (workspaces_.world_in_local) return "local+state+world";
    return workspaces_.state_in_local ? "local+state" : workspaces_.step_in_local ? "local" : "global";
  }
  std::unique_ptr<SweepBuffers> MakeSweepBuffers(const SweepStepArgs& shape) override;

  void LaunchSweepStep(const SweepStepArgs* device_args, int mode) {
    NvtxRange range(mode == kSweepObserve ? "s2r.sweep_observe"
                    : mode == kSweepActObserve ? "s2r.sweep_act_observe"
                    : mode == kSweepNet   ? "s2r.sweep_net"
                                          : "s2r.sweep_step");
    WithStepVariant(variant_, [&](auto features) {
      constexpr unsigned f = features.value;
      const int blocks = Blocks(nworld_);
      if (mode == kSweepObserve) {
        S2R_LAUNCH(SweepObserveKernel<f>, blocks, kThreadsPerBlock, stream_)(model_, device_, workspaces_, device_args);
      } else if (mode == kSweepActObserve) {
        S2R_LAUNCH(SweepActObserveKernel<f>, blocks, kThreadsPerBlock, stream_)(model_, device_, workspaces_, device_args);
      } else if (mode == kSweepNet) {
        S2R_LAUNCH(SweepNetKernel<f>, blocks, kThreadsPerBlock, stream_)(model_, device_, workspaces_, device_args);
      } else {
        S2R_LAUNCH(SweepStepKernel<f>, blocks, kThreadsPerBlock, stream_)(model_, device_, workspaces_, device_args);
      }
    });
    CheckFramedLaunch(mode == kSweepObserve ? "SweepObserveKernel"
                      : mode == kSweepActObserve ? "SweepActObserveKernel"
                      : mode == kSweepNet   ? "SweepNetKernel"
                                            : "SweepStepKernel",
                      variant_);
  }
  cudaStream_t stream() const { return stream_; }
  int nworld() const { return nworld_; }

 private:
  struct StateArray {
    DeviceBuffer buf;
    size_t bytes;
  };

  // every world's slide-tree block is rebuilt at its next step (parameters or state changed):
  // clear the validity word in each world block
  void InvalidateWorldBlocks() {
    const WorkspaceLayout& l = workspaces_.layout;
    if (world_blocks_.get<void>() == nullptr) return;
    int64_t offset = l.offset[static_cast<int>(WorkspaceArray::reduced_valid)];
    if (workspaces_.world_in_local) {  // interleaved: the worlds' validity words are one row
      S2R_CUDA_CHECK(cudaMemsetAsync(DeviceWorldWord(workspaces_, 0, offset), 0, sizeof(uint32_t) * nworld_, stream_));
      return;
    }
    S2R_CUDA_CHECK(cudaMemset2DAsync(world_blocks_.get<char>() + offset, l.world_bytes, 0, sizeof(uint32_t), nworld_,
                                     stream_));
  }

  void AllocateState(const WorkspaceLayout& layout) {
    device_ = host_;
    ForEachStateArray(device_, [&](const char*, auto*& ptr, int64_t per_world, bool) {
      using T = std::remove_pointer_t<std::remove_reference_t<decltype(ptr)>>;
      StateArray a;
      a.bytes = size_t(nworld_) * size_t(per_world) * sizeof(T);
      a.buf.Resize(a.bytes);
      ptr = a.buf.get<T>();
      state_arrays_.push_back(std::move(a));
    });
    size_t nw = nworld_;
    const bool local = StepBlockInLocalMemory(layout);
    const bool state_local = local && StateInLocalMemory(layout, 0);
    const bool world_local = state_local && StateInLocalMemory(layout, layout.world_bytes);
    step_blocks_.Resize(local ? 0 : size_t(layout.step_bytes) * nw);
    world_blocks_.Resize(size_t(layout.world_bytes) * nw);
    device_.interleaved = state_local ? 1 : 0;  // every kernel that touches the state stages it
    workspaces_ = DeviceWorkspaces{step_blocks_.get<char>(),
                                   world_blocks_.get<char>(),
                                   layout,
                                   local ? 1 : 0,
                                   state_local ? 1 : 0,
                                   world_local ? 1 : 0,
                                   static_cast<int32_t>(WorldStateBytes(StateDims(model_, nworld_))),
                                   nworld_};
    for (int i = 0; i < kActionSlots; ++i) {
      S2R_CUDA_CHECK(cudaEventCreateWithFlags(&actions_uploaded_[i], cudaEventDisableTiming));
    }
    ReserveActionSteps(1);
    allocated_ = true;
  }

  // room in the pinned action buffers and the device's for `steps` steps' actions; growing them
  // waits for the queued steps, which may still read the old ones
  void ReserveActionSteps(int steps) {
    if (steps <= action_steps_) return;
    S2R_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const size_t bytes = sizeof(Real) * size_t(nworld_) * (model_.nactuator > 0 ? model_.nactuator : 1) * size_t(steps);
    for (int i = 0; i < kActionSlots; ++i) {
      if (pinned_actions_[i]) S2R_CUDA_CHECK(cudaFreeHost(pinned_actions_[i]));
      pinned_actions_[i] = nullptr;
      S2R_CUDA_CHECK(cudaMallocHost(&pinned_actions_[i], bytes));
    }
    actions_.Resize(bytes);
    action_steps_ = steps;
  }

  // whether the steps keep the step block in local memory (LocalStepBlock): the variant has room
  // for the layout's block, and S2R_CUDA_STEP_BLOCK is not "global" ("local" or unset: where it
  // fits; anything else is an error)
  bool StepBlockInLocalMemory(const WorkspaceLayout& layout) const {
    return PlaceChoice("S2R_CUDA_STEP_BLOCK") && layout.step_bytes <= LocalRoom();
  }
  // whether they also stage a world's state there, after the step block, with room for a sweep's
  // episode record after it, and `world_bytes` more (0, or the world block's, which goes before the
  // state: staged where that fits too): they fit, and S2R_CUDA_STATE is not "global" (likewise)
  bool StateInLocalMemory(const WorkspaceLayout& layout, int64_t world_bytes) const {
    const int64_t state = WorldStateBytes(StateDims(model_, nworld_)) + int64_t(sizeof(SweepWorld));
    return PlaceChoice("S2R_CUDA_STATE") &&
           AlignUp(layout.step_bytes, kWorkspaceAlign) + world_bytes + state <= LocalRoom();
  }
  // false when the environment variable says "global"; "local" or unset: true
  static bool PlaceChoice(const char* variable) {
    const char* env = std::getenv(variable);
    const std::string choice = env ? env : "";
    if (!choice.empty() && choice != "local" && choice != "global") {
      throw std::runtime_error(std::string(variable) + "=" + choice + ": expected local or global");
    }
    return choice != "global";
  }
  // the local memory the model's step variant reserves (LocalStepBlock)
  int64_t LocalRoom() const {
    int64_t room = 0;
    WithStepVariant(variant_, [&](auto features) { room = LocalStepBytes<features.value>(); });
    return room;
  }

  // every state array, in S2R_STATE_ARRAYS order, to or from the host copy (world-major); an
  // interleaved device state (StateView::interleaved) is transposed on the host on the way
  void Copy(const StateView& h, bool to_host) {
    StateView host = h;
    size_t i = 0;
    const bool transpose = device_.interleaved != 0;
    std::vector<uint32_t> words;
    ForEachStateArray(host, [&](const char*, auto* ptr, int64_t per_world, bool) {
      StateArray& a = state_arrays_[i++];
      if (!transpose) {
        if (to_host) a.buf.Download(ptr, a.bytes, stream_);
        else S2R_CUDA_CHECK(cudaMemcpyAsync(a.buf.get<void>(), ptr, a.bytes, cudaMemcpyHostToDevice, stream_));
        return;
      }
      // word k of world w: host w * n + k, device k * nworld + w
      const int64_t n = per_world * int64_t(sizeof(*ptr)) / 4;
      words.resize(a.bytes / 4);
      uint32_t* h_words = reinterpret_cast<uint32_t*>(ptr);
      if (to_host) {
        a.buf.Download(words.data(), a.bytes, stream_);
        S2R_CUDA_CHECK(cudaStreamSynchronize(stream_));  // pageable: the copy has landed
        TransposeWorldWords(words.data(), h_words, nworld_, n, /*to_interleaved=*/false);
      } else {
        TransposeWorldWords(h_words, words.data(), nworld_, n, /*to_interleaved=*/true);
        S2R_CUDA_CHECK(cudaMemcpyAsync(a.buf.get<void>(), words.data(), a.bytes, cudaMemcpyHostToDevice, stream_));
        S2R_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before `words` is refilled
      }
    });
    S2R_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  StateView host_;
  StateView device_;
  int nworld_;
  cudaStream_t stream_ = nullptr;
  ModelView model_;
  int variant_ = kStepVariantCount - 1;  // index into kStepVariants
  DeviceBuffer model_buffers_[kNumModelFields];  // by FieldId
  std::vector<StateArray> state_arrays_;        // in S2R_STATE_ARRAYS order
  bool allocated_ = false;
  DeviceBuffer step_blocks_, world_blocks_, actions_, world_list_;
  DeviceWorkspaces workspaces_{};
  static constexpr int kActionSlots = 2;  // Step's pinned action buffers, used in turn
  Real* pinned_actions_[kActionSlots] = {};
  cudaEvent_t actions_uploaded_[kActionSlots] = {};  // recorded after each buffer's last upload
  int action_slot_ = 0;
  int action_steps_ = 0;  // the steps of actions the buffers above and actions_ hold
};

// The sweep's buffers on the device. Host mirrors: the episode entries and task parameters the
// host writes for starting worlds, and the `ended` flags (copied out after each step, nworld
// int32). Starts go in and finished episodes come out through pinned staging, one packed copy and
// one kernel each way per control step (SweepScatterStartsKernel, SweepGatherFinishedKernel); the
// finished episodes' copy runs on its own stream, beside the next step's kernel.
class CudaSweepBuffers : public SweepBuffers {
 public:
  CudaSweepBuffers(CudaBackend* backend, const SweepStepArgs& shape) : backend_(backend) {
    const size_t nw = static_cast<size_t>(backend->nworld());
    const size_t rows = nw * static_cast<size_t>(shape.horizon);
    host_ = shape;
    worlds_.assign(nw, SweepWorld{});
    for (SweepWorld& w : worlds_) w.episode = -1;
    task_params_.assign(nw * kTaskMaxParams, Real(0));
    // `ended` and `stepped` in one array of 2 nworld, copied out together after each pass
    S2R_CUDA_CHECK(cudaMallocHost(&ended_, 2 * nw * sizeof(int32_t)));
    std::memset(ended_, 0, 2 * nw * sizeof(int32_t));
    host_.worlds = worlds_.data();
    host_.task_params = task_params_.data();
    host_.ended = ended_;
    host_.stepped = ended_ + nw;
    host_.actions = host_.state_rows = host_.obs_rows = host_.action_rows = host_.expert_rows = host_.input_rows =
        nullptr;
    // slot layouts
    auto up16 = [](int64_t b) { return (b + 15) / 16 * 16; };
    const int64_t H = shape.horizon;
    start_.params_off = up16(sizeof(SweepWorld));
    start_.slot_bytes = up16(start_.params_off + int64_t(kTaskMaxParams) * sizeof(Real));
    finish_.state_off = up16(sizeof(SweepWorld));
    finish_.obs_off = up16(finish_.state_off + H * shape.state_row() * int64_t(sizeof(Real)));
    finish_.action_off = up16(finish_.obs_off + H * kObsSize * int64_t(sizeof(Real)));
    const int64_t action_end = finish_.action_off + H * shape.nactuator * int64_t(sizeof(Real));
    finish_.expert_off = shape.expert_labels ? up16(action_end) : -1;
    const int64_t expert_end =
        shape.expert_labels ? finish_.expert_off + H * shape.nactuator * int64_t(sizeof(Real)) : action_end;
    finish_.inputs_off = shape.input_row > 0 ? up16(expert_end) : -1;
    finish_.slot_bytes =
        up16(shape.input_row > 0 ? finish_.inputs_off + H * shape.input_row * int64_t(sizeof(Real)) : expert_end);
    // the device copies
    cudaStream_t st = backend->stream();
    SweepStepArgs d = shape;
    d_worlds_.Upload(worlds_.data(), nw * sizeof(SweepWorld), st);
    d_task_params_.Upload(task_params_.data(), task_params_.size() * sizeof(Real), st);
    d_actions_.Resize(nw * static_cast<size_t>(shape.action_stride) * sizeof(Real));
    S2R_CUDA_CHECK(cudaMemsetAsync(d_actions_.get<void>(), 0, d_actions_.bytes(), st));
    d_state_rows_.Resize(std::max<size_t>(rows * static_cast<size_t>(shape.state_row()) * sizeof(Real), 1));
    d_obs_rows_.Resize(rows * kObsSize * sizeof(Real));
    d_action_rows_.Resize(std::max<size_t>(rows * static_cast<size_t>(shape.nactuator) * sizeof(Real), 1));
    if (shape.action_noise.active) {  // each world's action noise of its last step
      d_noise_state_.Resize(nw * kTaskMaxActuators * sizeof(Real));
      S2R_CUDA_CHECK(cudaMemsetAsync(d_noise_state_.get<void>(), 0, d_noise_state_.bytes(), st));
    }
    if (shape.expert_labels) {  // the expert's labels of a policy's steps, or of its own under noise
      d_expert_rows_.Resize(std::max<size_t>(rows * static_cast<size_t>(shape.nactuator) * sizeof(Real), 1));
    }
    if (shape.input_row > 0) d_input_rows_.Resize(rows * static_cast<size_t>(shape.input_row) * sizeof(Real));
    d_ended_.Upload(ended_, 2 * nw * sizeof(int32_t), st);
    d_list_.Resize(nw * sizeof(int32_t));
    d.worlds = d_worlds_.get<SweepWorld>();
    d.task_params = d_task_params_.get<Real>();
    d.actions = d_actions_.get<Real>();
    d.state_rows = d_state_rows_.get<Real>();
    d.obs_rows = d_obs_rows_.get<Real>();
    d.action_rows = d_action_rows_.get<Real>();
    d.expert_rows = shape.expert_labels ? d_expert_rows_.get<Real>() : nullptr;
    d.input_rows = shape.input_row > 0 ? d_input_rows_.get<Real>() : nullptr;
    d.noise_state = shape.action_noise.active ? d_noise_state_.get<Real>() : nullptr;
    d.ended = d_ended_.get<int32_t>();
    d.stepped = d_ended_.get<int32_t>() + nw;
    if (shape.net.nlayer > 0) {  // a policy network's weights (kernels/policy_net.h), read-only
      d_net_.Upload(shape.net.params, size_t(shape.net.nparams) * sizeof(float), st);
      d.net.params = d_net_.get<float>();
      // the forward pass's buffers: in each world's step block (DeviceNetStep), or where that is
      // smaller, a block per world of their own
      // (S2R_CUDA_NET_BUFFERS=own: always their own, for testing; "step" or unset: the default)
      d.net_buffer_bytes = NetBufferBytes(shape.net);
      const char* env = std::getenv("S2R_CUDA_NET_BUFFERS");
      const std::string place = env ? env : "";
      if (!place.empty() && place != "step" && place != "own") {
        throw std::runtime_error("S2R_CUDA_NET_BUFFERS=" + place + ": expected step or own");
      }
      if (place == "own" || d.net_buffer_bytes > backend->StepBlockBytes()) {
        d_net_buffers_.Resize(nw * size_t(d.net_buffer_bytes));
        d.net_buffers = d_net_buffers_.get<char>();
      }
    }
    device_args_ = d;
    d_args_.Upload(&d, sizeof(d), st);
    S2R_CUDA_CHECK(cudaStreamCreate(&copy_stream_));
    S2R_CUDA_CHECK(cudaEventCreateWithFlags(&gathered_, cudaEventDisableTiming));
    S2R_CUDA_CHECK(cudaEventCreateWithFlags(&copied_, cudaEventDisableTiming));
    S2R_CUDA_CHECK(cudaStreamSynchronize(st));
  }
  ~CudaSweepBuffers() override {
    if (copy_stream_) cudaStreamSynchronize(copy_stream_);
    if (gathered_) cudaEventDestroy(gathered_);
    if (copied_) cudaEventDestroy(copied_);
    if (copy_stream_) cudaStreamDestroy(copy_stream_);
    if (ended_) cudaFreeHost(ended_);
    if (policy_rows_) cudaFreeHost(policy_rows_);
    if (actions_) cudaFreeHost(actions_);
  }

  void Begin(const int32_t* worlds, int count) override {
    if (count <= 0) return;
    NvtxRange range("s2r.sweep_begin");
    cudaStream_t st = backend_->stream();
    starts_.Reserve(size_t(count) * size_t(start_.slot_bytes), backend_->nworld());
    char* base = static_cast<char*>(starts_.slots);
    for (int i = 0; i < count; ++i) {
      const int w = worlds[i];
      starts_.worlds[i] = w;
      std::memcpy(base + i * start_.slot_bytes, &worlds_[w], sizeof(SweepWorld));
      std::memcpy(base + i * start_.slot_bytes + start_.params_off, task_params_.data() + size_t(w) * kTaskMaxParams,
                  kTaskMaxParams * sizeof(Real));
    }
    S2R_CUDA_CHECK(
        cudaMemcpyAsync(d_list_.get<void>(), starts_.worlds, count * sizeof(int32_t), cudaMemcpyHostToDevice, st));
    d_staging_.Resize(std::max(d_staging_.bytes(), size_t(count) * size_t(start_.slot_bytes)));
    S2R_CUDA_CHECK(cudaMemcpyAsync(d_staging_.get<void>(), starts_.slots, size_t(count) * start_.slot_bytes,
                                   cudaMemcpyHostToDevice, st));
    S2R_LAUNCH(SweepScatterStartsKernel, count, 64, st)(d_args_.get<SweepStepArgs>(), d_list_.get<int32_t>(), count,
                                                   d_staging_.get<char>(), start_);
    S2R_CUDA_CHECK(cudaGetLastError());
    S2R_CUDA_CHECK(cudaStreamSynchronize(st));  // the staging is reused by the next call
  }

  // the expert's pass, or a policy network's (host_.net)
  void Step(const std::function<void()>& overlap) override { Pass(host_.net.nlayer > 0 ? kSweepNet : kSweepExpert, overlap); }

  // A policy's control steps (SweepBuffers::Observe, ActAndObserve): an observe pass gathers every
  // world's policy row on the device (SweepPolicyRow, 200 B a world) and they come to the host in
  // one copy; the host's actions for every world go back in one copy before the act-and-observe
  // pass, whose next rows come back with the `ended` flags. The rows, the actions' pinned mirror
  // and the device rows are allocated at the first Observe, so an expert's sweep holds none of them.
  void Observe() override {
    const size_t nw = size_t(backend_->nworld());
    cudaStream_t st = backend_->stream();
    if (policy_rows_ == nullptr) {
      S2R_CUDA_CHECK(cudaMallocHost(&policy_rows_, nw * sizeof(SweepPolicyRow)));
      S2R_CUDA_CHECK(cudaMallocHost(&actions_, nw * size_t(host_.action_stride) * sizeof(Real)));
      std::memset(actions_, 0, nw * size_t(host_.action_stride) * sizeof(Real));
      d_policy_rows_.Resize(nw * sizeof(SweepPolicyRow));
      host_.policy_rows = policy_rows_;
      host_.actions = actions_;
      device_args_.policy_rows = d_policy_rows_.get<SweepPolicyRow>();
      d_args_.Upload(&device_args_, sizeof(device_args_), st);
    }
    backend_->LaunchSweepStep(d_args_.get<SweepStepArgs>(), kSweepObserve);
    d_policy_rows_.Download(policy_rows_, nw * sizeof(SweepPolicyRow), st);
    S2R_CUDA_CHECK(cudaStreamSynchronize(st));
  }
  void ActAndObserve(const std::function<void()>& overlap) override {
    if (policy_rows_ == nullptr) throw std::logic_error("SweepBuffers::ActAndObserve before Observe");
    const size_t bytes = size_t(backend_->nworld()) * size_t(host_.action_stride) * sizeof(Real);
    S2R_CUDA_CHECK(cudaMemcpyAsync(d_actions_.get<void>(), actions_, bytes, cudaMemcpyHostToDevice, backend_->stream()));
    Pass(kSweepActObserve, overlap);
  }
  // The finished episodes are gathered on the compute stream (before the worlds' next Begin and
  // Step, which follow on it) and copied to the host on a copy stream, so the copy overlaps the
  // next step's kernel; WaitFetched waits for it.
  void Fetch(const int32_t* worlds, int count, std::vector<FetchedEpisode>* out) override {
    out->clear();
    if (count <= 0) return;
    NvtxRange range("s2r.sweep_fetch");
    WaitFetched();  // the last fetch's copy is done before its staging is reused
    cudaStream_t st = backend_->stream();
    const size_t need = size_t(count) * size_t(finish_.slot_bytes);
    finished_.Reserve(need, backend_->nworld());
    std::memcpy(finished_.worlds, worlds, count * sizeof(int32_t));
    d_fetch_list_.Resize(std::max(d_fetch_list_.bytes(), size_t(backend_->nworld()) * sizeof(int32_t)));
    S2R_CUDA_CHECK(
        cudaMemcpyAsync(d_fetch_list_.get<void>(), finished_.worlds, count * sizeof(int32_t), cudaMemcpyHostToDevice, st));
    d_fetch_staging_.Resize(std::max(d_fetch_staging_.bytes(), need));
    S2R_LAUNCH(SweepGatherFinishedKernel, count, 128, st)(d_args_.get<SweepStepArgs>(), d_fetch_list_.get<int32_t>(), count,
                                                     d_fetch_staging_.get<char>(), finish_);
    S2R_CUDA_CHECK(cudaGetLastError());
    S2R_CUDA_CHECK(cudaEventRecord(gathered_, st));
    S2R_CUDA_CHECK(cudaStreamWaitEvent(copy_stream_, gathered_, 0));
    S2R_CUDA_CHECK(
        cudaMemcpyAsync(finished_.slots, d_fetch_staging_.get<void>(), need, cudaMemcpyDeviceToHost, copy_stream_));
    S2R_CUDA_CHECK(cudaEventRecord(copied_, copy_stream_));
    fetch_pending_ = true;
    const char* base = static_cast<const char*>(finished_.slots);
    for (int i = 0; i < count; ++i) {
      const char* slot = base + i * finish_.slot_bytes;
      out->push_back({reinterpret_cast<const SweepWorld*>(slot), reinterpret_cast<const Real*>(slot + finish_.state_off),
                      reinterpret_cast<const Real*>(slot + finish_.obs_off),
                      reinterpret_cast<const Real*>(slot + finish_.action_off),
                      finish_.expert_off >= 0 ? reinterpret_cast<const Real*>(slot + finish_.expert_off) : nullptr,
                      finish_.inputs_off >= 0 ? reinterpret_cast<const Real*>(slot + finish_.inputs_off) : nullptr});
    }
  }
  void WaitFetched() override {
    if (!fetch_pending_) return;
    NvtxRange range("s2r.sweep_wait_fetched");
    S2R_CUDA_CHECK(cudaEventSynchronize(copied_));
    fetch_pending_ = false;
  }

 private:
  // Pinned host staging for the slots of one transfer and its world list; the slots grow (to twice
  // what was asked) and are reused, the list holds every world.
  struct PinnedSlots {
    void* slots = nullptr;
    size_t bytes = 0;
    int32_t* worlds = nullptr;
    PinnedSlots() = default;
    PinnedSlots(const PinnedSlots&) = delete;
    PinnedSlots& operator=(const PinnedSlots&) = delete;
    ~PinnedSlots() {
      if (slots) cudaFreeHost(slots);
      if (worlds) cudaFreeHost(worlds);
    }
    void Reserve(size_t need, int nworld) {
      if (need > bytes) {
        if (slots) cudaFreeHost(slots);
        slots = nullptr;
        bytes = need * 2;
        S2R_CUDA_CHECK(cudaMallocHost(&slots, bytes));
      }
      if (worlds == nullptr) S2R_CUDA_CHECK(cudaMallocHost(&worlds, size_t(nworld) * sizeof(int32_t)));
    }
  };

  // a pass of the sweep kernel in `mode`; `ended` and `stepped` come back after it, and the
  // host's `overlap` runs while it computes
  void Pass(int mode, const std::function<void()>& overlap) {
    backend_->LaunchSweepStep(d_args_.get<SweepStepArgs>(), mode);
    d_ended_.Download(ended_, 2 * size_t(backend_->nworld()) * sizeof(int32_t), backend_->stream());
    if (mode == kSweepActObserve) {  // the next step's rows, in the same wait
      d_policy_rows_.Download(policy_rows_, size_t(backend_->nworld()) * sizeof(SweepPolicyRow), backend_->stream());
    }
    std::exception_ptr error;  // the step completes (and is waited for) before a host error leaves
    if (overlap) {
      try {
        overlap();
      } catch (...) {
        error = std::current_exception();
      }
    }
    S2R_CUDA_CHECK(cudaStreamSynchronize(backend_->stream()));
    if (error) std::rethrow_exception(error);
  }

  CudaBackend* backend_;
  std::vector<SweepWorld> worlds_;
  std::vector<Real> task_params_;
  SweepSlotLayout start_{}, finish_{};
  int32_t* ended_ = nullptr;  // pinned
  SweepPolicyRow* policy_rows_ = nullptr;  // pinned, from the first Observe
  Real* actions_ = nullptr;                // pinned, from the first Observe: the policy's actions
  SweepStepArgs device_args_{};            // what d_args_ holds
  PinnedSlots starts_;    // a Begin's starting worlds
  PinnedSlots finished_;  // a Fetch's finished episodes
  bool fetch_pending_ = false;     // a Fetch's copy may still be running
  cudaStream_t copy_stream_ = nullptr;
  cudaEvent_t gathered_ = nullptr, copied_ = nullptr;
  DeviceBuffer d_worlds_, d_task_params_, d_actions_, d_state_rows_, d_obs_rows_, d_action_rows_, d_expert_rows_,
      d_input_rows_, d_noise_state_, d_ended_, d_args_, d_list_, d_staging_, d_fetch_list_, d_fetch_staging_,
      d_policy_rows_, d_net_, d_net_buffers_;
};

std::unique_ptr<SweepBuffers> CudaBackend::MakeSweepBuffers(const SweepStepArgs& shape) {
  return std::make_unique<CudaSweepBuffers>(this, shape);
}

}  // namespace

#if defined(S2R_CUDA_EMULATION)
std::unique_ptr<Backend> MakeCudaEmulationBackend(const StateView& host_state, int nworld) {
  return std::make_unique<CudaBackend>(host_state, nworld);
}
CudaEmulationCounts CudaEmulationCountsSoFar() {
  const cuda_emulation::Counts& c = cuda_emulation::EmulationCounts();
  return {c.launches.load(), c.world_block_stagings.load(), c.world_block_writebacks.load(),
          c.world_block_edited_writebacks.load()};
}
int SetCudaEmulationWorkers(int workers) {
  return cuda_emulation::EmulationWorkers().exchange(workers < 1 ? 1 : workers);
}
void SetCudaEmulationLaunchesOutOfMemory(bool fail) {
  cuda_emulation::EmulationLaunchFailure().store(fail ? cuda_emulation::cudaErrorMemoryAllocation
                                                      : cuda_emulation::cudaSuccess);
}
#else
std::unique_ptr<Backend> MakeCudaBackend(const StateView& host_state, int nworld) {
  return std::make_unique<CudaBackend>(host_state, nworld);
}
bool CudaBackendCompiled() { return true; }
bool CudaDevicePresent() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}
#endif

}  // namespace s2r
