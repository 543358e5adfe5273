// Convex narrow-phase tests (kernels/collide_convex.h, collide_gjk.h): mesh hulls, cylinders and
// ellipsoids against closed-form answers and against the primitive pairs they must agree with.
//
// Tolerances (float32 Real at metre scale): kExact = 1e-6 m where the answer comes from the same
// arithmetic as the reference (plane against hull vertices); kGjk = 1e-5 m for GJK distances;
// kEpa = 2e-4 m for EPA depths on polytopes; curved shapes through EPA are looser, stated per test.
#include "kernels/collide.h"
#include "tests/kernels/exact_box_distance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <vector>

namespace s2r {
namespace {

constexpr Real kExact = Real(1e-6);
constexpr Real kGjk = Real(1e-5);
constexpr Real kEpa = Real(2e-4);

Transform Pose(Real x, Real y, Real z, Quat q = QuatIdentity()) {
  return Transform{Vec3{x, y, z}, q};
}
Quat AxisAngle(Real x, Real y, Real z, Real angle) {
  return QuatFromAxisAngle(Normalize(Vec3{x, y, z}), angle);
}

// the eight corners of a box as a hull (bit k of the index: +h along axis k)
std::vector<Real> BoxHull(Real hx, Real hy, Real hz) {
  std::vector<Real> v;
  for (int i = 0; i < 8; ++i) {
    v.push_back((i & 1) ? hx : -hx);
    v.push_back((i & 2) ? hy : -hy);
    v.push_back((i & 4) ? hz : -hz);
  }
  return v;
}

// a geodesic-ish sphere hull: latitude rings of points on radius r
std::vector<Real> SphereHull(Real r, int rings, int per_ring) {
  std::vector<Real> v = {0, 0, r, 0, 0, -r};
  for (int i = 1; i < rings; ++i) {
    const double th = M_PI * i / rings;
    for (int k = 0; k < per_ring; ++k) {
      const double ph = 2 * M_PI * (k + 0.5 * (i % 2)) / per_ring;
      v.push_back(Real(r * std::sin(th) * std::cos(ph)));
      v.push_back(Real(r * std::sin(th) * std::sin(ph)));
      v.push_back(Real(r * std::cos(th)));
    }
  }
  return v;
}

GeomHull Hull(const std::vector<Real>& v) { return GeomHull{v.data(), int(v.size() / 3)}; }

Real MinSeparation(const ContactPoint* c, int n) {
  Real m = Real(1e30);
  for (int i = 0; i < n; ++i) m = std::min(m, c[i].separation);
  return m;
}

// ---------------------------------------------------------------------------------------------
// plane against hulls, cylinders, ellipsoids

TEST(CollidePlaneConvex, CubeMeshMatchesPlaneBox) {
  const Real h[3] = {0.1, 0.2, 0.15};
  const std::vector<Real> hull = BoxHull(h[0], h[1], h[2]);
  const Real mesh_size[3] = {std::sqrt(Real(0.0725)), 0, 0};
  const Transform poses[] = {Pose(0, 0, 0.14), Pose(0.3, -0.2, 0.12, AxisAngle(1, 2, 0.5, 0.3)),
                             Pose(0, 0, 0.155, AxisAngle(0, 0, 1, 0.7))};
  for (const Transform& pose : poses) {
    ContactPoint box[kMaxManifoldPoints], mesh[kMaxManifoldPoints];
    const int nb = CollideGeoms(kGeomPlane, Pose(0, 0, 0), nullptr, kGeomBox, pose, h, 0.01, box);
    const int nm = CollideGeoms(kGeomPlane, Pose(0, 0, 0), nullptr, kGeomMesh, pose, mesh_size,
                                0.01, mesh, GeomHull{}, Hull(hull));
    ASSERT_EQ(nm, nb);
    ASSERT_GT(nb, 0);
    // same vertices (the hull indexes its corners like the box), same depths
    for (int i = 0; i < nb; ++i) {
      bool found = false;
      for (int j = 0; j < nm; ++j) {
        if (mesh[j].feature != box[i].feature) continue;
        found = true;
        EXPECT_NEAR(mesh[j].separation, box[i].separation, kExact);
        EXPECT_NEAR(mesh[j].point.x, box[i].point.x, kExact);
        EXPECT_NEAR(mesh[j].point.y, box[i].point.y, kExact);
        EXPECT_NEAR(mesh[j].point.z, box[i].point.z, kExact);
        EXPECT_NEAR(mesh[j].normal.z, 1, kExact);
      }
      EXPECT_TRUE(found) << "box vertex " << box[i].feature << " missing from the mesh manifold";
    }
  }
}

TEST(CollidePlaneConvex, CylinderOnItsEndAndSide) {
  const Real s[2] = {0.05, 0.1};
  ContactPoint c[kMaxManifoldPoints];
  // standing on its end, 1 mm deep: four points on the rim, all 1 mm deep
  int n = CollideGeoms(kGeomPlane, Pose(0, 0, 0), nullptr, kGeomCylinder, Pose(0, 0, 0.099), s,
                       0.002, c);
  ASSERT_EQ(n, 4);
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(c[i].separation, -0.001, kExact);
    EXPECT_NEAR(std::hypot(c[i].point.x, c[i].point.y), 0.05, kExact);
  }
  // lying on its side (axis along x), 2 mm above: the two ends of the bottom line, separated
  n = CollideGeoms(kGeomPlane, Pose(0, 0, 0), nullptr, kGeomCylinder,
                   Pose(0, 0, 0.052, AxisAngle(0, 1, 0, kPi / 2)), s, 0.003, c);
  ASSERT_EQ(n, 2);
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(c[i].separation, 0.002, kExact);
    EXPECT_NEAR(std::abs(c[i].point.x), 0.1, kExact);
    EXPECT_NEAR(c[i].point.y, 0, kExact);
  }
  // beyond the margin: nothing
  EXPECT_EQ(CollideGeoms(kGeomPlane, Pose(0, 0, 0), nullptr, kGeomCylinder,
                         Pose(0, 0, 0.052, AxisAngle(0, 1, 0, kPi / 2)), s, 0.001, c),
            0);
  // tilted 30 degrees about x: one lowest rim point, at the closed-form height
  const Real tilt = kPi / 6;
  n = CollideGeoms(kGeomPlane, Pose(0, 0, 0), nullptr, kGeomCylinder,
                   Pose(0, 0, 0.1, AxisAngle(1, 0, 0, tilt)), s, 0.0, c);
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].separation, 0.1 - (0.1 * std::cos(tilt) + 0.05 * std::sin(tilt)), kExact);
}

