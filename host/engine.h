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

#include "host/scene/model.h"
#include "kernels/state_view.h"

namespace s2r {

enum class BackendKind { kCpu, kCuda };

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

// Host-side state storage with a StateView over it.
struct HostState {
  std::vector<Real> body_pos, body_quat, body_linvel, body_angvel, ctrl_queue, ctrl,
      joint_impulse, actuator_impulse, actuator_force, time;
  std::vector<Contact> contacts;
  std::vector<int32_t> contact_count, status;
  std::vector<int64_t> contact_overflow, control_step;
  StateView view;
  void Allocate(const ModelView& m, int nworld);
};

class Backend;

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

  // every per-world parameter field and its size
  std::vector<ParamInfo> Params() const;
  // Gives each world its own values of a field: `values` holds nworld * per_world numbers,
  // world-major. Throws std::invalid_argument naming the field on a bad name, size or value.
  void SetParam(const std::string& name, const std::vector<Real>& values);
  // Returns a field to the model's default shared by all worlds.
  void ClearParam(const std::string& name);
  // the value a world sees (per_world numbers)
  std::vector<Real> GetParam(const std::string& name, int world) const;

  // all worlds back to their initial state
  void Reset();
  // One control step of every world. actions: (nworld, nactuator), may be null for zeros.
  void Step(const Real* actions);
  // Copies the backend's state into state() (no-op on the CPU backend).
  void Download();
  const HostState& state() const { return state_; }
  HostState& mutable_state() { return state_; }
  // Hands a modified host state to the backend: call it after every edit of mutable_state(). The
  // CUDA backend copies it to the device; both backends drop the per-world data they keep between
  // steps (slide-tree blocks) and rebuild it at the next step.
  void Upload();

  // FNV-1a 64 over every world's body state bytes (after Download)
  uint64_t StateHash() const;
  // host model view with the per-world overrides applied
  const ModelView& view() const { return view_; }

 private:
  void RebuildView();

  Model model_;
  EngineOptions options_;
  int nworld_;
  std::vector<std::pair<std::string, std::vector<Real>>> overrides_;
  std::vector<std::pair<std::string, std::vector<int32_t>>> int_overrides_;
  ModelView view_;
  HostState state_;
  std::unique_ptr<Backend> backend_;
};

// Whether the CUDA backend was compiled in and a device is present.
bool CudaAvailable();

}  // namespace s2r
