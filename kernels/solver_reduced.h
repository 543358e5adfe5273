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
  Real* rot = nullptr;            // (R, 4) orientation of each rank's body (fixed: trees do not rotate)
  Real* parent_arm = nullptr;     // (R, 3) parent's COM to the joint anchor, world, m
  Real* child_arm = nullptr;      // (R, 3) body's COM to the joint anchor, world, m
  uint32_t* valid = nullptr;      // what of the above is current (kReducedBaseValid, W columns)
};

// The block is per world and survives between steps: everything in it but q0 depends only on the
// model parameters (masses, armature, inertial frames, gravity) and on where the trees' fixed
// parents stand, none of which a step changes, so it is built once and reused until the backend
// clears `valid` (a parameter change, reset or state upload). Bit kReducedBaseValid: the geometry,
// M^-1, U and gravity response; bit b < R: W's column b.
constexpr uint32_t kReducedBaseValid = 1u << 31;

S2R_HD int ReducedScratchSize(int r) {
  return r * r * 2 + 3 * r + 3 * r * r + 9 * r * r + 3 * r + 2 * r + 10 * r;
}

// `scratch`: the world's block of ReducedScratchSize(nreduced) Reals, `valid` its validity word
// (0 when nothing in it may be reused)
S2R_HD ReducedSet MakeReducedSet(const ModelView& m, SolverBody* bodies, Real* scratch,
                                 uint32_t* valid) {
  ReducedSet red;
  int r = m.nreduced;
  red.count = scratch != nullptr ? r : 0;
  red.body = m.reduced_body;
  red.parent = m.reduced_parent;
  red.bodies = bodies;
  red.valid = valid;
  if (red.count == 0) return red;
  red.minv = scratch;
  red.factor = red.minv + r * r;
  red.axis = red.factor + r * r;
  red.u = red.axis + 3 * r;
  red.w = red.u + 3 * r * r;
  red.gravity_dv = red.w + 9 * r * r;
  red.q0 = red.gravity_dv + 3 * r;
  red.subtree_mass = red.q0 + r;
  red.rot = red.subtree_mass + r;
  red.parent_arm = red.rot + 4 * r;
  red.child_arm = red.parent_arm + 3 * r;
  return red;
}

// W[c][b] p: body c's velocity change for linear impulse p on tree body b
S2R_HDI Vec3 ReducedResponse(const ReducedSet& red, int c, int b, Vec3 p) {
  const Real* w = red.w + 9 * (c * red.count + b);
  return Vec3{w[0] * p.x + w[1] * p.y + w[2] * p.z, w[3] * p.x + w[4] * p.y + w[5] * p.z,
              w[6] * p.x + w[7] * p.y + w[8] * p.z};
}

// velocity change of every tree body for linear impulse p on reduced body `rank`
S2R_HD void ReducedBodyImpulse(const ReducedSet& red, int rank, Vec3 p) {
  for (int c = 0; c < red.count; ++c) red.bodies[red.body[c]].v += ReducedResponse(red, c, rank, p);
}

// Impulses of one constraint pair's rows (a contact manifold: bodies a and b) on tree bodies.
// The rows read only a's and b's velocities, so those change at once (each row carries their
// response, ContactRow::dv_a / dv_b) and the rest of the tree takes the pair's summed impulses at
// the end (FlushPairTreeImpulses): the same velocities as moving the whole tree per row, at a
// fixed cost per row instead of 9 R multiply-adds.
struct PairTreeImpulses {
  Vec3 a{0, 0, 0}, b{0, 0, 0};  // linear impulses on a and on b so far
};