TEST(CollidePlaneConvex, EllipsoidLowestPoint) {
  const Real r[3] = {0.1, 0.05, 0.2};
  ContactPoint c[kMaxManifoldPoints];
  // axis-aligned: lowest point at z - r_z
  int n = CollideGeoms(kGeomPlane, Pose(0, 0, 0), nullptr, kGeomEllipsoid, Pose(0.1, 0, 0.19), r,
                       0.0, c);
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].separation, -0.01, kExact);
  EXPECT_NEAR(c[0].point.x, 0.1, kExact);
  // rotated by a about y: support height sqrt((r_x sin a)^2 + (r_z cos a)^2)
  const Real a = 0.6;
  n = CollideGeoms(kGeomPlane, Pose(0, 0, 0), nullptr, kGeomEllipsoid,
                   Pose(0, 0, 0.15, AxisAngle(0, 1, 0, a)), r, 0.1, c);
  ASSERT_EQ(n, 1);
  const Real reach = std::sqrt(std::pow(0.1 * std::sin(a), 2) + std::pow(0.2 * std::cos(a), 2));
  EXPECT_NEAR(c[0].separation, 0.15 - reach, 1e-6);
  // the plane given second: the normal flips
  n = CollideGeoms(kGeomEllipsoid, Pose(0, 0, 0.15), r, kGeomPlane, Pose(0, 0, 0), nullptr, 0.1, c);
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].normal.z, -1, kExact);
}

// ---------------------------------------------------------------------------------------------
// GJK distances (separated) and EPA depths (overlapping)

