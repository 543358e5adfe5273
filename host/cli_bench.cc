// s2r bench --scene S --worlds N --control-steps K --backend cpu|cuda [--threads T] --json
//
// Throughput of whole control steps. Every run resets the batch, takes one untimed control step,
// then times K more; the figure reported is the median over --repeats runs. Actions follow a fixed
// script (bench/README.md) so the same motion can be replayed in MuJoCo:
//   u_i(world, t) = mid_i + 0.5 * half_i * sin(2 pi 0.5 t + 0.1 world + i)
// with mid/half the centre and half-width of actuator i's ctrlrange (mid 0, half 1 if unlimited).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "host/cli.h"
#include "host/engine.h"
#include "host/scene/scene_source.h"
#include "kernels/step_features.h"
#include "kernels/sweep_step.h"
#include "kernels/workspace.h"

namespace s2r {
namespace {

struct BenchArgs {
  std::string scene = "builtin:box_push";
  int worlds = 1024;
  int control_steps = 100;
  std::string backend = "cpu";
  int threads = 0;
  int repeats = 3;
  int steps_per_launch = 1;
  bool json = false;
  bool scratch_probe = false;
};

void ScriptedActions(const Model& m, int nworld, long step, std::vector<Real>* out) {
  int na = m.nactuator();
  out->assign(static_cast<size_t>(nworld) * (na > 0 ? na : 1), Real(0));
  double t = step / static_cast<double>(m.control_hz);
  for (int w = 0; w < nworld; ++w) {
    for (int i = 0; i < na; ++i) {
      double mid = 0, half = 1;
      if (m.actuator_ctrllimited[i]) {
        mid = 0.5 * (m.actuator_ctrlrange[2 * i] + m.actuator_ctrlrange[2 * i + 1]);
        half = 0.5 * (m.actuator_ctrlrange[2 * i + 1] - m.actuator_ctrlrange[2 * i]);
      }
      (*out)[static_cast<size_t>(w) * na + i] =
          static_cast<Real>(mid + 0.5 * half * std::sin(2 * M_PI * 0.5 * t + 0.1 * w + i));
    }
  }
}

void RunBench(const BenchArgs& args) {
  if (args.worlds < 1) throw std::runtime_error("--worlds must be >= 1");
  if (args.control_steps < 1) throw std::runtime_error("--control-steps must be >= 1");
  if (args.repeats < 1) throw std::runtime_error("--repeats must be >= 1");
  if (args.steps_per_launch < 1) throw std::runtime_error("--steps-per-launch must be >= 1");
  EngineOptions options;
  options.nworld = args.worlds;
  options.threads = args.threads;
  options.backend = ParseBackendKind(args.backend);
  Engine engine(LoadScene(args.scene), options);
  const Model& m = engine.model();
  bool host_state = options.backend == BackendKind::kCpu;
  if (args.scratch_probe) {
    if (options.backend != BackendKind::kCpu) throw std::runtime_error("--scratch-probe runs on --backend cpu only");
    engine.SetScratchProbe(true);
  }

  // the action script is precomputed so building it is not timed: (control_steps + 1, worlds,
  // nactuator), step-major, as Engine::StepMany reads it
  const size_t step_reals = static_cast<size_t>(args.worlds) * m.nactuator();
  std::vector<Real> actions(step_reals * (args.control_steps + 1));
  std::vector<Real> one;
  for (int k = 0; k <= args.control_steps; ++k) {
    ScriptedActions(m, args.worlds, k, &one);
    std::copy(one.begin(), one.begin() + step_reals, actions.begin() + k * step_reals);
  }
  auto step_actions = [&](int k) { return step_reals > 0 ? actions.data() + k * step_reals : nullptr; };

  std::vector<double> seconds;
  double contact_sum = 0;
  long contact_samples = 0;
  for (int r = 0; r < args.repeats; ++r) {
    engine.Reset();
    engine.Step(step_actions(0));  // first step excluded
    double elapsed = 0;
    for (int k = 1; k <= args.control_steps; k += args.steps_per_launch) {
      const int n = std::min(args.steps_per_launch, args.control_steps + 1 - k);
      auto t0 = std::chrono::steady_clock::now();
      engine.StepMany(step_actions(k), n);  // n = 1: Step
      elapsed += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (host_state && r == args.repeats - 1) {
        for (int w = 0; w < args.worlds; ++w) contact_sum += engine.state().contact_count[w];
        contact_samples += args.worlds;
      }
    }
    auto t0 = std::chrono::steady_clock::now();
    engine.Synchronize();  // CUDA queues the steps: the last ones may still be running
    elapsed += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    seconds.push_back(elapsed);
  }
  engine.Download();
  const HostState& st = engine.state();
  if (!host_state) {
    for (int w = 0; w < args.worlds; ++w) contact_sum += st.contact_count[w];
    contact_samples += args.worlds;
  }
  int frozen = 0;
  long long overflow = 0;
  for (int w = 0; w < args.worlds; ++w) {
    frozen += st.status[w] != kWorldOk;
    overflow += st.contact_overflow[w];
  }
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  double median = sorted[sorted.size() / 2];
  double env_steps = static_cast<double>(args.worlds) * args.control_steps / median;
  char hash[32];
  std::snprintf(hash, sizeof(hash), "%016llx", static_cast<unsigned long long>(engine.StateHash()));

  nlohmann::json j;
  j["scene"] = args.scene;
  j["backend"] = args.backend;
  j["worlds"] = args.worlds;
  j["threads"] = engine.threads();
  j["control_steps"] = args.control_steps;
  j["steps_per_launch"] = args.steps_per_launch;  // control steps per Engine::StepMany call
  j["repeats"] = args.repeats;
  j["substeps"] = m.substeps;
  j["substeps_no_contact"] = m.substeps_no_contact;  // 0: substeps in every step
  j["substeps_soft_contact"] = m.substeps_soft_contact;  // 0: substeps in every contact step
  j["solve_passes"] = m.solve_passes;                // the fewest solve passes of a physics step
  j["substeps_reason"] = m.substeps_reason.empty() ? "given" : m.substeps_reason;  // Model::ChooseSubsteps
  // the compiled step this scene runs (kernels/step_features.h)
  j["step_variant"] = StepVariantName(StepVariantFor(StepFeaturesOf(engine.view())));
  j["physics_steps_per_control"] = m.steps_per_control;
  j["dt"] = m.timestep;
  j["control_hz"] = m.control_hz;
  j["env_steps_per_s"] = env_steps;
  j["run_seconds"] = seconds;
  j["contacts_per_step"] = contact_samples ? contact_sum / contact_samples : 0.0;
  j["contact_overflow"] = overflow;
  j["frozen_worlds"] = frozen;
  j["bytes_per_world"] = engine.BytesPerWorld();
  {  // the parts the GPU traffic model reads (bench/cuda_kernels.py)
    int64_t state_bytes = 0;
    StateView v = engine.state().view;
    ForEachStateArray(v, [&state_bytes](const char*, auto* ptr, int64_t per_world, bool) {
      state_bytes += per_world * static_cast<int64_t>(sizeof(*ptr));
    });
    const WorkspaceLayout layout = ComputeWorkspaceLayout(engine.view());
    j["state_bytes_per_world"] = state_bytes;
    j["step_scratch_bytes"] = layout.step_bytes;    // per world stepping at once (CUDA: every world)
    j["world_scratch_bytes"] = layout.world_bytes;  // kept between steps, per world
    // what fills the two blocks, array by array (kernels/workspace.h; before the 64-byte alignment)
    nlohmann::json arrays = nlohmann::json::object();
#define S2R_BENCH_ARRAY(name, type, elements, lifetime, description)                           \
    {                                                                                         \
      const int64_t n = layout.count[static_cast<int>(WorkspaceArray::name)];                 \
      if (n > 0) arrays[#name] = n * static_cast<int64_t>(sizeof(type));                      \
    }
    S2R_WORKSPACE_ARRAYS(S2R_BENCH_ARRAY)
#undef S2R_BENCH_ARRAY
    j["scratch_arrays_bytes"] = arrays;
    j["step_block_memory"] = engine.StepBlockMemory();
    // what CUDA stages after the step block: the world's state, and room for a sweep's record
    j["staged_state_bytes"] = WorldStateBytes(StateDims(engine.view(), 1)) + int64_t(sizeof(SweepWorld));
    j["sweep_record_bytes"] = int64_t(sizeof(SweepWorld));  // a sweep world's episode record (kernels/sweep_step.h)
    j["policy_row_bytes"] = int64_t(sizeof(SweepPolicyRow));  // a policy's inputs per world and step (same header)
    // whether this binary's CPU step skips the loads the device's does (kLeanReads,
    // kernels/solver_body.h: a build with S2R_LEAN_READS)
    j["lean_reads"] = kLeanReads;
  }
  if (args.scratch_probe) {  // the mean bytes of each step array a world's control step wrote
    nlohmann::json written = nlohmann::json::object();
    double total = 0;
    for (const auto& [name, bytes] : engine.ScratchWritten()) {
      written[name] = bytes;
      total += bytes;
    }
    j["scratch_written_bytes"] = written;
    j["scratch_written_total"] = total;
  }
  j["state_hash"] = hash;
  j["precision"] = sizeof(Real) == 4 ? "float32" : "float64";
  if (args.json) {
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s  %s  worlds=%d threads=%d  %.0f env-steps/s  contacts/step=%.2f  hash=%s\n",
                args.scene.c_str(), args.backend.c_str(), args.worlds, engine.threads(), env_steps,
                j["contacts_per_step"].get<double>(), hash);
  }
}

}  // namespace

void AddBenchCommand(CLI::App* app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app->add_subcommand("bench", "Measure env-steps/s of a scene over a batch of worlds");
  cmd->add_option("--scene", args->scene, "MJCF scene file, or builtin:<name>")->capture_default_str();
  cmd->add_option("--worlds", args->worlds, "number of worlds")->capture_default_str();
  cmd->add_option("--control-steps", args->control_steps, "timed control steps per run")->capture_default_str();
  cmd->add_option("--backend", args->backend, "cpu, cuda, or cuda-emulation (the CUDA code on the CPU, for testing)")->capture_default_str();
  cmd->add_option("--threads", args->threads, "CPU threads (0 = all)")->capture_default_str();
  cmd->add_option("--repeats", args->repeats, "runs; the median is reported")->capture_default_str();
  cmd->add_option("--steps-per-launch", args->steps_per_launch,
                  "control steps per call with the actions known in advance (Engine::StepMany: on CUDA one "
                  "launch, the state staged once; on the CPU a world's steps in a row)")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->add_flag("--scratch-probe", args->scratch_probe,
                "CPU: start each world's control step on a step block of marker bytes and report the bytes of "
                "each step array it wrote (scratch_written_bytes; slower)");
  cmd->callback([args] { RunBench(*args); });
}

}  // namespace s2r
