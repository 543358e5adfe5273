// Slide trees in reduced coordinates.
//
// A tree of slide joints hanging from the world (or from a fixed body) -- a gantry, an XYZ stage,
// a parallel gripper's fingers on a stage -- never rotates, and its configuration is one
// coordinate per joint. In maximal coordinates each of its bodies would carry 6 DOFs and each
// slide 5 lock rows (a 3-slide stage with two fingers: 25 rows, factored every substep); here it
// carries its joint coordinates q and nothing else:
//   - the generalized mass matrix M_jk = sum over bodies c below both j and k of m_c (a_j . a_k),
//     plus the joint's armature on the diagonal, is constant while the axes are (all of them are:
//     nothing in the tree rotates); it is factored once per physics step;
//   - a linear impulse P on tree body b moves the coordinates by M^-1 J_b^T P, J_b the 3 x n
//     matrix whose columns are the axes of b's joint and its ancestors', so every tree body c
//     changes velocity by W_cb P with W_cb = J_c M^-1 J_b^T (3 x 3, precomputed per step);
//   - a generalized impulse on joint j changes body c's velocity by U_cj = J_c M^-1 e_j;
//   - torques are carried by the slides' bearings into the world: tree bodies never spin.
// The bodies keep their maximal state (pose, velocity) in the world's arrays, which is exactly
// J q-dot; contacts, sensors and the dataset see ordinary bodies. Every step starts by projecting
// each tree body back onto its joint (pose from q, velocity from q-dot) so rounding cannot drift.
// Position, velocity and motor actuators, limits, damping and friction loss act on q-dot with the
// inverse effective mass (M^-1)_jj, exactly what the locked maximal-coordinate rows converge to.
//
// The solver treats a tree body as having no inverse mass of its own (inv_mass = 0, inverse
// inertia 0): its velocity changes only through the functions here, which the contact and joint
// code call when SolverBody::reduced >= 0.
#pragma once

#include "kernels/model_view.h"
#include "kernels/solver_body.h"

