#include "solvers/sysid.h"

#include <ceres/ceres.h>
#include <ceres/covariance.h>

#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <thread>

#include "kernels/measure.h"

namespace s2r {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

// One shooting window: it starts from the recorded state at sample `start` and predicts the
// samples start+1 .. start+len.
struct Window {
  int rec = 0;
  int start = 0;
  int len = 0;
};

// Slope of samples [i - k, i + k] (clipped to the recording) by least squares: the velocity
// estimate of an unobserved rate at a window start (docs/sysid.md, "Window start").
double LocalSlope(const Recording& r, int signal, int i, int k) {
  const int n = static_cast<int>(r.time.size());
  const int a = std::max(0, i - k), b = std::min(n - 1, i + k);
  double tm = 0, ym = 0;
  for (int j = a; j <= b; ++j) {
    tm += r.time[j];
    ym += r.signal[j][signal];
  }
  tm /= double(b - a + 1);
  ym /= double(b - a + 1);
  double num = 0, den = 0;
  for (int j = a; j <= b; ++j) {
    num += (r.time[j] - tm) * (r.signal[j][signal] - ym);
    den += (r.time[j] - tm) * (r.time[j] - tm);
  }
  return den > 0 ? num / den : 0.0;
}

// The rate of signal `signal` at sample i: as the recording holds it (a store's velocities), else
// the local slope.
double RateAt(const Recording& r, int signal, int i, int k) {
  return r.rate.empty() ? LocalSlope(r, signal, i, k) : r.rate[i][signal];
}

// One initial-state parameter a window sets from the recording: its address and, per window,
// its values.
struct InitField {
  std::string address;
  std::vector<std::vector<double>> values;  // per window
  bool rate = false;  // free per window (window.start_state: fit): positions and rates, not orientations
  int rate_offset = -1;  // where its values sit in a window's free start state (-1: fixed)
};

int FindSignal(const SysidConfig& c, MeasureKind kind, int index, int component) {
  for (size_t s = 0; s < c.signals.size(); ++s) {
    const Measure& m = c.signals[s].measure;
    if (m.kind == kind && m.index == index && m.component == component) return static_cast<int>(s);
  }
  return -1;
}

bool IsFreeBody(const Model& m, int b) {
  const int j = m.body_joint[b];
  return m.body_dynamic[b] && (j < 0 || m.joint_type[j] == kJointFree);
}

// The window start rule: observed joint positions set joint_qpos0, observed positions and full
// orientations of free bodies set body_pos0 / body_quat0; their rates are the recorded rates when
// observed or held by the recording (a store's states), else the local slope of the recording. With window.start_state: fit (the default) the
// positions and rates are then free parameters of the window, starting from those values (the
// recorded sample at the start is one of its residuals, like every other); orientations stay as
// recorded. Everything else starts at the scene's initial values.
std::vector<InitField> WindowStarts(const SysidConfig& c, const std::vector<Window>& windows) {
  const Model& m = c.model;
  std::vector<InitField> out;
  auto add = [&](const std::string& address, auto&& value_of, bool rate = false) {
    InitField f;
    f.address = address;
    f.rate = rate;
    for (const Window& w : windows) f.values.push_back(value_of(c.recordings[w.rec], w.start));
    out.push_back(std::move(f));
  };
  const int k = c.velocity_half_width;
  for (size_t s = 0; s < c.signals.size(); ++s) {
    const Measure q = c.signals[s].measure;
    if (q.kind == kMeasureJointQpos) {
      const std::string label = EntityLabel(m, Entity::kJoint, q.index);
      const int rate = FindSignal(c, kMeasureJointQvel, q.index, 0);
      add("joint_qpos0[" + label + "]", [&](const Recording& r, int i) { return std::vector<double>{r.signal[i][s]}; }, true);
      add("joint_qvel0[" + label + "]", [&](const Recording& r, int i) {
        return std::vector<double>{rate >= 0 ? r.signal[i][rate] : RateAt(r, static_cast<int>(s), i, k)};
      }, true);
    }
    if (q.kind == kMeasureBodyPos && IsFreeBody(m, q.index)) {
      const std::string label = EntityLabel(m, Entity::kBody, q.index);
      const char* comp = q.component == 0 ? "x" : q.component == 1 ? "y" : "z";
      const int rate = FindSignal(c, kMeasureBodyLinvel, q.index, q.component);
      add("body_pos0[" + label + "]." + comp, [&](const Recording& r, int i) { return std::vector<double>{r.signal[i][s]}; }, true);
      add("body_linvel0[" + label + "]." + comp, [&](const Recording& r, int i) {
        return std::vector<double>{rate >= 0 ? r.signal[i][rate] : RateAt(r, static_cast<int>(s), i, k)};
      }, true);
    }
    if (q.kind == kMeasureBodyQuat && q.component == 0 && IsFreeBody(m, q.index)) {
      int comp[4] = {static_cast<int>(s), -1, -1, -1};
      for (int e = 1; e < 4; ++e) comp[e] = FindSignal(c, kMeasureBodyQuat, q.index, e);
      if (comp[1] < 0 || comp[2] < 0 || comp[3] < 0) continue;  // a partial orientation sets nothing
      const std::string label = EntityLabel(m, Entity::kBody, q.index);
      add("body_quat0[" + label + "]", [&](const Recording& r, int i) {
        double v[4], n = 0;
        for (int e = 0; e < 4; ++e) n += r.signal[i][comp[e]] * r.signal[i][comp[e]];
        for (int e = 0; e < 4; ++e) v[e] = r.signal[i][comp[e]] / std::sqrt(n);
        return std::vector<double>{v[0], v[1], v[2], v[3]};
      });
      int wcomp[3];
      for (int e = 0; e < 3; ++e) wcomp[e] = FindSignal(c, kMeasureBodyAngvel, q.index, e);
      add("body_angvel0[" + label + "]", [&](const Recording& r, int i) {
        if (wcomp[0] >= 0 && wcomp[1] >= 0 && wcomp[2] >= 0) {
          return std::vector<double>{r.signal[i][wcomp[0]], r.signal[i][wcomp[1]], r.signal[i][wcomp[2]]};
        }
        if (!r.rate.empty()) return std::vector<double>{r.rate[i][comp[1]], r.rate[i][comp[2]], r.rate[i][comp[3]]};
        // omega = 2 vec(dq/dt q*), world frame
        double q0[4], dq[4];
        for (int e = 0; e < 4; ++e) {
          q0[e] = r.signal[i][comp[e]];
          dq[e] = LocalSlope(r, comp[e], i, k);
        }
        // (dq)(q*) vector part: -dq.w q.v + q.w dq.v - dq.v x q.v
        double out[3];
        const double* a = dq + 1;
        const double* b = q0 + 1;
        const double cr[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
        for (int e = 0; e < 3; ++e) out[e] = 2 * (-dq[0] * b[e] + q0[0] * a[e] - cr[e]);
        return std::vector<double>{out[0], out[1], out[2]};
      }, true);
    }
  }
  return out;
}

// Batched rollouts of a set of windows: for each probe (a vector of natural parameter values, one
// per config parameter), every window is one world.
// One rollout request: a value of every config parameter, and the free rates of every window
// (window-major, rate_dims() each; null: the estimates from the recording).
struct Probe {
  std::vector<double> natural;
  const std::vector<double>* rates = nullptr;
};

// Batched rollouts of a set of windows: for each probe, every window is one world (world = probe
// x windows + window).
class Rollouts {
 public:
  Rollouts(const SysidConfig& c, const SysidOptions& o, std::vector<Window> wins)
      : c_(c), o_(o), windows_(std::move(wins)), starts_(WindowStarts(c, windows_)) {
    for (InitField& f : starts_) {
      if (!f.rate || !c.fit_rates) continue;
      f.rate_offset = dims_;
      dims_ += static_cast<int>(f.values.empty() ? 0 : f.values[0].size());
    }
    initial_rates_.assign(size_t(windows()) * dims_, 0.0);
    for (const InitField& f : starts_) {
      if (f.rate_offset < 0) continue;
      for (int w = 0; w < windows(); ++w) {
        for (size_t i = 0; i < f.values[w].size(); ++i) initial_rates_[size_t(w) * dims_ + f.rate_offset + i] = f.values[w][i];
      }
    }
    for (const SysidParameter& p : c.params) {
      std::vector<InertiaTarget> it;
      if (p.scale_inertia) {
        for (const FieldAddress& a : p.addresses) {
          if (a.field != FieldId::body_mass) continue;
          for (int b : a.entities) {
            it.push_back({"body_inertia[" + EntityLabel(c.model, Entity::kBody, b) + "]", c.model.body_mass[b],
                          {c.model.body_inertia[3 * b], c.model.body_inertia[3 * b + 1], c.model.body_inertia[3 * b + 2]}});
          }
        }
      }
      inertia_.push_back(std::move(it));
    }
  }

  int windows() const { return static_cast<int>(windows_.size()); }
  const Window& window(int w) const { return windows_[w]; }
  int64_t count() const { return count_; }
  int signals() const { return static_cast<int>(c_.signals.size()); }
  int rate_dims() const { return dims_; }
  const std::vector<double>& initial_rates() const { return initial_rates_; }

  // out[probe][window]: (len + 1) x signals simulated values (sample-major, the start state
  // first); ok[probe][window]: the world stayed healthy. On the CPU backend the worlds are split
  // into one engine per thread, each running its windows start to end on its own: the windows are
  // independent, so no thread waits for the others at every control step.
  void Run(const std::vector<Probe>& probes, std::vector<std::vector<std::vector<double>>>* out,
           std::vector<std::vector<char>>* ok) {
    const int nwin = windows(), np = static_cast<int>(probes.size()), nw = nwin * np;
    const int S = signals();
    out->assign(np, std::vector<std::vector<double>>(nwin));
    for (int p = 0; p < np; ++p) {
      for (int w = 0; w < nwin; ++w) (*out)[p][w].assign(size_t(windows_[w].len + 1) * S, 0.0);
    }
    ok->assign(np, std::vector<char>(nwin, 1));
    int chunks = 1;
    if (o_.backend == BackendKind::kCpu) {
      const int threads = o_.threads > 0 ? o_.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      chunks = std::max(1, std::min(threads, nw));
    }
    if (chunks == 1) {
      RunRange(probes, 0, nw, EngineFor(0, nw, o_.threads), out, ok);
    } else {
      std::vector<std::thread> pool;
      std::vector<std::exception_ptr> errors(chunks);
      for (int t = 0; t < chunks; ++t) {
        const int g0 = int(int64_t(nw) * t / chunks), g1 = int(int64_t(nw) * (t + 1) / chunks);
        Engine& e = EngineFor(t, g1 - g0, 1);
        pool.emplace_back([&, t, g0, g1] {
          try {
            RunRange(probes, g0, g1, e, out, ok);
          } catch (...) {
            errors[t] = std::current_exception();
          }
        });
      }
      for (std::thread& th : pool) th.join();
      for (const std::exception_ptr& err : errors) {
        if (err) std::rethrow_exception(err);
      }
    }
    count_ += nw;
  }

 private:
  // worlds g0 .. g1 - 1 of a Run (world g: probe g / windows, window g % windows) on engine e
  void RunRange(const std::vector<Probe>& probes, int g0, int g1, Engine& e,
                std::vector<std::vector<std::vector<double>>>* out, std::vector<std::vector<char>>* ok) {
    const int nwin = windows(), nw = g1 - g0;
    const int S = signals();
    // parameters
    std::vector<Real> values;
    for (size_t k = 0; k < c_.params.size(); ++k) {
      const SysidParameter& p = c_.params[k];
      if (p.latency) {
        // the delay in physics steps: whole control periods, then the rest (fractions included)
        std::vector<Real> steps(nw), part(nw);
        const int spc = c_.model.steps_per_control;
        for (int l = 0; l < nw; ++l) {
          const double d = std::max(0.0, probes[(g0 + l) / nwin].natural[k] / c_.model.timestep);
          const double whole = std::floor(d / spc);
          steps[l] = static_cast<Real>(whole);
          part[l] = static_cast<Real>(std::min(d - whole * spc, spc - 1e-6));
        }
        e.SetParam("latency_steps", steps);
        e.SetParam("latency_timesteps", part);
        continue;
      }
      for (const FieldAddress& a : p.addresses) {
        const size_t n = a.elements.size();
        values.assign(size_t(nw) * n, 0);
        for (int l = 0; l < nw; ++l) {
          for (size_t i = 0; i < n; ++i) values[l * n + i] = static_cast<Real>(probes[(g0 + l) / nwin].natural[k]);
        }
        e.SetParam(a.text, values);
      }
      for (const InertiaTarget& t : inertia_[k]) {
        values.assign(size_t(nw) * 3, 0);
        for (int l = 0; l < nw; ++l) {
          const double f = probes[(g0 + l) / nwin].natural[k] / t.mass;
          for (int i = 0; i < 3; ++i) values[l * 3 + i] = static_cast<Real>(t.inertia[i] * f);
        }
        e.SetParam(t.address, values);
      }
    }
    // window starts
    for (const InitField& f : starts_) {
      const size_t n = f.values[0].size();
      values.assign(size_t(nw) * n, 0);
      for (int l = 0; l < nw; ++l) {
        const int w = (g0 + l) % nwin;
        const std::vector<double>* rates = probes[(g0 + l) / nwin].rates;
        for (size_t i = 0; i < n; ++i) {
          const double v = f.rate_offset >= 0 && rates != nullptr ? (*rates)[size_t(w) * dims_ + f.rate_offset + i]
                                                                   : f.values[w][i];
          values[l * n + i] = static_cast<Real>(v);
        }
      }
      e.SetParam(f.address, values);
    }
    e.Reset();
    e.Download();
    // each world continues its recording: the control-step counter at the window start and the
    // actions given before it in the latency ring buffer
    const StateView& s = e.mutable_state().view;
    const int nact = c_.model.nactuator(), cap = e.view().latency_capacity;
    for (int l = 0; l < nw; ++l) {
      const Window& w = windows_[(g0 + l) % nwin];
      const Recording& r = c_.recordings[w.rec];
      s.control_step(l) = w.start;
      for (int back = 1; back < cap; ++back) {
        const int step = w.start - back;
        if (step < 0) break;
        for (int a = 0; a < nact; ++a) s.ctrl_queue(l, step % cap)[a] = static_cast<Real>(r.action[step][a]);
      }
    }
    e.Upload();
    // sample 0 of every window is its start state
    for (int l = 0; l < nw; ++l) {
      double* row = (*out)[(g0 + l) / nwin][(g0 + l) % nwin].data();
      for (int q = 0; q < S; ++q) row[q] = static_cast<double>(Measured(e.view(), e.state().view, l, c_.signals[q].measure));
    }
    int len = 0;
    for (int l = 0; l < nw; ++l) len = std::max(len, windows_[(g0 + l) % nwin].len);
    std::vector<Real> actions(size_t(nw) * std::max(nact, 1), 0);
    for (int t = 0; t < len; ++t) {
      for (int l = 0; l < nw; ++l) {
        const Window& w = windows_[(g0 + l) % nwin];
        const Recording& r = c_.recordings[w.rec];
        const int i = std::min(w.start + t, static_cast<int>(r.time.size()) - 1);
        for (int a = 0; a < nact; ++a) actions[size_t(l) * nact + a] = static_cast<Real>(r.action[i][a]);
      }
      e.Step(actions.data());
      e.Download();
      const StateView& st = e.state().view;
      for (int l = 0; l < nw; ++l) {
        const Window& w = windows_[(g0 + l) % nwin];
        if (t >= w.len) continue;
        double* row = (*out)[(g0 + l) / nwin][(g0 + l) % nwin].data() + size_t(t + 1) * S;
        for (int q = 0; q < S; ++q) row[q] = static_cast<double>(Measured(e.view(), st, l, c_.signals[q].measure));
      }
    }
    for (int l = 0; l < nw; ++l) {
      bool good = e.state().view.status(l) == kWorldOk;
      for (double v : (*out)[(g0 + l) / nwin][(g0 + l) % nwin]) good = good && std::isfinite(v);
      (*ok)[(g0 + l) / nwin][(g0 + l) % nwin] = good;
    }
  }

 public:
  // whitened residuals sqrt(weight) (recorded - simulated) / noise of one window's simulation
  void Residuals(int w, const std::vector<double>& sim, double* r) const {
    const Window& win = windows_[w];
    const Recording& rec = c_.recordings[win.rec];
    const int S = signals();
    for (int t = 0; t <= win.len; ++t) {
      for (int q = 0; q < S; ++q) {
        const SysidSignal& sig = c_.signals[q];
        r[t * S + q] = std::sqrt(sig.weight) * (rec.signal[win.start + t][q] - sim[size_t(t) * S + q]) / sig.noise;
      }
    }
  }

 private:
  struct InertiaTarget {
    std::string address;
    double mass;
    double inertia[3];
  };

  // the engine of one chunk of a Run, kept for the next Run of the same size
  Engine& EngineFor(int chunk, int nworld, int threads) {
    auto it = engines_.find({chunk, nworld});
    if (it != engines_.end()) return *it->second;
    EngineOptions eo;
    eo.nworld = nworld;
    eo.backend = o_.backend;
    eo.threads = threads;
    auto e = std::make_unique<Engine>(c_.model, eo);
    Engine& ref = *e;
    engines_[{chunk, nworld}] = std::move(e);
    return ref;
  }

  const SysidConfig& c_;
  const SysidOptions& o_;
  std::vector<Window> windows_;
  std::vector<InitField> starts_;
  int dims_ = 0;
  std::vector<double> initial_rates_;
  std::vector<std::vector<InertiaTarget>> inertia_;  // per parameter
  std::map<std::pair<int, int>, std::unique_ptr<Engine>> engines_;
  int64_t count_ = 0;
};

std::vector<Window> MakeWindows(const SysidConfig& c, bool held_out) {
  const int len = std::max(1, static_cast<int>(std::lround(c.window_s / c.period)));
  std::vector<Window> out;
  for (size_t r = 0; r < c.recordings.size(); ++r) {
    const Recording& rec = c.recordings[r];
    if (rec.held_out != held_out) continue;
    const int n = static_cast<int>(rec.time.size());
    for (int start = 0; start + 1 < n; start += len) out.push_back({static_cast<int>(r), start, std::min(len, n - 1 - start)});
  }
  return out;
}

// The parameters as Ceres sees them: x = value (linear) or log(value) (log scale).
struct Coordinates {
  const SysidConfig* c;
  int size() const { return static_cast<int>(c->params.size()); }
  double Value(int k, double x) const { return c->params[k].log_scale ? std::exp(x) : x; }
  double ToX(int k, double v) const { return c->params[k].log_scale ? std::log(v) : v; }
  double Lo(int k) const { return ToX(k, c->params[k].lo); }
  double Hi(int k) const { return ToX(k, c->params[k].hi); }
  // The finite-difference step in x: fd_step in log space (a relative step of the value);
  // fd_step x max(|x|, 1% of the bounds' width) for linear parameters; at least a fifth of a
  // timestep for the delay (the cost has a small kink at each whole timestep).
  double Step(int k, double x) const {
    const SysidParameter& p = c->params[k];
    if (p.log_scale) return p.fd_step;
    double h = p.fd_step * std::max(std::abs(x), 0.01 * (p.hi - p.lo));
    if (p.latency) h = std::max(h, 0.2 * c->model.timestep);
    return h;
  }
  // a relative scale of x, for the rank test
  double Scale(int k, double x) const {
    const SysidParameter& p = c->params[k];
    return p.log_scale ? 1.0 : std::max(std::abs(x), 0.01 * (p.hi - p.lo));
  }
};

// Multiple shooting over a set of windows, as a Ceres problem: one residual block per window over
// the global parameters (free, or constant for held-out data) and the window's own free rates.
// It is also the EvaluationCallback that runs the rollouts: at each new point the windows at
// (x, rates), and when Jacobians are wanted the probes x +- h_k e_k (one-sided at a bound) and
// rates +- h for each rate component of every window at once (windows are independent) -- all
// in one batch. The cost functions only copy results out.
class Shooting : public ceres::EvaluationCallback {
 public:
  Shooting(const SysidConfig& c, Rollouts* r, std::vector<double>* x, bool globals_free)
      : c_(c), r_(r), coords_{&c}, x_(x), globals_free_(globals_free), rates_(r->initial_rates()) {}

  Rollouts& rollouts() { return *r_; }
  std::vector<double>& rates() { return rates_; }
  int dims() const { return r_->rate_dims(); }

  void AddTo(ceres::Problem* problem, const std::function<ceres::LossFunction*()>& loss);

  void PrepareForEvaluation(bool evaluate_jacobians, bool /*new_evaluation_point*/) override {
    const int p = coords_.size(), d = dims(), nwin = r_->windows();
    if (*x_ != center_x_ || rates_ != center_rates_ || !have_center_) {
      std::vector<std::vector<std::vector<double>>> out;
      std::vector<std::vector<char>> ok;
      r_->Run({{Natural(*x_), &rates_}}, &out, &ok);
      center_ = out[0];
      center_ok_ = ok[0];
      center_x_ = *x_;
      center_rates_ = rates_;
      have_center_ = true;
      have_jac_ = false;
    }
    if (!evaluate_jacobians || have_jac_) return;
    std::vector<Probe> probes;
    plus_.assign(p, -1);
    minus_.assign(p, -1);
    up_x_.assign(p, 0);
    down_x_.assign(p, 0);
    for (int k = 0; globals_free_ && k < p; ++k) {
      const double xk = (*x_)[k], h = coords_.Step(k, xk), lo = coords_.Lo(k), hi = coords_.Hi(k);
      double up = std::min(hi, xk + h), down = std::max(lo, xk - h);
      if (up + h <= hi || down - h >= lo) {  // room for a full step on one side at least
        if (xk + h > hi) up = xk;
        if (xk - h < lo) down = xk;
      }
      if (!c_.central_differences) {  // one probe: forward, or backward at the upper bound
        if (up > xk) down = xk;
      }
      up_x_[k] = up;
      down_x_[k] = down;
      if (up > xk) {
        plus_[k] = static_cast<int>(probes.size());
        std::vector<double> xp = *x_;
        xp[k] = up;
        probes.push_back({Natural(xp), &rates_});
      }
      if (down < xk) {
        minus_[k] = static_cast<int>(probes.size());
        std::vector<double> xm = *x_;
        xm[k] = down;
        probes.push_back({Natural(xm), &rates_});
      }
    }
    // rates: +h (and -h for central differences) on component j of every window's rates at once
    const int sides = c_.central_differences ? 2 : 1;
    rate_probes_.assign(size_t(2) * d, rates_);
    rate_step_.assign(size_t(nwin) * d, 0.0);
    const size_t first_rate_probe = probes.size();
    for (int j = 0; j < d; ++j) {
      for (int w = 0; w < nwin; ++w) {
        const size_t i = size_t(w) * d + j;
        const double h = 1e-3 * std::max(std::abs(rates_[i]), 0.05);
        rate_step_[i] = h;
        rate_probes_[2 * j][i] += h;
        rate_probes_[2 * j + 1][i] -= h;
      }
    }
    const std::vector<double> natural = Natural(*x_);
    for (int j = 0; j < d; ++j) {
      for (int side = 0; side < sides; ++side) probes.push_back({natural, &rate_probes_[2 * j + side]});
    }
    rate_sides_ = sides;
    r_->Run(probes, &probe_out_, &probe_ok_);
    first_rate_probe_ = static_cast<int>(first_rate_probe);
    have_jac_ = true;
  }

  // the cached rollouts are stale (something outside x and the rates changed)
  void Invalidate() { have_center_ = have_jac_ = false; }

  // natural values of every config parameter at x
  std::vector<double> Natural(const std::vector<double>& x) const {
    std::vector<double> v(x.size());
    for (int k = 0; k < coords_.size(); ++k) v[k] = coords_.Value(k, x[k]);
    return v;
  }

  const std::vector<std::vector<double>>& center() const { return center_; }
  const std::vector<char>& center_ok() const { return center_ok_; }

  // residuals of window w at the centre; jacobians[0..p-1] by the global parameters (null where
  // constant), jacobians[p] by the window's rates; false when the rollout failed
  bool Window(int w, double* residuals, double** jacobians) const {
    if (!center_ok_[w]) return false;
    r_->Residuals(w, center_[w], residuals);
    if (jacobians == nullptr) return true;
    const int n = (r_->window(w).len + 1) * r_->signals(), p = coords_.size(), d = dims();
    std::vector<double> rp(n), rm(n);
    // one column from the probes on either side (the centre standing in for a missing one)
    auto column = [&](int ip, int im, double xp, double xm, double xc, double* col, int stride) {
      const bool okp = ip >= 0 && probe_ok_[ip][w], okm = im >= 0 && probe_ok_[im][w];
      if (okp) r_->Residuals(w, probe_out_[ip][w], rp.data());
      if (okm) r_->Residuals(w, probe_out_[im][w], rm.data());
      const double* a = okp ? rp.data() : residuals;
      const double* b = okm ? rm.data() : residuals;
      const double da = okp ? xp : xc, db = okm ? xm : xc;
      if (!(da > db)) return false;
      for (int i = 0; i < n; ++i) col[size_t(i) * stride] = (a[i] - b[i]) / (da - db);
      return true;
    };
    for (int k = 0; k < p; ++k) {
      if (jacobians[k] == nullptr) continue;
      if (!globals_free_) {
        std::fill(jacobians[k], jacobians[k] + n, 0.0);
        continue;
      }
      if (!column(plus_[k], minus_[k], up_x_[k], down_x_[k], center_x_[k], jacobians[k], 1)) return false;
    }
    if (d > 0 && jacobians[p] != nullptr) {
      for (int j = 0; j < d; ++j) {
        const size_t i = size_t(w) * d + j;
        const double v = center_rates_[i], h = rate_step_[i];
        const int up = first_rate_probe_ + rate_sides_ * j, down = rate_sides_ == 2 ? up + 1 : -1;
        if (!column(up, down, v + h, v - h, v, jacobians[p] + j, d)) {
          return false;
        }
      }
    }
    return true;
  }

 private:
  const SysidConfig& c_;
  Rollouts* r_;
  Coordinates coords_;
  std::vector<double>* x_;
  bool globals_free_;
  std::vector<double> rates_;
  bool have_center_ = false, have_jac_ = false;
  std::vector<double> center_x_, center_rates_;
  std::vector<std::vector<double>> center_;
  std::vector<char> center_ok_;
  std::vector<int> plus_, minus_;
  std::vector<double> up_x_, down_x_;
  std::vector<std::vector<double>> rate_probes_;
  std::vector<double> rate_step_;
  int first_rate_probe_ = 0;
  int rate_sides_ = 2;
  std::vector<std::vector<std::vector<double>>> probe_out_;
  std::vector<std::vector<char>> probe_ok_;
};

class WindowCost : public ceres::CostFunction {
 public:
  WindowCost(const Shooting* s, int window, int residuals, int params, int dims) : s_(s), window_(window) {
    set_num_residuals(residuals);
    for (int k = 0; k < params; ++k) mutable_parameter_block_sizes()->push_back(1);
    if (dims > 0) mutable_parameter_block_sizes()->push_back(dims);
  }
  bool Evaluate(double const* const* /*parameters*/, double* residuals, double** jacobians) const override {
    return s_->Window(window_, residuals, jacobians);
  }

 private:
  const Shooting* s_;
  int window_;
};

// A Gaussian prior on a parameter's value: (value(x) - mean) / std.
class PriorCost : public ceres::SizedCostFunction<1, 1> {
 public:
  PriorCost(bool log_scale, double mean, double std) : log_(log_scale), mean_(mean), std_(std) {}
  bool Evaluate(double const* const* x, double* r, double** j) const override {
    const double v = log_ ? std::exp(x[0][0]) : x[0][0];
    r[0] = (v - mean_) / std_;
    if (j != nullptr && j[0] != nullptr) j[0][0] = (log_ ? v : 1.0) / std_;
    return true;
  }

 private:
  bool log_;
  double mean_, std_;
};

void Shooting::AddTo(ceres::Problem* problem, const std::function<ceres::LossFunction*()>& loss) {
  const int p = coords_.size(), d = dims();
  for (int w = 0; w < r_->windows(); ++w) {
    std::vector<double*> blocks;
    for (int k = 0; k < p; ++k) blocks.push_back(&(*x_)[k]);
    if (d > 0) blocks.push_back(&rates_[size_t(w) * d]);
    problem->AddResidualBlock(new WindowCost(this, w, (r_->window(w).len + 1) * r_->signals(), p, d), loss(), blocks);
  }
  for (int k = 0; k < p; ++k) {
    double* xk = &(*x_)[k];
    if (!globals_free_) {
      problem->SetParameterBlockConstant(xk);
      continue;
    }
    const SysidParameter& sp = c_.params[k];
    if (sp.has_prior) problem->AddResidualBlock(new PriorCost(sp.log_scale, sp.prior_mean, sp.prior_std), nullptr, xk);
    problem->SetParameterLowerBound(xk, 0, coords_.Lo(k));
    problem->SetParameterUpperBound(xk, 0, coords_.Hi(k));
  }
}

class ProgressLine : public ceres::IterationCallback {
 public:
  ProgressLine(Clock::time_point t0, int start) : t0_(t0), start_(start) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary& s) override {
    char label[32] = "";
    if (start_ > 1) std::snprintf(label, sizeof label, "start %d ", start_);
    std::fprintf(stderr, "sysid: %siteration %3d  cost %.6e  step %.3e  %s  %.2f s\n", label, s.iteration, s.cost,
                 s.step_norm, s.step_is_successful ? "accepted" : "rejected", Seconds(t0_));
    return ceres::SOLVER_CONTINUE;
  }

 private:
  Clock::time_point t0_;
  int start_;  // 1: the configured start (unlabelled), else the multi-start's start number
};

// Ends the fit when an accepted step, following an accepted step (so the trust region is not what
// kept it short), lowered the cost by less than solver.cost_tolerance: near the optimum a
// Gauss-Newton step's decrease is the cost still to gain, and a decrease of d leaves the parameters
// about sqrt(2 d) standard deviations from the optimum. Ceres' tolerances are relative to the cost,
// which grows with the number of residuals; this one is in the units the uncertainty is.
class CostTolerance : public ceres::IterationCallback {
 public:
  explicit CostTolerance(double tolerance) : tolerance_(tolerance) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary& s) override {
    const bool stop = s.iteration > 1 && s.step_is_successful && previous_successful_ && s.cost_change >= 0 &&
                      s.cost_change < tolerance_;
    previous_successful_ = s.step_is_successful;
    return stop ? ceres::SOLVER_TERMINATE_SUCCESSFULLY : ceres::SOLVER_CONTINUE;
  }

