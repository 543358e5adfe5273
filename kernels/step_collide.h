// Collision and the substep count it decides (stages of PhysicsStep, step_frame.h).
#pragma once

#include "kernels/step_frame.h"

namespace s2r {

// --- collision -----------------------------------------------------------------------------------

// Narrow phase over the model's candidate pairs (bounding-sphere culled); returns the point count
// and counts the points that did not fit in the pool.
template <unsigned kFeatures = kStepAll>
S2R_HD int CollideWorld(const ModelView& m, const StateView& s, int world, Workspace* ws) {
  for (int g = 0; g < m.ngeom; ++g) {
    const SolverBody& b = ws->bodies[m.geom_body[g]];
    Transform body{b.com - Rotate(b.rot, b.ipos), b.rot};
    Transform local{LoadVec3(m.geom_pos.At(world) + 3 * g), LoadQuat(m.geom_quat.At(world) + 4 * g)};
    ws->geom_xform[g] = Compose(body, local);
  }
  const Real* size = m.geom_size.At(world);
  // each geom's bounding radius and how far its points can travel within the step (its body's
  // speed plus its spin times the radius), once per geom rather than once per pair
  for (int g = 0; g < m.ngeom; ++g) {
    const SolverBody& b = ws->bodies[m.geom_body[g]];
    const Real r = GeomBoundingRadius(m.geom_type[g], size + 3 * g);
    ws->geom_reach[2 * g] = r;
    ws->geom_reach[2 * g + 1] = m.timestep * (Length(b.v) + Length(b.w) * Max(r, Real(0)));
  }
  const Real speculative = m.speculative_distance.At(world)[0];
  int count = 0;
  for (int p = 0; p < m.npair; ++p) {
    int ga = m.pair_geom[2 * p], gb = m.pair_geom[2 * p + 1];
    int ta = m.geom_type[ga], tb = m.geom_type[gb];
    const Real ra = ws->geom_reach[2 * ga], rb = ws->geom_reach[2 * gb];
    // speculative margin: the fixed distance plus how far the pair can close within the step,
    // so a fast body meets the surface instead of tunnelling into it
    Real margin = speculative + ws->geom_reach[2 * ga + 1] + ws->geom_reach[2 * gb + 1];
    // bounding spheres; a plane (unbounded, a half-space) against the other's bounding sphere:
    // its centre's height above the plane
    if (ra >= Real(0) && rb >= Real(0)) {
      Real reach = ra + rb + margin;
      if (LengthSq(ws->geom_xform[ga].pos - ws->geom_xform[gb].pos) > reach * reach) continue;
    } else if (ta == kGeomPlane && rb >= Real(0)) {
      const Transform& plane = ws->geom_xform[ga];
      if (Dot(Rotate(plane.rot, Vec3{0, 0, 1}), ws->geom_xform[gb].pos - plane.pos) > rb + margin) continue;
    } else if (tb == kGeomPlane && ra >= Real(0)) {
      const Transform& plane = ws->geom_xform[gb];
      if (Dot(Rotate(plane.rot, Vec3{0, 0, 1}), ws->geom_xform[ga].pos - plane.pos) > ra + margin) continue;
    }
    // the pair's points go straight into the pool (which has room for one pair's points past its
    // capacity, workspace.h); those past the capacity are counted, not kept
    Contact* pts = ws->contacts + count;
    // mesh geoms carry their hull (shared by every world)
    GeomHull hull_a, hull_b;
    if ((kFeatures & kStepConvex) && ta == kGeomMesh) hull_a = GeomHull{m.hull_vert + 3 * m.geom_hull[2 * ga], m.geom_hull[2 * ga + 1]};
    if ((kFeatures & kStepConvex) && tb == kGeomMesh) hull_b = GeomHull{m.hull_vert + 3 * m.geom_hull[2 * gb], m.geom_hull[2 * gb + 1]};
    const int n = CollideGeoms<(kFeatures & kStepConvex) != 0>(ta, ws->geom_xform[ga], size + 3 * ga, tb, ws->geom_xform[gb],
                                                               size + 3 * gb, margin, pts, hull_a, hull_b);
    const int kept = Min(n, m.contact_capacity - count);
    if (kept < n) s.contact_overflow(world) += n - kept;
    for (int k = 0; k < kept; ++k) {
      pts[k].geom_a = ga;
      pts[k].geom_b = gb;
      pts[k].normal_force = Real(0);
      pts[k].friction_force = Vec3{0, 0, 0};
    }
    count += kept;
  }
  return count;
}

// The substeps of a physics step whose collision found the `n` points `pts` (Model::ChooseSubsteps
// sets the counts): substeps_no_contact without points, when the model sets it;
// substeps_soft_contact when every point takes the scene's contact frequency (no pair of a
// geom with a stiffer geom_contact_hertz, which would be capped at a quarter of a longer
// substep's rate), when the model sets it; else substeps.
S2R_HD int SubstepsOfStep(const ModelView& m, int world, const Contact* pts, int n) {
  if (n == 0) return m.substeps_no_contact > 0 ? m.substeps_no_contact : m.substeps;
  if (m.substeps_soft_contact > 0) {
    const Real scene = m.contact_hertz.At(world)[0];
    const Real* hertz = m.geom_contact_hertz.At(world);
    for (int c = 0; c < n; ++c) {
      if (Max(hertz[pts[c].geom_a], hertz[pts[c].geom_b]) > scene) return m.substeps;
    }
    return m.substeps_soft_contact;
  }
  return m.substeps;
}

// The step's substeps, from its contact points and the last step's (SubstepsOfStep); solve passes
// per substep; the warm starts rescaled when the count changed; the softness of the rows at that
// substep; the axis rows' per-step coefficients.
S2R_HD void StepSubsteps(const ModelView& m, const StateView& s, int world, Workspace* ws, StepFrame* st) {
  // The joint, actuator and equality warm starts are impulses per substep: when the count differs
  // from the last step's (known from its contact points) they are rescaled to the same force.
  const int nsub = SubstepsOfStep(m, world, ws->contacts, st->ncon);
  const int nsub_last = SubstepsOfStep(m, world, s.contacts(world), s.contact_count(world));
  const Real h = m.timestep / Real(nsub);
  st->nsub = nsub;
  st->h = h;
  // solve passes per substep: at least solve_passes in the step (a coupling's rows converge over
  // the passes, Model::ChooseSubsteps)
  st->passes = (m.solve_passes + nsub - 1) / nsub;
  if (nsub != nsub_last) {
    const Real scale = Real(nsub_last) / Real(nsub);
    for (int j = 0; j < m.njoint; ++j) {
      for (int k = 0; k < kJointImpulseSlots; ++k) s.joint_impulse(world, j)[k] *= scale;
    }
    for (int i = 0; i < m.nactuator; ++i) s.actuator_impulse(world)[i] *= scale;
    for (int e = 0; e < kEqualityImpulseSlots * m.nequality; ++e) s.equality_impulse(world)[e] *= scale;
  }

  // softness: stiffness capped at a quarter of the substep rate for stability
  Real max_hertz = Real(0.25) / h;
  Real contact_hertz = Min(m.contact_hertz.At(world)[0], max_hertz);
  Real contact_zeta = m.contact_damping_ratio.At(world)[0];
  StepSoftness& soft = st->soft;
  soft.contact = MakeSoft(contact_hertz, contact_zeta, h);
  soft.contact_hertz = m.contact_hertz.At(world)[0];
  soft.contact_zeta = contact_zeta;
  soft.contact_static = MakeSoft(Min(Real(2) * contact_hertz, max_hertz), contact_zeta, h);
  soft.joint = MakeSoft(Min(m.joint_hertz.At(world)[0], max_hertz),
                        m.joint_damping_ratio.At(world)[0], h);
  PrepareAxisRows(m, world, s.ctrl(world), h, ws->axis_prep);
}

}  // namespace s2r
