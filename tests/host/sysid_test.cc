// System identification (solvers/sysid.h) on trajectories s2r generates with known parameters:
// noise-free fits recover them within 1%, noisy fits within 3 standard deviations; a pair the data
// cannot separate is flagged with its partner; bad input is rejected naming file and line or key;
// and a fit file centres a sweep's randomization.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "host/engine.h"
#include "host/scene/scene_source.h"
#include "host/sweep/randomization.h"
#include "host/sweep/sweep.h"
#include "solvers/sysid.h"
#include "tests/host/run_command.h"
#include "tests/host/test_dir.h"

namespace s2r {
namespace {

const std::string kSource = S2R_SOURCE_DIR;
const std::string kDrive = kSource + "/configs/scenes/test/linear_drive.xml";
const std::string kBox = kSource + "/configs/scenes/test/box_slide.xml";

// A recording made by s2r itself: one world with `truth` applied (SetParam address -> values),
// driven by command(t) on `actuator`, sampled every control period (sample 0 = the initial state),
// with Gaussian noise of `noise` on every observed quantity.
struct Truth {
  std::string scene;
  std::vector<std::pair<std::string, std::vector<Real>>> params;
  std::vector<std::string> quantities;
  double noise = 0;
};

void WriteRecording(const Truth& truth, const std::string& path, double duration, const std::function<double(double)>& command,
                    uint32_t seed) {
  Model model = LoadScene(truth.scene);
  const double period = 1.0 / model.control_hz;
  EngineOptions eo;
  eo.threads = 1;
  Engine e(model, eo);
  for (const auto& p : truth.params) e.SetParam(p.first, p.second);
  e.Reset();
  std::vector<Measure> measures;
  for (const std::string& q : truth.quantities) measures.push_back(ParseMeasure(model, q));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  std::ofstream f(path);
  f.precision(10);
  f << "time,cmd";
  for (const std::string& q : truth.quantities) f << "," << q;
  f << "\n";
  const int n = static_cast<int>(std::lround(duration / period)) + 1;
  for (int k = 0; k < n; ++k) {
    const double t = k * period;
    const double u = command(t);
    f << t << "," << u;
    for (const Measure& m : measures) f << "," << double(Measured(e.view(), e.state().view, 0, m)) + truth.noise * gauss(rng);
    f << "\n";
    const Real a = static_cast<Real>(u);
    e.Step(&a);
  }
  ASSERT_EQ(e.state().view.status(0), kWorldOk);
}

// A position target that steps to a new random level every `hold` seconds, with a slow sine on
// top (the drive then moves at many speeds, and stops, so friction loss and damping both show).
std::function<double(double)> StepsAndSine(uint32_t seed, double amplitude, double hold) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> level(-amplitude, amplitude);
  std::vector<double> levels(200);
  for (double& l : levels) l = level(rng);
  return [levels, hold, amplitude](double t) {
    return levels[static_cast<size_t>(t / hold) % levels.size()] + 0.3 * amplitude * std::sin(2.0 * t);
  };
}

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = TestDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

const SysidParameterResult& Param(const SysidResult& r, const std::string& name) {
  for (const SysidParameterResult& p : r.params) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no parameter " + name);
}

SysidResult Fit(const std::string& config_path, int threads = 2) {
  SysidOptions o;
  o.threads = threads;
  o.progress = false;
  return RunSysid(LoadSysidConfig(config_path), o);
}

// --- the linear drive: kp, damping, friction loss and a delay of 17 timesteps ---------------------

Truth DriveTruth(double noise) {
  return {kDrive,
          {{"actuator_kp[drive]", {300}},
           {"joint_damping[slide]", {8}},
           {"joint_frictionloss[slide]", {3}},
           {"latency_steps", {1}},
           {"latency_timesteps", {7}}},
          {"joint_qpos[slide]"},
          noise};
}

std::string DriveConfig(double noise_stated) {
  return "scene: " + kDrive + R"(
parameters:
  - {name: kp, targets: ["actuator_kp[drive]"], initial: 150, bounds: [10, 2000], scale: log}
  - {name: damping, targets: ["joint_damping[slide]"], initial: 3, bounds: [0, 100]}
  - {name: friction_loss, targets: ["joint_frictionloss[slide]"], initial: 1, bounds: [0, 50]}
  - {name: delay, targets: [latency], initial: 0.01, bounds: [0, 0.1]}
data:
  train: [a.csv, b.csv]
  held_out: [c.csv]
actions: {drive: cmd}
observations:
  - {quantity: "joint_qpos[slide]", noise: )" + std::to_string(noise_stated) + R"(}
window: {length_s: 1.0}
)";
}

