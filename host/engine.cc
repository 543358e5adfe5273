#include "host/engine.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "host/backend.h"

namespace s2r {
namespace {

struct RealField {
  const char* name;
  Batched<Real> ModelView::*view_member;
  std::vector<Real> Model::*model_member;
  int per_item;      // values per entity
  char count_of;     // 'b' bodies, 'g' geoms, 'j' joints, 'a' actuators, '1' scalar
  bool positive;     // must be > 0
  bool non_negative; // must be >= 0
};

// every per-world Real field; the order is the documentation order
const RealField kRealFields[] = {
    {"gravity", &ModelView::gravity, &Model::gravity, 3, '1', false, false},
    {"body_mass", &ModelView::body_mass, &Model::body_mass, 1, 'b', false, true},
    {"body_inertia", &ModelView::body_inertia, &Model::body_inertia, 3, 'b', false, true},
    {"body_ipos", &ModelView::body_ipos, &Model::body_ipos, 3, 'b', false, false},
    {"body_iquat", &ModelView::body_iquat, &Model::body_iquat, 4, 'b', false, false},
    {"body_pos0", &ModelView::body_pos0, &Model::body_pos0, 3, 'b', false, false},
    {"body_quat0", &ModelView::body_quat0, &Model::body_quat0, 4, 'b', false, false},
    {"body_linvel0", &ModelView::body_linvel0, &Model::body_linvel0, 3, 'b', false, false},
    {"body_angvel0", &ModelView::body_angvel0, &Model::body_angvel0, 3, 'b', false, false},
    {"geom_size", &ModelView::geom_size, &Model::geom_size, 3, 'g', false, true},
    {"geom_pos", &ModelView::geom_pos, &Model::geom_pos, 3, 'g', false, false},
    {"geom_quat", &ModelView::geom_quat, &Model::geom_quat, 4, 'g', false, false},
    {"geom_friction", &ModelView::geom_friction, &Model::geom_friction, 1, 'g', false, true},
    {"geom_restitution", &ModelView::geom_restitution, &Model::geom_restitution, 1, 'g', false, true},
    {"joint_range", &ModelView::joint_range, &Model::joint_range, 2, 'j', false, false},
    {"joint_damping", &ModelView::joint_damping, &Model::joint_damping, 1, 'j', false, true},
    {"joint_frictionloss", &ModelView::joint_frictionloss, &Model::joint_frictionloss, 1, 'j', false, true},
    {"joint_armature", &ModelView::joint_armature, &Model::joint_armature, 1, 'j', false, true},
    {"joint_qpos0", &ModelView::joint_qpos0, &Model::joint_qpos0, 1, 'j', false, false},
    {"joint_qvel0", &ModelView::joint_qvel0, &Model::joint_qvel0, 1, 'j', false, false},
    {"actuator_gear", &ModelView::actuator_gear, &Model::actuator_gear, 6, 'a', false, false},
    {"actuator_kp", &ModelView::actuator_kp, &Model::actuator_kp, 1, 'a', false, true},
    {"actuator_kv", &ModelView::actuator_kv, &Model::actuator_kv, 1, 'a', false, true},
    {"actuator_ctrlrange", &ModelView::actuator_ctrlrange, &Model::actuator_ctrlrange, 2, 'a', false, false},
    {"actuator_forcerange", &ModelView::actuator_forcerange, &Model::actuator_forcerange, 2, 'a', false, false},
    {"contact_hertz", &ModelView::contact_hertz, &Model::contact_hertz, 1, '1', true, false},
    {"contact_damping_ratio", &ModelView::contact_damping_ratio, &Model::contact_damping_ratio, 1, '1', false, true},
    {"joint_hertz", &ModelView::joint_hertz, &Model::joint_hertz, 1, '1', true, false},
    {"joint_damping_ratio", &ModelView::joint_damping_ratio, &Model::joint_damping_ratio, 1, '1', false, true},
    {"contact_push_velocity", &ModelView::contact_push_velocity, &Model::contact_push_velocity, 1, '1', true, false},
    {"restitution_threshold", &ModelView::restitution_threshold, &Model::restitution_threshold, 1, '1', false, true},
    {"linear_slop", &ModelView::linear_slop, &Model::linear_slop, 1, '1', false, true},
    {"speculative_distance", &ModelView::speculative_distance, &Model::speculative_distance, 1, '1', false, true},
    {"max_linear_speed", &ModelView::max_linear_speed, &Model::max_linear_speed, 1, '1', true, false},
};

int Count(const Model& m, char c) {
  switch (c) {
    case 'b': return m.nbody();
    case 'g': return m.ngeom();
    case 'j': return m.njoint();
    case 'a': return m.nactuator();
    default: return 1;
  }
}

const RealField* FindField(const std::string& name) {
  for (const RealField& f : kRealFields) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

template <typename T>
void Resize(std::vector<T>* v, size_t n) { v->assign(n, T{}); }

}  // namespace

void HostState::Allocate(const ModelView& m, int nworld) {
  size_t nw = nworld;
  Resize(&body_pos, nw * m.nbody * 3);
  Resize(&body_quat, nw * m.nbody * 4);
  Resize(&body_linvel, nw * m.nbody * 3);
  Resize(&body_angvel, nw * m.nbody * 3);
  Resize(&ctrl_queue, nw * m.latency_capacity * m.nactuator);
  Resize(&ctrl, nw * m.nactuator);
  Resize(&joint_impulse, nw * m.njoint * kJointImpulseSlots);
  Resize(&actuator_impulse, nw * m.nactuator);
  Resize(&actuator_force, nw * m.nactuator);
  Resize(&time, nw);
  Resize(&contacts, nw * m.max_contacts);
  Resize(&contact_count, nw);
  Resize(&status, nw);
  Resize(&contact_overflow, nw);
  Resize(&control_step, nw);
  view = StateView{};
  view.nworld = nworld;
  view.nbody = m.nbody;
  view.nactuator = m.nactuator;
  view.njoint = m.njoint;
  view.max_contacts = m.max_contacts;
  view.latency_capacity = m.latency_capacity;
  view.body_pos_ = body_pos.data();
  view.body_quat_ = body_quat.data();
  view.body_linvel_ = body_linvel.data();
  view.body_angvel_ = body_angvel.data();
  view.ctrl_queue_ = ctrl_queue.data();
  view.ctrl_ = ctrl.data();
  view.joint_impulse_ = joint_impulse.data();
  view.actuator_impulse_ = actuator_impulse.data();
  view.actuator_force_ = actuator_force.data();
  view.contacts_ = contacts.data();
  view.contact_count_ = contact_count.data();
  view.contact_overflow_ = contact_overflow.data();
  view.status_ = status.data();
  view.control_step_ = control_step.data();
  view.time_ = time.data();
}

Engine::Engine(Model model, const EngineOptions& options)
    : model_(std::move(model)), options_(options), nworld_(options.nworld) {
  if (nworld_ < 1) throw std::invalid_argument("engine: nworld must be >= 1");
  view_ = model_.View();
  state_.Allocate(view_, nworld_);
  if (options_.backend == BackendKind::kCuda) {
    backend_ = MakeCudaBackend(state_.view, nworld_);
    if (!backend_) throw std::runtime_error("engine: this build of s2r has no CUDA backend (configure with S2R_CUDA=ON)");
  } else {
    int threads = options_.threads > 0 ? options_.threads
                                       : static_cast<int>(std::thread::hardware_concurrency());
    backend_ = MakeCpuBackend(state_.view, nworld_, threads < 1 ? 1 : threads);
  }
  backend_->SetModel(view_, "");
  Reset();
}

Engine::~Engine() = default;

int Engine::threads() const { return backend_->threads(); }

int64_t Engine::BytesPerWorld() const {
  const ModelView& m = view_;
  int64_t state = sizeof(Real) * (m.nbody * 13 + m.latency_capacity * m.nactuator + 3 * m.nactuator +
                                  m.njoint * kJointImpulseSlots + 1) +
                  sizeof(Contact) * m.max_contacts + 4 * 2 + 8 * 2;
  int64_t params = 0;
  for (const auto& o : overrides_) params += sizeof(Real) * o.second.size() / nworld_;
  return state + params + backend_->ScratchBytesPerWorld();
}

std::vector<ParamInfo> Engine::Params() const {
  std::vector<ParamInfo> out;
  for (const RealField& f : kRealFields) out.push_back({f.name, f.per_item * Count(model_, f.count_of), false});
  out.push_back({"latency_steps", 1, true});
  return out;
}

void Engine::SetParam(const std::string& name, const std::vector<Real>& values) {
  if (name == "latency_steps") {
    if (values.size() != static_cast<size_t>(nworld_)) {
      throw std::invalid_argument("parameter 'latency_steps': expected " + std::to_string(nworld_) + " values, got " + std::to_string(values.size()));
    }
    std::vector<int32_t> ints(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      double v = values[i];
      if (!(v >= 0) || v >= model_.latency_capacity || v != std::floor(v)) {
        throw std::invalid_argument("parameter 'latency_steps' world " + std::to_string(i) + ": " + std::to_string(v) +
                                    " is not an integer in [0, " + std::to_string(model_.latency_capacity - 1) +
                                    "] (raise s2r_max_latency_steps)");
      }
      ints[i] = static_cast<int32_t>(v);
    }
    int_overrides_.clear();
    int_overrides_.emplace_back(name, std::move(ints));
    RebuildView();
    backend_->SetModel(view_, name);
    return;
  }
  const RealField* f = FindField(name);
  if (!f) throw std::invalid_argument("unknown parameter '" + name + "'");
  size_t per_world = static_cast<size_t>(f->per_item) * Count(model_, f->count_of);
  if (values.size() != per_world * nworld_) {
    throw std::invalid_argument("parameter '" + name + "': expected " + std::to_string(per_world * nworld_) +
                                " values (" + std::to_string(nworld_) + " worlds x " + std::to_string(per_world) +
                                "), got " + std::to_string(values.size()));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    double v = values[i];
    bool bad = !std::isfinite(v) || (f->positive && !(v > 0)) || (f->non_negative && !(v >= 0));
    if (bad) {
      throw std::invalid_argument("parameter '" + name + "' world " + std::to_string(i / per_world) + " element " +
                                  std::to_string(i % per_world) + ": invalid value " + std::to_string(v));
    }
  }
  bool found = false;
  for (auto& o : overrides_) {
    if (o.first == name) {
      o.second = values;
      found = true;
    }
  }
  if (!found) overrides_.emplace_back(name, values);
  RebuildView();
  backend_->SetModel(view_, name);
}

void Engine::ClearParam(const std::string& name) {
  for (size_t i = 0; i < overrides_.size(); ++i) {
    if (overrides_[i].first == name) overrides_.erase(overrides_.begin() + i);
  }
  if (name == "latency_steps") int_overrides_.clear();
  RebuildView();
  backend_->SetModel(view_, name);
}

std::vector<Real> Engine::GetParam(const std::string& name, int world) const {
  if (name == "latency_steps") return {static_cast<Real>(view_.latency_steps.At(world)[0])};
  const RealField* f = FindField(name);
  if (!f) throw std::invalid_argument("unknown parameter '" + name + "'");
  int per_world = f->per_item * Count(model_, f->count_of);
  const Real* p = (view_.*(f->view_member)).At(world);
  return std::vector<Real>(p, p + per_world);
}

void Engine::RebuildView() {
  view_ = model_.View();
  for (const auto& o : overrides_) {
    const RealField* f = FindField(o.first);
    view_.*(f->view_member) = Batched<Real>{o.second.data(), static_cast<int32_t>(o.second.size() / nworld_)};
  }
  for (const auto& o : int_overrides_) view_.latency_steps = Batched<int32_t>{o.second.data(), 1};
}

void Engine::Reset() { backend_->Reset(); }
void Engine::Step(const Real* actions) { backend_->Step(actions); }
void Engine::Download() { backend_->Download(state_.view); }
void Engine::Upload() { backend_->Upload(state_.view); }

uint64_t Engine::StateHash() const {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* data, size_t bytes) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) {
      h ^= p[i];
      h *= 1099511628211ull;
    }
  };
  mix(state_.body_pos.data(), state_.body_pos.size() * sizeof(Real));
  mix(state_.body_quat.data(), state_.body_quat.size() * sizeof(Real));
  mix(state_.body_linvel.data(), state_.body_linvel.size() * sizeof(Real));
  mix(state_.body_angvel.data(), state_.body_angvel.size() * sizeof(Real));
  return h;
}

bool CudaAvailable() { return CudaBackendCompiled() && CudaDevicePresent(); }

}  // namespace s2r
