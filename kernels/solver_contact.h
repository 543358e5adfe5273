// Contact constraints: soft non-penetration per point, Coulomb friction per manifold,
// restitution.
//
// Per physics step narrow phase makes points once; the points of one geom pair form a manifold.
// PrepareContactPoint / PrepareManifold fix anchors, directions and effective masses at the step
// start. Each substep then warm-starts the accumulated impulses, runs a solve pass (with bias) and,
// after position integration, a relax pass (rigid, no bias), each visiting first the friction of
// every manifold and then the normals of every manifold:
//   friction - a 2D tangential impulse at the manifold centre inside the cone
//              |f_t| <= mu sum(f_n), and a torsional impulse about the normal inside
//              |tau| <= mu sum(f_n r), r the point's distance from the centre ("patch friction");
//   normals  - per point, soft non-penetration with the separation updated from the bodies'
//              motion since the step began (speculative when separated).
// After the last substep ApplyRestitution targets v_n' = -e v_n for points that approached faster
// than the threshold. This is Box2D v3's soft step (contact_solver.c) carried to 3D; friction at
// the patch centre rather than at each point (as PhysX does) removes the internal friction forces
// sequential per-point friction leaves in a resting manifold, which otherwise creep a stack.
// Static friction holds because friction is a velocity constraint solved every substep: with the
// cone not saturated the tangential velocity is driven to zero and nothing creeps.
#pragma once

#include "kernels/contact.h"
#include "kernels/solver_body.h"
#include "kernels/solver_reduced.h"
#include "kernels/solver_soft.h"

