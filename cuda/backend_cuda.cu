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

__global__ void ControlStepKernel(ModelView m, StateView s, DeviceWorkspaces dw,
                                  const Real* actions) {
  int world = blockIdx.x * blockDim.x + threadIdx.x;
  if (world >= s.nworld) return;
  Workspace ws{dw.bodies + static_cast<int64_t>(world) * m.nbody,
               dw.constraints + static_cast<int64_t>(world) * m.max_contacts,
               dw.manifolds + static_cast<int64_t>(world) * m.max_contacts,
               dw.contacts + static_cast<int64_t>(world) * m.max_contacts,
               dw.geom_xform + static_cast<int64_t>(world) * m.ngeom,
               dw.joint_qdot0 + static_cast<int64_t>(world) * (m.njoint + 1),
               dw.joint_frame + static_cast<int64_t>(world) * (m.njoint + 1),
               dw.joint_factor + static_cast<int64_t>(world) * (m.njoint + 1) * kJointFactorSize,
               dw.lock_factor ? dw.lock_factor + static_cast<int64_t>(world) * dw.lock_rows * dw.lock_rows : nullptr,
               dw.lock_scratch ? dw.lock_scratch + static_cast<int64_t>(world) * LockScratchSize(m) : nullptr,
               dw.reduced ? dw.reduced + static_cast<int64_t>(world) * ReducedScratchSize(m.nreduced) : nullptr,
               dw.reduced_valid + world,
               dw.axis_prep + static_cast<int64_t>(world) * AxisPrepSize(m),
               0};
  ControlStep(m, s, world, &ws, actions + static_cast<int64_t>(world) * m.nactuator);
}

int Blocks(int n) { return (n + kThreadsPerBlock - 1) / kThreadsPerBlock; }

}  // namespace

