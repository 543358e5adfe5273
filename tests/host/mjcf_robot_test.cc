// Tests of the MJCF that published robot models use (docs/mjcf_subset.md): <include>, <keyframe>,
// <general> actuators, MuJoCo's <option> settings, several actuator defaults per class, visual-only
// geoms, the attributes s2r notes or rejects, and Menagerie's MJX Panda (configs/robots).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "host/engine.h"
#include "host/scene/mjcf_load.h"
#include "host/scene/scene_source.h"
#include "kernels/measure.h"
#include "tests/host/test_dir.h"

#ifndef S2R_SOURCE_DIR
#define S2R_SOURCE_DIR "."
#endif

namespace s2r {
namespace {

constexpr double kTol = 1e-5;  // Real may be float

Model Load(const std::string& xml) { return LoadMjcfString(xml, "test.xml"); }

std::string RobotPath(const std::string& name) {
  return std::string(S2R_SOURCE_DIR) + "/configs/robots/" + name;
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// The LoadError message of loading `load`, or "" when it loaded.
template <typename F>
std::string ErrorOf(F load) {
  try {
    load();
  } catch (const LoadError& e) {
    return e.what();
  }
  return "";
}

// Loading `xml` fails with a message starting "test.xml:<line>: " that contains `what`.
::testing::AssertionResult FailsAt(const std::string& xml, int line, const std::string& what) {
  std::string msg = ErrorOf([&] { Load(xml); });
  if (msg.empty()) return ::testing::AssertionFailure() << "loaded without error";
  std::string prefix = "test.xml:" + std::to_string(line) + ": ";
  if (msg.rfind(prefix, 0) != 0) {
    return ::testing::AssertionFailure() << "message does not start with '" << prefix << "': " << msg;
  }
  if (msg.find(what) == std::string::npos) {
    return ::testing::AssertionFailure() << "message lacks '" << what << "': " << msg;
  }
  return ::testing::AssertionSuccess();
}

bool HasNote(const Model& m, const std::string& text) {
  for (const std::string& n : m.load_notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

// --- <include> -----------------------------------------------------------------------------------

TEST(MjcfInclude, TopLevelAndInsideSectionsRelativeToTheMainThenTheIncludingFile) {
  const std::string dir = TestDir();
  std::filesystem::create_directories(dir + "/parts");
  Write(dir + "/main.xml", R"(<mujoco>
  <include file="parts/robot.xml"/>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
  </worldbody>
</mujoco>
)");
  // robot.xml includes its neighbour arm.xml inside <worldbody>: not next to main.xml, so found
  // next to robot.xml
  Write(dir + "/parts/robot.xml", R"(<mujoco model="ignored">
  <compiler angle="radian"/>
  <worldbody>
    <include file="arm.xml"/>
  </worldbody>
  <actuator><include file="arm_actuators.xml"/></actuator>
</mujoco>
)");
  Write(dir + "/parts/arm.xml", R"(<mujoco>
  <body name="arm" pos="0 0 1">
    <joint name="shoulder" range="-1 1"/>
    <geom type="capsule" size="0.05 0.2" mass="2"/>
  </body>
</mujoco>
)");
  Write(dir + "/parts/arm_actuators.xml",
        "<mujoco>\n  <position name='servo' joint='shoulder' kp='50'/>\n</mujoco>\n");
  Model m = LoadMjcfFile(dir + "/main.xml");
  ASSERT_EQ(m.nbody(), 2);
  EXPECT_EQ(m.body_name[1], "arm");
  EXPECT_EQ(m.JointId("shoulder"), 0);
  // <compiler angle="radian"> of the included file applies: the range is 1 rad, not 1 degree
  EXPECT_NEAR(m.joint_range[1], 1.0, kTol);
  ASSERT_EQ(m.nactuator(), 1);
  EXPECT_NEAR(m.actuator_kp[0], 50, kTol);
  EXPECT_EQ(m.ngeom(), 2);

  // MuJoCo 4's order: a file next to the main file wins over one next to the including file
  Write(dir + "/arm.xml",
        "<mujoco>\n  <body name='arm_from_main_folder'><joint name='shoulder'/><geom size='0.1'/></body>\n</mujoco>\n");
  Model first = LoadMjcfFile(dir + "/main.xml");
  EXPECT_EQ(first.body_name[1], "arm_from_main_folder");
}

TEST(MjcfInclude, ErrorsInsideAnIncludedFileNameThatFileAndLine) {
  const std::string dir = TestDir();
  Write(dir + "/main.xml", "<mujoco>\n<worldbody>\n<include file='bad.xml'/>\n</worldbody>\n</mujoco>\n");
  Write(dir + "/bad.xml", "<mujoco>\n  <body>\n    <freejoint/>\n    <geom size='-1'/>\n  </body>\n</mujoco>\n");
  std::string msg = ErrorOf([&] { LoadMjcfFile(dir + "/main.xml"); });
  EXPECT_EQ(msg.rfind(dir + "/bad.xml:4: <geom>: attribute 'size' must be > 0", 0), 0u) << msg;
  EXPECT_NE(msg.find("(in a file included from " + dir + "/main.xml:3)"), std::string::npos) << msg;
  // ... through two includes: the chain, innermost first
  Write(dir + "/mid.xml", "<mujoco>\n<worldbody>\n<include file='bad.xml'/>\n</worldbody>\n</mujoco>\n");
  Write(dir + "/main4.xml", "<mujoco>\n<include file='mid.xml'/>\n</mujoco>\n");
  msg = ErrorOf([&] { LoadMjcfFile(dir + "/main4.xml"); });
  EXPECT_EQ(msg.rfind(dir + "/bad.xml:4: <geom>: attribute 'size' must be > 0", 0), 0u) << msg;
  EXPECT_NE(msg.find("(in a file included from " + dir + "/mid.xml:3, included from " + dir + "/main4.xml:2)"),
            std::string::npos)
      << msg;
  // a file included twice: the error is in the file, the cause the second <include>
  Write(dir + "/cls.xml", "<mujoco>\n<default>\n<default class='arm'><geom size='1'/></default>\n</default>\n</mujoco>\n");
  Write(dir + "/main5.xml", "<mujoco>\n<include file='cls.xml'/>\n<include file='cls.xml'/>\n</mujoco>\n");
  msg = ErrorOf([&] { LoadMjcfFile(dir + "/main5.xml"); });
  EXPECT_NE(msg.find("duplicate default class 'arm' (in a file included from " + dir + "/main5.xml:3)"),
            std::string::npos)
      << msg;

  // an error inherited from a default class written in an included file names it too
  Write(dir + "/defaults.xml", "<mujoco>\n<default>\n  <geom mass='-2'/>\n</default>\n</mujoco>\n");
  Write(dir + "/main2.xml",
        "<mujoco>\n<include file='defaults.xml'/>\n<worldbody>\n<body><freejoint/><geom size='1'/></body>\n"
        "</worldbody>\n</mujoco>\n");
  msg = ErrorOf([&] { LoadMjcfFile(dir + "/main2.xml"); });
  EXPECT_EQ(msg.rfind(dir + "/main2.xml:4: <geom>: attribute 'mass' must be >= 0, got -2", 0), 0u) << msg;
  EXPECT_NE(msg.find("(from default class 'main', " + dir + "/defaults.xml:3)"), std::string::npos)
      << msg;

  // malformed XML in an included file
  Write(dir + "/broken.xml", "<mujoco>\n<worldbody>\n</mujoco>\n");
  Write(dir + "/main3.xml", "<mujoco>\n<include file='broken.xml'/>\n</mujoco>\n");
  msg = ErrorOf([&] { LoadMjcfFile(dir + "/main3.xml"); });
  EXPECT_EQ(msg.rfind(dir + "/broken.xml:3: <xml>: malformed XML", 0), 0u) << msg;
  EXPECT_NE(msg.find("included from " + dir + "/main3.xml:2"), std::string::npos) << msg;
}

TEST(MjcfInclude, DefaultsFromSeveralFilesAddToMain) {
  // MuJoCo 4.0.1 loads this with geom sizes 0.1 (class a, from the included file), 0.2 (class b)
  // and 0.3 (main, from the second top-level <default>)
  const std::string dir = TestDir();
  Write(dir + "/r.xml", "<mujoco>\n<default><geom size='0.5' friction='0.7'/>"
                        "<default class='a'><geom size='0.1'/></default></default>\n</mujoco>\n");
  Write(dir + "/d.xml", R"(<mujoco>
<include file="r.xml"/>
<default><geom size="0.3"/><default class="b"><geom size="0.2"/></default></default>
<worldbody>
  <body><joint/><geom class="a"/></body><body><joint/><geom class="b"/></body><body><joint/><geom/></body>
</worldbody>
</mujoco>
)");
  Model m = LoadMjcfFile(dir + "/d.xml");
  ASSERT_EQ(m.ngeom(), 3);
  EXPECT_NEAR(m.geom_size[0], 0.1, kTol);
  EXPECT_NEAR(m.geom_size[3], 0.2, kTol);
  EXPECT_NEAR(m.geom_size[6], 0.3, kTol);
  EXPECT_NEAR(m.geom_friction[2], 0.7, kTol);  // main's friction from the first <default>
}

TEST(MjcfInclude, MissingFilesAndCyclesNameTheChain) {
  const std::string dir = TestDir();
  Write(dir + "/a.xml", "<mujoco>\n  <include file='b.xml'/>\n</mujoco>\n");
  Write(dir + "/b.xml", "<mujoco>\n\n  <include file='a.xml'/>\n</mujoco>\n");
  std::string msg = ErrorOf([&] { LoadMjcfFile(dir + "/a.xml"); });
  EXPECT_EQ(msg.rfind(dir + "/b.xml:3: <include>: include cycle: " + dir + "/a.xml -> " + dir +
                          "/b.xml -> " + dir + "/a.xml",
                      0),
            0u)
      << msg;

  Write(dir + "/c.xml", "<mujoco>\n  <include file='b2.xml'/>\n</mujoco>\n");
  Write(dir + "/b2.xml", "<mujoco>\n  <include file='nowhere.xml'/>\n</mujoco>\n");
  msg = ErrorOf([&] { LoadMjcfFile(dir + "/c.xml"); });
  EXPECT_EQ(msg.rfind(dir + "/b2.xml:2: <include>: cannot open included file '" + dir +
                          "/nowhere.xml' (include chain: " + dir + "/c.xml -> " + dir + "/b2.xml)",
                      0),
            0u)
      << msg;

  EXPECT_TRUE(FailsAt("<mujoco>\n<include/>\n</mujoco>", 2, "missing required attribute 'file'"));
  EXPECT_TRUE(FailsAt("<mujoco>\n<include file='x.xml'><body/></include>\n</mujoco>", 2,
                      "<include> takes no child elements"));
}

TEST(MjcfInclude, BuiltinScenesIncludeOnlyBuiltinFiles) {
  // panda_pick includes franka_emika_panda/mjx_panda.xml (Menagerie's, unchanged), a built-in file
  Model m = LoadScene("builtin:panda_pick");
  EXPECT_GE(m.BodyId("hand"), 0);
  EXPECT_EQ(m.nequality(), 1);  // the finger coupling
  EXPECT_EQ(m.nactuator(), 8);
  EXPECT_GE(m.BodyId("box_red"), 0);
  // a built-in scene cannot reach the file system
  std::string msg = ErrorOf([] {
    LoadMjcfString("<mujoco>\n<include file='../../etc/passwd'/>\n</mujoco>", "builtin:x");
  });
  EXPECT_EQ(msg.rfind("builtin:x:2: <include>: a built-in scene may include only built-in", 0), 0u)
      << msg;
  msg = ErrorOf([] {
    LoadMjcfString("<mujoco>\n<include file='franka_emika_panda/none.xml'/>\n</mujoco>", "builtin:x");
  });
  EXPECT_NE(msg.find("no built-in file 'franka_emika_panda/none.xml'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("franka_emika_panda/mjx_panda_s2r.xml"), std::string::npos) << msg;
}

// --- <keyframe> ----------------------------------------------------------------------------------

const char* kKeyScene = R"(<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="ball" pos="0 0 1">
      <freejoint name="free"/>
      <inertial pos="0.1 0 0" mass="1" diaginertia="0.1 0.1 0.1"/>
    </body>
    <body name="arm">
      <joint name="hinge" axis="0 1 0"/>
      <geom type="capsule" size="0.05 0.2" mass="1"/>
      <body name="hand">
        <geom size="0.05" mass="0.1"/>
        <body name="slider">
          <joint name="slide" type="slide" axis="1 0 0"/>
          <geom size="0.05" mass="0.1"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="p" joint="hinge" kp="10"/>
    <motor name="m" joint="slide"/>
  </actuator>
)";

TEST(MjcfKeyframe, HomeIsTheInitialState) {
  Model m = Load(std::string(kKeyScene) + R"(
  <keyframe>
    <key name="other" qpos="0 0 2 1 0 0 0 0.3 0.1"/>
    <key name="home" qpos="1 2 3 0 0 0 1 0.5 -0.2" qvel="1 0 0 0 0 2 0.7 0.4" ctrl="0.5 0"/>
  </keyframe>
</mujoco>)");
  // nq: 7 (free) + 1 + 1, the weld of "hand" counts nothing; nv: 6 + 1 + 1
  EXPECT_EQ(m.nq(), 9);
  EXPECT_EQ(m.nv(), 8);
  ASSERT_EQ(m.keyframes.size(), 2u);
  EXPECT_EQ(m.keyframe, "home");
  const int hinge = m.JointId("hinge"), slide = m.JointId("slide"), ball = m.BodyId("ball");
  EXPECT_NEAR(m.joint_qpos0[hinge], 0.5, kTol);
  EXPECT_NEAR(m.joint_qpos0[slide], -0.2, kTol);
  EXPECT_NEAR(m.joint_qvel0[hinge], 0.7, kTol);
  EXPECT_NEAR(m.joint_qvel0[slide], 0.4, kTol);
  EXPECT_NEAR(m.body_pos0[3 * ball + 2], 3, kTol);
  // quaternion (0 0 0 1): 180 degrees about z
  EXPECT_NEAR(m.body_quat0[4 * ball + 3], 1, kTol);
  // qvel: origin velocity (1 0 0) in world axes, angular velocity (0 0 2) in the body frame,
  // rotated 180 degrees about z: still (0 0 2) in the world. s2r starts from the COM velocity:
  // v + w x (R ipos) = (1 0 0) + (0 0 2) x (-0.1 0 0) = (1 -0.2 0)
  EXPECT_NEAR(m.body_linvel0[3 * ball + 0], 1, kTol);
  EXPECT_NEAR(m.body_linvel0[3 * ball + 1], -0.2, kTol);
  EXPECT_NEAR(m.body_angvel0[3 * ball + 2], 2, kTol);
  EXPECT_EQ(m.FindKeyframe("home")->ctrl, (std::vector<double>{0.5, 0}));

  // another key by name; qvel not given keeps what was there
  m.ApplyKeyframe("other");
  EXPECT_NEAR(m.joint_qpos0[hinge], 0.3, kTol);
  EXPECT_NEAR(m.joint_qvel0[hinge], 0.7, kTol);
  EXPECT_NEAR(m.body_pos0[3 * ball + 2], 2, kTol);
  try {
    m.ApplyKeyframe("nope");
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no keyframe named 'nope' (the scene has 'other', 'home')"),
              std::string::npos)
        << e.what();
  }

  // the engine starts there: the hinge at 0.5 rad
  Engine engine(m, EngineOptions{});
  Real q = 0, qdot = 0;
  JointCoordinate(engine.model().View(), engine.state().view, 0, hinge, &q, &qdot);
  EXPECT_NEAR(q, 0.3, 1e-4);
}

TEST(MjcfKeyframe, SizesMustMatchTheModel) {
  const std::string head = std::string(kKeyScene) + "  <keyframe>\n";  // the key is on line 25
  EXPECT_TRUE(FailsAt(head + "<key qpos='0 0 0'/></keyframe></mujoco>", 25,
                      "attribute 'qpos' has 3 numbers; the model has nq = 9"));
  EXPECT_TRUE(FailsAt(head + "<key qvel='0 0 0 0 0 0 0 0 0'/></keyframe></mujoco>", 25,
                      "attribute 'qvel' has 9 numbers; the model has nv = 8"));
  EXPECT_TRUE(FailsAt(head + "<key ctrl='1'/></keyframe></mujoco>", 25,
                      "attribute 'ctrl' has 1 numbers; the model has nu = 2"));
  EXPECT_TRUE(FailsAt(head + "<key act='1'/></keyframe></mujoco>", 25, "no actuator activations"));
  EXPECT_TRUE(FailsAt(head + "<key mpos='1 2 3'/></keyframe></mujoco>", 25, "no mocap bodies"));
  EXPECT_TRUE(FailsAt(head + "<key qpos='0 0 0 0 0 0 0 0 0'/></keyframe></mujoco>", 25,
                      "joint 'free' has a zero quaternion"));
  EXPECT_TRUE(FailsAt(head + "<key name='a'/>\n<key name='a'/></keyframe></mujoco>", 26,
                      "duplicate keyframe name 'a'"));
  EXPECT_TRUE(FailsAt(head + "<frame/></keyframe></mujoco>", 25, "not allowed inside <keyframe>"));
}

// --- <general> actuators and actuator defaults ---------------------------------------------------

const char* kActuatorHead = R"(<mujoco>
  <worldbody>
    <body><joint name="j"/><geom size="0.1"/></body>
  </worldbody>
  <actuator>
)";

TEST(MjcfGeneral, MappedOntoPositionVelocityAndMotor) {
  Model m = Load(std::string(kActuatorHead) + R"(
    <general name="pos" joint="j" biastype="affine" gainprm="4500" biasprm="0 -4500 -450"
             forcerange="-87 87"/>
    <general name="vel" joint="j" biastype="affine" gainprm="30" biasprm="0 0 -30"/>
    <general name="mot" joint="j" gear="2" ctrlrange="-1 1"/>
    <general name="pos0" joint="j" biastype="affine" gainprm="100 0 0 0" biasprm="0 -100"/>
  </actuator>
</mujoco>)");
  ASSERT_EQ(m.nactuator(), 4);
  EXPECT_EQ(m.actuator_type[0], kActuatorPosition);
  EXPECT_NEAR(m.actuator_kp[0], 4500, kTol);
  EXPECT_NEAR(m.actuator_kv[0], 450, kTol);
  EXPECT_NEAR(m.actuator_forcerange[1], 87, kTol);
  EXPECT_EQ(m.actuator_forcelimited[0], 1);
  EXPECT_EQ(m.actuator_type[1], kActuatorVelocity);
  EXPECT_NEAR(m.actuator_kv[1], 30, kTol);
  EXPECT_EQ(m.actuator_type[2], kActuatorMotor);
  EXPECT_NEAR(m.actuator_gear[12], 2, kTol);
  EXPECT_EQ(m.actuator_type[3], kActuatorPosition);
  EXPECT_NEAR(m.actuator_kp[3], 100, kTol);
  EXPECT_NEAR(m.actuator_kv[3], 0, kTol);
}

TEST(MjcfGeneral, ScaledAndOffsetLawsReadTheControlThroughCtrlmap) {
  // force = gain ctrl + b0 + b1 length + b2 velocity with gain != -b1: Menagerie's Robotiq 2F-85
  // (gainprm 0.3137255, biasprm 0 -100 -10) maps 0..255 onto the driver's travel
  Model m = Load(std::string(kActuatorHead) + R"(
    <general name="grip" joint="j" biastype="affine" gainprm="0.3137255" biasprm="0 -100 -10"/>
    <general name="off" joint="j" biastype="affine" gainprm="10" biasprm="1 -10 -1"/>
    <general name="vel" joint="j" biastype="affine" gainprm="6" biasprm="0 0 -3"/>
    <general name="mot" joint="j" gainprm="2" biastype="affine" biasprm="0.5"/>
  </actuator>
</mujoco>)");
  ASSERT_EQ(m.nactuator(), 4);
  EXPECT_EQ(m.actuator_type[0], kActuatorPosition);
  EXPECT_NEAR(m.actuator_kp[0], 100, kTol);
  EXPECT_NEAR(m.actuator_kv[0], 10, kTol);
  EXPECT_NEAR(m.actuator_ctrlmap[0], 0.003137255, 1e-9);  // target per unit control
  EXPECT_NEAR(m.actuator_ctrlmap[1], 0, kTol);
  EXPECT_EQ(m.actuator_type[1], kActuatorPosition);
  EXPECT_NEAR(m.actuator_ctrlmap[2], 1, kTol);
  EXPECT_NEAR(m.actuator_ctrlmap[3], 0.1, kTol);
  EXPECT_EQ(m.actuator_type[2], kActuatorVelocity);
  EXPECT_NEAR(m.actuator_kv[2], 3, kTol);
  EXPECT_NEAR(m.actuator_ctrlmap[4], 2, kTol);
  EXPECT_EQ(m.actuator_type[3], kActuatorMotor);
  EXPECT_NEAR(m.actuator_ctrlmap[6], 2, kTol);
  EXPECT_NEAR(m.actuator_ctrlmap[7], 0.5, kTol);
}

TEST(MjcfGeneral, OtherLawsAreRejectedAtTheirLine) {
  const std::string head(kActuatorHead);  // the actuator is on line 6
  EXPECT_TRUE(FailsAt(head +
                          "<general joint='j' biastype='affine' gainprm='10' biasprm='0 5 -1'/>"
                          "</actuator></mujoco>",
                      6, "the law force = 10 ctrl + 0 + 5 length + -1 velocity is not one s2r has"));
  EXPECT_TRUE(FailsAt(head +
                          "<general joint='j' biastype='affine' gainprm='10' biasprm='0 0 2'/>"
                          "</actuator></mujoco>",
                      6, "is not one s2r has"));
  EXPECT_TRUE(FailsAt(head + "<general joint='j' dyntype='filter' dynprm='0.1'/></actuator></mujoco>",
                      6, "dyntype=\"filter\": s2r actuators have no activation dynamics"));
  EXPECT_TRUE(FailsAt(head + "<general joint='j' gaintype='affine'/></actuator></mujoco>", 6,
                      "gaintype=\"affine\": s2r supports only gaintype=\"fixed\""));
  EXPECT_TRUE(FailsAt(head + "<general tendon='t'/></actuator></mujoco>", 6,
                      "attribute 'tendon' names unknown tendon 't'"));
  EXPECT_TRUE(FailsAt(head + "<general joint='j' tendon='t'/></actuator></mujoco>", 6,
                      "give exactly one of 'joint', 'tendon' and 'site'"));
}

TEST(MjcfGeneral, SeveralActuatorKindsInOneDefaultClass) {
  // Menagerie's MJX Panda: one class with a <general> and a <position> default. As in MuJoCo they
  // write one actuator default in document order: forcerange -100 100 (the later <position>)
  // wins over -87 87, ctrlrange comes from <general>; gains only from defaults of the same kind.
  Model m = Load(R"(<mujoco>
  <default>
    <default class="panda">
      <general dyntype="none" biastype="affine" ctrlrange="-2 2" forcerange="-87 87"
               gainprm="7" biasprm="0 -7 -1"/>
      <position forcerange="-100 100" kv="3"/>
    </default>
  </default>
  <worldbody>
    <body><joint name="j"/><geom size="0.1"/></body>
  </worldbody>
  <actuator>
    <position class="panda" name="a1" joint="j" kp="1000"/>
    <general class="panda" name="a2" joint="j" forcerange="-200 200"/>
    <general class="panda" name="a3" joint="j" gainprm="350" biasprm="0 -350 -10"/>
  </actuator>
</mujoco>)");
  ASSERT_EQ(m.nactuator(), 3);
  EXPECT_NEAR(m.actuator_kp[0], 1000, kTol);
  EXPECT_NEAR(m.actuator_kv[0], 3, kTol);
  EXPECT_NEAR(m.actuator_forcerange[0], -100, kTol);
  EXPECT_NEAR(m.actuator_ctrlrange[0], -2, kTol);
  EXPECT_EQ(m.actuator_type[1], kActuatorPosition);
  EXPECT_NEAR(m.actuator_kp[1], 7, kTol);
  EXPECT_NEAR(m.actuator_kv[1], 1, kTol);
  EXPECT_NEAR(m.actuator_forcerange[2], -200, kTol);
  EXPECT_NEAR(m.actuator_kp[2], 350, kTol);
  EXPECT_NEAR(m.actuator_kv[2], 10, kTol);
  EXPECT_NEAR(m.actuator_forcerange[4], -100, kTol);
}

// --- <option>, <size>, sections ------------------------------------------------------------------

TEST(MjcfOption, MuJoCoSolverSettingsAreNotedAndFluidsRejected) {
  Model m = Load(R"(<mujoco>
  <size memory="10M" njmax="100"/>
  <statistic center="0 0 1" extent="2"/>
  <option timestep="0.005" iterations="5" ls_iterations="8" integrator="implicitfast"
          cone="elliptic" impratio="10" noslip_iterations="3" density="0" viscosity="0">
    <flag eulerdamp="disable" warmstart="enable"/>
  </option>
  <sensor><jointpos joint="j"/></sensor>
  <worldbody><body><joint name="j"/><geom size="0.1"/></body></worldbody>
</mujoco>)");
  EXPECT_NEAR(m.timestep, 0.005, kTol);
  EXPECT_TRUE(HasNote(m, "test.xml:4: <option>: attribute 'iterations' is not used"));
  EXPECT_TRUE(HasNote(m, "attribute 'integrator' is not used"));
  EXPECT_TRUE(HasNote(m, "attribute 'impratio' is not used"));
  EXPECT_TRUE(HasNote(m, "test.xml:6: <flag>: flag eulerdamp=\"disable\" is not used"));
  EXPECT_FALSE(HasNote(m, "warmstart"));  // its default
  EXPECT_TRUE(HasNote(m, "test.xml:8: <sensor>: <sensor> is not simulated"));

  // gravity disabled: mapped to zero gravity
  Model g = Load("<mujoco><option gravity='0 0 -3'><flag gravity='disable'/></option></mujoco>");
  EXPECT_EQ(g.gravity[2], 0);

  EXPECT_TRUE(FailsAt("<mujoco>\n<option density='1.2'/>\n</mujoco>", 2,
                      "attribute 'density' = 1.2: s2r has no fluid (drag) forces"));
  EXPECT_TRUE(FailsAt("<mujoco>\n<option viscosity='0.1'/>\n</mujoco>", 2, "no fluid (drag) forces"));
  EXPECT_TRUE(FailsAt("<mujoco>\n<option><flag limit='disable'/></option>\n</mujoco>", 2,
                      "flag limit=\"disable\" would change the dynamics"));
  EXPECT_TRUE(FailsAt("<mujoco>\n<option><flag override='enable'/></option>\n</mujoco>", 2,
                      "flag override=\"enable\""));
  EXPECT_TRUE(FailsAt("<mujoco>\n<option integrator='RK5'/>\n</mujoco>", 2,
                      "must be one of Euler|RK4|implicit|implicitfast"));
  EXPECT_TRUE(FailsAt("<mujoco>\n<size nfoo='1'/>\n</mujoco>", 2, "unknown attribute 'nfoo'"));
}

TEST(MjcfSections, PairIsRejectedAtItsLine) {
  EXPECT_TRUE(FailsAt("<mujoco>\n<contact>\n<pair geom1='a' geom2='b'/></contact>\n</mujoco>", 3,
                      "<pair> is not supported by s2r"));
}

// --- equality and tendon (kernels/solver_coupling.h) ----------------------------------------------

// two fingers on slides below a hinged palm (one articulated tree), then `tail` (equality, tendon,
// actuator sections) from line 10 on
std::string Gripper(const std::string& tail) {
  return "<mujoco>\n<worldbody>\n<body name='palm'><joint name='wrist' axis='0 0 1'/>"
         "<geom size='0.05' mass='1'/>\n"
         "<body name='left'><joint name='a' type='slide' axis='0 1 0' range='0 0.04'/>"
         "<geom type='box' size='0.01 0.01 0.02' mass='0.1'/></body>\n"
         "<body name='right'><joint name='b' type='slide' axis='0 -1 0' range='0 0.04'/>"
         "<geom type='box' size='0.01 0.01 0.02' mass='0.1'/></body>\n"
         "</body>\n"
         "<body name='free'><freejoint/><geom size='0.1'/></body>\n"
         "<body name='loose'><joint name='c' type='slide'/><geom size='0.01'/></body>\n"
         "</worldbody>\n" +
         tail + "</mujoco>\n";
}

TEST(MjcfEquality, JointCouplingIsRead) {
  Model m = Load(Gripper("<default><equality solref='0.01 0.5'/></default>\n"
                         "<equality><joint name='couple' joint1='b' joint2='a' polycoef='0.001 2' "
                         "solimp='0.9 0.95 0.001'/>\n<joint joint1='c' active='false'/></equality>\n"));
  ASSERT_EQ(m.nequality(), 2);
  EXPECT_EQ(m.equality_joint[0], m.JointId("b"));
  EXPECT_EQ(m.equality_joint[1], m.JointId("a"));
  EXPECT_EQ(m.equality_joint[3], -1);
  // MuJoCo's partial polycoef: the given leading numbers over the default 0 1 0 0 0
  const std::vector<Real> want = {Real(0.001), 2, 0, 0, 0};
  for (int k = 0; k < 5; ++k) EXPECT_NEAR(m.equality_polycoef[k], want[k], 1e-7) << k;
  EXPECT_NEAR(m.equality_polycoef[5 + 1], 1, 1e-7);  // the second: the default
  EXPECT_NEAR(m.equality_solref[0], 0.01, 1e-7);      // from the default class
  EXPECT_NEAR(m.equality_solref[1], 0.5, 1e-7);
  EXPECT_EQ(m.equality_active[0], 1);
  EXPECT_EQ(m.equality_active[1], 0);
  EXPECT_TRUE(HasNote(m, "attribute 'solimp' is not used"));
  // the coupled slide trees are stepped as articulated trees
  EXPECT_GE(m.body_tree[m.BodyId("left")], 0);
  EXPECT_GE(m.body_tree[m.BodyId("loose")], 0);
}

// MuJoCo's weld: body1's point and body2's orientation in body1's frame from relpose when its
// quaternion is given, else from the reference configuration (anchor: the point in body2's
// frame); with sites, the sites' points and frames
TEST(MjcfEquality, WeldIsRead) {
  Model m = Load(Gripper("<equality><weld name='w1' body1='left' body2='loose' anchor='0.1 0 0'/>\n"
                         "<weld body1='left' relpose='0.01 0.02 0.03 0 0 0 2' torquescale='0.5'/>\n"
                         "</equality>\n"));
  ASSERT_EQ(m.nequality(), 2);
  EXPECT_EQ(m.equality_type[0], kEqualityWeld);
  EXPECT_EQ(m.equality_body[0], m.BodyId("left"));
  EXPECT_EQ(m.equality_body[1], m.BodyId("loose"));
  EXPECT_EQ(m.equality_body[3], 0);  // body2 absent: the world
  // reference configuration: anchor2 is the given point; anchor1 the same world point in left's
  // frame; relquat left^-1 loose (both unrotated here: identity)
  const int l = m.BodyId("left"), o = m.BodyId("loose");
  for (int k = 0; k < 3; ++k) {
    const Real world = m.body_pos0[3 * o + k] + (k == 0 ? Real(0.1) : Real(0));
    EXPECT_NEAR(m.equality_anchor[3 + k], k == 0 ? 0.1 : 0, 1e-7) << k;
    EXPECT_NEAR(m.equality_anchor[k], world - m.body_pos0[3 * l + k], 1e-6) << k;
  }
  EXPECT_NEAR(m.equality_relquat[0], 1, 1e-7);
  EXPECT_NEAR(m.equality_torquescale[0], 1, 1e-7);
  // relpose given: its point, its quaternion normalized (0 0 0 2 -> a half turn about z)
  EXPECT_NEAR(m.equality_anchor[6 + 0], 0.01, 1e-7);
  EXPECT_NEAR(m.equality_anchor[6 + 2], 0.03, 1e-7);
  EXPECT_NEAR(m.equality_relquat[4 + 0], 0, 1e-7);
  EXPECT_NEAR(m.equality_relquat[4 + 3], 1, 1e-7);
  EXPECT_NEAR(m.equality_torquescale[1], 0.5, 1e-7);
  EXPECT_GE(m.body_tree[l], 0);
  EXPECT_GE(m.body_tree[o], 0);
}

TEST(MjcfEquality, ErrorsNameFileLineAndKey) {
  EXPECT_TRUE(FailsAt(Gripper("<equality>\n<joint joint1='a' joint2='nope'/></equality>\n"), 11,
                      "attribute 'joint2' names unknown joint 'nope'"));
  EXPECT_TRUE(FailsAt(Gripper("<equality>\n<joint joint2='a'/></equality>\n"), 11,
                      "missing required attribute 'joint1'"));
  EXPECT_TRUE(FailsAt(Gripper("<equality>\n<joint joint1='a' joint2='b' polycoef='0 1 0 0 0 0'/>"
                              "</equality>\n"),
                      11, "attribute 'polycoef' needs 1 to 5 numbers, got 6"));
  EXPECT_TRUE(FailsAt(Gripper("<equality>\n<joint joint1='a' joint2='a'/></equality>\n"), 11,
                      "joint1 and joint2 are the same joint"));
  EXPECT_TRUE(FailsAt(Gripper("<equality>\n<joint joint1='a' joint2='b' solref='-100 -10'/>"
                              "</equality>\n"),
                      11, "both > 0"));
  EXPECT_TRUE(FailsAt(Gripper("<equality>\n<connect body1='left' body2='nope' anchor='0 0 0'/>"
                              "</equality>\n"),
                      11, "attribute 'body2' names unknown body 'nope'"));
  EXPECT_TRUE(FailsAt(Gripper("<equality>\n<connect body1='left'/></equality>\n"), 11,
                      "missing required attribute 'anchor'"));
  EXPECT_TRUE(FailsAt(Gripper("<equality>\n<connect body1='left' site1='s' anchor='0 0 0'/>"
                              "</equality>\n"),
                      11, "a connect names either body1 (and body2) with anchor, or site1 and site2"));
  EXPECT_TRUE(FailsAt(Gripper("<equality>\n<connect body1='left' body2='left' anchor='0 0 0'/>"
                              "</equality>\n"),
                      11, "a connect joins two different bodies"));
  // a free body the trees do not take (s2r_reduce_trees 0; otherwise a connect or weld naming it
  // makes it a floating base): the model's check, at the connect's line
  EXPECT_TRUE(FailsAt(Gripper("<custom><numeric name='s2r_reduce_trees' data='0'/></custom>\n"
                              "<equality>\n<connect body1='free' body2='left' anchor='0 0 0'/>"
                              "</equality>\n"),
                      12, "connect '': body 'free' is not a body of a reduced-coordinate tree"));
  EXPECT_TRUE(FailsAt(Gripper("<equality>\n<tendon tendon1='t'/></equality>\n"), 11,
                      "<equality><tendon> is not supported by s2r"));
  EXPECT_TRUE(FailsAt(Gripper("<equality>\n<weld body1='left' body2='nope'/></equality>\n"), 11,
                      "attribute 'body2' names unknown body 'nope'"));
  EXPECT_TRUE(FailsAt(Gripper("<equality>\n<weld body1='left' torquescale='-1'/></equality>\n"), 11,
                      "attribute 'torquescale' = -1: must be >= 0"));
  EXPECT_TRUE(FailsAt(Gripper("<equality>\n<weld site1='s' site2='s' relpose='0 0 0 1 0 0 0'/>"
                              "</equality>\n"),
                      11, "attribute 'relpose' is for a weld by body1 and body2"));
  EXPECT_TRUE(FailsAt(Gripper("<equality>\n<weld body1='left' relpose='0 0 0 1 0 0'/></equality>\n"),
                      11, "attribute 'relpose' needs 7 numbers, got 6"));
  EXPECT_TRUE(FailsAt(Gripper("<custom><numeric name='s2r_reduce_trees' data='0'/></custom>\n"
                              "<equality>\n<weld body1='free' body2='left'/></equality>\n"),
                      12, "weld '': body 'free' is not a body of a reduced-coordinate tree"));
  // a joint in maximal coordinates: the trees are turned off, or too big
  EXPECT_TRUE(FailsAt(Gripper("<custom><numeric name='s2r_reduce_trees' data='0'/></custom>\n"
                              "<equality>\n<joint joint1='a' joint2='b'/></equality>\n"),
                      12, "joint 'a' is stepped in maximal coordinates"));
}

TEST(MjcfTendon, FixedTendonAndTendonActuatorsAreRead) {
  Model m = Load(Gripper("<tendon><fixed name='split'><joint joint='a' coef='0.5'/>"
                         "<joint joint='b' coef='0.5'/></fixed></tendon>\n"
                         "<actuator><position name='grip' tendon='split' kp='100' kv='10'/>"
                         "<motor name='push' tendon='split'/></actuator>\n"));
  ASSERT_EQ(m.ntendon(), 1);
  EXPECT_EQ(m.tendon_name[0], "split");
  EXPECT_EQ(m.tendon_wrap, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(m.wrap_joint, (std::vector<int32_t>{m.JointId("a"), m.JointId("b")}));
  EXPECT_NEAR(m.wrap_coef[1], 0.5, 1e-7);
  const int grip = m.ActuatorId("grip"), push = m.ActuatorId("push");
  EXPECT_EQ(m.actuator_trntype[grip], kTransmissionTendon);
  EXPECT_EQ(m.actuator_trnid[grip], 0);
  EXPECT_EQ(m.tendon_actuator[0], grip);  // the servo is the tendon's implicit row
  EXPECT_EQ(m.actuator_trntype[push], kTransmissionTendon);
}

TEST(MjcfTendon, ErrorsNameFileLineAndKey) {
  EXPECT_TRUE(FailsAt(Gripper("<tendon>\n<spatial name='s'><site site='x'/></spatial></tendon>\n"), 11,
                      "<tendon><spatial> is not supported by s2r"));
  EXPECT_TRUE(FailsAt(Gripper("<tendon><fixed name='t'>\n<joint joint='zz' coef='1'/></fixed></tendon>\n"),
                      11, "attribute 'joint' names unknown joint 'zz'"));
  EXPECT_TRUE(FailsAt(Gripper("<tendon><fixed name='t'>\n<joint joint='a'/></fixed></tendon>\n"), 11,
                      "missing required attribute 'coef'"));
  EXPECT_TRUE(FailsAt(Gripper("<tendon>\n<fixed name='t' range='0 1'><joint joint='a' coef='1'/>"
                              "</fixed></tendon>\n"),
                      11, "s2r has no tendon limits"));
  EXPECT_TRUE(FailsAt(Gripper("<tendon>\n<fixed name='t' stiffness='5'><joint joint='a' coef='1'/>"
                              "</fixed></tendon>\n"),
                      11, "attribute 'stiffness' = 5"));
  EXPECT_TRUE(FailsAt(Gripper("<tendon>\n<fixed name='t'/></tendon>\n"), 11,
                      "a fixed tendon needs at least one <joint> term"));
  EXPECT_TRUE(FailsAt(Gripper("<tendon><fixed name='t'><joint joint='a' coef='1'/>\n"
                              "<joint joint='a' coef='2'/></fixed></tendon>\n"),
                      11, "joint 'a' is already a term of this tendon"));
  EXPECT_TRUE(FailsAt(Gripper("<actuator>\n<position tendon='nope'/></actuator>\n"), 11,
                      "attribute 'tendon' names unknown tendon 'nope'"));
  EXPECT_TRUE(FailsAt(Gripper("<custom><numeric name='s2r_reduce_trees' data='0'/></custom>\n"
                              "<tendon>\n<fixed name='t'><joint joint='a' coef='1'/></fixed></tendon>\n"),
                      12, "joint 'a' is stepped in maximal coordinates"));
}

// --- geoms, joints, bodies -----------------------------------------------------------------------

TEST(MjcfGeom, VisualOnlyGeomsAreSkippedWithANote) {
  Model m = Load(R"(<mujoco>
  <default>
    <default class="visual"><geom type="mesh" contype="0" conaffinity="0" group="2"/></default>
  </default>
  <worldbody>
    <geom class="visual" mesh="table"/>
    <body name="link">
      <joint/>
      <inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/>
      <geom class="visual" mesh="link_0"/>
      <geom class="visual" mesh="link_1"/>
      <geom name="pad" type="box" size="0.1 0.1 0.1" contype="0" conaffinity="0"/>
      <geom type="cylinder" size="0.1 0.2" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>)");
  // only the box is kept (it is a shape s2r simulates, even if it does not collide)
  ASSERT_EQ(m.ngeom(), 1);
  EXPECT_EQ(m.geom_name[0], "pad");
  EXPECT_NEAR(m.body_mass[1], 1, kTol);  // the <inertial>, untouched
  EXPECT_TRUE(HasNote(m, "test.xml:6: <geom>: visual-only mesh geom skipped"));
  EXPECT_TRUE(HasNote(m, "(3 times)"));
  EXPECT_TRUE(HasNote(m, "visual-only cylinder geom skipped"));

  // a mesh that collides, or one whose body takes its mass from its geoms, is simulated: it needs
  // its mesh asset
  EXPECT_TRUE(FailsAt(R"(<mujoco><worldbody>
  <geom type="mesh" mesh="m"/>
</worldbody></mujoco>)",
                      2, "attribute 'mesh' names no mesh asset"));
  EXPECT_TRUE(FailsAt(R"(<mujoco><worldbody><body><freejoint/>
  <geom type="mesh" mesh="m" contype="0" conaffinity="0"/><geom size="1"/>
</body></worldbody></mujoco>)",
                      2, "attribute 'mesh' names no mesh asset"));
  EXPECT_TRUE(FailsAt(R"(<mujoco><worldbody>
  <geom type="hfield" size="1 1 1"/>
</worldbody></mujoco>)",
                      2, "geom type 'hfield' is not supported by s2r"));
  EXPECT_TRUE(FailsAt(R"(<mujoco><worldbody>
  <geom type="box" size="1 1 1" mesh="m"/>
</worldbody></mujoco>)",
                      2, "a primitive fitted to a mesh"));
}

TEST(MjcfGeom, ContactAttributesMappedNotedOrRejected) {
  Model m = Load(R"(<mujoco><worldbody>
  <body name="b"><freejoint/>
    <geom name="a" size="0.1" condim="1" friction="0.7"/>
    <geom name="c" size="0.1" condim="4" solref="0.01 1" solimp="0.9 0.95 0.001" margin="0.01"
          gap="0" priority="1"/>
    <geom name="massless" size="0.1" mass="0"/>
  </body>
</worldbody></mujoco>)");
  EXPECT_NEAR(m.geom_friction[0], 0, kTol);    // condim 1: frictionless
  EXPECT_NEAR(m.geom_friction[1], 1, kTol);
  // mass from the two density geoms only; the mass="0" geom adds none
  EXPECT_NEAR(m.body_mass[1], 2 * 1000 * 4.0 / 3.0 * M_PI * 0.001, 1e-4);
  EXPECT_TRUE(HasNote(m, "test.xml:4: <geom name='c'>: condim=4: s2r models sliding friction only"));
  // solref / solimp: the geom's own contact frequency, sqrt(d / (1 - d)) / (d tc zeta) / (2 pi)
  // with d = solimp[1] = 0.95 (36.5 Hz); the others have none (0: the scene's s2r_contact_hertz)
  EXPECT_NEAR(m.geom_contact_hertz[1], std::sqrt(19.0) / (0.95 * 0.01) / (2 * M_PI), 1e-3);
  EXPECT_NEAR(m.geom_contact_hertz[0], 0, kTol);
  EXPECT_TRUE(HasNote(m, "solref / solimp are mapped onto the geom's contact frequency"));
  EXPECT_TRUE(HasNote(m, "attribute 'margin' is not used"));
  EXPECT_TRUE(HasNote(m, "attribute 'priority' is not used"));
}

TEST(MjcfJoint, SpringsAndReferencesAreRead) {
  const std::string head = "<mujoco><worldbody><body>\n";
  const std::string tail = "<geom size='1'/></body></worldbody></mujoco>";
  // a spring: stiffness and springref, in <compiler angle> units (degrees by default) for a hinge
  Model spring = Load(head + "<joint stiffness='10' springref='90'/>" + tail);
  EXPECT_NEAR(spring.joint_stiffness[0], 10, kTol);
  EXPECT_NEAR(spring.joint_springref[0], M_PI / 2, 1e-6);
  EXPECT_GE(spring.body_tree[1], 0);
  EXPECT_TRUE(FailsAt(head + "<joint stiffness='-1'/>" + tail, 2, "attribute 'stiffness' must be >= 0"));
  // springs act in the joint space of reduced-coordinate trees
  EXPECT_TRUE(FailsAt("<mujoco><custom><numeric name='s2r_reduce_trees' data='0'/></custom>"
                      "<worldbody><body>\n<joint name='j' stiffness='10'/>" + tail,
                      2, "joint 'j' has a stiffness, which acts only on joints of reduced-coordinate trees"));
  EXPECT_TRUE(FailsAt(head + "<joint ref='0.1'/>" + tail, 2, "no reference offset"));
  // a ball's spring rests at the reference orientation (MjcfLoadErrors.BallJointRules has the
  // rest of a ball's rules)
  EXPECT_TRUE(FailsAt(head + "<joint type='ball' stiffness='1' springref='1'/>" + tail, 2, "springref is for hinges"));
  EXPECT_TRUE(FailsAt(head + "<joint actuatorfrcrange='-1 1'/>" + tail, 2,
                      "joint-level actuator force limit"));
  // limit softness: MuJoCo's solreflimit / solimplimit as the limit's natural frequency,
  // sqrt(d / (1 - d)) / (d tc zeta) / (2 pi) with d = dmax (the Robotiq 2F-85's 0.005 1 and
  // 0.95 0.99: 320 Hz); without them the joint has none of its own (0: s2r_joint_hertz)
  Model m = Load(head + "<joint solreflimit='0.005 1' solimplimit='0.95 0.99 0.001' margin='0.01'/>" + tail);
  EXPECT_NEAR(m.joint_limit_hertz[0], std::sqrt(99.0) / (0.99 * 0.005) / (2 * M_PI), 1e-3);
  EXPECT_TRUE(HasNote(m, "solreflimit / solimplimit are mapped onto the limit's natural frequency"));
  EXPECT_TRUE(HasNote(m, "attribute 'margin' is not used"));
  EXPECT_NEAR(Load(head + "<joint/>" + tail).joint_limit_hertz[0], 0, kTol);
  EXPECT_TRUE(FailsAt(head + "<joint solreflimit='-100 -10'/>" + tail, 2,
                      "attribute 'solreflimit' must be two numbers > 0"));
}

TEST(MjcfBody, MasslessWeldedBodyIsMergedIntoItsParent) {
  // "attachment" has no joint and no mass below a moving body: merged into "link" (MuJoCo welds
  // it to the same rigid body), its site and massless geom in link's frame, its child hung from link
  Model m = Load(R"(<mujoco>
  <compiler angle="degree"/>
  <worldbody>
    <body name="link" pos="0 0 1">
      <joint name="j" axis="0 1 0"/>
      <geom type="capsule" size="0.05 0.2" mass="2"/>
      <body name="attachment" pos="0 0 0.5" euler="0 0 90">
        <site name="tool" pos="0.1 0 0"/>
        <geom name="marker" size="0.01" density="0" contype="0" conaffinity="0"/>
        <body name="finger" pos="0.2 0 0">
          <joint name="f" type="slide" axis="1 0 0"/>
          <geom size="0.02" mass="0.1"/>
        </body>
      </body>
    </body>
  </worldbody>
  <contact><exclude body1="attachment" body2="finger"/></contact>
</mujoco>)");
  ASSERT_EQ(m.nbody(), 3);  // world, link, finger
  const int link = m.BodyId("link"), finger = m.BodyId("finger");
  EXPECT_EQ(m.BodyId("attachment"), -1);
  EXPECT_EQ(m.body_parent[finger], link);
  EXPECT_NEAR(m.body_mass[link], 2, kTol);
  // the site: attachment frame (0 0 0.5, 90 deg about z) applied to (0.1 0 0) -> (0 0.1 0.5)
  const int tool = m.SiteId("tool");
  EXPECT_EQ(m.site_body[tool], link);
  EXPECT_NEAR(m.site_pos[3 * tool + 0], 0, kTol);
  EXPECT_NEAR(m.site_pos[3 * tool + 1], 0.1, kTol);
  EXPECT_NEAR(m.site_pos[3 * tool + 2], 0.5, kTol);
  const int marker = m.GeomId("marker");
  EXPECT_EQ(m.geom_body[marker], link);
  EXPECT_NEAR(m.geom_pos[3 * marker + 2], 0.5, kTol);
  EXPECT_NEAR(m.geom_quat[4 * marker + 3], std::sqrt(0.5), kTol);  // 90 deg about z
  // the finger: world origin (0 0 1) + (0 0 0.5) + Rz(90) (0.2 0 0) = (0 0.2 1.5)
  EXPECT_NEAR(m.body_pos0[3 * finger + 1], 0.2, kTol);
  EXPECT_NEAR(m.body_pos0[3 * finger + 2], 1.5, kTol);
  ASSERT_EQ(m.exclude_body_pairs.size(), 1u);
  EXPECT_EQ(m.exclude_body_pairs[0].first, link);
  EXPECT_TRUE(HasNote(m, "test.xml:7: <body name='attachment'>: massless body welded to moving "
                         "body 'link': merged into it"));

  // a massless body with a joint is still an error
  EXPECT_TRUE(FailsAt(R"(<mujoco><worldbody><body><joint/><geom size="1"/>
<body><joint/><site/></body></body></worldbody></mujoco>)",
                      2, "no <inertial> and no geom with mass"));
}

