// Contact stages of PhysicsStep (step_frame.h): rows and manifolds at the step start, warm-started
// from the last step's points; restitution after the substeps; the points and forces stored.
#pragma once

#include "kernels/step_frame.h"

namespace s2r {

// One normal row per point, warm-started from last step's point with the same feature pair;
// failing that (clipping can renumber the points of a face contact when the faces are exactly
// aligned), from the nearest point of the same geom pair within the match radius. Then the
// manifolds, one per geom pair, with their friction rows. Slide trees first learn which of their
// bodies take linear impulses this step.
template <unsigned kFeatures = kStepAll>
S2R_HD void PrepareContacts(const ModelView& m, const StateView& s, int world, Workspace* ws, StepFrame* st) {
  constexpr bool kSlides = (kFeatures & kStepSlideTrees) != 0;
  constexpr bool kTrees = (kFeatures & kStepTrees) != 0;
  const ReducedSet& red = st->red;
  const int ncon = st->ncon;
  const Real h = st->h;
  if (kSlides && red.count > 0) {
    // the tree bodies that take linear impulses this step: in contact, or site-actuated
    uint32_t mask = 0;
    for (int c = 0; c < ncon; ++c) {
      int ra = m.body_reduced[m.geom_body[ws->contacts[c].geom_a]];
      int rb = m.body_reduced[m.geom_body[ws->contacts[c].geom_b]];
      if (ra >= 0) mask |= 1u << ra;
      if (rb >= 0) mask |= 1u << rb;
    }
    for (int i = 0; i < m.nactuator; ++i) {
      if (m.actuator_trntype[i] != kTransmissionSite) continue;
      int rs = m.body_reduced[m.site_body[m.actuator_trnid[i]]];
      if (rs >= 0) mask |= 1u << rs;
    }
    for (int b = 1; b < m.nbody; ++b) {  // gravity-compensated
      if (m.body_gravcomp.At(world)[b] != Real(0) && m.body_reduced[b] >= 0) {
        mask |= 1u << m.body_reduced[b];
      }
    }
    PrepareReducedImpulseResponse(red, mask);
  }
  const Contact* old = s.contacts(world);
  int nold = s.contact_count(world);
  const Real* friction = m.geom_friction.At(world);
  const Real* restitution = m.geom_restitution.At(world);
  const Real* geom_hertz = m.geom_contact_hertz.At(world);
  Real match_radius = Real(2) * m.speculative_distance.At(world)[0];
  // last step's points of the current geom pair: [old_first, old_end) (each pair's points are
  // contiguous, in the same narrow-phase order)
  int old_first = 0, old_end = 0;
  for (int c = 0; c < ncon; ++c) {
    const Contact& pt = ws->contacts[c];
    ContactConstraint* cc = &ws->constraints[c];
    cc->body_a = m.geom_body[pt.geom_a];
    cc->body_b = m.geom_body[pt.geom_b];
    PrepareContactPoint<kTrees>(red, cc, ws->bodies[cc->body_a], ws->bodies[cc->body_b], pt.point,
                        pt.normal, pt.separation);
    cc->restitution = Max(restitution[pt.geom_a], restitution[pt.geom_b]);
    cc->normal_impulse = Real(0);
    if (c == 0 || pt.geom_a != ws->contacts[c - 1].geom_a || pt.geom_b != ws->contacts[c - 1].geom_b) {
      old_first = 0;
      while (old_first < nold &&
             (old[old_first].geom_a != pt.geom_a || old[old_first].geom_b != pt.geom_b)) {
        ++old_first;
      }
      old_end = old_first;
      while (old_end < nold && old[old_end].geom_a == pt.geom_a && old[old_end].geom_b == pt.geom_b) {
        ++old_end;
      }
    }
    int match = -1;
    Real best = match_radius * match_radius;
    for (int o = old_first; o < old_end; ++o) {
      if (old[o].feature == pt.feature) {
        match = o;
        break;
      }
      Real d2 = LengthSq(old[o].point - pt.point);
      if (d2 < best) {
        best = d2;
        match = o;
      }
    }
    if (match >= 0) cc->normal_impulse = old[match].normal_force * h;
  }
  // manifolds: the points of one geom pair are contiguous in narrow-phase order
  int nman = 0;
  for (int c = 0; c < ncon;) {
    int first = c;
    while (c < ncon && ws->contacts[c].geom_a == ws->contacts[first].geom_a &&
           ws->contacts[c].geom_b == ws->contacts[first].geom_b) {
      ++c;
    }
    ContactManifold* mf = &ws->manifolds[nman++];
    const SolverBody& a = ws->bodies[ws->constraints[first].body_a];
    const SolverBody& b = ws->bodies[ws->constraints[first].body_b];
    PrepareManifold<kTrees>(red, mf, ws->constraints, first, c - first, a, b);
    int ga = ws->contacts[first].geom_a, gb = ws->contacts[first].geom_b;
    mf->friction = Max(friction[ga], friction[gb]);
    mf->hertz = kTrees ? Max(geom_hertz[ga], geom_hertz[gb]) : Real(0);  // SolveAll
    WarmStartManifoldFriction(mf, old, nold, ga, gb, a.com + mf->anchor_a, h);
  }
  st->nman = nman;
}

// restitution once per step, against the approach speed at the step start
template <bool kTrees = true>
S2R_HD void RestituteContacts(const ModelView& m, int world, Workspace* ws, const StepFrame& st) {
  Real threshold = m.restitution_threshold.At(world)[0];
  for (int c = 0; c < st.ncon; ++c) {
    ContactConstraint* cc = &ws->constraints[c];
    ApplyRestitution<kTrees>(st.red, cc, &ws->bodies[cc->body_a], &ws->bodies[cc->body_b], threshold);
  }
}

// the step's points with their forces (of the last substep), for the next step's warm starts and
// the caller
S2R_HD void StoreContacts(const StateView& s, int world, Workspace* ws, const StepFrame& st) {
  Contact* out = s.contacts(world);
  for (int k = 0; k < st.nman; ++k) {
    const ContactManifold& mf = ws->manifolds[k];
    const FrictionShares sums = ManifoldFrictionShares(mf, ws->constraints);
    for (int i = 0; i < mf.count; ++i) {
      int c = mf.first + i;
      Contact pt = ws->contacts[c];
      pt.normal_force = ws->constraints[c].normal_impulse / st.h;
      pt.friction_force = PointFrictionForce(mf, ws->constraints, i, sums, Real(1) / st.h);
      out[c] = pt;
    }
  }
  s.contact_count(world) = st.ncon;
}

}  // namespace s2r
