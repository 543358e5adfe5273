#include "host/sweep/sweep_config.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "host/scene/mjcf_load.h"
#include "host/scene/scene_source.h"

namespace s2r {
namespace {

// a number as a config would write it: 50, 12.5
std::string NumberText(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }


// YAML to JSON: mappings, sequences and scalars (numbers stay strings: the comparison is of what
// was written)
nlohmann::json ToJson(const YAML::Node& n) {
  if (n.IsMap()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = n.begin(); it != n.end(); ++it) out[it->first.Scalar()] = ToJson(it->second);
    return out;
  }
  if (n.IsSequence()) {
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < n.size(); ++i) out.push_back(ToJson(n[i]));
    return out;
  }
  if (n.IsScalar()) return n.Scalar();
  return nullptr;
}

StorageSpec ParseStorage(const ConfigNode& n) {
  StorageSpec s;
  if (!n.defined()) return s;
  n.CheckKeys({"chunk_steps", "shard_steps", "chunk_episodes", "compressor", "level", "checksum", "transpose",
               "policy_inputs"});
  if (n.Has("chunk_steps")) s.chunk_steps = n["chunk_steps"].Integer(1, int64_t(1) << 24);
  if (n.Has("shard_steps")) s.shard_steps = n["shard_steps"].Integer(1, int64_t(1) << 30);
  if (s.shard_steps % s.chunk_steps != 0) {
    n["shard_steps"].Fail("must be a multiple of chunk_steps (" + std::to_string(s.chunk_steps) + ")");
  }
  if (n.Has("chunk_episodes")) s.chunk_episodes = n["chunk_episodes"].Integer(1, int64_t(1) << 24);
  if (n.Has("compressor")) s.compressor = n["compressor"].Keyword({"blosc-lz4", "blosc-zstd", "zstd", "gzip", "none"});
  if (n.Has("level")) s.level = static_cast<int>(n["level"].Integer(0, 22));
  s.checksum = n["checksum"].Bool(true);
  s.transpose = n["transpose"].Bool(true);
  return s;
}

ObservationModel ParseObservation(const ConfigNode& n) {
  ObservationModel o;
  if (!n.defined()) return o;
  n.CheckKeys({"position_noise_std", "orientation_noise_std", "position_bias_std", "camera_rotation_std",
               "camera_translation_std", "dropout", "latency_steps"});
  o.position_noise_std = static_cast<Real>(n["position_noise_std"].defined() ? n["position_noise_std"].Number(0, 1) : 0);
  o.orientation_noise_std =
      static_cast<Real>(n["orientation_noise_std"].defined() ? n["orientation_noise_std"].Number(0, 1) : 0);
  o.position_bias_std = static_cast<Real>(n["position_bias_std"].defined() ? n["position_bias_std"].Number(0, 1) : 0);
  o.camera_rotation_std =
      static_cast<Real>(n["camera_rotation_std"].defined() ? n["camera_rotation_std"].Number(0, 0.5) : 0);
  o.camera_translation_std =
      static_cast<Real>(n["camera_translation_std"].defined() ? n["camera_translation_std"].Number(0, 1) : 0);
  o.dropout = static_cast<Real>(n["dropout"].defined() ? n["dropout"].Number(0, 0.99) : 0);
  o.latency_steps = n["latency_steps"].defined() ? static_cast<int32_t>(n["latency_steps"].Integer(0, kMaxObsLatency)) : 0;
  return o;
}

// `action_noise:` (kernels/action_noise.h): std, one number for every task actuator or a map of
// actuator names (the task's) to numbers, in each control's units; time_constant_s, 0 for white
ActionNoise ParseActionNoise(const ConfigNode& n, const Model& m, const TaskSetup& task) {
  ActionNoise an;
  if (!n.defined()) return an;
  n.CheckKeys({"std", "time_constant_s"});
  const ConfigNode std_node = n.Required("std");
  const TaskModel& t = task.model;
  if (std_node.IsMap()) {
    std::string driven;
    for (int i = 0; i < t.nactuator; ++i) driven += (driven.empty() ? "" : ", ") + m.actuator_name[t.actuator[i]];
    for (auto it = std_node.yaml().begin(); it != std_node.yaml().end(); ++it) {
      const std::string name = it->first.Scalar();
      int found = -1;
      for (int i = 0; i < t.nactuator; ++i) found = m.actuator_name[t.actuator[i]] == name ? i : found;
      if (found < 0) {
        std_node[name].Fail("is not an actuator the task '" + std::string(task.info->name) + "' drives (" + driven +
                            "): action noise perturbs those");
      }
      an.std[found] = static_cast<Real>(std_node[name].Number(0, 1000));
    }
  } else {
    const Real v = static_cast<Real>(std_node.Number(0, 1000));
    for (int i = 0; i < t.nactuator; ++i) an.std[i] = v;
  }
  const double tau = n["time_constant_s"].defined() ? n["time_constant_s"].Number(0, 3600) : 0.0;
  SetActionNoiseTiming(&an, t.nactuator, tau, m.control_hz);
  return an;
}

