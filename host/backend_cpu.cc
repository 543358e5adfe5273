// CPU backend: the kernels' world functions over a static partition of the worlds.
#include <algorithm>
#include <algorithm>
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

// one thread's scratch, reused for every world that thread steps
struct alignas(kCacheLine) CpuScratch {
  LineVector<SolverBody> bodies;
  LineVector<ContactConstraint> constraints;
  LineVector<ContactManifold> manifolds;
  LineVector<Contact> contacts;
  LineVector<Transform> geom_xform;
  LineVector<Real> joint_qdot0;
  LineVector<JointFrame> joint_frame;
  LineVector<Real> joint_factor;
  LineVector<Real> lock_factor, lock_scratch;
  LineVector<Real> axis_prep;
  Workspace ws;
  void Allocate(const ModelView& m) {
    bodies.resize(m.nbody);
    constraints.resize(m.max_contacts);
    manifolds.resize(m.max_contacts);
    contacts.resize(m.max_contacts);
    geom_xform.resize(m.ngeom);
    joint_qdot0.resize(m.njoint + 1);
    joint_frame.resize(m.njoint + 1);
    joint_factor.resize((m.njoint + 1) * kJointFactorSize);
    int rows = TotalBlockRows(m);
    bool together = rows > 0 && rows <= kMaxTreeLockRows;
    lock_factor.assign(together ? rows * rows : 0, Real(0));
    lock_scratch.assign(together ? LockScratchSize(m) : 0, Real(0));
    axis_prep.assign(AxisPrepSize(m), Real(0));
    ws = Workspace{bodies.data(),      constraints.data(), manifolds.data(), contacts.data(), geom_xform.data(),
                   joint_qdot0.data(), joint_frame.data(), joint_factor.data(),
                   together ? lock_factor.data() : nullptr, together ? lock_scratch.data() : nullptr,
                   nullptr, nullptr, axis_prep.data(), 0};  // the slide-tree block is per world
  }
};

class CpuBackend : public Backend {
 public:
  CpuBackend(const StateView& state, int nworld, int threads)
      : state_(state), nworld_(nworld), pool_(threads), scratch_(threads) {}

  void SetModel(const ModelView& view, const std::string&) override {
    model_ = view;
    for (CpuScratch& s : scratch_) s.Allocate(model_);
    // each world's slide-tree block, padded to whole cache lines; rebuilt at the next step
    reduced_stride_ = (ReducedScratchSize(model_.nreduced) * sizeof(Real) + kCacheLine - 1) / kCacheLine *
                      kCacheLine / sizeof(Real);
    reduced_.assign(model_.nreduced > 0 ? static_cast<size_t>(nworld_) * reduced_stride_ : 0, Real(0));
    reduced_valid_.assign(nworld_, 0u);
  }
  void Reset() override {
    std::fill(reduced_valid_.begin(), reduced_valid_.end(), 0u);
    pool_.ParallelFor(nworld_, [this](int begin, int end, int) {
      for (int w = begin; w < end; ++w) ResetWorld(model_, state_, w);
    });
  }
  void Step(const Real* actions) override {
    int nact = model_.nactuator;
    std::vector<Real> zeros;
    if (!actions) {
      zeros.assign(static_cast<size_t>(nworld_) * (nact > 0 ? nact : 1), Real(0));
      actions = zeros.data();
    }
    pool_.ParallelFor(nworld_, [&](int begin, int end, int t) {
      Workspace* ws = &scratch_[t].ws;
      for (int w = begin; w < end; ++w) {
        if (w + 1 < end) PrefetchContacts(w + 1);
        if (model_.nreduced > 0) ws->reduced = reduced_.data() + static_cast<size_t>(w) * reduced_stride_;
        ws->reduced_valid = &reduced_valid_[w];
        ControlStep(model_, state_, w, ws, actions + static_cast<int64_t>(w) * nact);
      }
    });
  }
  // Last step's contacts of world w (read to warm-start its next step) sit max_contacts apart per
  // world, a stride the hardware prefetcher does not follow: fetch the first few lines while the
  // world before steps (with thousands of worlds they are no longer in cache). Not sized by the
  // world's contact count: waiting for that load stalled the loop more than the prefetch saved.
  void PrefetchContacts(int w) const {
    const char* p = reinterpret_cast<const char*>(state_.contacts(w));
    int64_t bytes = std::min<int64_t>(int64_t{sizeof(Contact)} * model_.max_contacts, int64_t{8 * kCacheLine});
    for (int64_t off = 0; off < bytes; off += int64_t{kCacheLine}) __builtin_prefetch(p + off);
  }
  void Download(const StateView&) override {}
  // the host state is the backend's state; an upload means it was edited (the trees' fixed
  // parents may have moved)
  void Upload(const StateView&) override { std::fill(reduced_valid_.begin(), reduced_valid_.end(), 0u); }
  int threads() const override { return pool_.size(); }
  // the slide-tree blocks; the rest of the scratch is per thread, not per world
  int64_t ScratchBytesPerWorld() const override {
    return model_.nreduced > 0 ? static_cast<int64_t>(reduced_stride_ * sizeof(Real) + sizeof(uint32_t)) : 0;
  }

 private:
  StateView state_;
  int nworld_;
  ModelView model_;
  ThreadPool pool_;
  std::vector<CpuScratch> scratch_;
  LineVector<Real> reduced_;              // (nworld, reduced_stride_) slide-tree blocks
  size_t reduced_stride_ = 0;
  std::vector<uint32_t> reduced_valid_;   // (nworld) their validity words
};

}  // namespace

std::unique_ptr<Backend> MakeCpuBackend(const StateView& host_state, int nworld, int threads) {
  return std::make_unique<CpuBackend>(host_state, nworld, threads);
}

}  // namespace s2r
