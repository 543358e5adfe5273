// The emulated CUDA runtime (cuda/emulation.h) that runs the CUDA backend's code on the CPU: it
// must catch what a device would punish (host access to device memory, reads before a copy was
// waited for, copies out of bounds or in the wrong direction, bad launches) rather than hide it.
#include "cuda/emulation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "host/backend.h"
#include "host/engine.h"
#include "host/scene/fields.h"
#include "host/scene/scene_source.h"
#include "tests/host/scoped_env.h"

namespace s2r {
namespace cuda_emulation {
namespace {

void AddOne(int* data, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) data[i] += 1;
}

TEST(CudaEmulation, HostAccessToDeviceMemoryDies) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        int* d = nullptr;
        cudaMalloc(&d, 64 * sizeof(int));
        volatile int x = d[3];  // host code reading device memory
        (void)x;
      },
      "host code touched device memory");
}

void ReadAt(const int* data, int index, int* out) { *out = data[index]; }

// A kernel reading one element past its array (64 ints: the block ends on a 256-byte boundary)
// dies on the guard page and says where; the last element itself reads fine.
TEST(CudaEmulation, KernelLeavingItsBlockDies) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  int* d = nullptr;
  int* out = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 64 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, sizeof(int)), cudaSuccess);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(d) % 256, 0u);
  S2R_LAUNCH(ReadAt, 1, 1, nullptr)(d, 63, out);
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  EXPECT_DEATH(
      {
        S2R_LAUNCH(ReadAt, 1, 1, nullptr)(d, 64, out);
        cudaStreamSynchronize(nullptr);
      },
      "past the end of a cudaMalloc block \\(its guard page\\)\n  at byte offset 256 of a block of 256 bytes");
  EXPECT_DEATH(
      {
        S2R_LAUNCH(ReadAt, 1, 1, nullptr)(d, -1025, out);
        cudaStreamSynchronize(nullptr);
      },
      "before the start of a cudaMalloc block");
  cudaFree(out);
  cudaFree(d);
}

TEST(CudaEmulation, DeviceMemoryStartsAsNaNBytes) {
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 16 * sizeof(float)), cudaSuccess);
  float* h = nullptr;
  ASSERT_EQ(cudaMallocHost(&h, 16 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(h, d, 16 * sizeof(float), cudaMemcpyDeviceToHost, nullptr), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  for (int i = 0; i < 16; ++i) EXPECT_TRUE(h[i] != h[i]) << i;  // NaN
  cudaFreeHost(h);
  cudaFree(d);
}

// Work on a stream runs when it is waited for: a pinned buffer read before the wait is stale.
TEST(CudaEmulation, PinnedCopiesLandOnlyWhenWaitedFor) {
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  std::vector<int> src(32);
  for (int i = 0; i < 32; ++i) src[i] = i;
  int* d = nullptr;
  int* h = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 32 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(&h, 32 * sizeof(int)), cudaSuccess);
  std::memset(h, 0, 32 * sizeof(int));
  ASSERT_EQ(cudaMemcpyAsync(d, src.data(), 32 * sizeof(int), cudaMemcpyHostToDevice, s), cudaSuccess);
  src[5] = -1;  // pageable source: staged at the call, so this change does not travel
  S2R_LAUNCH(AddOne, 1, 32, s)(d, 32);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(h, d, 32 * sizeof(int), cudaMemcpyDeviceToHost, s), cudaSuccess);
  EXPECT_EQ(h[7], 0) << "the copy ran before anything waited for it";
  cudaEvent_t done = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(done, s), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(done), cudaSuccess);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(h[i], i + 1) << i;
  cudaEventDestroy(done);
  cudaFreeHost(h);
  cudaFree(d);
  cudaStreamDestroy(s);
}

