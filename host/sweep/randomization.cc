#include "host/sweep/randomization.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include <Eigen/Geometry>

#include "host/engine.h"
#include "kernels/math_types.h"

namespace s2r {
namespace {

std::string Quote(const std::string& s) { return "'" + s + "'"; }

std::string Num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

bool ValidName(const std::string& s) {
  if (s.empty() || s[0] == '.' || s.compare(0, 2, "__") == 0) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  }
  return true;
}

// a target: an address of docs/fields.md, <quaternion field>[entities].yaw, or task.<parameter>
RandomTarget ResolveTarget(const ConfigNode& at, const std::string& text, const Model& model, const TaskSetup* task) {
  RandomTarget t;
  t.text = text;
  if (text.compare(0, 5, "task.") == 0) {
    if (task == nullptr) at.Fail(Quote(text) + ": the config has no task");
    t.task_param = TaskParamIndex(*task->info, text.substr(5));
    if (t.task_param < 0) {
      std::string names;
      for (const TaskParamInfo& p : task->info->params) names += (names.empty() ? "" : ", ") + std::string(p.name);
      at.Fail(Quote(text) + ": task " + Quote(task->info->name) + " has no such parameter (" + names + ")");
    }
    return t;
  }
  std::string address = text;
  const std::string kYaw = ".yaw";
  if (address.size() > kYaw.size() && address.compare(address.size() - kYaw.size(), kYaw.size(), kYaw) == 0) {
    t.yaw = true;
    address = address.substr(0, address.size() - kYaw.size());
  }
  try {
    t.address = ResolveFieldAddress(model, address);
  } catch (const std::invalid_argument& e) {
    at.Fail(e.what());
  }
  const FieldInfo& f = FieldInfoOf(t.address.field);
  if (t.yaw && (f.bound != FieldBound::kUnitQuat || t.address.component >= 0)) {
    at.Fail(Quote(text) + ": '.yaw' applies to a whole orientation (body_quat0[...], geom_quat[...])");
  }
  if (!t.yaw && f.bound == FieldBound::kUnitQuat) {
    at.Fail(Quote(text) + ": an orientation is randomized by its yaw: write '" + address + ".yaw'");
  }
  // a body's start pose and velocity place free and static bodies only: a body on a joint starts
  // where its joints' joint_qpos0 / joint_qvel0 put it (ResetWorld), a floating base on its
  // slides and ball, so randomizing its body_pos0 would change nothing. A floating base's yaw
  // turns its ball's start angles instead (Randomizer::Apply).
  const FieldId id = t.address.field;
  if (id == FieldId::body_pos0 || id == FieldId::body_quat0 || id == FieldId::body_linvel0 ||
      id == FieldId::body_angvel0) {
    for (size_t n = 0; n < t.address.entities.size(); ++n) {
      const int b = t.address.entities[n];
      const int j = model.body_joint[b];
      if (j < 0 || model.joint_type[j] == kJointFree) continue;
      const bool floating = model.joint_part[j] == 3 && j >= 5 && model.joint_part[j - 5] == 4;
      if (floating && id == FieldId::body_quat0 && t.yaw) {
        if (t.floating.empty()) t.floating.assign(t.address.entities.size(), -1);
        t.floating[n] = j - 2;  // the ball's hinge about x
        continue;
      }
      std::string instead;
      if (floating) {
        instead = "it is a floating base, started by its free joint's slides and ball: randomize joint_qpos0[" +
                  model.joint_name[j - 5] + ", " + model.joint_name[j - 4] + ", " + model.joint_name[j - 3] +
                  "] (offsets from this position) or joint_qvel0, and its orientation by body_quat0[" +
                  model.body_name[b] + "].yaw";
      } else {
        instead = "it hangs on joint " + Quote(model.joint_name[j]) + ", which places it: randomize joint_qpos0[" +
                  model.joint_name[j] + "] or joint_qvel0[" + model.joint_name[j] + "]";
      }
      at.Fail(Quote(text) + ": " + FieldInfoOf(id).name + " starts free and static bodies only, and body " +
              Quote(model.body_name[b]) + " would not move: " + instead);
    }
  }
  return t;
}

// `centred`: the entry has a `fit:`, which supplies the numbers the distribution's keys would
Distribution ParseDistribution(const ConfigNode& n, const std::string& kind, bool centred) {
  auto number = [&](const char* key) { return centred && !n.Has(key) ? 0.0 : n.Required(key).Number(); };
  Distribution d{};
  if (kind == "fixed") {
    d.kind = kDistFixed;
    d.a = number("value");
  } else if (kind == "uniform" || kind == "loguniform") {
    d.kind = kind == "uniform" ? kDistUniform : kDistLogUniform;
    d.a = number("low");
    d.b = number("high");
  } else if (kind == "normal" || kind == "truncnormal") {
    d.kind = kind == "normal" ? kDistNormal : kDistTruncNormal;
    d.a = number("mean");
    d.b = number("std");
    if (kind == "truncnormal") {
      d.lo = number("low");
      d.hi = number("high");
    }
  } else {
    d.kind = kDistChoice;
    std::vector<double> values = n.Required("values").Numbers();
    if (values.empty() || values.size() > static_cast<size_t>(kMaxChoices)) {
      n.Required("values").Fail("needs 1 to " + std::to_string(kMaxChoices) + " values, got " +
                                std::to_string(values.size()));
    }
    std::vector<double> weights(values.size(), 1.0);
    if (n.Has("weights")) {
      weights = n["weights"].Numbers();
      if (weights.size() != values.size()) {
        n["weights"].Fail("needs one weight per value (" + std::to_string(values.size()) + "), got " +
                          std::to_string(weights.size()));
      }
    }
    d.nchoices = static_cast<int32_t>(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      d.choices[i] = values[i];
      d.weights[i] = weights[i];
    }
  }
  return d;
}

std::string ReadFitText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open fit file");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// `fit: {file, parameter, k}`: the distribution is centred on the fit's value, its width set by
// the fit's standard deviation (docs/sweep.md)
void CentreOnFit(const ConfigNode& fit, RandomParam* p, const std::string& base_dir, FitFiles* fits) {
  fit.CheckKeys({"file", "parameter", "k"});
  const std::string written = fit.Required("file").String();
  std::string file = written;
  if (!file.empty() && file[0] != '/' && !base_dir.empty()) file = base_dir + "/" + file;
  const std::string wanted = fit["parameter"].String(p->name);
  const double k = fit["k"].defined() ? fit["k"].Number(0, 100) : 2.0;
  std::vector<FitParameter> entries;
  try {
    if (fits != nullptr && fits->count(written) != 0) {
      entries = ParseFitText(fits->at(written), file + " (as stored)");
    } else {
      const std::string text = ReadFitText(file);
      entries = ParseFitText(text, file);
      if (fits != nullptr) (*fits)[written] = text;
    }
  } catch (const ConfigError& e) {
    fit.Required("file").Fail(e.what());
  }
  const FitParameter* found = nullptr;
  for (const FitParameter& e : entries) {
    if (e.name == wanted) found = &e;
  }
  if (found == nullptr) fit.Fail("fit file " + Quote(file) + " has no parameter " + Quote(wanted));
  std::vector<std::string> ours;
  for (const RandomTarget& t : p->targets) ours.push_back(t.text);
  if (found->targets != ours) {
    fit.Fail("fit parameter " + Quote(wanted) + " was fitted on other targets than this entry's");
  }
  if (p->mode != RandomMode::kAbsolute) fit.Fail("a fit gives absolute values: use mode: absolute");
  Distribution& d = p->distribution;
  const double v = found->value, s = found->std;
  switch (d.kind) {
    case kDistUniform: d.a = v - k * s; d.b = v + k * s; break;
    case kDistNormal: d.a = v; d.b = s; break;
    case kDistTruncNormal: d.a = v; d.b = s; d.lo = v - k * s; d.hi = v + k * s; break;
    case kDistFixed: d.a = v; break;
    default: fit.Fail("a fit centres fixed, uniform, normal and truncnormal distributions only");
  }
  p->fit_source = file + ":" + wanted;
}

// what the sample means for one target element, given the scene's value there
double TargetValue(RandomMode mode, double nominal, double sample, bool integer) {
  double v = mode == RandomMode::kScale ? nominal * sample : mode == RandomMode::kOffset ? nominal + sample : sample;
  return integer ? std::floor(v + 0.5) : v;
}

// Both ends of the support, applied to every target element, must lie within the field's bound.
void CheckSupport(const ConfigNode& at, const RandomParam& p, const Model& model, const TaskSetup* task) {
  double lo = 0, hi = 0;
  DistributionSupport(p.distribution, &lo, &hi);
  for (const RandomTarget& t : p.targets) {
    if (t.task_param >= 0) {
      const TaskParamInfo& info = task->info->params[t.task_param];
      if (info.bound == TaskParamBound::kAny) continue;
      for (double end : {lo, hi}) {
        double v = TargetValue(p.mode, task->params[t.task_param], end, false);
        if (!TaskParamAllows(info.bound, v)) {
          at.Fail(Quote(t.text) + " must be " + TaskParamBoundText(info.bound) + ", and the sample " + Num(end) +
                  " (an end of the distribution's support) makes it " + Num(v));
        }
      }
      continue;
    }
    const FieldInfo& f = FieldInfoOf(t.address.field);
    if (t.yaw) continue;  // any angle is an orientation
    const bool unbounded = !std::isfinite(lo) || !std::isfinite(hi);
    if (unbounded && f.bound != FieldBound::kFinite) {
      at.Fail(Quote(t.text) + " must be " + BoundText(f) +
              ", which an unbounded (normal) distribution can leave: use truncnormal");
    }
    if (unbounded) continue;
    std::vector<double> nominal(FieldValuesPerWorld(model, t.address.field));
    ForEachParam(model, [&](FieldId id, const auto& values) {
      if (id == t.address.field) std::copy(values.begin(), values.end(), nominal.begin());
    });
    for (double end : {lo, hi}) {
      std::vector<double> block = nominal;
      for (int e : t.address.elements) {
        block[e] = p.mode == RandomMode::kScale ? nominal[e] * end
                   : p.mode == RandomMode::kOffset ? nominal[e] + end
                                                   : end;
        if (f.type == FieldType::kInt32) block[e] = std::floor(block[e] + 0.5);
      }
      std::string error = FieldValuesError(model, t.address.field, block.data());
      if (!error.empty()) {
        at.Fail("the sample " + Num(end) + " (an end of the distribution's support) breaks a bound: " + error);
      }
    }
  }
}

}  // namespace

