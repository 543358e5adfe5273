// Domain randomization: which engine parameters a sweep samples per episode, from what
// distribution, and how a sample becomes per-world parameter values.
//
// A randomized parameter (one entry of a sweep config's `randomization:` list, docs/sweep.md) has
// a name (its column `episodes/params/<name>` in the dataset), one or more targets addressed as in
// docs/fields.md (`body_mass[box]`, `geom_friction[box, floor]`, `actuator_kp[*]`, `gravity.z`,
// and `body_quat0[box].yaw` for a rotation about the world's z axis), a distribution
// (kernels/distributions.h) and a mode: the sample is the value (absolute), multiplies the
// scene's value (scale) or is added to it (offset). One sample drives every target, which is how
// shared friction or mirrored fingers are randomized. A scaled body_mass scales the same bodies'
// body_inertia too unless `scale_inertia: false`.
//
// Reproducibility: the sample of parameter p in episode e of a sweep with seed s is
//   SampleDistribution(p.distribution, RandomBits(s, e, StreamOfName(p.name), 0))
// -- Philox 4x32 keyed by the seed, counting over (episode, stream) -- so it depends on nothing
// else: not on the world that runs the episode, the world count, the thread count, the shard, or
// the other parameters of the config.
//
// Checks at load: every target exists and is a per-world parameter, no element is the target of
// two parameters, the distribution is valid (a truncation that excludes the whole support is an
// error), and both ends of its support, applied to every target, lie within the field's bound
// (kernels/model_fields.h): a mass that could reach 0, or a normal distribution on a friction,
// is rejected naming the key, not discovered mid-sweep.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "host/scene/fields.h"
#include "host/scene/model.h"
#include "host/sweep/config_yaml.h"
#include "host/sweep/task_setup.h"
#include "kernels/distributions.h"

namespace s2r {

class Engine;

enum class RandomMode { kAbsolute, kScale, kOffset };

struct RandomTarget {
  std::string text;       // as written
  FieldAddress address;   // resolved; for a yaw target, the quaternions' whole entities
  bool yaw = false;       // rotate the scene's orientation about world z by the sample (rad)
  // a yaw target's entities that are floating bases: the first joint of the ball that turns each
  // (its joint_qpos0 / joint_qvel0 take the turn), -1 for a free or static body; empty if none
  std::vector<int> floating;
  int task_param = -1;    // `task.<name>`: index into the task's parameters (address unused)
};

struct RandomParam {
  std::string name;                    // [A-Za-z0-9_.-]+
  std::vector<RandomTarget> targets;
  Distribution distribution{};
  RandomMode mode = RandomMode::kAbsolute;
  bool scale_inertia = true;           // scale mode on body_mass: body_inertia follows
  uint32_t stream = 0;                 // StreamOfName(name)
  std::string units;                   // of the sample: the field's unit, "1" in scale mode
  std::string description;
  std::string fit_source;              // "fit.json:parameter" when centred on a fit, else ""
};

struct RandomizationSpec {
  std::vector<RandomParam> params;
};

// A fit file's entry (docs/sweep.md, "Centring on a fit"): what system identification found.
struct FitParameter {
  std::string name;
  std::vector<std::string> targets;
  double value = 0;
  double std = 0;  // standard deviation, >= 0
};
// Reads `{"parameters": [{"name", "targets", "value", "std"}, ...]}`; throws ConfigError naming
// the file and the entry on anything else.
std::vector<FitParameter> ReadFitFile(const std::string& path);
// The same from the file's text; `path` names it in errors.
std::vector<FitParameter> ParseFitText(const std::string& text, const std::string& path);

// The fit files a randomization centres on: `fit.file` as the config writes it -> the file's text.
// A sweep stores them, so a replay centres on what the sweep read, whatever the files say now.
using FitFiles = std::map<std::string, std::string>;

// Parses a config's `randomization:` list against the model and, for `task.<name>` targets, the
// task (null: none); see the file comment for the checks. `base_dir` resolves relative fit-file
// paths. With `fits`, a fit file named in it is taken from it instead of read, and a file read is
// added to it.
RandomizationSpec ParseRandomization(const ConfigNode& list, const Model& model, const std::string& base_dir,
                                     const TaskSetup* task = nullptr, FitFiles* fits = nullptr);

// A distribution given as `distribution: <kind>` and its keys (docs/sweep.md) in mapping `n`,
// checked (DistributionError names what is wrong).
Distribution ParseDistributionNode(const ConfigNode& n);

// The sample of `p` in episode `episode` of a sweep seeded with `seed`.
double SampleParam(const RandomParam& p, uint64_t seed, uint64_t episode);

// Applies the samples of given episodes to given worlds of an engine. It keeps every randomized
// field's per-world values, so starting new episodes in a few worlds rewrites only their rows
// (then one Engine::SetParamForWorlds per randomized field). `model` must outlive it.
class Randomizer {
 public:
  // `task_params`: the task's configured parameters (empty without a task)
  Randomizer(const RandomizationSpec& spec, const Model& model, int nworld, uint64_t seed,
             const std::vector<double>& task_params = {});

  // Worlds `worlds[i]` get episode `episodes[i]`'s samples; `samples` (optional) receives them,
  // params.size() per world in spec order.
  void Apply(Engine* engine, const std::vector<int32_t>& worlds, const std::vector<int64_t>& episodes,
             std::vector<double>* samples = nullptr);
  // world w's task parameters (the configured ones with its episode's samples applied)
  const Real* TaskParams(int world) const { return task_values_.data() + static_cast<size_t>(world) * ntask_; }
  // the same, for an event that changes them mid-episode (a goal change)
  Real* MutableTaskParams(int world) { return task_values_.data() + static_cast<size_t>(world) * ntask_; }

 private:
  struct FieldValues {
    FieldId field;
    FieldAddress whole;           // the whole field's address
    int per_world;
    std::vector<double> nominal;  // the scene's values
    std::vector<double> values;   // (nworld, per_world)
  };
  FieldValues& Values(FieldId field);
  // a yaw of `x` for floating base `body` (ball: its ball's first joint) in world `world`
  void TurnFloatingBase(RandomMode mode, double x, int body, int ball, int world);

  RandomizationSpec spec_;
  const Model& model_;
  int nworld_;
  uint64_t seed_;
  std::vector<FieldValues> fields_;
  int ntask_ = 0;
  std::vector<double> task_nominal_;
  std::vector<Real> task_values_;  // (nworld, ntask_)
};

}  // namespace s2r
