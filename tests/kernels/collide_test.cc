// Narrow-phase tests: analytic configurations for every geom pair, the CollideGeoms dispatch, and
// randomized cross-checks against brute-force distances.
//
// Tolerances are for float32 (the default Real) at metre scale: values of order 1 carry rounding
// of a few 1e-7, so positions and separations are compared to kTol = 2e-5 m unless stated.
#include "kernels/collide.h"
#include "tests/kernels/exact_box_distance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

namespace s2r {
namespace {

constexpr Real kTol = Real(2e-5);
const Real kSqrtHalf = Real(std::sqrt(0.5));

Transform Pose(Real x, Real y, Real z, Quat q = QuatIdentity()) {
  return Transform{Vec3{x, y, z}, q};
}
Quat AxisAngle(Real x, Real y, Real z, Real angle) {
  return QuatFromAxisAngle(Normalize(Vec3{x, y, z}), angle);
}
// local z onto world x, and onto world y
Quat ZToX() { return AxisAngle(0, 1, 0, kPi / 2); }
Quat ZToY() { return AxisAngle(1, 0, 0, -kPi / 2); }

void ExpectVecNear(Vec3 a, Vec3 b, Real tol) {
  EXPECT_NEAR(a.x, b.x, tol);
  EXPECT_NEAR(a.y, b.y, tol);
  EXPECT_NEAR(a.z, b.z, tol);
}

// the points of a manifold in a canonical (sorted) order, for set comparisons
std::vector<ContactPoint> Sorted(const ContactPoint* c, int n) {
  std::vector<ContactPoint> v(c, c + n);
  std::sort(v.begin(), v.end(), [](const ContactPoint& a, const ContactPoint& b) {
    if (std::abs(a.point.x - b.point.x) > Real(1e-4)) return a.point.x < b.point.x;
    if (std::abs(a.point.y - b.point.y) > Real(1e-4)) return a.point.y < b.point.y;
    return a.point.z < b.point.z;
  });
  return v;
}

std::set<uint32_t> Features(const ContactPoint* c, int n) {
  std::set<uint32_t> s;
  for (int i = 0; i < n; ++i) s.insert(c[i].feature);
  return s;
}

Real MinSeparation(const ContactPoint* c, int n) {
  Real m = Real(1e30);
  for (int i = 0; i < n; ++i) m = std::min(m, c[i].separation);
  return m;
}

// distance from a point to the solid box |x_k| <= h_k at pose t (0 inside)
Real PointBoxDistance(Vec3 p, const Transform& t, const Real* h) {
  const Vec3 q = InvTransformPoint(t, p);
  const Real dx = std::max(std::abs(q.x) - h[0], Real(0));
  const Real dy = std::max(std::abs(q.y) - h[1], Real(0));
  const Real dz = std::max(std::abs(q.z) - h[2], Real(0));
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

// ---------------------------------------------------------------------------------------------
// plane - sphere

TEST(PlaneSphere, RestingSphere) {
  const Real r[3] = {0.5, 0, 0};
  ContactPoint c[kMaxManifoldPoints];
  const int n = CollidePlaneSphere(Pose(0, 0, 0), nullptr, Pose(0.3, -0.2, 0.49), r, 0.02, c);
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].separation, -0.01, kTol);
  ExpectVecNear(c[0].normal, Vec3{0, 0, 1}, kTol);
  // midway between the plane (z = 0) and the sphere bottom (z = -0.01)
  ExpectVecNear(c[0].point, Vec3{0.3, -0.2, -0.005}, kTol);
}

TEST(PlaneSphere, TiltedPlaneAndMargin) {
  const Transform plane = Pose(1, 2, 3, AxisAngle(1, 0, 0, 0.3));
  const Vec3 n = Rotate(plane.rot, Vec3{0, 0, 1});
  const Vec3 along = Rotate(plane.rot, Vec3{1, 1, 0});
  const Real r[3] = {0.5, 0, 0};
  const Transform sphere{plane.pos + Real(0.7) * n + Real(0.4) * along, QuatIdentity()};
  ContactPoint c[kMaxManifoldPoints];
  // gap 0.2: inside a 0.3 margin, outside a 0.1 margin
  ASSERT_EQ(CollidePlaneSphere(plane, nullptr, sphere, r, 0.3, c), 1);
  EXPECT_NEAR(c[0].separation, 0.2, kTol);
  ExpectVecNear(c[0].normal, n, kTol);
  ExpectVecNear(c[0].point, sphere.pos - Real(0.6) * n, 4 * kTol);
  EXPECT_EQ(CollidePlaneSphere(plane, nullptr, sphere, r, 0.1, c), 0);
}

// ---------------------------------------------------------------------------------------------
// plane - capsule

TEST(PlaneCapsule, LyingFlatGivesBothEnds) {
  const Real s[3] = {0.1, 0.4, 0};
  ContactPoint c[kMaxManifoldPoints];
  const int n = CollidePlaneCapsule(Pose(0, 0, 0), nullptr, Pose(0.2, 0, 0.09, ZToY()), s, 0.01, c);
  ASSERT_EQ(n, 2);
  const auto v = Sorted(c, n);
  ExpectVecNear(v[0].point, Vec3{0.2, -0.4, -0.005}, kTol);
  ExpectVecNear(v[1].point, Vec3{0.2, 0.4, -0.005}, kTol);
  for (const auto& p : v) {
    EXPECT_NEAR(p.separation, -0.01, kTol);
    ExpectVecNear(p.normal, Vec3{0, 0, 1}, kTol);
  }
  EXPECT_EQ(Features(c, n), (std::set<uint32_t>{0, 1}));
}

TEST(PlaneCapsule, StandingGivesLowerEndOnly) {
  const Real s[3] = {0.1, 0.4, 0};
  ContactPoint c[kMaxManifoldPoints];
  const int n = CollidePlaneCapsule(Pose(0, 0, 0), nullptr, Pose(0, 0, 0.48), s, 0.01, c);
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].separation, -0.02, kTol);
  EXPECT_EQ(c[0].feature, 0u);  // the -z end
  ExpectVecNear(c[0].point, Vec3{0, 0, -0.01}, kTol);
}

// ---------------------------------------------------------------------------------------------
// plane - box

TEST(PlaneBox, RotatedAboutZGivesFourBottomCorners) {
  const Real h[3] = {0.5, 0.3, 0.2};
  const Transform box = Pose(0.1, 0.2, 0.19, AxisAngle(0, 0, 1, 0.7));
  ContactPoint c[kMaxManifoldPoints];
  const int n = CollidePlaneBox(Pose(0, 0, 0), nullptr, box, h, 0.05, c);
  ASSERT_EQ(n, 4);
  EXPECT_EQ(Features(c, n), (std::set<uint32_t>{0, 1, 2, 3}));  // local z = -0.2 vertices
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(c[i].separation, -0.01, kTol);
    ExpectVecNear(c[i].normal, Vec3{0, 0, 1}, kTol);
    // the point lies below the corresponding rotated corner
    const uint32_t v = c[i].feature;
    const Vec3 corner =
        TransformPoint(box, Vec3{(v & 1) ? h[0] : -h[0], (v & 2) ? h[1] : -h[1], -h[2]});
    ExpectVecNear(c[i].point, Vec3{corner.x, corner.y, Real(-0.005)}, kTol);
  }
}

TEST(PlaneBox, SlightlyTiltedBoxHasTwoDepths) {
  // rotated by theta about x: a vertex (x, y, -0.5) sits at cz + y sin(theta) - 0.5 cos(theta)
  const Real theta = 0.01;
  const Real h[3] = {0.5, 0.5, 0.5};
  const Real cz = Real(0.5) * (std::sin(theta) + std::cos(theta)) - Real(0.02);
  ContactPoint c[kMaxManifoldPoints];
  const int n = CollidePlaneBox(Pose(0, 0, 0), nullptr, Pose(0, 0, cz, AxisAngle(1, 0, 0, theta)),
                                h, 0.05, c);
  ASSERT_EQ(n, 4);
  for (int i = 0; i < n; ++i) {
    const bool low_y = (c[i].feature & 2) == 0;
    EXPECT_EQ(c[i].feature & 4, 0u);
    EXPECT_NEAR(c[i].separation, low_y ? -0.02 : -0.02 + std::sin(theta), kTol);
  }
  // the deepest come first
  EXPECT_NEAR(c[0].separation, -0.02, kTol);
  EXPECT_NEAR(c[1].separation, -0.02, kTol);
}