std::vector<FitParameter> ReadFitFile(const std::string& path) { return ParseFitText(ReadFitText(path), path); }

std::vector<FitParameter> ParseFitText(const std::string& text, const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(path + ": malformed JSON: " + e.what());
  }
  if (!j.is_object() || !j.contains("parameters") || !j["parameters"].is_array()) {
    throw ConfigError(path + ": a fit file is {\"parameters\": [{\"name\", \"targets\", \"value\", \"std\"}, ...]}");
  }
  std::vector<FitParameter> out;
  for (size_t i = 0; i < j["parameters"].size(); ++i) {
    const nlohmann::json& e = j["parameters"][i];
    const std::string where = path + ": parameters[" + std::to_string(i) + "]";
    FitParameter p;
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) throw ConfigError(where + ": needs a string 'name'");
    p.name = e["name"];
    if (!e.contains("targets") || !e["targets"].is_array()) throw ConfigError(where + ": needs a list 'targets'");
    for (const auto& t : e["targets"]) {
      if (!t.is_string()) throw ConfigError(where + ".targets: every target is a string");
      p.targets.push_back(t);
    }
    if (e.contains("identifiable") && e["identifiable"].is_boolean() && !e["identifiable"].get<bool>()) {
      std::string partner = e.contains("partner") && e["partner"].is_string() ? e["partner"].get<std::string>() : "";
      throw ConfigError(where + " (" + p.name + "): the fit could not identify it" +
                        (partner.empty() ? std::string("") : " (it trades off against " + partner + ")") +
                        "; fix it, or fit it with more informative data, before centring on it");
    }
    for (const char* key : {"value", "std"}) {
      if (!e.contains(key) || !e[key].is_number() || !std::isfinite(e[key].get<double>())) {
        throw ConfigError(where + ": needs a finite number '" + key + "'");
      }
    }
    p.value = e["value"];
    p.std = e["std"];
    if (p.std < 0) throw ConfigError(where + ".std: must be >= 0, got " + Num(p.std));
    out.push_back(p);
  }
  return out;
}

