// Backend parity: one test body, every backend. The CPU always runs; CUDA runs where a device is
// present and is otherwise skipped (a skip, never a pass).
//
// Tolerances: both backends run the same float32 source, but nvcc contracts a*b+c into FMA and its
// sinf/cosf/atan2f differ from glibc's by an ulp or two, so results agree to rounding, not bits.
// Contact-free motion stays within 1e-4 m over 1 s; with contacts, rounding differences can pick
// a different branch in the narrow phase, so contact scenes are compared over 0.2 s (10 control
// steps) within 1 mm, and over 2 s on outcomes (resting heights within 2 mm).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "host/backend.h"
#include "host/engine.h"
#include "kernels/measure.h"
#include "host/scene/scene_source.h"
#include "tests/host/test_dir.h"
#include "tests/host/test_scenes.h"

namespace s2r {
namespace {

struct BackendCase {
  const char* name;
  BackendKind kind;
};

class BackendParity : public ::testing::TestWithParam<BackendCase> {
 protected:
  void SetUp() override {
    if (GetParam().kind == BackendKind::kCuda && !CudaAvailable()) {
      GTEST_SKIP() << (CudaBackendCompiled() ? "no CUDA device present" : "built without CUDA");
    }
  }
  Engine Make(const std::string& scene, int nworld) {
    EngineOptions opt;
    opt.nworld = nworld;
    opt.backend = GetParam().kind;
    return Engine(LoadScene(scene), opt);
  }
};

std::vector<Real> Script(const Model& m, int nworld, int step) {
  std::vector<Real> a(static_cast<size_t>(nworld) * std::max(1, m.nactuator()), 0);
  for (int w = 0; w < nworld; ++w)
    for (int i = 0; i < m.nactuator(); ++i)
      a[w * m.nactuator() + i] = Real(0.02 * std::sin(0.3 * step + w + i));
  return a;
}

// runs `steps` control steps on the parameterized backend and on the CPU reference
double MaxPositionGap(Engine& e, Engine& ref, int steps) {
  const Model& m = e.model();
  for (int k = 0; k < steps; ++k) {
    std::vector<Real> a = Script(m, e.nworld(), k);
    e.Step(a.data());
    ref.Step(a.data());
  }
  e.Download();
  double worst = 0;
  for (int w = 0; w < e.nworld(); ++w)
    for (int b = 1; b < m.nbody(); ++b)
      for (int i = 0; i < 3; ++i)
        worst = std::max(worst, std::abs(double(e.state().view.body_pos(w, b)[i]) -
                                         double(ref.state().view.body_pos(w, b)[i])));
  return worst;
}

TEST_P(BackendParity, ContactScenesAgreeOverShortHorizon) {
  for (const char* scene : {"builtin:box_push", "builtin:pick_lift", "builtin:stack5"}) {
    Engine e = Make(scene, 64);
    EngineOptions opt;
    opt.nworld = 64;
    Engine ref(LoadScene(scene), opt);
    EXPECT_LT(MaxPositionGap(e, ref, 10), 1e-3) << scene;
  }
}

// Floating bases and ball joints (the ball's chart in the step scratch, kernels/solver_tree.h) on
// every backend: the quadruped standing on its feet and the tumbling floating base with a ball,
// within 1 mm of the CPU reference after 10 control steps (emulated: bit-identical)
TEST_P(BackendParity, FloatingBasesAndBallsAgree) {
  for (const char* name : {"quadruped.xml", "floating_base.xml", "ball_cone.xml"}) {
    const std::string scene = std::string(S2R_SOURCE_DIR) + "/configs/scenes/test/" + name;
    Engine e = Make(scene, 16);
    EngineOptions opt;
    opt.nworld = 16;
    Engine ref(LoadScene(scene), opt);
    EXPECT_LT(MaxPositionGap(e, ref, 10), 1e-3) << name;
    for (int w = 0; w < e.nworld(); ++w) EXPECT_EQ(e.state().status[w], kWorldOk) << name << " world " << w;
  }
}

// Menagerie's MJX Panda with its finger equality (kernels/solver_coupling.h) on every backend:
// the bodies within 1 mm of the CPU reference after 10 control steps, and the coupling holding
// (|q1 - q2| < 10 um) in every world
TEST_P(BackendParity, CoupledPandaFingersAgree) {
  Engine e = Make("builtin:panda_pick", 16);
  EngineOptions opt;
  opt.nworld = 16;
  Engine ref(LoadScene("builtin:panda_pick"), opt);
  EXPECT_LT(MaxPositionGap(e, ref, 10), 1e-3);
  const Model& m = e.model();
  for (int w = 0; w < e.nworld(); ++w) {
    ASSERT_EQ(e.state().status[w], kWorldOk) << w;
    Real q1 = 0, q2 = 0, v = 0;
    JointCoordinate(m.View(), e.state().view, w, m.JointId("finger_joint1"), &q1, &v);
    JointCoordinate(m.View(), e.state().view, w, m.JointId("finger_joint2"), &q2, &v);
    EXPECT_NEAR(q1, q2, 1e-5) << "world " << w;
  }
}

TEST_P(BackendParity, StackOutcomeAgreesOverTwoSeconds) {
  Engine e = Make("builtin:stack5", 32);
  EngineOptions opt;
  opt.nworld = 32;
  Engine ref(LoadScene("builtin:stack5"), opt);
  EXPECT_LT(MaxPositionGap(e, ref, 100), 2e-3);
  for (int w = 0; w < 32; ++w) EXPECT_EQ(e.state().status[w], kWorldOk);
}

// convex shapes (kernels/collide_convex.h: GJK/EPA, clipping) on every backend: robosuite's Panda
// link0 and hand meshes, a cylinder and an ellipsoid dropped onto a floor and a box; the mesh hulls
// are model arrays the backend uploads (hull_vert)
TEST_P(BackendParity, ConvexShapesAgree) {
  const std::string dir = std::string(S2R_SOURCE_DIR) + "/configs/robots/robosuite_meshes";
  const std::string xml = test_util::Scene(R"(
  <compiler meshdir=")" + dir + R"("/>
  <asset><mesh file="link0.stl"/><mesh file="hand.stl"/></asset>
  <worldbody>
    <geom type="plane" size="0 0 1"/>
    <geom type="box" size="0.2 0.2 0.05" pos="1 0 0.05"/>
    <body pos="0 0 0.15" euler="0.2 0.1 0"><freejoint/><geom type="mesh" mesh="link0"/></body>
    <body pos="1 0 0.2" euler="1.5 0 0"><freejoint/><geom type="mesh" mesh="hand"/></body>
    <body pos="0 1 0.1" euler="0.1 0.2 0"><freejoint/><geom type="cylinder" size="0.04 0.06"/></body>
    <body pos="1 1 0.1"><freejoint/><geom type="ellipsoid" size="0.08 0.05 0.04"/></body>
  </worldbody>)");
  const std::string path = TestDir() + "/convex.xml";
  std::ofstream(path) << xml;
  Engine e = Make(path, 16);
  EngineOptions opt;
  opt.nworld = 16;
  Engine ref(LoadScene(path), opt);
  EXPECT_LT(MaxPositionGap(e, ref, 10), 1e-3);
  // 2 s in all: a tumbling mesh may settle on another face under different rounding, so only
  // health is compared on the long horizon
  MaxPositionGap(e, ref, 90);
  for (int w = 0; w < 16; ++w) EXPECT_EQ(e.state().status[w], kWorldOk);
}

TEST_P(BackendParity, PerWorldParametersReachTheBackend) {
  // friction differs per world: the backend must see each world's own value
  Engine e = Make("builtin:box_push", 4);
  EngineOptions opt;
  opt.nworld = 4;
  Engine ref(LoadScene("builtin:box_push"), opt);
  const Model& m = e.model();
  std::vector<Real> f;
  for (int w = 0; w < 4; ++w)
    for (int g = 0; g < m.ngeom(); ++g) f.push_back(Real(0.2 + 0.3 * w));
  e.SetParam("geom_friction", f);
  ref.SetParam("geom_friction", f);
  e.Reset();
  ref.Reset();
  EXPECT_LT(MaxPositionGap(e, ref, 10), 1e-3);
}

TEST_P(BackendParity, RunsAreReproducible) {
  Engine a = Make("builtin:stack5", 16);
  Engine b = Make("builtin:stack5", 16);
  for (int k = 0; k < 20; ++k) {
    a.Step(nullptr);
    b.Step(nullptr);
  }
  a.Download();
  b.Download();
  EXPECT_EQ(a.StateHash(), b.StateHash()) << "no atomics inside a world: same inputs, same bits";
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendParity,
                         ::testing::Values(BackendCase{"cpu", BackendKind::kCpu},
                                           BackendCase{"cuda", BackendKind::kCuda},
                                           BackendCase{"cuda_emulation", BackendKind::kCudaEmulation}),
                         [](const ::testing::TestParamInfo<BackendCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace s2r