TEST(MjcfBody, GravcompCancelsGravityOnEveryKindOfBody) {
  // a free body, a hinge pendulum and a slide tree (reduced coordinates) with gravcomp 1 stay
  // where they start; a free body with gravcomp 0.5 falls at g / 2
  Model m = Load(R"(<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <body name="float" pos="0 0 1" gravcomp="1"><freejoint/><geom size="0.1"/></body>
    <body name="half" pos="1 0 1" gravcomp="0.5"><freejoint/><geom size="0.1"/></body>
    <body name="pendulum" pos="2 0 1" gravcomp="1">
      <joint name="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
    </body>
    <body name="carriage" pos="3 0 1" gravcomp="1">
      <joint name="slide" type="slide" axis="0 0 1"/>
      <geom type="box" size="0.05 0.05 0.05"/>
    </body>
  </worldbody>
</mujoco>)");
  EXPECT_NEAR(m.body_gravcomp[m.BodyId("half")], 0.5, kTol);
  ASSERT_GE(m.body_reduced[m.BodyId("carriage")], 0) << "the slide should be a reduced tree";
  Engine engine(m, EngineOptions{});
  const double t = 0.5;
  const int steps = static_cast<int>(std::lround(t * engine.model().control_hz));
  for (int k = 0; k < steps; ++k) engine.Step(nullptr);
  engine.Download();
  const StateView& v = engine.state().view;
  for (const char* b : {"float", "pendulum", "carriage"}) {
    const int id = m.BodyId(b);
    EXPECT_NEAR(v.body_pos(0, id)[2], 1.0, 1e-4) << b;
  }
  Real q = 0, qdot = 0;
  JointCoordinate(engine.model().View(), v, 0, m.JointId("hinge"), &q, &qdot);
  EXPECT_NEAR(q, 0, 1e-3);
  // g / 2 for 0.5 s: semi-implicit Euler over n substeps of h falls g/2 h^2 n (n + 1) / 2 =
  // 0.613 m (+ h / t). Nothing here touches, so every step runs substeps_no_contact = 1 substep
  // (docs/physics.md, Substeps): h = 2 ms, +0.4 % (2.45 mm); at 4 substeps it was +0.1 %.
  ASSERT_EQ(m.substeps_no_contact, 1);
  const double h = m.timestep, n = std::round(t / h);
  EXPECT_NEAR(1.0 - v.body_pos(0, m.BodyId("half"))[2], 0.5 * 4.905 * h * h * n * (n + 1), 1e-4);
  EXPECT_NEAR(1.0 - v.body_pos(0, m.BodyId("half"))[2], 0.5 * 4.905 * t * t, 3e-3);
  EXPECT_TRUE(FailsAt("<mujoco><worldbody>\n<body gravcomp='-1'><joint/><geom size='1'/></body>"
                      "</worldbody></mujoco>",
                      2, "attribute 'gravcomp' must be >= 0"));
}