RandomizationSpec ParseRandomization(const ConfigNode& list, const Model& model, const std::string& base_dir,
                                     const TaskSetup* task, FitFiles* fits) {
  RandomizationSpec spec;
  if (!list.defined()) return spec;
  std::map<std::pair<int, int>, std::string> owner;  // (field, element) -> parameter
  for (const ConfigNode& n : list.Items()) {
    n.CheckKeys({"name", "targets", "mode", "distribution", "value", "low", "high", "mean", "std", "values",
                 "weights", "scale_inertia", "fit", "units", "description"});
    RandomParam p;
    p.name = n.Required("name").String();
    if (!ValidName(p.name)) n["name"].Fail("must match [A-Za-z0-9_.-]+ (it names the dataset column), got " + Quote(p.name));
    for (const RandomParam& q : spec.params) {
      if (q.name == p.name) n["name"].Fail("duplicate parameter name " + Quote(p.name));
    }
    const ConfigNode targets = n.Required("targets");
    for (const std::string& text : targets.Strings()) p.targets.push_back(ResolveTarget(targets, text, model, task));
    if (p.targets.empty()) targets.Fail("needs at least one target");
    const std::string mode = n["mode"].defined() ? n["mode"].Keyword({"absolute", "scale", "offset"}) : "absolute";
    p.mode = mode == "scale" ? RandomMode::kScale : mode == "offset" ? RandomMode::kOffset : RandomMode::kAbsolute;
    const std::string kind = n.Required("distribution").Keyword({"fixed", "uniform", "loguniform", "normal",
                                                                 "truncnormal", "choice"});
    p.distribution = ParseDistribution(n, kind, n.Has("fit"));
    if (n.Has("fit")) CentreOnFit(n["fit"], &p, base_dir, fits);
    if (const char* error = DistributionError(p.distribution)) n["distribution"].Fail(error);
    p.scale_inertia = n["scale_inertia"].Bool(true);
    if (n.Has("scale_inertia") && (p.mode != RandomMode::kScale)) {
      n["scale_inertia"].Fail("applies to mode: scale only");
    }
    for (const RandomTarget& t : p.targets) {
      if (t.yaw && p.mode == RandomMode::kScale) targets.Fail(Quote(t.text) + ": a yaw is absolute or an offset, not a scale");
      std::vector<int> elements = t.address.elements;
      if (t.task_param >= 0) elements = {t.task_param};
      for (int e : elements) {
        auto key = std::make_pair(t.task_param >= 0 ? -1 : static_cast<int>(t.address.field), e);
        auto it = owner.find(key);
        if (it != owner.end()) targets.Fail(Quote(t.text) + " overlaps the targets of parameter " + Quote(it->second));
        owner[key] = p.name;
      }
    }
    CheckSupport(n, p, model, task);
    const RandomTarget& first = p.targets[0];
    const std::string unit = first.task_param >= 0 ? task->info->params[first.task_param].unit
                                                   : FieldInfoOf(first.address.field).unit;
    p.units = n["units"].String(first.yaw ? "rad" : p.mode == RandomMode::kScale ? "1" : unit);
    p.description = n["description"].String("");
    p.stream = StreamOfName(p.name.c_str());
    spec.params.push_back(p);
  }
  return spec;
}

