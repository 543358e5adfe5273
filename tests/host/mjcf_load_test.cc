// Tests of the MJCF subset loader (host/mjcf_load). Expected numbers for poses, fromto frames and
// default-class resolution were produced by MuJoCo 4.0 loading the same XML.
#include "host/scene/mjcf_load.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <fstream>
#include <string>

#include "host/engine.h"
#include "host/trajectory_io.h"
#include "tests/host/test_dir.h"

#ifndef S2R_SOURCE_DIR
#define S2R_SOURCE_DIR "."
#endif

namespace s2r {
namespace {

constexpr double kTol = 1e-5;  // Real may be float
constexpr double kPiD = 3.14159265358979323846;

Model Load(const std::string& xml) { return LoadMjcfString(xml, "test.xml"); }

std::string ScenePath(const std::string& name) {
  return std::string(S2R_SOURCE_DIR) + "/configs/scenes/" + name;
}

// Loading `xml` must throw LoadError whose message starts with "test.xml:<line>: ", names
// `element` (e.g. "<geom") and contains `what`.
::testing::AssertionResult FailsWith(const std::string& xml, int line, const std::string& element,
                                     const std::string& what) {
  try {
    Load(xml);
  } catch (const LoadError& e) {
    std::string msg = e.what();
    std::string prefix = "test.xml:" + std::to_string(line) + ": ";
    if (msg.compare(0, prefix.size(), prefix) != 0) {
      return ::testing::AssertionFailure()
             << "message does not start with '" << prefix << "': " << msg;
    }
    if (msg.find(element) == std::string::npos) {
      return ::testing::AssertionFailure() << "message does not name " << element << ": " << msg;
    }
    if (msg.find(what) == std::string::npos) {
      return ::testing::AssertionFailure() << "message lacks '" << what << "': " << msg;
    }
    return ::testing::AssertionSuccess() << msg;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-LoadError: " << e.what();
  }
  return ::testing::AssertionFailure() << "loaded without error";
}

void ExpectVec(const std::vector<Real>& v, int index, int n, std::vector<double> want) {
  for (int k = 0; k < n; ++k) {
    EXPECT_NEAR(v[n * index + k], want[k], kTol) << "entry " << k << " of item " << index;
  }
}

// quaternions are equal up to sign
void ExpectQuat(const std::vector<Real>& v, int index, std::vector<double> want) {
  double dot = 0;
  for (int k = 0; k < 4; ++k) dot += v[4 * index + k] * want[k];
  EXPECT_NEAR(std::fabs(dot), 1.0, kTol)
      << "quaternion " << index << " = " << v[4 * index] << " " << v[4 * index + 1] << " "
      << v[4 * index + 2] << " " << v[4 * index + 3];
}

// --- frames
// ----------------------------------------------------------------------------------------

const char* kNestedDegrees = R"(<mujoco><worldbody>
<body name="a" pos="1 2 3" euler="30 45 60"><geom size="0.1"/>
  <body name="b" pos="0.5 0 0" axisangle="1 1 0 90"><joint type="slide"/><geom size="0.1"/>
    <body name="c" pos="0 0.2 0.1" quat="2 0 0 2"><joint/><geom size="0.1"/>
      <geom name="fb" type="box" size="0.1 0.2" fromto="0 0 0 1 1 1"/>
      <geom name="fc" type="capsule" size="0.1" fromto="0 0 0 0 0 -1"/>
      <geom name="fd" type="capsule" size="0.1" fromto="1 0 0 0 0 0"/>
    </body></body></body>
</worldbody></mujoco>)";

TEST(MjcfLoad, NestedBodyWorldPosesInDegrees) {
  Model m = Load(kNestedDegrees);
  ASSERT_EQ(m.nbody(), 4);
  int a = m.BodyId("a"), b = m.BodyId("b"), c = m.BodyId("c");
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 2);
  EXPECT_EQ(c, 3);
  ExpectVec(m.body_pos0, a, 3, {1, 2, 3});
  ExpectQuat(m.body_quat0, a, {0.723317411365, 0.391903837329, 0.200562121147, 0.531975695182});
  ExpectVec(m.body_pos0, b, 3, {1.176776695297, 2.463388347648, 3.063413242022});
  ExpectQuat(m.body_quat0, b, {0.215229667288, 0.37278871904, 0.769465389185, 0.471834479581});
  ExpectVec(m.body_pos0, c, 3, {1.319196060976, 2.575313687481, 3.194521756555});
  ExpectQuat(m.body_quat0, c, {-0.181447002857, 0.807695625764, 0.280492763398, 0.485827717362});
}

TEST(MjcfLoad, NestedBodyWorldPosesInRadians) {
  std::string xml = kNestedDegrees;
  xml.replace(xml.find("<mujoco>"), 8, "<mujoco><compiler angle=\"radian\"/>");
  xml.replace(xml.find("euler=\"30 45 60\""), 16, "euler=\"0.5 0.7 0.9\"");
  xml.replace(xml.find("axisangle=\"1 1 0 90\""), 20, "axisangle=\"1 1 0 1.5\"");
  Model m = Load(xml);
  ExpectQuat(m.body_quat0, 1, {0.782659854367, 0.353780039356, 0.198074735072, 0.472281309646});
  ExpectVec(m.body_pos0, 2, 3, {1.237716763885, 2.439710508597, 3.012058557009});
  ExpectQuat(m.body_quat0, 2, {0.306674254009, 0.408456702878, 0.749799914281, 0.420611593215});
  ExpectVec(m.body_pos0, 3, 3, {1.388973976361, 2.540232388786, 3.142506275568});
  ExpectQuat(m.body_quat0, 3, {-0.080565865183, 0.819011108347, 0.241366099495, 0.514268754433});
}

TEST(MjcfLoad, FromtoFramesMatchMuJoCo) {
  Model m = Load(kNestedDegrees);
  int fb = m.GeomId("fb"), fc = m.GeomId("fc"), fd = m.GeomId("fd");
  ASSERT_GE(fb, 0);
  EXPECT_EQ(m.geom_type[fb], kGeomBox);
  // a box with fromto: square cross-section of half-width size[0], half-length |to-from|/2
  ExpectVec(m.geom_size, fb, 3, {0.1, 0.1, std::sqrt(3.0) / 2});
  ExpectVec(m.geom_pos, fb, 3, {0.5, 0.5, 0.5});
  ExpectQuat(m.geom_quat, fb, {0.459700843381, 0.6279630302, -0.6279630302, 0});
  EXPECT_EQ(m.geom_type[fc], kGeomCapsule);
  ExpectVec(m.geom_size, fc, 3, {0.1, 0.5, 0});
  ExpectVec(m.geom_pos, fc, 3, {0, 0, -0.5});
  ExpectQuat(m.geom_quat, fc, {1, 0, 0, 0});
  ExpectVec(m.geom_size, fd, 3, {0.1, 0.5, 0});
  ExpectVec(m.geom_pos, fd, 3, {0.5, 0, 0});
  ExpectQuat(m.geom_quat, fd, {std::sqrt(0.5), 0, std::sqrt(0.5), 0});
}

TEST(MjcfLoad, GeomAndSiteFramesAreInTheBodyFrame) {
  Model m = Load(R"(<mujoco><worldbody>
  <body name="b" pos="1 0 0" euler="0 0 90">
    <freejoint/>
    <geom name="g" type="box" size="0.1 0.2 0.3" pos="0 1 0" axisangle="0 0 1 90"/>
    <site name="s" pos="0 0 1" quat="0 1 0 0"/>
  </body>
</worldbody></mujoco>)");
  int g = m.GeomId("g"), s = m.SiteId("s");
  ExpectVec(m.geom_pos, g, 3, {0, 1, 0});
  ExpectQuat(m.geom_quat, g, {std::sqrt(0.5), 0, 0, std::sqrt(0.5)});
  ExpectVec(m.site_pos, s, 3, {0, 0, 1});
  ExpectQuat(m.site_quat, s, {0, 1, 0, 0});
  EXPECT_EQ(m.site_body[s], m.BodyId("b"));
  ExpectQuat(m.body_quat0, 1, {std::sqrt(0.5), 0, 0, std::sqrt(0.5)});
}

TEST(MjcfLoad, QuatIsNormalized) {
  Model m = Load(R"(<mujoco><worldbody>
  <body quat="0 0 0 3"><geom size="1"/></body>
</worldbody></mujoco>)");
  ExpectVec(m.body_quat0, 1, 4, {0, 0, 0, 1});
}

// --- defaults ----------------------------------------------------------------------------------