void LaunchResetWorlds(const ModelView& m, const StateView& s, void* stream) {
  ResetWorldsKernel<<<Blocks(s.nworld), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(m, s);
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

  void SetModel(const ModelView& v, const std::string& changed) override {
    NvtxRange range("s2r.upload_model");
    bool all = changed.empty();
    bool first = model_buffers_.empty();
    if (first) model_buffers_.resize(80);  // >= the slots used below
    model_ = v;
    int slot = 0;
    // topology and fixed frames: uploaded once
    auto fixed = [&](auto*& ptr, size_t count) {
      using T = std::remove_const_t<std::remove_pointer_t<std::remove_reference_t<decltype(ptr)>>>;
      DeviceBuffer& buf = model_buffers_[slot++];
      if (first) buf.Upload(ptr, count * sizeof(T), stream_);
      ptr = buf.get<T>();
    };
    // batched parameters: uploaded when they change (stride 0: one set, else nworld sets)
    auto batched = [&](auto& field, const char* name, size_t per_item_count) {
      using T = std::remove_const_t<std::remove_pointer_t<decltype(field.data)>>;
      DeviceBuffer& buf = model_buffers_[slot++];
      size_t count = field.world_stride == 0 ? per_item_count : size_t(field.world_stride) * nworld_;
      if (all || first || changed == name) buf.Upload(field.data, count * sizeof(T), stream_);
      field.data = buf.get<T>();
    };
    const int nb = v.nbody, ng = v.ngeom, nj = v.njoint, na = v.nactuator, ns = v.nsite;
    fixed(model_.body_parent, nb); fixed(model_.body_joint, nb); fixed(model_.body_dynamic, nb);
    fixed(model_.geom_type, ng); fixed(model_.geom_body, ng);
    fixed(model_.joint_type, nj); fixed(model_.joint_body, nj); fixed(model_.joint_parent, nj);
    fixed(model_.joint_limited, nj);
    fixed(model_.actuator_type, na); fixed(model_.actuator_trntype, na); fixed(model_.actuator_trnid, na);
    fixed(model_.actuator_ctrllimited, na); fixed(model_.actuator_forcelimited, na);
    fixed(model_.site_body, ns); fixed(model_.pair_geom, 2 * v.npair);
    fixed(model_.body_reduced, v.body_reduced ? nb : 0);
    fixed(model_.reduced_body, v.nreduced); fixed(model_.reduced_parent, v.nreduced);
    fixed(model_.joint_actuator, nj); fixed(model_.actuator_next, na);
    fixed(model_.joint_pos_child, 3 * nj); fixed(model_.joint_pos_parent, 3 * nj);
    fixed(model_.joint_axis_child, 3 * nj); fixed(model_.joint_axis_parent, 3 * nj);
    fixed(model_.joint_qrel0, 4 * nj); fixed(model_.site_pos, 3 * ns); fixed(model_.site_quat, 4 * ns);
    batched(model_.gravity, "gravity", 3);
    batched(model_.body_mass, "body_mass", nb);
    batched(model_.body_inertia, "body_inertia", 3 * nb);
    batched(model_.body_ipos, "body_ipos", 3 * nb);
    batched(model_.body_iquat, "body_iquat", 4 * nb);
    batched(model_.body_pos0, "body_pos0", 3 * nb);
    batched(model_.body_quat0, "body_quat0", 4 * nb);
    batched(model_.body_linvel0, "body_linvel0", 3 * nb);
    batched(model_.body_angvel0, "body_angvel0", 3 * nb);
    batched(model_.geom_size, "geom_size", 3 * ng);
    batched(model_.geom_pos, "geom_pos", 3 * ng);
    batched(model_.geom_quat, "geom_quat", 4 * ng);
    batched(model_.geom_friction, "geom_friction", ng);
    batched(model_.geom_restitution, "geom_restitution", ng);
    batched(model_.joint_range, "joint_range", 2 * nj);
    batched(model_.joint_damping, "joint_damping", nj);
    batched(model_.joint_frictionloss, "joint_frictionloss", nj);
    batched(model_.joint_armature, "joint_armature", nj);
    batched(model_.joint_qpos0, "joint_qpos0", nj);
    batched(model_.joint_qvel0, "joint_qvel0", nj);
    batched(model_.actuator_gear, "actuator_gear", 6 * na);
    batched(model_.actuator_kp, "actuator_kp", na);
    batched(model_.actuator_kv, "actuator_kv", na);
    batched(model_.actuator_ctrlrange, "actuator_ctrlrange", 2 * na);
    batched(model_.actuator_forcerange, "actuator_forcerange", 2 * na);
    batched(model_.latency_steps, "latency_steps", 1);
    batched(model_.contact_hertz, "contact_hertz", 1);
    batched(model_.contact_damping_ratio, "contact_damping_ratio", 1);
    batched(model_.joint_hertz, "joint_hertz", 1);
    batched(model_.joint_damping_ratio, "joint_damping_ratio", 1);
    batched(model_.contact_push_velocity, "contact_push_velocity", 1);
    batched(model_.restitution_threshold, "restitution_threshold", 1);
    batched(model_.linear_slop, "linear_slop", 1);
    batched(model_.speculative_distance, "speculative_distance", 1);
    batched(model_.max_linear_speed, "max_linear_speed", 1);
    if (first) AllocateState();
    InvalidateReduced();
    S2R_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void Reset() override {
    NvtxRange range("s2r.reset");
    InvalidateReduced();
    LaunchResetWorlds(model_, device_, stream_);
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
  void Upload(const StateView& h) override {
    InvalidateReduced();
    Copy(h, /*to_host=*/false);
  }
  int threads() const override { return 0; }
  int64_t ScratchBytesPerWorld() const override {
    return sizeof(SolverBody) * model_.nbody +
           (sizeof(ContactConstraint) + sizeof(ContactManifold) + sizeof(Contact)) * model_.max_contacts +
           sizeof(Transform) * model_.ngeom +
           (sizeof(Real) * (1 + kJointFactorSize) + sizeof(JointFrame)) * (model_.njoint + 1) +
           (lock_rows_ <= kMaxTreeLockRows ? sizeof(Real) * (lock_rows_ * lock_rows_ + LockScratchSize(model_)) : 0) +
           sizeof(Real) * ReducedScratchSize(model_.nreduced) + sizeof(uint32_t) +
           sizeof(Real) * AxisPrepSize(model_);
  }

 private:
  // the worlds' slide-tree blocks are rebuilt at their next step (parameters or state changed)
  void InvalidateReduced() {
    if (ws_reduced_valid_.get<void>() != nullptr) {
      S2R_CUDA_CHECK(cudaMemsetAsync(ws_reduced_valid_.get<void>(), 0, sizeof(uint32_t) * nworld_, stream_));
    }
  }

  struct StateArray {
    DeviceBuffer buf;
    size_t bytes;
  };

  void AllocateState() {
    const StateView& h = host_;
    device_ = h;
    state_arrays_.clear();
    state_arrays_.resize(16);
    int slot = 0;
    auto alloc = [&](auto*& ptr, size_t count) {
      using T = std::remove_pointer_t<std::remove_reference_t<decltype(ptr)>>;
      StateArray& a = state_arrays_[slot++];
      a.bytes = count * sizeof(T);
      a.buf.Resize(a.bytes);
      ptr = a.buf.get<T>();
    };
    size_t nw = nworld_;
    const ModelView& m = model_;
    alloc(device_.body_pos_, nw * m.nbody * 3);
    alloc(device_.body_quat_, nw * m.nbody * 4);
    alloc(device_.body_linvel_, nw * m.nbody * 3);
    alloc(device_.body_angvel_, nw * m.nbody * 3);
    alloc(device_.ctrl_queue_, nw * m.latency_capacity * m.nactuator);
    alloc(device_.ctrl_, nw * m.nactuator);
    alloc(device_.joint_impulse_, nw * m.njoint * kJointImpulseSlots);
    alloc(device_.actuator_impulse_, nw * m.nactuator);
    alloc(device_.actuator_force_, nw * m.nactuator);
    alloc(device_.contacts_, nw * m.max_contacts);
    alloc(device_.contact_count_, nw);
    alloc(device_.contact_overflow_, nw);
    alloc(device_.status_, nw);
    alloc(device_.control_step_, nw);
    alloc(device_.time_, nw);
    ws_bodies_.Resize(sizeof(SolverBody) * nw * m.nbody);
    ws_constraints_.Resize(sizeof(ContactConstraint) * nw * m.max_contacts);
    ws_manifolds_.Resize(sizeof(ContactManifold) * nw * m.max_contacts);
    ws_contacts_.Resize(sizeof(Contact) * nw * m.max_contacts);
    ws_xform_.Resize(sizeof(Transform) * nw * m.ngeom);
    ws_qdot0_.Resize(sizeof(Real) * nw * (m.njoint + 1));
    ws_frame_.Resize(sizeof(JointFrame) * nw * (m.njoint + 1));
    ws_factor_.Resize(sizeof(Real) * nw * (m.njoint + 1) * kJointFactorSize);
    lock_rows_ = TotalBlockRows(m);
    bool together = lock_rows_ > 0 && lock_rows_ <= kMaxTreeLockRows;
    ws_lock_factor_.Resize(together ? sizeof(Real) * nw * lock_rows_ * lock_rows_ : 0);
    ws_lock_scratch_.Resize(together ? sizeof(Real) * nw * LockScratchSize(m) : 0);
    ws_reduced_.Resize(sizeof(Real) * nw * ReducedScratchSize(m.nreduced));
    ws_reduced_valid_.Resize(sizeof(uint32_t) * nw);
    ws_axis_prep_.Resize(sizeof(Real) * nw * AxisPrepSize(m));
    workspaces_ = DeviceWorkspaces{ws_bodies_.get<SolverBody>(), ws_constraints_.get<ContactConstraint>(),
                                   ws_manifolds_.get<ContactManifold>(),
                                   ws_contacts_.get<Contact>(),  ws_xform_.get<Transform>(),
                                   ws_qdot0_.get<Real>(),        ws_frame_.get<JointFrame>(),
                                   ws_factor_.get<Real>(),
                                   together ? ws_lock_factor_.get<Real>() : nullptr,
                                   together ? ws_lock_scratch_.get<Real>() : nullptr, lock_rows_,
                                   m.nreduced > 0 ? ws_reduced_.get<Real>() : nullptr,
                                   ws_reduced_valid_.get<uint32_t>(), ws_axis_prep_.get<Real>()};
    size_t action_bytes = sizeof(Real) * nw * (m.nactuator > 0 ? m.nactuator : 1);
    S2R_CUDA_CHECK(cudaMallocHost(&pinned_actions_, action_bytes));
    actions_.Resize(action_bytes);
  }

  void Copy(const StateView& h, bool to_host) {
    void* host_ptrs[] = {h.body_pos_, h.body_quat_, h.body_linvel_, h.body_angvel_, h.ctrl_queue_,
                         h.ctrl_, h.joint_impulse_, h.actuator_impulse_, h.actuator_force_, h.contacts_,
                         h.contact_count_, h.contact_overflow_, h.status_, h.control_step_, h.time_};
    for (int i = 0; i < 15; ++i) {
      StateArray& a = state_arrays_[i];
      if (to_host) a.buf.Download(host_ptrs[i], a.bytes, stream_);
      else S2R_CUDA_CHECK(cudaMemcpyAsync(a.buf.get<void>(), host_ptrs[i], a.bytes, cudaMemcpyHostToDevice, stream_));
    }
    S2R_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  StateView host_;
  StateView device_;
  int nworld_;
  cudaStream_t stream_ = nullptr;
  ModelView model_;
  std::vector<DeviceBuffer> model_buffers_;
  std::vector<StateArray> state_arrays_;
  int lock_rows_ = 0;
  DeviceBuffer ws_lock_factor_, ws_lock_scratch_, ws_reduced_, ws_reduced_valid_, ws_axis_prep_;
  DeviceBuffer ws_bodies_, ws_constraints_, ws_manifolds_, ws_contacts_, ws_xform_, ws_qdot0_, ws_frame_, ws_factor_,
      actions_;
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