TEST(PlaneBox, StronglyTiltedBoxRestsOnOneEdge) {
  const Real theta = 0.3;
  const Real h[3] = {0.5, 0.5, 0.5};
  const Real cz = Real(0.5) * (std::sin(theta) + std::cos(theta)) - Real(0.02);
  ContactPoint c[kMaxManifoldPoints];
  const int n = CollidePlaneBox(Pose(0, 0, 0), nullptr, Pose(0, 0, cz, AxisAngle(1, 0, 0, theta)),
                                h, 0.05, c);
  ASSERT_EQ(n, 2);
  EXPECT_EQ(Features(c, n), (std::set<uint32_t>{0, 1}));
  EXPECT_NEAR(c[0].separation, -0.02, kTol);
  EXPECT_NEAR(c[1].separation, -0.02, kTol);
}

TEST(PlaneBox, MoreThanFourQualifyKeepsDeepest) {
  // a thin plate with a margin larger than its thickness: all 8 vertices are below the margin
  const Real h[3] = {0.5, 0.5, 0.01};
  ContactPoint c[kMaxManifoldPoints];
  const int n = CollidePlaneBox(Pose(0, 0, 0), nullptr, Pose(0, 0, 0.005), h, 0.1, c);
  ASSERT_EQ(n, 4);
  EXPECT_EQ(Features(c, n), (std::set<uint32_t>{0, 1, 2, 3}));
  for (int i = 0; i < n; ++i) EXPECT_NEAR(c[i].separation, -0.005, kTol);
}

TEST(PlaneBox, MarginBehaviour) {
  const Real h[3] = {0.5, 0.5, 0.5};
  ContactPoint c[kMaxManifoldPoints];
  ASSERT_EQ(CollidePlaneBox(Pose(0, 0, 0), nullptr, Pose(0, 0, 0.503), h, 0.01, c), 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(c[i].separation, 0.003, kTol);
    EXPECT_NEAR(c[i].point.z, 0.0015, kTol);
  }
  EXPECT_EQ(CollidePlaneBox(Pose(0, 0, 0), nullptr, Pose(0, 0, 0.503), h, 0.002, c), 0);
}

// ---------------------------------------------------------------------------------------------
// sphere - sphere

TEST(SphereSphere, OverlapDepthNormalPoint) {
  const Real ra[3] = {0.5, 0, 0}, rb[3] = {0.3, 0, 0};
  const Vec3 d{0.6, 0.3, 0.2};  // |d| = 0.7
  ContactPoint c[kMaxManifoldPoints];
  ASSERT_EQ(CollideSphereSphere(Pose(1, 1, 1), ra, Pose(1 + d.x, 1 + d.y, 1 + d.z), rb, 0, c), 1);
  const Vec3 n = (Real(1) / Real(0.7)) * d;
  EXPECT_NEAR(c[0].separation, -0.1, kTol);
  ExpectVecNear(c[0].normal, n, kTol);
  // A's surface at 0.5 n, B's at 0.4 n from A's centre
  ExpectVecNear(c[0].point, Vec3{1, 1, 1} + Real(0.45) * n, kTol);
}

TEST(SphereSphere, CoincidentCentresGiveUnitNormal) {
  const Real ra[3] = {0.5, 0, 0}, rb[3] = {0.3, 0, 0};
  ContactPoint c[kMaxManifoldPoints];
  ASSERT_EQ(CollideSphereSphere(Pose(0, 0, 0), ra, Pose(0, 0, 0), rb, 0, c), 1);
  EXPECT_NEAR(Length(c[0].normal), 1, kTol);
  EXPECT_NEAR(c[0].separation, -0.8, kTol);
}

TEST(SphereSphere, MarginBehaviour) {
  const Real r[3] = {0.5, 0, 0};
  ContactPoint c[kMaxManifoldPoints];
  ASSERT_EQ(CollideSphereSphere(Pose(0, 0, 0), r, Pose(0, 1.004, 0), r, 0.005, c), 1);
  EXPECT_NEAR(c[0].separation, 0.004, kTol);
  EXPECT_EQ(CollideSphereSphere(Pose(0, 0, 0), r, Pose(0, 1.004, 0), r, 0.003, c), 0);
}

// ---------------------------------------------------------------------------------------------
// sphere - capsule

TEST(SphereCapsule, SideAndCap) {
  const Real rs[3] = {0.2, 0, 0};
  const Real cap[3] = {0.1, 0.5, 0};
  const Transform capsule = Pose(0, 0, 0);  // along z
  ContactPoint c[kMaxManifoldPoints];
  // beside the cylinder part
  ASSERT_EQ(CollideSphereCapsule(Pose(0.29, 0, 0.3), rs, capsule, cap, 0, c), 1);
  EXPECT_NEAR(c[0].separation, -0.01, kTol);
  ExpectVecNear(c[0].normal, Vec3{-1, 0, 0}, kTol);
  ExpectVecNear(c[0].point, Vec3{0.095, 0, 0.3}, kTol);
  // above the +z cap
  ASSERT_EQ(CollideSphereCapsule(Pose(0, 0, 0.79), rs, capsule, cap, 0, c), 1);
  EXPECT_NEAR(c[0].separation, -0.01, kTol);
  ExpectVecNear(c[0].normal, Vec3{0, 0, -1}, kTol);
  ExpectVecNear(c[0].point, Vec3{0, 0, 0.595}, kTol);
  // beyond the margin
  EXPECT_EQ(CollideSphereCapsule(Pose(0.31, 0, 0.3), rs, capsule, cap, 0.005, c), 0);
}

// ---------------------------------------------------------------------------------------------
// sphere - box

class SphereBoxTest : public ::testing::Test {
 protected:
  // run with the sphere centre given in the box frame; normal and point returned in the box frame
  int Run(Vec3 local_centre, Real radius, Real margin) {
    const Real r[3] = {radius, 0, 0};
    const Transform sphere{TransformPoint(box_, local_centre), AxisAngle(1, 2, 3, 0.4)};
    const int n = CollideSphereBox(sphere, r, box_, h_, margin, c_);
    for (int i = 0; i < n; ++i) {
      c_[i].point = InvTransformPoint(box_, c_[i].point);
      c_[i].normal = InvRotate(box_.rot, c_[i].normal);
    }
    return n;
  }
  const Transform box_ = Pose(1, 2, 3, AxisAngle(0.3, 0.2, 1, 0.5));
  const Real h_[3] = {0.5, 0.4, 0.3};
  ContactPoint c_[kMaxManifoldPoints];
};

TEST_F(SphereBoxTest, AboveFace) {
  ASSERT_EQ(Run(Vec3{0.1, -0.2, 0.49}, 0.2, 0), 1);
  EXPECT_NEAR(c_[0].separation, -0.01, kTol);
  ExpectVecNear(c_[0].normal, Vec3{0, 0, -1}, kTol);
  ExpectVecNear(c_[0].point, Vec3{0.1, -0.2, 0.295}, kTol);
}

TEST_F(SphereBoxTest, NearCorner) {
  ASSERT_EQ(Run(Vec3{0.6, 0.5, 0.4}, 0.2, 0), 1);
  const Real dist = std::sqrt(Real(0.03));
  EXPECT_NEAR(c_[0].separation, dist - Real(0.2), kTol);
  const Real k = Real(1) / std::sqrt(Real(3));
  ExpectVecNear(c_[0].normal, Vec3{-k, -k, -k}, kTol);
}

TEST_F(SphereBoxTest, CentreInsideBox) {
  // 0.05 below the +x face: pushed out through +x
  ASSERT_EQ(Run(Vec3{0.45, 0.1, -0.05}, 0.2, 0), 1);
  EXPECT_NEAR(c_[0].separation, -0.25, kTol);
  ExpectVecNear(c_[0].normal, Vec3{-1, 0, 0}, kTol);
  // between the face point (0.5) and the sphere surface point (0.25)
  ExpectVecNear(c_[0].point, Vec3{0.375, 0.1, -0.05}, kTol);
  // nearest face is -y here
  ASSERT_EQ(Run(Vec3{0.1, -0.35, 0.0}, 0.1, 0), 1);
  EXPECT_NEAR(c_[0].separation, -0.15, kTol);
  ExpectVecNear(c_[0].normal, Vec3{0, 1, 0}, kTol);
}

TEST_F(SphereBoxTest, MarginBehaviour) {
  ASSERT_EQ(Run(Vec3{0.0, 0.0, 0.505}, 0.2, 0.01), 1);
  EXPECT_NEAR(c_[0].separation, 0.005, kTol);
  EXPECT_EQ(Run(Vec3{0.0, 0.0, 0.505}, 0.2, 0.004), 0);
}

// ---------------------------------------------------------------------------------------------
// capsule - capsule

