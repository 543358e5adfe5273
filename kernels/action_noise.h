// Noise on the actions a world executes (sweep config `action_noise`, docs/sweep.md): a
// perturbation of whoever acts, added to the task's actuators before the step. With the task's
// expert acting it is DART-style data collection (Laskey et al. 2017): the episodes wander off the
// expert's own path, and the expert's clean action at each step is the label
// (steps/expert_action), so that a cloned policy sees how to recover from states its own errors
// lead to. With a policy acting it is an actuation error the policy has to tolerate.
//
// Per task actuator i and control step k of an episode, in the actuator's control units:
//   e_0 = std_i z_0,   e_k = keep e_(k-1) + fresh std_i z_k,   keep = exp(-dt / time_constant),
//   fresh = sqrt(1 - keep^2)
// an AR(1) (a sampled Ornstein-Uhlenbeck process) whose every step has the standard deviation
// std_i; time_constant 0 makes it white (keep 0). z are standard normals drawn from (seed,
// episode, step): the same on every backend, whatever the batch.
#pragma once

#include "kernels/distributions.h"
#include "kernels/random.h"
#include "kernels/task.h"

namespace s2r {

struct ActionNoise {
  Real std[kTaskMaxActuators] = {};  // per task actuator (TaskModel order), the control's units
  Real keep = 0;                     // AR(1) coefficient per control step (0: white)
  Real fresh = 1;                    // sqrt(1 - keep^2)
  int32_t active = 0;                // some std > 0
  Real time_constant_s = 0;          // s, as configured (keep is what the step reads)
};

S2R_HD uint32_t ActionNoiseStream() { return StreamOfName("action.noise"); }

// The noise's time constant (s; 0: white) at control_hz control steps per second: sets keep and
// fresh from it, and `active` from the std already set for the task's `nactuator` actuators (the
// config's parser and the tests set a noise through this alone)
inline void SetActionNoiseTiming(ActionNoise* an, int nactuator, double time_constant_s, double control_hz) {
  const double keep = time_constant_s > 0 ? exp(-1.0 / (control_hz * time_constant_s)) : 0.0;
  an->time_constant_s = static_cast<Real>(time_constant_s);
  an->keep = static_cast<Real>(keep);
  an->fresh = static_cast<Real>(sqrt(1.0 - keep * keep));
  an->active = 0;
  for (int i = 0; i < nactuator; ++i) an->active = an->active || an->std[i] > Real(0);
}

// Adds control step `step`'s noise of episode `episode` to the task's actuators of `act` (the
// world's actuator vector). `e` (kTaskMaxActuators) is the world's noise of its last step, which
// this replaces (read only after step 0: the process starts stationary). A call of its own on the
// device, taken only where the config has noise: inlined into the step kernels it cost them
// registers whether or not a sweep had noise (docs/gpu.md, stop 48).
S2R_HD_NOINLINE void ApplyActionNoise(const ActionNoise& an, const TaskModel& t, uint64_t seed, uint64_t episode,
                                      int32_t step, Real* e, Real* act) {
  const uint32_t stream = ActionNoiseStream();
  U32x4 bits{};
  // one actuator at a time, not unrolled (on the GPU, where it shares the step kernel's registers:
  // each unrolled copy of the quantile's tail would hold its own)
#ifdef __CUDA_ARCH__
#pragma unroll 1
#endif
  for (int i = 0; i < t.nactuator; ++i) {
    const int k = i & 3;  // four normals per Philox call, two calls at most
    if (k == 0) bits = RandomBits(seed, episode, stream, uint32_t(step) * 2u + uint32_t(i >> 2));
    const uint32_t u = k == 0 ? bits.v[0] : k == 1 ? bits.v[1] : k == 2 ? bits.v[2] : bits.v[3];
    const Real z = static_cast<Real>(NormalQuantileApprox(UniformOpen01From32(u)));
    const Real v = step == 0 ? an.std[i] * z : an.keep * e[i] + an.fresh * an.std[i] * z;
    e[i] = v;
    act[t.actuator[i]] += v;
  }
}

}  // namespace s2r
