// Mesh assets (host/scene/mesh_hull.h): reading STL/OBJ, hulls, the inertial frame, mass
// properties, and the errors for unusable meshes. Closed-form answers; 1e-9 relative where the
// integrals are exact in double precision, 1e-6 m where float STL coordinates enter.
#include "host/scene/mesh_hull.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "tests/host/mesh_files.h"
#include "tests/host/test_dir.h"

namespace s2r {
namespace {

using test_util::BoxTriangles;
using test_util::PrismTriangles;
using test_util::TetraTriangles;

TEST(MeshHull, BoxFileGivesCentredHullAndBoxInertia) {
  // a 0.2 x 0.4 x 0.6 box centred at (1, 2, 3) in the file, scaled by 0.5 along x
  const std::string path = TestDir() + "/box.stl";
  test_util::WriteBinaryStl(path, BoxTriangles({2, 2, 3}, {0.2, 0.2, 0.3}));
  const MeshHull h = LoadMeshHull(path, {0.5, 1, 1}, kDefaultMaxHullVertices);
  ASSERT_EQ(h.vertices.size(), 8u);
  EXPECT_EQ(h.file_vertices, 8);  // identical STL corners are merged
  const double a = 0.2, b = 0.4, c = 0.6;  // full extents after scaling
  // the STL stores float32 coordinates: 1e-6 relative
  EXPECT_NEAR(h.volume, a * b * c, 1e-6 * a * b * c);
  EXPECT_NEAR(h.pos[0], 1, 1e-6);
  EXPECT_NEAR(h.pos[1], 2, 1e-6);
  EXPECT_NEAR(h.pos[2], 3, 1e-6);
  // principal moments per unit density: V (b^2 + c^2) / 12 etc., in some axis order
  std::vector<double> want = {a * b * c * (b * b + c * c) / 12, a * b * c * (a * a + c * c) / 12,
                              a * b * c * (a * a + b * b) / 12};
  std::vector<double> got(h.inertia.begin(), h.inertia.end());
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(got[k], want[k], 1e-6 * want[k]);
  // the hull vertices sit symmetric about the centroid in the inertial frame
  for (const auto& v : h.vertices) {
    const double r2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    EXPECT_NEAR(r2, (a * a + b * b + c * c) / 4, 1e-6);
  }
}

TEST(MeshHull, AsciiStlAndObjReadTheSameTetrahedron) {
  const auto tris = TetraTriangles({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1});
  test_util::WriteAsciiStl(TestDir() + "/t.stl", tris);
  test_util::WriteObj(TestDir() + "/t.obj", tris);
  for (const char* name : {"/t.stl", "/t.obj"}) {
    const MeshHull h = LoadMeshHull(TestDir() + name, {1, 1, 1}, kDefaultMaxHullVertices);
    EXPECT_EQ(h.vertices.size(), 4u) << name;
    EXPECT_NEAR(h.volume, 1.0 / 6.0, 1e-9) << name;
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(h.pos[k], 0.25, 1e-9) << name;
  }
}

TEST(MeshHull, NonConvexMeshKeepsItsVolumeAndHullsTheRest) {
  // an L of two unit cubes: mass from the surface (2 m^3), collision from the hull (3 faces cut)
  std::vector<test_util::Tri> tris = BoxTriangles({0.5, 0.5, 0.5}, {0.5, 0.5, 0.5});
  const auto second = BoxTriangles({1.5, 0.5, 0.5}, {0.5, 0.5, 0.5});
  tris.insert(tris.end(), second.begin(), second.end());
  const auto third = BoxTriangles({0.5, 1.5, 0.5}, {0.5, 0.5, 0.5});
  tris.insert(tris.end(), third.begin(), third.end());
  test_util::WriteBinaryStl(TestDir() + "/l.stl", tris);
  const MeshHull h = LoadMeshHull(TestDir() + "/l.stl", {1, 1, 1}, kDefaultMaxHullVertices);
  // overlapping internal faces cancel in the signed integral: 3 unit cubes
  EXPECT_NEAR(h.volume, 3.0, 1e-9);
  // the hull of the L is a prism on the pentagon (0,0) (2,0) (2,1) (1,2) (0,2): 10 vertices
  EXPECT_EQ(h.vertices.size(), 10u);
}

TEST(MeshHull, MaxHullVerticesCapsTheHull) {
  const std::string path = TestDir() + "/prism.stl";
  test_util::WriteBinaryStl(path, PrismTriangles(64, 0.05, 0.1));
  const MeshHull full = LoadMeshHull(path, {1, 1, 1}, kDefaultMaxHullVertices);
  EXPECT_EQ(full.vertices.size(), 128u);
  const MeshHull capped = LoadMeshHull(path, {1, 1, 1}, 20);
  EXPECT_LE(capped.vertices.size(), 20u);
  EXPECT_GE(capped.vertices.size(), 4u);
  // the volume is the mesh's, whatever the cap
  EXPECT_NEAR(capped.volume, full.volume, 1e-12);
}

TEST(MeshHull, UnusableMeshesThrowWithTheReason) {
  auto message = [](const std::string& path) {
    try {
      LoadMeshHull(path, {1, 1, 1}, kDefaultMaxHullVertices);
    } catch (const MeshError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string dir = TestDir();
  EXPECT_NE(message(dir + "/missing.stl").find("cannot open mesh file"), std::string::npos);
  // an empty file, and text that is no mesh format
  std::ofstream(dir + "/empty.stl").close();
  EXPECT_NE(message(dir + "/empty.stl").find("empty.stl"), std::string::npos);
  std::ofstream(dir + "/junk.obj") << "this is not a mesh\n";
  const std::string junk = message(dir + "/junk.obj");
  EXPECT_NE(junk.find("junk.obj"), std::string::npos) << junk;
  // a flat mesh: two triangles in the plane z = 0
  test_util::WriteBinaryStl(dir + "/flat.stl", {{{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}}},
                                                {{{0, 0, 0}, {1, 1, 0}, {0, 1, 0}}}});
  const std::string flat = message(dir + "/flat.stl");
  EXPECT_NE(flat.find("span no volume"), std::string::npos) << flat;
  EXPECT_NE(flat.find("flat.stl"), std::string::npos) << flat;
}

}  // namespace
}  // namespace s2r