TEST(CapsuleCapsule, Crossing) {
  const Real s[3] = {0.1, 0.5, 0};
  ContactPoint c[kMaxManifoldPoints];
  const int n =
      CollideCapsuleCapsule(Pose(0, 0, 0, ZToX()), s, Pose(0.1, -0.2, 0.18, ZToY()), s, 0, c);
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].separation, -0.02, kTol);
  ExpectVecNear(c[0].normal, Vec3{0, 0, 1}, kTol);
  ExpectVecNear(c[0].point, Vec3{0.1, 0, 0.09}, kTol);
}

TEST(CapsuleCapsule, ParallelOverlapGivesTwoPoints) {
  const Real sa[3] = {0.1, 1.0, 0}, sb[3] = {0.1, 0.5, 0};
  ContactPoint c[kMaxManifoldPoints];
  // b spans x in [-0.2, 0.8], inside a's [-1, 1]
  const int n =
      CollideCapsuleCapsule(Pose(0, 0, 0, ZToX()), sa, Pose(0.3, 0.19, 0, ZToX()), sb, 0, c);
  ASSERT_EQ(n, 2);
  const auto v = Sorted(c, n);
  ExpectVecNear(v[0].point, Vec3{-0.2, 0.095, 0}, kTol);
  ExpectVecNear(v[1].point, Vec3{0.8, 0.095, 0}, kTol);
  for (const auto& p : v) {
    EXPECT_NEAR(p.separation, -0.01, kTol);
    ExpectVecNear(p.normal, Vec3{0, 1, 0}, kTol);
  }
  EXPECT_EQ(Features(c, n).size(), 2u);
}

TEST(CapsuleCapsule, NearlyParallelStillTwoPoints) {
  const Real sa[3] = {0.1, 1.0, 0}, sb[3] = {0.1, 0.5, 0};
  ContactPoint c[kMaxManifoldPoints];
  const Quat tilt = AxisAngle(0, 0, 1, 1e-3) * ZToX();
  const int n =
      CollideCapsuleCapsule(Pose(0, 0, 0, ZToX()), sa, Pose(0.3, 0.19, 0, tilt), sb, 0, c);
  ASSERT_EQ(n, 2);
  // b's ends sit at y = 0.19 -+ 0.5e-3: separations -0.01 -+ 0.5e-3
  const auto v = Sorted(c, n);
  EXPECT_NEAR(v[0].separation, -0.0105, 5e-5);
  EXPECT_NEAR(v[1].separation, -0.0095, 5e-5);
}

TEST(CapsuleCapsule, ParallelEndToEndGivesOnePoint) {
  const Real s[3] = {0.1, 0.5, 0};
  ContactPoint c[kMaxManifoldPoints];
  const int n = CollideCapsuleCapsule(Pose(0, 0, 0, ZToX()), s, Pose(1.15, 0, 0, ZToX()), s, 0, c);
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].separation, -0.05, kTol);
  ExpectVecNear(c[0].normal, Vec3{1, 0, 0}, kTol);
  ExpectVecNear(c[0].point, Vec3{0.575, 0, 0}, kTol);
}

TEST(CapsuleCapsule, MarginBehaviour) {
  const Real s[3] = {0.1, 0.5, 0};
  ContactPoint c[kMaxManifoldPoints];
  ASSERT_EQ(CollideCapsuleCapsule(Pose(0, 0, 0, ZToX()), s, Pose(0, 0, 0.22, ZToY()), s, 0.05, c),
            1);
  EXPECT_NEAR(c[0].separation, 0.02, kTol);
  EXPECT_EQ(CollideCapsuleCapsule(Pose(0, 0, 0, ZToX()), s, Pose(0, 0, 0.22, ZToY()), s, 0.01, c),
            0);
}

TEST(CapsuleCapsule, SeparationMatchesBruteForceDistance) {
  // the deepest reported point equals the segment-segment distance minus both radii; the brute
  // force samples a's segment and projects each sample onto b's segment exactly
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  const Real sa[3] = {0.1, 0.4, 0}, sb[3] = {0.15, 0.25, 0};
  const Real margin = 0.05;
  int checked = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    const Transform a{Vec3{0, 0, 0},
                      NormalizeQuat(Quat{Real(u(rng)), Real(u(rng)), Real(u(rng)), Real(u(rng))})};
    const Transform b{Vec3{Real(0.6 * u(rng)), Real(0.6 * u(rng)), Real(0.6 * u(rng))},
                      NormalizeQuat(Quat{Real(u(rng)), Real(u(rng)), Real(u(rng)), Real(u(rng))})};
    const Vec3 ua = Rotate(a.rot, Vec3{0, 0, 1}), ub = Rotate(b.rot, Vec3{0, 0, 1});
    Real brute = Real(1e30);
    const int samples = 4000;
    for (int i = 0; i <= samples; ++i) {
      const Vec3 p = a.pos + (-sa[1] + Real(2) * sa[1] * Real(i) / Real(samples)) * ua;
      const Real t = std::min(std::max(Dot(p - b.pos, ub), -sb[1]), sb[1]);
      brute = std::min(brute, Length(p - (b.pos + t * ub)));
    }
    const Real expect = brute - sa[0] - sb[0];
    ContactPoint c[kMaxManifoldPoints];
    const int n = CollideCapsuleCapsule(a, sa, b, sb, margin, c);
    if (expect < margin - Real(1e-3)) {
      ASSERT_GE(n, 1) << "trial " << trial;
      EXPECT_NEAR(MinSeparation(c, n), expect, Real(2e-4)) << "trial " << trial;
      ++checked;
    } else if (expect > margin + Real(1e-3)) {
      EXPECT_EQ(n, 0) << "trial " << trial;
    }
  }
  EXPECT_GT(checked, 100);
}

// ---------------------------------------------------------------------------------------------
// capsule - box

class CapsuleBoxTest : public ::testing::Test {
 protected:
  // capsule pose given in the box frame; results returned in the box frame
  int Run(Transform capsule_local, Real radius, Real half_length, Real margin) {
    const Real s[3] = {radius, half_length, 0};
    const int n = CollideCapsuleBox(Compose(box_, capsule_local), s, box_, h_, margin, c_);
    for (int i = 0; i < n; ++i) {
      c_[i].point = InvTransformPoint(box_, c_[i].point);
      c_[i].normal = InvRotate(box_.rot, c_[i].normal);
    }
    return n;
  }
  Transform box_ = Pose(-0.3, 0.7, 1.1, AxisAngle(1, -1, 0.5, 0.8));
  Real h_[3] = {1, 1, 0.5};
  ContactPoint c_[kMaxManifoldPoints];
};

TEST_F(CapsuleBoxTest, LyingFlatOnFaceGivesTwoPoints) {
  ASSERT_EQ(Run(Pose(0.2, 0.3, 0.59, ZToX()), 0.1, 0.5, 0), 2);
  const auto v = Sorted(c_, 2);
  ExpectVecNear(v[0].point, Vec3{-0.3, 0.3, 0.495}, kTol);
  ExpectVecNear(v[1].point, Vec3{0.7, 0.3, 0.495}, kTol);
  for (const auto& p : v) {
    EXPECT_NEAR(p.separation, -0.01, kTol);
    ExpectVecNear(p.normal, Vec3{0, 0, -1}, kTol);  // capsule -> box
  }
  EXPECT_EQ(Features(c_, 2).size(), 2u);
}

TEST_F(CapsuleBoxTest, LyingFlatDeeperThanRadiusGivesTwoPoints) {
  // the core segment is inside the box: separating-axis path
  ASSERT_EQ(Run(Pose(0.2, 0.3, 0.45, ZToY()), 0.1, 0.5, 0), 2);
  const auto v = Sorted(c_, 2);
  // between the capsule's lowest line (z = 0.35) and the face (z = 0.5)
  ExpectVecNear(v[0].point, Vec3{0.2, -0.2, 0.425}, kTol);
  ExpectVecNear(v[1].point, Vec3{0.2, 0.8, 0.425}, kTol);
  for (const auto& p : v) {
    EXPECT_NEAR(p.separation, -0.15, kTol);
    ExpectVecNear(p.normal, Vec3{0, 0, -1}, kTol);
  }
}

TEST_F(CapsuleBoxTest, HangingOverAnEdgeIsClippedToTheFace) {
  ASSERT_EQ(Run(Pose(1.0, 0.0, 0.59, ZToX()), 0.1, 0.5, 0), 2);
  const auto v = Sorted(c_, 2);
  ExpectVecNear(v[0].point, Vec3{0.5, 0, 0.495}, kTol);
  ExpectVecNear(v[1].point, Vec3{1.0, 0, 0.495}, kTol);
}

