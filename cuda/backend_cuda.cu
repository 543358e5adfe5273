// CUDA backend: model, state and per-world scratch on the device; one thread per world.
//
// This is the only CUDA translation unit (kernels, launchers and the Backend implementation), to
// keep the build to one nvcc invocation. The per-world functions are the same kernels/ code the
// CPU backend runs; nothing in a world's step uses atomics, so runs are reproducible.
#include <nvtx3/nvToolsExt.h>

#include <cstring>
#include <memory>
#include <type_traits>
#include <string>
#include <vector>

#include "cuda/device_buffer.h"
#include "cuda/launch.h"
#include "host/backend.h"

namespace s2r {
namespace {

constexpr int kThreadsPerBlock = 128;

__global__ void ResetWorldsKernel(ModelView m, StateView s) {
  int world = blockIdx.x * blockDim.x + threadIdx.x;
  if (world >= s.nworld) return;
  ResetWorld(m, s, world);
}

__global__ void ResetWorldListKernel(ModelView m, StateView s, DeviceWorkspaces dw, const int32_t* worlds,
                                     int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  int world = worlds[i];
  ResetWorld(m, s, world);
  Workspace ws = BindWorkspace(dw.layout, nullptr, dw.world_blocks + static_cast<int64_t>(world) * dw.layout.world_bytes);
  *ws.reduced_valid = 0u;
}

__global__ void ControlStepKernel(ModelView m, StateView s, DeviceWorkspaces dw,
                                  const Real* actions) {
  int world = blockIdx.x * blockDim.x + threadIdx.x;
  if (world >= s.nworld) return;
  Workspace ws = BindWorkspace(dw.layout, dw.step_blocks + static_cast<int64_t>(world) * dw.layout.step_bytes,
                               dw.world_blocks + static_cast<int64_t>(world) * dw.layout.world_bytes);
  ControlStep(m, s, world, &ws, actions + static_cast<int64_t>(world) * m.nactuator);
}

int Blocks(int n) { return (n + kThreadsPerBlock - 1) / kThreadsPerBlock; }

}  // namespace

void LaunchResetWorlds(const ModelView& m, const StateView& s, void* stream) {
  ResetWorldsKernel<<<Blocks(s.nworld), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(m, s);
  S2R_CUDA_CHECK(cudaGetLastError());
}

void LaunchResetWorldList(const ModelView& m, const StateView& s, const DeviceWorkspaces& ws, const int32_t* worlds,
                          int count, void* stream) {
  if (count <= 0) return;
  ResetWorldListKernel<<<Blocks(count), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(m, s, ws, worlds,
                                                                                                  count);
  S2R_CUDA_CHECK(cudaGetLastError());
}

void LaunchControlStep(const ModelView& m, const StateView& s, const DeviceWorkspaces& ws,
                       const Real* actions, void* stream) {
  ControlStepKernel<<<Blocks(s.nworld), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(m, s, ws, actions);
  S2R_CUDA_CHECK(cudaGetLastError());
}

namespace {

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
    if (stream_) cudaStreamDestroy(stream_);
    if (pinned_actions_) cudaFreeHost(pinned_actions_);
  }

