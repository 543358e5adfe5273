// Joint-space couplings (kernels/solver_coupling.h): <equality><joint> and fixed tendons with
// their actuators, against closed forms. MuJoCo comparisons of the Panda gripper are in
// tests/python/test_robot_models.py.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "host/engine.h"
#include "host/scene/mjcf_load.h"
#include "kernels/measure.h"

namespace s2r {
namespace {

// Two 0.1 kg fingers on slides (along +y and -y) below a fixed palm, a 0.2 kg slider along z
// (gravity), no damping; `tail`: equality, tendon and actuator sections.
Model Fingers(const std::string& tail) {
  return LoadMjcfString(
      "<mujoco>\n<option timestep='0.002'/>\n<worldbody>\n<body name='palm'>"
      "<geom size='0.05' mass='1'/>\n"
      "<body name='left'><joint name='a' type='slide' axis='0 1 0'/>"
      "<geom type='box' size='0.01 0.01 0.02' mass='0.1' contype='0' conaffinity='0'/></body>\n"
      "<body name='right'><joint name='b' type='slide' axis='0 -1 0'/>"
      "<geom type='box' size='0.01 0.01 0.02' mass='0.1' contype='0' conaffinity='0'/></body>\n"
      "</body>\n<body name='slider'><joint name='c' type='slide' axis='0 0 1'/>"
      "<geom size='0.02' mass='0.2' contype='0' conaffinity='0'/></body>\n</worldbody>\n" +
          tail + "</mujoco>\n",
      "fingers.xml");
}

struct Rollout {
  Engine engine;
  explicit Rollout(const Model& m) : engine(m, EngineOptions{}) {}
  // `seconds` of control steps holding `ctrl`
  void Hold(std::vector<Real> ctrl, double seconds) {
    const int steps = static_cast<int>(std::lround(seconds * engine.model().control_hz));
    for (int k = 0; k < steps; ++k) engine.Step(ctrl.data());
    engine.Download();
  }
  Real Q(const char* joint) {
    Real q = 0, qdot = 0;
    const Model& m = engine.model();
    JointCoordinate(m.View(), engine.state().view, 0, m.JointId(joint), &q, &qdot);
    return q;
  }
};

TEST(SolverCoupling, PolynomialEqualityHoldsWhileAServoDrivesJoint2) {
  // b = 0.002 + 0.5 a + 20 a^2, a driven to 0.03 m: b = 0.002 + 0.015 + 0.018 = 0.035 m
  Rollout run(Fingers("<equality><joint joint1='b' joint2='a' polycoef='0.002 0.5 20 0 0' solref='0.005 1'/>"
                  "</equality>\n<actuator><position joint='a' kp='200' kv='10'/></actuator>\n"));
  run.Hold({Real(0.03)}, 1.0);
  ASSERT_EQ(run.engine.state().status[0], kWorldOk);
  const Real a = run.Q("a"), b = run.Q("b");
  EXPECT_NEAR(a, 0.03, 2e-4) << "the servo reaches its target: b's inertia slows it, no force holds it off";
  // the coupling error: 1e-5 m (rigid at the velocity level, position error corrected at 32 Hz)
  EXPECT_NEAR(b, 0.002 + 0.5 * a + 20 * a * a, 1e-5);
}

TEST(SolverCoupling, SingleJointEqualityHoldsAgainstGravity) {
  Rollout run(Fingers("<equality><joint joint1='c' polycoef='0.3'/></equality>\n"));
  run.Hold({}, 1.0);
  ASSERT_EQ(run.engine.state().status[0], kWorldOk);
  // from q = 0 to a0 = 0.3 m at the solref rate (time constant 0.02 s): 1 s is 50 time constants
  EXPECT_NEAR(run.Q("c"), 0.3, 1e-4);
}

TEST(SolverCoupling, InactiveEqualityDoesNothing) {
  Rollout run(Fingers("<equality><joint joint1='c' polycoef='0.3' active='false'/></equality>\n"));
  run.Hold({}, 0.2);
  // free fall for 0.2 s: -g t^2 / 2 = -0.196 m (semi-implicit Euler at 0.5 ms: within 1 mm)
  EXPECT_NEAR(run.Q("c"), -0.5 * 9.81 * 0.04, 1e-3);
}

TEST(SolverCoupling, TendonServoDrivesTheCoupledFingers) {
  // Menagerie panda.xml's gripper: a tendon split = (a + b) / 2, the equality a = b, one position
  // servo on the tendon; target 0.03 m for both fingers
  Rollout run(Fingers("<equality><joint joint1='a' joint2='b'/></equality>\n"
                  "<tendon><fixed name='split'><joint joint='a' coef='0.5'/><joint joint='b' coef='0.5'/>"
                  "</fixed></tendon>\n<actuator><position tendon='split' kp='100' kv='10'/></actuator>\n"));
  run.Hold({Real(0.03)}, 1.5);
  ASSERT_EQ(run.engine.state().status[0], kWorldOk);
  EXPECT_NEAR(run.Q("a"), 0.03, 1e-4);
  EXPECT_NEAR(run.Q("b"), 0.03, 1e-4);
  EXPECT_NEAR(run.Q("a") - run.Q("b"), 0, 1e-6);
  // at rest on target the servo's force is ~0 (kp times the 0.1 mm tolerance: 0.01 N)
  EXPECT_NEAR(run.engine.state().view.actuator_force(0)[0], 0, 0.01);
}

TEST(SolverCoupling, TendonMotorAppliesCoefTimesForceToEachJoint) {
  // tendon 2 a - 1 b (no equality), motor force 0.1 N: generalized forces 0.2 N on a, -0.1 N on
  // b; 0.1 kg each: a accelerates at 2 m/s^2, b at -1 m/s^2; after 0.1 s: 10 mm and -5 mm
  Rollout run(Fingers("<tendon><fixed name='t'><joint joint='a' coef='2'/><joint joint='b' coef='-1'/>"
                  "</fixed></tendon>\n<actuator><motor tendon='t'/></actuator>\n"));
  run.Hold({Real(0.1)}, 0.1);
  ASSERT_EQ(run.engine.state().status[0], kWorldOk);
  EXPECT_NEAR(run.Q("a"), 0.5 * 2 * 0.01, 1e-4);   // 1%
  EXPECT_NEAR(run.Q("b"), -0.5 * 1 * 0.01, 5e-5);  // 1%
  EXPECT_NEAR(run.engine.state().view.actuator_force(0)[0], 0.1, 1e-6);
}

}  // namespace
}  // namespace s2r