TEST_F(CapsuleBoxTest, RestingWithinMargin) {
  ASSERT_EQ(Run(Pose(0, 0, 0.605, ZToX()), 0.1, 0.5, 0.02), 2);
  EXPECT_NEAR(c_[0].separation, 0.005, kTol);
  EXPECT_NEAR(c_[1].separation, 0.005, kTol);
  EXPECT_EQ(Run(Pose(0, 0, 0.605, ZToX()), 0.1, 0.5, 0.004), 0);
}

TEST_F(CapsuleBoxTest, StandingOnCapGivesOnePoint) {
  ASSERT_EQ(Run(Pose(0.1, 0.1, 0.99), 0.1, 0.4, 0.01), 1);
  EXPECT_NEAR(c_[0].separation, -0.01, kTol);
  ExpectVecNear(c_[0].normal, Vec3{0, 0, -1}, kTol);
  ExpectVecNear(c_[0].point, Vec3{0.1, 0.1, 0.495}, kTol);
}

TEST(CapsuleBox, CrossingABoxEdge) {
  // a cube rotated 45 degrees about y has its top edge along y at height sqrt(1/2)
  const Real h[3] = {0.5, 0.5, 0.5};
  const Real s[3] = {0.1, 0.5, 0};
  const Transform box = Pose(0, 0, 0, AxisAngle(0, 1, 0, kPi / 4));
  ContactPoint c[kMaxManifoldPoints];
  // segment above the edge (exact-distance path)
  ASSERT_EQ(CollideCapsuleBox(Pose(0, 0.1, kSqrtHalf + Real(0.09), ZToX()), s, box, h, 0, c), 1);
  EXPECT_NEAR(c[0].separation, -0.01, kTol);
  ExpectVecNear(c[0].normal, Vec3{0, 0, -1}, kTol);
  ExpectVecNear(c[0].point, Vec3{0, 0.1, kSqrtHalf - Real(0.005)}, kTol);
  // segment 0.06 below the edge (separating-axis path, edge axis)
  ASSERT_EQ(CollideCapsuleBox(Pose(0, 0.1, kSqrtHalf - Real(0.06), ZToX()), s, box, h, 0, c), 1);
  EXPECT_NEAR(c[0].separation, -0.16, kTol);
  ExpectVecNear(c[0].normal, Vec3{0, 0, -1}, kTol);
  ExpectVecNear(c[0].point, Vec3{0, 0.1, kSqrtHalf - Real(0.08)}, kTol);
}

TEST(CapsuleBox, SeparationMatchesBruteForceDistance) {
  // random separated-or-touching configurations: the deepest reported point must equal the
  // segment-box distance minus the radius, found here by dense sampling of the segment
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  const Real h[3] = {0.4, 0.3, 0.2};
  const Transform box = Pose(0, 0, 0, AxisAngle(0.2, 0.5, 1, 0.6));
  const Real radius = 0.1, hl = 0.35;
  const Real s[3] = {radius, hl, 0};
  const Real margin = 0.1;
  int checked = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const Transform cap{
        Vec3{Real(0.8 * u(rng)), Real(0.8 * u(rng)), Real(0.8 * u(rng))},
        NormalizeQuat(Quat{Real(u(rng)), Real(u(rng)), Real(u(rng)), Real(u(rng))})};
    const Vec3 axis = Rotate(cap.rot, Vec3{0, 0, 1});
    Real brute = Real(1e30);
    const int samples = 4000;
    for (int i = 0; i <= samples; ++i) {
      const Real t = -hl + Real(2) * hl * Real(i) / Real(samples);
      brute = std::min(brute, PointBoxDistance(cap.pos + t * axis, box, h));
    }
    ContactPoint c[kMaxManifoldPoints];
    const int n = CollideCapsuleBox(cap, s, box, h, margin, c);
    ASSERT_LE(n, 2);
    if (brute < Real(1e-3)) continue;  // segment inside: depth is checked elsewhere
    const Real expect = brute - radius;
    if (expect < margin - Real(1e-3)) {
      ASSERT_GE(n, 1) << "trial " << trial;
      // sampling error of the brute force is below hl / samples; a face manifold measures
      // heights along a face normal within 2.6 degrees of the true normal (1e-3 relative)
      EXPECT_NEAR(MinSeparation(c, n), expect, Real(4e-4)) << "trial " << trial;
      ++checked;
    } else if (expect > margin + Real(1e-3)) {
      EXPECT_EQ(n, 0) << "trial " << trial;
    }
  }
  EXPECT_GT(checked, 100);
}

// ---------------------------------------------------------------------------------------------
// box - box

TEST(BoxBox, StackedFaceContact) {
  const Real ha[3] = {1, 1, 0.5}, hb[3] = {0.5, 0.5, 0.5};
  ContactPoint c[kMaxManifoldPoints];
  const int n = CollideBoxBox(Pose(0, 0, 0), ha, Pose(0.1, 0.2, 0.99), hb, 0, c);
  ASSERT_EQ(n, 4);
  const auto v = Sorted(c, n);
  const Vec3 expect[4] = {
      {-0.4, -0.3, 0.495}, {-0.4, 0.7, 0.495}, {0.6, -0.3, 0.495}, {0.6, 0.7, 0.495}};
  for (int i = 0; i < 4; ++i) {
    ExpectVecNear(v[i].point, expect[i], kTol);
    EXPECT_NEAR(v[i].separation, -0.01, kTol);
    ExpectVecNear(v[i].normal, Vec3{0, 0, 1}, kTol);
  }
  EXPECT_EQ(Features(c, n).size(), 4u);
  // the same pair in the other order: same points, normal from the upper box down
  ASSERT_EQ(CollideBoxBox(Pose(0.1, 0.2, 0.99), hb, Pose(0, 0, 0), ha, 0, c), 4);
  const auto w = Sorted(c, 4);
  for (int i = 0; i < 4; ++i) {
    ExpectVecNear(w[i].point, expect[i], kTol);
    EXPECT_NEAR(w[i].separation, -0.01, kTol);
    ExpectVecNear(w[i].normal, Vec3{0, 0, -1}, kTol);
  }
}

TEST(BoxBox, StackedFaceContactInAnyFrame) {
  // the same stack moved by a rigid transform gives the transformed manifold
  const Real ha[3] = {1, 1, 0.5}, hb[3] = {0.5, 0.5, 0.5};
  const Transform frame = Pose(3, -2, 1, AxisAngle(1, 2, -1, 1.1));
  ContactPoint c[kMaxManifoldPoints];
  const int n = CollideBoxBox(Compose(frame, Pose(0, 0, 0)), ha,
                              Compose(frame, Pose(0.1, 0.2, 0.99)), hb, 0, c);
  ASSERT_EQ(n, 4);
  for (int i = 0; i < n; ++i) {
    const Vec3 p = InvTransformPoint(frame, c[i].point);
    EXPECT_NEAR(p.z, 0.495, 4 * kTol);
    EXPECT_NEAR(std::abs(p.x - Real(0.1)), 0.5, 4 * kTol);
    EXPECT_NEAR(std::abs(p.y - Real(0.2)), 0.5, 4 * kTol);
    EXPECT_NEAR(c[i].separation, -0.01, 4 * kTol);
    ExpectVecNear(InvRotate(frame.rot, c[i].normal), Vec3{0, 0, 1}, kTol);
  }
}

TEST(BoxBox, Rotated45OnTopStaysInsideOverlap) {
  const Real h[3] = {0.5, 0.5, 0.5};
  ContactPoint c[kMaxManifoldPoints];
  const int n =
      CollideBoxBox(Pose(0, 0, 0), h, Pose(0, 0, 0.99, AxisAngle(0, 0, 1, kPi / 4)), h, 0, c);
  // the overlap is an octagon (8 clipped points) reduced to 4
  ASSERT_EQ(n, 4);
  const Real edge = Real(0.5) + kTol;
  for (int i = 0; i < n; ++i) {
    const Vec3 p = c[i].point;
    EXPECT_LE(std::abs(p.x), edge);
    EXPECT_LE(std::abs(p.y), edge);
    EXPECT_LE(std::abs(p.x + p.y) * kSqrtHalf, edge);
    EXPECT_LE(std::abs(p.x - p.y) * kSqrtHalf, edge);
    EXPECT_NEAR(p.z, 0.495, kTol);
    EXPECT_NEAR(c[i].separation, -0.01, kTol);
    ExpectVecNear(c[i].normal, Vec3{0, 0, 1}, kTol);
  }
  EXPECT_EQ(Features(c, n).size(), 4u);
  // the kept quad is the largest one on the octagon's vertices: alternate vertices, area
  // 2 R^2 = 0.586 (R^2 = 0.25 + (sqrt(1/2) - 1/2)^2); a poor choice (e.g. 4 adjacent) is < 0.45
  std::vector<Vec3> q;
  for (int i = 0; i < n; ++i) q.push_back(c[i].point);
  std::sort(q.begin(), q.end(),
            [](Vec3 a, Vec3 b) { return std::atan2(a.y, a.x) < std::atan2(b.y, b.x); });
  Real area = 0;
  for (int i = 0; i < 4; ++i) {
    area += Real(0.5) * (q[i].x * q[(i + 1) % 4].y - q[(i + 1) % 4].x * q[i].y);
  }
  EXPECT_GT(area, 0.58);
}

