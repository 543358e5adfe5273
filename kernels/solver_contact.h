// Contact constraints: soft non-penetration, Coulomb friction, restitution.
//
// Per physics step: narrow phase makes points once; PrepareContact fixes anchors, tangent basis
// and effective masses at the step's start configuration. Each substep then
//   WarmStartContact  - re-applies the accumulated impulses,
//   SolveContact(bias) - friction inside the Coulomb cone |f_t| <= mu f_n, then soft
//                        non-penetration (separation updated from the bodies' motion since the
//                        step began),
//   SolveContact(relax) after position integration, rigid, without bias.
// After the last substep ApplyRestitution targets v_n' = -e v_n for points that approached faster
// than the threshold (Box2D v3 contact_solver.c, in 3D with a circular friction cone).
// Static friction holds because friction is a velocity constraint solved every substep: with the
// cone not saturated the tangential velocity is driven to zero and nothing creeps.
#pragma once

#include "kernels/solver_body.h"
#include "kernels/solver_soft.h"

namespace s2r {

// Jacobians are fixed at the step start (anchors, directions, inverse inertia), so each row keeps
// its angular parts r x d and their inverse-inertia images I^-1 (r x d): a solve then costs dot
// products and axpys, no matrix products.
struct ContactRow {
  Vec3 ang_a, ang_b;  // ra x d, rb x d
  Vec3 dw_a, dw_b;    // Ia^-1 (ra x d), Ib^-1 (rb x d): angular velocity change per unit impulse
};

struct ContactConstraint {
  int32_t body_a, body_b;
  Vec3 normal;              // from A to B
  Vec3 tangent1, tangent2;
  ContactRow rows[3];       // normal, tangent1, tangent2
  Vec3 anchor_a, anchor_b;  // contact point relative to each COM at the step start, world, m
  Real base_separation;     // separation at the step start, m
  Real normal_mass, tangent1_mass, tangent2_mass;  // effective masses, kg
  Real friction;            // Coulomb coefficient
  Real restitution;
  Real relative_velocity;   // normal approach speed at the step start, m/s
  Real max_normal_impulse;  // largest impulse applied in any substep, N s
  Real normal_impulse, tangent1_impulse, tangent2_impulse;  // accumulated, N s per substep
};

S2R_HD ContactRow MakeContactRow(const SolverBody& a, Vec3 ra, const SolverBody& b, Vec3 rb,
                                 Vec3 d, Real* mass) {
  ContactRow r;
  r.ang_a = Cross(ra, d);
  r.ang_b = Cross(rb, d);
  r.dw_a = a.inv_inertia * r.ang_a;
  r.dw_b = b.inv_inertia * r.ang_b;
  Real k = a.inv_mass + b.inv_mass + Dot(r.ang_a, r.dw_a) + Dot(r.ang_b, r.dw_b);
  *mass = k > Real(0) ? Real(1) / k : Real(0);
  return r;
}

// relative velocity of B against A along direction d of row r
S2R_HD Real RowSpeed(const ContactRow& r, Vec3 d, const SolverBody& a, const SolverBody& b) {
  return Dot(d, b.v - a.v) + Dot(r.ang_b, b.w) - Dot(r.ang_a, a.w);
}

// impulse p along d of row r: B gets +p, A gets -p
S2R_HD void RowImpulse(const ContactRow& r, Vec3 d, Real p, SolverBody* a, SolverBody* b) {
  a->v -= (p * a->inv_mass) * d;
  a->w -= p * r.dw_a;
  b->v += (p * b->inv_mass) * d;
  b->w += p * r.dw_b;
}

S2R_HD void PrepareContact(ContactConstraint* c, const SolverBody& a, const SolverBody& b,
                           Vec3 point, Vec3 normal, Real separation) {
  c->normal = normal;
  OrthonormalBasis(normal, &c->tangent1, &c->tangent2);
  c->anchor_a = point - a.com;
  c->anchor_b = point - b.com;
  c->base_separation = separation;
  c->rows[0] = MakeContactRow(a, c->anchor_a, b, c->anchor_b, normal, &c->normal_mass);
  c->rows[1] = MakeContactRow(a, c->anchor_a, b, c->anchor_b, c->tangent1, &c->tangent1_mass);
  c->rows[2] = MakeContactRow(a, c->anchor_a, b, c->anchor_b, c->tangent2, &c->tangent2_mass);
  c->relative_velocity = RowSpeed(c->rows[0], normal, a, b);
  c->max_normal_impulse = Real(0);
}

S2R_HD void WarmStartContact(const ContactConstraint& c, SolverBody* a, SolverBody* b) {
  RowImpulse(c.rows[0], c.normal, c.normal_impulse, a, b);
  RowImpulse(c.rows[1], c.tangent1, c.tangent1_impulse, a, b);
  RowImpulse(c.rows[2], c.tangent2, c.tangent2_impulse, a, b);
}

// soft: the step's contact softness; use_bias false is the relax pass
S2R_HD void SolveContact(ContactConstraint* c, SolverBody* a, SolverBody* b, Softness soft,
                         bool use_bias, Real inv_h, Real push_velocity) {
  // friction first, inside the cone of the current normal impulse: both tangent rows, then the
  // accumulated pair is projected onto the cone
  Real i1 = c->tangent1_impulse - c->tangent1_mass * RowSpeed(c->rows[1], c->tangent1, *a, *b);
  Real i2 = c->tangent2_impulse - c->tangent2_mass * RowSpeed(c->rows[2], c->tangent2, *a, *b);
  Real limit = c->friction * c->normal_impulse;
  Real mag2 = i1 * i1 + i2 * i2;
  if (mag2 > limit * limit) {
    Real scale = mag2 > Real(0) ? limit / Sqrt(mag2) : Real(0);
    i1 *= scale;
    i2 *= scale;
  }
  RowImpulse(c->rows[1], c->tangent1, i1 - c->tangent1_impulse, a, b);
  RowImpulse(c->rows[2], c->tangent2, i2 - c->tangent2_impulse, a, b);
  c->tangent1_impulse = i1;
  c->tangent2_impulse = i2;

  // current separation from the motion since the step began (rotation to first order)
  Vec3 d = (b->delta_pos - a->delta_pos) + Cross(b->delta_angle, c->anchor_b) -
           Cross(a->delta_angle, c->anchor_a);
  Real s = Dot(d, c->normal) + c->base_separation;

  // non-penetration: speculative when separated, soft when penetrating
  Real bias = Real(0), mass_scale = Real(1), impulse_scale = Real(0);
  if (s > Real(0)) {
    bias = s * inv_h;
  } else if (use_bias) {
    bias = Max(soft.bias_rate * s, -push_velocity);
    mass_scale = soft.mass_scale;
    impulse_scale = soft.impulse_scale;
  }
  Real vn = RowSpeed(c->rows[0], c->normal, *a, *b);
  Real impulse = -c->normal_mass * mass_scale * (vn + bias) - impulse_scale * c->normal_impulse;
  Real total = Max(c->normal_impulse + impulse, Real(0));
  impulse = total - c->normal_impulse;
  c->normal_impulse = total;
  c->max_normal_impulse = Max(c->max_normal_impulse, impulse);
  RowImpulse(c->rows[0], c->normal, impulse, a, b);
}

S2R_HD void ApplyRestitution(ContactConstraint* c, SolverBody* a, SolverBody* b, Real threshold) {
  if (c->restitution == Real(0)) return;
  if (c->relative_velocity > -threshold || c->max_normal_impulse == Real(0)) return;
  Real vn = RowSpeed(c->rows[0], c->normal, *a, *b);
  Real impulse = -c->normal_mass * (vn + c->restitution * c->relative_velocity);
  Real total = Max(c->normal_impulse + impulse, Real(0));
  impulse = total - c->normal_impulse;
  c->normal_impulse = total;
  c->max_normal_impulse = Max(c->max_normal_impulse, impulse);
  RowImpulse(c->rows[0], c->normal, impulse, a, b);
}

}  // namespace s2r