void WriteDriveRecordings(double noise) {
  const Truth truth = DriveTruth(noise);
  WriteRecording(truth, TestDir() + "/a.csv", 8.0, StepsAndSine(1, 0.2, 0.5), 11);
  WriteRecording(truth, TestDir() + "/b.csv", 8.0, StepsAndSine(2, 0.2, 0.5), 12);
  WriteRecording(truth, TestDir() + "/c.csv", 8.0, StepsAndSine(3, 0.2, 0.5), 13);
}

TEST(Sysid, LinearDriveNoiseFreeRecoversGainDampingFrictionLossAndDelayWithin1Percent) {
  WriteDriveRecordings(0.0);
  const SysidResult r = Fit(Write("drive.yaml", DriveConfig(1e-4)));
  EXPECT_NEAR(Param(r, "kp").value, 300, 3.0);
  EXPECT_NEAR(Param(r, "damping").value, 8, 0.08);
  EXPECT_NEAR(Param(r, "friction_loss").value, 3, 0.03);
  EXPECT_NEAR(Param(r, "delay").value, 0.034, 1e-6);  // 17 timesteps
  for (const SysidParameterResult& p : r.params) EXPECT_TRUE(p.identifiable) << p.name << ": " << p.why;
  ASSERT_EQ(r.signals.size(), 1u);
  EXPECT_LT(r.signals[0].held_out, 1e-4);  // m
  EXPECT_LT(r.signals[0].held_out, 0.05 * r.signals[0].held_out_initial);
  EXPECT_LT(r.final_cost, 1e-3 * r.initial_cost);
}

TEST(Sysid, LinearDriveNoisyFitIsWithin3SigmaAndTheNoiseIsEstimated) {
  const double noise = 5e-4;  // m
  WriteDriveRecordings(noise);
  const SysidResult r = Fit(Write("drive.yaml", DriveConfig(noise)));
  const double truth[] = {300, 8, 3, 0.034};
  const char* names[] = {"kp", "damping", "friction_loss", "delay"};
  for (int k = 0; k < 4; ++k) {
    const SysidParameterResult& p = Param(r, names[k]);
    ASSERT_TRUE(p.identifiable) << p.name << ": " << p.why;
    ASSERT_TRUE(std::isfinite(p.std) && p.std > 0) << p.name;
    EXPECT_LT(std::abs(p.value - truth[k]), 3 * p.std + (k == 3 ? 0.002 : 0.0))
        << p.name << " = " << p.value << " +- " << p.std << ", truth " << truth[k];
  }
  // the stated noise is the true one: the residual variance is about 1
  EXPECT_NEAR(r.residual_variance, 1.0, 0.2);
  EXPECT_LT(r.signals[0].held_out, 1.5 * noise);
}

// --- a box pushed on a floor: mass and friction, then the unidentifiable pair --------------------

Truth BoxTruth() {
  return {kBox, {{"body_mass[box]", {1.3}}, {"geom_friction[box, floor]", {0.55, 0.55}}}, {"body_pos[box].x"}, 0.0};
}

// pushes of 4..14 N for a second, then nothing for a second: it accelerates, slides and stops
std::function<double(double)> Pushes(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> force(4.0, 14.0);
  std::vector<double> f(100);
  for (double& v : f) v = force(rng);
  return [f](double t) {
    const size_t i = static_cast<size_t>(t / 2.0) % f.size();
    return std::fmod(t, 2.0) < 1.0 ? f[i] : 0.0;
  };
}

