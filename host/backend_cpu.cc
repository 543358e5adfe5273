// CPU backend: the kernels' world functions over a static partition of the worlds.
#include <algorithm>
#include <chrono>
#include <cstring>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif
#include <memory>
#include <new>
#include <vector>

#include "host/backend.h"
#include "host/thread_pool.h"
#include "kernels/step_world.h"

namespace s2r {
namespace {

// Allocations that own whole cache lines: the threads' scratch arrays are written every substep,
// and two threads' arrays sharing a line (the heap packs small blocks together) cost pick_lift
// 10 % of its 2-thread throughput in false sharing.
constexpr size_t kCacheLine = 64;
template <typename T>
struct LineAllocator {
  using value_type = T;
  LineAllocator() = default;
  template <typename U>
  LineAllocator(const LineAllocator<U>&) {}
  T* allocate(size_t n) {
    size_t bytes = (n * sizeof(T) + kCacheLine - 1) / kCacheLine * kCacheLine;
    return static_cast<T*>(::operator new(bytes, std::align_val_t(kCacheLine)));
  }
  void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t(kCacheLine)); }
  template <typename U>
  bool operator==(const LineAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const LineAllocator<U>&) const { return false; }
};
template <typename T>
using LineVector = std::vector<T, LineAllocator<T>>;

class CpuBackend : public Backend {
 public:
  CpuBackend(const StateView& state, int nworld, int threads)
      : state_(state), nworld_(nworld), pool_(threads), scratch_(threads) {}

  void SetModel(const ModelView& view, FieldId, const int32_t* worlds, int nworlds) override {
    model_ = view;
    // the step compiled for what the model contains (kernels/step_features.h)
    variant_ = StepVariantFor(StepFeaturesOf(model_));
    // a parameter change keeps the sizes: the blocks stay, and only the changed worlds' slide-tree
    // blocks are rebuilt at their next step
    WorkspaceLayout layout = ComputeWorkspaceLayout(model_);
    if (allocated_ && SameSizes(layout, layout_)) {
      if (worlds == nullptr) {
        InvalidateWorldBlocks();
      } else {
        for (int i = 0; i < nworlds; ++i) *BindWorkspace(layout_, nullptr, WorldBlock(worlds[i])).reduced_valid = 0u;
      }
      return;
    }
    // one step block per thread; one world block per world (the slide-tree blocks)
    layout_ = layout;
    step_blocks_.assign(static_cast<size_t>(layout_.step_bytes) * scratch_.size(), 0);
    world_blocks_.assign(static_cast<size_t>(layout_.world_bytes) * nworld_, 0);
    for (size_t t = 0; t < scratch_.size(); ++t) {
      scratch_[t].ws = BindWorkspace(layout_, step_blocks_.data() + t * layout_.step_bytes, nullptr);
    }
    allocated_ = true;
    InvalidateWorldBlocks();
  }
  void Reset() override {
    InvalidateWorldBlocks();
    pool_.ParallelFor(nworld_, [this](int begin, int end, int) {
      for (int w = begin; w < end; ++w) ResetWorld(model_, state_, w);
    });
  }
  void ResetWorlds(const int32_t* worlds, int count) override {
    for (int i = 0; i < count; ++i) {
      ResetWorld(model_, state_, worlds[i]);
      Workspace world = BindWorkspace(layout_, nullptr, WorldBlock(worlds[i]));
      *world.reduced_valid = 0u;
    }
  }
  // a world's steps one after another: its state stays in cache between them
  void Step(const Real* actions, int nsteps) override {
    int nact = model_.nactuator;
    const int64_t step_stride = int64_t(nworld_) * nact;  // between one step's actions and the next's
    std::vector<Real> zeros;
    if (!actions) {
      zeros.assign(static_cast<size_t>(nworld_) * (nact > 0 ? nact : 1), Real(0));
      actions = zeros.data();
    }
    const int64_t stride = zeros.empty() ? step_stride : 0;
    WithStepVariant(variant_, [&](auto features) {
      if (!probe_.empty()) {  // its own loop: the stepping loop below stays as it is
        pool_.ParallelFor(nworld_, [&](int begin, int end, int t) {
          Workspace* ws = &scratch_[t].ws;
          char* block = step_blocks_.data() + t * layout_.step_bytes;
          for (int w = begin; w < end; ++w) {
            BindWorldBlock(ws, w);
            for (int k = 0; k < nsteps; ++k) {
              std::memset(block, kProbeMarker, static_cast<size_t>(layout_.step_bytes));
              ControlStep<features.value>(model_, state_, w, ws, actions + k * stride + static_cast<int64_t>(w) * nact);
              CountWritten(block, &probe_[t]);
            }
          }
        });
        return;
      }
      pool_.ParallelFor(nworld_, [&](int begin, int end, int t) {
        Workspace* ws = &scratch_[t].ws;
        for (int w = begin; w < end; ++w) {
          if (w + 1 < end) PrefetchContacts(w + 1);
          BindWorldBlock(ws, w);
          for (int k = 0; k < nsteps; ++k) {
            ControlStep<features.value>(model_, state_, w, ws, actions + k * stride + static_cast<int64_t>(w) * nact);
          }
        }
      });
    });
  }

