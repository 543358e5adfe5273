// `s2r sysid`: fit a scene's physical parameters to recorded trajectories (docs/sysid.md).
//
// Multiple shooting over windows of the recordings; every window of every trajectory, at the
// current parameters and at each finite-difference probe, is one world of one batched rollout
// (windows x (2p + 1) worlds, one Engine::Step loop). Ceres (Levenberg-Marquardt, bounds) drives
// the continuous parameters through an EvaluationCallback that runs those rollouts; the cost
// functions only copy results out. The action delay is a continuous parameter like the others (the
// engine blends the two actions around a fractional switch time). The rates a window starts with
// that the recording does not observe are free parameters of that window. With solver.starts > 1
// the local fit runs from several points spread over the bounds and the lowest cost wins.
// Uncertainty comes from
// Ceres' Covariance (DENSE_SVD) at the optimum, scaled by the residual variance.
#pragma once

#include <string>
#include <vector>

#include "host/engine.h"
#include "solvers/sysid_config.h"

namespace s2r {

struct SysidOptions {
  BackendKind backend = BackendKind::kCpu;
  int threads = 0;
  bool progress = true;  // one line per iteration on stderr
};

struct SysidParameterResult {
  std::string name;
  std::vector<std::string> targets;
  double initial = 0;
  double value = 0;
  double std = 0;           // standard deviation (NaN when not identifiable)
  bool identifiable = true;
  std::string partner;      // what it trades off against, when not identifiable
  std::string why;          // why it is not identifiable
  std::string at_bound;     // "", "lower" or "upper"
  bool log_scale = false;
  bool latency = false;
};

struct SysidSignalError {
  std::string quantity;
  std::string unit;
  double train_initial = 0, train = 0;        // RMSE over the train windows, SI units
  double held_out_initial = 0, held_out = 0;  // the same over the held-out recordings
};

// What one recording looks like simulated window by window (for the plot).
struct SysidTrace {
  std::string file;
  bool held_out = false;
  std::vector<double> time;
  std::vector<std::vector<double>> recorded;  // per signal, per sample
  std::vector<std::vector<double>> initial;   // simulated at the initial parameters (NaN at window starts)
  std::vector<std::vector<double>> fitted;    // at the fitted parameters
};

// One local fit of a multi-start (solver.starts): where it began and ended.
struct SysidStart {
  std::vector<double> initial;  // natural values, one per parameter
  std::vector<double> value;    // where it ended (the initial values when it could not start)
  double initial_cost = 0, final_cost = 0;  // NaN where it could not start
  double scan_cost = 0;         // its cost in the scan (solver.scan), NaN where it was not scanned
  int iterations = 0;
  std::string termination;      // Ceres' message, or why it did not start
  bool chosen = false;          // the lowest final cost: the fit reported
};

struct SysidResult {
  std::vector<SysidParameterResult> params;
  std::vector<SysidStart> starts;  // solver.starts of them, the configured initial values first
  std::vector<std::vector<double>> correlation;  // p x p (NaN where the covariance is unavailable)
  std::vector<SysidSignalError> signals;
  std::vector<SysidTrace> traces;
  double initial_cost = 0, final_cost = 0;  // Ceres' cost: 1/2 sum of (robustified) squared whitened residuals
  double residual_variance = 0;             // sum r^2 / (m - p) at the optimum; the covariance is scaled by it
  int64_t residuals = 0;                    // m: train residuals
  int iterations = 0;
  int64_t rollouts = 0;                     // window rollouts simulated (worlds x windows)
  int windows_train = 0, windows_held_out = 0;
  double wall_s = 0;
  std::string termination;
};

// Throws std::runtime_error when the fit cannot proceed (the rollout at the initial parameters is
// unstable, a recording is too short for a window, ...).
SysidResult RunSysid(const SysidConfig& config, const SysidOptions& options);

// fit.json (docs/sysid.md): written to a temporary file and renamed, so a failed run leaves
// nothing that looks like a fit.
void WriteFitJson(const SysidConfig& config, const SysidResult& result, const std::string& path);

// The table printed at the end of `s2r sysid`.
std::string SysidTable(const SysidResult& result);

// --plot: recorded against simulated signals before and after the fit, held-out recordings
// marked, drawn by gnuplot (Debian's gnuplot-nox) into a PNG. Throws naming what failed.
void PlotSysid(const SysidConfig& config, const SysidResult& result, const std::string& png_path);

}  // namespace s2r
