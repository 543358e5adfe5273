// Joint-space couplings (kernels/solver_coupling.h): <equality><joint>, <connect>, <weld> and fixed
// tendons with their actuators, and joint springs, against closed forms. MuJoCo comparisons of
// the Panda gripper are in tests/python/test_robot_models.py, of the Robotiq 2F-85 in
// tests/python/test_robotiq_2f85.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
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
  // the substep of a step without contact points (semi-implicit Euler moves a body under a
  // constant acceleration a by a t (t + h) / 2 in t)
  double FreeSubstep() const {
    const Model& m = engine.model();
    return double(m.timestep) / (m.substeps_no_contact > 0 ? m.substeps_no_contact : m.substeps);
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
  // free fall for 0.2 s: -g t (t + h) / 2, -0.198 m at 1 substep of 2 ms (-g t^2 / 2 = -0.196 m)
  const double t = 0.2, h = run.FreeSubstep();
  EXPECT_NEAR(run.Q("c"), -0.5 * 9.81 * t * (t + h), 1e-5);
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
  // semi-implicit Euler at the substep h (2 ms: 1 substep with 2 solve passes in a step without
  // contact) moves a t (t + h) / 2, 2 % past a t^2 / 2 at 0.1 s
  const double t = 0.1, h = run.FreeSubstep();
  EXPECT_NEAR(run.Q("a"), 0.5 * 2 * t * (t + h), 1e-5);
  EXPECT_NEAR(run.Q("b"), -0.5 * 1 * t * (t + h), 1e-5);
  EXPECT_NEAR(run.engine.state().view.actuator_force(0)[0], 0.1, 1e-6);
}

TEST(SolverCoupling, JointSpringOscillatesAtItsNaturalPeriod) {
  // a hinge with inertia 0.01 kg m^2 about its axis (gravity along it: no torque), stiffness
  // 1 N m/rad about springref 0.2 rad, released at q = 0: q(t) = 0.2 (1 - cos(10 t))
  Rollout run(LoadMjcfString(R"(<mujoco><compiler angle="radian"/>
  <option timestep="0.001"/>
  <custom><numeric name="s2r_control_hz" data="1000"/></custom>
  <worldbody><body><joint name="j" axis="0 0 1" stiffness="1" springref="0.2"/>
    <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/></body></worldbody>
</mujoco>)", "spring.xml"));
  const double half_period = M_PI / 10;  // 0.314 s
  run.Hold({}, half_period);
  ASSERT_EQ(run.engine.state().status[0], kWorldOk);
  const double t1 = std::lround(half_period * 1000) / 1000.0;
  // explicit spring at a 1 ms step: measured 1.7e-6 / 3.5e-6 rad off the closed form (float32)
  EXPECT_NEAR(run.Q("j"), 0.2 * (1 - std::cos(10 * t1)), 1e-4) << "the far turning point";
  run.Hold({}, half_period);
  const double t2 = 2 * t1;
  EXPECT_NEAR(run.Q("j"), 0.2 * (1 - std::cos(10 * t2)), 1e-4) << "back where it started after a period";
}

TEST(SolverCoupling, BallSpringTurnsBackAndForthAtItsNaturalPeriod) {
  // a ball with isotropic inertia 0.01 kg m^2 about it (COM at the anchor, no gravity torque) and
  // stiffness 1 N m/rad, started 0.8 rad about (1, 1, 0)/sqrt(2) from its reference orientation at
  // rest: the spring torque -k theta stays along that axis, theta(t) = 0.8 cos(10 t) at any
  // amplitude; at half a period the rotation is -0.8 rad about the same axis. Within 4 mrad per
  // component (measured 2.1 and 1.0 mrad at this 1 ms step, 0.5 and 0.25 at 0.25 ms: the step's
  // error, first order in the ball's chart where a hinge's spring is second order)
  const double c = std::cos(0.4), s = std::sin(0.4) / std::sqrt(2.0);
  char xml[1024];
  std::snprintf(xml, sizeof(xml), R"(<mujoco><compiler angle="radian"/>
  <option timestep="0.001"/>
  <custom><numeric name="s2r_control_hz" data="1000"/></custom>
  <worldbody><body name="b" pos="0 0 1"><joint name="j" type="ball" stiffness="1"/>
    <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/></body></worldbody>
  <keyframe><key name="home" qpos="%.9f %.9f %.9f 0"/></keyframe>
</mujoco>)",
                c, s, s);
  Rollout run(LoadMjcfString(xml, "ball_spring.xml"));
  const double half_period = M_PI / 10;
  run.Hold({}, half_period);
  ASSERT_EQ(run.engine.state().status[0], kWorldOk);
  const double t1 = std::lround(half_period * 1000) / 1000.0, want = 0.8 * std::cos(10 * t1);
  const Model& m = run.engine.model();
  const Real* q = run.engine.state().joint_q.data();
  const double vx = q[m.JointId("j:x")], vy = q[m.JointId("j:y")], vz = q[m.JointId("j:z")];
  std::printf("ball spring: rotation vector %.5f %.5f %.5f after half a period (closed form %.5f along (1, 1, 0))\n",
              vx, vy, vz, want / std::sqrt(2.0));
  EXPECT_NEAR(vx, want / std::sqrt(2.0), 4e-3);
  EXPECT_NEAR(vy, want / std::sqrt(2.0), 4e-3);
  EXPECT_NEAR(vz, 0, 1e-4);
}