  void SetScratchProbe(bool on) override {
    probe_.clear();
    if (on) probe_.assign(scratch_.size(), std::vector<double>(kNumWorkspaceArrays + 1, 0.0));
  }
  std::vector<double> ScratchWritten() const override {
    std::vector<double> out(kNumWorkspaceArrays, 0.0);
    double samples = 0;
    for (const std::vector<double>& t : probe_) {
      for (int a = 0; a < kNumWorkspaceArrays; ++a) out[a] += t[a];
      samples += t[kNumWorkspaceArrays];
    }
    for (double& v : out) v = samples > 0 ? v / samples : 0.0;
    return out;
  }
  // Last step's contacts of world w (read to warm-start its next step) sit contact_capacity apart per
  // world, a stride the hardware prefetcher does not follow: fetch the first few lines while the
  // world before steps (with thousands of worlds they are no longer in cache). Not sized by the
  // world's contact count: waiting for that load stalled the loop more than the prefetch saved.
  void PrefetchContacts(int w) const {
    const char* p = reinterpret_cast<const char*>(state_.contacts(w));
    int64_t bytes = std::min<int64_t>(int64_t{sizeof(Contact)} * model_.contact_capacity, int64_t{8 * kCacheLine});
    for (int64_t off = 0; off < bytes; off += int64_t{kCacheLine}) __builtin_prefetch(p + off);
  }
  // The lines a sweep step of world w reads first, before its physics touches anything: its
  // SweepWorld (episode flags, task and observation state) and the recorded bodies' pose and
  // velocity. Fetched while the world before steps; each was a cache miss at the top of
  // the world's pass otherwise.
  void PrefetchSweepWorld(const SweepStepArgs& a, int w) const {
    const char* p = reinterpret_cast<const char*>(a.worlds + w);
    for (size_t off = 0; off < sizeof(SweepWorld); off += size_t{kCacheLine}) __builtin_prefetch(p + off);
    if (a.nbody > 0) {
      const int b = a.body[0];
      const Real* arrays[] = {state_.body_pos(w, b), state_.body_quat(w, b), state_.body_linvel(w, b),
                              state_.body_angvel(w, b)};
      for (const Real* q : arrays) __builtin_prefetch(q);
    }
  }
  void Download(const StateView&) override {}
  // the host state is the backend's state; an upload means it was edited (the trees' fixed
  // parents may have moved)
  void Upload(const StateView&, const int32_t* worlds, int nworlds) override {
    if (worlds == nullptr) {
      InvalidateWorldBlocks();
      return;
    }
    for (int i = 0; i < nworlds; ++i) *BindWorkspace(layout_, nullptr, WorldBlock(worlds[i])).reduced_valid = 0u;
  }
  int threads() const override { return pool_.size(); }
  // the world blocks; the step blocks are per thread, not per world
  int64_t ScratchBytesPerWorld() const override { return layout_.world_bytes; }
  std::unique_ptr<SweepBuffers> MakeSweepBuffers(const SweepStepArgs& shape) override;