 private:
  double tolerance_;
  bool previous_successful_ = false;
};

ceres::LossFunction* MakeLoss(const SysidConfig& c) {
  switch (c.loss) {
    case SysidLoss::kHuber: return new ceres::HuberLoss(c.loss_scale);
    case SysidLoss::kCauchy: return new ceres::CauchyLoss(c.loss_scale);
    default: return nullptr;
  }
}

ceres::Solver::Options SolverOptions(const SysidConfig& c) {
  ceres::Solver::Options so;
  so.minimizer_type = ceres::TRUST_REGION;
  so.trust_region_strategy_type = ceres::LEVENBERG_MARQUARDT;
  // the window rates make the normal equations block-sparse (each window couples only to the
  // global parameters): Schur elimination of the rates, the global block dense
  so.linear_solver_type = ceres::DENSE_SCHUR;
  so.max_num_iterations = c.max_iterations;
  so.function_tolerance = c.function_tolerance;
  so.parameter_tolerance = c.parameter_tolerance;
  so.gradient_tolerance = c.gradient_tolerance;
  so.logging_type = ceres::SILENT;
  return so;
}

// Fits the free rates of held-out windows with the global parameters held at x: how well the
// model predicts each window from its start. Returns the simulations at the optimum.
std::vector<std::vector<double>> HeldOutSimulation(const SysidConfig& c, Rollouts* held, const std::vector<double>& x) {
  std::vector<double> xc = x;
  Shooting s(c, held, &xc, false);
  if (s.dims() > 0) {
    ceres::Problem::Options po;
    po.evaluation_callback = &s;
    ceres::Problem problem(po);
    s.AddTo(&problem, [&] { return MakeLoss(c); });
    ceres::Solver::Options so = SolverOptions(c);
    CostTolerance stop(c.cost_tolerance);
    if (c.cost_tolerance > 0) so.callbacks.push_back(&stop);
    ceres::Solver::Summary summary;
    ceres::Solve(so, &problem, &summary);
  }
  s.Invalidate();
  s.PrepareForEvaluation(false, true);
  return s.center();
}

