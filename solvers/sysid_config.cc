#include "solvers/sysid_config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <cstring>

#include "host/engine.h"
#include "host/scene/scene_source.h"
#include "host/store/dataset.h"
#include "host/trajectory_io.h"

namespace s2r {
namespace {

std::string Quote(const std::string& s) { return "'" + s + "'"; }

// a time in seconds as the messages print it: 0.02, 2e-09, 200000
std::string Seconds(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}


struct MeasureName {
  const char* name;
  MeasureKind kind;
  Entity entity;
  const char* components;  // "" for scalars
};
constexpr MeasureName kMeasureNames[] = {
    {"body_pos", kMeasureBodyPos, Entity::kBody, "x y z"},
    {"body_quat", kMeasureBodyQuat, Entity::kBody, "w x y z"},
    {"body_linvel", kMeasureBodyLinvel, Entity::kBody, "x y z"},
    {"body_angvel", kMeasureBodyAngvel, Entity::kBody, "x y z"},
    {"joint_qpos", kMeasureJointQpos, Entity::kJoint, ""},
    {"joint_qvel", kMeasureJointQvel, Entity::kJoint, ""},
    {"site_pos", kMeasureSitePos, Entity::kSite, "x y z"},
};

std::vector<std::string> Words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

SysidParameter ParseParameter(const ConfigNode& n, const Model& model) {
  n.CheckKeys({"name", "targets", "initial", "bounds", "scale", "prior", "scale_inertia", "fd_step"});
  SysidParameter p;
  p.name = n.Required("name").String();
  const ConfigNode targets = n.Required("targets");
  p.targets = targets.Strings();
  if (p.targets.empty()) targets.Fail("needs at least one target");
  for (const std::string& t : p.targets) {
    if (t == "latency") {
      if (p.targets.size() != 1) targets.Fail("'latency' is a parameter of its own: no other targets with it");
      p.latency = true;
      continue;
    }
    FieldAddress a;
    try {
      a = ResolveFieldAddress(model, t);
    } catch (const std::invalid_argument& e) {
      targets.Fail(e.what());
    }
    const FieldInfo& f = kModelFields[static_cast<int>(a.field)];
    if (f.type != FieldType::kReal) {
      targets.Fail(Quote(t) + " is an integer field; the one integer parameter sysid fits is the action delay: "
                   "targets: [latency] (in s)");
    }
    if (f.bound == FieldBound::kUnitQuat || f.bound == FieldBound::kOrdered) {
      if (a.component < 0) targets.Fail(Quote(t) + ": name one component (" + f.components + ")");
    }
    p.addresses.push_back(a);
  }
  const ConfigNode bounds = n.Required("bounds");
  std::vector<double> b = bounds.Numbers();
  if (b.size() != 2 || !(b[0] < b[1])) bounds.Fail("must be [lo, hi] with lo < hi");
  p.lo = b[0];
  p.hi = b[1];
  if (n.Has("scale")) p.log_scale = n["scale"].Keyword({"linear", "log"}) == "log";
  if (p.log_scale && !(p.lo > 0)) bounds.Fail("a log-scale parameter needs bounds > 0");
  p.initial = n.Required("initial").Number();
  if (p.initial < p.lo || p.initial > p.hi) {
    n["initial"].Fail("the initial value " + std::to_string(p.initial) + " lies outside the bounds [" +
                      std::to_string(p.lo) + ", " + std::to_string(p.hi) + "]");
  }
  if (p.latency && p.lo < 0) bounds.Fail("a delay is >= 0 s");
  // the bounds must be values every target accepts
  for (size_t i = 0; i < p.addresses.size(); ++i) {
    const FieldInfo& f = kModelFields[static_cast<int>(p.addresses[i].field)];
    for (double v : {p.lo, p.hi}) {
      bool ok = WithinScalarBound(f, v);
      if (f.bound == FieldBound::kMovingPositive) ok = ok && v > 0;
      if (!ok) bounds.Fail(Quote(p.targets[i]) + " must be " + BoundText(f) + ", and the bound " + std::to_string(v) + " is not");
    }
  }
  if (n.Has("prior")) {
    const ConfigNode prior = n["prior"];
    prior.CheckKeys({"mean", "std"});
    p.has_prior = true;
    p.prior_mean = prior.Required("mean").Number();
    p.prior_std = prior.Required("std").Number();
    if (!(p.prior_std > 0)) prior["std"].Fail("must be > 0");
  }
  p.scale_inertia = n["scale_inertia"].Bool(true);
  if (n.Has("fd_step")) p.fd_step = n["fd_step"].Number(1e-8, 0.1);
  return p;
}

Recording ReadRecording(const std::string& path, const SysidConfig& c, const std::vector<std::string>& ignore,
                        bool held_out) {
  CsvTable t = ReadCsvTable(path, "recording");
  auto fail = [&](int line, const std::string& what) -> void {
    throw ConfigError(path + ":" + std::to_string(line) + ": " + what);
  };
  std::vector<int> used(t.header.size(), 0);
  auto column = [&](const std::string& name, const std::string& role) {
    int col = t.Column(name);
    if (col < 0) fail(t.header_line, "missing column " + Quote(name) + " (" + role + ")");
    used[col] = 1;
    return col;
  };
  const int time_col = column(c.time_column, "the time");
  std::vector<int> action_col, signal_col;
  for (const auto& a : c.actions) action_col.push_back(column(a.second, "the command of actuator " + Quote(c.model.actuator_name[a.first])));
  for (const SysidSignal& s : c.signals) signal_col.push_back(column(s.column, "the recorded " + s.quantity));
  for (size_t col = 0; col < t.header.size(); ++col) {
    if (used[col] || std::find(ignore.begin(), ignore.end(), t.header[col]) != ignore.end()) continue;
    fail(t.header_line, "column " + std::to_string(col + 1) + " " + Quote(t.header[col]) +
                            " is neither the time, an action nor an observation (list it under data.ignore_columns "
                            "to skip it)");
  }
  Recording r;
  r.file = path;
  r.held_out = held_out;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const std::vector<double>& row = t.rows[i];
    if (!r.time.empty() && !(row[time_col] > r.time.back())) {
      fail(t.lines[i], "column " + Quote(c.time_column) + ": time must increase, got " + std::to_string(row[time_col]) +
                           " after " + std::to_string(r.time.back()));
    }
    r.time.push_back(row[time_col]);
    std::vector<double> act(c.model.nactuator(), 0.0);
    for (size_t k = 0; k < c.actions.size(); ++k) act[c.actions[k].first] = row[action_col[k]];
    std::vector<double> sig(c.signals.size());
    for (size_t k = 0; k < c.signals.size(); ++k) sig[k] = row[signal_col[k]];
    r.action.push_back(std::move(act));
    r.signal.push_back(std::move(sig));
    r.line.push_back(t.lines[i]);
  }
  if (r.time.size() < 3) fail(t.header_line, "a recording needs at least 3 samples, got " + std::to_string(r.time.size()));
  // a fixed rate: every interval within 1% of the mean (irregular recordings are rejected, not
  // resampled: resampling would invent commands and observations between the samples)
  const double period = (r.time.back() - r.time.front()) / double(r.time.size() - 1);
  for (size_t i = 1; i < r.time.size(); ++i) {
    const double dt = r.time[i] - r.time[i - 1];
    if (std::abs(dt - period) > 0.01 * period) {
      fail(r.line[i], "column " + Quote(c.time_column) + ": irregular sampling, an interval of " + Seconds(dt) +
                          " s where the recording's mean is " + Seconds(period) +
                          " s; resample the recording to a fixed rate");
    }
  }
  return r;
}

// The values of a float feature's rows as doubles (float32 or float64 in the store).
std::vector<double> FeatureRows(const DatasetReader& r, const std::string& name, int64_t start, int64_t count) {
  DataType type = DataType::kFloat32;
  for (const FeatureSpec& f : r.spec().features) {
    if (f.name == name) type = f.dtype;
  }
  const std::vector<uint8_t> bytes = r.StepRows(name, start, count);
  std::vector<double> out;
  if (type == DataType::kFloat64) {
    out.resize(bytes.size() / 8);
    std::memcpy(out.data(), bytes.data(), out.size() * 8);
  } else {
    std::vector<float> f(bytes.size() / 4);
    std::memcpy(f.data(), bytes.data(), f.size() * 4);
    out.assign(f.begin(), f.end());
  }
  return out;
}

// Episodes of an s2r dataset store (a sweep's): steps/state row k is the moving bodies' state
// before control step k, steps/action row k its action, so they line up with a CSV recording's
// rows. Every observed quantity is computed from the stored body states.
std::vector<Recording> ReadStoreEpisodes(const std::string& path, const ConfigNode& at, const std::vector<int64_t>& wanted,
                                         bool held_out, const SysidConfig& c) {
  DatasetReader r(path);
  const Model& m = c.model;
  std::vector<int> moving;
  for (int b = 1; b < m.nbody(); ++b) {
    if (m.body_dynamic[b]) moving.push_back(b);
  }
  const FeatureSpec* state = nullptr;
  const FeatureSpec* action = nullptr;
  for (const FeatureSpec& f : r.spec().features) {
    if (f.name == "state") state = &f;
    if (f.name == "action") action = &f;
  }
  if (state == nullptr || action == nullptr || state->shape.size() != 2 || state->shape[1] != 13) {
    at.Fail(path + ": not a sweep's store (it needs steps/state [bodies, 13] and steps/action)");
  }
  if (state->shape[0] != static_cast<int64_t>(moving.size()) || action->shape.size() != 1 ||
      action->shape[0] != m.nactuator()) {
    at.Fail(path + ": recorded " + std::to_string(state->shape[0]) + " moving bodies and " +
            std::to_string(action->shape.empty() ? 0 : action->shape[0]) + " actuators, but the config's scene has " +
            std::to_string(moving.size()) + " and " + std::to_string(m.nactuator()) + ": not the same scene");
  }
  const std::vector<uint64_t> seeds = r.EpisodeSeeds();
  const std::vector<int64_t> starts = r.EpisodeStarts(), lengths = r.EpisodeLengths();
  EngineOptions eo;
  eo.threads = 1;
  Engine e(m, eo);
  e.Reset();  // static bodies in place; the moving ones are overwritten per row
  const StateView& s = e.mutable_state().view;
  const double period = 1.0 / m.control_hz;
  std::vector<Recording> out;
  for (int64_t episode : wanted) {
    size_t i = 0;
    while (i < seeds.size() && seeds[i] != static_cast<uint64_t>(episode)) ++i;
    if (i == seeds.size()) {
      at.Fail(path + " holds no episode " + std::to_string(episode) + " (" + std::to_string(seeds.size()) +
              " committed episodes)");
    }
    if (lengths[i] < 3) at.Fail(path + ": episode " + std::to_string(episode) + " has fewer than 3 steps");
    const std::vector<double> st = FeatureRows(r, "state", starts[i], lengths[i]);
    const std::vector<double> ac = FeatureRows(r, "action", starts[i], lengths[i]);
    Recording rec;
    rec.file = path + "#episode=" + std::to_string(episode);
    rec.held_out = held_out;
    for (int64_t k = 0; k < lengths[i]; ++k) {
      for (size_t j = 0; j < moving.size(); ++j) {
        const double* row = st.data() + (size_t(k) * moving.size() + j) * 13;
        const int b = moving[j];
        for (int q = 0; q < 3; ++q) s.body_pos(0, b)[q] = static_cast<Real>(row[q]);
        for (int q = 0; q < 4; ++q) s.body_quat(0, b)[q] = static_cast<Real>(row[3 + q]);
        for (int q = 0; q < 3; ++q) s.body_linvel(0, b)[q] = static_cast<Real>(row[7 + q]);
        for (int q = 0; q < 3; ++q) s.body_angvel(0, b)[q] = static_cast<Real>(row[10 + q]);
      }
      std::vector<double> sig, rate;
      for (const SysidSignal& g : c.signals) {
        sig.push_back(static_cast<double>(Measured(e.view(), s, 0, g.measure)));
        Measure d = g.measure;  // the quantity's rate, where the stored state holds one
        d.kind = g.measure.kind == kMeasureJointQpos  ? kMeasureJointQvel
                 : g.measure.kind == kMeasureBodyPos  ? kMeasureBodyLinvel
                 : g.measure.kind == kMeasureBodyQuat ? kMeasureBodyAngvel
                                                      : -1;
        if (g.measure.kind == kMeasureBodyQuat) d.component = g.measure.component - 1;  // w: none
        rate.push_back(d.kind < 0 || d.component < 0 ? std::nan("")
                                                     : static_cast<double>(Measured(e.view(), s, 0, d)));
      }
      rec.time.push_back(double(k) * period);
      rec.action.emplace_back(ac.begin() + size_t(k) * m.nactuator(), ac.begin() + size_t(k + 1) * m.nactuator());
      rec.signal.push_back(std::move(sig));
      rec.rate.push_back(std::move(rate));
      rec.line.push_back(static_cast<int>(k));  // the step within the episode
    }
    out.push_back(std::move(rec));
  }
  return out;
}

}  // namespace