  // one pass of a sweep: every world's SweepWorldPass in `mode` (kernels/sweep_step.h: up to
  // args.steps control steps of the expert or a policy network, or a policy process's observation,
  // or its actions and the next observation: SweepBuffers::Observe, ActAndObserve) in one parallel
  // pass. The time in ControlStep (the pass's
  // `physics`, wrapped) is summed per thread: two reads of the time-stamp counter per world and
  // step, a few nanoseconds (a clock_gettime pair cost about 1 % of a box-push step), so the sweep
  // can say what it adds to the physics of its own trajectories
  void SweepStep(const SweepStepArgs& args, const std::function<void()>& overlap, int mode = kSweepExpert) {
    if (sweep_steps_++ == 0) tick_start_ = {Ticks(), std::chrono::steady_clock::now()};
    WithStepVariant(variant_, [&](auto features) {
      pool_.ParallelFor(nworld_, [&](int begin, int end, int t) {
        Workspace* ws = &scratch_[t].ws;
        uint64_t physics = 0, net = 0;
        using Features = decltype(features);
        struct Timed {  // ControlStep and a policy network's forward pass, timed
          uint64_t* physics;
          uint64_t* net;
          void operator()(const ModelView& m, const StateView& s, int world, Workspace* wsp, const Real* act) const {
            const uint64_t t0 = Ticks();
            ControlStep<Features::value>(m, s, world, wsp, act);
            *physics += Ticks() - t0;
          }
          void Net(const PolicyNet& n, float* x, float* scratch, float* out, int hidden) const {
            const uint64_t t0 = Ticks();
            NetForward(n, x, scratch, out, hidden);
            *net += Ticks() - t0;
          }
        };
        const Timed timed{&physics, &net};
        for (int w = begin; w < end; ++w) {
          if (w + 1 < end) {
            PrefetchContacts(w + 1);
            PrefetchSweepWorld(args, w + 1);
          }
          BindWorldBlock(ws, w);
          if (mode == kSweepObserve) {
            SweepWorldPass<features.value, kSweepObserve>(args, model_, state_, w, ws, timed);
          } else if (mode == kSweepActObserve) {
            SweepWorldPass<features.value, kSweepActObserve>(args, model_, state_, w, ws, timed);
          } else if (mode == kSweepNet) {
            SweepWorldPass<features.value, kSweepNet>(args, model_, state_, w, ws, timed);
          } else {
            SweepWorldPass<features.value, kSweepExpert>(args, model_, state_, w, ws, timed);
          }
        }
        scratch_[t].physics += physics;
        scratch_[t].net += net;
      }, overlap);
    });
  }
  // thread-seconds in ControlStep during sweep steps, over the threads (the ticks converted at
  // the rate they ran since the first sweep step)
  double SweepPhysicsSeconds(bool net = false) const {
    if (sweep_steps_ == 0) return 0;
    uint64_t sum = 0;
    for (const ThreadWorkspace& t : scratch_) sum += net ? t.net : t.physics;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - tick_start_.time).count();
    const double ticks = double(Ticks() - tick_start_.ticks);
    if (!(seconds > 0) || !(ticks > 0)) return 0;
    return double(sum) * (seconds / ticks) / static_cast<double>(scratch_.size());
  }
  int nworld() const { return nworld_; }

 private:
  static bool SameSizes(const WorkspaceLayout& a, const WorkspaceLayout& b) {
    if (a.step_bytes != b.step_bytes || a.world_bytes != b.world_bytes) return false;
    for (int i = 0; i < kNumWorkspaceArrays; ++i) {
      if (a.offset[i] != b.offset[i] || a.count[i] != b.count[i]) return false;
    }
    return true;
  }
  // the scratch probe's marker, and its count of one step: per Step-lifetime array, the bytes from
  // its offset to the next array's (its padding included) that no longer hold the marker
  static constexpr int kProbeMarker = 0xA5;
  void CountWritten(const char* block, std::vector<double>* sums) const {
    static constexpr bool kStepLife[] = {
#define S2R_STEP_LIFE(name, type, elements, lifetime, description) \
  WorkspaceLifetime::k##lifetime == WorkspaceLifetime::kStep,
        S2R_WORKSPACE_ARRAYS(S2R_STEP_LIFE)
#undef S2R_STEP_LIFE
    };
    for (int a = 0; a < kNumWorkspaceArrays; ++a) {
      if (!kStepLife[a] || layout_.count[a] == 0) continue;
      int64_t end = layout_.step_bytes;
      for (int b = 0; b < kNumWorkspaceArrays; ++b) {
        if (kStepLife[b] && layout_.count[b] > 0 && layout_.offset[b] > layout_.offset[a]) {
          end = std::min(end, layout_.offset[b]);
        }
      }
      int64_t n = 0;
      for (int64_t i = layout_.offset[a]; i < end; ++i) n += static_cast<unsigned char>(block[i]) != kProbeMarker;
      (*sums)[a] += double(n);
    }
    (*sums)[kNumWorkspaceArrays] += 1;  // world control steps
  }
  // the World-lifetime arrays of world w (kernels/workspace.h)
  char* WorldBlock(int w) { return world_blocks_.data() + static_cast<size_t>(w) * layout_.world_bytes; }
  void BindWorldBlock(Workspace* ws, int w) {
    Workspace world = BindWorkspace(layout_, nullptr, WorldBlock(w));
    ws->reduced = world.reduced;
    ws->reduced_valid = world.reduced_valid;
  }
  // every world's slide-tree block is rebuilt at its next step
  void InvalidateWorldBlocks() {
    for (int w = 0; w < nworld_; ++w) {
      Workspace world = BindWorkspace(layout_, nullptr, WorldBlock(w));
      *world.reduced_valid = 0u;
    }
  }

  StateView state_;
  int nworld_;
  ModelView model_;
  int variant_ = kStepVariantCount - 1;  // index into kStepVariants
  ThreadPool pool_;
  WorkspaceLayout layout_{};
  bool allocated_ = false;
  LineVector<char> step_blocks_;   // (threads, step_bytes)
  LineVector<char> world_blocks_;  // (nworld, world_bytes)
  // per thread, while the scratch probe is on: bytes written per array, then the steps counted
  std::vector<std::vector<double>> probe_;
  // per thread: its step block bound, the world arrays rebound per world; a cache line each, as
  // the world arrays' pointers are written for every world
  struct alignas(kCacheLine) ThreadWorkspace {
    Workspace ws;
    uint64_t physics = 0;  // Ticks() in ControlStep during sweep steps
    uint64_t net = 0;      // ... and in a policy network's forward passes (kSweepNet)
  };
  // a cheap monotonic counter: the time-stamp counter on x86 (constant-rate on the CPUs s2r
  // targets), steady-clock nanoseconds elsewhere
  static uint64_t Ticks() {
#if defined(__x86_64__)
    return __rdtsc();
#else
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch()).count());
#endif
  }
  struct TickStart {
    uint64_t ticks = 0;
    std::chrono::steady_clock::time_point time;
  };
  TickStart tick_start_;
  int64_t sweep_steps_ = 0;
  std::vector<ThreadWorkspace> scratch_;
};