void SignalErrors(const SysidConfig& c, const Rollouts& r, const std::vector<std::vector<double>>& sim,
                  std::vector<double>* rmse) {
  const int S = r.signals();
  std::vector<double> sum(S, 0.0);
  std::vector<int64_t> n(S, 0);
  for (int w = 0; w < r.windows(); ++w) {
    const Window& win = r.window(w);
    const Recording& rec = c.recordings[win.rec];
    for (int t = 0; t <= win.len; ++t) {
      for (int q = 0; q < S; ++q) {
        const double d = rec.signal[win.start + t][q] - sim[w][size_t(t) * S + q];
        sum[q] += d * d;
        n[q] += 1;
      }
    }
  }
  rmse->assign(S, kNaN);
  for (int q = 0; q < S; ++q) {
    if (n[q] > 0) (*rmse)[q] = std::sqrt(sum[q] / double(n[q]));
  }
}

void FillTraces(const Rollouts& r, const std::vector<std::vector<double>>& sim, bool fitted,
                std::vector<SysidTrace>* traces) {
  const int S = r.signals();
  for (int w = 0; w < r.windows(); ++w) {
    const Window& win = r.window(w);
    SysidTrace& tr = (*traces)[win.rec];
    auto& dst = fitted ? tr.fitted : tr.initial;
    for (int t = 1; t <= win.len; ++t) {  // the start sample is the recording's (or fitted to it)
      for (int q = 0; q < S; ++q) dst[q][win.start + t] = sim[w][size_t(t) * S + q];
    }
  }
}


