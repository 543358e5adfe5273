// CPU backend: the kernels' world functions over a static partition of the worlds.
#include <memory>
#include <vector>

#include "host/backend.h"
#include "host/thread_pool.h"
#include "kernels/step_world.h"

namespace s2r {
namespace {

// one thread's scratch, reused for every world that thread steps
struct CpuScratch {
  std::vector<SolverBody> bodies;
  std::vector<ContactConstraint> constraints;
  std::vector<ContactManifold> manifolds;
  std::vector<Contact> contacts;
  std::vector<Transform> geom_xform;
  std::vector<Real> joint_qdot0;
  std::vector<JointFrame> joint_frame;
  std::vector<Real> joint_factor;
  std::vector<Real> lock_factor, lock_scratch;
  std::vector<Real> reduced;
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
    int rows = TotalLockRows(m);
    bool together = rows > 0 && rows <= kMaxTreeLockRows;
    lock_factor.assign(together ? rows * rows : 0, Real(0));
    lock_scratch.assign(together ? 3 * rows : 0, Real(0));
    reduced.assign(ReducedScratchSize(m.nreduced), Real(0));
    ws = Workspace{bodies.data(),      constraints.data(), manifolds.data(), contacts.data(), geom_xform.data(),
                   joint_qdot0.data(), joint_frame.data(), joint_factor.data(),
                   together ? lock_factor.data() : nullptr, together ? lock_scratch.data() : nullptr,
                   m.nreduced > 0 ? reduced.data() : nullptr, 0};
  }
};

class CpuBackend : public Backend {
 public:
  CpuBackend(const StateView& state, int nworld, int threads)
      : state_(state), nworld_(nworld), pool_(threads), scratch_(threads) {}

  void SetModel(const ModelView& view, const std::string&) override {
    model_ = view;
    for (CpuScratch& s : scratch_) s.Allocate(model_);
  }
  void Reset() override {
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
      for (int w = begin; w < end; ++w) ControlStep(model_, state_, w, ws, actions + static_cast<int64_t>(w) * nact);
    });
  }
  void Download(const StateView&) override {}
  void Upload(const StateView&) override {}
  int threads() const override { return pool_.size(); }
  int64_t ScratchBytesPerWorld() const override { return 0; }  // per thread, not per world

 private:
  StateView state_;
  int nworld_;
  ModelView model_;
  ThreadPool pool_;
  std::vector<CpuScratch> scratch_;
};

}  // namespace

std::unique_ptr<Backend> MakeCpuBackend(const StateView& host_state, int nworld, int threads) {
  return std::make_unique<CpuBackend>(host_state, nworld, threads);
}

}  // namespace s2r
