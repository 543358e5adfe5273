// Backend interface between the Engine and the memory a batch is stepped in.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/model_view.h"
#include "kernels/state_view.h"
#include "kernels/sweep_step.h"

namespace s2r {

// A vector whose resize leaves new elements uninitialized: a sweep's row buffers grow back to the
// horizon for every episode, and zero-filling them would cost as much as a copy.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) {}
  template <typename U>
  void construct(U* p) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using RowVector = std::vector<Real, UninitializedAllocator<Real>>;

// A sweep's per-world buffers (kernels/sweep_step.h: episode state, task parameters, actions,
// recorded rows) in the stepping backend's memory. The host writes a starting world's SweepWorld
// and task parameters into the host mirror (host().worlds, host().task_params) and calls Begin;
// Step runs one pass of every world (SweepWorldPass), after which host().ended says which
// worlds finished an episode in it; Fetch hands over those worlds' episode state and rows. On the
// CPU backend the mirror is the memory the step runs on, and Begin and Fetch copy nothing; the CUDA
// backend copies only the starting worlds' entries in and the finished episodes out.
struct FetchedEpisode {
  const SweepWorld* world;  // the episode's end state (task labels, observation draws, events)
  const Real* state;        // (length, nbody * kBodyStateSize), length = world->task.steps
  const Real* obs;          // (length, kObsSize)
  const Real* action;       // (length, nactuator)
  const Real* expert;       // (length, nactuator): the expert's labels (SweepStepArgs::expert_labels), else null
  const Real* inputs;       // (length, input_row): a policy's other inputs (SweepStepArgs::input_row > 0), else null
};

class SweepBuffers {
 public:
  virtual ~SweepBuffers() = default;
  // the host mirror: the shape, host pointers to worlds, task_params and ended (no rows)
  const SweepStepArgs& host() const { return host_; }
  virtual void Begin(const int32_t* worlds, int count) = 0;
  // One control step of every world. `overlap` (optional) is host work that touches none of the
  // sweep's buffers (writing finished episodes out): it runs while the step computes -- on the
  // CPU the calling thread does it before joining the parallel pass, on CUDA while the kernel
  // runs -- instead of between steps, when the other cores (or the device) would wait.
  virtual void Step(const std::function<void()>& overlap = {}) = 0;
  // Control steps with actions from outside (s2r sweep --policy; kernels/sweep_step.h
  // SweepWorldPass, kSweepObserve and kSweepActObserve). Observe, once at the start: episodes
  // start, events fire, each world's rows before its step are recorded and host().policy_rows
  // (nworld) say what the policy is told of each world (`active` for those that take actions).
  // Then per control step the host writes every active world's actions into host().actions and
  // ActAndObserve records them, steps those worlds, labels them, and observes the next step of
  // every world still active or begun since (Begin): host().policy_rows hold the next step's
  // inputs when it returns, and `ended` / `stepped` this step's outcome. `overlap` as in Step.
  // CUDA: one launch per call; the rows come to the host in one copy, the actions go in one.
  virtual void Observe() = 0;
  virtual void ActAndObserve(const std::function<void()>& overlap = {}) = 0;
  // The listed worlds' finished episodes, valid until the next Fetch. A backend may return before
  // the data has arrived (CUDA: the copy to the host overlaps the next step): read them only
  // after WaitFetched. The worlds' next Begin and Step may follow at once.
  virtual void Fetch(const int32_t* worlds, int count, std::vector<FetchedEpisode>* out) = 0;
  virtual void WaitFetched() {}
  // Hands world w's finished rows over without copying, where the backend can (the CPU's rows
  // are per-world buffers): swaps them with the given vectors, whose storage the world then
  // writes its next episode into, and returns true; Fetch's row pointers for w are stale after
  // it. false: nothing done, copy the rows from Fetch. `expert` is swapped where the sweep records
  // the expert's labels (SweepStepArgs::expert_labels), `inputs` where it records a policy's other
  // inputs (SweepStepArgs::input_row > 0).
  virtual bool TakeRows(int /*w*/, RowVector* /*state*/, RowVector* /*obs*/, RowVector* /*action*/,
                        RowVector* /*expert*/, RowVector* /*inputs*/) {
    return false;
  }
  // time the steps spent in the physics (ControlStep) alone, averaged over the threads that
  // stepped; -1 where the backend cannot tell (CUDA: one kernel does it all)
  virtual double PhysicsSeconds() const { return -1; }
  // ... and in a policy network's forward passes (kSweepNet), the same way; -1 where it cannot tell
  virtual double NetSeconds() const { return -1; }