// Parameters the data does not determine: eigenvectors of the Gauss-Newton matrix of the global
// parameters, with the window rates eliminated (Schur complement) and each column scaled to a
// relative change, whose eigenvalue is below 1e-10 of the largest (singular values below 1e-5).
// singular[k] marks them; partner[k] is the other parameter with the largest share of that
// direction (-1 if none).
void RankTest(const SysidConfig& c, Shooting* s, ceres::Problem* problem, std::vector<double>* x, std::vector<char>* singular,
              std::vector<int>* partner) {
  const int p = static_cast<int>(x->size()), d = s->dims(), nwin = s->rollouts().windows();
  singular->assign(p, 0);
  partner->assign(p, -1);
  ceres::Problem::EvaluateOptions eo;
  for (int k = 0; k < p; ++k) eo.parameter_blocks.push_back(&(*x)[k]);
  for (int w = 0; d > 0 && w < nwin; ++w) eo.parameter_blocks.push_back(&s->rates()[size_t(w) * d]);
  double cost = 0;
  ceres::CRSMatrix jac;
  if (!problem->Evaluate(eo, &cost, nullptr, nullptr, &jac)) return;
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(jac.num_rows, jac.num_cols);
  for (int row = 0; row < jac.num_rows; ++row) {
    for (int i = jac.rows[row]; i < jac.rows[row + 1]; ++i) J(row, jac.cols[i]) = jac.values[i];
  }
  const Coordinates coords{&c};
  for (int k = 0; k < p; ++k) J.col(k) *= coords.Scale(k, (*x)[k]);
  const Eigen::MatrixXd H = J.transpose() * J;
  Eigen::MatrixXd reduced = H.topLeftCorner(p, p);
  const int nr = static_cast<int>(H.rows()) - p;
  if (nr > 0) {
    const Eigen::MatrixXd Hrr = H.bottomRightCorner(nr, nr) + 1e-12 * Eigen::MatrixXd::Identity(nr, nr);
    reduced -= H.topRightCorner(p, nr) * Hrr.ldlt().solve(H.bottomLeftCorner(nr, p));
  }
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(reduced);
  const Eigen::VectorXd lambda = eig.eigenvalues();
  const double lmax = std::max(lambda.maxCoeff(), 1e-300);
  for (int i = 0; i < p; ++i) {
    if (lambda(i) > 1e-10 * lmax) continue;
    const Eigen::VectorXd v = eig.eigenvectors().col(i);
    for (int k = 0; k < p; ++k) {
      if (std::abs(v(k)) < 0.2) continue;
      (*singular)[k] = 1;
      int best = -1;
      for (int j = 0; j < p; ++j) {
        if (j != k && (best < 0 || std::abs(v(j)) > std::abs(v(best)))) best = j;
      }
      if (best >= 0 && std::abs(v(best)) >= 0.2) (*partner)[k] = best;
    }
  }
}

}  // namespace