  void SetModel(const ModelView& v, FieldId changed, const int32_t* worlds, int nworlds) override {
    NvtxRange range("s2r.upload_model");
    const bool first = !allocated_;
    model_ = v;
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
    if (first) AllocateState();
    if (worlds == nullptr || nworlds > 64) {
      InvalidateWorldBlocks();
    } else {
      const WorkspaceLayout& l = workspaces_.layout;
      const int64_t offset = l.offset[static_cast<int>(WorkspaceArray::reduced_valid)];
      for (int i = 0; i < nworlds; ++i) {
        S2R_CUDA_CHECK(cudaMemsetAsync(world_blocks_.get<char>() + int64_t(worlds[i]) * l.world_bytes + offset, 0,
                                       sizeof(uint32_t), stream_));
      }
    }
    S2R_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void Reset() override {
    NvtxRange range("s2r.reset");
    InvalidateWorldBlocks();
    LaunchResetWorlds(model_, device_, stream_);
    S2R_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void ResetWorlds(const int32_t* worlds, int count) override {
    NvtxRange range("s2r.reset_worlds");
    if (count <= 0) return;
    world_list_.Upload(worlds, sizeof(int32_t) * size_t(count), stream_);
    LaunchResetWorldList(model_, device_, workspaces_, world_list_.get<int32_t>(), count, stream_);
    S2R_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void Step(const Real* actions) override {
    NvtxRange range("s2r.control_step");
    size_t bytes = sizeof(Real) * size_t(nworld_) * (model_.nactuator > 0 ? model_.nactuator : 1);
    if (actions) {
      std::memcpy(pinned_actions_, actions, sizeof(Real) * size_t(nworld_) * model_.nactuator);
    } else {
      std::memset(pinned_actions_, 0, bytes);
    }
    actions_.Upload(pinned_actions_, bytes, stream_);
    LaunchControlStep(model_, device_, workspaces_, actions_.get<Real>(), stream_);
    S2R_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

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
    S2R_CUDA_CHECK(cudaMemset2DAsync(world_blocks_.get<char>() + offset, l.world_bytes, 0, sizeof(uint32_t), nworld_,
                                     stream_));
  }

  void AllocateState() {
    device_ = host_;
    ForEachStateArray(device_, [&](const char*, auto*& ptr, int64_t per_world, bool) {
      using T = std::remove_pointer_t<std::remove_reference_t<decltype(ptr)>>;
      StateArray a;
      a.bytes = size_t(nworld_) * size_t(per_world) * sizeof(T);
      a.buf.Resize(a.bytes);
      ptr = a.buf.get<T>();
      state_arrays_.push_back(std::move(a));
    });
    const ModelView& m = model_;
    size_t nw = nworld_;
    WorkspaceLayout layout = ComputeWorkspaceLayout(m);
    step_blocks_.Resize(size_t(layout.step_bytes) * nw);
    world_blocks_.Resize(size_t(layout.world_bytes) * nw);
    workspaces_ = DeviceWorkspaces{step_blocks_.get<char>(), world_blocks_.get<char>(), layout};
    size_t action_bytes = sizeof(Real) * nw * (m.nactuator > 0 ? m.nactuator : 1);
    S2R_CUDA_CHECK(cudaMallocHost(&pinned_actions_, action_bytes));
    actions_.Resize(action_bytes);
    allocated_ = true;
  }

  // every state array, in S2R_STATE_ARRAYS order, to or from the host copy
  void Copy(const StateView& h, bool to_host) {
    StateView host = h;
    size_t i = 0;
    ForEachStateArray(host, [&](const char*, auto* ptr, int64_t, bool) {
      StateArray& a = state_arrays_[i++];
      if (to_host) a.buf.Download(ptr, a.bytes, stream_);
      else S2R_CUDA_CHECK(cudaMemcpyAsync(a.buf.get<void>(), ptr, a.bytes, cudaMemcpyHostToDevice, stream_));
    });
    S2R_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  StateView host_;
  StateView device_;
  int nworld_;
  cudaStream_t stream_ = nullptr;
  ModelView model_;
  DeviceBuffer model_buffers_[kNumModelFields];  // by FieldId
  std::vector<StateArray> state_arrays_;        // in S2R_STATE_ARRAYS order
  bool allocated_ = false;
  DeviceBuffer step_blocks_, world_blocks_, actions_, world_list_;
  DeviceWorkspaces workspaces_{};
  Real* pinned_actions_ = nullptr;
};

}  // namespace

std::unique_ptr<Backend> MakeCudaBackend(const StateView& host_state, int nworld) {
  return std::make_unique<CudaBackend>(host_state, nworld);
}
bool CudaBackendCompiled() { return true; }
bool CudaDevicePresent() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

}  // namespace s2r