// The sweep's buffers in host memory: the mirror is what the step runs on. Each world records into
// row buffers of its own, which TakeRows swaps out to the finished episode.
class CpuSweepBuffers : public SweepBuffers {
 public:
  CpuSweepBuffers(CpuBackend* backend, const SweepStepArgs& shape) : backend_(backend) {
    host_ = shape;
    const size_t nw = static_cast<size_t>(backend->nworld());
    worlds_.assign(nw, SweepWorld{});
    for (SweepWorld& w : worlds_) w.episode = -1;
    task_params_.assign(nw * kTaskMaxParams, Real(0));
    actions_.assign(nw * static_cast<size_t>(shape.action_stride), Real(0));
    if (shape.action_noise.active) noise_state_.assign(nw * kTaskMaxActuators, Real(0));
    rows_.resize(nw);
    pointers_.resize(nw);
    for (size_t w = 0; w < nw; ++w) Fit(static_cast<int>(w));
    ended_.assign(nw, 0);
    stepped_.assign(nw, 0);
    host_.worlds = worlds_.data();
    host_.task_params = task_params_.data();
    host_.actions = actions_.data();
    host_.noise_state = shape.action_noise.active ? noise_state_.data() : nullptr;
    host_.state_rows = host_.obs_rows = host_.action_rows = host_.expert_rows = host_.input_rows = nullptr;
    host_.world_rows = pointers_.data();
    host_.ended = ended_.data();
    host_.stepped = stepped_.data();
  }
  void Begin(const int32_t*, int) override {}
  // the expert's pass, or a policy network's (host_.net)
  void Step(const std::function<void()>& overlap) override {
    backend_->SweepStep(host_, overlap, host_.net.nlayer > 0 ? kSweepNet : kSweepExpert);
  }
  void Observe() override {
    if (policy_rows_.empty()) {
      policy_rows_.resize(static_cast<size_t>(backend_->nworld()));
      host_.policy_rows = policy_rows_.data();
    }
    backend_->SweepStep(host_, {}, kSweepObserve);
  }
  void ActAndObserve(const std::function<void()>& overlap) override {
    backend_->SweepStep(host_, overlap, kSweepActObserve);
  }
  double PhysicsSeconds() const override { return backend_->SweepPhysicsSeconds(); }
  double NetSeconds() const override { return backend_->SweepPhysicsSeconds(/*net=*/true); }
  void Fetch(const int32_t* worlds, int count, std::vector<FetchedEpisode>* out) override {
    out->clear();
    for (int i = 0; i < count; ++i) {
      const SweepRows& r = pointers_[static_cast<size_t>(worlds[i])];
      out->push_back({&worlds_[worlds[i]], r.state, r.obs, r.action, r.expert, r.inputs});
    }
  }
  bool TakeRows(int w, RowVector* state, RowVector* obs, RowVector* action, RowVector* expert,
                RowVector* inputs) override {
    Rows& r = rows_[static_cast<size_t>(w)];
    r.state.swap(*state);
    r.obs.swap(*obs);
    r.action.swap(*action);
    if (host_.expert_labels) r.expert.swap(*expert);
    if (host_.input_row > 0) r.inputs.swap(*inputs);
    Fit(w);
    return true;
  }

