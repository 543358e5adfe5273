#include "host/engine.h"

#include <cmath>
#include <stdexcept>
#include <algorithm>
#include <thread>
#include <type_traits>

#include "host/backend.h"
#include "host/scene/fields.h"
#include "kernels/workspace.h"

namespace s2r {
namespace {

template <typename T>
const char* StateTypeName() {
  if (std::is_same_v<T, Real>) return sizeof(Real) == 4 ? "float32" : "float64";
  if (std::is_same_v<T, int32_t>) return "int32";
  if (std::is_same_v<T, int64_t>) return "int64";
  return "contact";
}

// a parameter field's values in world w: the per-world override, or the model's values
template <typename T>
const T* WorldValues(const std::vector<T>& overrides, const std::vector<T>& model, int per_world, int w) {
  return overrides.empty() ? model.data() : overrides.data() + static_cast<size_t>(w) * per_world;
}

}  // namespace

void HostState::Allocate(const ModelView& m, int nworld) {
  view = StateDims(m, nworld);
  // one vector per state array, nworld x rows x cols, zeroed
  const StateView& v = view;
#define S2R_ALLOCATE_STATE(shape, name, type, rows, cols, unit, hashed, description) \
  name.assign(static_cast<size_t>(nworld) * (rows) * (cols), type{});                \
  view.name##_ = name.data();
  S2R_STATE_ARRAYS(S2R_ALLOCATE_STATE)
#undef S2R_ALLOCATE_STATE
}

std::vector<StateArrayInfo> StateLayout(const ModelView& m) {
  std::vector<StateArrayInfo> out;
  const StateView v = StateDims(m, 1);
#define S2R_STATE_INFO(shape, name, type, rows, cols, unit, hashed, description)                  \
  {                                                                                               \
    std::vector<int64_t> dims;                                                                    \
    if (std::string(#shape) == "ROWS") dims = {int64_t(rows), int64_t(cols)};                     \
    if (std::string(#shape) == "BLOCK") dims = {int64_t(cols)};                                   \
    out.push_back({#name, StateTypeName<type>(), dims, unit, description, hashed != 0});          \
  }
  S2R_STATE_ARRAYS(S2R_STATE_INFO)
#undef S2R_STATE_INFO
  return out;
}

Engine::Engine(Model model, const EngineOptions& options)
    : model_(std::move(model)),
      options_(options),
      nworld_(options.nworld),
      real_overrides_(kNumModelFields),
      int_overrides_(kNumModelFields) {
  if (nworld_ < 1) throw std::invalid_argument("engine: nworld must be >= 1");
  view_ = model_.View();
  state_.Allocate(view_, nworld_);
  if (options_.backend == BackendKind::kCuda) {
    backend_ = MakeCudaBackend(state_.view, nworld_);
    if (!backend_) throw std::runtime_error("engine: this build of s2r has no CUDA backend (configure with S2R_CUDA=ON)");
  } else if (options_.backend == BackendKind::kCudaEmulation) {
    backend_ = MakeCudaEmulationBackend(state_.view, nworld_);
  } else {
    int threads = options_.threads > 0 ? options_.threads
                                       : static_cast<int>(std::thread::hardware_concurrency());
    backend_ = MakeCpuBackend(state_.view, nworld_, threads < 1 ? 1 : threads);
  }
  backend_->SetModel(view_, FieldId::kCount, nullptr, 0);
  Reset();
}

Engine::~Engine() = default;

int Engine::threads() const { return backend_->threads(); }

template <>
std::vector<std::vector<Real>>& Engine::Overrides<Real>() { return real_overrides_; }
template <>
std::vector<std::vector<int32_t>>& Engine::Overrides<int32_t>() { return int_overrides_; }

const char* Engine::StepBlockMemory() const { return backend_->StepBlockMemory(); }

void Backend::SetScratchProbe(bool) { throw std::runtime_error("the scratch probe runs on the CPU backend only"); }
std::vector<double> Backend::ScratchWritten() const {
  throw std::runtime_error("the scratch probe runs on the CPU backend only");
}

void Engine::SetScratchProbe(bool on) { backend_->SetScratchProbe(on); }

std::vector<std::pair<std::string, double>> Engine::ScratchWritten() const {
  static const char* const kNames[] = {
#define S2R_WORKSPACE_NAME(name, type, elements, lifetime, description) #name,
      S2R_WORKSPACE_ARRAYS(S2R_WORKSPACE_NAME)
#undef S2R_WORKSPACE_NAME
  };
  static constexpr bool kStepLife[] = {
#define S2R_WORKSPACE_STEP(name, type, elements, lifetime, description) \
  WorkspaceLifetime::k##lifetime == WorkspaceLifetime::kStep,
      S2R_WORKSPACE_ARRAYS(S2R_WORKSPACE_STEP)
#undef S2R_WORKSPACE_STEP
  };
  const std::vector<double> written = backend_->ScratchWritten();
  const WorkspaceLayout layout = ComputeWorkspaceLayout(view());
  std::vector<std::pair<std::string, double>> out;
  for (int a = 0; a < kNumWorkspaceArrays; ++a) {
    if (kStepLife[a] && layout.count[a] > 0) out.emplace_back(kNames[a], written[a]);
  }
  return out;
}

int64_t Engine::BytesPerWorld() const {
  int64_t bytes = 0;
  StateView v = state_.view;
  ForEachStateArray(v, [&bytes](const char*, auto* ptr, int64_t per_world, bool) {
    bytes += per_world * static_cast<int64_t>(sizeof(*ptr));
  });
  for (const auto& o : real_overrides_) bytes += static_cast<int64_t>(sizeof(Real) * o.size()) / nworld_;
  for (const auto& o : int_overrides_) bytes += static_cast<int64_t>(sizeof(int32_t) * o.size()) / nworld_;
  return bytes + backend_->ScratchBytesPerWorld();
}

std::vector<ParamInfo> Engine::Params() const {
  std::vector<ParamInfo> out;
  for (const FieldInfo& f : kModelFields) {
    if (f.cls != FieldClass::kParam) continue;
    out.push_back({f.name, FieldValuesPerWorld(model_, IdOf(f)), f.type == FieldType::kInt32});
  }
  return out;
}

void Engine::SetParam(const std::string& address, const std::vector<Real>& values) {
  const FieldAddress a = ResolveFieldAddress(model_, address);
  const int per_world = FieldValuesPerWorld(model_, a.field);
  const size_t n = a.elements.size();
  if (values.size() != n * nworld_) {
    throw std::invalid_argument("parameter '" + address + "': expected " + std::to_string(n * nworld_) + " values (" +
                                std::to_string(nworld_) + " worlds x " + std::to_string(n) + "), got " +
                                std::to_string(values.size()));
  }
  ForEachParam(model_, [&](FieldId id, const auto& model_values) {
    if (id != a.field) return;
    using T = typename std::remove_reference_t<decltype(model_values)>::value_type;
    std::vector<T>& overrides = Overrides<T>()[static_cast<int>(id)];
    // every world's values after the change, each checked against the field's bound
    std::vector<T> next(static_cast<size_t>(nworld_) * per_world);
    std::vector<double> block(per_world);
    for (int w = 0; w < nworld_; ++w) {
      const T* now = WorldValues(overrides, model_values, per_world, w);
      for (int k = 0; k < per_world; ++k) block[k] = static_cast<double>(now[k]);
      for (size_t i = 0; i < n; ++i) block[a.elements[i]] = static_cast<double>(values[w * n + i]);
      std::string error = FieldValuesError(model_, id, block.data());
      if (!error.empty()) throw std::invalid_argument("parameter '" + address + "' world " + std::to_string(w) + ": " + error);
      for (int k = 0; k < per_world; ++k) next[static_cast<size_t>(w) * per_world + k] = static_cast<T>(block[k]);
    }
    overrides = std::move(next);
  });
  RebuildView();
  backend_->SetModel(view_, a.field, nullptr, 0);
}

void Engine::SetParamForWorlds(const FieldAddress& a, const std::vector<int32_t>& worlds,
                               const std::vector<Real>& values) {
  const int per_world = FieldValuesPerWorld(model_, a.field);
  const size_t n = a.elements.size();
  if (values.size() != n * worlds.size()) {
    throw std::invalid_argument("parameter '" + a.text + "': expected " + std::to_string(n * worlds.size()) +
                                " values (" + std::to_string(worlds.size()) + " worlds x " + std::to_string(n) +
                                "), got " + std::to_string(values.size()));
  }
  for (int32_t w : worlds) {
    if (w < 0 || w >= nworld_) {
      throw std::invalid_argument("parameter '" + a.text + "': world " + std::to_string(w) + " is not in [0, " +
                                  std::to_string(nworld_ - 1) + "]");
    }
  }
  ForEachParam(model_, [&](FieldId id, const auto& model_values) {
    if (id != a.field) return;
    using T = typename std::remove_reference_t<decltype(model_values)>::value_type;
    std::vector<T>& overrides = Overrides<T>()[static_cast<int>(id)];
    // the listed worlds' new blocks, all checked before any is stored
    std::vector<std::vector<T>> blocks(worlds.size(), std::vector<T>(per_world));
    std::vector<double> block(per_world);
    for (size_t i = 0; i < worlds.size(); ++i) {
      const T* now = WorldValues(overrides, model_values, per_world, worlds[i]);
      for (int k = 0; k < per_world; ++k) block[k] = static_cast<double>(now[k]);
      for (size_t j = 0; j < n; ++j) block[a.elements[j]] = static_cast<double>(values[i * n + j]);
      std::string error = FieldValuesError(model_, id, block.data());
      if (!error.empty()) {
        throw std::invalid_argument("parameter '" + a.text + "' world " + std::to_string(worlds[i]) + ": " + error);
      }
      for (int k = 0; k < per_world; ++k) blocks[i][k] = static_cast<T>(block[k]);
    }
    if (overrides.empty()) {
      overrides.resize(static_cast<size_t>(nworld_) * per_world);
      for (int w = 0; w < nworld_; ++w) std::copy(model_values.begin(), model_values.end(), overrides.begin() + w * per_world);
    }
    for (size_t i = 0; i < worlds.size(); ++i) {
      std::copy(blocks[i].begin(), blocks[i].end(), overrides.begin() + static_cast<size_t>(worlds[i]) * per_world);
    }
  });
  RebuildView();
  backend_->SetModel(view_, a.field, worlds.data(), static_cast<int>(worlds.size()));
}

void Engine::ClearParam(const std::string& address) {
  const FieldAddress a = ResolveFieldAddress(model_, address);
  const int per_world = FieldValuesPerWorld(model_, a.field);
  ForEachParam(model_, [&](FieldId id, const auto& model_values) {
    if (id != a.field) return;
    using T = typename std::remove_reference_t<decltype(model_values)>::value_type;
    std::vector<T>& overrides = Overrides<T>()[static_cast<int>(id)];
    if (a.whole_field) {
      overrides.clear();
      return;
    }
    if (overrides.empty()) return;
    for (int w = 0; w < nworld_; ++w) {
      for (int e : a.elements) overrides[static_cast<size_t>(w) * per_world + e] = model_values[e];
    }
  });
  RebuildView();
  backend_->SetModel(view_, a.field, nullptr, 0);
}

std::vector<Real> Engine::GetParam(const std::string& address, int world) const {
  const FieldAddress a = ResolveFieldAddress(model_, address);
  if (world < 0 || world >= nworld_) {
    throw std::invalid_argument("parameter '" + address + "': world " + std::to_string(world) + " is not in [0, " +
                                std::to_string(nworld_ - 1) + "]");
  }
  std::vector<Real> out;
  ForEachParam(view_, [&](FieldId id, const auto& field) {
    if (id != a.field) return;
    for (int e : a.elements) out.push_back(static_cast<Real>(field.At(world)[e]));
  });
  return out;
}

void Engine::RebuildView() {
  view_ = model_.View();
  ForEachParam(view_, [this](FieldId id, auto& field) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(field.data)>>;
    const std::vector<T>& overrides = Overrides<T>()[static_cast<int>(id)];
    if (!overrides.empty()) field = Batched<T>{overrides.data(), static_cast<int32_t>(overrides.size() / nworld_)};
  });
}

void Engine::Reset() { backend_->Reset(); }
void Engine::ResetWorlds(const std::vector<int32_t>& worlds) {
  for (int32_t w : worlds) {
    if (w < 0 || w >= nworld_) {
      throw std::invalid_argument("ResetWorlds: world " + std::to_string(w) + " is not in [0, " +
                                  std::to_string(nworld_ - 1) + "]");
    }
  }
  backend_->ResetWorlds(worlds.data(), static_cast<int>(worlds.size()));
}
void Engine::Step(const Real* actions) { backend_->Step(actions, 1); }
void Engine::StepMany(const Real* actions, int nsteps) {
  if (nsteps < 1) throw std::invalid_argument("StepMany: nsteps must be >= 1, got " + std::to_string(nsteps));
  backend_->Step(actions, nsteps);
}
void Engine::Synchronize() { backend_->Synchronize(); }
void Engine::Download() { backend_->Download(state_.view); }
std::unique_ptr<SweepBuffers> Engine::MakeSweepBuffers(const SweepStepArgs& shape) {
  return backend_->MakeSweepBuffers(shape);
}
void Engine::Upload() { backend_->Upload(state_.view, nullptr, 0); }
void Engine::UploadWorlds(const std::vector<int32_t>& worlds) {
  backend_->Upload(state_.view, worlds.data(), static_cast<int>(worlds.size()));
}

uint64_t Engine::StateHash() const {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* data, size_t bytes) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
      h ^= p[i];
      h *= 1099511628211ull;
    }
  };
  StateView v = state_.view;
  ForEachStateArray(v, [&](const char*, auto* ptr, int64_t per_world, bool hashed) {
    if (hashed) mix(ptr, static_cast<size_t>(per_world) * nworld_ * sizeof(*ptr));
  });
  return h;
}

bool CudaAvailable() { return CudaBackendCompiled() && CudaDevicePresent(); }
bool BackendAvailable(BackendKind kind) { return kind != BackendKind::kCuda || CudaAvailable(); }

BackendKind ParseBackendKind(const std::string& name, const char* flag) {
  if (name == "cpu") return BackendKind::kCpu;
  if (name == "cuda") return BackendKind::kCuda;
  if (name == "cuda-emulation") return BackendKind::kCudaEmulation;
  throw std::runtime_error(std::string(flag) + " must be cpu, cuda or cuda-emulation, got '" + name + "'");
}
const char* BackendKindName(BackendKind kind) {
  switch (kind) {
    case BackendKind::kCpu: return "cpu";
    case BackendKind::kCuda: return "cuda";
    case BackendKind::kCudaEmulation: return "cuda-emulation";
  }
  return "?";
}

}  // namespace s2r