Distribution ParseDistributionNode(const ConfigNode& n) {
  const std::string kind = n.Required("distribution").Keyword({"fixed", "uniform", "loguniform", "normal",
                                                               "truncnormal", "choice"});
  Distribution d = ParseDistribution(n, kind, false);
  if (const char* error = DistributionError(d)) n["distribution"].Fail(error);
  return d;
}

double SampleParam(const RandomParam& p, uint64_t seed, uint64_t episode) {
  return SampleDistribution(p.distribution, RandomBits(seed, episode, p.stream, 0));
}

Randomizer::Randomizer(const RandomizationSpec& spec, const Model& model, int nworld, uint64_t seed,
                       const std::vector<double>& task_params)
    : spec_(spec), model_(model), nworld_(nworld), seed_(seed), ntask_(static_cast<int>(task_params.size())),
      task_nominal_(task_params) {
  task_values_.resize(static_cast<size_t>(nworld_) * ntask_);
  for (int w = 0; w < nworld_; ++w) {
    for (int i = 0; i < ntask_; ++i) task_values_[static_cast<size_t>(w) * ntask_ + i] = static_cast<Real>(task_params[i]);
  }
  // every field a parameter writes, at the scene's values in every world (created here, so the
  // references Values() hands out stay valid)
  for (const RandomParam& p : spec_.params) {
    for (const RandomTarget& t : p.targets) {
      if (t.task_param >= 0) continue;
      Values(t.address.field);
      if (p.mode == RandomMode::kScale && p.scale_inertia && t.address.field == FieldId::body_mass) {
        Values(FieldId::body_inertia);
      }
      if (!t.floating.empty()) {  // TurnFloatingBase
        Values(FieldId::joint_qpos0);
        Values(FieldId::joint_qvel0);
      }
    }
  }
}