TEST(MjcfLoad, DefaultClassesAndChildclass) {
  Model m = Load(R"(<mujoco>
<default>
  <geom friction="0.7" density="500"/>
  <joint damping="0.1"/>
  <default class="a">
    <geom size="0.2" friction="0.3 0.01"/>
    <joint damping="2" range="-30 30"/>
    <default class="b">
      <geom type="box" size="0.1 0.2 0.3"/>
      <joint type="slide" armature="0.5"/>
    </default>
  </default>
  <default class="c">
    <geom size="0.05" contype="2" conaffinity="4"/>
  </default>
</default>
<worldbody>
  <body name="p" childclass="a">
    <joint name="j1"/>
    <geom name="g1"/>
    <geom name="g2" class="b" size="0.05"/>
    <geom name="g3" class="c"/>
    <body name="q" childclass="b">
      <joint name="j2" range="0 1"/>
      <geom name="g4" friction="0.9"/>
      <body name="r">
        <joint name="j3" class="main" />
        <geom name="g5" class="main" size="0.1"/>
      </body>
    </body>
  </body>
</worldbody></mujoco>)");
  // expected values as MuJoCo resolves them
  int g1 = m.GeomId("g1"), g2 = m.GeomId("g2"), g3 = m.GeomId("g3"), g4 = m.GeomId("g4"),
      g5 = m.GeomId("g5");
  EXPECT_EQ(m.geom_type[g1], kGeomSphere);
  EXPECT_NEAR(m.geom_size[3 * g1], 0.2, kTol);
  EXPECT_NEAR(m.geom_friction[g1], 0.3, kTol);
  EXPECT_EQ(m.geom_type[g2], kGeomBox);
  ExpectVec(m.geom_size, g2, 3, {0.05, 0.2, 0.3});  // partial size overrides the leading entry
  EXPECT_NEAR(m.geom_friction[g2], 0.3, kTol);
  EXPECT_EQ(m.geom_type[g3], kGeomSphere);
  EXPECT_NEAR(m.geom_size[3 * g3], 0.05, kTol);
  EXPECT_NEAR(m.geom_friction[g3], 0.7, kTol);
  EXPECT_EQ(m.geom_contype[g3], 2);
  EXPECT_EQ(m.geom_conaffinity[g3], 4);
  EXPECT_EQ(m.geom_contype[g1], 1);
  EXPECT_EQ(m.geom_type[g4], kGeomBox);
  ExpectVec(m.geom_size, g4, 3, {0.1, 0.2, 0.3});
  EXPECT_NEAR(m.geom_friction[g4], 0.9, kTol);
  EXPECT_EQ(m.geom_type[g5], kGeomSphere);
  EXPECT_NEAR(m.geom_friction[g5], 0.7, kTol);

  int j1 = m.JointId("j1"), j2 = m.JointId("j2"), j3 = m.JointId("j3");
  EXPECT_EQ(m.joint_type[j1], kJointHinge);
  EXPECT_EQ(m.joint_limited[j1], 1);
  ExpectVec(m.joint_range, j1, 2, {-kPiD / 6, kPiD / 6});  // degrees -> radians
  EXPECT_NEAR(m.joint_damping[j1], 2, kTol);
  EXPECT_NEAR(m.joint_armature[j1], 0, kTol);
  EXPECT_EQ(m.joint_type[j2], kJointSlide);
  EXPECT_EQ(m.joint_limited[j2], 1);
  ExpectVec(m.joint_range, j2, 2, {0, 1});  // slide: metres, no conversion
  EXPECT_NEAR(m.joint_damping[j2], 2, kTol);
  EXPECT_NEAR(m.joint_armature[j2], 0.5, kTol);
  EXPECT_EQ(m.joint_type[j3], kJointHinge);
  EXPECT_EQ(m.joint_limited[j3], 0);
  EXPECT_NEAR(m.joint_damping[j3], 0.1, kTol);

  // masses from density 500 (MuJoCo: 29.01696021, 24, 2.0943951)
  EXPECT_NEAR(m.body_mass[m.BodyId("p")], 29.01696021, 1e-4);
  EXPECT_NEAR(m.body_mass[m.BodyId("q")], 24.0, 1e-4);
  EXPECT_NEAR(m.body_mass[m.BodyId("r")], 2.0943951, 1e-5);
}

TEST(MjcfLoad, DefaultOrientationAndFrictionPartial) {
  Model m = Load(R"(<mujoco>
<default><geom type="box" size="0.1 0.1 0.1" euler="0 0 90" friction="0.5 0.1 0.2"/></default>
<worldbody>
  <geom name="inherits"/>
  <geom name="own" quat="1 0 0 0" friction="0.25"/>
</worldbody></mujoco>)");
  ExpectQuat(m.geom_quat, m.GeomId("inherits"), {std::sqrt(0.5), 0, 0, std::sqrt(0.5)});
  ExpectQuat(m.geom_quat, m.GeomId("own"), {1, 0, 0, 0});
  EXPECT_NEAR(m.geom_friction[m.GeomId("inherits")], 0.5, kTol);
  EXPECT_NEAR(m.geom_friction[m.GeomId("own")], 0.25, kTol);
}

TEST(MjcfLoad, BuiltInDefaults) {
  Model m = Load(R"(<mujoco><worldbody>
  <body name="b"><joint name="j"/><geom name="g" size="0.1"/></body>
</worldbody></mujoco>)");
  int g = m.GeomId("g"), j = m.JointId("j");
  EXPECT_EQ(m.geom_type[g], kGeomSphere);
  EXPECT_NEAR(m.geom_friction[g], 1.0, kTol);
  EXPECT_EQ(m.geom_contype[g], 1);
  EXPECT_EQ(m.geom_conaffinity[g], 1);
  EXPECT_NEAR(m.geom_restitution[g], 0.0, kTol);
  EXPECT_NEAR(m.body_mass[1], 1000 * 4.0 / 3.0 * kPiD * 0.001, 1e-4);
  EXPECT_EQ(m.joint_type[j], kJointHinge);
  ExpectVec(m.joint_axis_child, j, 3, {0, 0, 1});
  ExpectVec(m.joint_pos_child, j, 3, {0, 0, 0});
  EXPECT_EQ(m.joint_limited[j], 0);
  EXPECT_NEAR(m.timestep, 0.002, 1e-9);
  ExpectVec(m.gravity, 0, 3, {0, 0, -9.81});
}

// --- mass and inertia
// ------------------------------------------------------------------------------

TEST(MjcfLoad, MassFromDensityExplicitMassAndInertial) {
  Model m = Load(R"(<mujoco><worldbody>
  <body name="sphere"><freejoint/><geom size="0.1" density="2000"/></body>
  <body name="capsule"><freejoint/><geom type="capsule" size="0.1 0.2"/></body>
  <body name="box"><freejoint/><geom type="box" size="0.1 0.2 0.3"/></body>
  <body name="explicit"><freejoint/><geom type="box" size="0.1 0.2 0.3" mass="3"/></body>
  <body name="two"><freejoint/>
    <geom type="box" size="0.1 0.1 0.1" pos="-1 0 0" mass="1"/>
    <geom type="box" size="0.1 0.1 0.1" pos="1 0 0" mass="3"/>
  </body>
  <body name="inertial"><freejoint/>
    <inertial pos="0.1 0.2 0.3" mass="7" diaginertia="1 2 2.5"/>
    <geom type="box" size="0.1 0.2 0.3" mass="3"/>
  </body>
  <body name="full"><freejoint/>
    <inertial pos="0 0 0" mass="1" fullinertia="2 2 3 1 0 0"/>
  </body>
</worldbody></mujoco>)");
  EXPECT_NEAR(m.body_mass[m.BodyId("sphere")], 2000 * 4.0 / 3.0 * kPiD * 1e-3, 1e-3);
  EXPECT_NEAR(m.body_mass[m.BodyId("capsule")],
              1000 * (kPiD * 0.01 * 0.4 + 4.0 / 3.0 * kPiD * 1e-3), 1e-3);
  int box = m.BodyId("box");
  EXPECT_NEAR(m.body_mass[box], 1000 * 8 * 0.1 * 0.2 * 0.3, 1e-3);
  int ex = m.BodyId("explicit");
  EXPECT_NEAR(m.body_mass[ex], 3, 1e-6);
  // box inertia m (b^2 + c^2) / 3 with half-extents: 3 * (0.04 + 0.09) / 3 = 0.13, etc.
  std::vector<double> moments(m.body_inertia.begin() + 3 * ex, m.body_inertia.begin() + 3 * ex + 3);
  std::sort(moments.begin(), moments.end());
  EXPECT_NEAR(moments[0], 3 * (0.01 + 0.04) / 3, 1e-5);
  EXPECT_NEAR(moments[1], 3 * (0.01 + 0.09) / 3, 1e-5);
  EXPECT_NEAR(moments[2], 3 * (0.04 + 0.09) / 3, 1e-5);
  int two = m.BodyId("two");
  EXPECT_NEAR(m.body_mass[two], 4, 1e-6);
  ExpectVec(m.body_ipos, two, 3, {0.5, 0, 0});
  int in = m.BodyId("inertial");
  EXPECT_NEAR(m.body_mass[in], 7, 1e-6);
  ExpectVec(m.body_inertia, in, 3, {1, 2, 2.5});
  ExpectVec(m.body_ipos, in, 3, {0.1, 0.2, 0.3});
  ExpectQuat(m.body_iquat, in, {1, 0, 0, 0});
  // fullinertia [[2,1,0],[1,2,0],[0,0,3]]: principal moments 1, 3, 3
  int full = m.BodyId("full");
  std::vector<double> fm(m.body_inertia.begin() + 3 * full, m.body_inertia.begin() + 3 * full + 3);
  std::sort(fm.begin(), fm.end());
  EXPECT_NEAR(fm[0], 1, 1e-5);
  EXPECT_NEAR(fm[1], 3, 1e-5);
  EXPECT_NEAR(fm[2], 3, 1e-5);
}

// <compiler inertiagrouprange>: only geoms whose group (own or from a default class) lies in the
// range give their body mass (MuJoCo's rule; robosuite's scenes say "0 0" and give their visual
// geoms group 1); a static body may carry MuJoCo's massless placeholder <inertial>.
TEST(MjcfLoad, InertiaGroupRangeAndMasslessStaticInertial) {
  const char* kTwoGroups = R"(<mujoco>%s
<default><default class="visual"><geom group="1"/></default></default>
<worldbody>
  <body name="base"><inertial pos="0 0 0" mass="0" diaginertia="0 0 0"/>
    <geom type="box" size="0.1 0.1 0.1"/></body>
  <body name="cube"><freejoint/>
    <geom type="box" size="0.1 0.1 0.1" mass="2"/>
    <geom type="box" size="0.1 0.1 0.1" pos="1 0 0" mass="5" class="visual"/>
    <geom type="box" size="0.1 0.1 0.1" pos="-1 0 0" mass="3" group="7"/>
  </body>
</worldbody></mujoco>)";
  char xml[1024];
  std::snprintf(xml, sizeof(xml), kTwoGroups, R"(<compiler inertiagrouprange="0 0"/>)");
  Model only0 = Load(xml);
  int cube = only0.BodyId("cube");
  EXPECT_NEAR(only0.body_mass[cube], 2, 1e-6);
  ExpectVec(only0.body_ipos, cube, 3, {0, 0, 0});
  EXPECT_EQ(only0.ngeom(), 4);  // the groups left out still collide
  bool noted = false;
  for (const std::string& note : only0.load_notes) {
    noted = noted || note.find("massless <inertial> of a static body") != std::string::npos;
  }
  EXPECT_TRUE(noted);
  // MuJoCo's default range 0 5: groups 0 and 1 count, 7 does not
  std::snprintf(xml, sizeof(xml), kTwoGroups, "");
  Model all = Load(xml);
  EXPECT_NEAR(all.body_mass[all.BodyId("cube")], 7, 1e-6);
  ExpectVec(all.body_ipos, all.BodyId("cube"), 3, {5.0 / 7.0, 0, 0});

  EXPECT_TRUE(FailsWith(R"(<mujoco>
<compiler inertiagrouprange="2 1"/></mujoco>)",
                        2, "<compiler>", "lo <= hi"));
  EXPECT_TRUE(FailsWith(R"(<mujoco>
<compiler inertiagrouprange="0 1.5"/></mujoco>)",
                        2, "<compiler>", "two integers >= 0, got 1.5"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="g" size="0.1" group="x"/></worldbody></mujoco>)",
                        2, "<geom name='g'>", "group"));
  // a moving body still needs mass
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b"><freejoint/>
    <inertial pos="0 0 0" mass="0" diaginertia="0 0 0"/>
  </body>
