// Contact constraints: soft non-penetration, Coulomb friction, restitution.
//
// Per physics step: narrow phase makes points once; PrepareContact fixes anchors, tangent basis
// and effective masses at the step's start configuration. Each substep then
//   WarmStartContact  - re-applies the accumulated impulses,
//   SolveContact(bias) - soft non-penetration (separation updated from the bodies' motion since
//                        the step began) then friction inside the Coulomb cone |f_t| <= mu f_n,
//   SolveContact(relax) after position integration, rigid, without bias.
// After the last substep ApplyRestitution targets v_n' = -e v_n for points that approached faster
// than the threshold (Box2D v3 contact_solver.c, in 3D with a circular friction cone).
// Static friction holds because friction is a velocity constraint solved every substep: with the
// cone not saturated the tangential velocity is driven to zero and nothing creeps.
#pragma once

#include "kernels/solver_body.h"
#include "kernels/solver_soft.h"

namespace s2r {

struct ContactConstraint {
  int32_t body_a, body_b;
  Vec3 normal;              // from A to B
  Vec3 tangent1, tangent2;
  Vec3 anchor_a, anchor_b;  // contact point relative to each COM at the step start, world, m
  Real base_separation;     // separation minus the anchors' normal offset, m
  Real normal_mass, tangent1_mass, tangent2_mass;  // effective masses, kg
  Real friction;            // Coulomb coefficient
  Real restitution;
  Real relative_velocity;   // normal approach speed at the step start, m/s
  Real max_normal_impulse;  // largest impulse applied in any substep, N s
  Real normal_impulse, tangent1_impulse, tangent2_impulse;  // accumulated, N s per substep
};

S2R_HD void PrepareContact(ContactConstraint* c, const SolverBody& a, const SolverBody& b,
                           Vec3 point, Vec3 normal, Real separation) {
  c->normal = normal;
  OrthonormalBasis(normal, &c->tangent1, &c->tangent2);
  c->anchor_a = point - a.com;
  c->anchor_b = point - b.com;
  c->base_separation = separation - Dot(c->anchor_b - c->anchor_a, normal);
  Real kn = InvEffectiveMass(a, c->anchor_a, b, c->anchor_b, normal);
  Real k1 = InvEffectiveMass(a, c->anchor_a, b, c->anchor_b, c->tangent1);
  Real k2 = InvEffectiveMass(a, c->anchor_a, b, c->anchor_b, c->tangent2);
  c->normal_mass = kn > Real(0) ? Real(1) / kn : Real(0);
  c->tangent1_mass = k1 > Real(0) ? Real(1) / k1 : Real(0);
  c->tangent2_mass = k2 > Real(0) ? Real(1) / k2 : Real(0);
  Vec3 dv = PointVelocity(b, c->anchor_b) - PointVelocity(a, c->anchor_a);
  c->relative_velocity = Dot(dv, normal);
  c->max_normal_impulse = Real(0);
}

S2R_HD void WarmStartContact(const ContactConstraint& c, SolverBody* a, SolverBody* b) {
  Vec3 p = c.normal_impulse * c.normal + c.tangent1_impulse * c.tangent1 +
           c.tangent2_impulse * c.tangent2;
  ApplyImpulse(a, c.anchor_a, -p);
  ApplyImpulse(b, c.anchor_b, p);
}

// soft: the step's contact softness; use_bias false is the relax pass
S2R_HD void SolveContact(ContactConstraint* c, SolverBody* a, SolverBody* b, Softness soft,
                         bool use_bias, Real inv_h, Real push_velocity) {
  // current separation from the motion since the step began
  Vec3 ra_now = Rotate(a->delta_rot, c->anchor_a);
  Vec3 rb_now = Rotate(b->delta_rot, c->anchor_b);
  Vec3 d = (b->delta_pos - a->delta_pos) + (rb_now - ra_now);
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
  Vec3 dv = PointVelocity(*b, c->anchor_b) - PointVelocity(*a, c->anchor_a);
  Real vn = Dot(dv, c->normal);
  Real impulse = -c->normal_mass * mass_scale * (vn + bias) - impulse_scale * c->normal_impulse;
  Real total = Max(c->normal_impulse + impulse, Real(0));
  impulse = total - c->normal_impulse;
  c->normal_impulse = total;
  c->max_normal_impulse = Max(c->max_normal_impulse, impulse);
  ApplyImpulse(a, c->anchor_a, -impulse * c->normal);
  ApplyImpulse(b, c->anchor_b, impulse * c->normal);

  // friction: both tangent rows, then the accumulated pair is projected onto the cone
  dv = PointVelocity(*b, c->anchor_b) - PointVelocity(*a, c->anchor_a);
  Real i1 = c->tangent1_impulse - c->tangent1_mass * Dot(dv, c->tangent1);
  Real i2 = c->tangent2_impulse - c->tangent2_mass * Dot(dv, c->tangent2);
  Real limit = c->friction * c->normal_impulse;
  Real mag2 = i1 * i1 + i2 * i2;
  if (mag2 > limit * limit) {
    Real scale = mag2 > Real(0) ? limit / Sqrt(mag2) : Real(0);
    i1 *= scale;
    i2 *= scale;
  }
  Vec3 p = (i1 - c->tangent1_impulse) * c->tangent1 + (i2 - c->tangent2_impulse) * c->tangent2;
  c->tangent1_impulse = i1;
  c->tangent2_impulse = i2;
  ApplyImpulse(a, c->anchor_a, -p);
  ApplyImpulse(b, c->anchor_b, p);
}

S2R_HD void ApplyRestitution(ContactConstraint* c, SolverBody* a, SolverBody* b, Real threshold) {
  if (c->restitution == Real(0)) return;
  if (c->relative_velocity > -threshold || c->max_normal_impulse == Real(0)) return;
  Vec3 dv = PointVelocity(*b, c->anchor_b) - PointVelocity(*a, c->anchor_a);
  Real vn = Dot(dv, c->normal);
  Real impulse = -c->normal_mass * (vn + c->restitution * c->relative_velocity);
  Real total = Max(c->normal_impulse + impulse, Real(0));
  impulse = total - c->normal_impulse;
  c->normal_impulse = total;
  c->max_normal_impulse = Max(c->max_normal_impulse, impulse);
  ApplyImpulse(a, c->anchor_a, -impulse * c->normal);
  ApplyImpulse(b, c->anchor_b, impulse * c->normal);
}

}  // namespace s2r