// A planar crank-rocker four-bar in the x-z plane (hinges along -y: positive turns +x toward
// +z): crank A-B (a), coupler B-C (b), rocker D-C (c), ground A-D (d); the coupler's end C held on
// the rocker's by an <equality><connect>. With the crank at angle t, C is where the circles about
// B (radius b) and D (radius c) meet, on the branch of the assembled configuration.
struct FourBar {
  double a = 0.1, b = 0.3, c = 0.25, d = 0.3;
  // C for crank angle t (x, z), the branch above the ground line
  void Coupler(double t, double* cx, double* cz) const {
    const double bx = a * std::cos(t), bz = a * std::sin(t);
    const double ex = d - bx, ez = -bz, l = std::hypot(ex, ez);
    const double along = (b * b - c * c + l * l) / (2 * l), across = std::sqrt(b * b - along * along);
    *cx = bx + (along * ex - across * ez) / l;
    *cz = bz + (along * ez + across * ex) / l;
  }
  double Rocker(double t) const {
    double cx, cz;
    Coupler(t, &cx, &cz);
    return std::atan2(cz, cx - d);
  }
};

TEST(SolverCoupling, ConnectClosesAFourBarLoop) {
  const FourBar fb;
  const double t0 = M_PI / 2;  // the reference configuration: crank straight up
  double cx, cz;
  fb.Coupler(t0, &cx, &cz);
  const double bx = 0, bz = fb.a;
  char xml[2048];
  std::snprintf(xml, sizeof(xml), R"(<mujoco><compiler angle="radian"/>
  <option timestep="0.001" gravity="0 0 0"/>
  <worldbody>
    <body name="crank"><joint name="crank" axis="0 -1 0"/>
      <geom type="capsule" fromto="0 0 0 %.9f 0 %.9f" size="0.01" mass="0.1" contype="0" conaffinity="0"/>
      <body name="coupler" pos="%.9f 0 %.9f"><joint name="coupler" axis="0 -1 0"/>
        <geom type="capsule" fromto="0 0 0 %.9f 0 %.9f" size="0.01" mass="0.2" contype="0" conaffinity="0"/>
      </body>
    </body>
    <body name="rocker" pos="%.9f 0 0"><joint name="rocker" axis="0 -1 0"/>
      <geom type="capsule" fromto="0 0 0 %.9f 0 %.9f" size="0.01" mass="0.15" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <equality><connect body1="coupler" body2="rocker" anchor="%.9f 0 %.9f" solref="0.005 1"/></equality>
  <actuator><position joint="crank" kp="20" kv="1"/></actuator>
</mujoco>)",
                bx, bz, bx, bz, cx - bx, cz - bz, fb.d, cx - fb.d, cz, cx - bx, cz - bz);
  Model m = LoadMjcfString(xml, "fourbar.xml");
  ASSERT_EQ(m.nequality(), 1);
  EXPECT_GE(m.body_tree[m.BodyId("rocker")], 0);  // the connect makes the rocker a tree
  Rollout run(m);
  const double phi0 = fb.Rocker(t0);
  for (double target : {0.5, 1.5, -0.8}) {
    run.Hold({Real(target)}, 1.0);
    ASSERT_EQ(run.engine.state().status[0], kWorldOk);
    const double crank = run.Q("crank");
    EXPECT_NEAR(crank, target, 0.05) << "the servo turns the crank through the loop";
    // the rocker follows the loop's closed form for the crank's actual angle (measured 2e-8 rad)
    EXPECT_NEAR(run.Q("rocker"), fb.Rocker(t0 + crank) - phi0, 1e-4) << "crank " << crank;
  }
}