</worldbody></mujoco>)",
                        3, "<inertial>", "attribute 'mass' must be > 0, got 0"));
}

TEST(MjcfLoad, StaticWeldAndDynamicBodies) {
  Model m = Load(R"(<mujoco><worldbody>
  <geom name="floor" type="plane" size="1 1 0.1"/>
  <body name="table" pos="0 0 0.5">
    <geom name="table_plane" type="plane" size="1 1 0.1"/>
    <body name="leg"><geom type="box" size="0.1 0.1 0.1"/></body>
    <body name="door"><joint name="hinge"/><geom size="0.1"/>
      <body name="handle" pos="0.1 0 0"><geom size="0.02"/></body>
    </body>
  </body>
</worldbody></mujoco>)");
  int table = m.BodyId("table"), leg = m.BodyId("leg"), door = m.BodyId("door"),
      handle = m.BodyId("handle");
  EXPECT_EQ(m.body_dynamic[0], 0);
  EXPECT_EQ(m.body_dynamic[table], 0);
  EXPECT_EQ(m.body_joint[table], -1);
  EXPECT_EQ(m.body_dynamic[leg], 0);
  EXPECT_EQ(m.body_joint[leg], -1);
  EXPECT_EQ(m.body_dynamic[door], 1);
  EXPECT_EQ(m.body_joint[door], m.JointId("hinge"));
  EXPECT_EQ(m.joint_parent[m.JointId("hinge")], table);
  EXPECT_EQ(m.body_dynamic[handle], 1);
  int weld = m.body_joint[handle];
  ASSERT_GE(weld, 0);
  EXPECT_EQ(m.joint_type[weld], kJointWeld);
  EXPECT_EQ(m.joint_name[weld], "");
  EXPECT_EQ(m.joint_parent[weld], door);
  ExpectVec(m.body_pos0, handle, 3, {0.1, 0, 0.5});
}

TEST(MjcfLoad, JointFrictionLossSoftness) {
  Model m = Load(R"(<mujoco>
<default><joint solreffriction="0.03 1"/><default class="s"><joint solimpfriction="0.8 0.9 0.001"/></default></default>
<worldbody>
  <body pos="0 0 1"><joint name="hard" type="slide" frictionloss="1" solreffriction="0.02 1"/>
    <geom size="0.1"/>
    <body><joint name="soft" class="s" type="slide" frictionloss="1"/><geom size="0.1"/></body>
  </body>
</worldbody></mujoco>)");
  int hard = m.JointId("hard"), soft = m.JointId("soft");
  EXPECT_NEAR(m.joint_frictionloss_timeconst[hard], 0.02, kTol);
  EXPECT_NEAR(m.joint_frictionloss_timeconst[soft], 0.03, kTol) << "from the default class";
  ExpectVec(m.joint_frictionloss_impedance, soft, 2, {0.8, 0.9});
  Model plain = Load(R"(<mujoco><worldbody><body><joint type="slide" frictionloss="1"
    solimpfriction="0.5 0.6 0.001"/><geom size="0.1"/></body></worldbody></mujoco>)");
  EXPECT_EQ(plain.joint_frictionloss_timeconst[0], 0) << "no solreffriction: hard";
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody><body>
  <joint type="slide" solreffriction="-100 -10"/><geom size="0.1"/></body></worldbody></mujoco>)",
                        2, "<joint", "solreffriction"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody><body>
  <joint type="slide" solreffriction="0.02 1"
         solimpfriction="1.2 0.95"/><geom size="0.1"/></body></worldbody></mujoco>)",
                        2, "<joint", "solimpfriction"));
}

TEST(MjcfLoad, JointFrameAndAxis) {
  Model m = Load(R"(<mujoco><worldbody>
  <body pos="0 0 1">
    <joint name="j" type="slide" pos="0.1 0.2 0.3" axis="0 3 4" damping="2" frictionloss="0.5"
           armature="0.01"/>
    <geom size="0.1"/></body>
</worldbody></mujoco>)");
  int j = m.JointId("j");
  ExpectVec(m.joint_pos_child, j, 3, {0.1, 0.2, 0.3});
  ExpectVec(m.joint_axis_child, j, 3, {0, 0.6, 0.8});
  EXPECT_NEAR(m.joint_damping[j], 2, kTol);
  EXPECT_NEAR(m.joint_frictionloss[j], 0.5, kTol);
  EXPECT_NEAR(m.joint_armature[j], 0.01, kTol);
  EXPECT_EQ(m.joint_body[j], 1);
  EXPECT_EQ(m.joint_parent[j], 0);
}

// --- limits
// ------------------------------------------------------------------------------------------

TEST(MjcfLoad, Autolimits) {
  Model m = Load(R"(<mujoco><worldbody>
  <body><joint name="ranged" range="-90 90"/><geom size="0.1"/>
  <body><joint name="free_range" range="-90 90" limited="false"/><geom size="0.1"/>
  <body><joint name="none"/><geom size="0.1"/>
  <body><joint name="zero" range="0 0"/><geom size="0.1"/>
  <body><joint name="forced" type="slide" range="0 0.5" limited="true"/><geom size="0.1"/>
  </body></body></body></body></body>
</worldbody></mujoco>)");
  EXPECT_EQ(m.joint_limited[m.JointId("ranged")], 1);
  ExpectVec(m.joint_range, m.JointId("ranged"), 2, {-kPiD / 2, kPiD / 2});
  EXPECT_EQ(m.joint_limited[m.JointId("free_range")], 0);
  EXPECT_EQ(m.joint_limited[m.JointId("none")], 0);
  EXPECT_EQ(m.joint_limited[m.JointId("zero")], 0);  // MuJoCo: a "0 0" range is no range
  EXPECT_EQ(m.joint_limited[m.JointId("forced")], 1);

  Model r = Load(R"(<mujoco><compiler angle="radian" autolimits="false"/><worldbody>
  <body><joint name="j" range="-1 1" limited="true"/><geom size="0.1"/></body>
</worldbody></mujoco>)");
  EXPECT_EQ(r.joint_limited[0], 1);
  ExpectVec(r.joint_range, 0, 2, {-1, 1});
}

TEST(MjcfLoad, AutolimitsOffRequiresExplicitLimited) {
  EXPECT_TRUE(FailsWith(R"(<mujoco><compiler autolimits="false"/><worldbody>
  <body>
    <joint name="j" range="-1 1"/><geom size="0.1"/></body>
</worldbody></mujoco>)",
                        3, "<joint name='j'>", "autolimits"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body>
    <joint name="j" limited="true"/><geom size="0.1"/></body>
</worldbody></mujoco>)",
                        3, "<joint name='j'>", "lo < hi"));
}

// --- actuators
// ----------------------------------------------------------------------------------------

TEST(MjcfLoad, ActuatorParameters) {
  Model m = Load(R"(<mujoco>
<default>
  <motor gear="0 0 0 0 0 1"/>
  <default class="stiff"><position kp="300" kv="30" forcerange="-5 5"/></default>
</default>
<worldbody>
  <body><joint name="j1" type="slide"/><geom size="0.1"/><site name="s"/>
    <body><joint name="j2"/><geom size="0.1"/></body></body>
</worldbody>
<actuator>
  <position name="p_default" joint="j1"/>
  <position name="p_class" class="stiff" joint="j1" ctrlrange="-1 1"/>
  <velocity name="v" joint="j2" ctrlrange="-2 2" ctrllimited="false"/>
  <velocity name="v_kv" joint="j2" kv="7"/>
  <motor name="m" joint="j2" gear="2" forcerange="-3 3" forcelimited="true"/>
  <motor name="site_motor" site="s" gear="1 2 3 4 5 6"/>
  <velocity name="v_stiff" class="stiff" joint="j2"/>
</actuator></mujoco>)");
  // expected values as MuJoCo resolves them: gear, ranges and limited flags of a class's actuator
  // default apply to every actuator kind, kp/kv only to the same kind
  ASSERT_EQ(m.nactuator(), 7);
  int pd = m.ActuatorId("p_default"), pc = m.ActuatorId("p_class"), v = m.ActuatorId("v"),
      vk = m.ActuatorId("v_kv"), mo = m.ActuatorId("m"), sm = m.ActuatorId("site_motor");
  EXPECT_EQ(m.actuator_type[pd], kActuatorPosition);
  EXPECT_EQ(m.actuator_trntype[pd], kTransmissionJoint);
  EXPECT_EQ(m.actuator_trnid[pd], m.JointId("j1"));
  EXPECT_NEAR(m.actuator_kp[pd], 1, kTol);
  EXPECT_NEAR(m.actuator_kv[pd], 0, kTol);
  ExpectVec(m.actuator_gear, pd, 6, {0, 0, 0, 0, 0, 1});  // from the <motor> default
  EXPECT_EQ(m.actuator_ctrllimited[pd], 0);
  EXPECT_EQ(m.actuator_forcelimited[pd], 0);

  EXPECT_NEAR(m.actuator_kp[pc], 300, kTol);
  EXPECT_NEAR(m.actuator_kv[pc], 30, kTol);
  EXPECT_EQ(m.actuator_ctrllimited[pc], 1);
  ExpectVec(m.actuator_ctrlrange, pc, 2, {-1, 1});
  EXPECT_EQ(m.actuator_forcelimited[pc], 1);
  ExpectVec(m.actuator_forcerange, pc, 2, {-5, 5});

  EXPECT_EQ(m.actuator_type[v], kActuatorVelocity);
  EXPECT_NEAR(m.actuator_kv[v], 1, kTol);
  EXPECT_NEAR(m.actuator_kp[v], 0, kTol);
  EXPECT_EQ(m.actuator_ctrllimited[v], 0);
  EXPECT_NEAR(m.actuator_kv[vk], 7, kTol);
  int vs = m.ActuatorId("v_stiff");
  EXPECT_NEAR(m.actuator_kv[vs], 1, kTol);  // kv="30" of the <position> default does not apply
  EXPECT_NEAR(m.actuator_kp[vs], 0, kTol);
  EXPECT_EQ(m.actuator_forcelimited[vs], 1);  // forcerange of the class does
  ExpectVec(m.actuator_forcerange, vs, 2, {-5, 5});
  ExpectVec(m.actuator_gear, vs, 6, {0, 0, 0, 0, 0, 1});

  EXPECT_EQ(m.actuator_type[mo], kActuatorMotor);
  EXPECT_NEAR(m.actuator_kp[mo], 0, kTol);
  EXPECT_NEAR(m.actuator_kv[mo], 0, kTol);
  ExpectVec(m.actuator_gear, mo, 6, {2, 0, 0, 0, 0, 1});  // MJCF partial gear over the default
  EXPECT_EQ(m.actuator_forcelimited[mo], 1);
  ExpectVec(m.actuator_forcerange, mo, 2, {-3, 3});

  EXPECT_EQ(m.actuator_trntype[sm], kTransmissionSite);
  EXPECT_EQ(m.actuator_trnid[sm], m.SiteId("s"));
  ExpectVec(m.actuator_gear, sm, 6, {1, 2, 3, 4, 5, 6});
}

