// The observation layer of the sim-to-real gap, without rendering: what a policy would see of the
// object's pose and the effector's position, distorted the ways real perception is.
//
// Per episode (sampled once, from the episode's own Philox stream): a constant position bias of
// each observed body, and a camera-extrinsics error, a small rotation and translation of the
// observing frame applied to every observed pose. Per control step: Gaussian noise on positions
// and a small random rotation of the orientation, a dropout (the observation holds its last
// delivered value) with a probability, and an observation latency (the policy sees the
// observation of `latency_steps` control steps ago). Every draw is a function of (seed, episode,
// step), so a world's observations are as reproducible as its physics.
#pragma once

#include "kernels/distributions.h"
#include "kernels/math_types.h"

namespace s2r {

constexpr int kObsSize = 10;        // object px py pz qw qx qy qz, effector px py pz
constexpr int kMaxObsLatency = 8;   // control steps
constexpr int kObsEpisodeParams = 12;  // bias object xyz, bias effector xyz, camera rotation xyz, translation xyz

struct ObservationModel {
  Real position_noise_std = 0;      // m, per step and axis
  Real orientation_noise_std = 0;   // rad, per step and axis (a small rotation)
  Real position_bias_std = 0;       // m, per episode and axis, each observed body
  Real camera_rotation_std = 0;     // rad, per episode and axis
  Real camera_translation_std = 0;  // m, per episode and axis
  Real dropout = 0;                 // probability a step's observation holds the last one
  int32_t latency_steps = 0;        // 0..kMaxObsLatency
};

// one world's observation state for its current episode
struct ObservationState {
  Real episode[kObsEpisodeParams];   // the per-episode draws, in the order above
  Real camera[4];                    // the camera rotation error as a quaternion (from episode[6..8])
  Real history[kMaxObsLatency + 1][kObsSize];  // distorted observations, a ring by step
  Real last[kObsSize];               // the last delivered observation
  int32_t steps;                     // observations made this episode
};

// streams of the observation draws (FNV-1a of their names, like the randomized parameters')
S2R_HD uint32_t ObservationEpisodeStream() { return StreamOfName("observation.episode"); }
S2R_HD uint32_t ObservationStepStream() { return StreamOfName("observation.step"); }

// k-th uniform of draw `index` of a stream (two per Philox call), and the standard normal it maps
// to (Acklam's approximation: 1e-9 relative, plenty for noise, and no erfc per draw)
S2R_HD double UniformDraw(uint64_t seed, uint64_t episode, uint32_t stream, uint32_t index, int k) {
  U32x4 bits = RandomBits(seed, episode, stream, index);
  return k == 0 ? UniformOpen01(bits.v[0], bits.v[1]) : UniformOpen01(bits.v[2], bits.v[3]);
}
S2R_HD double NormalDraw(uint64_t seed, uint64_t episode, uint32_t stream, uint32_t index, int k) {
  return NormalQuantileApprox(UniformDraw(seed, episode, stream, index, k));
}

// A small rotation from a rotation vector (its direction the axis, its length the angle).
S2R_HD Quat SmallRotation(Vec3 v) {
  Real angle = Length(v);
  return angle > Real(1e-12) ? QuatFromAxisAngle((Real(1) / angle) * v, angle) : QuatIdentity();
}

S2R_HD void ObservationReset(const ObservationModel& om, uint64_t seed, uint64_t episode, ObservationState* os) {
  const uint32_t stream = ObservationEpisodeStream();
  const Real stds[4] = {om.position_bias_std, om.position_bias_std, om.camera_rotation_std, om.camera_translation_std};
  for (int i = 0; i < kObsEpisodeParams; ++i) {
    os->episode[i] = stds[i / 3] * Real(NormalDraw(seed, episode, stream, uint32_t(i / 2), i % 2));
  }
  StoreQuat(os->camera, SmallRotation(Vec3{os->episode[6], os->episode[7], os->episode[8]}));
  os->steps = 0;
}

// What the policy sees this control step, from the true values `truth` (kObsSize).
S2R_HD void Observe(const ObservationModel& om, uint64_t seed, uint64_t episode, const Real* truth, ObservationState* os,
                    Real* out) {
  const uint32_t stream = ObservationStepStream();
  const uint32_t step = uint32_t(os->steps);
  // the camera error and the per-episode biases
  const Quat cam = LoadQuat(os->camera);
  const Vec3 cam_t{os->episode[9], os->episode[10], os->episode[11]};
  Vec3 object = Rotate(cam, LoadVec3(truth)) + cam_t + Vec3{os->episode[0], os->episode[1], os->episode[2]};
  Quat rot = cam * LoadQuat(truth + 3);
  Vec3 effector = Rotate(cam, LoadVec3(truth + 7)) + cam_t + Vec3{os->episode[3], os->episode[4], os->episode[5]};
  // this step's noise: 9 normals and the dropout's uniform, 32-bit draws (three Philox calls, each
  // four uniforms)
  double n[9];
  double dropout_u = 0;
  for (int i = 0; i < 3; ++i) {
    U32x4 bits = RandomBits(seed, episode, stream, step * 3u + uint32_t(i));
    for (int k = 0; k < 4; ++k) {
      const int j = 4 * i + k;
      const double u = UniformOpen01From32(bits.v[k]);
      if (j < 9) n[j] = u;
      else if (j == 9) dropout_u = u;
    }
  }
  NormalQuantilesApprox(n);
  const Real sp = om.position_noise_std, so = om.orientation_noise_std;
  object += Vec3{sp * Real(n[0]), sp * Real(n[1]), sp * Real(n[2])};
  effector += Vec3{sp * Real(n[3]), sp * Real(n[4]), sp * Real(n[5])};
  rot = NormalizeQuat(rot * SmallRotation(Vec3{so * Real(n[6]), so * Real(n[7]), so * Real(n[8])}));
  Real* slot = os->history[step % (kMaxObsLatency + 1)];
  StoreVec3(slot, object);
  StoreQuat(slot + 3, rot);
  StoreVec3(slot + 7, effector);
  // latency: the observation of latency_steps ago (the first one until there is one that old)
  const int32_t delayed = os->steps >= om.latency_steps ? os->steps - om.latency_steps : 0;
  const Real* seen = os->history[delayed % (kMaxObsLatency + 1)];
  // dropout: hold the last delivered observation (the first step always delivers)
  const bool drop = os->steps > 0 && dropout_u < double(om.dropout);
  for (int i = 0; i < kObsSize; ++i) {
    out[i] = drop ? os->last[i] : seen[i];
    os->last[i] = out[i];
  }
  os->steps += 1;
}

}  // namespace s2r
