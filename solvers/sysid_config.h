// The system-identification config (YAML, docs/sysid.md) and the recordings it names.
//
// LoadSysidConfig reads the config, loads the scene, resolves every parameter target, recorded
// quantity and actuator against it, and reads and checks every recording. Anything wrong is a
// ConfigError naming the config file, line and key path, or the recording's file, line and
// column; nothing is fitted then.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/scene/fields.h"
#include "host/scene/model.h"
#include "host/sweep/config_yaml.h"
#include "kernels/measure.h"

namespace s2r {

// One free parameter: one value driving every element its targets address.
struct SysidParameter {
  std::string name;
  std::vector<std::string> targets;    // as written
  std::vector<FieldAddress> addresses; // resolved (empty for the latency)
  bool latency = false;      // targets: [latency]: the action delay in s (latency_steps and latency_timesteps)
  bool scale_inertia = true; // a body_mass target scales that body's inertia by the same factor
  double initial = 0;
  double lo = 0, hi = 0;     // bounds, lo < hi
  bool log_scale = false;    // optimized as log(value) (bounds > 0)
  bool has_prior = false;
  double prior_mean = 0, prior_std = 0;
  double fd_step = 1e-3;     // finite-difference step in the optimized variable (relative: see docs)
};

// One recorded signal: a measured quantity, its column and noise level.
struct SysidSignal {
  std::string quantity;  // `body_pos[box].x`, `joint_qpos[slide]`, ...
  Measure measure;
  std::string column;
  double noise = 0;      // standard deviation, SI units of the quantity
  double weight = 1;     // multiplies the squared residual
};

enum class SysidLoss { kSquared, kHuber, kCauchy };

// One recording, on the control-period grid.
struct Recording {
  std::string file;
  bool held_out = false;
  std::vector<double> time;                 // s, samples
  std::vector<std::vector<double>> action;  // per sample, nactuator commands (unmapped: 0)
  std::vector<std::vector<double>> signal;  // per sample, one value per SysidSignal
  // Per sample, one value per SysidSignal: the recorded rate of the signal's quantity, where the
  // recording holds the state it comes from (a sweep store's body velocities; empty for a CSV):
  // joint_qvel for joint_qpos, body_linvel.c for body_pos.c, body_angvel.x/y/z for body_quat.x/y/z
  // (NaN for every other quantity and for body_quat.w). The window start rule prefers it to a slope.
  std::vector<std::vector<double>> rate;
  std::vector<int> line;                    // file line of each sample
};

// The most physics timesteps one recording sample (a control step of the rollouts) may span.
constexpr int64_t kMaxTimestepsPerSample = 100000;

struct SysidConfig {
  std::string file;         // the config file ("" for text parsed from memory)
  std::string config_text;
  std::string scene_source; // builtin:<name> or the resolved path
  std::string description;
  Model model;              // control_hz set from the recordings' sample period
  std::vector<SysidParameter> params;
  std::vector<SysidSignal> signals;
  std::vector<std::pair<int, std::string>> actions;  // (actuator, column)
  std::vector<Recording> recordings;  // train first, then held out
  std::string time_column = "time";
  double period = 0;        // the recordings' sample period = the control period, s
  // multiple shooting
  double window_s = 1.0;
  int velocity_half_width = 2;  // samples each side of the window start for velocity estimates
  bool fit_rates = true;        // window start positions and rates are free parameters of their window
  // loss and solver
  SysidLoss loss = SysidLoss::kSquared;
  double loss_scale = 1.0;      // in units of the stated noise
  int max_iterations = 100;
  // Local fits from this many starting points: the configured initial values, then points of a
  // Halton sequence over the bounds (each parameter in its optimized scale); the lowest final cost
  // is the fit. For landscapes with several minima (contacts that stick or slip).
  int starts = 1;
  // With scan K > 0, the cost is first evaluated at K points of the sequence (one batched rollout,
  // start states as recorded) and starts 2 .. N begin at the N - 1 lowest.
  int scan = 0;
  bool central_differences = true;  // solver.differences: forward (1 + p + d probes) or central (1 + 2p + 2d)
  // An accepted step that lowers the cost (half the sum of squared whitened residuals) by less than
  // this, after an accepted step, ends the fit: the parameters are then within about
  // sqrt(2 cost_tolerance) standard deviations of the optimum (0.14 at the default), and further
  // iterations only chase finite-difference noise. 0: Ceres' relative tolerances alone.
  double cost_tolerance = 0.01;
  double function_tolerance = 1e-6;   // Ceres' defaults
  double parameter_tolerance = 1e-8;
  double gradient_tolerance = 1e-10;
  double max_relative_std = 0.5;// above it a parameter is reported not identifiable
  double max_correlation = 0.999;// two parameters correlated beyond it are reported not identifiable
  int latency_param = -1;       // index in params, -1 without one
};

// `text` parsed as if read from `file` (relative paths resolve against its folder).
SysidConfig ParseSysidConfig(const std::string& text, const std::string& file);
SysidConfig LoadSysidConfig(const std::string& path);

// Parses a measured quantity (`body_pos[box].x`, `body_quat[box].w`, `joint_qpos[slide]`,
// `site_pos[tip].z`) against the model; throws std::invalid_argument naming what is wrong.
Measure ParseMeasure(const Model& m, const std::string& text);
// The unit of a measured quantity ("m", "rad or m", ...), for tables.
const char* MeasureUnit(const Model& m, const Measure& q);

}  // namespace s2r