TEST(CollideConvex, SphereAgainstMeshSphereAndCube) {
  // a sphere against a cube hull: face distance exact, through GJK
  const std::vector<Real> cube = BoxHull(0.1, 0.1, 0.1);
  const Real cube_size[3] = {std::sqrt(Real(0.03)), 0, 0};
  const Real sphere[1] = {0.05};
  ContactPoint c[kMaxManifoldPoints];
  int n = CollideGeoms(kGeomSphere, Pose(0.153, 0.02, -0.01), sphere, kGeomMesh, Pose(0, 0, 0),
                       cube_size, 0.01, c, GeomHull{}, Hull(cube));
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].separation, 0.003, kGjk);
  EXPECT_NEAR(c[0].normal.x, -1, kGjk);
  // the same sphere 4 mm inside the face: core outside, no EPA needed, still exact
  n = CollideGeoms(kGeomSphere, Pose(0.146, 0.02, -0.01), sphere, kGeomMesh, Pose(0, 0, 0),
                   cube_size, 0.01, c, GeomHull{}, Hull(cube));
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].separation, -0.004, kGjk);
  // a sphere against a polyhedral sphere of radius R: gap between |d| - r - R and the inscribed
  // bound |d| - r - R cos(pi / rings) (the hull lies inside the true sphere)
  const std::vector<Real> ball = SphereHull(0.1, 12, 24);
  const Real ball_size[3] = {0.1, 0, 0};
  for (Real dist : {Real(0.16), Real(0.148), Real(0.13)}) {
    const Vec3 dir = Normalize(Vec3{0.3, -0.5, 0.8});
    n = CollideGeoms(kGeomSphere, Pose(dist * dir.x, dist * dir.y, dist * dir.z), sphere,
                     kGeomMesh, Pose(0, 0, 0), ball_size, 0.02, c, GeomHull{}, Hull(ball));
    ASSERT_EQ(n, 1) << dist;
    const Real upper = dist - 0.05 - 0.1 * std::cos(M_PI / 12);
    EXPECT_GE(c[0].separation, dist - 0.15 - kEpa) << dist;
    EXPECT_LE(c[0].separation, upper + kEpa) << dist;
    EXPECT_GT(Dot(c[0].normal, -dir), 0.95) << dist;  // from the sphere to the ball's centre
  }
}

TEST(CollideConvex, CubeMeshOnBoxGivesFourPointFace) {
  // a 0.2 m cube hull resting on a box top 1 mm deep, slightly turned: four points, all 1 mm deep
  const std::vector<Real> cube = BoxHull(0.1, 0.1, 0.1);
  const Real cube_size[3] = {std::sqrt(Real(0.03)), 0, 0};
  const Real table[3] = {0.5, 0.5, 0.05};
  for (Real yaw : {Real(0), Real(0.3), Real(kPi / 4)}) {
    ContactPoint c[kMaxManifoldPoints];
    const int n = CollideGeoms(kGeomBox, Pose(0, 0, 0), table, kGeomMesh,
                               Pose(0.1, 0, 0.149, AxisAngle(0, 0, 1, yaw)), cube_size, 0.002, c,
                               GeomHull{}, Hull(cube));
    ASSERT_EQ(n, 4) << yaw;
    std::set<uint32_t> ids;
    for (int i = 0; i < n; ++i) {
      EXPECT_NEAR(c[i].separation, -0.001, kEpa) << yaw;
      EXPECT_NEAR(c[i].normal.z, 1, 1e-4) << yaw;
      EXPECT_NEAR(c[i].point.z, 0.0495, kEpa) << yaw;
      ids.insert(c[i].feature);
    }
    EXPECT_EQ(ids.size(), 4u);
  }
}

TEST(CollideConvex, MeshStackFeatureIdsPersist) {
  // the same resting face at two nearby poses keeps its four feature ids (warm starting)
  const std::vector<Real> cube = BoxHull(0.05, 0.05, 0.05);
  const Real size[3] = {std::sqrt(Real(0.0075)), 0, 0};
  ContactPoint c1[kMaxManifoldPoints], c2[kMaxManifoldPoints];
  const int n1 = CollideGeoms(kGeomMesh, Pose(0, 0, 0), size, kGeomMesh, Pose(0.01, 0.02, 0.0995),
                              size, 0.002, c1, Hull(cube), Hull(cube));
  const int n2 = CollideGeoms(kGeomMesh, Pose(0, 0, 0), size, kGeomMesh,
                              Pose(0.0102, 0.0201, 0.0996, AxisAngle(0, 0, 1, 0.002)), size, 0.002,
                              c2, Hull(cube), Hull(cube));
  ASSERT_EQ(n1, 4);
  ASSERT_EQ(n2, 4);
  std::set<uint32_t> a, b;
  for (int i = 0; i < 4; ++i) {
    a.insert(c1[i].feature);
    b.insert(c2[i].feature);
    EXPECT_NEAR(c1[i].separation, -0.0005, kEpa);
  }
  EXPECT_EQ(a, b);
}

