// Slide trees in reduced coordinates.
//
// A tree of slide joints hanging from the world (or from a fixed body) -- a gantry, an XYZ stage,
// a parallel gripper's fingers on a stage -- never rotates, and its configuration is one
// coordinate per joint. In maximal coordinates each of its bodies would carry 6 DOFs and each
// slide 5 lock rows (a 3-slide stage with two fingers: 25 rows, factored every substep); here it
// carries its joint coordinates q and their rates q-dot and nothing else:
//   - the generalized mass matrix M_jk = sum over bodies c below both j and k of m_c (a_j . a_k),
//     plus the joint's armature on the diagonal, is constant while the axes are (all of them are:
//     nothing in the tree rotates);
//   - a generalized impulse on joint j changes q-dot by M^-1 e_j; a linear impulse P on tree body
//     b by G_b P, G_b = M^-1 J_b^T (R x 3), J_b the 3 x R matrix whose columns are the axes of
//     b's joint and its ancestors' (zero elsewhere);
//   - tree body c moves at J_c q-dot; within one contact pair's rows its velocity changes by
//     W_cb P, W_cb = J_c G_b (3 x 3), and the pair hands its summed impulses to q-dot at the end;
//   - torques are carried by the slides' bearings into the world: tree bodies never spin.
// During a substep's solve passes q-dot is the tree's velocity and the bodies' own velocities are
// stale; SyncTreeVelocities writes J q-dot into them before positions are integrated and at the
// end of the step, so the world's arrays keep ordinary body states (exactly J q-dot) that
// contacts, sensors and the dataset read. Every step starts by projecting each tree body back
// onto its joint (pose from q, velocity from q-dot) so rounding cannot drift. Position, velocity
// and motor actuators, limits, damping and friction loss act on q-dot with the inverse effective
// mass (M^-1)_jj, exactly what the locked maximal-coordinate rows converge to. Joints along
// orthogonal axes do not couple (their M^-1 entries are exact zeros), and impulses skip those
// entries, so an XYZ stage's joints are independent chains for the CPU to overlap.
//
// M^-1, G, W, the axes and the anchor arms depend only on the parameters and on where the trees'
// fixed parents stand: they are kept per world between steps (see kReducedBaseValid). The solver
// treats a tree body as having no inverse mass of its own (inv_mass = 0, inverse inertia 0): its
// velocity changes only through the functions here, which the contact and joint code call when
// SolverBody::reduced >= 0.
#pragma once

#include "kernels/dense.h"
#include "kernels/model_view.h"
#include "kernels/solver_body.h"
#include "kernels/solver_tree.h"