Randomizer::FieldValues& Randomizer::Values(FieldId field) {
  for (FieldValues& v : fields_) {
    if (v.field == field) return v;
  }
  FieldValues v;
  v.field = field;
  v.whole = ResolveFieldAddress(model_, FieldInfoOf(field).name);
  v.per_world = FieldValuesPerWorld(model_, field);
  ForEachParam(model_, [&](FieldId id, const auto& values) {
    if (id == field) v.nominal.assign(values.begin(), values.end());
  });
  v.values.resize(static_cast<size_t>(nworld_) * v.per_world);
  for (int w = 0; w < nworld_; ++w) std::copy(v.nominal.begin(), v.nominal.end(), v.values.begin() + w * v.per_world);
  fields_.push_back(std::move(v));
  return fields_.back();
}

// A floating base's start orientation is its reference (body_quat0) turned by its ball's start
// angles (joint_qpos0 of the ball's three hinges, Model::ApplyKeyframe): a yaw of x about world z
// (added to the scene's orientation, or replacing it) becomes new angles, and its ball's rates are
// set for the same angular velocity in the base's frame (the rates depend on the angles).
void Randomizer::TurnFloatingBase(RandomMode mode, double x, int body, int ball, int world) {
  FieldValues& qpos = Values(FieldId::joint_qpos0);
  FieldValues& qvel = Values(FieldId::joint_qvel0);
  const Real* r = model_.body_quat0.data() + 4 * body;
  const Eigen::Quaterniond ref = Eigen::Quaterniond(double(r[0]), double(r[1]), double(r[2]), double(r[3])).normalized();
  const double* angles0 = qpos.nominal.data() + ball;
  double rel0[4];
  Model::BallRotation(angles0, rel0);
  const Eigen::Quaterniond turn(Eigen::AngleAxisd(x, Eigen::Vector3d::UnitZ()));
  const Eigen::Quaterniond turned =
      mode == RandomMode::kOffset ? turn * ref * Eigen::Quaterniond(rel0[0], rel0[1], rel0[2], rel0[3]) : turn;
  const Eigen::Quaterniond rel = ref.conjugate() * turned;
  const double q[4] = {rel.w(), rel.x(), rel.y(), rel.z()};
  double angles[3], w[3], rates[3];
  Model::BallAngles(q, angles);
  Model::BallVelocity(angles0, qvel.nominal.data() + ball, w);
  double* qpos_row = qpos.values.data() + static_cast<size_t>(world) * qpos.per_world;
  double* qvel_row = qvel.values.data() + static_cast<size_t>(world) * qvel.per_world;
  for (int k = 0; k < 3; ++k) qpos_row[ball + k] = angles[k];
  if (Model::BallRates(angles, w, rates)) {
    for (int k = 0; k < 3; ++k) qvel_row[ball + k] = rates[k];
  }
}