 private:
  struct Rows {
    RowVector state, obs, action, expert;  // expert: where the sweep records the expert's labels
    RowVector inputs;                      // where it records a policy's other inputs
  };
  // world w's buffers hold a whole horizon (they may come back shorter from an episode record;
  // growing within their capacity neither allocates nor writes)
  void Fit(int w) {
    Rows& r = rows_[static_cast<size_t>(w)];
    const size_t h = static_cast<size_t>(host_.horizon);
    r.state.resize(std::max<size_t>(h * static_cast<size_t>(host_.state_row()), 1));
    r.obs.resize(h * kObsSize);
    r.action.resize(std::max<size_t>(h * static_cast<size_t>(host_.nactuator), 1));
    if (host_.expert_labels) r.expert.resize(std::max<size_t>(h * static_cast<size_t>(host_.nactuator), 1));
    if (host_.input_row > 0) r.inputs.resize(h * static_cast<size_t>(host_.input_row));
    pointers_[static_cast<size_t>(w)] = {r.state.data(), r.obs.data(), r.action.data(),
                                         host_.expert_labels ? r.expert.data() : nullptr,
                                         host_.input_row > 0 ? r.inputs.data() : nullptr};
  }

  CpuBackend* backend_;
  LineVector<SweepWorld> worlds_;
  LineVector<Real> task_params_, actions_, noise_state_;
  std::vector<Rows> rows_;
  std::vector<SweepRows> pointers_;
  LineVector<int32_t> ended_, stepped_;
  std::vector<SweepPolicyRow> policy_rows_;  // from the first Observe
};

std::unique_ptr<SweepBuffers> CpuBackend::MakeSweepBuffers(const SweepStepArgs& shape) {
  return std::make_unique<CpuSweepBuffers>(this, shape);
}

}  // namespace

std::unique_ptr<Backend> MakeCpuBackend(const StateView& host_state, int nworld, int threads) {
  return std::make_unique<CpuBackend>(host_state, nworld, threads);
}

}  // namespace s2r