TEST(CollideConvex, FinelyTessellatedFacesGiveASpreadManifold) {
  // two 64-sided prisms face on face (64 corners per face, more than a feature holds): four
  // points 1 mm deep that span the overlap (two of them at least 6 cm apart, of a 9 cm overlap)
  std::vector<Real> prism;
  for (int k = 0; k < 64; ++k) {
    for (Real z : {Real(-0.05), Real(0.05)}) {
      prism.push_back(Real(0.05 * std::cos(2 * M_PI * k / 64)));
      prism.push_back(Real(0.05 * std::sin(2 * M_PI * k / 64)));
      prism.push_back(z);
    }
  }
  const Real size[3] = {0.0708, 0, 0};
  ContactPoint c[kMaxManifoldPoints];
  const int n = CollideGeoms(kGeomMesh, Pose(0, 0, 0.05), size, kGeomMesh,
                             Pose(0.01, 0.005, 0.149, AxisAngle(0, 0, 1, 0.3)), size, 0.002, c,
                             Hull(prism), Hull(prism));
  ASSERT_EQ(n, 4);
  Real widest = 0;
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(c[i].separation, -0.001, kEpa);
    for (int j = 0; j < n; ++j) widest = std::max(widest, Length(c[i].point - c[j].point));
  }
  EXPECT_GT(widest, 0.06);
}

TEST(CollideConvex, CylinderAgainstBoxOnEndAndSide) {
  const Real cyl[2] = {0.05, 0.1};
  const Real table[3] = {0.5, 0.5, 0.05};
  ContactPoint c[kMaxManifoldPoints];
  // standing on its end 1 mm into a box: a 4-point patch on the rim, 1 mm deep
  int n = CollideGeoms(kGeomBox, Pose(0, 0, 0), table, kGeomCylinder, Pose(0.02, 0, 0.149), cyl,
                       0.002, c);
  ASSERT_EQ(n, 4);
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(c[i].separation, -0.001, kEpa);
    EXPECT_NEAR(std::hypot(c[i].point.x - 0.02, c[i].point.y), 0.05, 1e-4);
  }
  // lying on its side, 1 mm above: a line contact, its two ends
  n = CollideGeoms(kGeomBox, Pose(0, 0, 0), table, kGeomCylinder,
                   Pose(0, 0, 0.101, AxisAngle(1, 0, 0, kPi / 2)), cyl, 0.002, c);
  ASSERT_EQ(n, 2);
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(c[i].separation, 0.001, kGjk);
    EXPECT_NEAR(std::abs(c[i].point.y), 0.1, 1e-4);
  }
}

TEST(CollideConvex, EllipsoidAgainstSphereAndBox) {
  const Real ell[3] = {0.2, 0.1, 0.05};
  const Real sphere[1] = {0.05};
  ContactPoint c[kMaxManifoldPoints];
  // sphere on the ellipsoid's x tip: gap = d - r_x - r
  int n = CollideGeoms(kGeomEllipsoid, Pose(0, 0, 0), ell, kGeomSphere, Pose(0.255, 0, 0), sphere,
                       0.01, c);
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].separation, 0.005, kGjk);
  EXPECT_NEAR(c[0].normal.x, 1, 1e-4);
  // 3 mm into a box top along the ellipsoid's short axis (EPA on a curved surface: 5e-4 m)
  const Real table[3] = {0.5, 0.5, 0.05};
  n = CollideGeoms(kGeomEllipsoid, Pose(0, 0, 0.097), ell, kGeomBox, Pose(0, 0, 0), table, 0.01,
                   c);
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].separation, -0.003, 5e-4);
  EXPECT_NEAR(c[0].normal.z, -1, 1e-3);
}