// --- Menagerie's MJX Panda -----------------------------------------------------------------------

TEST(MjcfRobots, MenagerieMjxPandaLoadsUnchanged) {
  // the original, with its <equality> and one gripper actuator, on a floor at "home"
  Model u = LoadMjcfFile(RobotPath("franka_emika_panda/scene_mjx.xml"));
  EXPECT_EQ(u.nactuator(), 8);
  ASSERT_EQ(u.nequality(), 1);
  EXPECT_EQ(u.equality_joint[0], u.JointId("finger_joint1"));
  EXPECT_EQ(u.equality_joint[1], u.JointId("finger_joint2"));
  EXPECT_NEAR(u.equality_solref[0], 0.005, 1e-7);
  EXPECT_EQ(u.ntree(), 10);  // link1..7, the welded hand and both fingers

  Model m = LoadMjcfFile(RobotPath("franka_emika_panda/scene_s2r.xml"));
  EXPECT_EQ(m.nq(), 9);
  EXPECT_EQ(m.nv(), 9);
  EXPECT_EQ(m.nactuator(), 9);
  EXPECT_EQ(m.nbody(), 12);  // world, link0..7, hand, two fingers
  // masses from Menagerie's <inertial> elements; the visual and collision meshes are skipped
  EXPECT_NEAR(m.body_mass[m.BodyId("link1")], 4.970684, 1e-5);
  EXPECT_NEAR(m.body_mass[m.BodyId("hand")], 0.73, 1e-6);
  EXPECT_EQ(m.body_joint[m.BodyId("hand")] >= 0 ? m.joint_type[m.body_joint[m.BodyId("hand")]] : -1,
            kJointWeld);
  EXPECT_TRUE(HasNote(m, "visual-only mesh geom skipped"));
  // 8 boxes (4 pads per finger), the hand capsule and the floor
  EXPECT_EQ(m.ngeom(), 10);
  // joint ranges: the class default and the joint's own
  EXPECT_NEAR(m.joint_range[2 * m.JointId("joint1") + 1], 2.8973, 1e-6);
  EXPECT_NEAR(m.joint_range[2 * m.JointId("joint4")], -3.0718, 1e-6);
  EXPECT_NEAR(m.joint_range[2 * m.JointId("finger_joint1") + 1], 0.04, 1e-7);
  EXPECT_NEAR(m.joint_armature[m.JointId("joint1")], 0.1, 1e-7);
  EXPECT_NEAR(m.joint_damping[m.JointId("joint1")], 40, 1e-5);
  // actuators: forcerange from the class's <position> default, gains from each element
  const int a1 = m.ActuatorId("actuator1"), a7 = m.ActuatorId("actuator7");
  const int a8 = m.ActuatorId("actuator8"), a9 = m.ActuatorId("actuator9");
  EXPECT_NEAR(m.actuator_kp[a1], 1000, kTol);
  EXPECT_NEAR(m.actuator_kv[a1], 20, kTol);
  EXPECT_NEAR(m.actuator_forcerange[2 * a1], -100, kTol);
  EXPECT_NEAR(m.actuator_forcerange[2 * a7 + 1], 12, kTol);
  EXPECT_NEAR(m.actuator_ctrlrange[2 * a7 + 1], 2.8973, 1e-6);  // the <general> default's
  EXPECT_EQ(m.actuator_type[a8], kActuatorPosition);
  EXPECT_NEAR(m.actuator_kp[a8], 350, kTol);
  EXPECT_NEAR(m.actuator_kv[a8], 10, kTol);
  EXPECT_NEAR(m.actuator_forcerange[2 * a8 + 1], 200, kTol);
  EXPECT_EQ(m.actuator_trnid[a9], m.JointId("finger_joint2"));
  // the keyframe "home"
  EXPECT_EQ(m.keyframe, "home");
  EXPECT_NEAR(m.joint_qpos0[m.JointId("joint4")], -1.57079, 1e-6);
  EXPECT_NEAR(m.joint_qpos0[m.JointId("finger_joint2")], 0.04, 1e-7);
}