// Two 6 s recordings of the pushed box (a.csv to train on, b.csv held out) and a config fitting
// `parameters` (YAML list items) to its x position.
SysidResult FitBox(const std::string& parameters) {
  WriteRecording(BoxTruth(), TestDir() + "/a.csv", 6.0, Pushes(1), 1);
  WriteRecording(BoxTruth(), TestDir() + "/b.csv", 6.0, Pushes(2), 2);
  return Fit(Write("box.yaml", "scene: " + kBox + "\nparameters:\n" + parameters + R"(data: {train: [a.csv], held_out: [b.csv]}
actions: {push_x: cmd}
observations:
  - {quantity: "body_pos[box].x", noise: 0.0005}
window: {length_s: 2.0}
)"));
}

TEST(Sysid, BoxPushedOnAFloorRecoversMassAndFrictionWithin1Percent) {
  const SysidResult r = FitBox(R"(  - {name: mass, targets: ["body_mass[box]"], initial: 0.8, bounds: [0.1, 10], scale: log}
  - {name: friction, targets: ["geom_friction[box, floor]"], initial: 0.3, bounds: [0.01, 2]}
)");
  EXPECT_NEAR(Param(r, "mass").value, 1.3, 0.013);
  EXPECT_NEAR(Param(r, "friction").value, 0.55, 0.0055);
  EXPECT_TRUE(Param(r, "mass").identifiable);
  EXPECT_TRUE(Param(r, "friction").identifiable);
}

TEST(Sysid, MassAndActuatorGainWithoutAForceMeasurementAreFlaggedAsPartners) {
  // only gear/mass shows in the motion (friction acts per unit mass): the pair trades off
  const SysidResult r = FitBox(R"(  - {name: mass, targets: ["body_mass[box]"], initial: 1.0, bounds: [0.1, 10], scale: log}
  - {name: gain, targets: ["actuator_gear[push_x].0"], initial: 1.2, bounds: [0.1, 10], scale: log}
  - {name: friction, targets: ["geom_friction[box, floor]"], initial: 0.5, bounds: [0.01, 2]}
)");
  const SysidParameterResult& mass = Param(r, "mass");
  const SysidParameterResult& gain = Param(r, "gain");
  EXPECT_FALSE(mass.identifiable);
  EXPECT_FALSE(gain.identifiable);
  EXPECT_EQ(mass.partner, "gain");
  EXPECT_EQ(gain.partner, "mass");
  EXPECT_TRUE(std::isnan(mass.std));
  // what the data does determine is still fitted: the ratio and the friction
  EXPECT_NEAR(gain.value / mass.value, 1.0 / 1.3, 0.01 / 1.3);
  EXPECT_NEAR(Param(r, "friction").value, 0.55, 0.0055);
  EXPECT_TRUE(Param(r, "friction").identifiable);
}

// --- contacts: restitution of a bouncing ball, stiffness and damping of a pressed box -------------

const std::string kProbe = kSource + "/configs/scenes/test/contact_probe.xml";

Truth ProbeTruth(double ball_height, double noise) {
  return {kProbe,
          {{"geom_restitution[ball, floor]", {0.7, 0.7}},
           {"contact_hertz", {8}},
           {"contact_damping_ratio", {0.5}},
           {"body_pos0[ball].z", {Real(ball_height)}}},
          {"body_pos[ball].z", "body_pos[box].z"},
          noise};
}

// presses of 0..40 N held for 0.3 s
std::function<double(double)> Presses(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> force(0.0, 40.0);
  std::vector<double> f(100);
  for (double& v : f) v = force(rng);
  return [f](double t) { return f[static_cast<size_t>(t / 0.3) % f.size()]; };
}

void WriteProbeRecordings(double noise) {
  WriteRecording(ProbeTruth(0.5, noise), TestDir() + "/a.csv", 3.0, Presses(1), 21);
  WriteRecording(ProbeTruth(0.3, noise), TestDir() + "/b.csv", 3.0, Presses(2), 22);
  WriteRecording(ProbeTruth(0.4, noise), TestDir() + "/c.csv", 3.0, Presses(3), 23);
}

// The bouncing ball, one window per drop (a window that starts in the middle of an impact has
// lost the contact's state, which a restart cannot recover).
TEST(Sysid, RestitutionOfABouncingBallNoiseFreeWithin1Percent) {
  WriteProbeRecordings(0.0);
  const SysidResult r = Fit(Write("ball.yaml", "scene: " + kProbe + R"(
parameters:
  - {name: restitution, targets: ["geom_restitution[ball, floor]"], initial: 0.4, bounds: [0, 1]}
data: {train: [a.csv, b.csv], held_out: [c.csv], ignore_columns: ["body_pos[box].z"]}
actions: {press_z: cmd}
observations:
  - {quantity: "body_pos[ball].z", noise: 0.0001}
window: {length_s: 3}
)"));
  EXPECT_NEAR(Param(r, "restitution").value, 0.7, 0.007);
  EXPECT_TRUE(Param(r, "restitution").identifiable);
  EXPECT_LT(r.signals[0].held_out, 0.1 * r.signals[0].held_out_initial);
}

// (the contact's damping ratio is not fitted: in this scene it moves the box by micrometres at
// 50 Hz -- 0.5 -> 1.0 changes a 3 s window's RMSE by 3e-5 m -- and fits of it wander)
std::string PressConfig(double noise) {
  return "scene: " + kProbe + R"(
parameters:
  - {name: stiffness, targets: [contact_hertz], initial: 4, bounds: [1, 100], scale: log}
data: {train: [a.csv, b.csv], held_out: [c.csv], ignore_columns: ["body_pos[ball].z"]}
actions: {press_z: cmd}
observations:
  - {quantity: "body_pos[box].z", noise: )" + std::to_string(noise) + R"(}
window: {length_s: 0.5}
)";
}

TEST(Sysid, ContactStiffnessOfAPressedBoxNoiseFreeWithin1PercentAndNoisyWithin3Sigma) {
  WriteProbeRecordings(0.0);
  SysidResult r = Fit(Write("press.yaml", PressConfig(1e-4)));
  EXPECT_NEAR(Param(r, "stiffness").value, 8, 0.08);
  const double noise = 5e-4;  // m
  WriteProbeRecordings(noise);
  r = Fit(Write("press.yaml", PressConfig(noise)));
  const SysidParameterResult& p = Param(r, "stiffness");
  ASSERT_TRUE(p.identifiable) << p.why;
  EXPECT_LT(std::abs(p.value - 8), 3 * p.std) << p.value << " +- " << p.std;
}

// --- the fit file, and a sweep centred on it --------------------------------------------------------

TEST(Sysid, FitFileCentresASweepRandomization) {
  WriteRecording(BoxTruth(), TestDir() + "/a.csv", 6.0, Pushes(1), 1);
  WriteRecording(BoxTruth(), TestDir() + "/b.csv", 6.0, Pushes(2), 2);
  const std::string cfg = Write("box.yaml", "scene: " + kBox + R"(
parameters:
  - {name: box_mass, targets: ["body_mass[box]"], initial: 0.8, bounds: [0.1, 10], scale: log}
data: {train: [a.csv], held_out: [b.csv]}
actions: {push_x: cmd}
observations:
  - {quantity: "body_pos[box].x", noise: 0.002}
)");
  const SysidConfig config = LoadSysidConfig(cfg);
  SysidOptions o;
  o.progress = false;
  const SysidResult r = RunSysid(config, o);
  const std::string fit = TestDir() + "/fit.json";
  WriteFitJson(config, r, fit);
  std::ifstream in(fit);
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j["parameters"].size(), 1u);
  EXPECT_EQ(j["parameters"][0]["name"], "box_mass");
  EXPECT_TRUE(j["parameters"][0]["identifiable"].get<bool>());
  EXPECT_GT(j["parameters"][0]["std"].get<double>(), 0.0);
  EXPECT_TRUE(j.contains("correlation") && j.contains("rmse") && j.contains("iterations") && j.contains("rollouts"));
  // the sweep reads it: a truncated normal centred on the fit, +-2 std (box_push has a body 'box')
  const std::vector<FitParameter> read = ReadFitFile(fit);
  ASSERT_EQ(read.size(), 1u);
  const ConfigNode list = ConfigNode::Parse(R"(
- name: box_mass
  targets: ["body_mass[box]"]
  mode: absolute
  distribution: truncnormal
  fit: {file: fit.json}
)", TestDir() + "/sweep.yaml");
  const Model push = LoadScene("builtin:box_push");
  const RandomizationSpec spec = ParseRandomization(list, push, TestDir());
  ASSERT_EQ(spec.params.size(), 1u);
  EXPECT_DOUBLE_EQ(spec.params[0].distribution.a, r.params[0].value);
  EXPECT_DOUBLE_EQ(spec.params[0].distribution.b, r.params[0].std);
  EXPECT_DOUBLE_EQ(spec.params[0].distribution.lo, r.params[0].value - 2 * r.params[0].std);
}