// A link on a gimbal of three hinges (z, y, x through one point, the link's origin) welded to the
// world by an orientation: the relpose quaternion is the world's orientation in the link's frame,
// so the weld turns the link to conj(relquat) and holds it there against gravity (the link's COM
// is off the gimbal point). The linear rows are satisfied identically (both points are the gimbal
// point), so three of the six pivots are zero and dropped.
TEST(SolverCoupling, WeldTurnsALinkToItsHeldOrientation) {
  const double angle = 0.4;  // about (1, 1, 0) / sqrt(2)
  const double c = std::cos(angle / 2), s = std::sin(angle / 2) / std::sqrt(2.0);
  char xml[2048];
  std::snprintf(xml, sizeof(xml), R"(<mujoco><compiler angle="radian"/>
  <option timestep="0.002"/>
  <worldbody>
    <body name="yaw"><joint name="z" axis="0 0 1" damping="0.05"/>
      <inertial pos="0 0 0" mass="0.01" diaginertia="1e-5 1e-5 1e-5"/>
      <body name="pitch"><joint name="y" axis="0 1 0" damping="0.05"/>
        <inertial pos="0 0 0" mass="0.01" diaginertia="1e-5 1e-5 1e-5"/>
        <body name="link"><joint name="x" axis="1 0 0" damping="0.05"/>
          <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.3" contype="0" conaffinity="0"/>
        </body>
      </body>
    </body>
  </worldbody>
  <equality><weld body1="link" relpose="0 0 0 %.9f %.9f %.9f 0"/></equality>
</mujoco>)",
                c, -s, -s);  // the world in the link's frame: the inverse of the link's rotation
  Model m = LoadMjcfString(xml, "gimbal.xml");
  ASSERT_EQ(m.nequality(), 1);
  Rollout run(m);
  run.Hold({}, 1.0);
  ASSERT_EQ(run.engine.state().status[0], kWorldOk);
  const int link = m.BodyId("link");
  const Quat got = LoadQuat(run.engine.state().view.body_quat(0, link));
  const Quat want{Real(c), Real(s), Real(s), 0};
  Quat err = Conjugate(want) * got;
  const double off = 2 * std::atan2(std::sqrt(double(err.x * err.x + err.y * err.y + err.z * err.z)),
                                    std::fabs(double(err.w)));
  std::printf("weld gimbal: %.3g rad off the held orientation after 1 s\n", off);
  EXPECT_LT(off, 1e-3) << "rad off the held orientation";
}