std::vector<EventSpec> ParseEvents(const ConfigNode& list, const TaskSetup& task) {
  std::vector<EventSpec> out;
  if (!list.defined()) return out;
  std::vector<ConfigNode> items = list.Items();
  if (items.size() > static_cast<size_t>(kMaxEvents)) list.Fail("at most " + std::to_string(kMaxEvents) + " events");
  for (const ConfigNode& n : items) {
    n.CheckKeys({"kind", "probability", "window_s", "magnitude"});
    EventSpec e{};
    const std::string kind = n.Required("kind").Keyword({"displace_object", "push_object", "goal_change"});
    e.kind = kind == "displace_object" ? kEventDisplaceObject : kind == "push_object" ? kEventPushObject : kEventGoalChange;
    if (e.kind == kEventGoalChange && (task.goal_param[0] < 0 || task.goal_param[1] < 0)) {
      n["kind"].Fail("task '" + std::string(task.info->name) + "' has no goal to change");
    }
    e.probability = static_cast<Real>(n.Required("probability").Number(0, 1));
    std::vector<double> window = n.Required("window_s").Numbers();
    if (window.size() != 2 || !(window[0] >= 0) || !(window[0] <= window[1])) {
      n["window_s"].Fail("must be [start, end] in s with 0 <= start <= end");
    }
    e.window_lo = static_cast<Real>(window[0]);
    e.window_hi = static_cast<Real>(window[1]);
    const ConfigNode magnitude = n.Required("magnitude");
    magnitude.CheckKeys({"distribution", "value", "low", "high", "mean", "std", "values", "weights"});
    e.magnitude = ParseDistributionNode(magnitude);
    out.push_back(e);
  }
  return out;
}

}  // namespace

// `text` is the config, `source` names it in errors, `base_dir` resolves its relative paths;
// `scene_text` (not null) is the scene's MJCF to use instead of loading `scene:`, `fits` (not
// null) the fit files to use instead of reading them
SweepConfig ParseSweepConfig(const std::string& text, const std::string& source, const std::string& base_dir,
                             const std::string* scene_text, const FitFiles* fits = nullptr) {
  SweepConfig c;
  if (fits != nullptr) c.fit_files = *fits;
  c.source = source;
  c.text = text;
  const std::string prefix = "builtin:";
  ConfigNode root = ConfigNode::Parse(text, source);
  if (!root.defined()) root.Fail("the config is empty");
  root.CheckKeys({"scene", "task", "episodes", "horizon_s", "seed", "worlds", "randomization", "observation",
                  "action_noise", "events", "store", "description"});

  // the scene: builtin:<name>, or a path relative to the config
  const ConfigNode scene = root.Required("scene");
  c.scene_source = ResolveConfigPath(base_dir, scene.String());
  try {
    c.model = scene_text != nullptr ? LoadMjcfString(*scene_text, c.scene_source) : LoadScene(c.scene_source);
    if (scene_text != nullptr) c.model.source_path = c.scene_source;
  } catch (const std::exception& e) {
    // the config's line and key first, then the scene's own error (its file, and line where the
    // fault is inside it)
    scene.Fail(e.what());
  }

  c.task = ParseTask(root.Required("task"), c.model);
  if (root.Has("episodes")) c.episodes = root["episodes"].Integer(1, int64_t(1) << 40);
  c.horizon_s = root["horizon_s"].defined() ? root["horizon_s"].Number(1e-6, 1e6) : c.horizon_s;
  const double horizon_steps = std::round(c.horizon_s * c.model.control_hz);
  if (horizon_steps < 1) root["horizon_s"].Fail("is shorter than one control step");
  if (horizon_steps > double(kMaxHorizonSteps)) {
    root["horizon_s"].Fail("is " + std::to_string(int64_t(horizon_steps)) + " control steps at the scene's " +
                           NumberText(c.model.control_hz) + " Hz; an episode has at most " +
                           std::to_string(kMaxHorizonSteps));
  }
  c.horizon_steps = static_cast<int>(horizon_steps);
  if (root.Has("seed")) c.seed = static_cast<uint64_t>(root["seed"].Integer(0, (int64_t(1) << 53)));
  if (root.Has("worlds")) c.worlds = static_cast<int>(root["worlds"].Integer(1, 1 << 20));
  c.randomization = ParseRandomization(root["randomization"], c.model, base_dir, &c.task, &c.fit_files);
  c.observation = ParseObservation(root["observation"]);
  c.action_noise = ParseActionNoise(root["action_noise"], c.model, c.task);
  c.events = ParseEvents(root["events"], c.task);
  c.storage = ParseStorage(root["store"]);
  c.record_policy_inputs = root.Has("store") && root["store"]["policy_inputs"].Bool(false);
  c.canonical = ToJson(root.yaml());
  return c;
}