TEST(MjcfLoad, ActuatorErrors) {
  const std::string head = R"(<mujoco><worldbody>
  <body><joint name="j"/><geom size="0.1"/><site name="s"/></body>
  <body><freejoint name="f"/><geom size="0.1"/></body>
</worldbody>
<actuator>
)";
  EXPECT_TRUE(FailsWith(head + "  <position name='a' joint='nope'/>\n</actuator></mujoco>", 6,
                        "<position name='a'>", "unknown joint 'nope'"));
  EXPECT_TRUE(FailsWith(head + "  <motor name='a' site='nope'/>\n</actuator></mujoco>", 6,
                        "<motor name='a'>", "unknown site 'nope'"));
  EXPECT_TRUE(FailsWith(head + "  <motor name='a' joint='j' site='s'/>\n</actuator></mujoco>", 6,
                        "<motor name='a'>", "exactly one of 'joint', 'tendon' and 'site'"));
  EXPECT_TRUE(FailsWith(head + "  <motor name='a'/>\n</actuator></mujoco>", 6, "<motor name='a'>",
                        "exactly one of 'joint', 'tendon' and 'site'"));
  EXPECT_TRUE(FailsWith(head + "  <motor name='a' joint='j' kp='3'/>\n</actuator></mujoco>", 6,
                        "<motor name='a'>", "unknown attribute 'kp'"));
  EXPECT_TRUE(FailsWith(head + "  <velocity name='a' joint='j' kp='3'/>\n</actuator></mujoco>", 6,
                        "<velocity name='a'>", "unknown attribute 'kp'"));
  EXPECT_TRUE(FailsWith(head + "  <position name='a' joint='f'/>\n</actuator></mujoco>", 6,
                        "<position name='a'>", "free joint"));
  EXPECT_TRUE(
      FailsWith(head + "  <position name='a' joint='j' ctrlrange='1 -1'/>\n</actuator></mujoco>", 6,
                "<position name='a'>", "lo < hi"));
  EXPECT_TRUE(FailsWith(head +
                            "  <motor name='a' joint='j' forcerange='0 0' forcelimited='true'/>\n"
                            "</actuator></mujoco>",
                        6, "<motor name='a'>", "'forcerange' must have lo < hi"));
  EXPECT_TRUE(FailsWith(head + "  <position name='a' joint='j' kp='-1'/>\n</actuator></mujoco>", 6,
                        "<position name='a'>", "'kp' must be >= 0"));
  EXPECT_TRUE(FailsWith(head + "  <cylinder name='a' joint='j'/>\n</actuator></mujoco>", 6,
                        "<cylinder name='a'>", "not allowed inside <actuator>"));
  EXPECT_TRUE(FailsWith(head + "  <motor name='a' joint='j' gear='1 2 3 4 5 6 7'/>\n"
                               "</actuator></mujoco>",
                        6, "<motor name='a'>", "'gear' needs 1 to 6 numbers, got 7"));
  EXPECT_TRUE(FailsWith(head + "  <motor name='a' joint='j'/>\n  <motor name='a' joint='j'/>\n"
                               "</actuator></mujoco>",
                        7, "<motor name='a'>", "duplicate actuator name 'a'"));
}

// --- custom numeric extension -------------------------------------------------------------------

TEST(MjcfLoad, CustomNumericExtension) {
  Model m = Load(R"(<mujoco>
<option timestep="0.004" gravity="0 0 -3"/>
<worldbody>
  <body><freejoint/><geom name="ball" size="0.1"/></body>
  <geom name="floor" type="plane" size="1 1 1"/>
</worldbody>
<custom>
  <numeric name="s2r_substeps" data="8"/>
  <numeric name="s2r_control_hz" data="25"/>
  <numeric name="s2r_max_contacts" data="17"/>
  <numeric name="s2r_latency_steps" data="2"/>
  <numeric name="s2r_contact_hertz" data="40"/>
  <numeric name="s2r_contact_damping_ratio" data="5"/>
  <numeric name="s2r_joint_hertz" data="70"/>
  <numeric name="s2r_joint_damping_ratio" data="3"/>
  <numeric name="s2r_contact_push_velocity" data="2.5"/>
  <numeric name="s2r_restitution_threshold" data="0"/>
  <numeric name="s2r_linear_slop" data="0.001"/>
  <numeric name="s2r_speculative_distance" data="0.003"/>
  <numeric name="s2r_max_linear_speed" data="50"/>
  <numeric name="s2r_restitution" data="0.25"/>
  <numeric name="s2r_restitution:ball" data="0.75"/>
  <numeric name="my_user_data" data="1 2 3" size="3"/>
  <text name="my_note" data="anything"/>
</custom>
<custom><numeric name="s2r_max_latency_steps" data="3"/></custom></mujoco>)");
  EXPECT_NEAR(m.timestep, 0.004, 1e-9);
  ExpectVec(m.gravity, 0, 3, {0, 0, -3});
  EXPECT_EQ(m.substeps, 8);
  EXPECT_NEAR(m.control_hz, 25, kTol);
  EXPECT_EQ(m.steps_per_control, 10);
  EXPECT_EQ(m.max_contacts, 17);
  EXPECT_EQ(m.latency_capacity, 5);  // max_latency_steps + 1, and one older action for a part-period delay
  EXPECT_EQ(m.latency_steps[0], 2);
  EXPECT_NEAR(m.contact_hertz[0], 40, kTol);
  EXPECT_NEAR(m.contact_damping_ratio[0], 5, kTol);
  EXPECT_NEAR(m.joint_hertz[0], 70, kTol);
  EXPECT_NEAR(m.joint_damping_ratio[0], 3, kTol);
  EXPECT_NEAR(m.contact_push_velocity[0], 2.5, kTol);
  EXPECT_NEAR(m.restitution_threshold[0], 0, kTol);
  EXPECT_NEAR(m.linear_slop[0], 0.001, kTol);
  EXPECT_NEAR(m.speculative_distance[0], 0.003, kTol);
  EXPECT_NEAR(m.max_linear_speed[0], 50, kTol);
  EXPECT_NEAR(m.geom_restitution[m.GeomId("ball")], 0.75, kTol);
  EXPECT_NEAR(m.geom_restitution[m.GeomId("floor")], 0.25, kTol);
}

TEST(MjcfLoad, CustomNumericErrors) {
  const std::string head = R"(<mujoco><worldbody><geom name="g" size="1"/></worldbody>
<custom>
)";
  auto xml = [&](const std::string& body) { return head + body + "\n</custom></mujoco>"; };
  EXPECT_TRUE(FailsWith(xml("  <numeric name='s2r_substep' data='4'/>"), 3,
                        "<numeric name='s2r_substep'>", "unknown s2r parameter"));
  EXPECT_TRUE(FailsWith(xml("  <numeric name='s2r_substeps' data='2.5'/>"), 3,
                        "<numeric name='s2r_substeps'>", "must be an integer >= 1"));
  EXPECT_TRUE(FailsWith(xml("  <numeric name='s2r_substeps' data='0'/>"), 3,
                        "<numeric name='s2r_substeps'>", "must be an integer >= 1"));
  EXPECT_TRUE(FailsWith(xml("  <numeric name='s2r_control_hz' data='50 60'/>"), 3,
                        "<numeric name='s2r_control_hz'>", "exactly one number"));
  EXPECT_TRUE(FailsWith(xml("  <numeric name='s2r_control_hz' data='-5'/>"), 3,
                        "<numeric name='s2r_control_hz'>", "must be a number > 0"));
  EXPECT_TRUE(FailsWith(xml("  <numeric name='s2r_contact_hertz' data='nan'/>"), 3,
                        "<numeric name='s2r_contact_hertz'>", "'nan' is not a finite number"));
  EXPECT_TRUE(FailsWith(xml("  <numeric name='s2r_restitution' data='1.5'/>"), 3,
                        "<numeric name='s2r_restitution'>", "<= 1"));
  EXPECT_TRUE(FailsWith(xml("  <numeric name='s2r_restitution:nope' data='0.5'/>"), 3,
                        "<numeric name='s2r_restitution:nope'>", "unknown geom 'nope'"));
  EXPECT_TRUE(FailsWith(xml("  <numeric name='s2r_latency_steps' data='2'/>"), 3,
                        "<numeric name='s2r_latency_steps'>", "<= max_latency_steps (0; raise s2r_max_latency_steps), got 2"));
  EXPECT_TRUE(FailsWith(xml("  <numeric name='x' data='1'/>\n  <numeric name='x' data='2'/>"), 4,
                        "<numeric name='x'>", "duplicate custom name 'x'"));
  EXPECT_TRUE(FailsWith(xml("  <text name='s2r_substeps' data='4'/>"), 3,
                        "<text name='s2r_substeps'>", "reserved"));
  EXPECT_TRUE(
      FailsWith(xml("  <tuple name='t'/>"), 3, "<tuple name='t'>", "not allowed inside <custom>"));
}

