// Backend interface between the Engine and the memory a batch is stepped in.
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/model_view.h"
#include "kernels/state_view.h"

namespace s2r {

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
  virtual void Step(const Real* actions) = 0;  // (nworld, nactuator) host array or null
  virtual void Download(const StateView& host) = 0;
  // `worlds` (nullptr: all) lists the worlds whose state was edited: only their kept data is dropped
  virtual void Upload(const StateView& host, const int32_t* worlds, int nworlds) = 0;
  virtual int threads() const = 0;
  virtual int64_t ScratchBytesPerWorld() const = 0;
};

std::unique_ptr<Backend> MakeCpuBackend(const StateView& host_state, int nworld, int threads);
// nullptr when CUDA support was not compiled in; throws std::runtime_error without a device
std::unique_ptr<Backend> MakeCudaBackend(const StateView& host_state, int nworld);
bool CudaBackendCompiled();
bool CudaDevicePresent();

}  // namespace s2r
