// Built instead of cuda/backend_cuda.cu when s2r is configured without CUDA.
#include "host/backend.h"

namespace s2r {

std::unique_ptr<Backend> MakeCudaBackend(const StateView&, int) { return nullptr; }
bool CudaBackendCompiled() { return false; }
bool CudaDevicePresent() { return false; }

}  // namespace s2r