// --- contact
// -------------------------------------------------------------------------------------------

TEST(MjcfLoad, ExcludePairs) {
  Model m = Load(R"(<mujoco><worldbody>
  <geom type="plane" size="1 1 1"/>
  <body name="a"><freejoint/><geom size="0.1"/></body>
  <body name="b"><freejoint/><geom size="0.1"/></body>
</worldbody>
<contact><exclude name="e" body1="a" body2="b"/><exclude body1="world" body2="a"/></contact>
</mujoco>)");
  ASSERT_EQ(m.exclude_body_pairs.size(), 2u);
  EXPECT_EQ(m.exclude_body_pairs[0], std::make_pair(1, 2));
  EXPECT_EQ(m.exclude_body_pairs[1], std::make_pair(0, 1));
  // only plane-b remains
  EXPECT_EQ(m.pair_geom.size(), 2u);
}

// --- visual-only input -------------------------------------------------------------------------

TEST(MjcfLoad, VisualOnlyThingsAreAcceptedAndIgnored) {
  Model m = Load(R"(<?xml version="1.0"?>
<!-- a comment -->
<mujoco model="visual">
  <visual><global offwidth="800"/><quality shadowsize="4096"/></visual>
  <asset>
    <texture name="grid" type="2d" builtin="checker" width="512" height="512"/>
    <material name="grid" texture="grid"/>
  </asset>
  <worldbody>
    <light name="sun" pos="0 0 3"/>
    <camera name="top" pos="0 0 2"/>
    <geom type="plane" size="1 1 0.1" material="grid" rgba="1 1 1 1" group="2"/>
    <body name="b">
      <camera name="follow" mode="trackcom"/>
      <freejoint/>
      <geom size="0.1" rgba="1 0 0 1" group="1" material="grid"/>
      <site name="s" rgba="0 1 0 1" group="3" type="box" size="0.01 0.02 0.03"/>
    </body>
  </worldbody>
</mujoco>)");
  EXPECT_EQ(m.nbody(), 2);
  EXPECT_EQ(m.ngeom(), 2);
  EXPECT_EQ(m.nsite(), 1);
}

// --- files and scenes
// -------------------------------------------------------------------------------

TEST(MjcfLoad, FileLoadingSetsProvenance) {
  std::string path = TestDir() + "/scene.xml";
  std::string text =
      "<mujoco>\n<worldbody>\n<body><freejoint/><geom size='0.1'/></body>\n"
      "</worldbody>\n</mujoco>\n";
  {
    std::ofstream out(path);
    out << text;
  }
  Model m = LoadMjcfFile(path);
  EXPECT_EQ(m.source_path, path);
  EXPECT_EQ(m.source_text, text);
  EXPECT_EQ(m.nbody(), 2);

  std::string bad = TestDir() + "/bad.xml";
  {
    std::ofstream out(bad);
    out << "<mujoco>\n<worldbody>\n<geom size='-1'/>\n</worldbody>\n</mujoco>\n";
  }
  try {
    LoadMjcfFile(bad);
    ADD_FAILURE() << "expected LoadError";
  } catch (const LoadError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(bad + ":3: <geom>: ", 0), 0u) << e.what();
  }
  EXPECT_THROW(LoadMjcfFile(TestDir() + "/does_not_exist.xml"), LoadError);
}

TEST(MjcfLoad, BoxPushScene) {
  Model m = LoadMjcfFile(ScenePath("box_push.xml"));
  EXPECT_NEAR(m.timestep, 0.01, 1e-9);
  EXPECT_EQ(m.substeps, 4);
  EXPECT_NEAR(m.control_hz, 50, kTol);
  EXPECT_EQ(m.steps_per_control, 2);
  int box = m.BodyId("box");
  ASSERT_GE(box, 0);
  EXPECT_NEAR(m.body_mass[box], 0.5, 1e-6);
  EXPECT_EQ(m.joint_type[m.body_joint[box]], kJointFree);
  ExpectVec(m.body_pos0, box, 3, {0, 0, 0.05});
  int box_geom = m.GeomId("box");
  ExpectVec(m.geom_size, box_geom, 3, {0.05, 0.05, 0.05});
  int pusher = m.GeomId("pusher");
  ASSERT_GE(pusher, 0);
  EXPECT_NEAR(m.geom_size[3 * pusher], 0.03, kTol);
  int pb = m.geom_body[pusher];
  EXPECT_NEAR(m.body_pos0[3 * pb + 2], 0.05, kTol);  // at the cube's height
  EXPECT_LT(m.body_pos0[3 * pb], -0.08);             // beside the cube, not touching
  for (const char* name : {"act_x", "act_y"}) {
    int a = m.ActuatorId(name);
    ASSERT_GE(a, 0) << name;
    EXPECT_EQ(m.actuator_type[a], kActuatorPosition);
    EXPECT_EQ(m.joint_type[m.actuator_trnid[a]], kJointSlide);
    EXPECT_NEAR(m.actuator_kp[a], 200, kTol);
    EXPECT_NEAR(m.actuator_kv[a], 20, kTol);
    EXPECT_EQ(m.actuator_forcelimited[a], 1);
    ExpectVec(m.actuator_forcerange, a, 2, {-20, 20});
    EXPECT_EQ(m.actuator_ctrllimited[a], 1);
    ExpectVec(m.actuator_ctrlrange, a, 2, {-1, 1});
  }
  ExpectVec(m.joint_axis_child, m.actuator_trnid[m.ActuatorId("act_x")], 3, {1, 0, 0});
  ExpectVec(m.joint_axis_child, m.actuator_trnid[m.ActuatorId("act_y")], 3, {0, 1, 0});
  for (int b = 1; b < m.nbody(); ++b) EXPECT_GT(m.body_mass[b], 0) << m.body_name[b];
}

TEST(MjcfLoad, PickLiftScene) {
  Model m = LoadMjcfFile(ScenePath("pick_lift.xml"));
  EXPECT_NEAR(m.timestep, 0.01, 1e-9);
  EXPECT_EQ(m.steps_per_control, 2);
  int object = m.BodyId("object");
  ASSERT_GE(object, 0);
  EXPECT_NEAR(m.body_mass[object], 0.2, 1e-6);
  ExpectVec(m.geom_size, m.GeomId("object"), 3, {0.025, 0.025, 0.03});
  ExpectVec(m.body_pos0, object, 3, {0, 0, 0.03});
  EXPECT_EQ(m.nactuator(), 5);
  for (const char* name : {"act_x", "act_y", "act_z"}) {
    int a = m.ActuatorId(name);
    ASSERT_GE(a, 0) << name;
    EXPECT_GT(m.actuator_kv[a], 0) << name;
    EXPECT_EQ(m.joint_type[m.actuator_trnid[a]], kJointSlide);
  }
  for (const char* name : {"finger_left", "finger_right"}) {
    int a = m.ActuatorId(std::string("act_") + name);
    ASSERT_GE(a, 0) << name;
    EXPECT_EQ(m.actuator_forcelimited[a], 1);
    ExpectVec(m.actuator_forcerange, a, 2, {-10, 10});
    ExpectVec(m.actuator_ctrlrange, a, 2, {0, 0.05});
    int g = m.GeomId(name);
    ASSERT_GE(g, 0);
    EXPECT_EQ(m.geom_type[g], kGeomBox);
    EXPECT_NEAR(m.geom_friction[g], 1.0, kTol);
  }
  // the fingers straddle the object: one on each side in y, at the object's height
  int fl = m.BodyId("finger_left"), fr = m.BodyId("finger_right");
  EXPECT_GT(m.body_pos0[3 * fl + 1], 0.025 + 0.005);
  EXPECT_LT(m.body_pos0[3 * fr + 1], -0.025 - 0.005);
  EXPECT_LT(m.body_pos0[3 * fl + 2], 0.06);
  for (int b = 1; b < m.nbody(); ++b) EXPECT_GT(m.body_mass[b], 0) << m.body_name[b];
}

// The conventions the peg_insert task relies on (kernels/task_peg_insert.h): the peg's origin is
// its tip, the socket is static with its origin at the hole's mouth, and the hole leaves 3 mm of
// clearance per side around the peg.
TEST(MjcfLoad, PegInsertScene) {
  Model m = LoadMjcfFile(ScenePath("peg_insert.xml"));
  EXPECT_EQ(m.steps_per_control, 2);
  const int peg = m.BodyId("peg"), socket = m.BodyId("socket");
  ASSERT_GE(peg, 0);
  ASSERT_GE(socket, 0);
  EXPECT_EQ(m.joint_type[m.body_joint[peg]], kJointFree);
  ExpectVec(m.body_pos0, peg, 3, {0, 0, 0});  // the tip on the floor
  ExpectVec(m.geom_size, m.GeomId("peg"), 3, {0.01, 0.01, 0.05});
  ExpectVec(m.geom_pos, m.GeomId("peg"), 3, {0, 0, 0.05});
  ExpectVec(m.body_ipos, peg, 3, {0, 0, 0.05});
  EXPECT_NEAR(m.body_mass[peg], 0.05, 1e-6);
  EXPECT_EQ(m.body_dynamic[socket], 0);
  const double mouth_z = m.body_pos0[3 * socket + 2];
  EXPECT_NEAR(mouth_z, 0.04, kTol);
  int walls = 0;
  double inner_x = 1, inner_y = 1;  // the hole's half widths
  for (int g = 0; g < m.ngeom(); ++g) {
    if (m.geom_body[g] != socket) continue;
    ++walls;
    EXPECT_EQ(m.geom_type[g], kGeomBox);
    const Real* pos = &m.geom_pos[3 * g];
    const Real* size = &m.geom_size[3 * g];
    EXPECT_NEAR(pos[2] + size[2], 0, kTol) << "a wall's top is the mouth";
    EXPECT_NEAR(pos[2] - size[2], -mouth_z, kTol) << "a wall stands on the floor";
    if (std::abs(pos[0]) > kTol) inner_x = std::min(inner_x, std::abs(double(pos[0])) - size[0]);
    if (std::abs(pos[1]) > kTol) inner_y = std::min(inner_y, std::abs(double(pos[1])) - size[1]);
  }
  EXPECT_EQ(walls, 4);
  EXPECT_NEAR(inner_x - 0.01, 0.003, kTol);
  EXPECT_NEAR(inner_y - 0.01, 0.003, kTol);
  // the open fingers straddle the peg's upper part, one on each side in y
  for (const char* name : {"finger_left", "finger_right"}) {
    const int f = m.BodyId(name);
    EXPECT_GT(std::abs(double(m.body_pos0[3 * f + 1])) - m.geom_size[3 * m.GeomId(name) + 1], 0.01 + 0.01) << name;
    EXPECT_LT(m.body_pos0[3 * f + 2] + m.geom_size[3 * m.GeomId(name) + 2], 0.1) << name;
  }
  EXPECT_EQ(m.nactuator(), 5);
}

