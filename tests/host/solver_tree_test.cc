// Articulated trees in reduced coordinates (kernels/solver_tree.h): which bodies the model steps
// that way, the dynamics against closed forms and against the maximal-coordinate path, and
// parameter changes mid-run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <Eigen/Geometry>

#include "host/engine.h"
#include "host/scene/scene_source.h"
#include "kernels/solver_tree.h"
#include "tests/host/test_scenes.h"

namespace s2r {
namespace {

using test_util::LoadText;
using test_util::Sample;
using test_util::Scene;

std::string ScenePath(const std::string& name) {
  return std::string(S2R_SOURCE_DIR) + "/configs/scenes/test/" + name;
}

Model WithTrees(Model m, bool reduced) {
  m.reduce_trees = reduced;
  m.FindSlideTrees();
  return m;
}

// --- which bodies are in trees ------------------------------------------------------------------

TEST(SolverTree, ArmIsOneTreeWithItsHandAndFingers) {
  Model m = LoadScene(ScenePath("arm7.xml"));
  // link1..link7, the welded hand, two fingers; the box is free, link0 static
  ASSERT_EQ(m.ntree(), 10);
  EXPECT_EQ(m.tree_body[0], m.BodyId("link1"));
  EXPECT_EQ(m.tree_parent, (std::vector<int32_t>{-1, 0, 1, 2, 3, 4, 5, 6, 7, 7}));
  EXPECT_EQ(m.body_tree[m.BodyId("box")], -1);
  EXPECT_EQ(m.body_tree[m.BodyId("link0")], -1);
  EXPECT_TRUE(m.reduced_body.empty()) << "a tree with hinges is not a slide tree";
  Model off = WithTrees(m, false);
  EXPECT_EQ(off.ntree(), 0) << "s2r_reduce_trees = 0";
  EXPECT_TRUE(off.reduced_body.empty());
  // the bench scenes' slide trees are untouched
  Model pick = LoadScene("builtin:pick_lift");
  EXPECT_EQ(pick.ntree(), 0);
  EXPECT_EQ(pick.reduced_body.size(), 5u);
}

TEST(SolverTree, FloatingBasesAreTreesAndOversizedTreesStayMaximal) {
  // a hinge below a free body: a floating base, its free joint three slides and a ball on five
  // links, one tree of seven ranks
  Model m = LoadText(Scene(R"(
  <worldbody>
    <body name="base" pos="0 0 1">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="1"/>
      <body name="link">
        <joint type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.5"/>
      </body>
    </body>
  </worldbody>)"));
  ASSERT_EQ(m.ntree(), 7);
  EXPECT_EQ(m.tree_body[5], m.BodyId("base"));
  EXPECT_EQ(m.tree_parent, (std::vector<int32_t>{-1, 0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(m.nq(), 8);
  EXPECT_EQ(m.nv(), 7);
  // one whose tree would not fit kMaxTreeDofs stays maximal (a free body with 27 hinges below)
  std::string limbs, ends;
  for (int k = 0; k < kMaxTreeDofs - 5; ++k) {
    limbs += "<body pos=\"0.1 0 0\"><joint type=\"hinge\" axis=\"0 1 0\"/>"
             "<geom type=\"sphere\" size=\"0.02\" mass=\"0.1\" contype=\"0\" conaffinity=\"0\"/>";
    ends += "</body>";
  }
  Model heavy = LoadText(Scene("<worldbody><body name=\"base\"><freejoint/><geom size=\"0.1\" mass=\"1\"/>" + limbs +
                               ends + "</body></worldbody>"));
  EXPECT_EQ(heavy.ntree(), 0);
  EXPECT_EQ(heavy.joint_type[heavy.body_joint[heavy.BodyId("base")]], kJointFree);
  // a chain of kMaxTreeDofs + 1 hinges does not fit
  std::string chain, close;
  for (int k = 0; k <= kMaxTreeDofs; ++k) {
    chain += "<body pos=\"0.1 0 0\"><joint type=\"hinge\" axis=\"0 1 0\"/>"
             "<geom type=\"sphere\" size=\"0.02\" mass=\"0.1\" contype=\"0\" conaffinity=\"0\"/>";
    close += "</body>";
  }
  Model big = LoadText(Scene("<worldbody>" + chain + close + "</worldbody>"));
  EXPECT_EQ(big.ntree(), 0);
}

// --- dynamics -----------------------------------------------------------------------------------

// A pendulum (point-like bob on a light rod) on a hinge with armature, released at 60 degrees:
// its first-step angular acceleration is -m g l sin(theta) / (I_com + m l^2 + armature).
// A rigid body on a ball joint is a top: with its COM at c (body frame) from the pivot, its
// inertia I about the pivot, ω its angular velocity in the body frame and R its orientation,
// I ω' = -ω x I ω + c x R^T m g and R' = R [ω]x. RK4 at 10 us on those equations (double) is the
// reference for the s2r ball (three hinges re-based every step, kernels/solver_tree.h).
struct TopReference {
  Eigen::Quaterniond q;
  Eigen::Vector3d w;
};
TopReference IntegrateTop(TopReference s, const Eigen::Matrix3d& inertia, const Eigen::Vector3d& c, double mass,
                          const Eigen::Vector3d& gravity, double duration) {
  const double h = 1e-5;
  const Eigen::Matrix3d inv = inertia.inverse();
  auto deriv = [&](const Eigen::Quaterniond& q, const Eigen::Vector3d& w, Eigen::Vector4d* dq, Eigen::Vector3d* dw) {
    Eigen::Quaterniond rate = q * Eigen::Quaterniond(0, w.x(), w.y(), w.z());
    *dq = 0.5 * rate.coeffs();
    const Eigen::Vector3d g_body = q.conjugate() * (mass * gravity);
    *dw = inv * (-w.cross(inertia * w) + c.cross(g_body));
  };
  const int n = static_cast<int>(std::lround(duration / h));
  for (int i = 0; i < n; ++i) {
    Eigen::Vector4d k1q, k2q, k3q, k4q;
    Eigen::Vector3d k1w, k2w, k3w, k4w;
    auto at = [&](const Eigen::Vector4d& dq, double f) {
      Eigen::Quaterniond r;
      r.coeffs() = s.q.coeffs() + f * dq;
      return r;
    };
    deriv(s.q, s.w, &k1q, &k1w);
    deriv(at(k1q, h / 2), s.w + h / 2 * k1w, &k2q, &k2w);
    deriv(at(k2q, h / 2), s.w + h / 2 * k2w, &k3q, &k3w);
    deriv(at(k3q, h), s.w + h * k3w, &k4q, &k4w);
    s.q.coeffs() += h / 6 * (k1q + 2 * k2q + 2 * k3q + k4q);
    s.q.normalize();
    s.w += h / 6 * (k1w + 2 * k2w + 2 * k3w + k4w);
  }
  return s;
}

// A heavy asymmetric top spun at 8 rad/s from a tilted start, and the same body without gravity
// (torque-free precession), 1 s at a 2 ms step: the orientation within 20 mrad of the RK4
// reference (measured 11.9 and 10.5 mrad; at 0.5 ms 6.5 and 4.8, at 0.25 ms 2.6 and 1.3: the
// step's error) and the angular velocity within 1 % of its size (measured 0.4 %). Through one turn and
// more, so the ball's angles are re-based ~500 times; a missing gyroscopic term or a chart
// slip would be off by radians.
TEST(SolverTree, BallJointTopFollowsEulersEquations) {
  for (double g : {9.81, 0.0}) {
    Model m = LoadText(Scene(R"(
  <option gravity="0 0 -)" + std::to_string(g) + R"("/>
  <worldbody>
    <body name="top" pos="0 0 1">
      <joint name="ball" type="ball"/>
      <inertial pos="0.03 0.02 0.15" mass="1" diaginertia="0.012 0.02 0.01"/>
    </body>
  </worldbody>
  <keyframe><key name="home" qpos="0.95 0.2 0.1 0" qvel="0.5 -1 8"/></keyframe>)"));
    ASSERT_EQ(m.ntree(), 3);
    Engine e(m, EngineOptions{});
    const int top = m.BodyId("top");
    for (int k = 0; k < 50; ++k) e.Step(nullptr);  // 1 s at 50 Hz
    e.Download();
    const test_util::BodySample got = Sample(e, 0, top);

    Eigen::Matrix3d inertia = Eigen::Vector3d(0.012, 0.02, 0.01).asDiagonal();
    const Eigen::Vector3d c(0.03, 0.02, 0.15);
    inertia += 1.0 * (c.squaredNorm() * Eigen::Matrix3d::Identity() - c * c.transpose());
    TopReference start{Eigen::Quaterniond(0.95, 0.2, 0.1, 0).normalized(), Eigen::Vector3d(0.5, -1, 8)};
    TopReference ref = IntegrateTop(start, inertia, c, 1.0, Eigen::Vector3d(0, 0, -g), 1.0);
    Eigen::Quaterniond q(got.quat[0], got.quat[1], got.quat[2], got.quat[3]);
    const double angle = ref.q.angularDistance(q);
    const Eigen::Vector3d w_body = q.conjugate() * Eigen::Vector3d(got.angvel[0], got.angvel[1], got.angvel[2]);
    const double w_err = (w_body - ref.w).norm();
    std::printf("ball top (g %.2f): orientation %.2f mrad off RK4 after 1 s, angular velocity %.4f rad/s (|w| %.2f)\n",
                g, angle * 1e3, w_err, ref.w.norm());
    EXPECT_LT(angle, 0.02) << "g " << g;
    EXPECT_LT(w_err, 0.01 * ref.w.norm()) << "g " << g;
  }
}

// Linear and angular momentum (about the world origin) of every body of world 0, from the state.
void Momentum(const Model& m, const Engine& e, Eigen::Vector3d* p, Eigen::Vector3d* l) {
  p->setZero();
  l->setZero();
  for (int b = 1; b < m.nbody(); ++b) {
    const test_util::BodySample s = Sample(e, 0, b);
    const Eigen::Quaterniond q(s.quat[0], s.quat[1], s.quat[2], s.quat[3]);
    const Eigen::Quaterniond iq(m.body_iquat[4 * b], m.body_iquat[4 * b + 1], m.body_iquat[4 * b + 2],
                                m.body_iquat[4 * b + 3]);
    const Eigen::Matrix3d r = (q * iq).toRotationMatrix();
    const Eigen::Matrix3d inertia =
        r * Eigen::Vector3d(m.body_inertia[3 * b], m.body_inertia[3 * b + 1], m.body_inertia[3 * b + 2]).asDiagonal() *
        r.transpose();
    const Eigen::Vector3d com = Eigen::Vector3d(s.pos[0], s.pos[1], s.pos[2]) +
                                q * Eigen::Vector3d(m.body_ipos[3 * b], m.body_ipos[3 * b + 1], m.body_ipos[3 * b + 2]);
    const Eigen::Vector3d v(s.linvel[0], s.linvel[1], s.linvel[2]), w(s.angvel[0], s.angvel[1], s.angvel[2]);
    *p += m.body_mass[b] * v;
    *l += m.body_mass[b] * com.cross(v) + inertia * w;
  }
}

// A floating base (configs/scenes/test/floating_base.xml: a free box carrying an arm on a hinge and
// a hand on a ball) tumbling without gravity from a keyframe that sets every velocity, its joints
// damped: nothing outside acts, so the linear and angular momentum stay what they were, but for
// the step's error: over 1 s (500 steps) within 1 % of their size (measured 0.36 % and 0.35 %,
// 0.18 % at 1 ms, 0.09 % at 0.5 ms; MuJoCo's Euler at 2 ms changes the linear momentum 0.19 % and
// the angular momentum about the COM 0.27 %), while the damping takes energy out of the joints.
TEST(SolverTree, FloatingBaseKeepsItsMomentum) {
  Model m = LoadScene(ScenePath("floating_base.xml"));
  ASSERT_EQ(m.ntree(), 6 + 1 + 3);
  Engine e(m, EngineOptions{});
  Eigen::Vector3d p0, l0, p1, l1;
  e.Download();
  Momentum(m, e, &p0, &l0);
  for (int k = 0; k < 50; ++k) e.Step(nullptr);
  e.Download();
  Momentum(m, e, &p1, &l1);
  std::printf("floating base: momentum %.3g kg m/s changed by %.3g, angular momentum %.3g kg m^2/s by %.3g\n",
              p0.norm(), (p1 - p0).norm(), l0.norm(), (l1 - l0).norm());
  EXPECT_LT((p1 - p0).norm(), 1e-2 * p0.norm());
  EXPECT_LT((l1 - l0).norm(), 1e-2 * l0.norm());
  // and the joints did move: the hand turned on its ball, the arm on its hinge
  EXPECT_GT(std::abs(e.state().joint_q[m.JointId("hinge")] - Real(0.5)), 0.3);
}

TEST(SolverTree, PendulumStartsWithTheClosedFormAcceleration) {
  Model m = LoadText(Scene(R"(
  <worldbody>
    <body name="p" pos="0 0 1" euler="0 1.0471975511965976 0">
      <joint name="h" type="hinge" axis="0 1 0" armature="0.05"/>
      <inertial pos="0 0 -0.5" mass="2" diaginertia="0.01 0.01 0.001"/>
      <geom type="sphere" pos="0 0 -0.5" size="0.02" contype="0" conaffinity="0"/>
    </body>
  </worldbody>)", 0.001, 4, 1000));
  ASSERT_EQ(m.ntree(), 1);
  EngineOptions opt;
  Engine e(m, opt);
  e.Step(nullptr);
  e.Download();
  double w = Sample(e, 0, m.BodyId("p")).angvel[1];
  double expected = -2 * 9.81 * 0.5 * std::sin(M_PI / 3) / (0.01 + 2 * 0.25 + 0.05) * 0.001;
  EXPECT_NEAR(w, expected, 1e-3 * std::abs(expected)) << "after one 1 ms step";
}

// A servo on an unlimited hinge, its target 3 pi from the start: the world keeps the hinge's
// turn (joint_q), so the link winds one and a half turns and stops, in the tree and in maximal
// coordinates. Reading the angle modulo 2 pi instead, the servo would see an error of at least
// pi forever (the link spinning on), or wind the wrong way near pi.
TEST(SolverTree, UnlimitedHingeServoWindsTurns) {
  for (bool reduced : {true, false}) {
    Model m = WithTrees(LoadText(Scene(R"(
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="h" axis="0 0 1" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1"/>
    </body>
  </worldbody>
  <actuator><position name="servo" joint="h" kp="2" kv="0.4"/></actuator>)")), reduced);
    ASSERT_EQ(m.ntree(), reduced ? 1 : 0);
    EngineOptions opt;
    Engine e(m, opt);
    const Real target = Real(3 * M_PI);
    double turned = 0, last = 0;
    for (int k = 0; k < 150; ++k) {  // 3 s at 50 Hz
      e.Step(&target);
      e.Download();
      const Real* q = e.state().body_quat.data() + 4 * m.BodyId("arm");
      double angle = 2 * std::atan2(double(q[3]), double(q[0]));  // about z, modulo 2 pi
      turned += std::remainder(angle - last, 2 * M_PI);
      last = angle;
    }
    const double joint_q = e.state().joint_q[m.JointId("h")];
    EXPECT_NEAR(joint_q, 3 * M_PI, 0.02) << (reduced ? "tree" : "maximal");
    EXPECT_NEAR(turned, joint_q, 1e-3) << "joint_q follows the body through the turns";
  }
}

// The six-joint chain of hinge_chain.xml (tilted axes, armature, damping) in both paths for
// 0.5 s: the maximal path (lock rows, checked against MuJoCo in test_mujoco_parity.py) and the
// tree agree within 5 mm at every link (observed 1.2 mm); a missing Coriolis or parallel-axis
// term is off by centimetres.
TEST(SolverTree, ChainAgreesWithTheMaximalPath) {
  Model m = LoadScene(ScenePath("hinge_chain.xml"));
  ASSERT_EQ(m.ntree(), 6);
  EngineOptions opt;
  Engine reduced(m, opt);
  Engine maximal(WithTrees(m, false), opt);
  for (int k = 0; k < 25; ++k) {
    reduced.Step(nullptr);
    maximal.Step(nullptr);
  }
  reduced.Download();
  maximal.Download();
  double worst = 0;
  for (int b = 1; b < m.nbody(); ++b) {
    for (int k = 0; k < 3; ++k) {
      worst = std::max(worst, std::abs(Sample(reduced, 0, b).pos[k] - Sample(maximal, 0, b).pos[k]));
    }
  }
  EXPECT_LT(worst, 5e-3) << "links differ by " << worst * 1e3 << " mm";
  std::printf("hinge_chain 0.5 s, tree vs maximal: %.4f mm\n", worst * 1e3);
  EXPECT_EQ(reduced.state().status[0], kWorldOk);
}

// --- parameters changed mid-run -----------------------------------------------------------------

// servo targets swinging around the home pose, different per world
std::vector<Real> ArmActions(const Model& m, int nworld, int k) {
  std::vector<Real> a(static_cast<size_t>(nworld) * m.nactuator());
  for (int w = 0; w < nworld; ++w) {
    for (int i = 0; i < m.nactuator(); ++i) {
      double lo = m.actuator_ctrlrange[2 * i], hi = m.actuator_ctrlrange[2 * i + 1];
      a[w * m.nactuator() + i] =
          Real(0.5 * (lo + hi) + 0.25 * (hi - lo) * std::sin(M_PI * k / 50.0 + 0.3 * w + i));
    }
  }
  return a;
}

// Everything of the tree (M, its factor, the Jacobian, the bias) is rebuilt every step from the
// world's parameters. A run whose link mass and joint armature change mid-episode must match, bit
// for bit, a fresh engine that had those values from the start and was handed the same state;
// and differ from a run that kept the old values.
TEST(SolverTree, ParameterChangesMidRunMatchAFreshEngine) {
  Model m = LoadScene(ScenePath("arm7.xml"));
  const int nworld = 3;
  EngineOptions opt;
  opt.nworld = nworld;
  opt.threads = 2;
  Engine run(m, opt);
  for (int k = 0; k < 30; ++k) run.Step(ArmActions(m, nworld, k).data());

  std::vector<Real> mass, armature;
  for (int w = 0; w < nworld; ++w) {
    std::vector<Real> mw = run.GetParam("body_mass", w), aw = run.GetParam("joint_armature", w);
    mw[m.BodyId("link4")] *= Real(1.5 + w);
    mw[m.BodyId("hand")] *= Real(2);
    aw[m.body_joint[m.BodyId("link2")]] = Real(0.3 + 0.1 * w);
    mass.insert(mass.end(), mw.begin(), mw.end());
    armature.insert(armature.end(), aw.begin(), aw.end());
  }
  run.SetParam("body_mass", mass);
  run.SetParam("joint_armature", armature);

  Engine fresh(m, opt);
  fresh.SetParam("body_mass", mass);
  fresh.SetParam("joint_armature", armature);
  run.Download();
  test_util::CopyState(run.state(), &fresh.mutable_state());
  fresh.Upload();

  Engine unchanged(m, opt);
  for (int k = 0; k < 30; ++k) unchanged.Step(ArmActions(m, nworld, k).data());
  for (int k = 30; k < 60; ++k) {
    run.Step(ArmActions(m, nworld, k).data());
    fresh.Step(ArmActions(m, nworld, k).data());
    unchanged.Step(ArmActions(m, nworld, k).data());
  }
  run.Download();
  fresh.Download();
  unchanged.Download();
  EXPECT_EQ(run.StateHash(), fresh.StateHash());
  EXPECT_NE(run.StateHash(), unchanged.StateHash()) << "the changes should have mattered";
  for (int w = 0; w < nworld; ++w) EXPECT_EQ(run.state().status[w], kWorldOk);
}

// The step start keeps the tree bodies' poses as loaded (the last step's forward kinematics);
// the step's end places every tree body from q again. A state written from outside with a link
// off its joint (5 mm here) is back on it after one step, and the world is not thrown: its
// other bodies move as the undisturbed world's do, to well under the disturbance.
TEST(SolverTree, StateOffItsJointsIsProjectedByTheFirstStep) {
  Model m = LoadScene(ScenePath("arm7.xml"));
  EngineOptions opt;
  opt.nworld = 2;
  opt.threads = 1;
  Engine e(m, opt);
  auto both = [&](int k) {  // world 0's servo targets in both worlds
    std::vector<Real> one = ArmActions(m, 1, k), a = one;
    a.insert(a.end(), one.begin(), one.end());
    return a;
  };
  for (int k = 0; k < 10; ++k) e.Step(both(k).data());
  e.Download();
  const int link4 = m.BodyId("link4");
  e.mutable_state().view.body_pos(0, link4)[0] += Real(0.005);
  e.Upload();
  e.Step(both(10).data());
  e.Download();
  const StateView& s = e.state().view;
  // every hinge's anchor, seen from the child and from the parent, coincides in world 0
  double worst = 0;
  for (int b = 1; b < m.nbody(); ++b) {
    int j = m.body_joint[b];
    if (j < 0 || m.body_tree[b] < 0 || m.joint_type[j] != kJointHinge) continue;
    int p = m.body_parent[b];
    Vec3 child = LoadVec3(s.body_pos(0, b)) +
                 Rotate(LoadQuat(s.body_quat(0, b)), LoadVec3(&m.joint_pos_child[3 * j]));
    Vec3 parent = LoadVec3(s.body_pos(0, p)) +
                  Rotate(LoadQuat(s.body_quat(0, p)), LoadVec3(&m.joint_pos_parent[3 * j]));
    worst = std::max(worst, double(Length(child - parent)));
  }
  EXPECT_LT(worst, 1e-5) << "a hinge's anchors apart after the step, m";
  // the hand moved like the undisturbed world's (same actions, same state but for link4)
  const int hand = m.BodyId("hand");
  double apart = Length(LoadVec3(s.body_pos(0, hand)) - LoadVec3(s.body_pos(1, hand)));
  EXPECT_LT(apart, 1e-3) << "the disturbed world's hand, m";
  EXPECT_EQ(e.state().status[0], kWorldOk);
}

// The arm under its servos, at 1 and 2 threads, 4 worlds: the same bits.
TEST(SolverTree, ArmIsDeterministicAcrossThreadCounts) {
  Model m = LoadScene(ScenePath("arm7.xml"));
  uint64_t hash[2];
  for (int t = 1; t <= 2; ++t) {
    EngineOptions opt;
    opt.nworld = 4;
    opt.threads = t;
    Engine e(m, opt);
    for (int k = 0; k < 50; ++k) e.Step(ArmActions(m, 4, k).data());
    e.Download();
    hash[t - 1] = e.StateHash();
    for (int w = 0; w < 4; ++w) EXPECT_EQ(e.state().status[w], kWorldOk);
  }
  EXPECT_EQ(hash[0], hash[1]);
}

}  // namespace
}  // namespace s2r