 protected:
  SweepStepArgs host_{};
};

class Backend {
 public:
  virtual ~Backend() = default;
  // (Re)binds the model; called at start and whenever a parameter field changes. `changed` is the
  // one field that changed (FieldId::kCount: all of them); `worlds` lists the `nworlds` worlds whose
  // values changed (nullptr: possibly all): only their kept per-world data is dropped.
  virtual void SetModel(const ModelView& host_view, FieldId changed, const int32_t* worlds, int nworlds) = 0;
  virtual void Reset() = 0;
  // Resets only the listed worlds (their state, and the per-world data kept between steps).
  virtual void ResetWorlds(const int32_t* worlds, int count) = 0;
  // `nsteps` control steps of every world with actions known in advance: `actions` holds
  // (nsteps, nworld, nactuator) values, step-major, or is null for zeros. Each world takes its
  // steps one after another (CUDA: in one launch, the state staged once), with the same result
  // as nsteps calls with one step's actions each.
  virtual void Step(const Real* actions, int nsteps) = 0;
  // waits until every queued step has run (CUDA queues steps; the CPU runs them in Step)
  virtual void Synchronize() {}
  virtual void Download(const StateView& host) = 0;
  // `worlds` (nullptr: all) lists the worlds whose state was edited: only their kept data is dropped
  virtual void Upload(const StateView& host, const int32_t* worlds, int nworlds) = 0;
  virtual int threads() const = 0;
  virtual int64_t ScratchBytesPerWorld() const = 0;
  // where a world's step block (kernels/workspace.h) lives while it steps: "thread" (the CPU: one
  // block per thread, reused for its worlds), "local" (CUDA: the thread's local memory),
  // "local+state" (CUDA: there, and the world's state staged beside it for each launch) or
  // "global" (CUDA: one block per world in device memory)
  virtual const char* StepBlockMemory() const { return "thread"; }
  // Buffers for a sweep shaped by `shape` (its scalars and models; its pointers are ignored).
  virtual std::unique_ptr<SweepBuffers> MakeSweepBuffers(const SweepStepArgs& shape) = 0;
  // The scratch probe (the CPU backend's Step only; others throw std::runtime_error): with it on,
  // each world's control step starts on a step block filled with a marker byte, and the bytes of
  // each Step-lifetime array that differ from it afterwards are counted: what a step writes of
  // its block (kernels/workspace.h). ScratchWritten: per WorkspaceArray, the mean bytes written
  // per world control step since the probe was turned on (0 for World-lifetime arrays).
  virtual void SetScratchProbe(bool on);
  virtual std::vector<double> ScratchWritten() const;
};

std::unique_ptr<Backend> MakeCpuBackend(const StateView& host_state, int nworld, int threads);
// nullptr when CUDA support was not compiled in; throws std::runtime_error without a device
std::unique_ptr<Backend> MakeCudaBackend(const StateView& host_state, int nworld);
bool CudaBackendCompiled();
bool CudaDevicePresent();
// the CUDA backend on the CPU (cuda/backend_cuda_emulation.cc): every build has it
std::unique_ptr<Backend> MakeCudaEmulationBackend(const StateView& host_state, int nworld);
// What the emulated CUDA backend's kernels did that no result shows (process-wide, since start;
// tests take differences): kernel launches run, world blocks staged in local memory, and staged
// world blocks copied back to device memory (skipped where a launch built nothing in them: a cost,
// so only a count can guard it), and of those the ones a sweep event dropped and rebuilt
// (kReducedEdited, kernels/solver_reduced.h: copied back even where the rebuild gave the same word).
struct CudaEmulationCounts {
  int64_t launches = 0;
  int64_t world_block_stagings = 0;
  int64_t world_block_writebacks = 0;
  int64_t world_block_edited_writebacks = 0;
};
CudaEmulationCounts CudaEmulationCountsSoFar();
// Host threads the emulated CUDA backend runs a launch's threads on (cuda/emulation.h: neighbouring
// worlds side by side, so blocks that overlap race); returns the previous count. The default is
// S2R_CUDA_EMULATION_WORKERS where set, else the hardware's threads, at most 4.
int SetCudaEmulationWorkers(int workers);
// Makes every launch of the emulated CUDA backend fail as a device's does when it cannot back the
// kernel's local memory (cudaErrorMemoryAllocation), or not (false), for tests of the message.
void SetCudaEmulationLaunchesOutOfMemory(bool fail);

}  // namespace s2r
