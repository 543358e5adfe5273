// SolverBody: a body as the solver sees it during one physics step.
//
// The state keeps the MJCF body frame; the solver works at the centre of mass with the principal
// inertia, and also tracks the displacement and rotation since the step began so contact
// separations can be updated each substep without running collision again (Box2D v3's
// deltaPosition / deltaRotation; the rotation is kept as an accumulated rotation vector, exact to
// first order, which is what a separation update over one step needs). Inverse mass and world
// inverse inertia are derived here from the per-world parameters at every step start, so a changed
// mass can never leave a stale inverse behind; within a step the world inverse inertia is held,
// as constraint effective masses are (the gyroscopic term uses the current orientation).
#pragma once

#include "kernels/math_types.h"
#include "kernels/model_view.h"
#include "kernels/state_view.h"

namespace s2r {

struct SolverBody {
  Vec3 com;          // centre of mass, world frame, m
  Quat rot;          // body-frame orientation, world frame
  Vec3 v;            // COM velocity, m/s
  Vec3 w;            // angular velocity, world frame, rad/s
  Vec3 delta_pos;    // COM displacement since the step began, m
  Vec3 delta_angle;  // rotation vector accumulated since the step began, world frame, rad
  Quat iquat;        // principal frame in the body frame
  Vec3 ipos;         // COM in the body frame, m
  Vec3 inertia;      // principal moments, kg m^2
  Real inv_mass;     // 1/kg, 0 for static and reduced bodies
  Mat3 inv_inertia;  // world-frame inverse inertia, 1/(kg m^2), zero for static and reduced bodies
  int32_t reduced;   // rank in the world's slide trees (solver_reduced.h), -1 for other bodies
  int32_t tree;      // rank in the world's articulated trees (solver_tree.h), -1 for other bodies
};

// The part of a body a constraint pair's rows read and write, held in registers while one pair is
// solved (SolveManifoldFriction, SolveManifoldNormals): every row reads the velocity the last one wrote, and through memory that
// chain would cost a store-to-load round trip per row.
struct BodyVelocity {
  Vec3 v, w;
  Real inv_mass;
  int32_t reduced;  // >= 0 for a body of any reduced tree (slide or articulated): one test per row
  int32_t tree;     // rank in the articulated trees, -1
};

// fixed to the world: no impulse moves it, and its velocity and its motion since the step began
// stay exactly zero (LoadSolverBody zeroes them, IntegratePosition skips it, and an impulse adds
// inv_mass p = 0)
S2R_HD bool IsStatic(const SolverBody& b) { return b.inv_mass == Real(0) && b.reduced < 0 && b.tree < 0; }

// The device's step is bound by its bytes, the CPU's by its instructions (docs/gpu.md, *What a row
// does not need to read*). On the device the contact solver skips the loads a body's kind makes
// needless, at a branch or a multiply each: a static body's velocity, motion and inverse inertia
// (zero), a slide tree body's spin (zero: solver_reduced.h sets it every step) and a free body's
// linear response along a row (its inverse mass along the direction, made rather than read:
// RowImpulse). On the CPU those branches and multiplies cost 7 % of throughput
// (bench/results/dev-2core/stop38_lean_reads_ab.md), so it reads everything, as before. The same
// bits either way. A CPU build with S2R_LEAN_READS defined runs the device's choice
// (bench/local_traffic.py counts its bytes).
#if defined(__CUDA_ARCH__) || defined(S2R_LEAN_READS)
constexpr bool kLeanReads = true;
#else
constexpr bool kLeanReads = false;
#endif

// whether a pair's rows read a body's velocity (ReadsVelocity) and its spin (ReadsSpin): always
// on the CPU; on the device not a static body's, nor a slide tree body's spin
S2R_HD bool ReadsVelocity(const SolverBody& b) { return !kLeanReads || !IsStatic(b); }
S2R_HD bool ReadsVelocity(const BodyVelocity& b) { return !kLeanReads || b.inv_mass != Real(0) || b.reduced >= 0; }
S2R_HD bool ReadsSpin(const SolverBody& b) { return !kLeanReads || b.inv_mass != Real(0) || b.tree >= 0; }
S2R_HD bool ReadsSpin(const BodyVelocity& b) { return !kLeanReads || b.inv_mass != Real(0) || b.tree >= 0; }

S2R_HD BodyVelocity LoadVelocity(const SolverBody& b) {
  BodyVelocity bv{Vec3{0, 0, 0}, Vec3{0, 0, 0}, b.inv_mass, b.tree >= 0 ? b.tree : b.reduced, b.tree};
  if (ReadsVelocity(bv)) {
    bv.v = b.v;
    bv.w = b.w;
  }
  return bv;
}
// (on the device a static body's velocity is not written back: it is zero, and stays so)
S2R_HD void StoreVelocity(const BodyVelocity& bv, SolverBody* b) {
  if (!ReadsVelocity(bv)) return;
  b->v = bv.v;
  b->w = bv.w;
}

// the world-frame inverse inertia; on the device not read where it is zero (a body of no inverse
// mass: static, or moved through its tree)
S2R_HD Mat3 InverseInertia(const SolverBody& b) {
  return !kLeanReads || b.inv_mass != Real(0) ? b.inv_inertia : Mat3{};
}

// world-frame inverse inertia R diag(1/I) R^T for the body's current orientation
S2R_HD void UpdateInverseInertia(SolverBody* b) {
  if (b->inv_mass == Real(0)) return;
  Mat3 r = QuatToMat3(b->rot * b->iquat);
  Vec3 inv_i{Real(1) / b->inertia.x, Real(1) / b->inertia.y, Real(1) / b->inertia.z};
  b->inv_inertia = RotateDiagonal(r, inv_i);
}

S2R_HD void LoadSolverBody(const ModelView& m, const StateView& s, int world, int body,
                           SolverBody* b) {
  b->rot = LoadQuat(s.body_quat(world, body));
  b->ipos = LoadVec3(m.body_ipos.At(world) + 3 * body);
  b->iquat = LoadQuat(m.body_iquat.At(world) + 4 * body);
  b->com = LoadVec3(s.body_pos(world, body)) + Rotate(b->rot, b->ipos);
  b->v = LoadVec3(s.body_linvel(world, body));
  b->w = LoadVec3(s.body_angvel(world, body));
  b->delta_pos = Vec3{0, 0, 0};
  b->delta_angle = Vec3{0, 0, 0};
  b->inertia = LoadVec3(m.body_inertia.At(world) + 3 * body);
  bool moving = m.body_dynamic[body] != 0;
  b->reduced = m.body_reduced != nullptr ? m.body_reduced[body] : -1;
  b->tree = m.body_tree != nullptr ? m.body_tree[body] : -1;
  // a reduced body moves only through its tree (solver_reduced.h, solver_tree.h)
  b->inv_mass = moving && b->reduced < 0 && b->tree < 0 ? Real(1) / m.body_mass.At(world)[body] : Real(0);
  b->inv_inertia = Mat3{};
  if (!moving || IsStatic(*b)) {
    b->v = Vec3{0, 0, 0};
    b->w = Vec3{0, 0, 0};
  }
  UpdateInverseInertia(b);
}

S2R_HD void StoreSolverBody(const SolverBody& b, const StateView& s, int world, int body) {
  StoreVec3(s.body_pos(world, body), b.com - Rotate(b.rot, b.ipos));
  StoreQuat(s.body_quat(world, body), b.rot);
  StoreVec3(s.body_linvel(world, body), b.v);
  StoreVec3(s.body_angvel(world, body), b.w);
}

// d(omega)/dt = I^-1 (I omega x omega) in the principal frame: torque-free Euler equations,
// componentwise (I_y - I_z) / I_x omega_y omega_z and cyclic; `coef` holds those inertia ratios
S2R_HD Vec3 EulerRate(Vec3 coef, Vec3 omega) {
  return Vec3{coef.x * (omega.y * omega.z), coef.y * (omega.z * omega.x), coef.z * (omega.x * omega.y)};
}

// Velocity stage of a substep: gravity, applied force and torque, and the gyroscopic term.
// The gyroscopic part integrates the torque-free Euler equations with RK4 in the principal frame
// (orientation held), and the position stage then rotates about the new angular velocity, which
// leaves the principal-frame angular velocity unchanged: each part conserves kinetic energy, so
// only the RK4 error and the splitting remain (see tests/kernels/free_body_test.cc).
S2R_HD void IntegrateVelocity(SolverBody* b, Vec3 gravity, Vec3 force, Vec3 torque, Real h) {
  if (b->inv_mass == Real(0)) return;
  b->v += h * (gravity + b->inv_mass * force);
  b->w += h * (b->inv_inertia * torque);
  // the gyroscopic rate scales with |w|^2: below 1e-12 rad^2/s^2 it is under float resolution;
  // with equal principal moments (cubes, spheres) I w x w is exactly zero
  if (LengthSq(b->w) < Real(1e-12)) return;
  if (b->inertia.x == b->inertia.y && b->inertia.y == b->inertia.z) return;
  Quat frame = b->rot * b->iquat;
  Vec3 om = InvRotate(frame, b->w);
  Vec3 in = b->inertia;
  Vec3 coef{(in.y - in.z) / in.x, (in.z - in.x) / in.y, (in.x - in.y) / in.z};
  Vec3 k1 = EulerRate(coef, om);
  Vec3 k2 = EulerRate(coef, om + (Real(0.5) * h) * k1);
  Vec3 k3 = EulerRate(coef, om + (Real(0.5) * h) * k2);
  Vec3 k4 = EulerRate(coef, om + h * k3);
  om += (h / Real(6)) * (k1 + Real(2) * k2 + Real(2) * k3 + k4);
  b->w = Rotate(frame, om);
}

// Position stage: rotation about the (constant over the substep) angular velocity.
S2R_HD void IntegratePosition(SolverBody* b, Real h) {
  if (IsStatic(*b) || b->tree >= 0) return;  // articulated trees move by their q (solver_tree.h)
  Vec3 dx = h * b->v;
  b->com += dx;
  b->delta_pos += dx;
  if (b->reduced >= 0) return;  // slide trees do not rotate
  // first-order quaternion update, renormalized: the rotation axis is exact (so the
  // principal-frame angular velocity, and with it the kinetic energy, is untouched); only the
  // angle is off, by O((h |w|)^3)
  // (normalizing the product normalizes dq too: one square root, not two)
  Vec3 half = (Real(0.5) * h) * b->w;
  b->rot = NormalizeQuat(Quat{Real(1), half.x, half.y, half.z} * b->rot);
  b->delta_angle += h * b->w;
}

// velocity of a point at offset r from the COM
S2R_HD Vec3 PointVelocity(const SolverBody& b, Vec3 r) { return b.v + Cross(b.w, r); }

// apply impulse p at offset r from the COM
// (static bodies, inverse mass 0, are skipped: the world and fixed bodies take no impulse)
S2R_HD void ApplyImpulse(SolverBody* b, Vec3 r, Vec3 p) {
  if (b->inv_mass == Real(0)) return;
  b->v += b->inv_mass * p;
  b->w += b->inv_inertia * Cross(r, p);
}
S2R_HD void ApplyAngularImpulse(SolverBody* b, Vec3 t) {
  if (b->inv_mass == Real(0)) return;
  b->w += b->inv_inertia * t;
}

// inverse effective mass of a scalar row with linear direction n through offsets ra, rb
S2R_HD Real InvEffectiveMass(const SolverBody& a, Vec3 ra, const SolverBody& b, Vec3 rb, Vec3 n) {
  Vec3 rna = Cross(ra, n), rnb = Cross(rb, n);
  return a.inv_mass + b.inv_mass + Dot(rna, a.inv_inertia * rna) + Dot(rnb, b.inv_inertia * rnb);
}
// inverse effective mass of an angular row about unit axis n
S2R_HD Real InvEffectiveMassAngular(const SolverBody& a, const SolverBody& b, Vec3 n) {
  return Dot(n, a.inv_inertia * n) + Dot(n, b.inv_inertia * n);
}

}  // namespace s2r