// --- recordings from a dataset store: a sweep's episodes ------------------------------------------

TEST(Sysid, FitsToEpisodesOfASweepStore) {
  // four push episodes with the scene's own box mass (0.5 kg) and friction, no randomization
  const std::string sweep = Write("sweep.yaml", R"(
scene: builtin:box_push
task:
  name: push
  params: {goal_x: 0.25, goal_y: 0.0, goal_radius: 0.03, hold_s: 0.2, stuck_s: 1.0}
episodes: 4
horizon_s: 2.0
seed: 3
worlds: 4
)");
  SweepOptions so;
  so.threads = 1;
  RunSweep(LoadSweepConfig(sweep), TestDir() + "/push.zarr", so);
  // the store holds the bodies' velocities too: a window starts from the stored state exactly, so
  // at the true mass the episodes replay to the bit (cost 0, with tight bounds and no free rates)
  const std::string fit = R"(
scene: builtin:box_push
parameters:
  - {name: box_mass, targets: ["body_mass[box]"], initial: INITIAL, bounds: [LO, HI], scale: log}
data: {store: push.zarr, train_episodes: [0, 1, 2], held_out_episodes: [3]}
observations:
  - {quantity: "body_pos[box].x", noise: 0.0005}
  - {quantity: "body_pos[box].y", noise: 0.0005}
  - {quantity: "joint_qpos[slide_x]", noise: 0.0005}
window: {length_s: 2, start_state: recorded}
solver: {starts: STARTS, scan: SCAN}
)";
  auto config = [&](const std::string& initial, const std::string& lo, const std::string& hi, int starts, int scan) {
    std::string t = fit;
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"INITIAL", initial}, {"LO", lo}, {"HI", hi},
                                     {"STARTS", std::to_string(starts)}, {"SCAN", std::to_string(scan)}}) {
      t.replace(t.find(key), key.size(), value);
    }
    return Write("store.yaml", t);
  };
  const SysidResult exact = Fit(config("0.5", "0.4999999", "0.5000001", 1, 0));
  EXPECT_LT(exact.initial_cost, 1e-9);
  // One window per episode: a restart in the middle of the push would lose the contacts' warm
  // starts, which the store does not record (docs/sysid.md). Pushed against friction 1, the box's
  // mass has two basins here: from 0.3 a single local fit ends at 0.669 (cost 237, every start of
  // 8 but one), and only the start at 0.40 reaches the true 0.5 (cost 0); 8 starts find it.
  const SysidResult r = Fit(config("0.3", "0.1", "4", 8, 0));
  EXPECT_NEAR(Param(r, "box_mass").value, 0.5, 0.005);
  EXPECT_TRUE(Param(r, "box_mass").identifiable);
  ASSERT_EQ(r.starts.size(), 8u);
  EXPECT_NEAR(r.starts[0].initial[0], 0.3, 1e-12);             // the configured start first
  EXPECT_NEAR(r.starts[1].initial[0], std::sqrt(0.1 * 4), 1e-9);  // then Halton: the bounds' middle in log
  int chosen = 0;
  for (const SysidStart& st : r.starts) {
    chosen += st.chosen;
    if (st.chosen) EXPECT_EQ(st.final_cost, r.final_cost);
    if (std::isfinite(st.final_cost)) EXPECT_GE(st.final_cost, r.final_cost);
  }
  EXPECT_EQ(chosen, 1);
  // A scan of the cost at 64 points of the sequence first: starts 2-4 begin at its three lowest
  // (0.502, 0.670, 0.474 kg in the float32 build), each start's first cost in the local fit is its scan cost (the same
  // rollout), and the start at 0.474 reaches 0.5.
  const SysidResult scan = Fit(config("0.3", "0.1", "4", 4, 64));
  EXPECT_NEAR(Param(scan, "box_mass").value, 0.5, 0.005);
  ASSERT_EQ(scan.starts.size(), 4u);
  EXPECT_TRUE(std::isnan(scan.starts[0].scan_cost));
  for (size_t j = 1; j < scan.starts.size(); ++j) {
    const SysidStart& st = scan.starts[j];
    EXPECT_NEAR(st.initial_cost, st.scan_cost, 1e-9 * st.scan_cost) << "start " << j + 1;
    if (j > 1) EXPECT_GE(st.scan_cost, scan.starts[j - 1].scan_cost) << "start " << j + 1;
  }
  // starts 2-4 ran side by side on the two threads; on one, one after another: the same fit
  const SysidResult one = Fit(config("0.3", "0.1", "4", 4, 64), 1);
  EXPECT_EQ(Param(one, "box_mass").value, Param(scan, "box_mass").value);
  for (size_t j = 0; j < scan.starts.size(); ++j) EXPECT_EQ(one.starts[j].value, scan.starts[j].value) << "start " << j + 1;
  EXPECT_EQ(one.rollouts, scan.rollouts);
  // a bad episode index names the store
  const std::string bad = Write("bad.yaml", R"(
scene: builtin:box_push
parameters:
  - {name: box_mass, targets: ["body_mass[box]"], initial: 0.3, bounds: [0.05, 5]}
data: {store: push.zarr, train_episodes: [0, 9], held_out_episodes: [3]}
observations:
  - {quantity: "body_pos[box].x", noise: 0.0005}
)");
  try {
    LoadSysidConfig(bad);
    FAIL() << "loaded a missing episode";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.yaml:5:42: data.train_episodes: " + TestDir() + "/push.zarr holds no episode 9"),
              std::string::npos)
        << e.what();
  }
}