namespace s2r {

// Jacobians are fixed at the step start (anchors, directions, inverse inertia), so each row keeps
// its angular parts r x d and the velocity changes of both bodies per unit impulse: a solve then
// costs dot products and axpys, no matrix products, and the same ones for every kind of body.
// A body of a slide tree (SolverBody::reduced >= 0) has no angular response and its linear
// response goes through the tree (`red`): W_aa and, for two bodies of one tree (a finger on its
// palm), the cross term W_ab.
//
// kTrees (template argument of the functions below) false compiles them without the articulated
// trees' branches, for models that have none (kernels/step_features.h): their J M^-1 J^T scratch
// then takes no registers or stack in the step kernels.
struct ContactRow {
  Vec3 ang_a, ang_b;  // ra x d, rb x d (angular rows: d itself)
  Vec3 dw_a, dw_b;    // Ia^-1 ang_a, Ib^-1 ang_b: angular velocity change per unit impulse
  Vec3 dv_a, dv_b;    // linear velocity change of A and of B per unit impulse (B gets +d, A -d)
};

// bias_scale (optional): how much of a penetration's push-out the row may ask for, 1 unless an
// articulated tree is involved (TreePushScale)
template <bool kTrees = true>
S2R_HD ContactRow MakeContactRow(const ReducedSet& red, const SolverBody& a, Vec3 ra,
                                 const SolverBody& b, Vec3 rb, Vec3 d, Real* mass,
                                 Real* bias_scale = nullptr) {
  ContactRow r;
  r.ang_a = Cross(ra, d);
  r.ang_b = Cross(rb, d);
  r.dw_a = InverseInertia(a) * r.ang_a;
  r.dw_b = InverseInertia(b) * r.ang_b;
  if (a.reduced >= 0) {
    r.dv_a = ReducedResponse(red, a.reduced, a.reduced, -d);
    if (b.reduced >= 0) r.dv_a += ReducedResponse(red, a.reduced, b.reduced, d);
  } else {
    r.dv_a = -a.inv_mass * d;
  }
  if (b.reduced >= 0) {
    r.dv_b = ReducedResponse(red, b.reduced, b.reduced, d);
    if (a.reduced >= 0) r.dv_b += ReducedResponse(red, b.reduced, a.reduced, -d);
  } else {
    r.dv_b = b.inv_mass * d;
  }
  if (kTrees && (a.tree >= 0 || b.tree >= 0)) {
    // articulated trees: the 6-D velocity change of each tree body through J M^-1 J^T, for the
    // wrench (-d, -ra x d) on A and (d, rb x d) on B (cross terms when both are in the trees)
    Vec3 dva, dwa, dvb, dwb;
    TreeRowResponse(red.tree, a.tree, -d, -r.ang_a, b.tree, d, r.ang_b, &dva, &dwa, &dvb, &dwb);
    if (kTrees && a.tree >= 0) {
      r.dv_a = dva;
      r.dw_a = -dwa;  // RowImpulse subtracts A's angular response
    }
    if (kTrees && b.tree >= 0) {
      r.dv_b = dvb;
      r.dw_b = dwb;
    }
  }
  Real k = Dot(d, r.dv_b - r.dv_a) + Dot(r.ang_a, r.dw_a) + Dot(r.ang_b, r.dw_b);
  *mass = k > Real(0) ? Real(1) / k : Real(0);
  if (bias_scale != nullptr) {
    *bias_scale = Real(1);
    if (kTrees && (a.tree >= 0 || b.tree >= 0)) {
      // what the row's bodies would give way if the tree bodies were free
      Real free = Real(0);
      free += (kTrees && a.tree >= 0) ? TreeFreeMobility(red.tree, a, r.ang_a, d) : -Dot(d, r.dv_a) + Dot(r.ang_a, r.dw_a);
      free += (kTrees && b.tree >= 0) ? TreeFreeMobility(red.tree, b, r.ang_b, d) : Dot(d, r.dv_b) + Dot(r.ang_b, r.dw_b);
      *bias_scale = TreePushScale(k, free);
    }
  }
  return r;
}
// An angular row moves an articulated-tree body linearly too (dv_a, dv_b; AngularRowImpulse
// applies them to tree bodies only)
template <bool kTrees = true>
S2R_HD ContactRow MakeAngularRow(const ReducedSet& red, const SolverBody& a, const SolverBody& b,
                                 Vec3 d, Real* mass) {
  ContactRow r;
  r.ang_a = d;
  r.ang_b = d;
  r.dw_a = InverseInertia(a) * d;
  r.dw_b = InverseInertia(b) * d;
  r.dv_a = Vec3{0, 0, 0};
  r.dv_b = Vec3{0, 0, 0};
  if (kTrees && (a.tree >= 0 || b.tree >= 0)) {
    Vec3 zero{0, 0, 0}, dva, dwa, dvb, dwb;
    TreeRowResponse(red.tree, a.tree, zero, -d, b.tree, zero, d, &dva, &dwa, &dvb, &dwb);
    if (kTrees && a.tree >= 0) {
      r.dv_a = dva;
      r.dw_a = -dwa;
    }
    if (kTrees && b.tree >= 0) {
      r.dv_b = dvb;
      r.dw_b = dwb;
    }
  }
  Real k = Dot(d, r.dw_a) + Dot(d, r.dw_b);
  *mass = k > Real(0) ? Real(1) / k : Real(0);
  return r;
}

// Relative velocity of B against A along direction d of a linear row (Body: SolverBody or
// BodyVelocity). The rows of a pair form one dependency chain through the bodies' velocities, so
// the terms are summed as a tree, not left to right. On the device a static body's side of a row
// is not read (ReadsVelocity): its velocity is zero, and a floor contact loads half a row.
template <typename Body>
S2R_HD Real RowSpeed(const ContactRow& r, Vec3 d, const Body& a, const Body& b) {
  const Real spin_b = ReadsSpin(b) ? Dot(r.ang_b, b.w) : Real(0);
  const Real spin_a = ReadsSpin(a) ? Dot(r.ang_a, a.w) : Real(0);
  const Real sb = ReadsVelocity(b) ? Dot(d, b.v) + spin_b : Real(0);
  const Real sa = ReadsVelocity(a) ? Dot(d, a.v) + spin_a : Real(0);
  return sb - sa;
}
// impulse p along d of a linear row: B gets +p, A gets -p. Tree bodies also record the linear
// impulse in `tree` (FlushPairTreeImpulses moves the rest of their tree when the pair is done).
// On the device (kLeanReads) an ordinary body's linear response is made from its inverse mass,
// -inv_mass d as MakeContactRow made it, rather than read from the row: 12 B less per row side,
// stack5's step-block traffic 161 -> 145 KB per env-step.
template <bool kTrees = true>
S2R_HD void RowImpulse(const ContactRow& r, Vec3 d, Real p, BodyVelocity* a, BodyVelocity* b,
                       PairTreeImpulses* tree) {
  if (ReadsVelocity(*a)) a->v += p * (!kLeanReads || a->reduced >= 0 ? r.dv_a : -a->inv_mass * d);
  if (ReadsSpin(*a)) a->w -= p * r.dw_a;
  if (ReadsVelocity(*b)) b->v += p * (!kLeanReads || b->reduced >= 0 ? r.dv_b : b->inv_mass * d);
  if (ReadsSpin(*b)) b->w += p * r.dw_b;
  if (a->reduced >= 0) {  // (in a BodyVelocity: any tree body, LoadVelocity)
    tree->a -= p * d;
    if (kTrees && a->tree >= 0) tree->ta -= p * r.ang_a;
  }
  if (b->reduced >= 0) {
    tree->b += p * d;
    if (kTrees && b->tree >= 0) tree->tb += p * r.ang_b;
  }
}
// relative angular velocity about an angular row, and an angular impulse along it
template <typename Body>
S2R_HD Real AngularRowSpeed(const ContactRow& r, const Body& a, const Body& b) {
  const Real sb = ReadsSpin(b) ? Dot(r.ang_b, b.w) : Real(0);
  const Real sa = ReadsSpin(a) ? Dot(r.ang_a, a.w) : Real(0);
  return sb - sa;
}
template <bool kTrees = true, typename Body>
S2R_HD void AngularRowImpulse(const ContactRow& r, Real p, Body* a, Body* b, PairTreeImpulses* tree) {
  if (ReadsSpin(*a)) a->w -= p * r.dw_a;
  if (ReadsSpin(*b)) b->w += p * r.dw_b;
  if (kTrees && a->tree >= 0) {
    a->v += p * r.dv_a;
    tree->ta -= p * r.ang_a;
  }
  if (kTrees && b->tree >= 0) {
    b->v += p * r.dv_b;
    tree->tb += p * r.ang_b;
  }
}

// A pair's velocities for its rows: tree bodies' from their tree's joint rates
template <bool kTrees = true>
S2R_HD BodyVelocity PairVelocity(const ReducedSet& red, const SolverBody& b) {
  BodyVelocity bv = LoadVelocity(b);
  if (b.reduced >= 0) bv.v = TreeBodyVelocity(red, b.reduced);
  if (kTrees && b.tree >= 0) TreeBodyVelocity(red.tree, b.tree, &bv.v, &bv.w);
  return bv;
}
// and back: ordinary bodies take their new velocities, trees the pair's impulses
template <bool kTrees = true>
S2R_HD void EndPair(const ReducedSet& red, const BodyVelocity& va, const BodyVelocity& vb,
                    const PairTreeImpulses& tree, SolverBody* a, SolverBody* b) {
  if (va.reduced < 0) StoreVelocity(va, a);
  if (vb.reduced < 0) StoreVelocity(vb, b);
  FlushPairTreeImpulses<kTrees>(red, va, vb, tree);
}

// one contact point: the normal row
struct ContactConstraint {
  int32_t body_a, body_b;
  Vec3 normal;              // from A to B
  ContactRow row;
  Vec3 anchor_a, anchor_b;  // contact point relative to each COM at the step start, world, m
  Real base_separation;     // separation at the step start, m
  Real normal_mass;         // kg
  Real restitution;
  Real bias_scale;          // share of the push-out velocity the row asks for (TreePushScale)
  Real relative_velocity;   // normal approach speed at the step start, m/s
  Real twist_arm;           // distance from the manifold centre in the tangent plane, m
  Real max_normal_impulse;  // largest impulse applied in any substep, N s
  Real normal_impulse;      // accumulated, N s per substep
};

// the points of one geom pair and their shared friction
struct ContactManifold {
  int32_t first, count;     // constraints [first, first + count)
  int32_t body_a, body_b;
  Vec3 normal, tangent1, tangent2;
  Vec3 anchor_a, anchor_b;  // manifold centre relative to each COM, world, m
  ContactRow rows[3];       // tangent1, tangent2 (linear at the centre), twist (about the normal)
  Real tangent1_mass, tangent2_mass, twist_mass;
  Real friction;            // Coulomb coefficient
  Real hertz;               // the pair's own contact frequency (geom_contact_hertz), 0: the scene's
  Real tangent1_impulse, tangent2_impulse, twist_impulse;  // accumulated, N s / N m s per substep
};

template <bool kTrees = true>
S2R_HD void PrepareContactPoint(const ReducedSet& red, ContactConstraint* c, const SolverBody& a,
                                const SolverBody& b, Vec3 point, Vec3 normal, Real separation) {
  c->normal = normal;
  c->anchor_a = point - a.com;
  c->anchor_b = point - b.com;
  c->base_separation = separation;
  c->row = MakeContactRow<kTrees>(red, a, c->anchor_a, b, c->anchor_b, normal, &c->normal_mass,
                          &c->bias_scale);
  c->relative_velocity = RowSpeed(c->row, normal, a, b);
  c->max_normal_impulse = Real(0);
}

// the manifold of points [first, first + count) (already prepared), with its centre
template <bool kTrees = true>
S2R_HD void PrepareManifold(const ReducedSet& red, ContactManifold* mf, ContactConstraint* points,
                            int first, int count, const SolverBody& a, const SolverBody& b) {
  mf->first = first;
  mf->count = count;
  mf->body_a = points[first].body_a;
  mf->body_b = points[first].body_b;
  Vec3 n{0, 0, 0}, ca{0, 0, 0};
  for (int k = 0; k < count; ++k) {
    n += points[first + k].normal;
    ca += points[first + k].anchor_a;
  }
  mf->normal = Normalize(n);
  OrthonormalBasis(mf->normal, &mf->tangent1, &mf->tangent2);
  mf->anchor_a = (Real(1) / Real(count)) * ca;
  mf->anchor_b = mf->anchor_a + (a.com - b.com);
  mf->rows[0] = MakeContactRow<kTrees>(red, a, mf->anchor_a, b, mf->anchor_b, mf->tangent1, &mf->tangent1_mass);
  mf->rows[1] = MakeContactRow<kTrees>(red, a, mf->anchor_a, b, mf->anchor_b, mf->tangent2, &mf->tangent2_mass);
  mf->rows[2] = MakeAngularRow<kTrees>(red, a, b, mf->normal, &mf->twist_mass);
  for (int k = 0; k < count; ++k) {  // each point's lever arm for the twist's friction limit
    Vec3 d = points[first + k].anchor_a - mf->anchor_a;
    points[first + k].twist_arm = Length(d - Dot(d, mf->normal) * mf->normal);
  }
}

// point k's lever arm about the manifold centre, in the tangent plane, m
S2R_HD Vec3 ManifoldArm(const ContactManifold& mf, const ContactConstraint& c) {
  Vec3 d = c.anchor_a - mf.anchor_a;
  return d - Dot(d, mf.normal) * mf.normal;
}

template <bool kTrees = true>
S2R_HD void WarmStartManifold(const ReducedSet& red, const ContactManifold& mf,
                              const ContactConstraint* points, SolverBody* a, SolverBody* b) {
  BodyVelocity va = PairVelocity<kTrees>(red, *a), vb = PairVelocity<kTrees>(red, *b);
  PairTreeImpulses tree;
  for (int k = 0; k < mf.count; ++k) {
    const ContactConstraint& c = points[mf.first + k];
    RowImpulse<kTrees>(c.row, c.normal, c.normal_impulse, &va, &vb, &tree);
  }
  RowImpulse<kTrees>(mf.rows[0], mf.tangent1, mf.tangent1_impulse, &va, &vb, &tree);
  RowImpulse<kTrees>(mf.rows[1], mf.tangent2, mf.tangent2_impulse, &va, &vb, &tree);
  AngularRowImpulse<kTrees>(mf.rows[2], mf.twist_impulse, &va, &vb, &tree);
  EndPair<kTrees>(red, va, vb, tree, a, b);
}

// A pass visits the friction of every manifold first and then the normals of every manifold
// (SolveAll, step_solve.h), so that non-penetration and its position bias have the last word in
// each pass. With each manifold's friction and normals together, the friction of a manifold
// visited later held what the earlier ones' bias was pushing back: a box struck by the pusher
// stayed pressed into the floor by the pusher's friction (the floor carrying up to three times
// the box's weight) and stuck (docs/physics.md, Soft constraints).

// Friction of one manifold, inside the cone of its current normal impulses: a 2D tangential
// impulse at the centre and the twist about the normal.
template <bool kTrees = true>
S2R_HD void SolveManifoldFriction(const ReducedSet& red, ContactManifold* mf, const ContactConstraint* points,
                                  SolverBody* a, SolverBody* b) {
  BodyVelocity va = PairVelocity<kTrees>(red, *a), vb = PairVelocity<kTrees>(red, *b);
  Real normal_sum = Real(0), twist_sum = Real(0);
  for (int k = 0; k < mf->count; ++k) {
    const ContactConstraint& c = points[mf->first + k];
    normal_sum += c.normal_impulse;
    twist_sum += c.normal_impulse * c.twist_arm;
  }
  Real i1 = mf->tangent1_impulse - mf->tangent1_mass * RowSpeed(mf->rows[0], mf->tangent1, va, vb);
  Real i2 = mf->tangent2_impulse - mf->tangent2_mass * RowSpeed(mf->rows[1], mf->tangent2, va, vb);
  Real limit = mf->friction * normal_sum;
  Real mag2 = i1 * i1 + i2 * i2;
  if (mag2 > limit * limit) {
    Real scale = mag2 > Real(0) ? limit / Sqrt(mag2) : Real(0);
    i1 *= scale;
    i2 *= scale;
  }
  PairTreeImpulses tree;
  RowImpulse<kTrees>(mf->rows[0], mf->tangent1, i1 - mf->tangent1_impulse, &va, &vb, &tree);
  RowImpulse<kTrees>(mf->rows[1], mf->tangent2, i2 - mf->tangent2_impulse, &va, &vb, &tree);
  mf->tangent1_impulse = i1;
  mf->tangent2_impulse = i2;
  if (mf->count > 1) {
    Real twist_limit = mf->friction * twist_sum;
    Real it = Clamp(mf->twist_impulse - mf->twist_mass * AngularRowSpeed(mf->rows[2], va, vb),
                    -twist_limit, twist_limit);
    AngularRowImpulse<kTrees>(mf->rows[2], it - mf->twist_impulse, &va, &vb, &tree);
    mf->twist_impulse = it;
  }
  EndPair<kTrees>(red, va, vb, tree, a, b);
}

// Non-penetration of one manifold's points. soft: the contact softness; use_bias false is the
// relax pass. The solve pass visits the points first to last, the relax pass last to first, so a
// substep's two passes make one symmetric Gauss-Seidel sweep. One order for both (a forward
// sweep, whose iteration matrix has complex eigenvalues) kept the impulses circulating round a
// face's corners: a 5-cube stack rocked in a slow circle that grew instead of settling.
template <bool kTrees = true>
S2R_HD void SolveManifoldNormals(const ReducedSet& red, const ContactManifold& mf, ContactConstraint* points,
                                 SolverBody* a, SolverBody* b, Softness soft, bool use_bias, Real inv_h,
                                 Real push_velocity, Real slop) {
  BodyVelocity va = PairVelocity<kTrees>(red, *a), vb = PairVelocity<kTrees>(red, *b);
  PairTreeImpulses tree;
  for (int i = 0; i < mf.count; ++i) {
    const int k = use_bias ? i : mf.count - 1 - i;
    ContactConstraint* c = &points[mf.first + k];
    // current separation from the motion since the step began (rotation to first order):
    // n . (dx_b + dth_b x r_b - dx_a - dth_a x r_a), with (dth x r) . n = dth . (r x n), the row's
    // angular parts
    const Real turn_a = ReadsSpin(va) ? Dot(c->row.ang_a, a->delta_angle) : Real(0);
    const Real turn_b = ReadsSpin(vb) ? Dot(c->row.ang_b, b->delta_angle) : Real(0);
    const Vec3 zero{0, 0, 0};
    const Vec3 moved_a = ReadsVelocity(va) ? a->delta_pos : zero;
    const Vec3 moved = (ReadsVelocity(vb) ? b->delta_pos : zero) - moved_a;
    Real s = Dot(c->normal, moved) + turn_b - turn_a + c->base_separation;
    // speculative when separated, soft when penetrating
    Real bias = Real(0), mass_scale = Real(1), impulse_scale = Real(0);
    if (s > Real(0)) {
      bias = s * inv_h;
    } else if (use_bias) {
      // penetration up to the slop is left alone (the bias targets -slop, never pulls in)
      Real depth = slop > Real(0) ? Min(s + slop, Real(0)) : s;
      bias = Max(soft.bias_rate * depth, -push_velocity) * c->bias_scale;
      mass_scale = soft.mass_scale;
      impulse_scale = soft.impulse_scale;
    }
    // lambda' = max(lambda - mass (vn + bias) - impulse_scale lambda, 0), mass = mass_scale m_n, with
    // everything but vn computed off the velocity chain
    Real acc = c->normal_impulse;
    Real mass = c->normal_mass * mass_scale;
    Real target = acc - mass * bias - impulse_scale * acc;
    Real vn = RowSpeed(c->row, c->normal, va, vb);
    Real total = Max(target - mass * vn, Real(0));
    Real impulse = total - acc;
    c->normal_impulse = total;
    c->max_normal_impulse = Max(c->max_normal_impulse, impulse);
    RowImpulse<kTrees>(c->row, c->normal, impulse, &va, &vb, &tree);
  }
  EndPair<kTrees>(red, va, vb, tree, a, b);
}

template <bool kTrees = true>
S2R_HD void ApplyRestitution(const ReducedSet& red, ContactConstraint* c, SolverBody* a, SolverBody* b,
                             Real threshold) {
  if (c->restitution == Real(0)) return;
  if (c->relative_velocity > -threshold || c->max_normal_impulse == Real(0)) return;
  BodyVelocity va = PairVelocity<kTrees>(red, *a), vb = PairVelocity<kTrees>(red, *b);
  Real vn = RowSpeed(c->row, c->normal, va, vb);
  Real impulse = -c->normal_mass * (vn + c->restitution * c->relative_velocity);
  Real total = Max(c->normal_impulse + impulse, Real(0));
  impulse = total - c->normal_impulse;
  c->normal_impulse = total;
  c->max_normal_impulse = Max(c->max_normal_impulse, impulse);
  PairTreeImpulses tree;
  RowImpulse<kTrees>(c->row, c->normal, impulse, &va, &vb, &tree);
  EndPair<kTrees>(red, va, vb, tree, a, b);
}

// What a manifold's friction is shared by among its points: the sum of their normal impulses and of
// their squared arms. Summed once per manifold, where PointFrictionForce summed them for each point
// (a 4-point manifold's points were read 4 times each), in the same order: the same bits.
struct FrictionShares {
  Real normal_sum = Real(0);
  Real arm2_sum = Real(0);
};

S2R_HD FrictionShares ManifoldFrictionShares(const ContactManifold& mf,
                                             const ContactConstraint* points) {
  FrictionShares s;
  for (int i = 0; i < mf.count; ++i) {
    s.normal_sum += points[mf.first + i].normal_impulse;
    s.arm2_sum += LengthSq(ManifoldArm(mf, points[mf.first + i]));
  }
  return s;
}

// Per-point friction for the state (logging and next step's warm start): the manifold's
// tangential force shared in proportion to the normal forces, plus the twist as a force couple
// tau (n x d_i) / sum |d_i|^2, which sums to zero force and to torque tau n about the centre.
S2R_HD Vec3 PointFrictionForce(const ContactManifold& mf, const ContactConstraint* points, int k,
                               const FrictionShares& sums, Real inv_h) {
  const ContactConstraint& c = points[mf.first + k];
  Vec3 tangential = mf.tangent1_impulse * mf.tangent1 + mf.tangent2_impulse * mf.tangent2;
  Real share = sums.normal_sum > Real(0) ? c.normal_impulse / sums.normal_sum
                                         : Real(1) / Real(mf.count);
  Vec3 f = share * tangential;
  if (sums.arm2_sum > Real(0)) {
    f += (mf.twist_impulse / sums.arm2_sum) * Cross(mf.normal, ManifoldArm(mf, c));
  }
  return inv_h * f;
}

// Warm start of a new manifold from last step's points of the same geom pair: their friction
// forces summed (tangential) and their moment about the new centre (twist), as impulses over h.
S2R_HD void WarmStartManifoldFriction(ContactManifold* mf, const Contact* old, int nold, int geom_a,
                                      int geom_b, Vec3 center_world, Real h) {
  Vec3 force{0, 0, 0};
  Real torque = Real(0);
  for (int o = 0; o < nold; ++o) {
    if (old[o].geom_a != geom_a || old[o].geom_b != geom_b) continue;
    force += old[o].friction_force;
    torque += Dot(Cross(old[o].point - center_world, old[o].friction_force), mf->normal);
  }
  mf->tangent1_impulse = h * Dot(force, mf->tangent1);
  mf->tangent2_impulse = h * Dot(force, mf->tangent2);
  mf->twist_impulse = mf->count > 1 ? h * torque : Real(0);
}

}  // namespace s2r