// A free box welded to a pendulum's tip (a grasp held by a weld), another welded to the world
// (a held object) and a third by a site of its own on a world site: a weld naming a free body (or
// one of its sites) makes it a floating base, so the joints' rows act in one joint space. Over 1 s
// of swing the first keeps its pose on the link within 1 mm and 5 mrad (measured 0.36 mm,
// 0.29 mrad) while the link swings by 34 cm; the second and the third stay within 1 mm (measured
// 0). The second's weld point is MuJoCo's default, the world's origin, 1.4 m away: with the linear
// rows at that point its angular pivots were dropped as redundant and the box swung 2.8 m about
// the origin (MakeBodyCouplingRows now holds body1's COM).
TEST(SolverCoupling, WeldHoldsFreeBodiesOnALinkAndOnTheWorld) {
  const char* xml = R"(<mujoco><compiler angle="radian"/>
  <option timestep="0.002"/>
  <worldbody>
    <body name="link" pos="0 0 1"><joint name="h" axis="0 1 0" damping="0.01"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.5" contype="0" conaffinity="0"/>
    </body>
    <body name="box" pos="0.35 0 1" euler="0 0 0.3"><freejoint/>
      <geom type="box" size="0.03 0.02 0.02" mass="0.2" contype="0" conaffinity="0"/>
    </body>
    <body name="held" pos="1 0 1"><freejoint/>
      <geom type="box" size="0.03 0.02 0.02" mass="0.2" contype="0" conaffinity="0"/>
    </body>
    <body name="pinned" pos="1.5 0 1"><freejoint/>
      <geom type="box" size="0.03 0.02 0.02" mass="0.2" contype="0" conaffinity="0"/>
      <site name="pinned_site" pos="0.03 0 0"/>
    </body>
    <site name="anchor" pos="1.53 0 1"/>
  </worldbody>
  <equality><weld body1="box" body2="link"/><weld body1="held"/><weld site1="pinned_site" site2="anchor"/></equality>
</mujoco>)";
  Model m = LoadMjcfString(xml, "weld_free.xml");
  const int link = m.BodyId("link"), box = m.BodyId("box"), held = m.BodyId("held"), pinned = m.BodyId("pinned");
  ASSERT_GE(m.body_tree[box], 0) << "the welded free body is a floating base";
  ASSERT_GE(m.body_tree[held], 0);
  ASSERT_GE(m.body_tree[pinned], 0) << "named through its site";
  Rollout run(m);
  const StateView& v = run.engine.state().view;
  auto relative = [&](Vec3* pos, Quat* rot) {
    const Quat ql = LoadQuat(v.body_quat(0, link)), qb = LoadQuat(v.body_quat(0, box));
    *pos = InvRotate(ql, LoadVec3(v.body_pos(0, box)) - LoadVec3(v.body_pos(0, link)));
    *rot = Conjugate(ql) * qb;
  };
  Vec3 p0, p1;
  Quat r0, r1;
  relative(&p0, &r0);
  const Vec3 tip0 = LoadVec3(v.body_pos(0, box)), held0 = LoadVec3(v.body_pos(0, held));
  const Vec3 pinned0 = LoadVec3(v.body_pos(0, pinned));
  run.Hold({}, 1.0);
  ASSERT_EQ(run.engine.state().status[0], kWorldOk);
  relative(&p1, &r1);
  const Quat d = Conjugate(r0) * r1;
  const double turn = 2 * std::atan2(double(Length(Vec3{d.x, d.y, d.z})), std::fabs(double(d.w)));
  const double slip = Length(p1 - p0), swing = Length(LoadVec3(v.body_pos(0, box)) - tip0);
  const double fall = Length(LoadVec3(v.body_pos(0, held)) - held0);
  const double pinned_fall = Length(LoadVec3(v.body_pos(0, pinned)) - pinned0);
  std::printf("weld on a free body: %.3g mm and %.3g mrad off its pose on the link (moved %.0f mm); held box %.3g mm\n",
              slip * 1e3, turn * 1e3, swing * 1e3, fall * 1e3);
  EXPECT_GT(swing, 0.1);
  EXPECT_LT(slip, 1e-3);
  EXPECT_LT(turn, 5e-3);
  EXPECT_LT(fall, 1e-3);
  EXPECT_LT(pinned_fall, 1e-3) << "the site-form weld holds too";
}

// Two pendulums hinged about parallel axes 0.3 m apart, horizontal at the reference, and welded
// to each other there: the loop (two hinges, three planar constraints) cannot move, where either
// pendulum alone falls under gravity. Half the weld's rows are redundant (planar), dropped as
// zero pivots.
TEST(SolverCoupling, WeldLocksTwoPendulumsTogether) {
  const char* xml = R"(<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <body name="a"><joint name="a" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.01" mass="0.2" contype="0" conaffinity="0"/>
    </body>
    <body name="b" pos="0.3 0 0"><joint name="b" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 -0.15 0 0" size="0.01" mass="0.1" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <equality>%s</equality>
</mujoco>)";
  char with[1024], without[1024];
  std::snprintf(with, sizeof(with), xml, "<weld body1='a' body2='b'/>");
  std::snprintf(without, sizeof(without), xml, "<weld body1='a' body2='b' active='false'/>");
  Rollout held(LoadMjcfString(with, "pendulums.xml"));
  Rollout free(LoadMjcfString(without, "pendulums.xml"));
  held.Hold({}, 1.0);
  free.Hold({}, 0.1);
  ASSERT_EQ(held.engine.state().status[0], kWorldOk);
  EXPECT_GT(std::fabs(free.Q("a")), 0.05) << "unwelded, the pendulum falls";
  std::printf("welded pendulums: %.3g and %.3g rad after 1 s (unwelded: %.3g after 0.1 s)\n",
              double(held.Q("a")), double(held.Q("b")), double(free.Q("a")));
  EXPECT_NEAR(held.Q("a"), 0, 1e-3);
  EXPECT_NEAR(held.Q("b"), 0, 1e-3);
}

}  // namespace
}  // namespace s2r