namespace s2r {

// Most reduced bodies (= slide joints in reduced coordinates) per model; the model builder leaves
// trees that would exceed it in maximal coordinates.
constexpr int kMaxReducedBodies = 12;
static_assert(kMaxReducedBodies <= 32, "impulse-response masks are 32-bit");

// Per-world block for the reduced bodies, laid out in one Real array (ReducedScratchSize).
struct ReducedSet {
  int32_t count = 0;              // R
  const int32_t* body = nullptr;  // (R) body of each reduced rank (the model's reduced_body)
  const int32_t* parent = nullptr;  // (R) rank of the parent, -1 when the parent is fixed
  SolverBody* bodies = nullptr;   // the world's solver bodies
  Real* minv = nullptr;           // (R, R) M^-1
  Real* axis = nullptr;           // (R, 3) world axis of each rank's joint
  Real* g = nullptr;              // (R, R, 3) G[b][k]: q-dot_k per unit linear impulse on body b
  Real* w = nullptr;              // (R, R, 9) W[c][b]: body c's velocity per unit linear impulse on b
  Real* gravity_dq = nullptr;     // (R) q-dot change per second of gravity, 1/s^2 (m/s^2)
  Real* factor = nullptr;         // (R, R) Cholesky scratch
  Real* q0 = nullptr;             // (R) joint coordinate at the step start, m
  Real* qdot = nullptr;           // (R) joint rates: the tree's velocity during a step, m/s
  Real* subtree_mass = nullptr;   // (R) mass of each rank's body and everything below it, kg
  Real* rot = nullptr;            // (R, 4) orientation of each rank's body (fixed: trees do not rotate)
  Real* parent_arm = nullptr;     // (R, 3) parent's COM to the joint anchor, world, m
  Real* child_arm = nullptr;      // (R, 3) body's COM to the joint anchor, world, m
  uint32_t* valid = nullptr;      // what of the above is current (kReducedBaseValid, G/W columns)
  TreeSet tree;                   // the articulated trees (solver_tree.h): rebuilt every step
};

// The block is per world and survives between steps: everything in it but q0 and q-dot depends
// only on the model parameters (masses, armature, inertial frames, gravity) and on where the
// trees' fixed parents stand, none of which a step changes, so it is built once and reused until
// the backend clears `valid` (a parameter change, reset or state upload). Bit kReducedBaseValid:
// the geometry, M^-1 and the gravity response; bit b < R: G's and W's column b.
constexpr uint32_t kReducedBaseValid = 1u << 31;
// Bit kReducedEdited: the block was dropped within the current launch by a state edit (a sweep
// event, sweep_step.h) and rebuilt since, possibly to the same bits from a new pose. It survives
// the rebuild, so a backend that copies a world's block in and out (the CUDA kernels' staging)
// sees that the block changed even where the other bits did not; the CUDA backend clears it when
// it writes the block back. The CPU backend leaves it: no test of the word reads it.
constexpr uint32_t kReducedEdited = 1u << 30;

S2R_HD int ReducedScratchSize(int r) {
  return 2 * r * r + 3 * r + 3 * r * r + 9 * r * r + r + r + r + r + 4 * r + 3 * r + 3 * r;
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
  red.g = red.axis + 3 * r;
  red.w = red.g + 3 * r * r;
  red.gravity_dq = red.w + 9 * r * r;
  red.q0 = red.gravity_dq + r;
  red.qdot = red.q0 + r;
  red.subtree_mass = red.qdot + r;
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

// tree body c's velocity J_c q-dot (its tree's root hangs from a fixed body)
S2R_HD Vec3 TreeBodyVelocity(const ReducedSet& red, int c) {
  Vec3 v{0, 0, 0};
  for (int k = c; k >= 0; k = red.parent[k]) v += red.qdot[k] * LoadVec3(red.axis + 3 * k);
  return v;
}

// every tree body's velocity from q-dot (before positions are integrated, and at the step's end)
S2R_HD void SyncTreeVelocities(const ReducedSet& red) {
  for (int c = 0; c < red.count; ++c) red.bodies[red.body[c]].v = TreeBodyVelocity(red, c);
}

// linear impulse p on tree body `rank`: q-dot += G_rank p (zero rows skipped)
S2R_HD void ReducedBodyImpulse(const ReducedSet& red, int rank, Vec3 p) {
  const int r = red.count;
  for (int k = 0; k < r; ++k) {
    Vec3 gk = LoadVec3(red.g + 3 * (rank * r + k));
    if (gk.x != Real(0) || gk.y != Real(0) || gk.z != Real(0)) red.qdot[k] += Dot(gk, p);
  }
}

// generalized impulse on the joint of `rank`: q-dot += M^-1 e_rank (zero entries skipped: joints
// that do not couple are not touched)
S2R_HD void ReducedJointImpulse(const ReducedSet& red, int rank, Real impulse) {
  const int r = red.count;
  for (int k = 0; k < r; ++k) {
    Real mk = red.minv[rank * r + k];
    if (mk != Real(0)) red.qdot[k] += impulse * mk;
  }
}

// Impulses of one constraint pair's rows (a contact manifold: bodies a and b) on tree bodies.
// The rows read only a's and b's velocities, so those change at once (each row carries their
// response, ContactRow::dv_a / dv_b, in the pair's register copies) and q-dot takes the pair's
// summed impulses at the end (FlushPairTreeImpulses).
// Articulated-tree bodies (solver_tree.h) also collect the angular impulses (about their COM).
struct PairTreeImpulses {
  Vec3 a{0, 0, 0}, b{0, 0, 0};  // linear impulses on a and on b so far
  Vec3 ta{0, 0, 0}, tb{0, 0, 0};  // angular impulses on a and on b (articulated trees only)
};

// kTrees false: the model has no articulated tree (kernels/step_features.h)
template <bool kTrees = true>
S2R_HD void FlushPairTreeImpulses(const ReducedSet& red, const BodyVelocity& a, const BodyVelocity& b,
                                  const PairTreeImpulses& t) {
  // (a BodyVelocity's `reduced` is its rank in either kind of tree: `tree` says which)
  if (a.reduced >= 0 && a.tree < 0) ReducedBodyImpulse(red, a.reduced, t.a);
  if (b.reduced >= 0 && b.tree < 0) ReducedBodyImpulse(red, b.reduced, t.b);
  if (kTrees && a.tree >= 0) TreeBodyImpulse(red.tree, a.tree, t.a, t.ta);
  if (kTrees && b.tree >= 0) TreeBodyImpulse(red.tree, b.tree, t.b, t.tb);
}

// Once per physics step, after the bodies are loaded: projects every tree body onto its joint.
// When the world's block is not current it first records the axes, orientations and anchor arms
// and builds M^-1 and the gravity response (G, W: PrepareReducedImpulseResponse). Sets q-dot.
// Returns false when M cannot be factored (a massless leaf): the caller flags the world.
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
    red.qdot[k] = qdot;
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
  // M^-1 by a dense Cholesky factorization (kernels/dense.h)
  if (!SpdInverse<kMaxReducedBodies>(mm, red.minv, r)) return false;
  // gravity: generalized force tau_j = (a_j . g) times the mass below j, then M^-1 tau
  Real* tau = red.factor;  // M's factor is no longer needed
  for (int j = 0; j < r; ++j) tau[j] = sub[j] * Dot(LoadVec3(red.axis + 3 * j), gravity);
  for (int k = 0; k < r; ++k) {
    Real dq = Real(0);
    for (int j = 0; j < r; ++j) dq += red.minv[k * r + j] * tau[j];
    red.gravity_dq[k] = dq;
  }
  *red.valid = kReducedBaseValid | (*red.valid & kReducedEdited);  // W's columns are built as needed
  return true;
}

// G[b] = M^-1 J_b^T and W[.][b] = J G[b] for the tree bodies b in `mask` (bit b): the responses
// to a linear impulse on b. Only bodies that take such impulses (contacts, site actuators) need
// them, from the first step they do.
S2R_HD void PrepareReducedImpulseResponse(const ReducedSet& red, uint32_t mask) {
  const int r = red.count;
  mask &= ~*red.valid;  // columns built in an earlier step are still current
  *red.valid |= mask;
  for (int b = 0; b < r; ++b) {
    if (!(mask & (1u << b))) continue;
    for (int k = 0; k < r; ++k) {  // G[b][k] = sum over b's chain j of (M^-1)_kj a_j
      Vec3 gk{0, 0, 0};
      for (int j = b; j >= 0; j = red.parent[j]) gk += red.minv[k * r + j] * LoadVec3(red.axis + 3 * j);
      StoreVec3(red.g + 3 * (b * r + k), gk);
    }
    for (int c = 0; c < r; ++c) {  // W[c][b] = sum over c's chain k of a_k G[b][k]^T
      Real* w = red.w + 9 * (c * r + b);
      for (int e = 0; e < 9; ++e) w[e] = Real(0);
      for (int k = c; k >= 0; k = red.parent[k]) {
        Vec3 a = LoadVec3(red.axis + 3 * k);
        Vec3 gk = LoadVec3(red.g + 3 * (b * r + k));
        w[0] += a.x * gk.x; w[1] += a.x * gk.y; w[2] += a.x * gk.z;
        w[3] += a.y * gk.x; w[4] += a.y * gk.y; w[5] += a.y * gk.z;
        w[6] += a.z * gk.x; w[7] += a.z * gk.y; w[8] += a.z * gk.z;
      }
    }
  }
}

// gravity over a substep on the joint rates
S2R_HD void ReducedIntegrateVelocity(const ReducedSet& red, Real h) {
  for (int k = 0; k < red.count; ++k) red.qdot[k] += h * red.gravity_dq[k];
}

}  // namespace s2r
