// s2r sysid CONFIG --out fit.json [--plot fit.png] [--backend cpu|cuda] [--threads T]
// Fits the scene's parameters named in CONFIG to recorded trajectories (solvers/sysid.h,
// docs/sysid.md): a progress line per iteration on stderr, then the table of parameters (initial,
// fitted, standard deviation, identifiable) and per-signal RMSE on train and held-out data.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "host/cli.h"
#include "solvers/sysid.h"

namespace s2r {
namespace {

struct SysidArgs {
  std::string config;
  std::string out;
  std::string plot;
  std::string backend = "cpu";
  int threads = 0;
  bool quiet = false;
};

void RunSysidCommand(const SysidArgs& a) {
  SysidOptions o;
  o.backend = ParseBackendKind(a.backend);
  if (o.backend == BackendKind::kCuda && !CudaAvailable()) {
    throw std::runtime_error("--backend cuda: this build has no CUDA backend or no device is present");
  }
  o.threads = a.threads;
  o.progress = !a.quiet;
  const SysidConfig config = LoadSysidConfig(a.config);
  const SysidResult result = RunSysid(config, o);
  // the plot first: a fit file appears only when everything asked for succeeded
  if (!a.plot.empty()) PlotSysid(config, result, a.plot);
  WriteFitJson(config, result, a.out);
  std::fputs(SysidTable(result).c_str(), stdout);
  std::printf("fit written to %s%s%s\n", a.out.c_str(), a.plot.empty() ? "" : ", plot to ", a.plot.c_str());
}

}  // namespace

void AddSysidCommand(CLI::App* app) {
  auto args = std::make_shared<SysidArgs>();
  CLI::App* cmd = app->add_subcommand("sysid", "Fit simulator parameters to recorded trajectories (Ceres, batched rollouts)");
  cmd->add_option("config", args->config, "sysid config (YAML, docs/sysid.md)")->required();
  cmd->add_option("--out", args->out, "the fit file to write (JSON)")->required();
  cmd->add_option("--plot", args->plot, "also draw recorded against simulated signals into this PNG (gnuplot)");
  cmd->add_option("--backend", args->backend, "cpu, cuda, or cuda-emulation (the CUDA code on the CPU, for testing)")->check(CLI::IsMember({"cpu", "cuda", "cuda-emulation"}));
  cmd->add_option("--threads", args->threads, "CPU worker threads (0: all)")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--quiet", args->quiet, "no progress lines");
  cmd->callback([args] { RunSysidCommand(*args); });
}

}  // namespace s2r