// One Levenberg-Marquardt run on a problem set up by Shooting::AddTo.
void LocalFit(const SysidConfig& c, const SysidOptions& o, Clock::time_point t0, int start, ceres::Problem* problem,
              ceres::Solver::Summary* summary) {
  ProgressLine progress(t0, start);
  ceres::Solver::Options so = SolverOptions(c);
  if (o.progress) so.callbacks.push_back(&progress);
  CostTolerance stop(c.cost_tolerance);
  if (c.cost_tolerance > 0) so.callbacks.push_back(&stop);
  ceres::Solve(so, problem, summary);
}

// The Halton sequence's coordinate in base b: the digits of i in base b mirrored about the point.
double RadicalInverse(int i, int b) {
  double f = 1, r = 0;
  for (; i > 0; i /= b) {
    f /= b;
    r += f * (i % b);
  }
  return r;
}
// the k-th prime (k = 0: 2): the Halton base of parameter k
int NthPrime(int k) {
  int n = 1;
  for (int found = -1; found < k;) {
    ++n;
    bool prime = true;
    for (int d = 2; d * d <= n && prime; ++d) prime = n % d != 0;
    if (prime) ++found;
  }
  return n;
}

std::string StartText(const SysidConfig& c, const std::vector<double>& natural) {
  std::string out;
  char v[64];
  for (size_t k = 0; k < natural.size(); ++k) {
    std::snprintf(v, sizeof v, "%.6g", natural[k]);
    out += (k ? ", " : "") + c.params[k].name + " = " + v;
  }
  return out;
}