// cudaStreamWaitEvent orders a second stream after the first stream's work up to the event, and
// not after work queued later.
TEST(CudaEmulation, StreamWaitEventOrdersStreams) {
  cudaStream_t a = nullptr, b = nullptr;
  ASSERT_EQ(cudaStreamCreate(&a), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&b), cudaSuccess);
  int* d = nullptr;
  int* h = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 4 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(&h, 4 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(d, 0, 4 * sizeof(int), a), cudaSuccess);
  S2R_LAUNCH(AddOne, 1, 4, a)(d, 4);
  cudaEvent_t e = nullptr;
  cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  cudaEventRecord(e, a);
  S2R_LAUNCH(AddOne, 1, 4, a)(d, 4);  // after the event: b need not wait for it
  ASSERT_EQ(cudaStreamWaitEvent(b, e, 0), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(h, d, 4 * sizeof(int), cudaMemcpyDeviceToHost, b), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(b), cudaSuccess);
  EXPECT_EQ(h[0], 1);
  ASSERT_EQ(cudaStreamSynchronize(a), cudaSuccess);
  cudaEventDestroy(e);
  cudaFreeHost(h);
  cudaFree(d);
  cudaStreamDestroy(a);
  cudaStreamDestroy(b);
}

TEST(CudaEmulation, BadCopiesAndLaunchesAreErrors) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 16 * sizeof(int)), cudaSuccess);
  std::vector<int> host(32, 0);
  EXPECT_EQ(cudaMemcpyAsync(d, host.data(), 32 * sizeof(int), cudaMemcpyHostToDevice, nullptr), cudaErrorInvalidValue)
      << "a copy past the allocation's end";
  EXPECT_EQ(cudaMemcpyAsync(host.data(), d, 4 * sizeof(int), cudaMemcpyHostToDevice, nullptr),
            cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(cudaMemsetAsync(host.data(), 0, 16, nullptr), cudaErrorInvalidDevicePointer);
  EXPECT_EQ(cudaMemset2DAsync(d, 8, 0, 4, 9, nullptr), cudaErrorInvalidValue) << "9 rows of pitch 8 leave 64 bytes";
  S2R_LAUNCH(AddOne, 0, 128, nullptr)(d, 16);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration) << "an empty grid";
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the error is taken once";
  S2R_LAUNCH(AddOne, 1, 2048, nullptr)(d, 16);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration) << "more than 1024 threads a block";
  S2R_LAUNCH(AddOne, 1, 16, nullptr)(host.data(), 16);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevicePointer) << "a kernel argument in pageable host memory";
  EXPECT_EQ(cudaFree(host.data()), cudaErrorInvalidDevicePointer);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

// Each thread writes its flat index and the host thread it ran on
void RecordThread(int* index, uint64_t* host_thread, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  index[i] += i + 1;
  host_thread[i] = std::hash<std::thread::id>{}(std::this_thread::get_id());
}

