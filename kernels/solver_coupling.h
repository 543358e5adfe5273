// Couplings in joint space: MJCF <equality><joint>, <connect> and <weld>, and fixed tendons, on
// articulated trees.
//
// Both are rows in the joint space of the reduced-coordinate trees (solver_tree.h): a row is a
// sparse vector J over the tree ranks, its velocity J q-dot, its inverse effective mass
// J M^-1 J^T, and an impulse p along it changes q-dot by M^-1 J^T p. Joints of different trees
// may share a row: the trees' M^-1 is one block-diagonal matrix over all ranks.
//
//   equality   q1 = a0 + a1 q2 + a2 q2^2 + a3 q2^3 + a4 q2^4 (MuJoCo's joint equality; the joints'
//              reference positions are 0 in s2r, which rejects a non-zero joint `ref`), or q1 = a0
//              without joint2. C = q1 - poly(q2), J = e1 - poly'(q2) e2, linearized at the current
//              q2. Bilateral and rigid at the velocity level (solved exactly, like the joint locks):
//              the solve pass drives J q-dot to -bias_rate C, the relax pass to 0. The position
//              error is corrected at the rate of a spring of natural frequency
//              1 / (2 pi timeconst dampratio) and damping ratio dampratio (MJCF solref, the same
//              frequency and damping MuJoCo's reference acceleration has for solimp's d -> 1),
//              Box2D's soft-step bias rate (solver_soft.h), capped like every joint row at a
//              quarter of the substep rate. MJCF solimp has no counterpart (s2r's rows are not
//              regularized by an impedance) and is noted by the loader.
//   tendon     length L = sum coef_k q_k: a position / velocity actuator on the tendon is the same
//              implicit spring-damper as on a joint (SolveActuatorRows) with q -> L, q-dot -> L-dot
//              and w = J M^-1 J^T; a motor applies J^T (gear ctrl). Either way each joint gets
//              coef_k times the tendon force, as MuJoCo's fixed-tendon transmission.
//   connect    a point of body1 held on a point of body2 (MuJoCo's connect: a ball joint that closes
//              a loop, the Robotiq 2F-85's four-bar linkages). Three rows, C = p1 - p2 (world),
//              J = J_p1 - J_p2 (the points' Jacobians over the tree ranks, in the configuration of
//              the substep start, like M^-1); a fixed body contributes nothing. The rows are
//              solved together, rigid at the velocity level with the same solref bias as a joint
//              coupling: lambda = -W^-1 (J q-dot + bias C), W = J M^-1 J^T (3 x 3). A planar loop
//              moves its point in a plane only: W is singular along the hinges' axis, and the
//              factorization drops a pivot below kConnectPivot of the largest (that direction is
//              neither violated nor correctable by the joints).
//   weld       body2's pose held in body1's frame (MuJoCo's weld): the connect's three rows plus three
//              angular ones, C = torquescale theta (theta: the rotation vector, world axes, taking
//              body2's orientation to body1's times equality_relquat), J = torquescale (J_w1 - J_w2);
//              the six solved together like the connect's three, redundant ones dropped as pivots.
// Equality impulses are warm-started from the last step (the state's equality_impulse, six slots per
// equality: a joint coupling's generalized impulse along J in the first, a connect's world-frame
// impulse on body1 in three, a weld's impulse and scaled angular impulse in six); tendon actuators
// use the actuators' own warm start.
#pragma once

#include "kernels/solver_joint.h"
#include "kernels/solver_soft.h"
#include "kernels/solver_tree.h"