// The cost (1/2 sum of robustified squared whitened residuals, and the priors) of one scan point's
// rollout of every train window; infinite where a window failed.
double ScanCost(const SysidConfig& c, const Rollouts& r, const std::vector<double>& natural,
                const std::vector<std::vector<double>>& sim, const std::vector<char>& ok) {
  std::unique_ptr<ceres::LossFunction> loss(MakeLoss(c));
  double cost = 0;
  std::vector<double> res;
  for (int w = 0; w < r.windows(); ++w) {
    if (!ok[w]) return std::numeric_limits<double>::infinity();
    res.resize(sim[w].size());
    r.Residuals(w, sim[w], res.data());
    for (double v : res) {
      double rho[3] = {v * v, 1, 0};
      if (loss) loss->Evaluate(v * v, rho);
      cost += 0.5 * rho[0];
    }
  }
  for (size_t k = 0; k < c.params.size(); ++k) {
    const SysidParameter& sp = c.params[k];
    if (sp.has_prior) cost += 0.5 * std::pow((natural[k] - sp.prior_mean) / sp.prior_std, 2);
  }
  return cost;
}

// One start of a multi-start after the first: a local fit from x on its own rollout engines (so
// starts may run side by side). x and rates end at its optimum; rollouts counts its windows.
struct StartRun {
  SysidStart start;
  std::vector<double> x, rates;
  int64_t rollouts = 0;
};

void RunStart(const SysidConfig& c, const SysidOptions& o, Clock::time_point t0, int number, StartRun* run) {
  Rollouts train(c, o, MakeWindows(c, false));
  Shooting s(c, &train, &run->x, true);
  SysidStart& st = run->start;
  st.initial = st.value = s.Natural(run->x);
  s.PrepareForEvaluation(false, true);
  const std::vector<char>& ok = s.center_ok();
  if (std::find(ok.begin(), ok.end(), char(0)) != ok.end()) {
    st.termination = "not started: a window's simulation is unstable there";
  } else {
    ceres::Problem::Options po;
    po.evaluation_callback = &s;
    ceres::Problem problem(po);
    s.AddTo(&problem, [&] { return MakeLoss(c); });
    ceres::Solver::Summary sum;
    LocalFit(c, o, t0, number, &problem, &sum);
    st.value = s.Natural(run->x);
    st.initial_cost = sum.initial_cost;
    st.iterations = static_cast<int>(sum.iterations.size()) - 1;
    st.termination = sum.message;
    if (sum.IsSolutionUsable()) st.final_cost = sum.final_cost;
  }
  run->rates = s.rates();
  run->rollouts = train.count();
}