// A launch's threads run on several host threads at once (SetCudaEmulationWorkers), neighbours on
// different ones, so that worlds whose blocks overlap race as they would on a device: every
// thread runs once with its own coordinates (3 blocks of 50 over 3 workers, and over 1), and with 3
// workers threads i and i + 1 never share a host thread.
TEST(CudaEmulation, LaunchRunsNeighbouringThreadsSideBySide) {
  const int n = 150;
  int* index = nullptr;
  uint64_t* host_thread = nullptr;
  ASSERT_EQ(cudaMalloc(&index, n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&host_thread, n * sizeof(uint64_t)), cudaSuccess);
  for (int workers : {3, 1}) {
    SCOPED_TRACE("workers " + std::to_string(workers));
    const int before = SetCudaEmulationWorkers(workers);
    ASSERT_EQ(cudaMemsetAsync(index, 0, n * sizeof(int), nullptr), cudaSuccess);
    S2R_LAUNCH(RecordThread, 3, 50, nullptr)(index, host_thread, n);
    std::vector<int> got(n);
    std::vector<uint64_t> on(n);
    ASSERT_EQ(cudaMemcpyAsync(got.data(), index, n * sizeof(int), cudaMemcpyDeviceToHost, nullptr), cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(on.data(), host_thread, n * sizeof(uint64_t), cudaMemcpyDeviceToHost, nullptr),
              cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
    EXPECT_EQ(SetCudaEmulationWorkers(before), workers);
    for (int i = 0; i < n; ++i) EXPECT_EQ(got[i], i + 1) << "thread " << i;
    std::set<uint64_t> distinct(on.begin(), on.end());
    EXPECT_EQ(distinct.size(), size_t(workers));
    if (workers > 1) {
      for (int i = 0; i + 1 < n; ++i) EXPECT_NE(on[i], on[i + 1]) << "threads " << i << " and " << i + 1;
    }
  }
  cudaFree(index);
  cudaFree(host_thread);
}

// Engine::Step on the CUDA backend queues the step and returns before it has run. Eight steps with
// different actions and no wait between them must each run with their own actions: the backend
// refills a pinned action buffer only after the upload that last read it has run. The emulation
// runs queued work only when it is waited for, so a buffer refilled too early would hand later
// actions to earlier steps; done right, the trajectory equals the CPU backend's bit for bit.
TEST(CudaEmulationEngine, QueuedStepsReadTheirOwnActions) {
  EngineOptions o;
  o.nworld = 3;
  o.backend = BackendKind::kCpu;
  Engine cpu(LoadScene("builtin:box_push"), o);
  o.backend = BackendKind::kCudaEmulation;
  Engine emu(LoadScene("builtin:box_push"), o);
  const int na = cpu.model().nactuator();
  ASSERT_GT(na, 0);
  for (int k = 0; k < 8; ++k) {
    std::vector<Real> a(static_cast<size_t>(o.nworld) * na);
    for (size_t i = 0; i < a.size(); ++i) a[i] = Real(0.05 * std::sin(0.9 * k + double(i)));
    cpu.Step(a.data());
    emu.Step(a.data());
  }
  emu.Download();
  const StateView& c = cpu.state().view;
  const StateView& e = emu.state().view;
  for (int w = 0; w < o.nworld; ++w) {
    for (int b = 1; b < cpu.model().nbody(); ++b) {
      for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(e.body_pos(w, b)[i], c.body_pos(w, b)[i]) << "world " << w << " body " << b;
        EXPECT_EQ(e.body_linvel(w, b)[i], c.body_linvel(w, b)[i]) << "world " << w << " body " << b;
      }
    }
  }
}

uint64_t HashAfterSteps(const char* scene, BackendKind backend, int steps, std::string* memory) {
  EngineOptions o;
  o.nworld = 5;
  o.backend = backend;
  Engine e(LoadScene(scene), o);
  const int na = e.model().nactuator();
  const FieldAddress gravity_z = ResolveFieldAddress(e.model(), "gravity.z");
  std::vector<Real> a(static_cast<size_t>(o.nworld) * na);
  for (int k = 0; k < steps; ++k) {
    for (size_t i = 0; i < a.size(); ++i) a[i] = Real(0.3 * std::sin(0.7 * k + double(i)));
    e.Step(a.data());
    if (k == steps / 4) e.SetParamForWorlds(gravity_z, {3}, {Real(-7)});  // world 3's kept blocks dropped
    if (k == steps / 2) {  // a state edit of one world, through the host copy and back
      e.Download();
      e.mutable_state().view.body_linvel(2, e.model().nbody() - 1)[0] += Real(0.25);
      e.Upload();
    }
    if (k == 3 * steps / 4) e.ResetWorlds({1});
  }
  e.Download();
  *memory = e.StepBlockMemory();
  return e.StateHash();
}

