#include "host/sweep/policy_net.h"

#include <cmath>
#include <cstring>
#include <cerrno>
#include <fstream>
#include <set>

#include "host/store/sha256.h"
#include "host/sweep/npz.h"
#include "host/sweep/sweep_config.h"

namespace s2r {

const char* NetActivationName(int32_t activation) {
  switch (activation) {
    case kNetRelu:
      return "relu";
    case kNetTanh:
      return "tanh";
    case kNetElu:
      return "elu";
    default:
      return "linear";
  }
}

int32_t NetActivationFromName(const std::string& name) {
  for (int32_t k : {kNetLinear, kNetRelu, kNetTanh, kNetElu}) {
    if (name == NetActivationName(k)) return k;
  }
  return -1;
}

nlohmann::json PolicyNetFile::Describe() const {
  std::vector<int> layers(net.width, net.width + net.nlayer + 1);
  return {{"file", source},
          {"sha256", sha256},
          {"layers", layers},
          {"activation", NetActivationName(net.activation)},
          {"output_activation", NetActivationName(net.output_activation)},
          {"inputs", inputs}};
}

PolicyNetFile BuildPolicyNet(const std::map<std::string, NpyArray>& arrays, const std::string& source,
                             const SweepConfig& c) {
  PolicyNetFile f;
  f.source = source;
  PolicyNet& net = f.net;
  std::set<std::string> used;
  auto find = [&](const std::string& key) -> const NpyArray* {
    auto it = arrays.find(key);
    if (it == arrays.end()) return nullptr;
    used.insert(key);
    return &it->second;
  };
  auto numbers = [&](const std::string& key, const NpyArray& a) {
    if (a.is_string) throw NetError(source + ": " + key + ": holds strings, expected numbers");
    for (size_t i = 0; i < a.values.size(); ++i) {
      if (!std::isfinite(a.values[i])) {
        throw NetError(source + ": " + key + ": element " + std::to_string(i) + " is not finite (in float32)");
      }
    }
  };
  auto text = [&](const std::string& key, const NpyArray& a) -> std::vector<std::string> {
    if (!a.is_string) throw NetError(source + ": " + key + ": expected a string array (np.array('tanh'))");
    return a.strings;
  };

  // the input blocks: what the task sends a policy process
  const TaskModel& t = c.task.model;
  const std::map<std::string, std::pair<int32_t, int32_t>> blocks = {
      {"obs", {kNetInputObs, kObsSize}},
      {"task_params", {kNetInputTaskParams, static_cast<int32_t>(c.task.params.size())}},
      {"joints", {kNetInputJoints, t.nactuator}},
      {"target", {kNetInputTarget, t.target_body >= 0 ? 3 : 0}},
      {"last_action", {kNetInputLastAction, c.model.nactuator()}}};
  std::vector<std::string> inputs;
  if (const NpyArray* a = find("inputs")) {
    inputs = text("inputs", *a);
    if (inputs.empty()) throw NetError(source + ": inputs: empty");
  } else {
    inputs = {"obs", "task_params", "joints"};
    if (t.target_body >= 0) inputs.push_back("target");
  }
  int n0 = 0;
  std::string sizes;
  for (const std::string& name : inputs) {
    auto it = blocks.find(name);
    if (it == blocks.end()) {
      throw NetError(source + ": inputs: '" + name + "' is not one of obs, task_params, joints, target, last_action");
    }
    if (net.ninput == kNetInputBlocks) throw NetError(source + ": inputs: at most 5 blocks");
    for (int k = 0; k < net.ninput; ++k) {
      if (net.input[k] == it->second.first) throw NetError(source + ": inputs: '" + name + "' twice");
    }
    if (it->second.second == 0) {
      throw NetError(source + ": inputs: task " + c.task.info->name + " has no " + name);
    }
    net.input[net.ninput] = it->second.first;
    net.input_size[net.ninput] = it->second.second;
    ++net.ninput;
    n0 += it->second.second;
    sizes += (sizes.empty() ? "" : " + ") + name + " " + std::to_string(it->second.second);
  }
  f.inputs = inputs;

  // the layers
  int nlayer = 0;
  while (arrays.count("layer" + std::to_string(nlayer) + ".weight")) ++nlayer;
  if (nlayer == 0) throw NetError(source + ": no layer0.weight (the first layer's (out, in) weights)");
  if (nlayer > kNetMaxLayers) {
    throw NetError(source + ": " + std::to_string(nlayer) + " layers; at most " + std::to_string(kNetMaxLayers));
  }
  const int na = c.model.nactuator();
  net.nlayer = nlayer;
  net.width[0] = n0;
  if (n0 > kNetMaxInputs) throw NetError(source + ": " + std::to_string(n0) + " inputs; at most " + std::to_string(kNetMaxInputs));
  std::vector<float>& p = f.params;
  for (int l = 0; l < nlayer; ++l) {
    const std::string wk = "layer" + std::to_string(l) + ".weight", bk = "layer" + std::to_string(l) + ".bias";
    const NpyArray& w = *find(wk);
    numbers(wk, w);
    const int in = net.width[l];
    if (w.shape.size() != 2 || w.shape[1] != in) {
      const std::string why = l == 0 ? "the inputs (" + sizes + ") are " + std::to_string(in)
                                     : "layer" + std::to_string(l - 1) + " has " + std::to_string(in) + " outputs";
      throw NetError(source + ": " + wk + ": shape " + NpyShapeText(w.shape) + "; expected (out, " + std::to_string(in) +
                     "): " + why);
    }
    const int64_t out = w.shape[0];
    const bool last = l + 1 == nlayer;
    if (last && out != na) {
      throw NetError(source + ": " + wk + ": " + std::to_string(out) + " outputs; the task's actions are " +
                     std::to_string(na));
    }
    if (out < 1 || out > (last ? kNetMaxOutputs : kNetMaxWidth)) {
      throw NetError(source + ": " + wk + ": " + std::to_string(out) + " outputs; at most " +
                     std::to_string(last ? kNetMaxOutputs : kNetMaxWidth));
    }
    net.width[l + 1] = static_cast<int32_t>(out);
    net.weight[l] = static_cast<int64_t>(p.size());
    for (int j = 0; j < in; ++j) {  // transposed: in x out
      for (int64_t o = 0; o < out; ++o) p.push_back(w.values[size_t(o * in + j)]);
    }
    net.bias[l] = static_cast<int64_t>(p.size());
    if (const NpyArray* bias = find(bk)) {
      numbers(bk, *bias);
      if (bias->shape.size() != 1 || bias->shape[0] != out) {
        throw NetError(source + ": " + bk + ": shape " + NpyShapeText(bias->shape) + "; expected (" + std::to_string(out) + ",)");
      }
      p.insert(p.end(), bias->values.begin(), bias->values.end());
    } else {
      p.insert(p.end(), size_t(out), 0.0f);
    }
  }
  auto activation = [&](const std::string& key, int32_t fallback, bool required) {
    const NpyArray* a = find(key);
    if (!a) {
      if (required) {
        throw NetError(source + ": no '" + key + "' (relu, tanh, elu or linear) for its " + std::to_string(nlayer - 1) +
                       " hidden layer(s): np.savez(..., " + key + "=np.array('tanh'))");
      }
      return fallback;
    }
    const std::vector<std::string> s = text(key, *a);
    const int32_t k = s.size() == 1 ? NetActivationFromName(s[0]) : -1;
    if (k < 0) throw NetError(source + ": " + key + ": '" + (s.empty() ? "" : s[0]) + "' is not relu, tanh, elu or linear");
    return k;
  };
  net.activation = activation("activation", kNetLinear, nlayer > 1);
  net.output_activation = activation("output_activation", kNetLinear, false);

  // normalization and scaling
  auto vector = [&](const std::string& key, int64_t n, int64_t* offset) {
    const NpyArray* a = find(key);
    if (!a) return;
    numbers(key, *a);
    if (a->shape.size() != 1 || a->shape[0] != n) {
      throw NetError(source + ": " + key + ": shape " + NpyShapeText(a->shape) + "; expected (" + std::to_string(n) + ",)");
    }
    *offset = static_cast<int64_t>(p.size());
    p.insert(p.end(), a->values.begin(), a->values.end());
  };
  vector("input_mean", n0, &net.input_mean);
  vector("input_std", n0, &net.input_std);
  if (net.input_std >= 0) {
    for (int j = 0; j < n0; ++j) {
      if (!(p[size_t(net.input_std + j)] > 0)) {
        throw NetError(source + ": input_std: element " + std::to_string(j) + " is not > 0");
      }
    }
  }
  vector("action_scale", na, &net.action_scale);
  vector("action_bias", na, &net.action_bias);
  if (const NpyArray* a = find("input_clip")) {
    numbers("input_clip", *a);
    if (a->size() != 1 || !(a->values[0] > 0)) throw NetError(source + ": input_clip: expected one number > 0");
    net.input_clip = a->values[0];
  }
  for (const auto& [key, a] : arrays) {
    if (!used.count(key)) {
      if (key.rfind("layer", 0) == 0) {
        throw NetError(source + ": '" + key + "': the layers are layer0 .. layer" + std::to_string(nlayer - 1) +
                       " (numbered from 0 without gaps, each with a .weight)");
      }
      throw NetError(source + ": '" + key +
                     "' is not an array a policy network has (layerN.weight, layerN.bias, activation, "
                     "output_activation, inputs, input_mean, input_std, input_clip, action_scale, action_bias)");
    }
  }
  net.nparams = static_cast<int64_t>(p.size());
  return f;
}

PolicyNetFile LoadPolicyNet(const std::string& path, const SweepConfig& c) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NetError(path + ": cannot open the policy network (" + std::strerror(errno) + ")");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw NetError(path + ": cannot read the policy network");
  PolicyNetFile f = BuildPolicyNet(ReadNpz(bytes, path), path, c);
  f.sha256 = Sha256Hex(bytes.data(), bytes.size());
  return f;
}

}  // namespace s2r