TEST(BoxBox, CrossedEdgesGiveOnePoint) {
  // A rotated 45 degrees about x (top edge along x), B rotated 45 degrees about y above it
  // (bottom edge along y), the edges overlapping by 0.01
  const Real h[3] = {0.5, 0.5, 0.5};
  const Real z = Real(2) * kSqrtHalf - Real(0.01);
  ContactPoint c[kMaxManifoldPoints];
  const int n = CollideBoxBox(Pose(0, 0, 0, AxisAngle(1, 0, 0, kPi / 4)), h,
                              Pose(0, 0, z, AxisAngle(0, 1, 0, kPi / 4)), h, 0, c);
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].separation, -0.01, kTol);
  ExpectVecNear(c[0].normal, Vec3{0, 0, 1}, kTol);
  ExpectVecNear(c[0].point, Vec3{0, 0, kSqrtHalf - Real(0.005)}, kTol);
  EXPECT_NE(c[0].feature & (1u << 12), 0u);  // an edge-edge id
}

TEST(BoxBox, BoxStandingOnAnEdgeGivesTwoPoints) {
  const Real ha[3] = {1, 1, 0.5}, hb[3] = {0.5, 0.5, 0.5};
  ContactPoint c[kMaxManifoldPoints];
  const int n =
      CollideBoxBox(Pose(0, 0, 0), ha,
                    Pose(0, 0, 0.5 + kSqrtHalf - 0.01, AxisAngle(1, 0, 0, kPi / 4)), hb, 0.02, c);
  ASSERT_EQ(n, 2);
  const auto v = Sorted(c, n);
  ExpectVecNear(v[0].point, Vec3{-0.5, 0, 0.495}, kTol);
  ExpectVecNear(v[1].point, Vec3{0.5, 0, 0.495}, kTol);
  EXPECT_NEAR(v[0].separation, -0.01, kTol);
  EXPECT_NEAR(v[1].separation, -0.01, kTol);
}

TEST(BoxBox, IdenticalFootprintsGiveTheFourCorners) {
  const Real h[3] = {0.5, 0.5, 0.5};
  ContactPoint c[kMaxManifoldPoints];
  const int n = CollideBoxBox(Pose(0, 0, 0), h, Pose(0, 0, 0.99), h, 0, c);
  ASSERT_EQ(n, 4);
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(std::abs(c[i].point.x), 0.5, kTol);
    EXPECT_NEAR(std::abs(c[i].point.y), 0.5, kTol);
    EXPECT_NEAR(c[i].separation, -0.01, kTol);
  }
  EXPECT_EQ(Features(c, n).size(), 4u);
  // the incident corners lie on the reference side planes: rounding-size motions in any
  // direction must keep them the same four vertex features
  for (int k = 0; k < 4; ++k) {
    const Real e = Real(1e-6);
    const Vec3 shift{(k & 1) ? e : -e, (k & 2) ? e : -e, 0};
    const Transform moved{Vec3{0, 0, 0.99} + shift, AxisAngle(0, 0, 1, (k & 1) ? e : -e)};
    ContactPoint m[kMaxManifoldPoints];
    ASSERT_EQ(CollideBoxBox(Pose(0, 0, 0), h, moved, h, 0, m), 4);
    EXPECT_EQ(Features(m, 4), Features(c, n)) << "shift " << k;
  }
}

TEST(BoxBox, SlightlyTiltedBoxKeepsAFaceManifold) {
  // small tilts must not make a nearly parallel edge axis win over the face axis
  const Real ha[3] = {2, 2, 0.5}, hb[3] = {0.5, 0.4, 0.3};
  for (Real angle : {Real(1e-4), Real(1e-3), Real(2e-3), Real(5e-3), Real(1e-2)}) {
    for (int axis = 0; axis < 2; ++axis) {
      SCOPED_TRACE(::testing::Message() << "angle " << angle << " axis " << axis);
      const Quat tilt = axis == 0 ? AxisAngle(1, 0, 0, angle) : AxisAngle(1, 1, 0, angle);
      const Transform b = Pose(0.2, -0.1, 0.5 + 0.3 - 0.01, AxisAngle(0, 0, 1, 0.3) * tilt);
      ContactPoint c[kMaxManifoldPoints];
      const int n = CollideBoxBox(Pose(0, 0, 0), ha, b, hb, 0.02, c);
      ASSERT_EQ(n, 4);
      for (int i = 0; i < n; ++i) {
        EXPECT_EQ(c[i].feature & (1u << 12), 0u);  // not an edge-edge id
        ExpectVecNear(c[i].normal, Vec3{0, 0, 1}, kTol);
        // each point's separation is its corner's height above the face (z = 0.5)
        EXPECT_NEAR(c[i].separation, (c[i].point.z - Real(0.5)) * 2, kTol);
        EXPECT_NEAR(c[i].separation, -0.01, 0.4 * 2 * angle + kTol);
      }
    }
  }
}

TEST(BoxBox, MarginBehaviour) {
  const Real ha[3] = {1, 1, 0.5}, hb[3] = {0.5, 0.5, 0.5};
  ContactPoint c[kMaxManifoldPoints];
  ASSERT_EQ(CollideBoxBox(Pose(0, 0, 0), ha, Pose(0, 0, 1.005), hb, 0.01, c), 4);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(c[i].separation, 0.005, kTol);
  EXPECT_EQ(CollideBoxBox(Pose(0, 0, 0), ha, Pose(0, 0, 1.005), hb, 0.004, c), 0);
}

TEST(BoxBox, FeatureIdsStableUnderTinyPerturbation) {
  const Real ha[3] = {1, 1, 0.5}, hb[3] = {0.4, 0.3, 0.5};
  const Transform a = Pose(0, 0, 0);
  // B slightly tilted and turned so that the clip mixes vertices and edge crossings
  const Transform b = Pose(0.8, 0.1, 0.985, AxisAngle(0, 0, 1, 0.5) * AxisAngle(1, 0.3, 0, 0.01));
  ContactPoint c0[kMaxManifoldPoints], c1[kMaxManifoldPoints];
  const int n0 = CollideBoxBox(a, ha, b, hb, 0.01, c0);
  ASSERT_EQ(n0, 4);
  EXPECT_EQ(Features(c0, n0).size(), 4u);
  const Transform moved{b.pos + Vec3{1e-4, -1e-4, 1e-4}, AxisAngle(0.3, -1, 0.2, 1e-4) * b.rot};
  const int n1 = CollideBoxBox(a, ha, moved, hb, 0.01, c1);
  ASSERT_EQ(n1, n0);
  EXPECT_EQ(Features(c0, n0), Features(c1, n1));
  // each feature id names the same physical point, moved by about the perturbation
  for (int i = 0; i < n0; ++i) {
    for (int j = 0; j < n1; ++j) {
      if (c0[i].feature != c1[j].feature) continue;
      EXPECT_LT(Length(c0[i].point - c1[j].point), 1e-3);
    }
  }
}

TEST(BoxBox, FeatureIdsFollowPointsAcrossASlide) {
  // B (turned 0.3 rad) overhangs A's +x side: two of its corners are on A's face and two points
  // are where B's bottom edges cross the side plane x = 1. Sliding B along y keeps all four
  // features, and the crossing points stay on x = 1.
  const Real ha[3] = {1, 1, 0.5}, hb[3] = {0.5, 0.5, 0.5};
  const Quat turn = AxisAngle(0, 0, 1, 0.3);
  ContactPoint c0[kMaxManifoldPoints], c1[kMaxManifoldPoints];
  const int n0 = CollideBoxBox(Pose(0, 0, 0), ha, Pose(1.0, 0, 0.99, turn), hb, 0, c0);
  const int n1 = CollideBoxBox(Pose(0, 0, 0), ha, Pose(1.0, 0.05, 0.99, turn), hb, 0, c1);
  ASSERT_EQ(n0, 4);
  ASSERT_EQ(n1, 4);
  EXPECT_EQ(Features(c0, n0), Features(c1, n1));
  int on_side = 0;
  for (int i = 0; i < n0; ++i) {
    for (int j = 0; j < n1; ++j) {
      if (c0[i].feature != c1[j].feature) continue;
      if (std::abs(c0[i].point.x - Real(1)) < kTol) {
        ++on_side;
        EXPECT_NEAR(c1[j].point.x, 1, kTol);
      } else {
        // a corner of B: moved exactly by the slide
        ExpectVecNear(c1[j].point - c0[i].point, Vec3{0, 0.05, 0}, kTol);
      }
    }
  }
  EXPECT_EQ(on_side, 2);
}