TEST(MjcfLoad, Stack5Scene) {
  Model m = LoadMjcfFile(ScenePath("stack5.xml"));
  EXPECT_EQ(m.nbody(), 6);
  EXPECT_EQ(m.steps_per_control, 2);
  for (int i = 0; i < 5; ++i) {
    int b = m.BodyId("cube" + std::to_string(i));
    ASSERT_GE(b, 0);
    ExpectVec(m.body_pos0, b, 3, {0, 0, 0.05 + 0.1 * i});
    EXPECT_NEAR(m.body_mass[b], 0.5, 1e-6);
    EXPECT_EQ(m.joint_type[m.body_joint[b]], kJointFree);
    int g = m.GeomId("cube" + std::to_string(i));
    ExpectVec(m.geom_size, g, 3, {0.05, 0.05, 0.05});
  }
}

// --- bad input: each error names the file, the line and the element
// -------------------------------

TEST(MjcfLoadErrors, MalformedXml) {
  EXPECT_TRUE(FailsWith("<mujoco>\n<worldbody>\n<geom size='1'>\n</worldbody>\n</mujoco>", 4,
                        "<xml>", "malformed XML"));
  EXPECT_TRUE(FailsWith("", 1, "<xml>", "malformed XML"));
  EXPECT_TRUE(FailsWith("<robot/>", 1, "<robot>", "root element must be <mujoco>"));
}

TEST(MjcfLoadErrors, UnknownElement) {
  EXPECT_TRUE(FailsWith(R"(<mujoco>
  <worldbody/>
  <flexcomp/>
</mujoco>)",
                        3, "<flexcomp>", "not supported"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b">
    <geom size="1"/>
    <composite type="grid"/>
  </body>
</worldbody></mujoco>)",
                        4, "<composite>", "not allowed inside <body>"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <joint name="j"/>
</worldbody></mujoco>)",
                        2, "<joint name='j'>", "not allowed inside <worldbody>"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><default>
  <tendon width="1"/>
</default></mujoco>)",
                        2, "<tendon>", "not allowed inside <default>"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><contact>
  <pair geom1="a" geom2="b"/>
</contact></mujoco>)",
                        2, "<pair>", "<pair> is not supported by s2r"));
  EXPECT_TRUE(FailsWith(R"(<mujoco>
  <option timestep="0.01">
    <flag contact="disable"/>
  </option>
</mujoco>)",
                        3, "<flag>", "flag contact=\"disable\" would change the dynamics"));
}

TEST(MjcfLoadErrors, UnknownAttribute) {
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b">
    <geom name="g" size="1" fitscale="1"/>
  </body>
</worldbody></mujoco>)",
                        3, "<geom name='g'>", "unknown attribute 'fitscale'"));
  EXPECT_TRUE(FailsWith(R"(<mujoco>
  <option timestep="0.01" actuatorgroupdisable="1"/>
</mujoco>)",
                        2, "<option>", "unknown attribute 'actuatorgroupdisable'"));
  EXPECT_TRUE(FailsWith(R"(<mujoco>
  <compiler eulerseq="zyx"/>
</mujoco>)",
                        2, "<compiler>", "unknown attribute 'eulerseq'"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b" mocap="true"><geom size="1"/></body>
</worldbody></mujoco>)",
                        2, "<body name='b'>", "attribute 'mocap': s2r has no mocap bodies"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><default>
  <geom name="x" size="1"/>
</default></mujoco>)",
                        2, "<geom name='x'>", "not allowed inside <default>"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody childclass="a">
</worldbody></mujoco>)",
                        1, "<worldbody>", "takes no attributes"));
}

TEST(MjcfLoadErrors, BadKeywordsAndTypes) {
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="g" type="hfield" size="1 1"/>
</worldbody></mujoco>)",
                        2, "<geom name='g'>", "geom type 'hfield' is not supported by s2r"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="g" type="cube" size="1 1"/>
</worldbody></mujoco>)",
                        2, "<geom name='g'>", "must be one of plane|sphere|capsule|box|mesh|cylinder|ellipsoid|hfield|sdf"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body><joint name="j" type="sphere"/><geom size="1"/></body>
</worldbody></mujoco>)",
                        2, "<joint name='j'>", "must be one of"));
  EXPECT_TRUE(FailsWith(R"(<mujoco>
  <compiler angle="grad"/>
</mujoco>)",
                        2, "<compiler>", "must be one of degree|radian"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="g" size="1" condim="2"/>
</worldbody></mujoco>)",
                        2, "<geom name='g'>", "'condim' must be 1, 3, 4 or 6"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="g" size="1" contype="1.5"/>
</worldbody></mujoco>)",
                        2, "<geom name='g'>", "'contype' must be one integer"));
}

TEST(MjcfLoadErrors, NonPositiveMassAndSize) {
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body>
    <freejoint/>
    <geom name="box" type="box" size="0.1 0.1 0.1" mass="-1"/>
  </body>
</worldbody></mujoco>)",
                        4, "<geom name='box'>", "attribute 'mass' must be >= 0, got -1"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body><freejoint/>
    <geom name="s" size="0"/>
  </body>
</worldbody></mujoco>)",
                        3, "<geom name='s'>", "attribute 'size' must be > 0, got 0"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="b" type="box" size="0.1 -0.1 0.1"/>
</worldbody></mujoco>)",
                        2, "<geom name='b'>", "attribute 'size' must be > 0, got -0.1"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="b" type="box" size="0.1 0.1"/>
</worldbody></mujoco>)",
                        2, "<geom name='b'>", "needs attribute 'size' with 3 numbers, got 2"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="s"/>
</worldbody></mujoco>)",
                        2, "<geom name='s'>", "needs attribute 'size'"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b"><freejoint/>
    <inertial pos="0 0 0" mass="0" diaginertia="1 1 1"/>
  </body>
</worldbody></mujoco>)",
                        3, "<inertial>", "attribute 'mass' must be > 0, got 0"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b"><freejoint/>
    <inertial pos="0 0 0" mass="1" diaginertia="1 1 0"/>
  </body>
</worldbody></mujoco>)",
                        3, "<inertial>", "'diaginertia' must be > 0"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b"><freejoint/>
    <inertial pos="0 0 0" mass="1" diaginertia="1 1 3"/>
  </body>
</worldbody></mujoco>)",
                        3, "<inertial>", "A + B >= C"));
  EXPECT_TRUE(FailsWith(R"(<mujoco>
  <option timestep="0"/>
</mujoco>)",
                        2, "<option>", "'timestep' must be > 0"));
  // a bad value from a default class is reported at the geom, naming the class
  EXPECT_TRUE(FailsWith(R"(<mujoco>
<default><default class="heavy"><geom mass="-2"/></default></default>
<worldbody>
  <body><freejoint/>
    <geom name="g" class="heavy" size="0.1"/>
  </body>
</worldbody></mujoco>)",
                        5, "<geom name='g'>", "from default class 'heavy', line 2"));
}

TEST(MjcfLoadErrors, MovingBodyWithoutMass) {
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="ghost">
    <joint name="j"/>
  </body>
</worldbody></mujoco>)",
                        2, "<body name='ghost'>", "no <inertial> and no geom with mass"));
  // a massless body welded to a moving one is merged into it (mjcf_robot_test.cc)
  Model m = Load(R"(<mujoco><worldbody>
  <body name="arm"><joint/><geom size="0.1"/>
    <body name="tip"><geom size="0.1" density="0"/></body>
  </body>
</worldbody></mujoco>)");
  EXPECT_EQ(m.nbody(), 2);
  EXPECT_EQ(m.ngeom(), 2);
}

TEST(MjcfLoadErrors, BadNumbers) {
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b" pos="0 nan 0"><geom size="1"/></body>
</worldbody></mujoco>)",
                        2, "<body name='b'>", "attribute 'pos': 'nan' is not a finite number"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="g" size="inf"/>
</worldbody></mujoco>)",
                        2, "<geom name='g'>", "'inf' is not a finite number"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="g" size="1e999"/>
</worldbody></mujoco>)",
                        2, "<geom name='g'>", "'1e999' is not a finite number"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="g" size="0.1" pos="1 2"/>
</worldbody></mujoco>)",
                        2, "<geom name='g'>", "attribute 'pos' needs 3 numbers, got 2"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="g" size="0.1" pos="1 2 3x"/>
</worldbody></mujoco>)",
                        2, "<geom name='g'>", "'3x' is not a finite number"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="g" size="0.1" friction="1 0.1 0.1 0.1"/>
</worldbody></mujoco>)",
                        2, "<geom name='g'>", "'friction' needs 1 to 3 numbers, got 4"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="g" size="0.1" friction="-1"/>
</worldbody></mujoco>)",
                        2, "<geom name='g'>", "'friction' must be >= 0"));
}

TEST(MjcfLoadErrors, MissingReferences) {
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="a"><freejoint/><geom size="0.1"/></body>
</worldbody>
<contact>
  <exclude body1="a" body2="missing"/>
</contact></mujoco>)",
                        5, "<exclude>", "unknown body 'missing'"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="a" childclass="nope"><geom size="0.1"/></body>