// The step kernels keep a world's step block in the thread's local memory where the variant has
// room for it, and stage the world's state beside it for the launch where that fits too; else (or
// with S2R_CUDA_STEP_BLOCK / S2R_CUDA_STATE = global) they use device memory; the world block
// (slide-tree responses) is staged after it where it fits as well. Every way, a world's steps are
// the CPU's bit for bit: the local block carries nothing from one launch to the next (the
// emulation fills it with NaN bytes at every launch), the staged state and world block go back
// whole, a state edited on the host (one world's body, halfway) lands in that world when the
// device state is interleaved by world and transposed on the way, and a parameter change or reset
// of one world drops that world's kept block, not another's, in either layout of the blocks.
TEST(CudaEmulationEngine, StepBlockAndStateInLocalOrGlobalMemoryStepTheSame) {
  struct Case {
    const char* scene;
    const char* by_default;  // where the block goes with neither variable set
  };
  // what fits the 32 KB local block (S2R_CUDA_LOCAL_STEP_BYTES) depends on the precision: in
  // float64 stack5's step block is 37,056 B; pick_lift's, its world block, its state and a sweep's
  // episode record fit, with 24 B to spare (22,720 + 3,584 + 5,008 + 1,432 B at stop 43; stop 50 took 16 B of
  // it, an arm's reset orientation in float: in Real, 32 B, it did not fit); the arms' 64 KB block (S2R_CUDA_ARM_LOCAL_STEP_BYTES) holds
  // panda_pick's block, state and world block in float32 (29,376 + 6,080 + 64 B), only the block
  // in float64 (56,768 B, then 11,456 B of state), and the UR5e with the 2F-85's, the <all>
  // variant, in float32 (47,936 + 6,528 + 64 B), not in float64 (92,928 B of step block)
  const bool f32 = sizeof(Real) == 4;
  for (const Case& c : {Case{"builtin:box_push", "local+state+world"},
                        Case{"builtin:pick_lift", "local+state+world"},
                        Case{"builtin:stack5", f32 ? "local+state+world" : "global"},
                        Case{"builtin:panda_pick", f32 ? "local+state+world" : "local"},
                        Case{"builtin:ur5e_2f85/scene", f32 ? "local+state+world" : "global"}}) {
    SCOPED_TRACE(c.scene);
    std::string memory;
    const int steps = 12;
    const uint64_t cpu = HashAfterSteps(c.scene, BackendKind::kCpu, steps, &memory);
    EXPECT_EQ(memory, "thread");
    struct Choice {
      const char* step_block;
      const char* state;
      const char* memory;  // nullptr: the case's default
    };
    for (const Choice& k : {Choice{nullptr, nullptr, nullptr}, Choice{"local", "global", "local"},
                            Choice{"global", nullptr, "global"}, Choice{"global", "local", "global"}}) {
      SCOPED_TRACE(std::string("S2R_CUDA_STEP_BLOCK=") + (k.step_block ? k.step_block : "(unset)") +
                   " S2R_CUDA_STATE=" + (k.state ? k.state : "(unset)"));
      ScopedEnv block("S2R_CUDA_STEP_BLOCK", k.step_block);
      ScopedEnv state("S2R_CUDA_STATE", k.state);
      EXPECT_EQ(HashAfterSteps(c.scene, BackendKind::kCudaEmulation, steps, &memory), cpu);
      const bool fits = std::string(c.by_default) != "global";
      EXPECT_EQ(memory, k.memory == nullptr ? c.by_default : fits ? k.memory : "global");
    }
  }
  for (const char* name : {"S2R_CUDA_STEP_BLOCK", "S2R_CUDA_STATE"}) {
    ScopedEnv bad(name, "shared");
    std::string memory;
    try {
      HashAfterSteps("builtin:box_push", BackendKind::kCudaEmulation, 1, &memory);
      ADD_FAILURE() << name << "=shared was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(name) + "=shared"), std::string::npos) << e.what();
    }
  }
}