// the box-box pair's tolerance for preferring a face axis and for keeping a clipped manifold:
// 1e-3 of the smaller box's mean half-size (kernels/collide_box_box.h)
double BoxBoxTolerance(const Real* ha, const Real* hb) {
  return 1e-3 * std::min(ha[0] + ha[1] + ha[2], hb[0] + hb[1] + hb[2]) / 3;
}

TEST(BoxBox, GapsAgainstTheExactDistance) {
  // Random pairs of random boxes (half-sizes 1-30 cm) near touching, against the exact signed
  // distance (tests/kernels/exact_box_distance.h, in double). Every pair closer than the 2 cm
  // margin reports a point. A pair apart whose nearest features are not face to face reports the
  // exact closest pair (feature 1 << 13): its gap is the distance. Otherwise the pair's normal n
  // has a projection gap g(n), and the nearest point's gap is at least g(n) and, apart, at most the
  // distance plus the box-box tolerance (a speculative point never promises room that is not
  // there); n is the best axis or one within the face preference (5 % + the tolerance) of it.
  // Float32 rounding at these sizes: 1e-5 m. Poses: DrawBoxPair (a fixed draw order).
  using namespace testing_exact;
  std::mt19937 rng(7);
  const Real margin = 0.02;
  const double eps = 1e-5;
  int apart = 0, overlapping = 0, closest_pairs = 0, twisted_faces = 0;
  for (const NearBoxPair& near : DrawNearBoxPairs(rng, 40000, margin)) {
    const int trial = near.trial;
    const Real *ha = near.pose.ha, *hb = near.pose.hb;
    const Transform &ta = near.pose.ta, &tb = near.pose.tb;
    const ExactBox &a = near.a, &b = near.b;
    const double exact = near.exact;
    ContactPoint c[kMaxManifoldPoints];
    const int n = CollideBoxBox(ta, ha, tb, hb, margin, c);
    ASSERT_GE(n, 1) << "trial " << trial << ": exact distance " << exact;
    ASSERT_LE(n, kMaxManifoldPoints);
    const double nearest = MinSeparation(c, n);
    (exact > 0 ? apart : overlapping) += 1;
    if ((c[0].feature >> 13) == 1u) {
      ASSERT_EQ(n, 1);
      EXPECT_GT(exact, 0) << "trial " << trial;
      EXPECT_NEAR(nearest, exact, eps) << "trial " << trial;
      ++closest_pairs;
      continue;
    }
    const double normal_gap = AxisGap(a, b, c[0].normal);
    const double tol = BoxBoxTolerance(ha, hb);
    EXPECT_GE(nearest, normal_gap - eps) << "trial " << trial;
    const double edge_face_cos = BestEdgeAxisFaceCos(a, b);
    if (exact <= 0 && edge_face_cos > kEdgeNearFaceCos + 1e-4) {
      // overlapping, the best axis an edge axis within 0.1 rad of a face normal: a face contact
      EXPECT_GT(FaceAxisCos(a, b, c[0].normal), 1 - 1e-5) << "trial " << trial;
      ++twisted_faces;
    } else if (!(exact <= 0 && edge_face_cos > kEdgeNearFaceCos - 1e-4)) {
      EXPECT_LE(BestAxisGap(a, b), normal_gap + 0.05 * std::abs(normal_gap) + tol + eps)
          << "trial " << trial;
    }
    if (exact > 0) EXPECT_LE(nearest, exact + tol + eps) << "trial " << trial;
  }
  EXPECT_GT(apart, 500);
  EXPECT_GT(overlapping, 500);
  EXPECT_GT(closest_pairs, 50);
  EXPECT_GT(twisted_faces, 10);
}

TEST(BoxBox, OffsetPairsGetTheirExactClosestPair) {
  using namespace testing_exact;
  const Real h[3] = {0.1, 0.1, 0.1};
  ContactPoint c[kMaxManifoldPoints];
  // Corner to corner: B, unrotated, lies 10, 10 and 5 mm beyond A's +x, +y and +z faces. A's x
  // face gives the axis (10 mm), but B's facing face lies wholly beside it and the clip keeps
  // nothing: there was no point although the boxes are 15 mm apart, inside the 2 cm margin. Now
  // one, between the two corners, along their direction.
  ASSERT_EQ(CollideBoxBox(Pose(0, 0, 0), h, Pose(0.21, 0.21, 0.205), h, 0.02, c), 1);
  EXPECT_NEAR(c[0].separation, 0.015, kTol);
  ExpectVecNear(c[0].normal, Vec3{Real(2) / 3, Real(2) / 3, Real(1) / 3}, kTol);
  ExpectVecNear(c[0].point, Vec3{0.105, 0.105, 0.1025}, kTol);
  EXPECT_EQ(c[0].feature, (1u << 13) | 7u);  // A's corner 7 (+x +y +z)
  // Turned cubes 6.06 mm apart whose closest parts meet beyond the edge of B's reference face
  // (B's x face: 5.37 mm along it; the edge axis, 5.54 mm, is not 5 % better): the clip kept
  // A's corners 11.9 and 19.4 mm from the face plane, and they were reported so, 28 degrees off
  // the closest points' direction. Now the exact pair: its distance, and the direction the
  // box-hull (GJK) path gives.
  const Transform ta{Vec3{0, 0, 0}, NormalizeQuat(Quat{-0.555212259f, -0.264220715f,
                                                       -0.222754776f, -0.756509662f})};
  const Transform tb{Vec3{-0.192165256f, -0.195561603f, -0.143135756f},
                     NormalizeQuat(Quat{0.164121017f, -0.193024263f, 0.771332622f, -0.583825231f})};
  const double exact = SignedBoxDistance(MakeExactBox(ta, h), MakeExactBox(tb, h));
  EXPECT_NEAR(exact, 0.006055, 1e-6);
  ASSERT_EQ(CollideBoxBox(ta, h, tb, h, 0.02, c), 1);
  EXPECT_NEAR(c[0].separation, exact, kTol);
  ConvexShape sa, sb;
  sa.type = sb.type = kGeomBox;
  sa.xform = ta;
  sb.xform = tb;
  sa.size = sb.size = h;
  const GjkResult g = Gjk(sa, sb, false);
  EXPECT_GT(Dot(c[0].normal, Normalize(g.point_b - g.point_a)), 0.9999);
}

// ---------------------------------------------------------------------------------------------
// CollideGeoms dispatch

// a pose per type, all overlapping near the origin; planes sit at the origin
Transform TypePose(int type, int which) {
  if (type == kGeomPlane) return Pose(0, 0, 0, AxisAngle(0.1, 0.2, 1, 0.1));
  return which == 0 ? Pose(0.05, 0.02, 0.2, AxisAngle(1, 2, 3, 0.7))
                    : Pose(-0.1, 0.1, 0.25, AxisAngle(-2, 1, 0.5, 1.2));
}
const Real kTypeSize[kGeomTypeCount][3] = {
    {0, 0, 0},        {0.3, 0, 0},       {0.15, 0.3, 0}, {0.3, 0.2, 0.25},
    {0.2, 0.3, 0},    {0.3, 0.25, 0.3},  {0.6, 0, 0}};
// the mesh type's hull: an irregular convex polyhedron (an octahedron with one corner raised) inside
// the 0.6 m bounding radius of kTypeSize[kGeomMesh]
const Real kTestHullVerts[] = {0.6, 0, 0,   -0.45, 0,   0,   0,    0.4, 0,   0,   -0.4,
                               0,   0, 0,   0.5,   0,   0,   -0.4, 0.2, 0.2, 0.2};
GeomHull TypeHull(int type) {
  return type == kGeomMesh ? GeomHull{kTestHullVerts, 7} : GeomHull{};
}