</worldbody></mujoco>)",
                        2, "<body name='a'>", "unknown default class 'nope'"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="a"><joint name="j" class="nope"/><geom size="0.1"/></body>
</worldbody></mujoco>)",
                        2, "<joint name='j'>", "unknown default class 'nope'"));
}

// Several joints in one body: a massless link (named body:joint) per joint but the last, each at
// the body's frame, the body hanging from the last; hinges and slides only, in articulated trees.
TEST(MjcfLoad, SeveralJointsInOneBodyInsertMasslessLinks) {
  Model m = LoadMjcfString(R"(<mujoco><worldbody>
  <body name="arm" pos="0 0 1">
    <joint name="j1"/>
    <geom size="0.1" mass="2"/>
    <joint name="j2" type="slide" axis="1 0 0"/>
    <joint name="j3" axis="0 1 0" pos="0 0 -0.1"/>
  </body>
</worldbody></mujoco>)", "several.xml");
  ASSERT_EQ(m.nbody(), 4);  // world, arm:j1, arm:j2, arm
  const int l1 = m.BodyId("arm:j1"), l2 = m.BodyId("arm:j2"), arm = m.BodyId("arm");
  EXPECT_EQ(m.body_parent[l1], 0);
  EXPECT_EQ(m.body_parent[l2], l1);
  EXPECT_EQ(m.body_parent[arm], l2);
  EXPECT_EQ(m.body_link[l1], 1);
  EXPECT_EQ(m.body_link[l2], 1);
  EXPECT_EQ(m.body_link[arm], 0);
  EXPECT_EQ(m.body_mass[l1], 0);
  EXPECT_NEAR(m.body_mass[arm], 2, 1e-6);
  EXPECT_EQ(m.joint_body[m.JointId("j1")], l1);
  EXPECT_EQ(m.joint_body[m.JointId("j2")], l2);
  EXPECT_EQ(m.joint_body[m.JointId("j3")], arm);
  EXPECT_EQ(m.joint_type[m.JointId("j2")], kJointSlide);
  for (int b : {l1, l2, arm}) {
    EXPECT_GE(m.body_tree[b], 0) << m.body_name[b] << " is stepped in the articulated tree";
    EXPECT_NEAR(m.body_pos0[3 * b + 2], 1, 1e-6) << "every link at the body's frame";
  }
  // a trajectory CSV (s2r rollout) records the MJCF's body, not the links
  EXPECT_EQ(m.TrajectoryBodies(), std::vector<int>{arm});
  const std::vector<std::string> cols = TrajectoryColumns(m);
  EXPECT_EQ(cols.size(), 1u + 13u);
  EXPECT_EQ(cols[1], "arm.px");
}

// A limited ball is MuJoCo's cone on its rotation angle: the first hinge carries it
// (joint_limited 2, joint_range 0..hi in radians), the other two stay unlimited; SolveBallLimit
// enforces it (tests/python/test_robot_models.py compares a swing into it with MuJoCo).
TEST(MjcfLoad, BallConeLimitIsOnTheFirstHinge) {
  Model m = LoadMjcfString(R"(<mujoco><worldbody>
  <body name="b" pos="0 0 1"><joint name="j" type="ball" range="0 30"/><geom size="0.1" pos="0.2 0 0"/></body>
</worldbody></mujoco>)", "cone.xml");
  const int jx = m.JointId("j:x");  // the ball's parts are j:x, j:y, j:z
  ASSERT_GE(jx, 0);
  EXPECT_EQ(m.joint_part[jx], 1);
  EXPECT_EQ(m.joint_limited[jx], 2);
  EXPECT_EQ(m.joint_range[2 * jx], 0);
  EXPECT_NEAR(m.joint_range[2 * jx + 1], 30 * M_PI / 180, 1e-6);
  EXPECT_EQ(m.joint_limited[jx + 1], 0);
  EXPECT_EQ(m.joint_limited[jx + 2], 0);
  // and it holds: released horizontal with a spin, the rod hangs at 30 degrees from its reference
  Engine e(m, EngineOptions{});
  double worst = 0;
  for (int k = 0; k < 50; ++k) {
    e.Step(nullptr);
    e.Download();
    ASSERT_EQ(e.state().status[0], kWorldOk);
    const Real* q = e.state().view.body_quat(0, m.BodyId("b"));
    worst = std::fmax(worst, 2 * std::acos(std::fmin(1.0, std::fabs(double(q[0])))));
  }
  EXPECT_GT(worst, 29.5 * M_PI / 180) << "it reaches the cone";
  EXPECT_LT(worst, 30.5 * M_PI / 180) << "and stays within it";
}

// A ball joint is three hinges about the body's x, y, z through its anchor, the first two on
// massless links; its keyframe quaternion becomes their angles (x-y-z Euler) and its qvel their
// rates, so the start is MuJoCo's pose and angular velocity.
TEST(MjcfLoad, BallJointIsThreeHingesOnLinks) {
  Model m = Load(R"(<mujoco><compiler angle="radian"/><worldbody>
  <body name="top" pos="0 0 1" euler="0 0 0.3">
    <joint name="ball" type="ball" pos="0 0 0.1" damping="0.2" armature="0.01" axis="1 0 0"/>
    <geom size="0.1" mass="2"/>
  </body>
</worldbody>
<keyframe><key name="home" qpos="0.9 0.3 -0.2 0.25" qvel="1 -2 3"/></keyframe>
</mujoco>)");
  ASSERT_EQ(m.nbody(), 4);  // world, top:ball:x, top:ball:y, top
  const int lx = m.BodyId("top:ball:x"), ly = m.BodyId("top:ball:y"), top = m.BodyId("top");
  ASSERT_GE(lx, 0);
  ASSERT_GE(ly, 0);
  EXPECT_EQ(m.body_parent[ly], lx);
  EXPECT_EQ(m.body_parent[top], ly);
  EXPECT_EQ(m.body_link[lx] + m.body_link[ly], 2);
  EXPECT_EQ(m.nq(), 4);
  EXPECT_EQ(m.nv(), 3);
  const char* names[3] = {"ball:x", "ball:y", "ball:z"};
  for (int k = 0; k < 3; ++k) {
    const int j = m.JointId(names[k]);
    ASSERT_GE(j, 0) << names[k];
    EXPECT_EQ(m.joint_part[j], k + 1);
    EXPECT_EQ(m.joint_type[j], kJointHinge);
    EXPECT_EQ(m.joint_axis_child[3 * j + k], Real(1)) << "the axis attribute of a ball is not used";
    EXPECT_NEAR(m.joint_pos_child[3 * j + 2], 0.1, 1e-6);
    EXPECT_NEAR(m.joint_damping[j], 0.2, 1e-6);
    EXPECT_NEAR(m.joint_armature[j], 0.01, 1e-6);
    EXPECT_GE(m.body_tree[m.joint_body[j]], 0);
  }
  // the start: the body's frame turned by the key's quaternion, its angular velocity the key's
  // qvel in the body frame (both through the hinges' angles and rates)
  Engine e(m, EngineOptions{});
  const StateView& v = e.state().view;
  Quat key = NormalizeQuat(Quat{Real(0.9), Real(0.3), Real(-0.2), Real(0.25)});
  Quat want = QuatFromAxisAngle(Vec3{0, 0, 1}, Real(0.3)) * key;
  Quat got = LoadQuat(v.body_quat(0, top));
  EXPECT_NEAR(std::abs(double(Dot(Vec3{got.x, got.y, got.z}, Vec3{want.x, want.y, want.z}) + got.w * want.w)), 1.0,
              1e-6);
  Vec3 w = InvRotate(got, LoadVec3(v.body_angvel(0, top)));
  EXPECT_NEAR(w.x, 1, 1e-5);
  EXPECT_NEAR(w.y, -2, 1e-5);
  EXPECT_NEAR(w.z, 3, 1e-5);
  // joint_q reports the rotation vector from the reference orientation
  const double angle = 2 * std::acos(double(key.w));
  const double s = std::sin(angle / 2);
  for (int k = 0; k < 3; ++k) {
    const double axis_k = k == 0 ? key.x : k == 1 ? key.y : key.z;
    EXPECT_NEAR(e.state().joint_q[m.JointId(names[k])], angle * axis_k / s, 1e-5);
  }
}

