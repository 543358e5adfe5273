// A policy network evaluated inside the sweep's per-world step (`s2r sweep --policy-net FILE`):
// a multilayer perceptron from a world's policy inputs (the SweepPolicyRow a policy process would
// be sent) to its actions, so that a trained policy runs where the physics runs -- on the device
// with CUDA, several control steps per launch, no host round trip -- instead of in a process the
// host talks to each step (host/sweep/policy.h).
//
//   x  = concat of the chosen input blocks (obs, task_params, joints, target, last_action), float32
//   x  = clamp((x - input_mean) / input_std, -input_clip, input_clip)      (each optional)
//   h  = act(W_l h + b_l) for the hidden layers, out_act(W_L h + b_L) for the last
//   a  = h * action_scale + action_bias                                     (each optional)
//
// Everything is float32, as a policy process computes. Each output's sum runs over its inputs in
// order (j = 0, 1, ...), starting from the bias, so the CPU's result is the one a sequential
// float32 evaluation gives (NumPy's `acc = acc + W[:, j] * x[j]` loop); the device fuses each
// multiply-add (one rounding instead of two), so its actions differ from the CPU's by rounding.
// The weights are stored transposed (W_l^T: in x out, row-major) so the CPU's loop over outputs
// is contiguous (it vectorizes); the device loops over outputs in register tiles, every thread of
// a warp reading the same weight (a broadcast).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/base.h"

namespace s2r {

constexpr int kNetMaxLayers = 8;    // weight layers
constexpr int kNetMaxWidth = 256;   // widest hidden layer
constexpr int kNetMaxInputs = 64;   // inputs (the policy row has 10 + 16 + 8 + 3, the last action nactuator)
constexpr int kNetMaxOutputs = 32;  // outputs: the actions
constexpr int kNetInputBlocks = 5;  // obs, task_params, joints, target, last_action

enum NetActivation : int32_t {
  kNetLinear = 0,
  kNetRelu = 1,
  kNetTanh = 2,
  kNetElu = 3,
};

enum NetInputBlock : int32_t {
  kNetInputObs = 0,
  kNetInputTaskParams = 1,
  kNetInputJoints = 2,
  kNetInputTarget = 3,
  kNetInputLastAction = 4,  // the world's actions in its last step (the network's own; zeros at the episode's start)
};

// The network as the step reads it; `params` is in the stepping backend's memory (host or device).
struct PolicyNet {
  int32_t nlayer = 0;                      // weight layers; 0: no network
  int32_t width[kNetMaxLayers + 1] = {};   // width[0]: inputs, width[nlayer]: outputs (the actions)
  int32_t activation = kNetLinear;         // of the hidden layers
  int32_t output_activation = kNetLinear;  // of the last layer
  int32_t ninput = 0;                      // input blocks, in the order they are concatenated
  int32_t input[kNetInputBlocks] = {};     // NetInputBlock
  int32_t input_size[kNetInputBlocks] = {};  // each block's values (the first input_size[k] of it)
  float input_clip = 0;                    // > 0: normalized inputs clamped to +-input_clip
  // offsets into params (floats): each layer's transposed weights (width[l] x width[l+1]) and
  // bias (width[l+1]); the optional vectors (-1: absent)
  int64_t weight[kNetMaxLayers] = {}, bias[kNetMaxLayers] = {};
  int64_t input_mean = -1, input_std = -1, action_scale = -1, action_bias = -1;
  int64_t nparams = 0;
  const float* params = nullptr;
};

S2R_HD float NetActivate(int32_t kind, float v) {
  switch (kind) {
    case kNetRelu:
      return v > 0.0f ? v : 0.0f;
    case kNetTanh:
      return tanhf(v);
    case kNetElu:
      return v > 0.0f ? v : expm1f(v);
    default:
      return v;
  }
}

// One layer: y = W^T' x + b for `in` inputs and `out` outputs (wt: in x out), then the activation.
S2R_HD void NetLayer(const float* wt, const float* b, int in, int out, int32_t activation, const float* x, float* y) {
#ifdef __CUDA_ARCH__
  // a tile of outputs in registers: x is read once per tile, not once per output
  constexpr int kTile = 8;
  for (int o0 = 0; o0 < out; o0 += kTile) {
    float acc[kTile];
#pragma unroll
    for (int t = 0; t < kTile; ++t) acc[t] = o0 + t < out ? b[o0 + t] : 0.0f;
    for (int j = 0; j < in; ++j) {
      const float xj = x[j];
      const float* row = wt + static_cast<int64_t>(j) * out + o0;
#pragma unroll
      for (int t = 0; t < kTile; ++t) {
        if (o0 + t < out) acc[t] += row[t] * xj;
      }
    }
#pragma unroll
    for (int t = 0; t < kTile; ++t) {
      if (o0 + t < out) y[o0 + t] = NetActivate(activation, acc[t]);
    }
  }
#else
  for (int o = 0; o < out; ++o) y[o] = b[o];
  for (int j = 0; j < in; ++j) {
    const float xj = x[j];
    const float* row = wt + static_cast<int64_t>(j) * out;
    for (int o = 0; o < out; ++o) y[o] += row[o] * xj;
  }
  if (activation != kNetLinear) {
    for (int o = 0; o < out; ++o) y[o] = NetActivate(activation, y[o]);
  }
#endif
}

// The widest hidden layer (the ping-pong buffers' stride: NetForward's `hidden`); 0 without one.
S2R_HD int NetHiddenWidth(const PolicyNet& net) {
  int h = 0;
  for (int l = 1; l < net.nlayer; ++l) h = net.width[l] > h ? net.width[l] : h;
  return h;
}

// The network's actions for inputs `x` (width[0] values, overwritten): `out` gets width[nlayer].
// `scratch` holds 2 * `hidden` floats, hidden >= NetHiddenWidth(net) (kNetMaxWidth: any network).
S2R_HD void NetForward(const PolicyNet& net, float* x, float* scratch, float* out, int hidden = kNetMaxWidth) {
  const float* p = net.params;
  const int n0 = net.width[0];
  if (net.input_mean >= 0 || net.input_std >= 0 || net.input_clip > 0) {
    for (int j = 0; j < n0; ++j) {
      float v = x[j];
      if (net.input_mean >= 0) v = v - p[net.input_mean + j];
      if (net.input_std >= 0) v = v / p[net.input_std + j];
      if (net.input_clip > 0) v = v < -net.input_clip ? -net.input_clip : (v > net.input_clip ? net.input_clip : v);
      x[j] = v;
    }
  }
  const float* in = x;
  for (int l = 0; l < net.nlayer; ++l) {
    float* y = l + 1 == net.nlayer ? out : scratch + (l % 2) * hidden;
    NetLayer(p + net.weight[l], p + net.bias[l], net.width[l], net.width[l + 1],
             l + 1 == net.nlayer ? net.output_activation : net.activation, in, y);
    in = y;
  }
  const int na = net.width[net.nlayer];
  for (int o = 0; o < na; ++o) {
    float v = out[o];
    if (net.action_scale >= 0) v = v * p[net.action_scale + o];
    if (net.action_bias >= 0) v = v + p[net.action_bias + o];
    out[o] = v;
  }
}

}  // namespace s2r
