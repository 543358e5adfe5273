// The substeps a scene gets when it gives neither s2r_substeps nor s2r_substeps_no_contact
// (Model::ChooseSubsteps, docs/physics.md, *Substeps*): without contact points 1 for models stepped
// entirely in reduced coordinates with no coupling and soft enough joint rows (2 with a coupling),
// with contact points substeps of at most 2.5 ms and a quarter of their rate above the stiffest
// contact, and those of the scene's own contact frequency where a stiffer geom needs more; else 4
// in every step. A scene's own counts are kept. And the step itself: the count
// switches with the contact points, warm starts carried across the switch.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "host/engine.h"
#include "host/scene/mjcf_load.h"
#include "host/scene/scene_source.h"
#include "tests/host/test_scenes.h"

#ifndef S2R_SOURCE_DIR
#define S2R_SOURCE_DIR "."
#endif

namespace s2r {
namespace {

using test_util::LoadText;

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// a two-link hinge arm above a floor; `custom` goes in <custom>, `link_contype` is the links' contype
// and conaffinity, `extra` follows </worldbody>
std::string Arm(const std::string& custom, int link_contype, const std::string& extra = "") {
  std::string c = std::to_string(link_contype);
  return "<mujoco model='arm'>\n"
         "  <custom>\n" + custom + "  </custom>\n"
         "  <worldbody>\n"
         "    <geom name='floor' type='plane' size='1 1 0.1'/>\n"
         "    <body name='l1' pos='0 0 0.5'>\n"
         "      <joint name='j1' type='hinge' axis='0 1 0'/>\n"
         "      <geom name='g1' type='capsule' fromto='0 0 0 0.3 0 0' size='0.03' contype='" + c +
         "' conaffinity='" + c + "'/>\n"
         "      <body name='l2' pos='0.3 0 0'>\n"
         "        <joint name='j2' type='hinge' axis='0 1 0'/>\n"
         "        <geom name='g2' type='capsule' fromto='0 0 0 0.3 0 0' size='0.03' contype='" + c +
         "' conaffinity='" + c + "'/>\n"
         "      </body>\n"
         "    </body>\n"
         "  </worldbody>\n" + extra + "</mujoco>\n";
}

const std::string kUr5e = std::string(S2R_SOURCE_DIR) + "/configs/robots/universal_robots_ur5e/scene.xml";

TEST(SubstepsRule, PublishedScenes) {
  // Menagerie's UR5e: six hinges in one articulated tree; its collision capsules and the floor
  // make pairs with s2r's default 120 Hz contacts: 1 substep of 2 ms in any step
  Model ur5e = LoadScene(kUr5e);
  EXPECT_FALSE(ur5e.pair_geom.empty());
  EXPECT_EQ(ur5e.substeps, 1);
  EXPECT_EQ(ur5e.substeps_no_contact, 1);
  EXPECT_EQ(ur5e.substeps_soft_contact, 0);  // 1 in every contact step already
  EXPECT_TRUE(Has(ur5e.substeps_reason, "without contact points")) << ur5e.substeps_reason;
  EXPECT_TRUE(Has(ur5e.substeps_reason, "1 in a step with contact points")) << ur5e.substeps_reason;
  // the trimmed Panda (two finger servos, no equality) on a floor: its finger pads' solref maps
  // to 226 Hz, above a quarter of 500 Hz: 2 in a step with contact points
  Model panda = LoadScene("builtin:franka_emika_panda/scene_s2r");
  EXPECT_EQ(panda.substeps, 2);
  EXPECT_EQ(panda.substeps_no_contact, 1);
  EXPECT_EQ(panda.substeps_soft_contact, 1);  // a step whose points are all of the scene's 120 Hz
  EXPECT_TRUE(Has(panda.substeps_reason, "stiffest contact's 226 Hz")) << panda.substeps_reason;
  // the MJX Panda couples its fingers by a joint equality: 1 substep with 2 solve passes without
  // contact points; the 2F-85 (on the UR5e too) closes its loops by connects: 2 substeps. With
  // contact points the 2F-85's pads (solref 0.004: 400 Hz) need 4, the MJX Panda's (226 Hz) 2
  // where something can touch them (not in the arm's own file, without a floor).
  struct Expect {
    const char* scene;
    int contact, no_contact, passes;
    const char* why;
    int soft_contact;  // a step whose points all take the scene's 120 Hz (0: `contact`)
  };
  const char* joint_coupling = "couples joints: 1 substep with 2 solve passes in a step without contact points";
  const char* loop = "closes a loop: 2 substeps in a step without contact points";
  for (Expect e : {Expect{"builtin:franka_emika_panda/scene_mjx", 2, 1, 2, joint_coupling, 1},
                   Expect{"builtin:franka_emika_panda/mjx_panda", 1, 1, 2, joint_coupling, 0},  // no floor
                   Expect{"builtin:panda_pick", 2, 1, 2, joint_coupling, 1},
                   Expect{"builtin:robotiq_2f85/2f85_s2r", 4, 2, 1, loop, 2},
                   Expect{"builtin:ur5e_2f85/scene", 4, 2, 1, loop, 2}}) {
    SCOPED_TRACE(e.scene);
    Model m = LoadScene(e.scene);
    EXPECT_EQ(m.substeps, e.contact);
    EXPECT_EQ(m.substeps_no_contact, e.no_contact);
    EXPECT_EQ(m.solve_passes, e.passes);
    EXPECT_EQ(m.substeps_soft_contact, e.soft_contact);
    EXPECT_TRUE(Has(m.substeps_reason, e.why)) << m.substeps_reason;
  }
  // scenes that give s2r_substeps keep it in every step, with no reason
  for (const char* scene : {"builtin:box_push", "builtin:pick_lift", "builtin:stack5", "builtin:peg_insert"}) {
    SCOPED_TRACE(scene);
    Model m = LoadScene(scene);
    EXPECT_EQ(m.substeps, 4);
    EXPECT_EQ(m.substeps_no_contact, 0);
    EXPECT_EQ(m.solve_passes, 1);
    EXPECT_TRUE(m.substeps_reason.empty()) << m.substeps_reason;
  }
}

TEST(SubstepsRule, WhatKeepsEveryStepAtFourOrTwo) {
  // every joint in the tree, no coupling: 1 without contact points, with or without pairs, and
  // at MuJoCo's default 2 ms timestep 1 with them too
  for (int contype : {0, 1}) {
    Model arm = LoadText(Arm("", contype));
    EXPECT_EQ(arm.substeps, 1);
    EXPECT_EQ(arm.substeps_no_contact, 1);
    EXPECT_TRUE(Has(arm.substeps_reason, contype ? "1 in a step with contact points" : "no geom pair can touch"))
        << arm.substeps_reason;
  }
  // a step with contact points: substeps of at most 2.5 ms (4 ms: 2), and enough of them for the
  // stiffest contact (300 Hz at 2 ms: 4 * 300 * 0.002 = 2.4, so 3)
  Model slow = LoadText(Arm("", 1, "  <option timestep='0.004'/>\n"));
  EXPECT_EQ(slow.substeps, 2);
  EXPECT_EQ(slow.substeps_no_contact, 1);
  Model hard = LoadText(Arm("    <numeric name='s2r_contact_hertz' data='300'/>\n", 1));
  EXPECT_EQ(hard.substeps, 3);
  EXPECT_EQ(hard.substeps_no_contact, 1);
  EXPECT_TRUE(Has(hard.substeps_reason, "3 in a step with contact points")) << hard.substeps_reason;
  // the same arm in maximal coordinates: 4 in every step, naming the joint
  Model maximal = LoadText(Arm("    <numeric name='s2r_reduce_trees' data='0'/>\n", 0));
  EXPECT_EQ(maximal.substeps, 4);
  EXPECT_EQ(maximal.substeps_no_contact, 0);
  EXPECT_TRUE(Has(maximal.substeps_reason, "joint 'j1' is stepped in maximal coordinates")) << maximal.substeps_reason;
  // a joint equality coupling the two hinges: 1 substep with 2 solve passes without contact points
  Model coupled = LoadText(Arm("", 0, "  <equality><joint name='c' joint1='j2' joint2='j1'/></equality>\n"));
  EXPECT_EQ(coupled.substeps_no_contact, 1);
  EXPECT_EQ(coupled.solve_passes, 2);
  EXPECT_TRUE(Has(coupled.substeps_reason, "joint equality 'c' couples joints: 1 substep with 2 solve passes"))
      << coupled.substeps_reason;
  // a fixed tendon: the same
  Model tendon = LoadText(Arm("", 0, "  <tendon><fixed name='t'><joint joint='j1' coef='1'/>"
                                     "<joint joint='j2' coef='1'/></fixed></tendon>\n"));
  EXPECT_EQ(tendon.substeps_no_contact, 1);
  EXPECT_EQ(tendon.solve_passes, 2);
  EXPECT_TRUE(Has(tendon.substeps_reason, "tendon 't' couples joints: 1 substep with 2 solve passes"))
      << tendon.substeps_reason;
  // a connect closing a loop (the outer link's tip held on a world point): 2 substeps, 1 pass
  Model looped = LoadText(Arm("", 0, "  <equality><connect name='k' body1='l2' body2='world' anchor='0.3 0 0'/>"
                                     "</equality>\n"));
  EXPECT_EQ(looped.substeps_no_contact, 2);
  EXPECT_EQ(looped.solve_passes, 1);
  EXPECT_TRUE(Has(looped.substeps_reason, "connect 'k' closes a loop: 2 substeps")) << looped.substeps_reason;
  // a coupling does not lift a stiffer requirement: with a stiff servo, 4 in every step
  Model coupled_servo = LoadText(Arm("", 0, "  <equality><joint name='c' joint1='j2' joint2='j1'/></equality>\n"
                                            "  <actuator><position name='s' joint='j2' kp='1000'/></actuator>\n"));
  EXPECT_EQ(coupled_servo.substeps_no_contact, 0);
  EXPECT_TRUE(Has(coupled_servo.substeps_reason, "actuator 's'")) << coupled_servo.substeps_reason;
  // friction loss on a joint
  std::string lossy_xml = Arm("", 0);
  const std::string j1 = "<joint name='j1' type='hinge' axis='0 1 0'/>";
  lossy_xml.replace(lossy_xml.find(j1), j1.size(), "<joint name='j1' type='hinge' axis='0 1 0' frictionloss='0.1'/>");
  Model lossy = LoadText(lossy_xml);
  EXPECT_EQ(lossy.substeps_no_contact, 0);
  EXPECT_TRUE(Has(lossy.substeps_reason, "friction loss")) << lossy.substeps_reason;
  // joint rows stiffer than a quarter of the step rate (200 Hz at 2 ms)
  Model stiff = LoadText(Arm("    <numeric name='s2r_joint_hertz' data='200'/>\n", 0));
  EXPECT_EQ(stiff.substeps_no_contact, 0);
  EXPECT_TRUE(Has(stiff.substeps_reason, "s2r_joint_hertz 200 Hz")) << stiff.substeps_reason;
  Model soft = LoadText(Arm("    <numeric name='s2r_joint_hertz' data='125'/>\n", 0));
  EXPECT_EQ(soft.substeps_no_contact, 1);
  // the Kinova Gen3: kp 2000 / 500 servos on links without armature
  Model gen3 = LoadScene(std::string(S2R_SOURCE_DIR) + "/configs/robots/kinova_gen3/scene.xml");
  EXPECT_EQ(gen3.substeps_no_contact, 0);
  EXPECT_TRUE(Has(gen3.substeps_reason, "a servo of up to")) << gen3.substeps_reason;
  // a stiff servo on the test arm's outer link: kp 1000 on a capsule of least moment ~4e-4 kg m^2
  // (~240 Hz) needs 4; kp 100 (~77 Hz) does not
  Model servo = LoadText(Arm("", 0, "  <actuator><position name='s' joint='j2' kp='1000'/></actuator>\n"));
  EXPECT_EQ(servo.substeps_no_contact, 0);
  EXPECT_TRUE(Has(servo.substeps_reason, "actuator 's'")) << servo.substeps_reason;
  Model gentle = LoadText(Arm("", 0, "  <actuator><position name='s' joint='j2' kp='100'/></actuator>\n"));
  EXPECT_EQ(gentle.substeps_no_contact, 1);
}

TEST(SubstepsRule, GivenCountsAreKept) {
  for (int n : {1, 2, 4, 8}) {
    Model arm = LoadText(Arm("    <numeric name='s2r_substeps' data='" + std::to_string(n) + "'/>\n", 1));
    EXPECT_EQ(arm.substeps, n);
    EXPECT_EQ(arm.substeps_no_contact, 0);
    EXPECT_EQ(arm.solve_passes, 1);
    EXPECT_TRUE(arm.substeps_reason.empty());
    Model free = LoadText(Arm("    <numeric name='s2r_substeps_no_contact' data='" + std::to_string(n) + "'/>\n", 1));
    EXPECT_EQ(free.substeps, 4);
    EXPECT_EQ(free.substeps_no_contact, n);
    Model passes = LoadText(Arm("    <numeric name='s2r_solve_passes' data='" + std::to_string(n) + "'/>\n", 1));
    EXPECT_EQ(passes.substeps, 4);
    EXPECT_EQ(passes.substeps_no_contact, 0);
    EXPECT_EQ(passes.solve_passes, n);
    Model soft = LoadText(Arm("    <numeric name='s2r_substeps_soft_contact' data='" + std::to_string(n) + "'/>\n", 1));
    EXPECT_EQ(soft.substeps, 4);
    EXPECT_EQ(soft.substeps_no_contact, 0);
    EXPECT_EQ(soft.substeps_soft_contact, n);
    EXPECT_TRUE(soft.substeps_reason.empty());
  }
  // a model built in code keeps what its code set, through Finalize
  Model m = LoadText(Arm("", 0));
  m.auto_substeps = false;
  m.substeps = 3;
  m.substeps_no_contact = 0;
  m.Finalize();
  EXPECT_EQ(m.substeps, 3);
  EXPECT_EQ(m.substeps_no_contact, 0);
}

// The passes run, and 2 of them are what a joint coupling needs: Menagerie's MJX Panda (its
// fingers coupled by a joint equality, one servo on finger_joint1) holds its arm and closes its
// gripper from open (0.04) at 1 substep per step. Its fingers' path over 0.6 s is compared with the
// same model at 16 substeps: 2 solve passes land well closer than 1 (measured 49 um against 110;
// the pytest gripper step against MuJoCo: 0.31 mm at 2 passes, 0.37 at 1, 0.32 at 2 substeps).
TEST(SubstepsRule, SolvePassesConvergeACoupledGripper) {
  auto run = [](int substeps, int passes) {
    Model m = LoadScene("builtin:franka_emika_panda/mjx_panda");
    m.auto_substeps = false;
    m.substeps = substeps;
    m.substeps_no_contact = 0;
    m.solve_passes = passes;
    m.Finalize();
    Engine e(m, EngineOptions{});
    e.Download();
    std::vector<Real> ctrl(m.nactuator(), Real(0));
    for (int i = 0; i < 7; ++i) ctrl[i] = e.state().view.joint_q(0)[m.JointId("joint" + std::to_string(i + 1))];
    const int f1 = m.JointId("finger_joint1"), f2 = m.JointId("finger_joint2");
    std::vector<double> fingers;
    for (int k = 0; k < 30; ++k) {
      ctrl[7] = k < 5 ? Real(0.04) : Real(0);
      e.Step(ctrl.data());
      e.Download();
      EXPECT_EQ(e.state().status[0], kWorldOk);
      fingers.push_back(double(e.state().view.joint_q(0)[f1]));
      fingers.push_back(double(e.state().view.joint_q(0)[f2]));
    }
    return fingers;
  };
  const std::vector<double> ref = run(16, 1), one = run(1, 1), two = run(1, 2);
  double err[2] = {0, 0};
  for (size_t i = 0; i < ref.size(); ++i) {
    err[0] = std::fmax(err[0], std::fabs(one[i] - ref[i]));
    err[1] = std::fmax(err[1], std::fabs(two[i] - ref[i]));
  }
  RecordProperty("error_1_pass_um", std::to_string(err[0] * 1e6));
  RecordProperty("error_2_passes_um", std::to_string(err[1] * 1e6));
  EXPECT_LT(err[1], 0.7 * err[0]) << "1 pass " << err[0] << " m, 2 passes " << err[1] << " m";
}

double FlangeDistance(const Engine& a, const Engine& b, int body) {
  double d = 0;
  for (int k = 0; k < 3; ++k) {
    double x = a.state().view.body_pos(0, body)[k] - b.state().view.body_pos(0, body)[k];
    d += x * x;
  }
  return std::sqrt(d);
}

// The rule's premise on the UR5e: with zero control the servos swing every joint from home towards
// 0 (the flange travels ~0.5 m in 1 s, touching nothing); at 1 substep per step it lands where 4
// per step do. Measured 0.4 mm apart (MuJoCo comparison: tests/python/test_arm_models.py).
TEST(SubstepsRule, Ur5eOneSubstepTracksFour) {
  Model one = LoadScene(kUr5e);
  ASSERT_EQ(one.substeps_no_contact, 1);
  Model four = one;
  four.auto_substeps = false;
  four.substeps = 4;
  four.substeps_no_contact = 0;
  four.Finalize();
  Engine e1(one, EngineOptions{}), e4(four, EngineOptions{}), e0(one, EngineOptions{});
  std::vector<Real> zero(one.nactuator(), Real(0));
  for (int k = 0; k < 50; ++k) {
    e1.Step(zero.data());
    e4.Step(zero.data());
  }
  e0.Download();
  e1.Download();
  e4.Download();
  ASSERT_EQ(e1.state().status[0], kWorldOk);
  ASSERT_EQ(e4.state().status[0], kWorldOk);
  EXPECT_EQ(e1.state().contact_count[0], 0);
  int tool = one.BodyId("wrist_3_link");
  ASSERT_GE(tool, 0);
  EXPECT_GT(FlangeDistance(e1, e0, tool), 0.1) << "flange travel, m";
  EXPECT_LT(FlangeDistance(e1, e4, tool), 5e-3) << "1 vs 4 substeps, m";
}

// A step with contact points runs `substeps`: a free-falling ball (no joint: eligible) lands on the
// floor. At the bench scenes' 0.01 s timestep the rule gives 1 substep without contact points and
// 4 with them: it rests where the every-step-4 run rests, and the steps in flight are the
// 1-substep steps (semi-implicit Euler at the full timestep: z drops by g h^2 n (n + 1) / 2 after
// n steps). At 2 ms one substep is at most 2.5 ms, so contact steps run 1 too, and it rests there
// as well.
TEST(SubstepsRule, ContactStepsRunSubstepsOfAtMostTwoAndAHalfMilliseconds) {
  auto scene = [](const std::string& timestep, const std::string& custom) {
    return "<mujoco><option timestep='" + timestep + "'/><custom>" + custom + "</custom><worldbody>"
           "<geom name='floor' type='plane' size='1 1 0.1'/>"
           "<body name='ball' pos='0 0 0.3'><freejoint/><geom type='sphere' size='0.05' mass='1'/></body>"
           "</worldbody></mujoco>";
  };
  for (const char* timestep : {"0.01", "0.002"}) {
    SCOPED_TRACE(timestep);
    const bool coarse = std::string(timestep) == "0.01";
    Model chosen = LoadText(scene(timestep, ""));
    ASSERT_EQ(chosen.substeps_no_contact, 1);
    ASSERT_EQ(chosen.substeps, coarse ? 4 : 1);
    Model four = LoadText(scene(timestep, "<numeric name='s2r_substeps' data='4'/>"));
    ASSERT_EQ(four.substeps_no_contact, 0);
    Engine e1(chosen, EngineOptions{}), e4(four, EngineOptions{});
    // one control step in flight
    e1.Step(nullptr);
    e1.Download();
    const int ball = chosen.BodyId("ball");
    const double h = chosen.timestep, g = 9.81;
    const int n = chosen.steps_per_control;
    EXPECT_NEAR(e1.state().view.body_pos(0, ball)[2], 0.3 - g * h * h * n * (n + 1) / 2, 1e-5);
    for (int k = 0; k < 50; ++k) {
      e1.Step(nullptr);
      e4.Step(nullptr);
    }
    e1.Download();
    e4.Download();
    EXPECT_GT(e1.state().contact_count[0], 0);
    EXPECT_NEAR(e1.state().view.body_pos(0, ball)[2], e4.state().view.body_pos(0, ball)[2], 1e-3);
    EXPECT_NEAR(e1.state().view.body_pos(0, ball)[2], 0.05, 2e-3);
  }
}


// A step whose contact points all take the scene's contact frequency runs substeps_soft_contact,
// one with a point of a stiffer geom `substeps` (SubstepsOfStep): a ball on the floor of a scene
// that also has a stiff pad (solref 0.002: 366 Hz, 3 substeps at 2 ms) steps exactly as the scene
// pinned at 1 substep does while it touches only the floor, and exactly as the scene pinned at 3
// while it rests on the pad; not as the other count.
TEST(SubstepsRule, ContactStepsOfTheScenesStiffnessRunTheirOwnCount) {
  auto scene = [](const std::string& ball_pos, const std::string& custom) {
    return "<mujoco><option timestep='0.002'/><custom>" + custom + "</custom><worldbody>"
           "<geom name='floor' type='plane' size='1 1 0.1'/>"
           "<geom name='pad' type='box' pos='0.5 0 0.05' size='0.05 0.05 0.05' solref='0.002 1'/>"
           "<body name='ball' pos='" + ball_pos + "'><freejoint/><geom type='sphere' size='0.05' mass='1'/></body>"
           "</worldbody></mujoco>";
  };
  auto run = [](const Model& m) {
    Engine e(m, EngineOptions{});
    for (int k = 0; k < 25; ++k) e.Step(nullptr);
    e.Download();
    EXPECT_EQ(e.state().status[0], kWorldOk);
    EXPECT_GT(e.state().contact_count[0], 0);
    const Real* p = e.state().view.body_pos(0, m.BodyId("ball"));
    return std::vector<Real>(p, p + 3);
  };
  // dropped 1 cm onto the floor (the pad far off), and resting on the pad
  for (const char* pos : {"0 0 0.06", "0.5 0 0.15"}) {
    SCOPED_TRACE(pos);
    const bool on_pad = std::string(pos) != "0 0 0.06";
    Model chosen = LoadText(scene(pos, ""));
    ASSERT_EQ(chosen.substeps, 3) << chosen.substeps_reason;
    ASSERT_EQ(chosen.substeps_soft_contact, 1) << chosen.substeps_reason;
    ASSERT_EQ(chosen.substeps_no_contact, 1);
    EXPECT_TRUE(Has(chosen.substeps_reason, "1 in one whose points all take the scene's 120 Hz")) << chosen.substeps_reason;
    const Model one = LoadText(scene(pos, "<numeric name='s2r_substeps' data='1'/>"));
    const Model three = LoadText(scene(pos, "<numeric name='s2r_substeps' data='3'/>"));
    ASSERT_EQ(one.substeps_soft_contact, 0);
    const std::vector<Real> got = run(chosen), same = run(on_pad ? three : one), other = run(on_pad ? one : three);
    EXPECT_EQ(got, same);
    EXPECT_NE(got, other);
  }
}

}  // namespace
}  // namespace s2r