TEST(CollideConvex, BoxHullsAgainstTheExactDistance) {
  // Random pairs of box hulls (half-sizes 1-30 cm, meshes of 8 vertices) near touching, against
  // the exact signed distance (tests/kernels/exact_box_distance.h, in double): apart, the nearest
  // point's gap is the distance (GJK, kGjk) and the normal realises it (the boxes' projection gap
  // along it is the distance, to the tolerance below); overlapping, the deepest point's depth and
  // the overlap along the normal are the penetration depth (EPA, kEpa). Poses: DrawBoxPair (a fixed
  // draw order).
  using namespace testing_exact;
  std::mt19937 rng(7);
  const Real margin = 0.02;
  int apart = 0, overlapping = 0;
  for (const NearBoxPair& near : DrawNearBoxPairs(rng, 20000, margin)) {
    const int trial = near.trial;
    const Real *ha = near.pose.ha, *hb = near.pose.hb;
    const Transform &ta = near.pose.ta, &tb = near.pose.tb;
    const ExactBox &a = near.a, &b = near.b;
    const double exact = near.exact;
    const std::vector<Real> hull_a = BoxHull(ha[0], ha[1], ha[2]);
    const std::vector<Real> hull_b = BoxHull(hb[0], hb[1], hb[2]);
    const Real size_a[3] = {Length(LoadVec3(ha)), 0, 0}, size_b[3] = {Length(LoadVec3(hb)), 0, 0};
    ContactPoint c[kMaxManifoldPoints];
    const int n = CollideGeoms(kGeomMesh, ta, size_a, kGeomMesh, tb, size_b, margin, c,
                               Hull(hull_a), Hull(hull_b));
    ASSERT_GE(n, 1) << "trial " << trial << ": exact distance " << exact;
    const double tol = exact > 0 ? kGjk : kEpa;
    EXPECT_NEAR(MinSeparation(c, n), exact, tol) << "trial " << trial;
    // apart, the normal is a face's plane normal or two edges' cross product wherever one realises
    // the distance (the closest points' direction, which float rounding tilted by up to ~1e-2 rad
    // within 0.5 mm of touching, is the fallback): the gap along it is the distance to 2e-5 m
    // (observed at most 3.9e-6 m over 200,000 float32 draws; with GJK's direction alone 3.4e-3 m)
    const double normal_tol = exact <= 0 ? kEpa : 2e-5;
    EXPECT_NEAR(AxisGap(a, b, c[0].normal), exact, normal_tol) << "trial " << trial;
    (exact > 0 ? apart : overlapping) += 1;
  }
  EXPECT_GT(apart, 250);
  EXPECT_GT(overlapping, 250);
}

// Two float32 poses where GJK went wrong on cubes 10 cm in half-size (found by the test above;
// both are exact now, and in float64 they were never wrong):
//  - the last step added a point nearly in the plane of the simplex; its reduction came out further
//    from the origin, and GJK stopped at the better point v but read the closest points from the
//    simplex it had moved on to: 12.07 mm for 7.59;
//  - the new point lay all but in the last triangle's plane (the closest point inside a face of
//    A - B), the flat tetrahedron failed its face-side tests and looked closed around the origin:
//    an overlap, and EPA then pushed 4.45 mm-apart cubes 1.6 mm deep.
TEST(Gjk, FloatPosesThatWentWrongGiveTheExactDistance) {
  using namespace testing_exact;
  const Real h[3] = {0.1, 0.1, 0.1};
  const std::vector<Real> cube = BoxHull(0.1, 0.1, 0.1);
  struct Case {
    Quat qa;
    Vec3 pb;
    Quat qb;
    double distance;  // mm, exact
  };
  const Case cases[] = {
      {{0.628166497f, 0.593252242f, -0.470808446f, -0.178320184f},
       {0.177872047f, 0.076468274f, 0.166102067f},
       {0.538180053f, -0.293807387f, 0.055950243f, 0.787977815f},
       7.589},
      {{0.707796693f, -0.186903715f, -0.501829505f, 0.460714579f},
       {-0.0840926915f, 0.156153858f, 0.238214314f},
       {-0.349322885f, -0.755112767f, -0.446191102f, -0.329684198f},
       4.453}};
  for (const Case& k : cases) {
    const Transform ta{Vec3{0, 0, 0}, NormalizeQuat(k.qa)}, tb{k.pb, NormalizeQuat(k.qb)};
    const double exact = SignedBoxDistance(MakeExactBox(ta, h), MakeExactBox(tb, h));
    EXPECT_NEAR(exact * 1e3, k.distance, 1e-3);
    for (const int type : {kGeomBox, kGeomMesh}) {
      ConvexShape sa, sb;
      sa.type = sb.type = type;
      sa.xform = ta;
      sb.xform = tb;
      sa.size = sb.size = h;
      sa.vert = sb.vert = cube.data();
      sa.nvert = sb.nvert = 8;
      const GjkResult g = Gjk(sa, sb, false);
      EXPECT_FALSE(g.overlap) << "case " << k.distance << " mm, type " << type;
      EXPECT_NEAR(g.distance, exact, kGjk) << "case " << k.distance << " mm, type " << type;
      EXPECT_NEAR(Length(g.point_b - g.point_a), exact, kGjk);
    }
  }
}