// A device that cannot back a step kernel's local memory (the driver reserves the whole frame for
// every thread the GPU can hold, at the launch) refuses the launch with cudaErrorMemoryAllocation;
// the backend's error names the kernel and variant, the step block's size and its knob, the
// reservation on the emulated device (an H100's 132 SMs of 2,048 threads), and the way out. The
// arm with a gripper (<all>) fails at its first launch, the reset in the engine's construction;
// box_push at a step. Once launches succeed again, a new engine steps as before.
TEST(CudaEmulationEngine, ALaunchRefusedForMemorySaysWhatTheFrameReserves) {
  struct Refuse {
    Refuse() { SetCudaEmulationLaunchesOutOfMemory(true); }
    ~Refuse() { SetCudaEmulationLaunchesOutOfMemory(false); }
  };
  EngineOptions o;
  o.nworld = 4;
  o.backend = BackendKind::kCudaEmulation;
  auto expect_message = [](const std::string& what, const std::vector<std::string>& parts) {
    ::testing::Test::RecordProperty(parts[0], what);
    for (const std::string& part : parts) EXPECT_NE(what.find(part), std::string::npos) << part << " in: " << what;
  };
  {
    const Model arm = LoadScene("builtin:ur5e_2f85/scene");
    Refuse refuse;
    try {
      Engine e(arm, o);
      ADD_FAILURE() << "the engine was built with every launch refused";
    } catch (const std::runtime_error& e) {
      expect_message(e.what(), {"ResetWorldsKernel<all>", "out of memory", "65536 B step block",
                                "65536 B x 2048 threads x 132 SMs = 17.7 GB", "-DS2R_CUDA_ARM_LOCAL_STEP_BYTES=0"});
    }
  }
  Engine e(LoadScene("builtin:box_push"), o);
  {
    Refuse refuse;
    try {
      e.Step(nullptr);
      ADD_FAILURE() << "a step was launched with every launch refused";
    } catch (const std::runtime_error& e) {
      expect_message(e.what(), {"ControlStepKernel<slide_trees>", "32768 B step block", "= 8.9 GB",
                                "-DS2R_CUDA_LOCAL_STEP_BYTES=0"});
    }
  }
  Engine again(LoadScene("builtin:box_push"), o);
  again.Step(nullptr);
  again.Download();
  EXPECT_TRUE(std::isfinite(again.state().view.body_pos(0, 1)[0]));
}

// 15 control steps of 5 worlds: on the CPU one Step per control step, on the emulated CUDA backend
// StepMany calls of 1, 4 and 7 steps and 3 steps of zeros
uint64_t StepManyHash(const char* scene, BackendKind backend) {
  EngineOptions o;
  o.nworld = 5;
  o.backend = backend;
  Engine e(LoadScene(scene), o);
  const size_t step_reals = static_cast<size_t>(o.nworld) * e.model().nactuator();
  std::vector<Real> a(12 * step_reals);
  for (size_t i = 0; i < a.size(); ++i) a[i] = Real(0.3 * std::sin(0.37 * double(i)));
  int k = 0;
  for (int n : {1, 4, 7}) {
    const Real* step_k = a.data() + k * step_reals;
    if (backend == BackendKind::kCpu) {
      for (int s = 0; s < n; ++s) e.Step(step_k + s * step_reals);
    } else {
      e.StepMany(step_k, n);
    }
    k += n;
  }
  if (backend == BackendKind::kCpu) {
    for (int s = 0; s < 3; ++s) e.Step(nullptr);
  } else {
    e.StepMany(nullptr, 3);
  }
  e.Download();
  return e.StateHash();
}

// StepMany on the emulated CUDA backend (one launch per call for the bench scenes' variant: each
// world takes every step of the call on one staging of its state and world block; one launch per
// step for the arms', panda_pick) ends where the CPU's Step after Step does, bit for bit. Calls of 1, 4 and 7 steps
// (the action buffers grow twice), then 3 steps of zeros; with everything staged (by default) and
// with the per-world global blocks (S2R_CUDA_STEP_BLOCK=global: nothing staged, world-major).
TEST(CudaEmulationEngine, StepManyRunsTheStepsOfACallInOneLaunch) {
  for (const char* step_block : {static_cast<const char*>(nullptr), "global"}) {
    for (const char* scene : {"builtin:box_push", "builtin:pick_lift", "builtin:panda_pick"}) {
      SCOPED_TRACE(std::string(scene) + " S2R_CUDA_STEP_BLOCK=" + (step_block ? step_block : "(unset)"));
      ScopedEnv env("S2R_CUDA_STEP_BLOCK", step_block);
      EXPECT_EQ(StepManyHash(scene, BackendKind::kCudaEmulation), StepManyHash(scene, BackendKind::kCpu));
    }
  }
}