SweepConfig LoadSweepConfig(const std::string& source) {
  const std::string prefix = "builtin:";
  if (source.compare(0, prefix.size(), prefix) == 0) {
    const std::string name = source.substr(prefix.size());
    std::string known;
    for (const EmbeddedSweep& s : EmbeddedSweeps()) {
      if (name == s.name) return ParseSweepConfig(s.yaml, source, ".", nullptr);
      known += (known.empty() ? "" : ", ") + std::string(s.name);
    }
    throw ConfigError("unknown built-in sweep " + Quote(name) + " (built-in sweeps: " + known + ")");
  }
  std::ifstream in(source, std::ios::binary);
  if (!in) throw ConfigError(source + ": cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseSweepConfig(text.str(), source, ConfigDir(source), nullptr);
}

SweepConfig LoadSweepConfigFromStore(const DatasetReader& store) {
  const nlohmann::json& gen = store.root_attributes()["s2r"]["generator"];
  if (gen.value("command", "") != "s2r sweep" || !gen.contains("config_text") || !gen.contains("scene_text")) {
    throw ConfigError(store.path() + ": was not written by s2r sweep (no config in its generator record)");
  }
  const std::string source = gen.value("config_source", std::string("stored config"));
  const std::string scene_text = gen["scene_text"].get<std::string>();
  const std::string prefix = "builtin:";
  const std::string base_dir = source.compare(0, prefix.size(), prefix) == 0 ? "." : ConfigDir(source);
  FitFiles fits;  // stores written before fit files were kept have none: those are read
  if (gen.contains("fit_files") && gen["fit_files"].is_object()) {
    for (auto it = gen["fit_files"].begin(); it != gen["fit_files"].end(); ++it) {
      if (it.value().is_string()) fits[it.key()] = it.value().get<std::string>();
    }
  }
  return ParseSweepConfig(gen["config_text"].get<std::string>(), store.path() + " (config " + source + ")", base_dir,
                          &scene_text, &fits);
}

std::string FirstDifference(const nlohmann::json& a, const nlohmann::json& b, const std::string& path) {
  if (a.is_number() && b.is_number()) {
    return a.get<double>() == b.get<double>() ? "" : (path.empty() ? "(document)" : path);
  }
  if (a.type() != b.type()) return path.empty() ? "(document)" : path;
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      const std::string p = path.empty() ? it.key() : path + "." + it.key();
      if (!b.contains(it.key())) return p;
      std::string d = FirstDifference(it.value(), b[it.key()], p);
      if (!d.empty()) return d;
    }
    for (auto it = b.begin(); it != b.end(); ++it) {
      if (!a.contains(it.key())) return path.empty() ? it.key() : path + "." + it.key();
    }
    return "";
  }
  if (a.is_array()) {
    for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
      const std::string p = path + "[" + std::to_string(i) + "]";
      if (i >= a.size() || i >= b.size()) return p;
      std::string d = FirstDifference(a[i], b[i], p);
      if (!d.empty()) return d;
    }
    return "";
  }
  return a == b ? "" : (path.empty() ? "(document)" : path);
}

}  // namespace s2r