Measure ParseMeasure(const Model& m, const std::string& text) {
  const size_t open = text.find('[');
  const size_t close = text.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    throw std::invalid_argument(Quote(text) + ": a recorded quantity reads <kind>[<entity>] or <kind>[<entity>].<component>");
  }
  const std::string kind = text.substr(0, open);
  const std::string entity = text.substr(open + 1, close - open - 1);
  std::string component;
  if (close + 1 < text.size()) {
    if (text[close + 1] != '.') throw std::invalid_argument(Quote(text) + ": expected '.<component>' after ']'");
    component = text.substr(close + 2);
  }
  const MeasureName* found = nullptr;
  std::string kinds;
  for (const MeasureName& n : kMeasureNames) {
    if (kind == n.name) found = &n;
    kinds += (kinds.empty() ? "" : ", ") + std::string(n.name);
  }
  if (found == nullptr) throw std::invalid_argument(Quote(text) + ": unknown quantity " + Quote(kind) + " (one of " + kinds + ")");
  Measure q;
  q.kind = found->kind;
  const std::vector<std::string>* names = nullptr;
  switch (found->entity) {
    case Entity::kBody: q.index = m.BodyId(entity); names = &m.body_name; break;
    case Entity::kJoint: q.index = m.JointId(entity); names = &m.joint_name; break;
    default: q.index = m.SiteId(entity); names = &m.site_name; break;
  }
  if (q.index < 0 || (found->entity == Entity::kBody && q.index == 0)) {
    std::string known;
    for (size_t i = found->entity == Entity::kBody ? 1 : 0; i < names->size(); ++i) {
      known += (known.empty() ? "" : ", ") + (*names)[i];
    }
    throw std::invalid_argument(Quote(text) + ": the scene has no " + EntityName(found->entity) + " " + Quote(entity) +
                                " (" + (known.empty() ? std::string("none") : known) + ")");
  }
  if (found->entity == Entity::kJoint) {
    const int type = m.joint_type[q.index];
    if (type != kJointHinge && type != kJointSlide) {
      throw std::invalid_argument(Quote(text) + ": joint " + Quote(entity) + " is not a hinge or slide joint");
    }
  }
  const std::vector<std::string> comps = Words(found->components);
  if (comps.empty()) {
    if (!component.empty()) throw std::invalid_argument(Quote(text) + ": " + kind + " has no components");
    return q;
  }
  if (component.empty()) {
    throw std::invalid_argument(Quote(text) + ": name one component (." + found->components + ")");
  }
  auto it = std::find(comps.begin(), comps.end(), component);
  if (it == comps.end()) {
    throw std::invalid_argument(Quote(text) + ": " + kind + " has no component " + Quote(component) + " (" +
                                found->components + ")");
  }
  q.component = static_cast<int32_t>(it - comps.begin());
  return q;
}