bool SameVec(Vec3 a, Vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

// Sutherland-Hodgman with separate input and output, as the box-box clipper did before it
// clipped in place: the oracle for ClipPolygon's order, positions, codes and lines
int ClipOutOfPlace(const collide_internal::ClipVertex* in, int n, Vec3 plane_n, Real offset, int plane,
                   collide_internal::ClipVertex* out) {
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const collide_internal::ClipVertex& from = in[i];
    const collide_internal::ClipVertex& to = in[(i + 1) % n];
    const Real d_from = Dot(from.p, plane_n) - offset, d_to = Dot(to.p, plane_n) - offset;
    if (d_from <= 0) {
      out[m] = from;
      if (d_from == 0 && d_to > 0) out[m].line = static_cast<int16_t>(4 + plane);
      ++m;
    }
    if ((d_from < 0 && d_to > 0) || (d_from > 0 && d_to < 0)) {
      const Real t = d_from / (d_from - d_to);
      out[m].p = from.p + t * (to.p - from.p);
      out[m].code = static_cast<uint16_t>(collide_internal::ClipCode(from.line, plane));
      out[m].line = static_cast<int16_t>(d_from < 0 ? 4 + plane : from.line);
      ++m;
    }
  }
  return m;
}

// In place, a convex polygon clips to what a clipper with a second array gives, vertex for
// vertex (bit for bit: the same arithmetic in the same order), for random quads and planes
// through, beside and away from them, and for planes through a vertex.
TEST(BoxBox, ClippingInPlaceMatchesClippingIntoASecondArray) {
  using collide_internal::ClipVertex;
  std::mt19937 rng(7);
  std::uniform_real_distribution<Real> u(-1, 1);
  int clipped = 0, grew = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    // a random convex quad in z = 0 (a rotated, sheared square), then four planes as the box
    // clipper applies them
    const Real c = u(rng), sn = u(rng), a = Real(0.3) + Abs(u(rng)), b = Real(0.3) + Abs(u(rng));
    ClipVertex poly[8], ref[8], buf[8];
    const Real corner[4][2] = {{1, 1}, {-1, 1}, {-1, -1}, {1, -1}};
    for (int k = 0; k < 4; ++k) {
      const Real x = a * corner[k][0], y = b * corner[k][1];
      poly[k] = ClipVertex{Vec3{c + x * std::cos(sn) - y * std::sin(sn), x * std::sin(sn) + y * std::cos(sn), 0},
                           static_cast<uint16_t>(k), static_cast<int16_t>(k)};
      ref[k] = poly[k];
    }
    int n = 4, n_ref = 4;
    for (int plane = 0; plane < 4 && n > 0; ++plane) {
      const Real angle = Real(0.5) * kPi * plane + Real(0.2) * u(rng);
      const Vec3 normal{std::cos(angle), std::sin(angle), 0};
      // every fourth plane passes exactly through a vertex (the on-plane branch)
      const Real offset = trial % 4 == 0 ? Dot(ref[0].p, normal) : Real(0.6) * u(rng);
      const int before = n;
      n = collide_internal::ClipPolygon(poly, n, normal, offset, plane, 8);
      n_ref = ClipOutOfPlace(ref, n_ref, normal, offset, plane, buf);
      std::copy(buf, buf + n_ref, ref);
      ASSERT_EQ(n, n_ref) << "trial " << trial << " plane " << plane;
      for (int i = 0; i < n; ++i) {
        ASSERT_TRUE(SameVec(poly[i].p, ref[i].p) && poly[i].code == ref[i].code && poly[i].line == ref[i].line)
            << "trial " << trial << " plane " << plane << " vertex " << i;
      }
      clipped += n != before || n == 0;
      grew += n > before;
    }
  }
  EXPECT_GT(clipped, 1000);  // the planes do cut
  EXPECT_GT(grew, 500);      // and the polygon gains vertices (the output running ahead of the input)
}

// A polygon that is not convex (rounding can make a clipped one slightly so) crosses a plane more
// than twice: ClipPolygon then drops what would overwrite a vertex not yet read, or leave the
// array, and what it keeps are the input's vertices and crossings, in order.
TEST(BoxBox, ClippingANonConvexPolygonStaysInItsArray) {
  using collide_internal::ClipVertex;
  // a zigzag of 7 vertices alternating across x = 0: inside, outside, inside, ...; every crossing
  // is at an edge's midpoint, exact in floating point
  const Vec3 zig[7] = {{-1, 0, 0}, {1, 1, 0}, {-1, 2, 0}, {1, 3, 0}, {-1, 4, 0}, {1, 5, 0}, {-1, 6, 0}};
  // into a second array it gives 4 inside vertices and 6 crossings: 10, past n + 1 = 8
  ClipVertex in[7], out[16];
  for (int k = 0; k < 7; ++k) in[k] = ClipVertex{zig[k], static_cast<uint16_t>(k), static_cast<int16_t>(k % 4)};
  ASSERT_EQ(ClipOutOfPlace(in, 7, Vec3{1, 0, 0}, 0, 0, out), 10);
  // in place: the crossing after vertex 2 would land on vertex 4 before it is read, and so on; a
  // full array (capacity 7) also loses its last vertex, so its loop closes from vertex 5
  struct Case {
    int capacity;
    std::vector<Vec3> expect;
  };
  const Case cases[] = {
      {8, {{-1, 0, 0}, {0, 0.5, 0}, {0, 1.5, 0}, {-1, 2, 0}, {0, 3.5, 0}, {-1, 4, 0}, {0, 5.5, 0}, {-1, 6, 0}}},
      {7, {{-1, 0, 0}, {0, 0.5, 0}, {0, 1.5, 0}, {-1, 2, 0}, {0, 3.5, 0}, {-1, 4, 0}, {0, 2.5, 0}}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "capacity " << c.capacity);
    ClipVertex poly[10];
    for (int k = 0; k < 10; ++k) poly[k] = ClipVertex{Vec3{9, 9, 9}, 99, 99};  // sentinels past the polygon
    std::copy(in, in + 7, poly);
    const int n = collide_internal::ClipPolygon(poly, 7, Vec3{1, 0, 0}, 0, 0, c.capacity);
    ASSERT_EQ(n, static_cast<int>(c.expect.size()));
    for (int i = 0; i < n; ++i) EXPECT_TRUE(SameVec(poly[i].p, c.expect[i])) << "vertex " << i << " at " << poly[i].p.x << ", " << poly[i].p.y;
    for (int k = c.capacity; k < 10; ++k) EXPECT_EQ(poly[k].code, 99) << "written past the capacity at " << k;
  }
}

// The step's pool is an array of Contact, written in place: CollideGeoms writes the four fields a
// ContactPoint has, the same values, and leaves the rest of each Contact alone.
TEST(CollideGeoms, WritesContactsInPlace) {
  for (int ta = 0; ta < kGeomTypeCount; ++ta) {
    for (int tb = 0; tb < kGeomTypeCount; ++tb) {
      const Transform pa = TypePose(ta, 0), pb = TypePose(tb, 1);
      ContactPoint points[kMaxManifoldPoints];
      Contact pool[kMaxManifoldPoints + 1];
      for (Contact& c : pool) {
        c = Contact{};
        c.geom_a = -7;
        c.geom_b = -8;
        c.normal_force = Real(3.5);
        c.feature = 12345u;
      }
      const int n = CollideGeoms(ta, pa, kTypeSize[ta], tb, pb, kTypeSize[tb], 0.01, points, TypeHull(ta), TypeHull(tb));
      const int m = CollideGeoms(ta, pa, kTypeSize[ta], tb, pb, kTypeSize[tb], 0.01, pool, TypeHull(ta), TypeHull(tb));
      SCOPED_TRACE(::testing::Message() << "types " << ta << ", " << tb);
      ASSERT_EQ(n, m);
      for (int i = 0; i < n; ++i) {
        EXPECT_TRUE(SameVec(pool[i].point, points[i].point) && SameVec(pool[i].normal, points[i].normal)) << i;
        EXPECT_EQ(pool[i].separation, points[i].separation);
        EXPECT_EQ(pool[i].feature, points[i].feature);
        // the rest is CollideWorld's to set
        EXPECT_TRUE(pool[i].geom_a == -7 && pool[i].geom_b == -8 && pool[i].normal_force == Real(3.5)) << i;
      }
      for (int i = n; i <= kMaxManifoldPoints; ++i) EXPECT_EQ(pool[i].feature, 12345u) << "past the count";
    }
  }
}

