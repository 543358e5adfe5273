// The CUDA backend (cuda/backend_cuda.cu) compiled by g++ against cuda/emulation.h: its host code
// and kernels run on the CPU, with device memory the host cannot touch, streams that run only when
// waited for, and the launch and copy checks of emulation.h. The engine offers it as
// BackendKind::kCudaEmulation (`--backend cuda-emulation`) in every build, GPU or not, so the
// CUDA path's logic is tested in CI; what it cannot test is the device itself (docs/gpu.md).
#define S2R_CUDA_EMULATION 1
#include "cuda/backend_cuda.cu"