// the rest of the tree: every tree body but a and b, for the pair's impulses
S2R_HD void FlushPairTreeImpulses(const ReducedSet& red, const SolverBody& a, const SolverBody& b,
                                  const PairTreeImpulses& t) {
  if (a.reduced < 0 && b.reduced < 0) return;
  for (int c = 0; c < red.count; ++c) {
    if (c == a.reduced || c == b.reduced) continue;
    Vec3 dv{0, 0, 0};
    if (a.reduced >= 0) dv += ReducedResponse(red, c, a.reduced, t.a);
    if (b.reduced >= 0) dv += ReducedResponse(red, c, b.reduced, t.b);
    red.bodies[red.body[c]].v += dv;
  }
}

// velocity change of every tree body for generalized impulse `impulse` on the joint of `rank`
S2R_HD void ReducedJointImpulse(const ReducedSet& red, int rank, Real impulse) {
  const int r = red.count;
  for (int c = 0; c < r; ++c) {
    red.bodies[red.body[c]].v += impulse * LoadVec3(red.u + 3 * (c * r + rank));
  }
}

// Once per physics step, after the bodies are loaded: projects every tree body onto its joint.
// When the world's block is not current it first records the axes, orientations and anchor arms
// and builds M^-1, U and the gravity response (W: PrepareReducedImpulseResponse). Returns false
// when M cannot be factored (a massless leaf): the caller flags the world.
S2R_HD bool PrepareReduced(const ModelView& m, int world, const ReducedSet& red, Vec3 gravity) {
  const int r = red.count;
  if (r == 0) return true;
  const bool cached = (*red.valid & kReducedBaseValid) != 0;
  if (!cached) {
    // geometry: axes, orientations and anchor arms (ranks follow body order, parents first, so a
    // tree parent's orientation is already set)
    for (int k = 0; k < r; ++k) {
      int b = red.body[k];
      int j = m.body_joint[b];
      SolverBody& sb = red.bodies[b];
      const SolverBody& sp = red.bodies[m.body_parent[b]];
      StoreVec3(red.axis + 3 * k, Rotate(sp.rot, LoadVec3(m.joint_axis_parent + 3 * j)));
      sb.rot = NormalizeQuat(sp.rot * LoadQuat(m.joint_qrel0 + 4 * j));
      StoreQuat(red.rot + 4 * k, sb.rot);
      StoreVec3(red.parent_arm + 3 * k, Rotate(sp.rot, LoadVec3(m.joint_pos_parent + 3 * j) - sp.ipos));
      StoreVec3(red.child_arm + 3 * k, Rotate(sb.rot, LoadVec3(m.joint_pos_child + 3 * j) - sb.ipos));
    }
  }
  // every step: pose from q, velocity from q-dot (the parent is fixed or already projected)
  for (int k = 0; k < r; ++k) {
    int b = red.body[k];
    SolverBody& sb = red.bodies[b];
    const SolverBody& sp = red.bodies[m.body_parent[b]];
    Vec3 axis = LoadVec3(red.axis + 3 * k);
    sb.rot = LoadQuat(red.rot + 4 * k);
    Vec3 pa = sp.com + LoadVec3(red.parent_arm + 3 * k);
    Vec3 rb = LoadVec3(red.child_arm + 3 * k);
    Real q = Dot(sb.com + rb - pa, axis);
    sb.com = pa + q * axis - rb;
    red.q0[k] = q;
    Real qdot = Dot(sb.v - sp.v, axis);
    sb.v = sp.v + qdot * axis;
    sb.w = Vec3{0, 0, 0};
  }
  if (cached) return true;
  const Real* mass = m.body_mass.At(world);
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
  *red.valid = kReducedBaseValid;  // W's columns are built as needed
  return true;
}

// W[.][b] = J M^-1 J_b^T for the tree bodies b in `mask` (bit b): the response to a linear impulse
// on b. Only bodies that take such impulses (contacts, site actuators) need it, from the first
// step they do.
S2R_HD void PrepareReducedImpulseResponse(const ReducedSet& red, uint32_t mask) {
  const int r = red.count;
  mask &= ~*red.valid;  // columns built in an earlier step are still current
  *red.valid |= mask;
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
