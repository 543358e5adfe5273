// Small fixed-size 3D math: Vec3, Quat (w, x, y, z; Hamilton product, rotates body -> world),
// Mat3 (row-major). POD structs so views can alias raw arrays of Real.
#pragma once

#include "kernels/base.h"

namespace s2r {

struct Vec3 {
  Real x, y, z;
};

struct Quat {
  Real w, x, y, z;
};

// row-major 3x3: m[row][col]
struct Mat3 {
  Real m[3][3];
};

S2R_HDI Vec3 MakeVec3(Real x, Real y, Real z) { return Vec3{x, y, z}; }
S2R_HDI Vec3 LoadVec3(const Real* p) { return Vec3{p[0], p[1], p[2]}; }
S2R_HDI void StoreVec3(Real* p, Vec3 v) { p[0] = v.x; p[1] = v.y; p[2] = v.z; }
S2R_HDI Quat LoadQuat(const Real* p) { return Quat{p[0], p[1], p[2], p[3]}; }
S2R_HDI void StoreQuat(Real* p, Quat q) { p[0] = q.w; p[1] = q.x; p[2] = q.y; p[3] = q.z; }

S2R_HDI Vec3 operator+(Vec3 a, Vec3 b) { return Vec3{a.x + b.x, a.y + b.y, a.z + b.z}; }
S2R_HDI Vec3 operator-(Vec3 a, Vec3 b) { return Vec3{a.x - b.x, a.y - b.y, a.z - b.z}; }
S2R_HDI Vec3 operator-(Vec3 a) { return Vec3{-a.x, -a.y, -a.z}; }
S2R_HDI Vec3 operator*(Real s, Vec3 a) { return Vec3{s * a.x, s * a.y, s * a.z}; }
S2R_HDI Vec3 operator*(Vec3 a, Real s) { return Vec3{s * a.x, s * a.y, s * a.z}; }
S2R_HDI Vec3& operator+=(Vec3& a, Vec3 b) { a.x += b.x; a.y += b.y; a.z += b.z; return a; }
S2R_HDI Vec3& operator-=(Vec3& a, Vec3 b) { a.x -= b.x; a.y -= b.y; a.z -= b.z; return a; }
S2R_HDI Real Dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
S2R_HDI Vec3 Cross(Vec3 a, Vec3 b) {
  return Vec3{a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
S2R_HDI Real LengthSq(Vec3 a) { return Dot(a, a); }
S2R_HDI Real Length(Vec3 a) { return Sqrt(Dot(a, a)); }
S2R_HDI Vec3 Mul(Vec3 a, Vec3 b) { return Vec3{a.x * b.x, a.y * b.y, a.z * b.z}; }
S2R_HDI Vec3 Normalize(Vec3 a) {
  Real len = Length(a);
  return len > Real(0) ? (Real(1) / len) * a : Vec3{Real(0), Real(0), Real(1)};
}
S2R_HDI Real Component(Vec3 a, int i) { return i == 0 ? a.x : (i == 1 ? a.y : a.z); }

// any unit vector orthogonal to unit n, and a third completing a right-handed basis
S2R_HDI void OrthonormalBasis(Vec3 n, Vec3* t1, Vec3* t2) {
  // Frisvad / Duff et al. 2017 branchless basis
  Real sign = n.z >= Real(0) ? Real(1) : Real(-1);
  Real a = Real(-1) / (sign + n.z);
  Real b = n.x * n.y * a;
  *t1 = Vec3{Real(1) + sign * n.x * n.x * a, sign * b, -sign * n.x};
  *t2 = Vec3{b, sign + n.y * n.y * a, -n.y};
}

// --- quaternions -------------------------------------------------------------------------------

S2R_HDI Quat QuatIdentity() { return Quat{Real(1), Real(0), Real(0), Real(0)}; }
S2R_HDI Quat operator*(Quat a, Quat b) {
  return Quat{a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
              a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
              a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
              a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}
S2R_HDI Quat Conjugate(Quat q) { return Quat{q.w, -q.x, -q.y, -q.z}; }
S2R_HDI Quat NormalizeQuat(Quat q) {
  Real n = Sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
  Real s = n > Real(0) ? Real(1) / n : Real(0);
  return n > Real(0) ? Quat{q.w * s, q.x * s, q.y * s, q.z * s} : QuatIdentity();
}
// v' = q v q*
S2R_HDI Vec3 Rotate(Quat q, Vec3 v) {
  Vec3 u{q.x, q.y, q.z};
  Vec3 t = Real(2) * Cross(u, v);
  return v + q.w * t + Cross(u, t);
}
S2R_HDI Vec3 InvRotate(Quat q, Vec3 v) { return Rotate(Conjugate(q), v); }

S2R_HDI Quat QuatFromAxisAngle(Vec3 unit_axis, Real angle) {
  Real s = Sin(Real(0.5) * angle);
  return Quat{Cos(Real(0.5) * angle), s * unit_axis.x, s * unit_axis.y, s * unit_axis.z};
}

// --- 3x3 matrices ------------------------------------------------------------------------------

S2R_HDI Vec3 operator*(const Mat3& a, Vec3 v) {
  return Vec3{a.m[0][0] * v.x + a.m[0][1] * v.y + a.m[0][2] * v.z,
              a.m[1][0] * v.x + a.m[1][1] * v.y + a.m[1][2] * v.z,
              a.m[2][0] * v.x + a.m[2][1] * v.y + a.m[2][2] * v.z};
}
S2R_HDI Mat3 QuatToMat3(Quat q) {
  Real xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
  Real xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
  Real wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  Mat3 r;
  r.m[0][0] = 1 - 2 * (yy + zz); r.m[0][1] = 2 * (xy - wz);     r.m[0][2] = 2 * (xz + wy);
  r.m[1][0] = 2 * (xy + wz);     r.m[1][1] = 1 - 2 * (xx + zz); r.m[1][2] = 2 * (yz - wx);
  r.m[2][0] = 2 * (xz - wy);     r.m[2][1] = 2 * (yz + wx);     r.m[2][2] = 1 - 2 * (xx + yy);
  return r;
}
S2R_HDI Vec3 Column(const Mat3& a, int c) { return Vec3{a.m[0][c], a.m[1][c], a.m[2][c]}; }
// R diag(d) R^T: a principal-axis tensor expressed in the world frame
S2R_HDI Mat3 RotateDiagonal(const Mat3& r, Vec3 d) {
  Mat3 out;
  for (int i = 0; i < 3; ++i) {
    for (int j = i; j < 3; ++j) {
      Real s = r.m[i][0] * d.x * r.m[j][0] + r.m[i][1] * d.y * r.m[j][1] + r.m[i][2] * d.z * r.m[j][2];
      out.m[i][j] = s;
      out.m[j][i] = s;
    }
  }
  return out;
}

// a rigid transform: p_world = pos + rot * p_local
struct Transform {
  Vec3 pos;
  Quat rot;
};
S2R_HDI Vec3 TransformPoint(const Transform& t, Vec3 p) { return t.pos + Rotate(t.rot, p); }
S2R_HDI Vec3 InvTransformPoint(const Transform& t, Vec3 p) { return InvRotate(t.rot, p - t.pos); }
S2R_HDI Transform Compose(const Transform& a, const Transform& b) {
  return Transform{TransformPoint(a, b.pos), a.rot * b.rot};
}

}  // namespace s2r