namespace s2r {

// A sparse row over the tree ranks: J = sum_i coef_i e_rank_i (ranks distinct).
struct JointSpaceRow {
  int32_t n = 0;
  int32_t rank[kMaxTreeDofs];
  Real coef[kMaxTreeDofs];
};

// J x for a per-rank vector x (q or q-dot)
S2R_HD Real JointRowDot(const JointSpaceRow& r, const Real* x) {
  Real v = Real(0);
  for (int i = 0; i < r.n; ++i) v += r.coef[i] * x[r.rank[i]];
  return v;
}

// J M^-1 J^T
S2R_HD Real JointRowInvMass(const TreeSet& t, const JointSpaceRow& r) {
  Real w = Real(0);
  for (int i = 0; i < r.n; ++i) {
    for (int k = 0; k < r.n; ++k) w += r.coef[i] * r.coef[k] * t.minv[r.rank[i] * t.count + r.rank[k]];
  }
  return w;
}

// q-dot += M^-1 J^T p
S2R_HD void JointRowImpulse(const TreeSet& t, const JointSpaceRow& r, Real p) {
  if (p == Real(0)) return;
  for (int i = 0; i < r.n; ++i) TreeJointImpulse(t, r.rank[i], p * r.coef[i]);
}

// A ball's cone limit (MuJoCo's ball limit: joint_limited 2 on the ball's first hinge j, rank k,
// joint_range hi the largest rotation angle from the reference orientation). The child's rotation
// from its reference is d = qrel0^-1 chart Rx(q0) Ry(q1) Rz(q2) (the step's chart, TreeRebaseBall,
// and the three angles since), its angle theta and axis n; theta changes at n . w, w the child's
// angular velocity relative to the parent in its own frame, a linear map of the three rates. So
// the row is J_i = n . (w per unit rate i) on ranks k, k + 1, k + 2, with C = hi - theta >= 0.
// false: the ball is at its reference (no axis; a limit above 0 is far).
S2R_HD bool BallConeRow(const ModelView& m, int world, const TreeSet& t, int k, JointSpaceRow* r, Real* c) {
  const int j = m.body_joint[t.body[k]];
  const Quat rz = QuatFromAxisAngle(Vec3{0, 0, 1}, t.q[k + 2]);
  const Quat ryz = QuatFromAxisAngle(Vec3{0, 1, 0}, t.q[k + 1]) * rz;
  const Quat rel = LoadQuat(t.chart + 4 * k) * (QuatFromAxisAngle(Vec3{1, 0, 0}, t.q[k]) * ryz);
  Quat d = NormalizeQuat(Conjugate(LoadQuat(m.joint_qrel0 + 4 * j)) * rel);
  if (d.w < Real(0)) d = Quat{-d.w, -d.x, -d.y, -d.z};
  const Vec3 v{d.x, d.y, d.z};
  const Real s = Length(v);
  if (!(s > Real(1e-6))) return false;
  const Vec3 n = (Real(1) / s) * v;
  *c = m.joint_range.At(world)[2 * j + 1] - Real(2) * Atan2(s, d.w);
  r->n = 3;
  r->rank[0] = k, r->rank[1] = k + 1, r->rank[2] = k + 2;
  r->coef[0] = Dot(n, InvRotate(ryz, Vec3{1, 0, 0}));
  r->coef[1] = Dot(n, InvRotate(rz, Vec3{0, 1, 0}));
  r->coef[2] = n.z;
  return true;
}

// One pass over the cone row of ball rank k, as a joint's upper limit (SolveAxisRows): speculative
// while apart (the rate may close the gap within the substep), soft at the joint's limit stiffness
// (or soft.joint's) once reached; `acc` its accumulated impulse (the first hinge's upper-limit slot).
S2R_HD void SolveBallLimit(const ModelView& m, int world, const TreeSet& t, int k, Real* acc, Softness soft,
                           bool use_bias, Real inv_h) {
  JointSpaceRow r{};
  Real c;
  if (!BallConeRow(m, world, t, k, &r, &c)) return;
  const Real w = JointRowInvMass(t, r);
  if (!(w > Real(0))) return;
  Real bias = Real(0), mass_scale = Real(1), impulse_scale = Real(0);
  if (c > Real(0)) {
    bias = c * inv_h;
  } else if (use_bias) {
    const Real hertz = m.joint_limit_hertz.At(world)[m.body_joint[t.body[k]]];
    if (hertz > Real(0)) soft = MakeSoft(Min(hertz, Real(0.25) * inv_h), m.joint_damping_ratio.At(world)[0], Real(1) / inv_h);
    bias = soft.bias_rate * c;
    mass_scale = soft.mass_scale;
    impulse_scale = soft.impulse_scale;
  }
  // C = hi - theta >= 0: the row acts along -J
  const Real kk = mass_scale / w;
  const Real target = *acc - kk * bias - impulse_scale * *acc;
  const Real total = Max(target + kk * JointRowDot(r, t.qdot), Real(0));
  const Real p = *acc - total;
  *acc = total;
  JointRowImpulse(t, r, p);
}

// the last step's cone impulse again, along this substep's row
S2R_HD void WarmStartBallLimit(const ModelView& m, int world, const TreeSet& t, int k, Real acc) {
  JointSpaceRow r{};
  Real c;
  if (acc != Real(0) && BallConeRow(m, world, t, k, &r, &c)) JointRowImpulse(t, r, -acc);
}

// the tree rank of joint j (the model guarantees coupled joints are tree joints)
S2R_HDI int JointTreeRank(const ModelView& m, int j) { return m.body_tree[m.joint_body[j]]; }

// fixed tendon `tendon`'s row: J = sum coef_k e_k over its joint terms
S2R_HD void TendonRow(const ModelView& m, int tendon, JointSpaceRow* r) {
  const int first = m.tendon_wrap[2 * tendon], count = m.tendon_wrap[2 * tendon + 1];
  r->n = count;
  for (int i = 0; i < count; ++i) {
    r->rank[i] = JointTreeRank(m, m.wrap_joint[first + i]);
    r->coef[i] = m.wrap_coef[first + i];
  }
}

// equality e's row at the current q and its violation C = q1 - poly(q2)
S2R_HD void EqualityRow(const ModelView& m, int world, const TreeSet& t, int e, JointSpaceRow* r,
                        Real* c) {
  const Real* a = m.equality_polycoef.At(world) + 5 * e;
  const int j1 = m.equality_joint[2 * e], j2 = m.equality_joint[2 * e + 1];
  r->n = 1;
  r->rank[0] = JointTreeRank(m, j1);
  r->coef[0] = Real(1);
  Real poly = a[0];
  if (j2 >= 0) {
    const int k2 = JointTreeRank(m, j2);
    const Real x = t.q[k2];
    poly = a[0] + x * (a[1] + x * (a[2] + x * (a[3] + x * a[4])));
    const Real slope = a[1] + x * (Real(2) * a[2] + x * (Real(3) * a[3] + x * Real(4) * a[4]));
    r->n = 2;
    r->rank[1] = k2;
    r->coef[1] = -slope;
  }
  *c = t.q[r->rank[0]] - poly;
}

// the position-error correction rate of equality e (MJCF solref, see the top of the file)
S2R_HD Real EqualityBiasRate(const ModelView& m, int world, int e, Real h) {
  const Real* solref = m.equality_solref.At(world) + 2 * e;
  const Real timeconst = solref[0], dampratio = solref[1];
  Real hertz = Real(1) / (Real(2) * kPi * timeconst * dampratio);
  return MakeSoft(Min(hertz, Real(0.25) / h), dampratio, h).bias_rate;
}

// --- connect ---------------------------------------------------------------------------------

// Relative pivot below which a connect's 3 x 3 W is taken as singular along that direction. A
// planar loop's W is exactly singular along its hinges' axis, but built from M^-1 and the rows in
// world axes its pivot there is rounding noise: about 1e-6 of the largest in float when the loop
// is turned off the world axes (a gripper on a moving arm), where a noise pivot kept divides the
// rows' rounding by itself and flings the linkage. So 1e-4 in float, 1e-8 in double.
constexpr Real kConnectPivot = sizeof(Real) == 4 ? Real(1e-4) : Real(1e-8);

// rows of a connect (3) or a weld (6)
constexpr int kMaxBodyCouplingRows = 6;

// The rows of a connect (three) or a weld (six) at the substep start: C and J (row a: component
// a of the velocity of C per unit q-dot) on the n ranks that move one body and not the other.
//   linear rows (both)   C = p1 - p2, the two points in world axes (a weld: at body1's COM, below);
//                        a rank that is an ancestor of both bodies turns both points about the
//                        same axis: its column
//                        a x (p1 - p2) vanishes with C, and it is left out (two fingers' closing
//                        loops on an arm are 4 ranks each, not the arm's 6 as well)
//   angular rows (weld)  C = torquescale theta, theta the rotation vector (world axes) that takes
//                        body2's orientation to the held one (body1's times equality_relquat),
//                        so C-dot = torquescale (w1 - w2); an ancestor of both turns both alike
//                        and is left out too
// Built once per substep (PrepareBodyCouplings: the tree bodies do not move within a substep,
// and M^-1 is the substep's) and read by its warm start and both passes.
struct BodyCouplingRows {
  int32_t rows = 0;  // 3 (connect, or a weld with torquescale 0) or 6 (weld: linear, angular)
  int32_t n = 0;
  int32_t rank[kMaxTreeDofs];
  Real j[kMaxBodyCouplingRows][kMaxTreeDofs];
  Real c[kMaxBodyCouplingRows];
  // W = J M^-1 J^T = L D L^T, a pivot below kConnectPivot of the largest dropped (keep bit clear)
  Real l[kMaxBodyCouplingRows][kMaxBodyCouplingRows];
  Real d[kMaxBodyCouplingRows];
  uint32_t keep = 0;
};

// the ranks from tree body `rank` up to its root, as a bit mask (0 for a fixed body)
S2R_HD uint32_t TreeChainMask(const TreeSet& t, int rank) {
  uint32_t mask = 0;
  for (int k = rank; k >= 0; k = t.parent[k]) mask |= 1u << k;
  return mask;
}

S2R_HD void MakeBodyCouplingRows(const ModelView& m, int world, const TreeSet& t, int e,
                                 BodyCouplingRows* rows) {
  const Real* anchor = m.equality_anchor.At(world) + 6 * e;
  const SolverBody& b1 = t.bodies[m.equality_body[2 * e]];
  const SolverBody& b2 = t.bodies[m.equality_body[2 * e + 1]];
  const Vec3 p1 = b1.com + Rotate(b1.rot, LoadVec3(anchor) - b1.ipos);
  const Vec3 p2 = b2.com + Rotate(b2.rot, LoadVec3(anchor + 3) - b2.ipos);
  const Real scale = m.equality_type[e] == kEqualityWeld ? m.equality_torquescale.At(world)[e] : Real(0);
  rows->rows = scale > Real(0) ? 6 : 3;
  // C of the linear rows: the anchors' gap, or for a weld (its rows at body1's COM, below) body1's
  // COM less where it would be in the held pose (body1's anchor on body2's, body1 turned to the
  // held orientation body2 * relquat^-1): the same where the orientation is held
  Vec3 c = p1 - p2;
  if (rows->rows == 6) {
    const Quat held = b2.rot * Conjugate(LoadQuat(m.equality_relquat.At(world) + 4 * e));
    c = b1.com - (p2 - Rotate(held, LoadVec3(anchor) - b1.ipos));
  }
  rows->c[0] = c.x;
  rows->c[1] = c.y;
  rows->c[2] = c.z;
  if (rows->rows == 6) {
    // body2 -> held orientation, in body2's frame, then in world axes
    Quat err = Conjugate(b2.rot) * (b1.rot * LoadQuat(m.equality_relquat.At(world) + 4 * e));
    if (err.w < Real(0)) err = Quat{-err.w, -err.x, -err.y, -err.z};
    const Vec3 v{err.x, err.y, err.z};
    const Real sine = Length(v);
    const Vec3 theta = sine > Real(0) ? (Real(2) * Atan2(sine, err.w) / sine) * v : Vec3{0, 0, 0};
    const Vec3 cw = scale * Rotate(b2.rot, theta);
    rows->c[3] = cw.x;
    rows->c[4] = cw.y;
    rows->c[5] = cw.z;
  }
  const uint32_t chain1 = b1.tree >= 0 ? TreeChainMask(t, b1.tree) : 0u;
  const uint32_t chain2 = b2.tree >= 0 ? TreeChainMask(t, b2.tree) : 0u;
  const uint32_t own = (chain1 ^ chain2) & ~t.weld;
  // A weld's linear rows hold body1's COM on the material point of body2 where the held pose puts
  // it, not the anchors together: with the angular rows holding the orientations the two are the
  // same constraint (the bodies' relative velocity is then the same at every point).
  // At a far anchor (MuJoCo's default for a weld to the world is the world's origin) the linear
  // rows would be nearly the angular rows times the lever, W's angular pivots would fall below
  // kConnectPivot and be dropped, and the body would swing about the anchor.
  const bool weld = rows->rows == 6;
  int n = 0;
  for (int k = 0; k < t.count; ++k) {
    if (!((own >> k) & 1u)) continue;
    const bool first = (chain1 >> k) & 1u;
    const Vec3 p = weld ? b1.com : first ? p1 : p2;
    const Vec3 a = LoadVec3(t.axis_now + 3 * k);
    const bool hinge = TreeIsHinge(t, k);
    Vec3 col = hinge ? Cross(a, p - LoadVec3(t.anchor_now + 3 * k)) : a;
    Vec3 ang = hinge ? scale * a : Vec3{0, 0, 0};
    if (!first) {
      col = -col;
      ang = -ang;
    }
    rows->rank[n] = k;
    rows->j[0][n] = col.x;
    rows->j[1][n] = col.y;
    rows->j[2][n] = col.z;
    if (rows->rows == 6) {
      rows->j[3][n] = ang.x;
      rows->j[4][n] = ang.y;
      rows->j[5][n] = ang.z;
    }
    ++n;
  }
  rows->n = n;
}

// q-dot += M^-1 J^T lambda
S2R_HD void BodyCouplingImpulse(const TreeSet& t, const BodyCouplingRows& rows, const Real* lambda) {
  for (int i = 0; i < rows.n; ++i) {
    Real tau = Real(0);
    for (int a = 0; a < rows.rows; ++a) tau += rows.j[a][i] * lambda[a];
    TreeJointImpulse(t, rows.rank[i], tau);
  }
}

// W = J M^-1 J^T of the rows and its L D L^T, pivots below kConnectPivot of the largest diagonal
// dropped (a direction the joints cannot move: its lambda stays 0)
S2R_HD void FactorBodyCoupling(const TreeSet& t, BodyCouplingRows* rows) {
  const int r = t.count, n = rows->n, nr = rows->rows;
  Real w[kMaxBodyCouplingRows][kMaxBodyCouplingRows];
  for (int a = 0; a < nr; ++a) {
    Real x[kMaxTreeDofs];  // (M^-1 J^T)_a over the rows' ranks
    for (int k = 0; k < n; ++k) {
      const Real* minv_row = t.minv + rows->rank[k] * r;
      Real v = Real(0);
      for (int i = 0; i < n; ++i) v += rows->j[a][i] * minv_row[rows->rank[i]];
      x[k] = v;
    }
    for (int b = 0; b <= a; ++b) {
      Real v = Real(0);
      for (int k = 0; k < n; ++k) v += x[k] * rows->j[b][k];
      w[a][b] = v;
      w[b][a] = v;
    }
  }
  Real scale = Real(0);
  for (int a = 0; a < nr; ++a) scale = Max(scale, w[a][a]);
  rows->keep = 0;
  if (!(scale > Real(0))) return;
  for (int i = 0; i < nr; ++i) {
    Real di = w[i][i];
    for (int k = 0; k < i; ++k) di -= rows->l[i][k] * rows->l[i][k] * rows->d[k];
    const bool keep = di > kConnectPivot * scale;
    if (keep) rows->keep |= 1u << i;
    rows->d[i] = keep ? di : Real(0);
    rows->l[i][i] = Real(1);
    for (int jr = i + 1; jr < nr; ++jr) {
      Real v = w[jr][i];
      for (int k = 0; k < i; ++k) v -= rows->l[jr][k] * rows->l[i][k] * rows->d[k];
      rows->l[jr][i] = keep ? v / di : Real(0);
    }
  }
}

// Substep start: every connect's and weld's rows and factor, in the configuration and with the
// M^-1 of the substep (one slot per equality; joint couplings' slots are unused)
S2R_HD void PrepareBodyCouplings(const ModelView& m, int world, const TreeSet& t, BodyCouplingRows* rows) {
  for (int e = 0; e < m.nequality; ++e) {
    if (!m.equality_active[e]) continue;
    if (m.equality_type[e] != kEqualityConnect && m.equality_type[e] != kEqualityWeld) continue;
    MakeBodyCouplingRows(m, world, t, e, &rows[e]);
    FactorBodyCoupling(t, &rows[e]);
  }
}

// One exact solve of a connect's or weld's rows (prepared this substep): the impulse that takes
// J q-dot to -bias_rate C (solve pass) or 0 (relax pass), accumulated into lambda (world axes:
// force on body1, then a weld's torque on body1 times torquescale).
S2R_HD void SolveBodyCoupling(const ModelView& m, int world, const TreeSet& t, int e,
                              const BodyCouplingRows& rows, Real* lambda, bool use_bias, Real h) {
  if (rows.keep == 0) return;
  const int n = rows.n, nr = rows.rows;
  const Real rate = use_bias ? EqualityBiasRate(m, world, e, h) : Real(0);
  Real y[kMaxBodyCouplingRows];
  for (int a = 0; a < nr; ++a) {
    Real vel = Real(0);
    for (int i = 0; i < n; ++i) vel += rows.j[a][i] * t.qdot[rows.rank[i]];
    y[a] = -(vel + rate * rows.c[a]);
    for (int k = 0; k < a; ++k) y[a] -= rows.l[a][k] * y[k];
  }
  Real x[kMaxBodyCouplingRows];
  for (int i = nr - 1; i >= 0; --i) {
    const bool keep = (rows.keep >> i) & 1u;
    x[i] = keep ? y[i] / rows.d[i] : Real(0);
    for (int k = i + 1; k < nr; ++k) x[i] -= rows.l[k][i] * x[k];
    if (!keep) x[i] = Real(0);
  }
  for (int a = 0; a < nr; ++a) lambda[a] += x[a];
  BodyCouplingImpulse(t, rows, x);
}


// Substep start: the equalities' accumulated impulses along their current rows, and the tendon
// actuators' along their tendons (joint actuators are warm-started with their joint's rows).
S2R_HD void WarmStartCouplings(const ModelView& m, int world, const TreeSet& t,
                               const BodyCouplingRows* body_rows, const Real* eq_impulse,
                               const Real* act_impulse) {
  JointSpaceRow r;
  for (int e = 0; e < m.nequality; ++e) {
    const Real* imp = eq_impulse + kEqualityImpulseSlots * e;
    if (!m.equality_active[e]) continue;
    if (m.equality_type[e] == kEqualityConnect || m.equality_type[e] == kEqualityWeld) {
      bool any = false;
      for (int a = 0; a < kMaxBodyCouplingRows; ++a) any = any || imp[a] != Real(0);
      if (!any) continue;
      BodyCouplingImpulse(t, body_rows[e], imp);
      continue;
    }
    if (imp[0] == Real(0)) continue;
    Real c;
    EqualityRow(m, world, t, e, &r, &c);
    JointRowImpulse(t, r, imp[0]);
  }
  for (int tn = 0; tn < m.ntendon; ++tn) {
    Real along = Real(0);
    for (int i = m.tendon_actuator[tn]; i >= 0; i = m.actuator_next[i]) along += act_impulse[i];
    if (along == Real(0)) continue;
    TendonRow(m, tn, &r);
    JointRowImpulse(t, r, along);
  }
}

// Motors on fixed tendons: the generalized impulse J^T (h gear force), force = ctrl clamped to
// the force range; returns the force (N or N m per unit tendon length) for actuator_force.
S2R_HD Real ApplyTendonMotor(const ModelView& m, int world, const TreeSet& t, int i, Real ctrl,
                             Real h) {
  Real force = ctrl;
  if (m.actuator_forcelimited[i]) {
    const Real* fr = m.actuator_forcerange.At(world) + 2 * i;
    force = Clamp(force, fr[0], fr[1]);
  }
  JointSpaceRow r;
  TendonRow(m, m.actuator_trnid[i], &r);
  JointRowImpulse(t, r, h * m.actuator_gear.At(world)[6 * i] * force);
  return force;
}

// One pass over the tendon actuators (solve pass only: they are forces, as on joints) and the
// equalities (both passes: bias in the solve pass, none in the relax pass). Equalities come last,
// so each pass ends with the couplings holding at the velocity level.
S2R_HD void SolveCouplings(const ModelView& m, int world, const TreeSet& t,
                           const BodyCouplingRows* body_rows, Real* eq_impulse,
                           const Real* axis_prep, Real* act_impulse, bool use_bias, Real h) {
  JointSpaceRow r;
  if (use_bias) {
    for (int tn = 0; tn < m.ntendon; ++tn) {
      if (m.tendon_actuator[tn] < 0) continue;
      TendonRow(m, tn, &r);
      Real w = JointRowInvMass(t, r);
      if (!(w > Real(0))) continue;
      Real length_dot = JointRowDot(r, t.qdot);
      Real applied = SolveActuatorRows(m, m.tendon_actuator[tn], JointRowDot(r, t.q), &length_dot, w,
                                       axis_prep, act_impulse);
      JointRowImpulse(t, r, applied);
    }
  }
  for (int e = 0; e < m.nequality; ++e) {
    if (!m.equality_active[e]) continue;
    if (m.equality_type[e] == kEqualityConnect || m.equality_type[e] == kEqualityWeld) {
      SolveBodyCoupling(m, world, t, e, body_rows[e], eq_impulse + kEqualityImpulseSlots * e, use_bias, h);
      continue;
    }
    Real c;
    EqualityRow(m, world, t, e, &r, &c);
    Real w = JointRowInvMass(t, r);
    if (!(w > Real(0))) continue;
    Real bias = use_bias ? EqualityBiasRate(m, world, e, h) * c : Real(0);
    Real d = -(JointRowDot(r, t.qdot) + bias) / w;
    eq_impulse[kEqualityImpulseSlots * e] += d;
    JointRowImpulse(t, r, d);
  }
}

}  // namespace s2r
