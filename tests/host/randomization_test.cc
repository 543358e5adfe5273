// Domain randomization (host/sweep/randomization.h): configs parse into targets and
// distributions, every rejected class of config names file, line and key, samples depend only on
// (seed, episode, parameter name), and Apply writes exactly the sampled values into the worlds it
// is given.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "host/engine.h"
#include "host/scene/scene_source.h"
#include "host/sweep/randomization.h"
#include "tests/host/test_dir.h"

namespace s2r {
#ifndef S2R_SOURCE_DIR
#define S2R_SOURCE_DIR "."
#endif

namespace {

Model BoxPush() {
  Model m = LoadScene("builtin:box_push");
  m.max_latency_steps = 3;
  m.Finalize();
  return m;
}

RandomizationSpec Parse(const std::string& yaml, const Model& m, const std::string& base_dir = "") {
  ConfigNode root = ConfigNode::Parse(yaml, "sweep.yaml");
  return ParseRandomization(root["randomization"], m, base_dir);
}

// the error a config raises ("" when it parses)
std::string ErrorOf(const std::string& yaml, const Model& m, const std::string& base_dir = "") {
  try {
    Parse(yaml, m, base_dir);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

const char* kConfig = R"(randomization:
  - name: box_mass
    targets: ["body_mass[box]"]
    mode: scale
    distribution: uniform
    low: 0.5
    high: 2.0
  - name: friction
    targets: ["geom_friction[box, floor]"]
    distribution: loguniform
    low: 0.2
    high: 1.5
  - name: box_x
    targets:
      - body_pos0[box].x
    mode: offset
    distribution: truncnormal
    mean: 0
    std: 0.01
    low: -0.02
    high: 0.02
  - name: box_yaw
    targets: ["body_quat0[box].yaw"]
    mode: offset
    distribution: uniform
    low: -0.5
    high: 0.5
  - name: latency
    targets: [latency_steps]
    distribution: choice
    values: [0, 1, 3]
    weights: [1, 2, 1]
)";

TEST(Randomization, ParsesTargetsDistributionsAndModes) {
  Model m = BoxPush();
  RandomizationSpec spec = Parse(kConfig, m);
  ASSERT_EQ(spec.params.size(), 5u);
  const RandomParam& mass = spec.params[0];
  EXPECT_EQ(mass.mode, RandomMode::kScale);
  EXPECT_EQ(mass.distribution.kind, kDistUniform);
  EXPECT_EQ(mass.units, "1");
  ASSERT_EQ(mass.targets.size(), 1u);
  EXPECT_EQ(mass.targets[0].address.elements, std::vector<int>{m.BodyId("box")});
  EXPECT_EQ(spec.params[1].targets[0].address.entities, (std::vector<int>{m.GeomId("box"), m.GeomId("floor")}));
  EXPECT_EQ(spec.params[1].units, "1");
  EXPECT_EQ(spec.params[2].units, "m");
  EXPECT_TRUE(spec.params[3].targets[0].yaw);
  EXPECT_EQ(spec.params[3].units, "rad");
  EXPECT_EQ(spec.params[4].distribution.nchoices, 3);
  EXPECT_EQ(spec.params[4].stream, StreamOfName("latency"));
}

// Apply writes, in the given worlds only, exactly the values the samples imply: scaled mass and
// inertia, one friction for two geoms, offset position, yawed orientation, a chosen latency.
TEST(Randomization, ApplyWritesTheSampledValuesIntoTheGivenWorlds) {
  Model m = BoxPush();
  RandomizationSpec spec = Parse(kConfig, m);
  EngineOptions opt;
  opt.nworld = 4;
  opt.threads = 1;
  Engine e(m, opt);
  Randomizer r(spec, e.model(), 4, /*seed=*/7);
  std::vector<double> samples;
  r.Apply(&e, {1, 3}, {10, 11}, &samples);
  ASSERT_EQ(samples.size(), 2 * spec.params.size());
  const int box = m.BodyId("box");
  for (int i = 0; i < 2; ++i) {
    const int w = i == 0 ? 1 : 3;
    const int64_t episode = 10 + i;
    SCOPED_TRACE("world " + std::to_string(w));
    const double* x = samples.data() + i * spec.params.size();
    for (size_t k = 0; k < spec.params.size(); ++k) EXPECT_EQ(x[k], SampleParam(spec.params[k], 7, episode));
    EXPECT_FLOAT_EQ(e.GetParam("body_mass[box]", w)[0], float(m.body_mass[box] * x[0]));
    for (int c = 0; c < 3; ++c) {
      EXPECT_FLOAT_EQ(e.GetParam("body_inertia[box]", w)[c], float(m.body_inertia[3 * box + c] * x[0]))
          << "a scaled mass scales the inertia";
    }
    EXPECT_EQ(e.GetParam("geom_friction[box]", w), e.GetParam("geom_friction[floor]", w)) << "one sample, two geoms";
    EXPECT_FLOAT_EQ(e.GetParam("geom_friction[box]", w)[0], float(x[1]));
    EXPECT_FLOAT_EQ(e.GetParam("body_pos0[box].x", w)[0], float(m.body_pos0[3 * box] + x[2]));
    std::vector<Real> q = e.GetParam("body_quat0[box]", w);  // nominal is the identity
    EXPECT_NEAR(q[0], std::cos(x[3] / 2), 1e-6);
    EXPECT_NEAR(q[3], std::sin(x[3] / 2), 1e-6);
    EXPECT_NEAR(q[1], 0, 1e-7);
    EXPECT_EQ(e.GetParam("latency_steps", w)[0], Real(x[4]));
  }
  // worlds 0 and 2 keep the scene's values
  for (int w : {0, 2}) {
    EXPECT_EQ(e.GetParam("body_mass[box]", w)[0], m.body_mass[box]);
    EXPECT_EQ(e.GetParam("latency_steps", w)[0], 0);
  }
  // the randomized worlds reset and step from their new parameters
  e.ResetWorlds({1, 3});
  EXPECT_FLOAT_EQ(e.state().view.body_pos(1, box)[0], float(m.body_pos0[3 * box] + samples[2]));
  e.Step(nullptr);
}

// Samples depend on (seed, episode, parameter name) only: not on the world, the other parameters
// or their order; and they fill the distribution's support.
TEST(Randomization, SamplesDependOnSeedEpisodeAndNameOnly) {
  Model m = BoxPush();
  RandomizationSpec spec = Parse(kConfig, m);
  const std::string reordered = std::string("randomization:\n") + R"(  - name: friction
    targets: ["geom_friction[floor, box]"]
    distribution: loguniform
    low: 0.2
    high: 1.5
)";
  RandomizationSpec alone = Parse(reordered, m);
  for (int64_t episode = 0; episode < 200; ++episode) {
    EXPECT_EQ(SampleParam(spec.params[1], 3, episode), SampleParam(alone.params[0], 3, episode));
  }
  EXPECT_NE(SampleParam(spec.params[1], 3, 5), SampleParam(spec.params[1], 4, 5)) << "the seed matters";
  EXPECT_NE(SampleParam(spec.params[1], 3, 5), SampleParam(spec.params[1], 3, 6)) << "the episode matters";
  // the same episode in different worlds and engines gives the same parameters
  EngineOptions opt;
  opt.nworld = 5;
  opt.threads = 1;
  Engine a(m, opt), b(m, opt);
  Randomizer ra(spec, a.model(), 5, 3), rb(spec, b.model(), 5, 3);
  ra.Apply(&a, {0}, {42});
  rb.Apply(&b, {4, 2}, {41, 42});
  for (const char* f : {"body_mass", "geom_friction", "body_pos0", "body_quat0", "latency_steps"}) {
    EXPECT_EQ(a.GetParam(f, 0), b.GetParam(f, 2)) << f;
  }
  // a truncnormal offset stays inside its truncation; a choice takes only its values
  for (int64_t episode = 0; episode < 2000; ++episode) {
    double x = SampleParam(spec.params[2], 1, episode);
    EXPECT_TRUE(x >= -0.02 && x <= 0.02) << x;
    double l = SampleParam(spec.params[4], 1, episode);
    EXPECT_TRUE(l == 0 || l == 1 || l == 3) << l;
  }
}

// One test per rejected class of config: each names the file, the line, the key and what is wrong.
TEST(Randomization, RejectsBadConfigsNamingFileLineAndKey) {
  Model m = BoxPush();
  auto entry = [](const std::string& body) { return "randomization:\n  - name: p\n" + body; };
  struct Case {
    std::string yaml;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {entry("    targets: [\"body_mass[box]\"]\n    distribution: uniform\n    low: 1\n    high: 2\n    colour: red\n"),
       "sweep.yaml:7:5: randomization[0].colour: unknown key 'colour'"},
      {entry("    targets: [\"body_mass[box]\"]\n    distribution: gaussian\n"),
       "sweep.yaml:4:19: randomization[0].distribution: must be one of fixed, uniform, loguniform, normal, "
       "truncnormal, choice, got 'gaussian'"},
      {entry("    targets: [\"body_mass[boxx]\"]\n    distribution: fixed\n    value: 1\n"),
       "unknown body 'boxx'; the bodies are world, box, pusher_x, pusher_y"},
      {entry("    targets: [\"body_mass[box]\"]\n    distribution: uniform\n    low: -0.5\n    high: 1\n"),
       "randomization[0]: the sample -0.5 (an end of the distribution's support) breaks a bound: body_mass[box]: "
       "must be >= 0"},
      {entry("    targets: [\"body_mass[box]\"]\n    mode: scale\n    distribution: uniform\n    low: 0\n    high: 1\n"),
       "body_mass[box]: must be > 0 for a moving body, got 0"},
      {entry("    targets: [\"geom_friction[box]\"]\n    distribution: normal\n    mean: 1\n    std: 0.1\n"),
       "use truncnormal"},
      {entry("    targets: [\"geom_friction[box]\"]\n    distribution: truncnormal\n    mean: 0\n    std: 1\n"
             "    low: 50\n    high: 60\n"),
       "randomization[0].distribution:"},
      {entry("    targets: [\"geom_friction[box]\"]\n    distribution: uniform\n    low: 2\n    high: 1\n"),
       "randomization[0].distribution:"},
      {entry("    targets: [\"geom_friction[*]\"]\n    distribution: fixed\n    value: 1\n"
             "  - name: q\n    targets: [\"geom_friction[floor]\"]\n    distribution: fixed\n    value: 1\n"),
       "randomization[1].targets: 'geom_friction[floor]' overlaps the targets of parameter 'p'"},
      {entry("    targets: [\"body_quat0[box]\"]\n    distribution: fixed\n    value: 1\n"),
       "write 'body_quat0[box].yaw'"},
      {entry("    targets: [\"body_mass[box].yaw\"]\n    distribution: fixed\n    value: 1\n"),
       "'.yaw' applies to a whole orientation"},
      {entry("    targets: [\"body_pos0[pusher_x].x\"]\n    distribution: uniform\n    low: -0.1\n    high: 0.1\n"),
       "'body_pos0[pusher_x].x': body_pos0 starts free and static bodies only, and body 'pusher_x' would not "
       "move: it hangs on joint 'slide_x', which places it: randomize joint_qpos0[slide_x] or "
       "joint_qvel0[slide_x]"},
      {entry("    targets: [\"body_mass[box]\"]\n    distribution: uniform\n    low: 1\n    high: 2\n"
             "    scale_inertia: false\n"),
       "randomization[0].scale_inertia: applies to mode: scale only"},
      {entry("    targets: [\"latency_steps\"]\n    distribution: choice\n    values: [0, 9]\n"),
       "latency_steps: must be an integer >= 0 and <= max_latency_steps (3"},
      {entry("    targets: [substeps]\n    distribution: fixed\n    value: 1\n"), "'substeps' is a scene option"},
      {entry("    targets: [\"body_mass[box]\"]\n    distribution: uniform\n    low: abc\n    high: 2\n"),
       "sweep.yaml:5:10: randomization[0].low: must be a number, got 'abc'"},
      {entry("    targets: [\"body_mass[box]\"]\n    distribution: uniform\n    high: 2\n"),
       "randomization[0]: missing required key 'low'"},
      {"randomization:\n  - name: \"a b\"\n    targets: [gravity]\n    distribution: fixed\n    value: 1\n",
       "randomization[0].name: must match [A-Za-z0-9_.-]+"},
      {"randomization:\n  - name: p\n    targets: [\"gravity.z\"]\n    distribution: fixed\n    value: 1\n"
       "  - name: p\n    targets: [\"gravity.x\"]\n    distribution: fixed\n    value: 1\n",
       "randomization[1].name: duplicate parameter name 'p'"},
      {"randomization:\n  - name: p\n    targets: [gravity\n", "sweep.yaml:4:1: malformed YAML"},
  };
  for (const Case& c : cases) {
    std::string error = ErrorOf(c.yaml, m);
    EXPECT_NE(error.find(c.expect), std::string::npos) << "config:\n" << c.yaml << "error: " << error;
  }
  EXPECT_EQ(ErrorOf(kConfig, m), "") << "the valid config parses";
}

// A floating base (configs/scenes/test/quadruped.xml's torso) starts from its free joint's slides
// and ball: its body_pos0 is rejected, naming the slides to randomize; the slides themselves and a
// free object's body_pos0 are accepted.
TEST(Randomization, AFloatingBaseIsRandomizedByItsSlides) {
  Model m = LoadScene(std::string(S2R_SOURCE_DIR) + "/configs/scenes/test/quadruped.xml");
  const std::string uniform = "    distribution: uniform\n    low: -0.1\n    high: 0.1\n";
  const std::string error =
      ErrorOf("randomization:\n  - name: p\n    targets: [\"body_pos0[torso].x\"]\n" + uniform, m);
  EXPECT_NE(error.find("body 'torso' would not move: it is a floating base, started by its free joint's slides "
                       "and ball: randomize joint_qpos0[root:tx, root:ty, root:tz]"),
            std::string::npos)
      << error;
  EXPECT_EQ(ErrorOf("randomization:\n  - name: p\n    targets: [\"joint_qpos0[root:tx]\"]\n" + uniform, m), "");
  EXPECT_EQ(ErrorOf("randomization:\n  - name: p\n    targets: [\"body_pos0[box].x\"]\n" + uniform, BoxPush()), "");
}

// A floating base's yaw turns its start orientation about world z: its ball's start angles and
// rates change (Randomizer::TurnFloatingBase), so the base starts at Rz(yaw) times the scene's
// orientation (offset) or at Rz(yaw) (absolute), at the same position, with the same angular
// velocity in its own frame (turned with it in the world). configs/scenes/test/floating_base.xml
// starts tilted (euler 10 20 30, a keyframe quaternion) and spinning.
TEST(Randomization, AFloatingBaseIsYawedByItsBall) {
  Model m = LoadScene(std::string(S2R_SOURCE_DIR) + "/configs/scenes/test/floating_base.xml");
  const int base = m.BodyId("base");
  for (const char* mode : {"offset", "absolute"}) {
    SCOPED_TRACE(mode);
    const RandomizationSpec spec = Parse(std::string("randomization:\n  - name: yaw\n    targets: "
                                                     "[\"body_quat0[base].yaw\"]\n    mode: ") +
                                             mode + "\n    distribution: uniform\n    low: 1\n    high: 2\n",
                                         m);
    EngineOptions opt;
    opt.nworld = 2;
    opt.threads = 1;
    Engine e(m, opt);
    Randomizer r(spec, e.model(), 2, /*seed=*/5);
    std::vector<double> samples;
    r.Apply(&e, {1}, {3}, &samples);
    e.ResetWorlds({0, 1});
    e.Download();
    const StateView& v = e.state().view;
    const double yaw = samples[0];
    ASSERT_GT(std::fabs(yaw), 0.1);
    const Quat turn = QuatFromAxisAngle(Vec3{0, 0, 1}, Real(yaw));
    const Quat q0 = LoadQuat(v.body_quat(0, base)), q1 = LoadQuat(v.body_quat(1, base));
    const Quat want = std::string(mode) == "offset" ? turn * q0 : turn;
    const double dot = double(q1.w * want.w + q1.x * want.x + q1.y * want.y + q1.z * want.z);
    EXPECT_NEAR(std::fabs(dot), 1.0, 1e-6) << "orientation";
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(v.body_pos(1, base)[k], v.body_pos(0, base)[k], 1e-6) << "position";
    // the same angular velocity in the base's frame
    const Vec3 w0 = InvRotate(q0, LoadVec3(v.body_angvel(0, base)));
    const Vec3 w1 = InvRotate(q1, LoadVec3(v.body_angvel(1, base)));
    EXPECT_GT(Length(w0), 1.0);
    EXPECT_NEAR(Length(w1 - w0), 0, 1e-5) << "angular velocity in the base's frame";
    e.Step(nullptr);
    e.Download();
    EXPECT_EQ(e.state().status[1], kWorldOk);
  }
}

// `fit:` centres a distribution on a system-identification fit file: value +- k sigma.
TEST(Randomization, CentresOnAFitFile) {
  Model m = BoxPush();
  const std::string dir = TestDir();
  std::ofstream(dir + "/fit.json") << R"({"parameters": [
    {"name": "box_mass", "targets": ["body_mass[box]"], "value": 0.62, "std": 0.02},
    {"name": "floor_mu", "targets": ["geom_friction[floor]"], "value": 0.8, "std": 0.05}]})";
  std::ofstream(dir + "/bad.json") << R"({"parameters": [{"name": "x", "targets": ["gravity.z"], "value": 1}]})";
  const std::string yaml = R"(randomization:
  - name: box_mass
    targets: ["body_mass[box]"]
    distribution: uniform
    fit: {file: fit.json, k: 3}
  - name: mu
    targets: ["geom_friction[floor]"]
    distribution: truncnormal
    fit: {file: fit.json, parameter: floor_mu}
)";
  RandomizationSpec spec = Parse(yaml, m, dir);
  EXPECT_DOUBLE_EQ(spec.params[0].distribution.a, 0.62 - 3 * 0.02);
  EXPECT_DOUBLE_EQ(spec.params[0].distribution.b, 0.62 + 3 * 0.02);
  EXPECT_EQ(spec.params[0].fit_source, dir + "/fit.json:box_mass");
  EXPECT_DOUBLE_EQ(spec.params[1].distribution.a, 0.8);
  EXPECT_DOUBLE_EQ(spec.params[1].distribution.b, 0.05);
  EXPECT_DOUBLE_EQ(spec.params[1].distribution.lo, 0.8 - 2 * 0.05) << "k defaults to 2";
  EXPECT_DOUBLE_EQ(spec.params[1].distribution.hi, 0.8 + 2 * 0.05);

  auto with_fit = [](const std::string& target, const std::string& fit) {
    return "randomization:\n  - name: box_mass\n    targets: [\"" + target +
           "\"]\n    distribution: uniform\n    low: 0\n    high: 0\n    fit: " + fit + "\n";
  };
  EXPECT_NE(ErrorOf(with_fit("body_mass[box]", "{file: missing.json}"), m, dir).find("cannot open fit file"),
            std::string::npos);
  EXPECT_NE(ErrorOf(with_fit("body_mass[box]", "{file: bad.json, parameter: x}"), m, dir)
                .find("bad.json: parameters[0]: needs a finite number 'std'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(with_fit("body_mass[pusher_x]", "{file: fit.json}"), m, dir).find("fitted on other targets"),
            std::string::npos);
  EXPECT_NE(ErrorOf(with_fit("body_mass[box]", "{file: fit.json, parameter: nope}"), m, dir)
                .find("has no parameter 'nope'"),
            std::string::npos);
}

}  // namespace
}  // namespace s2r