void Randomizer::Apply(Engine* engine, const std::vector<int32_t>& worlds, const std::vector<int64_t>& episodes,
                       std::vector<double>* samples) {
  if (samples != nullptr) samples->assign(worlds.size() * spec_.params.size(), 0.0);
  // the worlds' task parameters start from the configured ones (an event may have changed them
  // during the world's previous episode)
  for (int32_t w : worlds) {
    for (int i = 0; i < ntask_; ++i) task_values_[static_cast<size_t>(w) * ntask_ + i] = static_cast<Real>(task_nominal_[i]);
  }
  for (size_t k = 0; k < spec_.params.size(); ++k) {
    const RandomParam& p = spec_.params[k];
    for (size_t i = 0; i < worlds.size(); ++i) {
      const int w = worlds[i];
      const double x = SampleParam(p, seed_, static_cast<uint64_t>(episodes[i]));
      if (samples != nullptr) (*samples)[i * spec_.params.size() + k] = x;
      for (const RandomTarget& t : p.targets) {
        if (t.task_param >= 0) {
          task_values_[static_cast<size_t>(w) * ntask_ + t.task_param] =
              static_cast<Real>(TargetValue(p.mode, task_nominal_[t.task_param], x, false));
          continue;
        }
        FieldValues& fv = Values(t.address.field);
        double* row = fv.values.data() + static_cast<size_t>(w) * fv.per_world;
        const bool integer = FieldInfoOf(t.address.field).type == FieldType::kInt32;
        if (t.yaw) {
          // the scene's orientation turned about world z by the sample (offset) or replaced by a
          // pure yaw (absolute)
          const Quat turn = QuatFromAxisAngle(Vec3{0, 0, 1}, static_cast<Real>(x));
          for (size_t n = 0; n < t.address.entities.size(); ++n) {
            const int e = t.address.entities[n];
            if (!t.floating.empty() && t.floating[n] >= 0) {
              TurnFloatingBase(p.mode, x, e, t.floating[n], w);
              continue;
            }
            const double* q0 = fv.nominal.data() + 4 * e;
            Quat q = p.mode == RandomMode::kOffset
                         ? NormalizeQuat(turn * Quat{Real(q0[0]), Real(q0[1]), Real(q0[2]), Real(q0[3])})
                         : turn;
            row[4 * e] = q.w, row[4 * e + 1] = q.x, row[4 * e + 2] = q.y, row[4 * e + 3] = q.z;
          }
          continue;
        }
        for (int e : t.address.elements) row[e] = TargetValue(p.mode, fv.nominal[e], x, integer);
        // a scaled mass scales the inertia of the same bodies
        if (p.mode == RandomMode::kScale && p.scale_inertia && t.address.field == FieldId::body_mass) {
          FieldValues& inertia = Values(FieldId::body_inertia);
          double* irow = inertia.values.data() + static_cast<size_t>(w) * inertia.per_world;
          for (int b : t.address.entities) {
            for (int c = 0; c < 3; ++c) irow[3 * b + c] = inertia.nominal[3 * b + c] * x;
          }
        }
      }
    }
  }
  // one SetParamForWorlds per randomized field: the listed worlds' rows
  for (const FieldValues& fv : fields_) {
    std::vector<Real> rows;
    rows.reserve(worlds.size() * fv.per_world);
    for (int32_t w : worlds) {
      const double* row = fv.values.data() + static_cast<size_t>(w) * fv.per_world;
      rows.insert(rows.end(), row, row + fv.per_world);
    }
    engine->SetParamForWorlds(fv.whole, worlds, rows);
  }
}

}  // namespace s2r