// What no state hash can show, counted by the emulation (CudaEmulationCountsSoFar). A staged world
// block (slide-tree responses) goes back to device memory only where the launch built something in
// it: in the first steps (the blocks start invalid, and columns are added as contacts appear) and
// after a parameter change or reset drops a world's block, and not in the steady state. Copying
// back always, or never, gives the same trajectories (a rebuild gives the same block), so only the
// count tells. And StepMany is one launch per call for the bench scenes' variant (ControlStepsKernel),
// one per step for the arms' (ControlStepKernel in a loop).
TEST(CudaEmulationEngine, WorldBlocksGoBackOnlyWhenBuiltAndStepManyIsOneLaunch) {
  struct Delta {
    int64_t writebacks, launches;
  };
  auto counted = [](const std::function<void()>& f) {
    const CudaEmulationCounts before = CudaEmulationCountsSoFar();
    f();
    const CudaEmulationCounts after = CudaEmulationCountsSoFar();
    return Delta{after.world_block_writebacks - before.world_block_writebacks, after.launches - before.launches};
  };
  for (const char* scene : {"builtin:box_push", "builtin:pick_lift"}) {  // both stage their world blocks
    SCOPED_TRACE(scene);
    EngineOptions o;
    o.nworld = 8;
    o.backend = BackendKind::kCudaEmulation;
    Engine e(LoadScene(scene), o);
    // float64 pick_lift stages its world block too since stop 31 (32,192 of 32,768 B, without the
    // lock-block factors it never read)
    ASSERT_STREQ(e.StepBlockMemory(), "local+state+world");
    const FieldAddress gravity_z = ResolveFieldAddress(e.model(), "gravity.z");
    std::vector<Real> a(static_cast<size_t>(o.nworld) * e.model().nactuator());
    // (the emulation runs queued work when something waits for it, so each count ends with a wait)
    auto step = [&](int k, const std::function<void()>& before = [] {}) {
      for (size_t i = 0; i < a.size(); ++i) a[i] = Real(0.3 * std::sin(0.7 * k + double(i)));
      return counted([&] {
        before();
        e.Step(a.data());
        e.Download();  // waits for the launch
      });
    };
    const Delta first = step(0);
    EXPECT_EQ(first.writebacks, o.nworld);  // every block built
    EXPECT_EQ(first.launches, 1);
    int64_t steady = 0;
    for (int k = 1; k < 20; ++k) steady += step(k).writebacks;
    // 19 launches x 8 worlds stage 152 blocks; what goes back is what gained response columns
    // (box_push: 8, in the second step; pick_lift: 8 in all)
    EXPECT_LE(steady, 2 * o.nworld);
    e.SetParamForWorlds(gravity_z, {3}, {Real(-7)});  // drops world 3's block (its gravity response)
    const Delta changed = step(20);
    EXPECT_GE(changed.writebacks, 1);
    EXPECT_LT(changed.writebacks, o.nworld);
    const Delta reset = step(21, [&] { e.ResetWorlds({1}); });
    EXPECT_GE(reset.writebacks, 1);
    EXPECT_LT(reset.writebacks, o.nworld);
    EXPECT_EQ(reset.launches, 2);  // the reset list kernel, then the step
    for (int k = 22; k < 30; ++k) step(k);
    const Delta many = counted([&] {
      e.StepMany(nullptr, 4);
      e.Download();
    });
    EXPECT_EQ(many.launches, 1);
    EXPECT_LT(many.writebacks, o.nworld);
  }
  // the arms' variant runs StepMany a launch per step (ControlStepKernel: no ControlStepsKernel is
  // compiled for it), each staging what fits (panda_pick in float32: everything)
  EngineOptions o;
  o.nworld = 2;
  o.backend = BackendKind::kCudaEmulation;
  Engine arm(LoadScene("builtin:panda_pick"), o);
  arm.Step(nullptr);
  arm.Download();
  const Delta many = counted([&] {
    arm.StepMany(nullptr, 3);
    arm.Download();
  });
  EXPECT_EQ(many.launches, 3);
  EXPECT_LT(many.writebacks, 3 * o.nworld);
}

}  // namespace
}  // namespace cuda_emulation
}  // namespace s2r