TEST(CollideConvex, RoundEllipsoidsMatchSphereSphere) {
  // ellipsoids with equal semi-axes are spheres: random poses against the closed form |d| - 2r,
  // separated (GJK, 1e-5 m) and penetrating (EPA on a curved surface: 1 mm at 3 cm radius, the
  // polytope EPA builds within its iteration budget), normal along the centre line
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  const Real r[3] = {0.03, 0.03, 0.03};
  int deep = 0, apart = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const Vec3 dir = Normalize(Vec3{Real(u(rng)), Real(u(rng)), Real(u(rng))});
    const Real dist = Real(0.045 + 0.0085 * (u(rng) + 1));  // gap from -15 mm to +2 mm
    const Quat qa = NormalizeQuat(Quat{Real(u(rng)), Real(u(rng)), Real(u(rng)), Real(u(rng))});
    const Quat qb = NormalizeQuat(Quat{Real(u(rng)), Real(u(rng)), Real(u(rng)), Real(u(rng))});
    ContactPoint c[kMaxManifoldPoints];
    const int n = CollideGeoms(kGeomEllipsoid, Pose(0, 0, 0, qa), r, kGeomEllipsoid,
                               Pose(dist * dir.x, dist * dir.y, dist * dir.z, qb), r, 0.003, c);
    const Real want = dist - 0.06;
    ASSERT_EQ(n, 1) << "trial " << trial;
    const bool overlapping = want < 0;
    EXPECT_NEAR(c[0].separation, want, overlapping ? 1e-3 : 1e-5) << "trial " << trial;
    EXPECT_GT(Dot(c[0].normal, dir), overlapping ? 0.98 : 0.9999) << "trial " << trial;
    (overlapping ? deep : apart) += 1;
  }
  EXPECT_GT(deep, 50);
  EXPECT_GT(apart, 10);
}

TEST(CollideConvex, SpeculativeSeparationReported) {
  // every new pair reports a positive gap below the margin, and nothing above it
  const std::vector<Real> cube = BoxHull(0.05, 0.05, 0.05);
  const Real msize[3] = {std::sqrt(Real(0.0075)), 0, 0};
  const Real cyl[2] = {0.05, 0.05};
  const Real ell[3] = {0.05, 0.05, 0.05};
  ContactPoint c[kMaxManifoldPoints];
  // mesh above cylinder by 1.5 mm
  int n = CollideGeoms(kGeomCylinder, Pose(0, 0, 0), cyl, kGeomMesh, Pose(0, 0, 0.1015), msize,
                       0.002, c, GeomHull{}, Hull(cube));
  ASSERT_GT(n, 0);
  EXPECT_NEAR(MinSeparation(c, n), 0.0015, kGjk);
  EXPECT_EQ(CollideGeoms(kGeomCylinder, Pose(0, 0, 0), cyl, kGeomMesh, Pose(0, 0, 0.1025), msize,
                         0.002, c, GeomHull{}, Hull(cube)),
            0);
  // ellipsoid (a sphere here) beside a mesh: exact sphere-box distance
  n = CollideGeoms(kGeomEllipsoid, Pose(0.101, 0, 0), ell, kGeomMesh, Pose(0, 0, 0), msize, 0.002,
                   c, GeomHull{}, Hull(cube));
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].separation, 0.001, kGjk);
}

TEST(CollideConvex, MeshWithoutHullCollidesWithNothing) {
  const Real size[3] = {0.1, 0, 0};
  const Real sphere[1] = {0.1};
  ContactPoint c[kMaxManifoldPoints];
  EXPECT_EQ(CollideGeoms(kGeomSphere, Pose(0, 0, 0), sphere, kGeomMesh, Pose(0, 0, 0), size, 0.1, c),
            0);
}

}  // namespace
}  // namespace s2r