// Starts 2 .. c.starts of a multi-start, after the first (the configured initial values, fitted on
// `fit`): from points of the Halton sequence over the bounds, or from a scan's lowest. Where one
// ends lower than the fit so far, x and fit's rates move to its optimum and `result` takes its
// cost, iterations and termination. Every start is listed in result->starts. Returns the window
// rollouts the starts ran on their own engines.
int64_t OtherStarts(const SysidConfig& c, const SysidOptions& o, Clock::time_point t0, Rollouts* train, Shooting* fit,
                    std::vector<double>* x, SysidResult* result) {
  const Coordinates coords{&c};
  const int p = coords.size();
  int64_t rollouts = 0;
  auto halton = [&](int i) {
    std::vector<double> xi(p);
    for (int k = 0; k < p; ++k) xi[k] = coords.Lo(k) + RadicalInverse(i, NthPrime(k)) * (coords.Hi(k) - coords.Lo(k));
    return xi;
  };
  std::vector<std::vector<double>> others;  // where starts 2 .. N begin
  std::vector<double> scanned;              // and their costs in the scan
  if (c.scan > 0 && c.starts > 1) {
    // the cost at scan points 1 .. K of the sequence, one batched rollout, start states as
    // recorded; the N - 1 lowest are the starts
    std::vector<Probe> probes;
    for (int i = 1; i <= c.scan; ++i) probes.push_back({fit->Natural(halton(i)), nullptr});
    std::vector<std::pair<double, int>> ranked;
    constexpr int kBatch = 256;  // scan points per batched rollout
    for (int b0 = 0; b0 < c.scan; b0 += kBatch) {
      const std::vector<Probe> batch(probes.begin() + b0, probes.begin() + std::min(c.scan, b0 + kBatch));
      std::vector<std::vector<std::vector<double>>> out;
      std::vector<std::vector<char>> ok;
      train->Run(batch, &out, &ok);
      for (size_t i = 0; i < batch.size(); ++i) {
        ranked.push_back({ScanCost(c, *train, batch[i].natural, out[i], ok[i]), b0 + static_cast<int>(i) + 1});
      }
    }
    std::stable_sort(ranked.begin(), ranked.end());
    for (int j = 1; j < c.starts && j <= c.scan; ++j) {
      others.push_back(halton(ranked[j - 1].second));
      scanned.push_back(ranked[j - 1].first);
    }
    if (o.progress) {
      std::fprintf(stderr, "sysid: scanned %d points, the lowest cost %.6e at %s\n", c.scan, ranked[0].first,
                   StartText(c, probes[ranked[0].second - 1].natural).c_str());
    }
  } else {
    for (int j = 1; j < c.starts; ++j) others.push_back(halton(j));
  }
  // Starts 2 .. N, side by side on the CPU backend (each on its own engines, the threads shared
  // out; a start's result does not depend on how many threads step its windows), one after
  // another on CUDA. Ties go to the earlier start, as one after another.
  std::vector<StartRun> runs(others.size());
    if (!runs.empty()) {
    const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int side_by_side = o.backend == BackendKind::kCpu ? std::min<int>(threads, runs.size()) : 1;
    SysidOptions each = o;
    each.threads = std::max(1, threads / side_by_side);
    std::atomic<int> next{0};
    std::vector<std::exception_ptr> errors(side_by_side);
    auto work = [&](int t) {
      try {
        for (int j = next++; j < static_cast<int>(runs.size()); j = next++) {
          StartRun& run = runs[j];
          run.x = others[j];
          run.start = {{}, {}, kNaN, kNaN, scanned.empty() ? kNaN : scanned[j], 0, "", false};
          if (o.progress) {
            std::fprintf(stderr, "sysid: start %d of %d from %s\n", j + 2, static_cast<int>(runs.size()) + 1,
                         StartText(c, fit->Natural(run.x)).c_str());
          }
          RunStart(c, each, t0, j + 2, &run);
        }
      } catch (...) {
        errors[t] = std::current_exception();
      }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < side_by_side; ++t) pool.emplace_back(work, t);
    work(0);
    for (std::thread& th : pool) th.join();
    for (const std::exception_ptr& e : errors) {
      if (e) std::rethrow_exception(e);
    }
  }
  for (StartRun& run : runs) {
    rollouts += run.rollouts;
    if (std::isfinite(run.start.final_cost) && run.start.final_cost < result->final_cost) {
      for (SysidStart& other : result->starts) other.chosen = false;
      run.start.chosen = true;
      // the reported fit continues from this start's optimum (the problem's blocks stay in place)
      std::copy(run.x.begin(), run.x.end(), x->begin());
      std::copy(run.rates.begin(), run.rates.end(), fit->rates().begin());
      fit->Invalidate();
      result->iterations = run.start.iterations;
      result->termination = run.start.termination;
      result->final_cost = run.start.final_cost;
    }
    result->starts.push_back(run.start);
  }
  return rollouts;
}