const char* MeasureUnit(const Model& m, const Measure& q) {
  switch (q.kind) {
    case kMeasureBodyPos:
    case kMeasureSitePos: return "m";
    case kMeasureBodyQuat: return "1";
    case kMeasureBodyLinvel: return "m/s";
    case kMeasureBodyAngvel: return "rad/s";
    case kMeasureJointQpos: return m.joint_type[q.index] == kJointHinge ? "rad" : "m";
    case kMeasureJointQvel: return m.joint_type[q.index] == kJointHinge ? "rad/s" : "m/s";
    default: return "";
  }
}

SysidConfig ParseSysidConfig(const std::string& text, const std::string& file) {
  SysidConfig c;
  c.file = file;
  c.config_text = text;
  const std::string base_dir = ConfigDir(file);
  ConfigNode root = ConfigNode::Parse(text, file);
  if (!root.IsMap()) root.Fail("a sysid config is a mapping (docs/sysid.md)");
  root.CheckKeys({"scene", "description", "parameters", "data", "actions", "observations", "window", "loss", "solver",
                  "identifiability"});
  c.description = root["description"].String("");

  const ConfigNode scene = root.Required("scene");
  c.scene_source = ResolveConfigPath(base_dir, scene.String());
  try {
    c.model = LoadScene(c.scene_source);
  } catch (const std::exception& e) {
    scene.Fail(e.what());
  }

  // --- data: where the recordings are, and which are held out ---
  const ConfigNode data = root.Required("data");
  data.CheckKeys({"train", "held_out", "time_column", "ignore_columns", "store", "train_episodes", "held_out_episodes"});
  const bool from_store = data.Has("store");
  std::vector<std::string> train, held;
  std::vector<int64_t> train_episodes, held_episodes;
  if (from_store) {
    if (data.Has("train") || data.Has("held_out")) data["store"].Fail("recordings come from CSV files or a store, not both");
    for (int h = 0; h < 2; ++h) {
      const ConfigNode list = data.Required(h == 0 ? "train_episodes" : "held_out_episodes");
      for (double v : list.Numbers()) {
        if (v < 0 || v != std::floor(v)) list.Fail("episode indices are whole numbers >= 0");
        (h == 0 ? train_episodes : held_episodes).push_back(static_cast<int64_t>(v));
      }
      if ((h == 0 ? train_episodes : held_episodes).empty()) {
        list.Fail(h == 0 ? "needs at least one episode" : "needs at least one episode: held-out data is how a fit is judged");
      }
    }
  } else {
    train = data.Required("train").Strings();
    held = data.Required("held_out").Strings();
    if (train.empty()) data["train"].Fail("needs at least one recording");
    if (held.empty()) {
      data["held_out"].Fail("needs at least one recording: held-out data is how a fit is judged");
    }
  }
  c.time_column = data["time_column"].String("time");
  std::vector<std::string> ignore = data.Has("ignore_columns") ? data["ignore_columns"].Strings() : std::vector<std::string>{};

  // --- actions: actuator -> column (a store records every actuator's) ---
  const ConfigNode actions = from_store ? root["actions"] : root.Required("actions");
  if (from_store && actions.defined()) actions.Fail("a store records every actuator's action: no actions mapping");
  if (actions.defined() && !actions.IsMap()) actions.Fail("a mapping of actuator names to recorded columns");
  for (auto it = actions.yaml().begin(); actions.defined() && it != actions.yaml().end(); ++it) {
    const std::string name = it->first.Scalar();
    const int a = c.model.ActuatorId(name);
    if (a < 0) {
      std::string known;
      for (const std::string& n : c.model.actuator_name) known += (known.empty() ? "" : ", ") + n;
      actions[name].Fail("the scene has no actuator " + Quote(name) + " (" + known + ")");
    }
    c.actions.emplace_back(a, actions[name].String());
  }

  // --- observations ---
  const ConfigNode obs = root.Required("observations");
  for (const ConfigNode& o : obs.Items()) {
    o.CheckKeys({"quantity", "column", "noise", "weight"});
    SysidSignal s;
    s.quantity = o.Required("quantity").String();
    try {
      s.measure = ParseMeasure(c.model, s.quantity);
    } catch (const std::invalid_argument& e) {
      o["quantity"].Fail(e.what());
    }
    for (const SysidSignal& other : c.signals) {
      if (other.quantity == s.quantity) o["quantity"].Fail(Quote(s.quantity) + " is observed twice");
    }
    s.column = o["column"].String(s.quantity);
    s.noise = o.Required("noise").Number();
    if (!(s.noise > 0)) o["noise"].Fail("the noise level (standard deviation, SI units) must be > 0");
    s.weight = o["weight"].defined() ? o["weight"].Number(0, 1e12) : 1.0;
    c.signals.push_back(s);
  }
  if (c.signals.empty()) obs.Fail("needs at least one observed quantity");

  // --- parameters ---
  const ConfigNode params = root.Required("parameters");
  for (const ConfigNode& n : params.Items()) {
    SysidParameter p = ParseParameter(n, c.model);
    for (const SysidParameter& other : c.params) {
      if (other.name == p.name) n["name"].Fail("parameter " + Quote(p.name) + " appears twice");
    }
    if (p.latency) {
      if (c.latency_param >= 0) n["targets"].Fail("only one latency parameter");
      c.latency_param = static_cast<int>(c.params.size());
    }
    c.params.push_back(p);
  }
  if (c.params.empty()) params.Fail("needs at least one free parameter");

  // --- multiple shooting, loss, solver ---
  if (root.Has("window")) {
    const ConfigNode w = root["window"];
    w.CheckKeys({"length_s", "start_state", "velocity_half_width"});
    if (w.Has("start_state")) c.fit_rates = w["start_state"].Keyword({"fit", "recorded"}) == "fit";
    if (w.Has("length_s")) c.window_s = w["length_s"].Number(1e-6, 1e6);
    if (w.Has("velocity_half_width")) c.velocity_half_width = static_cast<int>(w["velocity_half_width"].Integer(1, 50));
  }
  if (root.Has("loss")) {
    const ConfigNode l = root["loss"];
    l.CheckKeys({"type", "scale"});
    const std::string type = l["type"].defined() ? l["type"].Keyword({"squared", "huber", "cauchy"}) : "squared";
    c.loss = type == "huber" ? SysidLoss::kHuber : type == "cauchy" ? SysidLoss::kCauchy : SysidLoss::kSquared;
    if (l.Has("scale")) c.loss_scale = l["scale"].Number(1e-6, 1e6);
  }
  if (root.Has("solver")) {
    const ConfigNode s = root["solver"];
    s.CheckKeys({"max_iterations", "starts", "scan", "cost_tolerance", "function_tolerance", "parameter_tolerance", "gradient_tolerance", "differences"});
    if (s.Has("differences")) c.central_differences = s["differences"].Keyword({"forward", "central"}) == "central";
    if (s.Has("max_iterations")) c.max_iterations = static_cast<int>(s["max_iterations"].Integer(1, 100000));
    if (s.Has("starts")) c.starts = static_cast<int>(s["starts"].Integer(1, 10000));
    if (s.Has("scan")) {
      c.scan = static_cast<int>(s["scan"].Integer(0, 100000));
      if (c.scan > 0 && c.scan < c.starts - 1) {
        s["scan"].Fail("scans " + std::to_string(c.scan) + " points for " + std::to_string(c.starts - 1) +
                       " starts after the first (solver.starts " + std::to_string(c.starts) + "); scan at least as many");
      }
      if (c.scan > 0 && c.starts < 2) s["scan"].Fail("a scan picks where starts 2 .. N begin: set solver.starts above 1");
    }
    if (s.Has("cost_tolerance")) c.cost_tolerance = s["cost_tolerance"].Number(0, 1e6);
    if (s.Has("function_tolerance")) c.function_tolerance = s["function_tolerance"].Number(0, 1);
    if (s.Has("parameter_tolerance")) c.parameter_tolerance = s["parameter_tolerance"].Number(0, 1);
    if (s.Has("gradient_tolerance")) c.gradient_tolerance = s["gradient_tolerance"].Number(0, 1);
  }
  if (root.Has("identifiability")) {
    const ConfigNode s = root["identifiability"];
    s.CheckKeys({"max_relative_std", "max_correlation"});
    if (s.Has("max_relative_std")) c.max_relative_std = s["max_relative_std"].Number(1e-6, 1e6);
    if (s.Has("max_correlation")) c.max_correlation = s["max_correlation"].Number(0.5, 1);
  }

  // --- the recordings (after everything they are checked against) ---
  if (from_store) {
    const std::string store = ResolveConfigPath(base_dir, data["store"].String());
    try {
      for (int h = 0; h < 2; ++h) {
        std::vector<Recording> recs = ReadStoreEpisodes(store, data[h == 0 ? "train_episodes" : "held_out_episodes"],
                                                        h == 0 ? train_episodes : held_episodes, h == 1, c);
        for (Recording& r : recs) c.recordings.push_back(std::move(r));
      }
    } catch (const ConfigError&) {
      throw;
    } catch (const std::exception& e) {
      data["store"].Fail(e.what());
    }
  }
  for (int h = 0; h < 2; ++h) {
    for (const std::string& f : h == 0 ? train : held) {
      try {
        c.recordings.push_back(ReadRecording(ResolveConfigPath(base_dir, f), c, ignore, h == 1));
      } catch (const InputError& e) {
        throw ConfigError(e.what());
      }
    }
  }
  // one sample period for all: it becomes the control period
  const Recording& first = c.recordings.front();
  c.period = (first.time.back() - first.time.front()) / double(first.time.size() - 1);
  for (const Recording& r : c.recordings) {
    const double p = (r.time.back() - r.time.front()) / double(r.time.size() - 1);
    if (std::abs(p - c.period) > 1e-3 * c.period) {
      throw ConfigError(r.file + ":" + std::to_string(r.line[0]) + ": sampled every " + Seconds(p) + " s, but " +
                        first.file + " every " + Seconds(c.period) + " s; all recordings must share one rate");
    }
  }
  const double ratio = c.period / c.model.timestep;
  if (std::abs(ratio - std::round(ratio)) > 1e-3 * ratio || std::round(ratio) < 1) {
    throw ConfigError(first.file + ":" + std::to_string(first.line[0]) + ": the sample period " + Seconds(c.period) +
                      " s is not a whole number of the scene's timesteps (" + Seconds(c.model.timestep) + " s)");
  }
  // each sample is one control step of the rollouts: a period of 1e8 timesteps (a time column in
  // the wrong unit) would have the first evaluation step for hours with nothing to show
  if (std::round(ratio) > double(kMaxTimestepsPerSample)) {
    throw ConfigError(first.file + ":" + std::to_string(first.line[0]) + ": the sample period " + Seconds(c.period) +
                      " s is " + Seconds(std::round(ratio)) + " of the scene's timesteps (" + Seconds(c.model.timestep) +
                      " s); at most " + std::to_string(kMaxTimestepsPerSample) + " (is the time column in seconds?)");
  }
  c.model.control_hz = static_cast<Real>(1.0 / (std::round(ratio) * c.model.timestep));
  // room in the action ring buffer for the largest delay the latency parameter may take
  if (c.latency_param >= 0) {
    const double hi_steps = c.params[c.latency_param].hi / c.period;
    c.model.max_latency_steps = std::max<int32_t>(c.model.max_latency_steps, static_cast<int32_t>(std::ceil(hi_steps)) + 1);
  }
  try {
    c.model.Finalize();
  } catch (const std::exception& e) {
    scene.Fail(e.what());
  }
  return c;
}

SysidConfig LoadSysidConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open sysid config");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseSysidConfig(ss.str(), path);
}

}  // namespace s2r
