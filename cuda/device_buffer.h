// RAII device memory and a CUDA error check that throws with the failing call's text.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

// The same source serves the device build (nvcc, the CUDA runtime) and the emulated one (g++,
// cuda/emulation.h; cuda/backend_cuda_emulation.cc): each in a namespace of its own, so the two
// DeviceBuffer classes in one binary never meet.
#if defined(S2R_CUDA_EMULATION)
#include "cuda/emulation.h"
#define S2R_CUDA_NAMESPACE cuda_emulation
#else
#include <cuda_runtime.h>
#define S2R_CUDA_NAMESPACE cuda_device
#endif

namespace s2r {
namespace S2R_CUDA_NAMESPACE {

inline void CudaCheck(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(err));
  }
}
#define S2R_CUDA_CHECK(call) ::s2r::S2R_CUDA_NAMESPACE::CudaCheck((call), #call)

// owns one device allocation; moves, never copies
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) { Resize(bytes); }
  ~DeviceBuffer() { Free(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) { Free(); ptr_ = o.ptr_; bytes_ = o.bytes_; o.ptr_ = nullptr; o.bytes_ = 0; }
    return *this;
  }

  void Resize(size_t bytes) {
    if (bytes == bytes_) return;
    Free();
    if (bytes > 0) S2R_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
    bytes_ = bytes;
  }
  void Upload(const void* host, size_t bytes, cudaStream_t stream = 0) {
    Resize(bytes);
    if (bytes > 0) S2R_CUDA_CHECK(cudaMemcpyAsync(ptr_, host, bytes, cudaMemcpyHostToDevice, stream));
  }
  void Download(void* host, size_t bytes, cudaStream_t stream = 0) const {
    if (bytes > 0) S2R_CUDA_CHECK(cudaMemcpyAsync(host, ptr_, bytes, cudaMemcpyDeviceToHost, stream));
  }
  template <typename T>
  T* get() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void Free() {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace S2R_CUDA_NAMESPACE
}  // namespace s2r
