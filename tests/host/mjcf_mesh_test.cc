// Mesh, cylinder and ellipsoid geoms in MJCF (host/scene/mjcf_mesh.h, mjcf_body.cc): loading,
// frames and mass, the errors for bad mesh assets, and resting / stacking dynamics of the convex
// narrow phase (kernels/collide_convex.h) in the engine.
#include "host/scene/mjcf_mesh.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

#include "tests/host/mesh_files.h"
#include "tests/host/test_dir.h"
#include "tests/host/test_scenes.h"

namespace s2r {
namespace {

using test_util::BodySample;
using test_util::BoxTriangles;
using test_util::Sample;
using test_util::Scene;

// writes `xml` as scene.xml into the test directory and loads it (mesh paths are relative to it)
Model LoadInDir(const std::string& xml) {
  const std::string path = TestDir() + "/scene.xml";
  std::ofstream(path) << xml;
  return LoadMjcfFile(path);
}

// the message of the LoadError that loading throws, or "" if it loads
std::string LoadErrorOf(const std::string& xml) {
  try {
    LoadInDir(xml);
  } catch (const LoadError& e) {
    return e.what();
  }
  return "";
}

TEST(MjcfMesh, MeshGeomFrameMassAndHull) {
  // a 0.1 m cube mesh whose file frame is offset by (0.3, 0, 0): the geom frame moves to its
  // centroid, the body's mass is density x volume, its inertia the box's
  test_util::WriteBinaryStl(TestDir() + "/cube.stl", BoxTriangles({0.3, 0, 0}, {0.05, 0.05, 0.05}));
  const Model m = LoadInDir(Scene(R"(
  <asset><mesh name="cube" file="cube.stl"/></asset>
  <worldbody>
    <body name="b" pos="0 0 1"><freejoint/>
      <geom name="g" type="mesh" mesh="cube" pos="0 0.2 0" density="500"/>
    </body>
  </worldbody>)"));
  const int g = m.GeomId("g");
  ASSERT_GE(g, 0);
  EXPECT_EQ(m.geom_type[g], kGeomMesh);
  EXPECT_NEAR(m.geom_pos[3 * g], 0.3, 1e-6);
  EXPECT_NEAR(m.geom_pos[3 * g + 1], 0.2, 1e-6);
  EXPECT_EQ(m.geom_hull[2 * g + 1], 8);
  EXPECT_EQ(m.nhullvert(), 8);
  EXPECT_NEAR(m.geom_size[3 * g], std::sqrt(3.0) * 0.05, 1e-6);  // bounding radius
  const int b = m.BodyId("b");
  EXPECT_NEAR(m.body_mass[b], 500 * 0.001, 1e-6);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(m.body_inertia[3 * b + k], 0.5 * (0.01 + 0.01) / 12, 1e-9);
    EXPECT_NEAR(m.body_ipos[3 * b + k], k == 0 ? 0.3 : (k == 1 ? 0.2 : 0.0), 1e-6);
  }
}

TEST(MjcfMesh, MeshdirScaleCylinderAndEllipsoidMass) {
  const std::string dir = TestDir() + "/assets";
  std::system(("mkdir -p " + dir).c_str());
  test_util::WriteObj(dir + "/box.obj", BoxTriangles({0, 0, 0}, {1, 1, 1}));
  const Model m = LoadInDir(Scene(R"(
  <compiler meshdir="assets"/>
  <asset><mesh file="box.obj" scale="0.1 0.2 0.05"/></asset>
  <worldbody>
    <body name="m" pos="0 0 1"><freejoint/><geom type="mesh" mesh="box" mass="2"/></body>
    <body name="c" pos="1 0 1"><freejoint/><geom type="cylinder" size="0.1 0.2" density="1000"/></body>
    <body name="e" pos="2 0 1"><freejoint/><geom type="ellipsoid" size="0.1 0.2 0.3" density="1000"/></body>
    <body name="f" pos="3 0 1"><freejoint/><geom type="cylinder" fromto="0 0 0 0 0 0.4" size="0.1"/></body>
  </worldbody>)"));
  // scaled box mesh: half-extents 0.1 0.2 0.05, named after its file
  const int mb = m.BodyId("m");
  EXPECT_NEAR(m.body_mass[mb], 2, 1e-6);
  std::vector<double> got = {m.body_inertia[3 * mb], m.body_inertia[3 * mb + 1], m.body_inertia[3 * mb + 2]};
  std::vector<double> want = {2 * (0.16 + 0.01) / 12, 2 * (0.04 + 0.01) / 12, 2 * (0.04 + 0.16) / 12};
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(got[k], want[k], 1e-6);
  // cylinder: V = pi r^2 2h, I_axis = m r^2 / 2, I_lateral = m (3 r^2 + 4 h^2) / 12
  const int c = m.BodyId("c");
  const double mc = 1000 * M_PI * 0.01 * 0.4;
  EXPECT_NEAR(m.body_mass[c], mc, 1e-3);
  got = {m.body_inertia[3 * c], m.body_inertia[3 * c + 1], m.body_inertia[3 * c + 2]};
  std::sort(got.begin(), got.end());
  EXPECT_NEAR(got[0], mc * 0.01 / 2, 1e-5);
  EXPECT_NEAR(got[2], mc * (0.03 + 0.16) / 12, 1e-5);
  // ellipsoid: V = 4/3 pi abc, I_x = m (b^2 + c^2) / 5
  const int e = m.BodyId("e");
  const double me = 1000 * 4.0 / 3.0 * M_PI * 0.006;
  EXPECT_NEAR(m.body_mass[e], me, 1e-3);
  got = {m.body_inertia[3 * e], m.body_inertia[3 * e + 1], m.body_inertia[3 * e + 2]};
  std::sort(got.begin(), got.end());
  EXPECT_NEAR(got[0], me * (0.01 + 0.04) / 5, 1e-5);
  EXPECT_NEAR(got[2], me * (0.04 + 0.09) / 5, 1e-5);
  // fromto cylinder: half-length 0.2 from the segment
  const int fg = m.geom_body[m.ngeom() - 1] == m.BodyId("f") ? m.ngeom() - 1 : -1;
  ASSERT_GE(fg, 0);
  EXPECT_EQ(m.geom_type[fg], kGeomCylinder);
  EXPECT_NEAR(m.geom_size[3 * fg + 1], 0.2, 1e-6);
}

TEST(MjcfMesh, MeshDefaultsScaleByClass) {
  // <default><mesh scale> applies to every mesh, a class's to the meshes of that class, and the
  // element's own attribute wins (bounding radius of a unit-half-extent cube: sqrt(3) x scale)
  test_util::WriteBinaryStl(TestDir() + "/cube.stl", BoxTriangles({0, 0, 0}, {1, 1, 1}));
  const Model m = LoadInDir(Scene(R"(
  <default>
    <mesh scale="0.01 0.01 0.01"/>
    <default class="big"><mesh scale="0.1 0.1 0.1"/></default>
  </default>
  <asset>
    <mesh name="plain" file="cube.stl"/>
    <mesh name="big" class="big" file="cube.stl"/>
    <mesh name="own" class="big" file="cube.stl" scale="0.2 0.2 0.2"/>
  </asset>
  <worldbody>
    <body><freejoint/><geom name="plain" type="mesh" mesh="plain"/></body>
    <body><freejoint/><geom name="big" type="mesh" mesh="big"/></body>
    <body><freejoint/><geom name="own" type="mesh" mesh="own"/></body>
  </worldbody>)"));
  EXPECT_NEAR(m.geom_size[3 * m.GeomId("plain")], 0.01 * std::sqrt(3.0), 1e-6);
  EXPECT_NEAR(m.geom_size[3 * m.GeomId("big")], 0.1 * std::sqrt(3.0), 1e-6);
  EXPECT_NEAR(m.geom_size[3 * m.GeomId("own")], 0.2 * std::sqrt(3.0), 1e-6);
}

TEST(MjcfMesh, BadMeshAssetsNameFileLineAndMesh) {
  const std::string dir = TestDir();
  std::ofstream(dir + "/empty.stl").close();
  test_util::WriteBinaryStl(dir + "/flat.stl", {{{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}}},
                                                {{{0, 0, 0}, {1, 1, 0}, {0, 1, 0}}}});
  test_util::WriteBinaryStl(dir + "/ok.stl", BoxTriangles({0, 0, 0}, {0.1, 0.1, 0.1}));
  struct Case {
    std::string asset, geom, want;
    bool at_asset = false;  // the error names the <mesh> line although a geom's use found it
  };
  // a mesh file is read when a simulated geom first uses it (one only visual geoms use never is)
  const std::string use = R"(<geom type="mesh" mesh="a"/>)";
  const Case cases[] = {
      {R"(<mesh name="a" file="nope.stl"/>)", use, "cannot open mesh file", true},
      {R"(<mesh name="a" file="empty.stl"/>)", use, "empty.stl", true},
      {R"(<mesh name="a" file="flat.stl"/>)", use, "span no volume", true},
      {R"(<mesh name="a"/>)", "", "missing attribute 'file'"},
      {R"(<mesh name="a" file="ok.stl" maxhullvert="3"/>)", "", "maxhullvert"},
      {R"(<mesh name="a" file="ok.stl" scale="1 0 1"/>)", "", "scale"},
      {R"(<mesh name="a" file="ok.stl"/><hfield name="h"/>)", "", "not supported inside <asset>"},
      {R"(<mesh name="a" file="ok.stl"/>)", R"(<geom type="mesh"/>)", "needs attribute 'mesh'"},
      {R"(<mesh name="a" file="ok.stl"/>)", R"(<geom type="mesh" mesh="b"/>)", "names no mesh"},
  };
  for (const Case& c : cases) {
    // Scene() puts 7 lines before `body`: <asset> is line 8, its child 9, the geom 11
    const std::string xml = Scene("<asset>\n" + c.asset + "\n</asset>\n<worldbody><body><freejoint/>" +
                                  (c.geom.empty() ? "<geom size=\"0.1\"/>" : c.geom) +
                                  "</body></worldbody>\n");
    const std::string msg = LoadErrorOf(xml);
    SCOPED_TRACE(c.asset + " " + c.geom + " -> " + msg);
    EXPECT_NE(msg.find("scene.xml:"), std::string::npos);
    EXPECT_NE(msg.find(c.want), std::string::npos);
    if (c.geom.empty() || c.at_asset) {
      EXPECT_NE(msg.find(":9: <"), std::string::npos) << "the <asset> child's line";
    } else {
      EXPECT_NE(msg.find(":11: <geom"), std::string::npos) << "the geom's line";
    }
  }
}

// --- dynamics ------------------------------------------------------------------------------------

const char* kFloor = R"(<geom name="floor" type="plane" size="0 0 1"/>)";

TEST(MjcfMeshDynamics, MeshBoxRestsOnPlaneAndStackStands) {
  // a 0.1 m cube mesh resting on the floor, and a stack of three on a box table: after 5 s every
  // cube is within 1 mm of where it started (soft contacts settle < 0.1 mm per interface) and
  // upright within 1 degree
  test_util::WriteBinaryStl(TestDir() + "/cube.stl", BoxTriangles({0, 0, 0}, {0.05, 0.05, 0.05}));
  const Model m = LoadInDir(Scene(std::string(R"(
  <asset><mesh name="cube" file="cube.stl"/></asset>
  <worldbody>)") + kFloor + R"(
    <body name="single" pos="0 0 0.05"><freejoint/><geom type="mesh" mesh="cube" density="500"/></body>
    <geom name="table" type="box" size="0.2 0.2 0.1" pos="1 0 0.1"/>
    <body name="s1" pos="1 0 0.25"><freejoint/><geom type="mesh" mesh="cube" density="500"/></body>
    <body name="s2" pos="1 0 0.35"><freejoint/><geom type="mesh" mesh="cube" density="500"/></body>
    <body name="s3" pos="1.01 0.01 0.45"><freejoint/><geom type="mesh" mesh="cube" density="500"/></body>
  </worldbody>)", 0.002, 4));
  Engine e(m, EngineOptions{});
  std::vector<BodySample> start;
  for (int b = 1; b < m.nbody(); ++b) start.push_back(Sample(e, 0, b));
  for (int k = 0; k < 250; ++k) e.Step(nullptr);  // 5 s at 50 Hz control
  for (int b = 1; b < m.nbody(); ++b) {
    const BodySample s = Sample(e, 0, b);
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(s.pos[k], start[b - 1].pos[k], 1e-3) << m.body_name[b] << " axis " << k;
    }
    EXPECT_GT(std::abs(s.quat[0]), std::cos(0.5 * M_PI / 180)) << m.body_name[b];
    EXPECT_LT(std::abs(s.linvel[2]), 1e-2) << m.body_name[b];
  }
  EXPECT_EQ(e.state().status[0], kWorldOk);
}

TEST(MjcfMeshDynamics, CylinderAndEllipsoidComeToRestAtTheirClosedFormHeights) {
  // dropped from 2 cm: a cylinder on its end rests at h, one on its side at r, an ellipsoid at its
  // z semi-axis (1 mm: soft-contact settling and the speculative margin)
  const Model m = LoadInDir(Scene(std::string("<worldbody>") + kFloor + R"(
    <body name="end" pos="0 0 0.12"><freejoint/><geom type="cylinder" size="0.05 0.1" density="500"/></body>
    <body name="side" pos="1 0 0.07" euler="1.5707963 0 0"><freejoint/><geom type="cylinder" size="0.05 0.1" density="500"/></body>
    <body name="ell" pos="2 0 0.1" ><freejoint/><geom type="ellipsoid" size="0.1 0.06 0.08" density="500"/></body>
  </worldbody>)", 0.002, 4));
  Engine e(m, EngineOptions{});
  for (int k = 0; k < 150; ++k) e.Step(nullptr);  // 3 s
  EXPECT_NEAR(Sample(e, 0, m.BodyId("end")).pos[2], 0.1, 1e-3);
  EXPECT_NEAR(Sample(e, 0, m.BodyId("side")).pos[2], 0.05, 1e-3);
  EXPECT_NEAR(Sample(e, 0, m.BodyId("ell")).pos[2], 0.08, 1e-3);
  for (const char* name : {"end", "side", "ell"}) {
    const BodySample s = Sample(e, 0, m.BodyId(name));
    EXPECT_LT(std::abs(s.linvel[2]) + std::abs(s.angvel[0]) + std::abs(s.angvel[1]), 1e-2) << name;
  }
}

}  // namespace
}  // namespace s2r