// A free body with a jointed body below it is a floating base: three slides along the world axes
// and a ball on five links; a keyframe's free qpos / qvel start it where MuJoCo would.
TEST(MjcfLoad, FloatingBaseIsSlidesAndABall) {
  Model m = Load(R"(<mujoco><compiler angle="radian"/><worldbody>
  <body name="base" pos="0 0 1" euler="0.2 0 0.5">
    <freejoint name="root"/>
    <geom size="0.1" mass="2"/>
    <body name="arm" pos="0.1 0 0"><joint name="h" axis="0 1 0"/><geom size="0.05" mass="0.5"/></body>
  </body>
  <body name="box" pos="1 0 0"><freejoint/><geom size="0.1" mass="1"/></body>
</worldbody>
<keyframe><key name="home" qpos="0.1 0.2 1.1  0.9 0.1 0.3 -0.2  0.5  2 0 0.1 1 0 0 0"
                 qvel="0.3 -0.2 0.5  1 -0.5 2  3  0 0 0 0 0 0"/></keyframe>
</mujoco>)");
  EXPECT_EQ(m.nq(), 7 + 1 + 7);
  EXPECT_EQ(m.nv(), 6 + 1 + 6);
  const char* names[6] = {"root:tx", "root:ty", "root:tz", "root:x", "root:y", "root:z"};
  const int parts[6] = {4, 5, 6, 1, 2, 3};
  for (int k = 0; k < 6; ++k) {
    const int j = m.JointId(names[k]);
    ASSERT_GE(j, 0) << names[k];
    EXPECT_EQ(m.joint_part[j], parts[k]);
    EXPECT_EQ(m.joint_type[j], k < 3 ? kJointSlide : kJointHinge);
    EXPECT_TRUE(m.JointIsFreePart(j));
    EXPECT_GE(m.body_tree[m.joint_body[j]], 0);
  }
  EXPECT_EQ(m.joint_body[m.JointId("root:z")], m.BodyId("base"));
  EXPECT_EQ(m.joint_type[m.body_joint[m.BodyId("box")]], kJointFree) << "a free body alone stays free";
  EXPECT_TRUE(std::any_of(m.load_notes.begin(), m.load_notes.end(),
                          [](const std::string& n) { return n.find("a floating base") != std::string::npos; }));

  Engine e(m, EngineOptions{});
  const StateView& v = e.state().view;
  const int base = m.BodyId("base");
  const double want_pos[3] = {0.1, 0.2, 1.1};
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(v.body_pos(0, base)[k], want_pos[k], 1e-6);
  Quat key = NormalizeQuat(Quat{Real(0.9), Real(0.1), Real(0.3), Real(-0.2)});
  Quat got = LoadQuat(v.body_quat(0, base));
  EXPECT_NEAR(std::abs(double(got.w * key.w + got.x * key.x + got.y * key.y + got.z * key.z)), 1.0, 1e-6);
  // MuJoCo's free qvel: the origin's velocity (world) and the angular velocity (body frame); s2r
  // stores the COM's velocity, which at the origin (the COM: a sphere) is the same
  Vec3 w = InvRotate(got, LoadVec3(v.body_angvel(0, base)));
  EXPECT_NEAR(w.x, 1, 1e-5);
  EXPECT_NEAR(w.y, -0.5, 1e-5);
  EXPECT_NEAR(w.z, 2, 1e-5);
  const double want_v[3] = {0.3, -0.2, 0.5};
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(v.body_linvel(0, base)[k], want_v[k], 1e-5);
  EXPECT_NEAR(e.state().joint_q[m.JointId("root:tz")], 0.1, 1e-6) << "the slides report the offset from the reference";
}

TEST(MjcfLoadErrors, BallJointRules) {
  // a zero quaternion in a key, for a ball and for a floating base, named as in the file
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b"><joint name="j" type="ball"/><geom size="0.1"/></body>
</worldbody>
<keyframe><key qpos="0 0 0 0"/></keyframe></mujoco>)",
                        4, "<key>", "joint 'j' has a zero quaternion"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b"><freejoint name="root"/><geom size="0.1"/>
    <body name="c"><joint name="h"/><geom size="0.1"/></body>
  </body>
</worldbody>
<keyframe><key qpos="0 0 1 0 0 0 0 0.5"/></keyframe></mujoco>)",
                        6, "<key>", "joint 'root' has a zero quaternion"));
  // a ball's limit is a cone on its rotation angle: range[0] must be 0, as in MuJoCo
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b"><joint name="j" type="ball" range="-10 30"/><geom size="0.1"/></body>
</worldbody></mujoco>)",
                        2, "<joint name='j'>", "a ball joint's range[0] must be 0"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b"><joint name="j" type="ball" stiffness="2" springref="0.1"/><geom size="0.1"/></body>
</worldbody></mujoco>)",
                        2, "<joint name='j'>", "a ball joint's spring rests at its reference orientation"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b"><joint name="j" type="ball"/><geom size="0.1"/></body>
</worldbody>
<actuator><motor joint="j"/></actuator></mujoco>)",
                        4, "<motor>", "is a ball joint"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b"><joint name="j" type="ball"/><geom size="0.1"/></body>
  <body name="c"><joint name="h"/><geom size="0.1"/></body>
</worldbody>
<equality><joint joint1="h" joint2="j"/></equality></mujoco>)",
                        5, "<joint>", "is not a hinge or slide joint"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b"><joint name="j" type="ball"/><joint name="h"/><geom size="0.1"/></body>
</worldbody></mujoco>)",
                        2, "<joint name='j'>", "hinges and slides only (this one is ball)"));
  // a ball no articulated tree takes (s2r_reduce_trees 0; below a free body it would be a
  // floating base's tree otherwise)
  EXPECT_TRUE(FailsWith(R"(<mujoco><custom><numeric name="s2r_reduce_trees" data="0"/></custom><worldbody>
  <body name="base"><freejoint/><geom size="0.1"/>
    <body name="b"><joint name="j" type="ball"/><geom size="0.1"/></body>
  </body>
</worldbody></mujoco>)",
                        3, "<joint name='j'>", "part of a ball joint"));
}

TEST(MjcfLoadErrors, SeveralJointsInOneBody) {
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b">
    <freejoint/>
    <joint name="j"/>
    <geom size="0.1"/>
  </body>
</worldbody></mujoco>)",
                        3, "<freejoint>", "a body with several joints takes hinges and slides only (this one is free)"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b">
    <joint name="j"/>
    <freejoint/>
    <geom size="0.1"/>
  </body>
</worldbody></mujoco>)",
                        4, "<freejoint>", "a body with several joints takes hinges and slides only (this one is free)"));
  // in maximal coordinates a body needs mass: the links are stepped only in articulated trees
  EXPECT_TRUE(FailsWith(R"(<mujoco>
  <custom><numeric name="s2r_reduce_trees" data="0"/></custom>
  <worldbody>
  <body name="arm">
    <joint name="j1"/>
    <joint name="j2" axis="1 0 0"/>
    <geom size="0.1"/>
  </body>
</worldbody></mujoco>)",
                        5, "<joint name='j1'>", "joint 'j1' is one of several joints of one body"));
}

TEST(MjcfLoadErrors, JointRules) {
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="a"><joint/><geom size="0.1"/>
    <body name="b"><freejoint name="f"/><geom size="0.1"/></body>
  </body>
</worldbody></mujoco>)",
                        3, "<freejoint name='f'>", "direct child of <worldbody>"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body><joint name="j" axis="0 0 0"/><geom size="0.1"/></body>
</worldbody></mujoco>)",
                        2, "<joint name='j'>", "'axis' is the zero vector"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body><joint name="j" range="1 -1"/><geom size="0.1"/></body>
</worldbody></mujoco>)",
                        2, "<joint name='j'>", "lo < hi"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body><joint name="j" damping="-1"/><geom size="0.1"/></body>
</worldbody></mujoco>)",
                        2, "<joint name='j'>", "'damping' must be >= 0"));
}

TEST(MjcfLoadErrors, GeomRules) {
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b"><freejoint/>
    <geom name="p" type="plane" size="1 1 1"/>
    <geom size="0.1"/>
  </body>
</worldbody></mujoco>)",
                        3, "<geom name='p'>", "static body"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="g" size="0.1" mass="1" density="2"/>
</worldbody></mujoco>)",
                        2, "<geom name='g'>", "'mass' and 'density' are both given"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="g" size="0.1" fromto="0 0 0 0 0 1"/>
</worldbody></mujoco>)",
                        2, "<geom name='g'>", "only supported for capsule, cylinder and box"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="g" type="capsule" size="0.1" fromto="0 0 0 0 0 1" pos="1 0 0"/>
</worldbody></mujoco>)",
                        2, "<geom name='g'>", "cannot be combined with 'pos'"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="g" type="capsule" size="0.1" fromto="1 1 1 1 1 1"/>
</worldbody></mujoco>)",
                        2, "<geom name='g'>", "coinciding end points"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="g" size="0.1" quat="1 0 0 0" euler="0 0 0"/>
</worldbody></mujoco>)",
                        2, "<geom name='g'>", "more than one of 'quat', 'euler', 'axisangle'"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b" quat="0 0 0 0"><geom size="0.1"/></body>
</worldbody></mujoco>)",
                        2, "<body name='b'>", "zero quaternion"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="p" type="plane" size="1 1 0"/>
</worldbody></mujoco>)",
                        2, "<geom name='p'>", "spacing > 0"));
}

TEST(MjcfLoadErrors, DuplicateNames) {
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <geom name="a" size="1"/>
  <body name="a">
    <geom name="a" size="1"/>
  </body>
</worldbody></mujoco>)",
                        4, "<geom name='a'>", "duplicate geom name 'a'"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="world"><geom size="1"/></body>
</worldbody></mujoco>)",
                        2, "<body name='world'>", "duplicate body name 'world'"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><default>
  <default class="a"/>
  <default class="a"/>
</default></mujoco>)",
                        3, "<default class='a'>", "duplicate default class 'a'"));
}

TEST(MjcfLoadErrors, OneActuatorDefaultPerClass) {
  EXPECT_TRUE(FailsWith(R"(<mujoco><default>
  <position kp="9"/>
  <velocity kv="7"/>
  <position kv="7"/>
</default></mujoco>)",
                        4, "<position>", "already has a <position> (line 2)"));
}

TEST(MjcfLoadErrors, TextAndStructure) {
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b">hello<geom size="1"/></body>
</worldbody></mujoco>)",
                        2, "<body name='b'>", "unexpected text 'hello'"));
  // two top-level <default>s add to class main (as in MuJoCo); a class name twice is an error
  EXPECT_TRUE(FailsWith(R"(<mujoco>
  <default><default class="a"/></default>
  <default><default class="a"/></default>
</mujoco>)",
                        3, "<default class='a'>", "duplicate default class 'a'"));
  EXPECT_TRUE(FailsWith(R"(<mujoco><worldbody>
  <body name="b"><freejoint/><geom size="1"/>
    <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
    <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
  </body>
</worldbody></mujoco>)",
                        4, "<inertial>", "at most one <inertial>"));
}

TEST(MjcfLoadErrors, LineNumbersWithWindowsLineEnds) {
  EXPECT_TRUE(
      FailsWith("<mujoco>\r\n<worldbody>\r\n\r\n  <geom name='g' size='-1'/>\r\n"
                "</worldbody>\r\n</mujoco>\r\n",
                4, "<geom name='g'>", "must be > 0"));
}

TEST(MjcfLoadErrors, FinalizeErrorsNameTheFile) {
  // 1 / (30 Hz * 0.005 s) is not a whole number of steps: found by Model::Finalize
  try {
    Load(R"(<mujoco><option timestep="0.005"/>
<custom><numeric name="s2r_control_hz" data="30"/></custom></mujoco>)");
    ADD_FAILURE() << "expected LoadError";
  } catch (const LoadError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("test.xml: ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("timestep"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace s2r