SysidResult RunSysid(const SysidConfig& c, const SysidOptions& o) {
  const Clock::time_point t0 = Clock::now();
  SysidResult result;
  Rollouts train(c, o, MakeWindows(c, false)), held(c, o, MakeWindows(c, true));
  result.windows_train = train.windows();
  result.windows_held_out = held.windows();
  const Coordinates coords{&c};
  const int p = coords.size();
  std::vector<double> x(p);
  for (int k = 0; k < p; ++k) x[k] = coords.ToX(k, c.params[k].initial);
  const std::vector<double> x_initial = x;

  Shooting fit(c, &train, &x, true);
  // the initial point must simulate
  fit.PrepareForEvaluation(false, true);
  for (int w = 0; w < train.windows(); ++w) {
    if (fit.center_ok()[w]) continue;
    const Window& win = train.window(w);
    const Recording& rec = c.recordings[win.rec];
    throw std::runtime_error(rec.file + ":" + std::to_string(rec.line[win.start]) +
                             ": the simulation of the window starting here is unstable at the initial parameters; "
                             "start from other values or shorten window.length_s");
  }
  const std::vector<std::vector<double>> train_initial = fit.center();

  ceres::Problem::Options po;
  po.evaluation_callback = &fit;
  ceres::Problem problem(po);
  fit.AddTo(&problem, [&] { return MakeLoss(c); });
  ceres::Solver::Summary summary;
  LocalFit(c, o, t0, 1, &problem, &summary);
  if (!summary.IsSolutionUsable()) throw std::runtime_error("the solver failed: " + summary.message);
  result.iterations = static_cast<int>(summary.iterations.size()) - 1;
  result.termination = summary.message;
  result.initial_cost = summary.initial_cost;
  result.final_cost = summary.final_cost;
  result.starts.push_back({fit.Natural(x_initial), fit.Natural(x), summary.initial_cost, summary.final_cost, kNaN,
                           result.iterations, summary.message, true});

  // --- solver.starts: more local fits, from points spread over the bounds; the lowest cost wins ---
  const int64_t extra_rollouts = OtherStarts(c, o, t0, &train, &fit, &x, &result);
  if (o.progress && c.starts > 1) {
    for (size_t j = 0; j < result.starts.size(); ++j) {
      if (result.starts[j].chosen) std::fprintf(stderr, "sysid: the fit is start %zu's, cost %.6e\n", j + 1, result.final_cost);
    }
  }

  // --- the optimum: residual variance, covariance, rank ---
  fit.PrepareForEvaluation(false, true);
  const std::vector<std::vector<double>> train_final = fit.center();
  double sumsq = 0;
  int64_t m = 0;
  {
    std::vector<double> res;
    for (int w = 0; w < train.windows(); ++w) {
      res.resize(train_final[w].size());
      train.Residuals(w, train_final[w], res.data());
      for (double v : res) sumsq += v * v;
      m += static_cast<int64_t>(res.size());
    }
  }
  const int64_t nfree = p + int64_t(train.windows()) * fit.dims();
  result.residuals = m;
  result.residual_variance = m > nfree ? sumsq / double(m - nfree) : kNaN;
  const double scale = std::isfinite(result.residual_variance) ? result.residual_variance : 1.0;

  std::vector<std::vector<double>> cov(p, std::vector<double>(p, kNaN));
  {
    ceres::Covariance::Options co;
    co.algorithm_type = ceres::DENSE_SVD;
    co.null_space_rank = -1;
    co.min_reciprocal_condition_number = 1e-14;
    ceres::Covariance covariance(co);
    std::vector<std::pair<const double*, const double*>> pairs;
    for (int i = 0; i < p; ++i) {
      for (int j = i; j < p; ++j) pairs.emplace_back(&x[i], &x[j]);
    }
    if (covariance.Compute(pairs, &problem)) {
      for (int i = 0; i < p; ++i) {
        for (int j = i; j < p; ++j) {
          double v = kNaN;
          covariance.GetCovarianceBlock(&x[i], &x[j], &v);
          cov[i][j] = cov[j][i] = v * scale;
        }
      }
    }
  }
  std::vector<char> singular;
  std::vector<int> null_partner;
  RankTest(c, &fit, &problem, &x, &singular, &null_partner);

  // --- per parameter ---
  const std::vector<double> natural = fit.Natural(x);
  for (int k = 0; k < p; ++k) {
    const SysidParameter& sp = c.params[k];
    SysidParameterResult pr;
    pr.name = sp.name;
    pr.targets = sp.targets;
    pr.initial = sp.initial;
    pr.value = natural[k];
    pr.log_scale = sp.log_scale;
    pr.latency = sp.latency;
    const double tol = 1e-6 * (sp.hi - sp.lo);
    if (pr.value <= sp.lo + tol) pr.at_bound = "lower";
    if (pr.value >= sp.hi - tol) pr.at_bound = "upper";
    const double var = cov[k][k];
    const double sd = std::isfinite(var) && var >= 0 ? std::sqrt(var) * (sp.log_scale ? pr.value : 1.0) : kNaN;
    const double rel = sd / std::max(std::abs(pr.value), 1e-3 * (sp.hi - sp.lo));
    // the parameter it is most correlated with
    int correlated = -1;
    double most = 0;
    for (int j = 0; j < p; ++j) {
      const double r = j == k ? kNaN : cov[k][j] / std::sqrt(cov[k][k] * cov[j][j]);
      if (std::isfinite(r) && std::abs(r) > most) {
        most = std::abs(r);
        correlated = j;
      }
    }
    int partner = -1;
    if (singular[k]) {
      pr.identifiable = false;
      partner = null_partner[k];
      pr.why = "the data does not determine it: the Jacobian is singular along it";
    } else if (most > c.max_correlation) {
      pr.identifiable = false;
      partner = correlated;
      pr.why = "it is correlated " + std::to_string(most) + " with " + c.params[correlated].name +
               " (above identifiability.max_correlation): the data determines a combination of the two, not each";
    } else if (!std::isfinite(sd) || rel > c.max_relative_std) {
      pr.identifiable = false;
      partner = correlated;
      pr.why = "its relative standard deviation " + (std::isfinite(rel) ? std::to_string(rel) : std::string("(undefined)")) +
               " exceeds identifiability.max_relative_std " + std::to_string(c.max_relative_std);
    }
    if (partner >= 0) pr.partner = c.params[partner].name;
    pr.std = pr.identifiable ? sd : kNaN;
    result.params.push_back(pr);
  }
  result.correlation.assign(p, std::vector<double>(p, kNaN));
  for (int i = 0; i < p; ++i) {
    for (int j = 0; j < p; ++j) result.correlation[i][j] = cov[i][j] / std::sqrt(cov[i][i] * cov[j][j]);
  }

  // --- per-signal errors, train and held out, before and after ---
  // before the fit: the held-out windows from their recorded start states (no fitting needed to
  // see how far off the initial parameters are); after: start states fitted as for training
  std::vector<std::vector<double>> held_initial;
  {
    std::vector<double> xi = x_initial;
    Shooting s(c, &held, &xi, false);
    s.PrepareForEvaluation(false, true);
    held_initial = s.center();
  }
  const std::vector<std::vector<double>> held_final = HeldOutSimulation(c, &held, x);
  std::vector<double> e_ti, e_t, e_hi, e_h;
  SignalErrors(c, train, train_initial, &e_ti);
  SignalErrors(c, train, train_final, &e_t);
  SignalErrors(c, held, held_initial, &e_hi);
  SignalErrors(c, held, held_final, &e_h);
  for (size_t q = 0; q < c.signals.size(); ++q) {
    result.signals.push_back({c.signals[q].quantity, MeasureUnit(c.model, c.signals[q].measure), e_ti[q], e_t[q], e_hi[q], e_h[q]});
  }
  for (const Recording& rec : c.recordings) {
    SysidTrace tr;
    tr.file = rec.file;
    tr.held_out = rec.held_out;
    tr.time = rec.time;
    const size_t n = rec.time.size();
    tr.recorded.assign(c.signals.size(), std::vector<double>(n));
    for (size_t i = 0; i < n; ++i) {
      for (size_t q = 0; q < c.signals.size(); ++q) tr.recorded[q][i] = rec.signal[i][q];
    }
    tr.initial.assign(c.signals.size(), std::vector<double>(n, kNaN));
    tr.fitted = tr.initial;
    result.traces.push_back(std::move(tr));
  }
  FillTraces(train, train_initial, false, &result.traces);
  FillTraces(train, train_final, true, &result.traces);
  FillTraces(held, held_initial, false, &result.traces);
  FillTraces(held, held_final, true, &result.traces);
  result.rollouts = train.count() + held.count() + extra_rollouts;
  result.wall_s = Seconds(t0);
  return result;
}

}  // namespace s2r
