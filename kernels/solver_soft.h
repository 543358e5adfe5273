// Soft constraints (Box2D v3 "soft step", carried to 3D).
//
// A constraint C(x) = 0 is treated as a damped spring of natural frequency `hertz` and damping
// ratio `zeta`, integrated implicitly over the substep h. With omega = 2 pi hertz:
//   a1 = 2 zeta + h omega,  a2 = h omega a1,  a3 = 1 / (1 + a2)
//   bias_rate = omega / a1,  mass_scale = a2 a3,  impulse_scale = a3
// and one Gauss-Seidel update of the accumulated impulse lambda is
//   d_lambda = -m_eff mass_scale (Cdot + bias_rate C) - impulse_scale lambda.
// A stiff (rigid) constraint is the limit hertz -> infinity. The "relax" pass after position
// integration uses mass_scale = 1, impulse_scale = 0, no bias: it removes the velocity the bias
// added, so position correction never turns into kinetic energy (Catto, "Solver2D", 2024).
//
// The same algebra gives an implicit spring-damper with physical stiffness k and damping c
// (a position actuator, joint damping): see MakeSpringDamper.
#pragma once

#include "kernels/base.h"

namespace s2r {

struct Softness {
  Real bias_rate;      // 1/s
  Real mass_scale;     // dimensionless
  Real impulse_scale;  // dimensionless
};

S2R_HD Softness MakeSoft(Real hertz, Real zeta, Real h) {
  if (hertz <= Real(0)) return Softness{Real(0), Real(1), Real(0)};
  Real omega = Real(2) * kPi * hertz;
  Real a1 = Real(2) * zeta + h * omega;
  Real a2 = h * omega * a1;
  Real a3 = Real(1) / (Real(1) + a2);
  return Softness{omega / a1, a2 * a3, a3};
}

// Implicit spring-damper f = -k C_mid - c Cdot' over a step h, where Cdot' is the velocity at the
// step's end and C_mid = C + (h/2) Cdot' the position midway through the step (trapezoidal in
// position: an undamped spring keeps its energy at any step, where backward Euler's C + h Cdot'
// would add numerical damping of about omega h / 2). In "CFM/ERP" form one update is
//   d_lambda = -(Cdot + bias_rate C + gamma lambda) / (w + gamma)
// with w the constraint's inverse effective mass. gamma <= 0 marks an inactive row.
struct SpringDamper {
  Real bias_rate;  // k / (c + h k / 2), 1/s
  Real gamma;      // 1 / (h (c + h k / 2)), compliance per step
};

S2R_HD SpringDamper MakeSpringDamper(Real stiffness, Real damping, Real h) {
  Real d = damping + Real(0.5) * h * stiffness;
  if (d <= Real(0)) return SpringDamper{Real(0), Real(-1)};
  return SpringDamper{stiffness / d, Real(1) / (h * d)};
}

}  // namespace s2r