TEST(MjcfRobots, PandaPickBoxesRestOnTheTable) {
  // builtin:panda_pick: the arm holds "home" above the table; the boxes stay where they lie
  // (table top z = 0.2 m; box centres at their half height above it) within 1 mm over 1 s
  Model model = LoadScene("builtin:panda_pick");
  EXPECT_EQ(model.nq(), 9 + 3 * 7);
  const Model::Keyframe* home = model.FindKeyframe("home");
  ASSERT_NE(home, nullptr);
  Engine engine(model, EngineOptions{});
  std::vector<Real> ctrl(home->ctrl.begin(), home->ctrl.end());
  for (int k = 0; k < static_cast<int>(engine.model().control_hz); ++k) engine.Step(ctrl.data());
  engine.Download();
  ASSERT_EQ(engine.state().status[0], kWorldOk);
  const Model& m = engine.model();
  for (const char* box : {"box_red", "box_green", "box_blue"}) {
    const int b = m.BodyId(box);
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(engine.state().view.body_pos(0, b)[k], m.body_pos0[3 * b + k], 1e-3)
          << box << " axis " << k;
    }
  }
}

TEST(MjcfRobots, PandaHoldsHome) {
  // 0.5 s from "home" with the key's controls: every joint stays within its gravity sag of home
  // (the servos give way by gravity torque / kp; MuJoCo shows the same, tests/python/
  // test_robot_models.py compares the two): 0.1 rad, and the fingers within 1 mm
  Model model = LoadScene("builtin:franka_emika_panda/scene_s2r");
  const Model::Keyframe* home = model.FindKeyframe("home");
  ASSERT_NE(home, nullptr);
  Engine engine(model, EngineOptions{});
  std::vector<Real> ctrl(home->ctrl.begin(), home->ctrl.end());
  const int steps = static_cast<int>(std::lround(0.5 * engine.model().control_hz));
  for (int k = 0; k < steps; ++k) engine.Step(ctrl.data());
  engine.Download();
  ASSERT_EQ(engine.state().status[0], kWorldOk);
  const Model& m = engine.model();
  for (int j = 0; j < m.njoint(); ++j) {
    if (m.joint_type[j] == kJointWeld) continue;
    Real q = 0, qdot = 0;
    JointCoordinate(m.View(), engine.state().view, 0, j, &q, &qdot);
    const double tol = m.joint_type[j] == kJointSlide ? 1e-3 : 0.1;
    EXPECT_NEAR(q, m.joint_qpos0[j], tol) << m.joint_name[j];
  }
}

}  // namespace
}  // namespace s2r