// --- the command -------------------------------------------------------------------------------------

TEST(SysidCli, WritesTheFitThePlotAndTheTable) {
  WriteRecording(BoxTruth(), TestDir() + "/a.csv", 4.0, Pushes(1), 1);
  WriteRecording(BoxTruth(), TestDir() + "/b.csv", 4.0, Pushes(2), 2);
  Write("box.yaml", "scene: " + kBox + R"(
parameters:
  - {name: mass, targets: ["body_mass[box]"], initial: 0.8, bounds: [0.1, 10], scale: log}
  - {name: friction, targets: ["geom_friction[box, floor]"], initial: 0.3, bounds: [0.01, 2]}
data: {train: [a.csv], held_out: [b.csv]}
actions: {push_x: cmd}
observations:
  - {quantity: "body_pos[box].x", noise: 0.001}
)");
  const std::string dir = TestDir();
  const CommandResult r = RunCommand(std::string(S2R_BINARY) + " sysid " + dir + "/box.yaml --out " + dir +
                                     "/fit.json --plot " + dir + "/fit.png --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("sysid: iteration"), std::string::npos) << r.output;  // progress on stderr
  EXPECT_NE(r.output.find("held after"), std::string::npos) << r.output;        // the table
  std::ifstream in(dir + "/fit.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_NEAR(j["parameters"][0]["value"].get<double>(), 1.3, 0.013);
  // a PNG (its signature), made by gnuplot
  std::ifstream png(dir + "/fit.png", std::ios::binary);
  char sig[8] = {};
  png.read(sig, 8);
  EXPECT_EQ(std::string(sig + 1, 3), "PNG");
  EXPECT_GT(std::filesystem::file_size(dir + "/fit.png"), 5000u);
}

TEST(SysidCli, AFailedFitLeavesNoFitFile) {
  WriteRecording(BoxTruth(), TestDir() + "/a.csv", 2.0, Pushes(1), 1);
  Write("box.yaml", "scene: " + kBox + R"(
parameters:
  - {name: mass, targets: ["body_mass[box]"], initial: 0.8, bounds: [0.1, 10], scale: log}
data: {train: [a.csv], held_out: [missing.csv]}
actions: {push_x: cmd}
observations:
  - {quantity: "body_pos[box].x", noise: 0.001}
)");
  const std::string dir = TestDir();
  const CommandResult r = RunCommand(std::string(S2R_BINARY) + " sysid " + dir + "/box.yaml --out " + dir + "/fit.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("missing.csv: cannot open recording"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/fit.json"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/fit.json.tmp"));
}

// --- bad input ---------------------------------------------------------------------------------------

// The error of loading `config` (with recordings a.csv and b.csv as given), or "" when it loads.
std::string LoadError(const std::string& config, const std::string& a_csv, const std::string& b_csv) {
  Write("a.csv", a_csv);
  Write("b.csv", b_csv);
  try {
    LoadSysidConfig(Write("bad.yaml", config));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

const char* kGoodCsv = "time,cmd,x\n0,0,0\n0.02,0.1,0\n0.04,0.1,0.001\n0.06,0.1,0.003\n";
std::string GoodConfig(const std::string& extra_param = "", const std::string& held = "[b.csv]") {
  return "scene: " + kDrive + "\nparameters:\n  - {name: kp, targets: [\"actuator_kp[drive]\"], initial: 100, bounds: [10, 1000]}\n" +
         extra_param + "data: {train: [a.csv], held_out: " + held +
         "}\nactions: {drive: cmd}\nobservations:\n  - {quantity: \"joint_qpos[slide]\", column: x, noise: 0.001}\n";
}

// A world that goes unstable at the initial parameters (here: any speed above 1 mm/s counts as
// runaway) is an error naming the recording line where its window starts; no fit is attempted.
TEST(SysidBadInput, AnUnstableStartIsAnErrorNamingTheWindow) {
  WriteDriveRecordings(0.0);
  const std::string path = Write("drive.yaml", DriveConfig(1e-4));
  SysidConfig c = LoadSysidConfig(path);
  c.model.max_linear_speed[0] = 0.001;  // m/s
  SysidOptions o;
  o.progress = false;
  try {
    RunSysid(c, o);
    FAIL() << "fitted from an unstable start";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/a.csv:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unstable at the initial parameters"), std::string::npos) << e.what();
  }
}

TEST(SysidBadInput, EachIsAnErrorNamingFileAndLineOrKey) {
  ASSERT_EQ(LoadError(GoodConfig(), kGoodCsv, kGoodCsv), "");
  struct Case {
    std::string config, a, what;
  };
  const std::string a = TestDir() + "/a.csv";
  const std::vector<Case> cases = {
      {GoodConfig(), "time,cmd\n0,0\n0.02,0\n0.04,0\n", a + ":1: missing column 'x'"},
      {GoodConfig(), "time,cmd,x,y\n0,0,0,0\n0.02,0,0,0\n0.04,0,0,0\n", a + ":1: column 4 'y' is neither"},
      {GoodConfig(), "time,cmd,x\n0,0,0\n0.02,nan,0\n0.04,0,0\n", a + ":3: column 'cmd': 'nan' is not a finite number"},
      {GoodConfig(), "time,cmd,x\n0,0,0\n0.04,0,0\n0.02,0,0\n", a + ":4: column 'time': time must increase"},
      {GoodConfig(), "time,cmd,x\n0,0,0\n0.02,0,0\n0.05,0,0\n0.06,0,0\n", a + ":4: column 'time': irregular sampling"},
      {GoodConfig(), "time,cmd,x\n0,0,0\n0.02,0,0\n", a + ":1: a recording needs at least 3 samples"},
      {GoodConfig(), "time,cmd,x\n0,0,0\n0.003,0,0\n0.006,0,0\n", "b.csv:2: sampled every 0.02 s, but " + a +
       " every 0.003 s; all recordings must share one rate"},
      {GoodConfig("", "[]"), kGoodCsv, "bad.yaml:4:34: data.held_out: needs at least one recording"},
      {GoodConfig("  - {name: m, targets: [\"body_mass[cart]\"], initial: 1, bounds: [0.1, 10]}\n"), kGoodCsv,
       "bad.yaml:4:24: parameters[1].targets: parameter 'body_mass[cart]': unknown body 'cart'"},
      {GoodConfig("  - {name: m, targets: [\"body_mass[carriage]\"], initial: 20, bounds: [0.1, 10]}\n"), kGoodCsv,
       "parameters[1].initial: the initial value 20"},
      {GoodConfig("  - {name: m, targets: [\"body_mass[carriage]\"], initial: 1, bounds: [-1, 10]}\n"), kGoodCsv,
       "parameters[1].bounds: 'body_mass[carriage]' must be"},
      {GoodConfig("  - {name: m, targets: [latency_steps], initial: 1, bounds: [0, 3]}\n"), kGoodCsv,
       "parameters[1].targets: 'latency_steps' is an integer field"},
      {GoodConfig("  - {name: kp, targets: [\"actuator_kv[drive]\"], initial: 1, bounds: [0, 3]}\n"), kGoodCsv,
       "parameters[1].name: parameter 'kp' appears twice"},
      {GoodConfig("  - {name: m, targets: [\"body_mass[carriage]\"], initial: 1, bounds: [0.1, 10], colour: red}\n"), kGoodCsv,
       "bad.yaml:4:80: parameters[1].colour: unknown key 'colour'"},
  };
  for (const Case& c : cases) {
    const std::string e = LoadError(c.config, c.a, kGoodCsv);
    EXPECT_NE(e.find(c.what), std::string::npos) << "expected '" << c.what << "' in: " << e;
  }
  // a sample period that is not a whole number of timesteps (0.002 s)
  const std::string odd = "time,cmd,x\n0,0,0\n0.003,0,0\n0.006,0,0\n";
  EXPECT_NE(LoadError(GoodConfig(), odd, odd).find("a.csv:2: the sample period 0.003 s is not a whole number of the "
                                                   "scene's timesteps (0.002 s)"),
            std::string::npos);
  // a time column in the wrong unit: 2e5 s between samples is 1e8 timesteps a control step, which
  // the first evaluation would step for hours (refused at load, at most kMaxTimestepsPerSample)
  const std::string slow = "time,cmd,x\n0,0,0\n200000,0,0\n400000,0,0\n";
  EXPECT_NE(LoadError(GoodConfig(), slow, slow).find("a.csv:2: the sample period 200000 s is 1e+08 of the scene's "
                                                     "timesteps (0.002 s); at most 100000 (is the time column in seconds?)"),
            std::string::npos)
      << LoadError(GoodConfig(), slow, slow);
  // an observed quantity naming an unknown joint
  std::string cfg = GoodConfig();
  cfg.replace(cfg.find("joint_qpos[slide]"), 17, "joint_qpos[slider]");
  const std::string e = LoadError(cfg, kGoodCsv, kGoodCsv);
  EXPECT_NE(e.find("observations[0].quantity: 'joint_qpos[slider]': the scene has no joint 'slider' (slide)"),
            std::string::npos)
      << e;
  // a multi-start needs at least one start
  const std::string none = LoadError(GoodConfig() + "solver: {starts: 0}\n", kGoodCsv, kGoodCsv);
  EXPECT_NE(none.find("bad.yaml:8:18: solver.starts: must be an integer in [1, 10000]"), std::string::npos) << none;
  const std::string alone = LoadError(GoodConfig() + "solver: {scan: 16}\n", kGoodCsv, kGoodCsv);
  EXPECT_NE(alone.find("solver.scan: a scan picks where starts 2 .. N begin: set solver.starts above 1"), std::string::npos)
      << alone;
  const std::string few = LoadError(GoodConfig() + "solver: {starts: 8, scan: 4}\n", kGoodCsv, kGoodCsv);
  EXPECT_NE(few.find("solver.scan: scans 4 points for 7 starts after the first"), std::string::npos) << few;
}

}  // namespace
}  // namespace s2r
