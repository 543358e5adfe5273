// DatasetSpec: validation and its JSON form in the root attributes (docs/dataset.md).
#include <algorithm>
#include <set>
#include <stdexcept>

#include "host/store/dataset.h"
#include "host/store/store_error.h"

namespace s2r {
namespace {

using json = nlohmann::json;

bool ValidNodeName(const std::string& n) {
  if (n.empty() || n.size() > 128 || n.rfind("__", 0) == 0) return false;
  if (n.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != std::string::npos) {
    return false;
  }
  return n.find_first_not_of('.') != std::string::npos;
}

[[noreturn]] void Bad(const std::string& where, const std::string& what) {
  throw std::invalid_argument("dataset spec: " + where + ": " + what);
}

// Typed access to the stored schema with errors naming the file and key.
struct Reader {
  const std::string& path;
  [[noreturn]] void Fail(const std::string& key, const std::string& what) const {
    throw StoreError(path, "attributes.s2r." + key + ": " + what);
  }
  const json& Obj(const json& j, const std::string& key) const {
    if (!j.is_object()) Fail(key, "must be an object");
    return j;
  }
  const json& Field(const json& obj, const char* name, const std::string& key) const {
    auto it = obj.find(name);
    if (it == obj.end()) Fail(key + "." + name, "is missing");
    return *it;
  }
  std::string Str(const json& obj, const char* name, const std::string& key) const {
    const json& v = Field(obj, name, key);
    if (!v.is_string()) Fail(key + "." + name, "must be a string");
    return v.get<std::string>();
  }
  double Num(const json& obj, const char* name, const std::string& key) const {
    const json& v = Field(obj, name, key);
    if (!v.is_number()) Fail(key + "." + name, "must be a number");
    return v.get<double>();
  }
  int64_t Int(const json& obj, const char* name, const std::string& key) const {
    const json& v = Field(obj, name, key);
    if (!v.is_number_integer()) Fail(key + "." + name, "must be an integer");
    return v.get<int64_t>();
  }
  bool Bool(const json& obj, const char* name, const std::string& key) const {
    const json& v = Field(obj, name, key);
    if (!v.is_boolean()) Fail(key + "." + name, "must be a boolean");
    return v.get<bool>();
  }
  std::vector<std::string> Strs(const json& obj, const char* name, const std::string& key) const {
    const json& v = Field(obj, name, key);
    if (!v.is_array()) Fail(key + "." + name, "must be a list of strings");
    std::vector<std::string> out;
    for (const json& e : v) {
      if (!e.is_string()) Fail(key + "." + name, "must be a list of strings");
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  const json& List(const json& obj, const char* name, const std::string& key) const {
    const json& v = Field(obj, name, key);
    if (!v.is_array()) Fail(key + "." + name, "must be a list");
    return v;
  }
};

}  // namespace

const std::vector<BuiltinColumn>& BuiltinStepColumns() {
  static const std::vector<BuiltinColumn> cols = {
      {"timestamp", DataType::kFloat64, "s", "time since the episode's first step"},
      {"reward", DataType::kFloat32, "1", "reward received after this step's action"},
      {"is_first", DataType::kBool, "1", "first step of its episode"},
      {"is_last", DataType::kBool, "1", "last step of its episode"},
      {"is_terminal", DataType::kBool, "1", "last step and the episode ended in a terminal state"},
      {"episode_index", DataType::kInt64, "1", "row of this step's episode in episodes/"},
      {"frame_index", DataType::kInt32, "1", "step number within its episode"},
  };
  return cols;
}

const std::vector<BuiltinColumn>& BuiltinEpisodeColumns() {
  static const std::vector<BuiltinColumn> cols = {
      {"start", DataType::kInt64, "1", "row of the episode's first step in steps/"},
      {"length", DataType::kInt64, "1", "number of steps"},
      {"seed", DataType::kUint64, "1", "seed the episode was generated from"},
      {"task_index", DataType::kInt32, "1", "index into the root attribute s2r.tasks"},
      {"success", DataType::kBool, "1", "the task was achieved"},
      {"failure_label", DataType::kInt32, "1", "code from the root attribute s2r.labels (0: none)"},
  };
  return cols;
}

void DatasetSpec::Validate() const {
  std::set<std::string> names;
  for (const BuiltinColumn& b : BuiltinStepColumns()) names.insert(b.name);
  for (size_t i = 0; i < features.size(); ++i) {
    const FeatureSpec& f = features[i];
    const std::string where = "features[" + std::to_string(i) + "] '" + f.name + "'";
    if (!ValidNodeName(f.name)) Bad(where, "name must be [A-Za-z0-9_.-]+ and not start with '__'");
    if (!names.insert(f.name).second) Bad(where, "name is used twice (or is a built-in step array)");
    for (int64_t d : f.shape) {
      if (d <= 0) Bad(where, "shape extents must be positive");
    }
    const int64_t last = f.shape.empty() ? 1 : f.shape.back();
    if (!f.names.empty() && int64_t(f.names.size()) != last) {
      Bad(where, "names has " + std::to_string(f.names.size()) + " entries, the last dimension " + std::to_string(last));
    }
    if (f.units.empty()) Bad(where, "units are required (SI; \"1\" for unitless)");
    if (f.units.size() != 1 && int64_t(f.units.size()) != last) {
      Bad(where, "units has " + std::to_string(f.units.size()) + " entries; give one or one per component (" +
                     std::to_string(last) + ")");
    }
  }
  std::set<std::string> pnames;
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamSpec& p = params[i];
    const std::string where = "params[" + std::to_string(i) + "] '" + p.name + "'";
    if (!ValidNodeName(p.name)) Bad(where, "name must be [A-Za-z0-9_.-]+");
    if (!pnames.insert(p.name).second) Bad(where, "name is used twice");
    if (!(p.low == p.low) || !(p.high == p.high)) Bad(where, "range is NaN");
    if (p.distribution.empty()) Bad(where, "distribution is empty");
  }
  std::set<std::string> mnames;
  for (size_t i = 0; i < metrics.size(); ++i) {
    const MetricSpec& m = metrics[i];
    const std::string where = "metrics[" + std::to_string(i) + "] '" + m.name + "'";
    if (!ValidNodeName(m.name)) Bad(where, "name must be [A-Za-z0-9_.-]+");
    if (!mnames.insert(m.name).second) Bad(where, "name is used twice");
    if (m.units.empty()) Bad(where, "units are required (SI; \"1\" for unitless)");
  }
  if (tasks.empty()) Bad("tasks", "at least one task is required");
  std::set<int32_t> codes;
  std::set<std::string> lnames;
  for (size_t i = 0; i < labels.size(); ++i) {
    const LabelSpec& l = labels[i];
    const std::string where = "labels[" + std::to_string(i) + "]";
    if (l.name.empty()) Bad(where, "name is empty");
    if (!codes.insert(l.code).second) Bad(where, "code " + std::to_string(l.code) + " is used twice");
    if (!lnames.insert(l.name).second) Bad(where, "name '" + l.name + "' is used twice");
    if (l.code == 0 && l.name != "none") Bad(where, "code 0 is reserved for \"none\"");
  }
  if (!(control_hz > 0)) Bad("control_hz", "must be positive");
  if (storage.chunk_steps <= 0 || storage.shard_steps <= 0 || storage.shard_steps % storage.chunk_steps != 0) {
    Bad("storage", "shard_steps must be a positive multiple of chunk_steps");
  }
  if (storage.chunk_episodes <= 0) Bad("storage.chunk_episodes", "must be positive");
  static const std::set<std::string> kCompressors = {"blosc-lz4", "blosc-zstd", "zstd", "gzip", "none"};
  if (!kCompressors.count(storage.compressor)) {
    Bad("storage.compressor", "'" + storage.compressor + "' is not one of blosc-lz4, blosc-zstd, zstd, gzip, none");
  }
  if (!embodiment.is_object()) Bad("embodiment", "must be an object");
  if (!generator.is_object()) Bad("generator", "must be an object");
}

json DatasetSpec::ToJson() const {
  json j;
  j["format"] = kDatasetFormat;
  j["format_version"] = kDatasetFormatVersion;
  j["control_hz"] = control_hz;
  j["embodiment"] = embodiment;
  j["generator"] = generator;
  json feats = json::object();
  for (const FeatureSpec& f : features) {
    feats[f.name] = {{"dtype", DataTypeName(f.dtype)}, {"shape", f.shape},   {"names", f.names},
                     {"units", f.units},               {"frame", f.frame},   {"rotation", f.rotation},
                     {"description", f.description}};
  }
  j["features"] = feats;
  json ps = json::array();
  for (const ParamSpec& p : params) {
    ps.push_back({{"name", p.name},
                  {"distribution", p.distribution},
                  {"low", p.low},
                  {"high", p.high},
                  {"units", p.units},
                  {"description", p.description}});
  }
  j["randomization"] = ps;
  if (!metrics.empty()) {
    json ms = json::array();
    for (const MetricSpec& m : metrics) ms.push_back({{"name", m.name}, {"units", m.units}, {"description", m.description}});
    j["metrics"] = ms;
  }
  json ts = json::array();
  for (const TaskSpec& t : tasks) ts.push_back({{"name", t.name}, {"instruction", t.instruction}});
  j["tasks"] = ts;
  std::vector<LabelSpec> ls = labels;
  if (std::none_of(ls.begin(), ls.end(), [](const LabelSpec& l) { return l.code == 0; })) {
    ls.insert(ls.begin(), LabelSpec{0, "none", "no failure"});
  }
  json lj = json::array();
  for (const LabelSpec& l : ls) lj.push_back({{"code", l.code}, {"name", l.name}, {"description", l.description}});
  j["labels"] = lj;
  j["storage"] = {{"chunk_steps", storage.chunk_steps},
                  {"shard_steps", storage.shard_steps},
                  {"chunk_episodes", storage.chunk_episodes},
                  {"compressor", storage.compressor},
                  {"level", storage.level},
                  {"checksum", storage.checksum},
                  {"transpose", storage.transpose}};
  return j;
}

DatasetSpec DatasetSpec::FromJson(const json& s, const std::string& path) {
  Reader r{path};
  r.Obj(s, "");
  DatasetSpec spec;
  if (r.Str(s, "format", "") != kDatasetFormat) r.Fail("format", "is not \"" + std::string(kDatasetFormat) + "\"");
  const int64_t version = r.Int(s, "format_version", "");
  if (version != kDatasetFormatVersion) {
    r.Fail("format_version", std::to_string(version) + " is not supported (this s2r reads version " +
                                 std::to_string(kDatasetFormatVersion) + ")");
  }
  spec.control_hz = r.Num(s, "control_hz", "");
  spec.embodiment = r.Obj(r.Field(s, "embodiment", ""), "embodiment");
  spec.generator = r.Obj(r.Field(s, "generator", ""), "generator");
  const json& feats = r.Obj(r.Field(s, "features", ""), "features");
  for (auto it = feats.begin(); it != feats.end(); ++it) {
    const std::string key = "features." + it.key();
    const json& fj = r.Obj(it.value(), key);
    FeatureSpec f;
    f.name = it.key();
    if (!ParseDataType(r.Str(fj, "dtype", key), &f.dtype)) r.Fail(key + ".dtype", "is not a supported data type");
    const json& shape = r.List(fj, "shape", key);
    for (const json& d : shape) {
      if (!d.is_number_integer()) r.Fail(key + ".shape", "must be a list of integers");
      f.shape.push_back(d.get<int64_t>());
    }
    f.names = r.Strs(fj, "names", key);
    f.units = r.Strs(fj, "units", key);
    f.frame = r.Str(fj, "frame", key);
    f.rotation = r.Str(fj, "rotation", key);
    f.description = r.Str(fj, "description", key);
    spec.features.push_back(std::move(f));
  }
  // JSON objects are unordered; features keep the order of the stored steps arrays' creation,
  // which is by name. Sort to make that explicit.
  std::sort(spec.features.begin(), spec.features.end(),
            [](const FeatureSpec& a, const FeatureSpec& b) { return a.name < b.name; });
  const json& ps = r.List(s, "randomization", "");
  for (size_t i = 0; i < ps.size(); ++i) {
    const std::string key = "randomization[" + std::to_string(i) + "]";
    const json& pj = r.Obj(ps[i], key);
    ParamSpec p;
    p.name = r.Str(pj, "name", key);
    p.distribution = r.Str(pj, "distribution", key);
    p.low = r.Num(pj, "low", key);
    p.high = r.Num(pj, "high", key);
    p.units = r.Str(pj, "units", key);
    p.description = r.Str(pj, "description", key);
    spec.params.push_back(std::move(p));
  }
  if (s.contains("metrics")) {
    const json& ms = r.List(s, "metrics", "");
    for (size_t i = 0; i < ms.size(); ++i) {
      const std::string key = "metrics[" + std::to_string(i) + "]";
      const json& mj = r.Obj(ms[i], key);
      spec.metrics.push_back({r.Str(mj, "name", key), r.Str(mj, "units", key), r.Str(mj, "description", key)});
    }
  }
  const json& ts = r.List(s, "tasks", "");
  for (size_t i = 0; i < ts.size(); ++i) {
    const std::string key = "tasks[" + std::to_string(i) + "]";
    const json& tj = r.Obj(ts[i], key);
    spec.tasks.push_back({r.Str(tj, "name", key), r.Str(tj, "instruction", key)});
  }
  const json& ls = r.List(s, "labels", "");
  for (size_t i = 0; i < ls.size(); ++i) {
    const std::string key = "labels[" + std::to_string(i) + "]";
    const json& lj = r.Obj(ls[i], key);
    const int64_t code = r.Int(lj, "code", key);
    if (code < INT32_MIN || code > INT32_MAX) r.Fail(key + ".code", "is out of the int32 range");
    spec.labels.push_back({int32_t(code), r.Str(lj, "name", key), r.Str(lj, "description", key)});
  }
  const json& st = r.Obj(r.Field(s, "storage", ""), "storage");
  spec.storage.chunk_steps = r.Int(st, "chunk_steps", "storage");
  spec.storage.shard_steps = r.Int(st, "shard_steps", "storage");
  spec.storage.chunk_episodes = r.Int(st, "chunk_episodes", "storage");
  spec.storage.compressor = r.Str(st, "compressor", "storage");
  spec.storage.level = int(r.Int(st, "level", "storage"));
  spec.storage.checksum = r.Bool(st, "checksum", "storage");
  // stores written before the key existed are row-major
  spec.storage.transpose = st.contains("transpose") ? r.Bool(st, "transpose", "storage") : false;
  try {
    spec.Validate();
  } catch (const std::invalid_argument& e) {
    throw StoreError(path, std::string("attributes.s2r: ") + e.what());
  }
  return spec;
}

}  // namespace s2r