TEST(CollideGeoms, SwappingArgumentsFlipsNormals) {
  for (int ta = 0; ta < kGeomTypeCount; ++ta) {
    for (int tb = 0; tb < kGeomTypeCount; ++tb) {
      if (ta == tb) continue;
      const Transform pa = TypePose(ta, 0), pb = TypePose(tb, 1);
      ContactPoint ab[kMaxManifoldPoints], ba[kMaxManifoldPoints];
      const int n_ab = CollideGeoms(ta, pa, kTypeSize[ta], tb, pb, kTypeSize[tb], 0.01, ab,
                                    TypeHull(ta), TypeHull(tb));
      const int n_ba = CollideGeoms(tb, pb, kTypeSize[tb], ta, pa, kTypeSize[ta], 0.01, ba,
                                    TypeHull(tb), TypeHull(ta));
      SCOPED_TRACE(::testing::Message() << "types " << ta << ", " << tb);
      ASSERT_EQ(n_ab, n_ba);
      EXPECT_GE(n_ab, 1);
      for (int i = 0; i < n_ab; ++i) {
        ExpectVecNear(ab[i].point, ba[i].point, kTol);
        ExpectVecNear(ab[i].normal, -ba[i].normal, kTol);
        EXPECT_NEAR(ab[i].separation, ba[i].separation, kTol);
        EXPECT_EQ(ab[i].feature, ba[i].feature);
      }
    }
  }
}

TEST(CollideGeoms, NormalPointsFromCallersAToB) {
  const Real r[3] = {0.5, 0, 0};
  ContactPoint c[kMaxManifoldPoints];
  // sphere above a plane: from the sphere (A) to the plane (B) is -z
  ASSERT_EQ(
      CollideGeoms(kGeomSphere, Pose(0, 0, 0.49), r, kGeomPlane, Pose(0, 0, 0), nullptr, 0, c), 1);
  ExpectVecNear(c[0].normal, Vec3{0, 0, -1}, kTol);
  EXPECT_NEAR(c[0].separation, -0.01, kTol);
  ASSERT_EQ(
      CollideGeoms(kGeomPlane, Pose(0, 0, 0), nullptr, kGeomSphere, Pose(0, 0, 0.49), r, 0, c), 1);
  ExpectVecNear(c[0].normal, Vec3{0, 0, 1}, kTol);
  // box (A) under a sphere (B): +z
  const Real h[3] = {0.5, 0.5, 0.5};
  ASSERT_EQ(CollideGeoms(kGeomBox, Pose(0, 0, 0), h, kGeomSphere, Pose(0, 0, 0.99), r, 0, c), 1);
  ExpectVecNear(c[0].normal, Vec3{0, 0, 1}, kTol);
  // box (A) under a capsule (B) lying on it: +z at both points
  const Real s[3] = {0.1, 0.3, 0};
  ASSERT_EQ(
      CollideGeoms(kGeomBox, Pose(0, 0, 0), h, kGeomCapsule, Pose(0, 0, 0.59, ZToX()), s, 0, c), 2);
  ExpectVecNear(c[0].normal, Vec3{0, 0, 1}, kTol);
  ExpectVecNear(c[1].normal, Vec3{0, 0, 1}, kTol);
}

TEST(CollideGeoms, MatchesDirectCallForOrderedPairs) {
  ContactPoint direct[kMaxManifoldPoints], dispatched[kMaxManifoldPoints];
  const Transform pa = TypePose(kGeomCapsule, 0), pb = TypePose(kGeomBox, 1);
  const int n0 =
      CollideCapsuleBox(pa, kTypeSize[kGeomCapsule], pb, kTypeSize[kGeomBox], 0.01, direct);
  const int n1 = CollideGeoms(kGeomCapsule, pa, kTypeSize[kGeomCapsule], kGeomBox, pb,
                              kTypeSize[kGeomBox], 0.01, dispatched);
  ASSERT_GE(n0, 1);
  ASSERT_EQ(n0, n1);
  for (int i = 0; i < n0; ++i) {
    ExpectVecNear(direct[i].normal, dispatched[i].normal, 0);
    EXPECT_EQ(direct[i].separation, dispatched[i].separation);
  }
}

TEST(CollideGeoms, PlanePlaneAndBadTypesGiveNothing) {
  ContactPoint c[kMaxManifoldPoints];
  const Real h[3] = {0.5, 0.5, 0.5};
  EXPECT_EQ(CollideGeoms(kGeomPlane, Pose(0, 0, 0), h, kGeomPlane, Pose(0, 0, 0.1), h, 1, c), 0);
  // -1 * 4 + 3 would alias plane-box if it were not rejected
  EXPECT_EQ(CollideGeoms(1, Pose(0, 0, 0), h, -1, Pose(0, 0, 0), h, 1, c), 0);
  EXPECT_EQ(CollideGeoms(kGeomBox, Pose(0, 0, 0), h, kGeomTypeCount, Pose(0, 0, 0), h, 1, c), 0);
}

// ---------------------------------------------------------------------------------------------
// invariants over random configurations of every pair

TEST(CollideGeoms, RandomConfigurationsAreWellFormed) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  const Real margin = 0.02;
  int total_points = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int ta = trial % kGeomTypeCount;
    const int tb = (trial / kGeomTypeCount) % kGeomTypeCount;
    Transform pose[2];
    Real size[2][3];
    const int types[2] = {ta, tb};
    for (int g = 0; g < 2; ++g) {
      pose[g] =
          Transform{Vec3{Real(0.5 * u(rng)), Real(0.5 * u(rng)), Real(0.5 * u(rng))},
                    NormalizeQuat(Quat{Real(u(rng)), Real(u(rng)), Real(u(rng)), Real(u(rng))})};
      for (int k = 0; k < 3; ++k) size[g][k] = Real(0.1 + 0.3 * (u(rng) + 1) / 2);
    }
    ContactPoint c[kMaxManifoldPoints];
    const int n = CollideGeoms(types[0], pose[0], size[0], types[1], pose[1], size[1], margin, c,
                               TypeHull(types[0]), TypeHull(types[1]));
    ASSERT_GE(n, 0);
    ASSERT_LE(n, kMaxManifoldPoints);
    if (ta == kGeomPlane && tb == kGeomPlane) {
      EXPECT_EQ(n, 0);
    }
    std::set<uint32_t> ids;
    for (int i = 0; i < n; ++i) {
      SCOPED_TRACE(::testing::Message() << "trial " << trial << " types " << ta << ", " << tb);
      EXPECT_LT(c[i].separation, margin);
      EXPECT_TRUE(std::isfinite(c[i].point.x) && std::isfinite(c[i].point.y) &&
                  std::isfinite(c[i].point.z));
      EXPECT_NEAR(Length(c[i].normal), 1, 1e-4);
      ids.insert(c[i].feature);
    }
    EXPECT_EQ(static_cast<int>(ids.size()), n) << "duplicate feature ids, trial " << trial;
    total_points += n;
  }
  EXPECT_GT(total_points, 1000);
}

TEST(CollideGeoms, DegenerateConfigurationsStayFinite) {
  // coincident centres, identical orientations and zero-length capsules: every pair must report
  // finite points with unit normals (these hit the fallback directions)
  const Real sizes[2][kGeomTypeCount][3] = {
      {{0, 0, 0}, {0.3, 0, 0}, {0.15, 0.3, 0}, {0.3, 0.2, 0.25}, {0.15, 0.2, 0},
       {0.3, 0.2, 0.15}, {0.6, 0, 0}},
      {{0, 0, 0}, {0.2, 0, 0}, {0.1, 0, 0}, {0.3, 0.2, 0.25}, {0.1, 0.02, 0}, {0.2, 0.2, 0.2},
       {0.6, 0, 0}}};
  for (int variant = 0; variant < 2; ++variant) {
    for (int ta = 0; ta < kGeomTypeCount; ++ta) {
      for (int tb = 0; tb < kGeomTypeCount; ++tb) {
        SCOPED_TRACE(::testing::Message()
                     << "variant " << variant << " types " << ta << ", " << tb);
        ContactPoint c[kMaxManifoldPoints];
        const int n = CollideGeoms(ta, Pose(0, 0, 0), sizes[variant][ta], tb, Pose(0, 0, 0),
                                   sizes[variant][tb], 0.01, c, TypeHull(ta), TypeHull(tb));
        EXPECT_EQ(n == 0, ta == kGeomPlane && tb == kGeomPlane);
        for (int i = 0; i < n; ++i) {
          EXPECT_TRUE(std::isfinite(c[i].separation));
          EXPECT_TRUE(std::isfinite(c[i].point.x) && std::isfinite(c[i].point.y) &&
                      std::isfinite(c[i].point.z));
          EXPECT_NEAR(Length(c[i].normal), 1, 1e-4);
          // hull vertices level with a plane through the centre touch it at zero gap
          if (ta == kGeomMesh || tb == kGeomMesh) {
            EXPECT_LE(c[i].separation, 0);
          } else {
            EXPECT_LT(c[i].separation, 0);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace s2r
