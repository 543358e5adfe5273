// The rows along a joint's free axis, the coordinate q: limits (unilateral, speculative when not
// yet reached), damping (implicit, gamma = 1/(c h)), friction loss (|impulse| <= f h), armature
// (added inertia a: impulse = -a (qdot - qdot_0)), and position / velocity actuators as implicit
// spring-dampers (solver_soft.h), clamped to the force range. Motors and site transmissions apply
// explicit forces (step_forces.h). The same rows serve every joint: a maximal-coordinate joint's
// (solver_joint.h, SolveJoint), a slide tree's (SolveReducedJoint) and an articulated tree's
// (SolveTreeJoint).
#pragma once

#include "kernels/joint_rows.h"

namespace s2r {

// --- actuators ---------------------------------------------------------------------------------

// --- per-step coefficients of the axis rows ------------------------------------------------------
//
// What the axis rows need that is fixed for a physics step (controls, gains, gears, force ranges,
// damping, armature, the substep) is computed once per step, so that a solver pass costs
// multiply-adds and one division per force row (the row's effective mass changes with the
// configuration). Layout: kActuatorPrepSize Reals per actuator, then kJointPrepSize per joint.
constexpr int kActuatorPrepSize = 6;
constexpr int kActPrepBiasRate = 0;  // k / (c + h k / 2) for a position actuator, else 0, 1/s
constexpr int kActPrepGamma = 1;     // compliance per substep; <= 0: the row is inactive
constexpr int kActPrepOffset = 2;    // velocity target term without q: -bias_rate u / g, or -u / g
constexpr int kActPrepLo = 3;        // impulse bounds per substep, N s (or N m s)
constexpr int kActPrepHi = 4;
constexpr int kActPrepExplicit = 5;  // h k of an explicit spring without damping (offset: h k u / g)
constexpr int kJointPrepSize = 5;
constexpr int kJointPrepArmatureGamma = 0;  // 1 / armature, 0 without
constexpr int kJointPrepDampingGamma = 1;   // 1 / (damping h), 0 without
constexpr int kJointPrepFrictionLimit = 2;  // friction loss times h, 0 without
constexpr int kJointPrepFrictionReg = 3;    // soft friction loss: R / w = (1 - d) / d; 0: hard
constexpr int kJointPrepFrictionRef = 4;    // soft friction loss: h B - 1 (multiplies qdot0)

S2R_HD int AxisPrepSize(const ModelView& m) {
  return kActuatorPrepSize * m.nactuator + kJointPrepSize * m.njoint + 1;
}

// position and velocity actuators on a joint or a fixed tendon: implicit rows in joint space
S2R_HD bool ActuatorIsImplicit(const ModelView& m, int i) {
  return (m.actuator_trntype[i] == kTransmissionJoint || m.actuator_trntype[i] == kTransmissionTendon) &&
         m.actuator_type[i] != kActuatorMotor;
}

// The control as actuator i reads it, from the world's control u: scale u + offset
// (actuator_ctrlmap; MJCF <general> laws with gainprm[0] != kp, as Menagerie's Robotiq 2F-85
// remapping 0..255 onto the finger travel). The servo's target or the motor's force.
S2R_HDI Real ActuatorInput(const ModelView& m, int world, int i, Real u) {
  const Real* map = m.actuator_ctrlmap.At(world) + 2 * i;
  return map[0] * u + map[1];
}

// Position / velocity actuator i on its joint is one implicit spring-damper row along the axis:
// length = g q, force = kp (u - g q) - kv g qdot  =>  generalized force g * force, clamped to the
// force range. On a fixed tendon q is the tendon length L = sum coef q_k and the row runs along
// the tendon's joint-space direction (solver_coupling.h). `ctrl`: the world's controls for this
// step.
S2R_HD void PrepareAxisRows(const ModelView& m, int world, const Real* ctrl, Real h, Real* prep) {
  for (int i = 0; i < m.nactuator; ++i) {
    Real* p = prep + kActuatorPrepSize * i;
    for (int k = 0; k < kActuatorPrepSize; ++k) p[k] = Real(0);
    p[kActPrepGamma] = Real(-1);
    if (!ActuatorIsImplicit(m, i)) continue;
    Real g = m.actuator_gear.At(world)[6 * i];
    if (g == Real(0)) continue;
    bool position = m.actuator_type[i] == kActuatorPosition;
    Real kp = position ? m.actuator_kp.At(world)[i] : Real(0);
    Real kv = m.actuator_kv.At(world)[i];
    SpringDamper sd = MakeSpringDamper(kp * g * g, kv * g * g, h);
    if (sd.gamma <= Real(0)) continue;
    Real target = ActuatorInput(m, world, i, ctrl[i]) / g;
    p[kActPrepBiasRate] = position ? sd.bias_rate : Real(0);
    p[kActPrepGamma] = sd.gamma;
    p[kActPrepOffset] = position ? -sd.bias_rate * target : -target;
    if (position && m.explicit_servo_spring != 0) {
      // MuJoCo's Euler: the spring force k (u / g - q) from the substep-start q (the solve pass
      // runs in the substep-start frames), the damper c implicit; without damper a fixed impulse
      Real k = kp * g * g, c = kv * g * g;
      if (c > Real(0)) {
        p[kActPrepGamma] = Real(1) / (h * c);
        p[kActPrepBiasRate] = k / c;
        p[kActPrepOffset] = -k * target / c;
      } else {
        p[kActPrepGamma] = Real(1);  // active; unused by the explicit row
        p[kActPrepBiasRate] = Real(0);
        p[kActPrepExplicit] = h * k;
        p[kActPrepOffset] = h * k * target;
      }
    }
    p[kActPrepLo] = Real(-1e30);
    p[kActPrepHi] = Real(1e30);
    if (m.actuator_forcelimited[i]) {
      const Real* fr = m.actuator_forcerange.At(world) + 2 * i;
      Real x = h * g * fr[0], y = h * g * fr[1];
      p[kActPrepLo] = Min(x, y);
      p[kActPrepHi] = Max(x, y);
    }
  }
  Real* jp = prep + kActuatorPrepSize * m.nactuator;
  for (int j = 0; j < m.njoint; ++j, jp += kJointPrepSize) {
    Real armature = m.joint_armature.At(world)[j];
    Real damping = m.joint_damping.At(world)[j];
    Real friction_loss = m.joint_frictionloss.At(world)[j];
    jp[kJointPrepArmatureGamma] = armature > Real(0) ? Real(1) / armature : Real(0);
    jp[kJointPrepDampingGamma] = damping > Real(0) ? Real(1) / (damping * h) : Real(0);
    jp[kJointPrepFrictionLimit] = friction_loss > Real(0) ? friction_loss * h : Real(0);
    // soft friction loss (MuJoCo's solreffriction / solimpfriction): a regularized velocity row
    // with reference acceleration -B qdot0, B = 2 / (dmax timeconst), and regularization
    // R = (1 - d) / d times the row's inverse effective mass, d = dmin (the impedance at zero
    // violation). timeconst is raised to two MJCF timesteps, as MuJoCo does.
    Real timeconst = m.joint_frictionloss_timeconst.At(world)[j];
    jp[kJointPrepFrictionReg] = Real(0);
    jp[kJointPrepFrictionRef] = Real(-1);
    if (friction_loss > Real(0) && timeconst > Real(0)) {
      const Real* imp = m.joint_frictionloss_impedance.At(world) + 2 * j;
      Real dmin = Clamp(imp[0], Real(1e-4), Real(0.9999));
      Real dmax = Clamp(imp[1], Real(1e-4), Real(0.9999));
      Real tc = Max(timeconst, Real(2) * m.timestep);
      jp[kJointPrepFrictionReg] = (Real(1) - dmin) / dmin;
      jp[kJointPrepFrictionRef] = h * Real(2) / (dmax * tc) - Real(1);
    }
  }
}

// The rows along a joint's free axis, in one Gauss-Seidel pass: implicit actuators, armature (as
// a row when the joint's inertia is not in a mass matrix: armature_row), damping, friction loss
// and limits. q: joint coordinate; cdot: its velocity; w: the axis row's inverse effective mass.
// They share one Jacobian, so after an impulse p the velocity is cdot + w p: each row updates
// cdot analytically. Returns the total impulse for the caller to apply along the axis.
// The implicit actuators of one list (a joint's or a tendon's, through actuator_next, from
// `first`) on a row of coordinate q, velocity *cdot and inverse effective mass w: each a
// spring-damper clamped to its force range. Updates *cdot; returns the total impulse.
S2R_HD Real SolveActuatorRows(const ModelView& m, int first, Real q, Real* cdot, Real w,
                              const Real* prep, Real* act_impulse) {
  Real applied = Real(0);
  for (int i = first; i >= 0; i = m.actuator_next[i]) {
    const Real* p = prep + kActuatorPrepSize * i;
    Real gamma = p[kActPrepGamma];
    if (gamma <= Real(0)) continue;
    // total = acc - (cdot + bias_rate q + offset + gamma acc) / (w + gamma), clamped; all but the
    // cdot term is off the velocity chain
    Real acc = act_impulse[i];
    Real total;
    if (p[kActPrepExplicit] > Real(0)) {  // explicit spring: h k (u / g - q), q at the substep start
      total = Clamp(p[kActPrepOffset] - p[kActPrepExplicit] * q, p[kActPrepLo], p[kActPrepHi]);
    } else {
      Real inv_den = Real(1) / (w + gamma);
      Real base = acc - (p[kActPrepBiasRate] * q + p[kActPrepOffset] + gamma * acc) * inv_den;
      total = Clamp(base - *cdot * inv_den, p[kActPrepLo], p[kActPrepHi]);
    }
    Real imp = total - acc;
    act_impulse[i] = total;
    applied += imp;
    *cdot += w * imp;
  }
  return applied;
}

S2R_HD Real SolveAxisRows(const ModelView& m, int world, int j, Real q, Real cdot, Real w,
                          Real* impulse, Softness soft, bool use_bias, Real inv_h, Real qdot0,
                          bool armature_row, const Real* prep, Real* act_impulse) {
  Real applied = Real(0);
  const Real inv_w = Real(1) / w;
  // Force elements (actuators, armature, damping, friction loss) act in the solve pass only:
  // they are physical forces integrated implicitly over the substep, and solving them again
  // after the positions moved would look a further step ahead and over-damp them. The relax
  // pass only removes the bias velocity of the constraints (limits and locks).
  bool forces = use_bias;
  // actuators on this joint: implicit spring-dampers, clamped to their force range
  if (forces) applied += SolveActuatorRows(m, m.joint_actuator[j], q, &cdot, w, prep, act_impulse);
  // implicit rows driving cdot to `target` with compliance gamma (armature: the substep-start
  // velocity; damping: rest): d_lambda = (target - cdot - gamma acc) / (w + gamma), with the
  // cdot term last so only it is on the velocity chain
  auto implicit_row = [&](Real gamma, Real target, Real& acc) {
    Real inv_den = Real(1) / (w + gamma);
    Real imp = (target - gamma * acc) * inv_den - cdot * inv_den;
    acc += imp;
    applied += imp;
    cdot += w * imp;
  };
  const Real* jp = prep + kActuatorPrepSize * m.nactuator + kJointPrepSize * j;
  Real armature_gamma = jp[kJointPrepArmatureGamma];
  if (forces && armature_row && armature_gamma > Real(0)) {
    implicit_row(armature_gamma, qdot0, impulse[kSlotArmature]);
  }
  Real damping_gamma = jp[kJointPrepDampingGamma];
  if (forces && damping_gamma > Real(0)) implicit_row(damping_gamma, Real(0), impulse[kSlotDamping]);
  Real limit = jp[kJointPrepFrictionLimit];
  if (forces && limit > Real(0)) {
    Real& acc = impulse[kSlotFrictionLoss];
    // hard: drive cdot to 0 within the limit. Soft: the regularized row
    // cdot + ref qdot0 + reg w total = 0 (MuJoCo's force -(a0 + B qdot0) / (w + R) over the
    // substep, a0 the other forces' acceleration), within the limit
    Real reg = jp[kJointPrepFrictionReg];
    Real total = reg > Real(0)
                     ? Clamp(acc - (cdot + jp[kJointPrepFrictionRef] * qdot0 + reg * w * acc) /
                                       (w * (Real(1) + reg)),
                             -limit, limit)
                     : Clamp(acc - cdot * inv_w, -limit, limit);
    Real imp = total - acc;
    acc = total;
    applied += imp;
    cdot += w * imp;
  }
  if (m.joint_limited[j] == 1) {  // (2: a ball's cone limit, solver_coupling.h SolveBallLimit)
    const Real* range = m.joint_range.At(world) + 2 * j;
    for (int side = 0; side < 2; ++side) {
      // lower: C = q - lo >= 0; upper: C = hi - q >= 0 (row direction flipped)
      Real sign = side == 0 ? Real(1) : Real(-1);
      Real c = side == 0 ? q - range[0] : range[1] - q;
      Real bias = Real(0), mass_scale = Real(1), impulse_scale = Real(0);
      if (c > Real(0)) {
        bias = c * inv_h;
      } else if (use_bias) {
        Softness limit_soft = soft;
        const Real hertz = m.joint_limit_hertz.At(world)[j];
        if (hertz > Real(0)) {  // the joint's own limit stiffness, capped like joint_hertz
          const Real h = Real(1) / inv_h;
          limit_soft = MakeSoft(Min(hertz, Real(0.25) * inv_h), m.joint_damping_ratio.At(world)[0], h);
        }
        bias = limit_soft.bias_rate * c;
        mass_scale = limit_soft.mass_scale;
        impulse_scale = limit_soft.impulse_scale;
      }
      Real& acc = impulse[side == 0 ? kSlotLowerLimit : kSlotUpperLimit];
      Real k = mass_scale * inv_w;
      Real target = acc - k * bias - impulse_scale * acc;
      Real total = Max(target - k * (sign * cdot), Real(0));
      Real imp = sign * (total - acc);
      acc = total;
      applied += imp;
      cdot += w * imp;
    }
  }
  return applied;
}

// The frame fields a slide of a reduced tree uses: its axis (fixed for the step) and q, from the
// step-start coordinate and the bodies' displacement since (nothing in the tree rotates).
S2R_HD void ReducedJointFrame(const ReducedSet& red, int rank, const SolverBody& a,
                              const SolverBody& b, JointFrame* f) {
  f->axis = LoadVec3(red.axis + 3 * rank);
  f->q = red.q0[rank] + Dot(b.delta_pos - a.delta_pos, f->axis);
}

// One pass over the axis rows of a slide in a reduced tree: the joint velocity is its q-dot, the
// inverse effective mass (M^-1)_jj (armature is in M), and the impulse moves the whole tree
// (solver_reduced.h).
S2R_HD void SolveReducedJoint(const ModelView& m, int world, int j, const JointFrame& f,
                              Real* impulse, const ReducedSet& red, Softness soft, bool use_bias,
                              Real inv_h, Real qdot0, const Real* axis_prep, Real* act_impulse) {
  int rank = red.bodies[m.joint_body[j]].reduced;
  Real w = red.minv[rank * red.count + rank];
  Real cdot = red.qdot[rank];
  Real applied = SolveAxisRows(m, world, j, f.q, cdot, w, impulse, soft, use_bias, inv_h, qdot0,
                               false, axis_prep, act_impulse);
  if (applied != Real(0)) ReducedJointImpulse(red, rank, applied);
}

// The frame fields a joint of an articulated tree uses: its axis (the step start's, like the
// tree's Jacobian) and its current coordinate.
S2R_HD void TreeJointFrame(const TreeSet& t, int rank, JointFrame* f) {
  f->axis = LoadVec3(t.axis + 3 * rank);
  f->q = t.q[rank];
}

// One pass over the axis rows of a joint in an articulated tree: the joint velocity is its q-dot,
// the inverse effective mass (M^-1)_kk (armature is in M), and the impulse moves the whole tree.
S2R_HD void SolveTreeJoint(const ModelView& m, int world, int j, const JointFrame& f, Real* impulse,
                           const TreeSet& t, Softness soft, bool use_bias, Real inv_h, Real qdot0,
                           const Real* axis_prep, Real* act_impulse) {
  int rank = t.bodies[m.joint_body[j]].tree;
  Real w = t.minv[rank * t.count + rank];
  Real applied = SolveAxisRows(m, world, j, f.q, t.qdot[rank], w, impulse, soft, use_bias, inv_h,
                               qdot0, false, axis_prep, act_impulse);
  if (applied != Real(0)) TreeJointImpulse(t, rank, applied);
}

}  // namespace s2r