namespace s2r {

// Most reduced bodies (= slide joints in reduced coordinates) per model; the model builder leaves
// trees that would exceed it in maximal coordinates.
constexpr int kMaxReducedBodies = 12;
static_assert(kMaxReducedBodies <= 32, "impulse-response masks are 32-bit");

// Per-world scratch for the reduced bodies, laid out in one Real block (ReducedScratchSize).
struct ReducedSet {
  int32_t count = 0;              // R
  const int32_t* body = nullptr;  // (R) body of each reduced rank (the model's reduced_body)
  const int32_t* parent = nullptr;  // (R) rank of the parent, -1 when the parent is fixed
  SolverBody* bodies = nullptr;   // the world's solver bodies
  Real* minv = nullptr;           // (R, R) M^-1
  Real* axis = nullptr;           // (R, 3) world axis of each rank's joint
  Real* u = nullptr;              // (R, R, 3) U[c][j]: body c's velocity per unit impulse on joint j
  Real* w = nullptr;              // (R, R, 9) W[c][b]: body c's velocity per unit linear impulse on b
  Real* gravity_dv = nullptr;     // (R, 3) body c's velocity change per second of gravity
  Real* factor = nullptr;         // (R, R) Cholesky scratch
  Real* q0 = nullptr;             // (R) joint coordinate at the step start, m
  Real* subtree_mass = nullptr;   // (R) mass of each rank's body and everything below it, kg
};

S2R_HD int ReducedScratchSize(int r) { return r * r * 2 + 3 * r + 3 * r * r + 9 * r * r + 3 * r + 2 * r; }

S2R_HD ReducedSet MakeReducedSet(const ModelView& m, SolverBody* bodies, Real* scratch) {
  ReducedSet red;
  int r = m.nreduced;
  red.count = scratch != nullptr ? r : 0;
  red.body = m.reduced_body;
  red.parent = m.reduced_parent;
  red.bodies = bodies;
  if (red.count == 0) return red;
  red.minv = scratch;
  red.factor = red.minv + r * r;
  red.axis = red.factor + r * r;
  red.u = red.axis + 3 * r;
  red.w = red.u + 3 * r * r;
  red.gravity_dv = red.w + 9 * r * r;
  red.q0 = red.gravity_dv + 3 * r;
  red.subtree_mass = red.q0 + r;
  return red;
}

// velocity change of every tree body for linear impulse p on reduced body `rank`
S2R_HD void ReducedBodyImpulse(const ReducedSet& red, int rank, Vec3 p) {
  const int r = red.count;
  for (int c = 0; c < r; ++c) {
    const Real* w = red.w + 9 * (c * r + rank);
    SolverBody& b = red.bodies[red.body[c]];
    b.v.x += w[0] * p.x + w[1] * p.y + w[2] * p.z;
    b.v.y += w[3] * p.x + w[4] * p.y + w[5] * p.z;
    b.v.z += w[6] * p.x + w[7] * p.y + w[8] * p.z;
  }
}

// velocity change of every tree body for generalized impulse `impulse` on the joint of `rank`
S2R_HD void ReducedJointImpulse(const ReducedSet& red, int rank, Real impulse) {
  const int r = red.count;
  for (int c = 0; c < r; ++c) {
    red.bodies[red.body[c]].v += impulse * LoadVec3(red.u + 3 * (c * r + rank));
  }
}

// d^T W[c][b] d
S2R_HD Real ReducedCoupling(const ReducedSet& red, int c, int b, Vec3 d) {
  const Real* w = red.w + 9 * (c * red.count + b);
  return d.x * (w[0] * d.x + w[1] * d.y + w[2] * d.z) + d.y * (w[3] * d.x + w[4] * d.y + w[5] * d.z) +
         d.z * (w[6] * d.x + w[7] * d.y + w[8] * d.z);
}

// Linear part of a row's inverse effective mass along d between bodies a and b: the plain inverse
// masses for ordinary bodies, d^T (W_aa + W_bb - W_ab - W_ba) d for tree bodies (the cross terms
// when both are in one tree: two fingers on one stage).
S2R_HD Real LinearInvMass(const ReducedSet& red, const SolverBody& a, const SolverBody& b, Vec3 d) {
  Real k = a.reduced >= 0 ? ReducedCoupling(red, a.reduced, a.reduced, d) : a.inv_mass;
  k += b.reduced >= 0 ? ReducedCoupling(red, b.reduced, b.reduced, d) : b.inv_mass;
  if (a.reduced >= 0 && b.reduced >= 0) {
    k -= ReducedCoupling(red, a.reduced, b.reduced, d) + ReducedCoupling(red, b.reduced, a.reduced, d);
  }
  return k;
}

// Linear impulse p on body b: through the tree for a reduced body, else v += p / m.
S2R_HD void ApplyLinearImpulse(const ReducedSet& red, SolverBody* b, Vec3 p) {
  if (b->reduced >= 0) ReducedBodyImpulse(red, b->reduced, p);
  else b->v += b->inv_mass * p;
}

// Once per physics step, after the bodies are loaded: projects every tree body onto its joint,
// records the axes and builds M^-1, U and the gravity response (W: PrepareReducedImpulseResponse). Returns false when M cannot be
// factored (a massless leaf): the caller flags the world.
S2R_HD bool PrepareReduced(const ModelView& m, int world, const ReducedSet& red, Vec3 gravity) {
  const int r = red.count;
  if (r == 0) return true;
  const Real* mass = m.body_mass.At(world);
  for (int k = 0; k < r; ++k) {
    int b = red.body[k];
    int j = m.body_joint[b];
    SolverBody& sb = red.bodies[b];
    const SolverBody& sp = red.bodies[m.body_parent[b]];
    Vec3 axis = Rotate(sp.rot, LoadVec3(m.joint_axis_parent + 3 * j));
    StoreVec3(red.axis + 3 * k, axis);
    // pose from q, velocity from q-dot: the parent is fixed or already projected (ranks follow
    // body order, parents first)
    sb.rot = NormalizeQuat(sp.rot * LoadQuat(m.joint_qrel0 + 4 * j));
    Vec3 pa = sp.com + Rotate(sp.rot, LoadVec3(m.joint_pos_parent + 3 * j) - sp.ipos);
    Vec3 rb = Rotate(sb.rot, LoadVec3(m.joint_pos_child + 3 * j) - sb.ipos);
    Real q = Dot(sb.com + rb - pa, axis);
    sb.com = pa + q * axis - rb;
    red.q0[k] = q;
    Real qdot = Dot(sb.v - sp.v, axis);
    sb.v = sp.v + qdot * axis;
    sb.w = Vec3{0, 0, 0};
  }
  // M: for k below (or at) i, M_ik = (a_i . a_k) times the mass of k's subtree; 0 for joints on
  // different branches
  Real* sub = red.subtree_mass;
  for (int k = 0; k < r; ++k) sub[k] = mass[red.body[k]];
  for (int k = r - 1; k >= 0; --k) {
    if (red.parent[k] >= 0) sub[red.parent[k]] += sub[k];
  }
  Real* mm = red.factor;
  for (int k = 0; k < r * r; ++k) mm[k] = Real(0);
  for (int k = 0; k < r; ++k) {
    Vec3 ak = LoadVec3(red.axis + 3 * k);
    for (int i = k; i >= 0; i = red.parent[i]) {
      Real v = sub[k] * Dot(LoadVec3(red.axis + 3 * i), ak);
      mm[i * r + k] = v;
      mm[k * r + i] = v;
    }
  }
  const Real* armature = m.joint_armature.At(world);
  for (int i = 0; i < r; ++i) mm[i * r + i] += armature[m.body_joint[red.body[i]]];
  // dense Cholesky M = L L^T (the diagonal holds 1 / L_ii), then M^-1 column by column
  for (int i = 0; i < r; ++i) {
    for (int k = 0; k <= i; ++k) {
      Real s = mm[i * r + k];
      for (int p = 0; p < k; ++p) s -= mm[i * r + p] * mm[k * r + p];
      if (i == k) {
        if (!(s > Real(0))) return false;
        mm[i * r + i] = Real(1) / Sqrt(s);
      } else {
        mm[i * r + k] = s * mm[k * r + k];
      }
    }
  }
  for (int col = 0; col < r; ++col) {
    // L y = e_col (y is zero above col), then L^T x = y, in registers-friendly local storage
    Real x[kMaxReducedBodies];
    for (int i = 0; i < col; ++i) x[i] = Real(0);
    for (int i = col; i < r; ++i) {
      Real s = i == col ? Real(1) : Real(0);
      for (int p = col; p < i; ++p) s -= mm[i * r + p] * x[p];
      x[i] = s * mm[i * r + i];
    }
    for (int i = r - 1; i >= 0; --i) {
      Real s = x[i];
      for (int p = i + 1; p < r; ++p) s -= mm[p * r + i] * x[p];
      x[i] = s * mm[i * r + i];
    }
    for (int i = 0; i < r; ++i) red.minv[col * r + i] = x[i];  // M^-1 is symmetric: rows = columns
  }
  // U[c][j] = sum over c's chain k of a_k (M^-1)_kj = U[parent c][j] + a_c (M^-1)_cj
  for (int c = 0; c < r; ++c) {
    Vec3 ac = LoadVec3(red.axis + 3 * c);
    int p = red.parent[c];
    for (int j = 0; j < r; ++j) {
      Vec3 u = red.minv[c * r + j] * ac;
      if (p >= 0) u += LoadVec3(red.u + 3 * (p * r + j));
      StoreVec3(red.u + 3 * (c * r + j), u);
    }
  }
  // gravity: generalized force tau_j = (a_j . g) times the mass below j, then U tau
  Real* tau = red.factor;  // M's factor is no longer needed
  for (int j = 0; j < r; ++j) tau[j] = sub[j] * Dot(LoadVec3(red.axis + 3 * j), gravity);
  for (int c = 0; c < r; ++c) {
    Vec3 g{0, 0, 0};
    for (int j = 0; j < r; ++j) g += tau[j] * LoadVec3(red.u + 3 * (c * r + j));
    StoreVec3(red.gravity_dv + 3 * c, g);
  }
  return true;
}

// W[.][b] = J M^-1 J_b^T for the tree bodies b in `mask` (bit b): the response to a linear impulse
// on b. Only bodies that take such impulses this step (contacts, site actuators) need it.
S2R_HD void PrepareReducedImpulseResponse(const ReducedSet& red, uint32_t mask) {
  const int r = red.count;
  for (int b = 0; b < r; ++b) {
    if (!(mask & (1u << b))) continue;
    for (int c = 0; c < r; ++c) {
      Real* w = red.w + 9 * (c * r + b);
      for (int k = 0; k < 9; ++k) w[k] = Real(0);
      for (int j = b; j >= 0; j = red.parent[j]) {  // sum over b's chain j of U[c][j] a_j^T
        Vec3 u = LoadVec3(red.u + 3 * (c * r + j));
        Vec3 a = LoadVec3(red.axis + 3 * j);
        w[0] += u.x * a.x; w[1] += u.x * a.y; w[2] += u.x * a.z;
        w[3] += u.y * a.x; w[4] += u.y * a.y; w[5] += u.y * a.z;
        w[6] += u.z * a.x; w[7] += u.z * a.y; w[8] += u.z * a.z;
      }
    }
  }
}

// gravity over a substep on every tree body
S2R_HD void ReducedIntegrateVelocity(const ReducedSet& red, Real h) {
  for (int c = 0; c < red.count; ++c) red.bodies[red.body[c]].v += h * LoadVec3(red.gravity_dv + 3 * c);
}

}  // namespace s2r
