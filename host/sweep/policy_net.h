// A policy network from a NumPy .npz file, for `s2r sweep --policy-net FILE` (docs/sweep.md
// *A policy network in the step*): read, checked against the sweep's task, and laid out for the
// per-world step (kernels/policy_net.h PolicyNet).
//
// The file (np.savez or np.savez_compressed) holds float arrays, torch's nn.Linear convention:
//   layer0.weight (out, in), layer0.bias (out), layer1.weight, ... (the layers in order)
//   activation         string: relu, tanh, elu or linear (the hidden layers'; needed with 2+ layers)
//   output_activation  string (optional, default linear)
//   inputs             strings (optional): which of obs, task_params, joints, target, in order;
//                      default: all the task has, in that order (what a policy process is sent)
//   input_mean, input_std (in), input_clip (a scalar), action_scale, action_bias (the actions):
//                      optional
// Anything else in the file is an error (a misspelt key would otherwise be ignored silently).
// Errors are NetError, naming the file and the array.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "host/sweep/npz.h"
#include "kernels/policy_net.h"

namespace s2r {

struct SweepConfig;

class NetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A network ready for the step: `view()` points into `params`.
struct PolicyNetFile {
  std::string source;   // the file as given
  std::string sha256;   // of its bytes
  PolicyNet net;        // its params pointer is set by view()
  std::vector<float> params;
  std::vector<std::string> inputs;  // the input blocks' names, in order
  PolicyNet view() const {
    PolicyNet n = net;
    n.params = params.data();
    return n;
  }
  // What a store records of it (generator.sweep.policy_net): file, sha256, layers (widths),
  // activation, output_activation, inputs.
  nlohmann::json Describe() const;
};

// Builds the network from its arrays for the sweep's task; `source` names it in errors.
PolicyNetFile BuildPolicyNet(const std::map<std::string, NpyArray>& arrays, const std::string& source,
                             const SweepConfig& config);

// Reads `path` and builds its network for the sweep's task.
PolicyNetFile LoadPolicyNet(const std::string& path, const SweepConfig& config);

// The activation's name, and back (-1: unknown).
const char* NetActivationName(int32_t activation);
int32_t NetActivationFromName(const std::string& name);

}  // namespace s2r
