// Engine: a batch of worlds of one model, stepped on the CPU or on a CUDA device.
//
// The engine owns the per-world parameter overrides and the host copy of the state. Backends own
// the memory the step runs on: the CPU backend steps the host state in place with a thread pool;
// the CUDA backend keeps model and state on the device and copies state back on Download().
// Changing a parameter uploads that one field (nworld values), never the whole model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "host/scene/fields.h"
#include "host/scene/model.h"
#include "kernels/state_view.h"

namespace s2r {

// kCudaEmulation: the CUDA backend's code (cuda/backend_cuda.cu) run on the CPU against an emulated
// runtime (cuda/emulation.h): slow, single-threaded, for testing the CUDA path without a GPU.
enum class BackendKind { kCpu, kCuda, kCudaEmulation };
// "cpu", "cuda", "cuda-emulation"; throws std::runtime_error naming `flag` otherwise
BackendKind ParseBackendKind(const std::string& name, const char* flag = "--backend");
const char* BackendKindName(BackendKind kind);

struct EngineOptions {
  int nworld = 1;
  BackendKind backend = BackendKind::kCpu;
  int threads = 0;  // CPU worker threads; 0 = all hardware threads
};

// One per-world parameter field: its name (as in ModelView), how many values each world has.
struct ParamInfo {
  std::string name;
  int per_world;  // values per world
  bool is_int;
};

// Host-side state storage with a StateView over it: one vector per S2R_STATE_ARRAYS entry.
struct HostState {
#define S2R_HOST_STATE(shape, name, type, rows, cols, unit, hashed, description) std::vector<type> name;
  S2R_STATE_ARRAYS(S2R_HOST_STATE)
#undef S2R_HOST_STATE
  StateView view;
  void Allocate(const ModelView& m, int nworld);
};

// One state array as the dataset store records it: per-world shape and meaning.
struct StateArrayInfo {
  std::string name;
  std::string dtype;           // "float32"/"float64" (Real), "int32", "int64", "contact"
  std::vector<int64_t> shape;  // per world: [rows, cols] (ROWS), [cols] (BLOCK), [] (SCALAR)
  std::string unit;
  std::string description;
  bool hashed;                 // part of Engine::StateHash
};
// Every state array of a model, in S2R_STATE_ARRAYS order.
std::vector<StateArrayInfo> StateLayout(const ModelView& m);

class Backend;
class SweepBuffers;
struct SweepStepArgs;

class Engine {
 public:
  Engine(Model model, const EngineOptions& options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int nworld() const { return nworld_; }
  const Model& model() const { return model_; }
  BackendKind backend() const { return options_.backend; }
  int threads() const;
  // bytes of model parameters, state and scratch per world on the stepping backend
  int64_t BytesPerWorld() const;
  // where the stepping backend keeps a world's step scratch (Backend::StepBlockMemory)
  const char* StepBlockMemory() const;
  // The scratch probe (CPU backend; Backend::SetScratchProbe): while on, each world's control step
  // starts on a step block of marker bytes. ScratchWritten: (array name, mean bytes of it written
  // per world control step) for each Step-lifetime array the model gives elements.
  // Throws std::runtime_error on other backends.
  void SetScratchProbe(bool on);
  std::vector<std::pair<std::string, double>> ScratchWritten() const;

  // every per-world parameter field and its size
  std::vector<ParamInfo> Params() const;
  // Parameters are addressed as in host/scene/fields.h: a whole field (`body_mass`), some of its
  // entities by name (`body_mass[box]`, `geom_friction[box_geom, floor]`, `actuator_kp[*]`), and
  // optionally one component (`gravity.z`, `joint_range[slide_x].hi`).
  //
  // Gives each world its own values of the addressed elements: `values` holds nworld x (elements
  // addressed) numbers, world-major; the field's other elements keep what each world had.
  // Throws std::invalid_argument naming the field, entity and world on a bad address, count or
  // value (kernels/model_fields.h bounds); nothing changes then.
  void SetParam(const std::string& address, const std::vector<Real>& values);
  // Gives only the listed worlds new values of the addressed elements (worlds.size() x elements,
  // world-major); every other world keeps its values, and only the listed worlds' kept data (their
  // slide-tree blocks) is dropped. Checked like SetParam. What a sweep does when a few worlds
  // start new episodes: the cost is in the listed worlds, not the batch.
  void SetParamForWorlds(const FieldAddress& address, const std::vector<int32_t>& worlds,
                         const std::vector<Real>& values);
  // Returns the addressed elements to the model's values (the whole field: shared again).
  void ClearParam(const std::string& address);
  // the values a world sees of the addressed elements
  std::vector<Real> GetParam(const std::string& address, int world) const;

  // all worlds back to their initial state
  void Reset();
  // only the listed worlds back to their initial state (from their current parameters); the
  // others are untouched. Throws std::invalid_argument on an index outside [0, nworld).
  void ResetWorlds(const std::vector<int32_t>& worlds);
  // One control step of every world. actions: (nworld, nactuator), may be null for zeros; read
  // before Step returns. The CUDA backend queues the step and returns before it has run (Download
  // waits for it); the CPU backend runs it.
  void Step(const Real* actions);
  // `nsteps` control steps with actions known in advance, e.g. a recorded or open-loop sequence:
  // actions (nsteps, nworld, nactuator), step-major, or null for zeros. The same result, bit for
  // bit, as nsteps calls of Step; the CUDA backend runs all of them in one launch per world,
  // staging its state once (docs/gpu.md), the CPU backend steps each world through all of them in
  // turn. Throws std::invalid_argument when nsteps < 1.
  void StepMany(const Real* actions, int nsteps);
  // Waits until every queued step has run (for timing; Download does it anyway).
  void Synchronize();
  // Copies the backend's state into state() (no-op on the CPU backend).
  void Download();
  const HostState& state() const { return state_; }
  HostState& mutable_state() { return state_; }
  // Hands a modified host state to the backend: call it after every edit of mutable_state(). The
  // CUDA backend copies it to the device; both backends drop the per-world data they keep between
  // steps (slide-tree blocks) and rebuild it at the next step.
  void Upload();
  // The same after edits of the listed worlds only: the CPU backend rebuilds only their kept data.
  void UploadWorlds(const std::vector<int32_t>& worlds);

  // A sweep's per-world buffers on the stepping backend (host/backend.h): SweepBuffers::Step runs
  // one control step of every world with the sweep's experts, recording and labels.
  std::unique_ptr<SweepBuffers> MakeSweepBuffers(const SweepStepArgs& shape);

  // FNV-1a 64 over every world's body state bytes (the `hashed` state arrays; after Download)
  uint64_t StateHash() const;
  // host model view with the per-world overrides applied
  const ModelView& view() const { return view_; }

 private:
  void RebuildView();
  template <typename T>
  std::vector<std::vector<T>>& Overrides();

  Model model_;
  EngineOptions options_;
  int nworld_;
  // per-world values of the parameters that have them (nworld x per-world), by FieldId; empty:
  // the field broadcasts the model's values
  std::vector<std::vector<Real>> real_overrides_;
  std::vector<std::vector<int32_t>> int_overrides_;
  ModelView view_;
  HostState state_;
  std::unique_ptr<Backend> backend_;
};

// Whether the CUDA backend was compiled in and a device is present.
bool CudaAvailable();
// Whether `kind` can run here: the CPU and the emulation always, CUDA where CudaAvailable().
bool BackendAvailable(BackendKind kind);

}  // namespace s2r
