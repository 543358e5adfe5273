// DatasetReader: the committed part of an s2r dataset, read-only. The root attribute s2r.commit
// is the authority: arrays may be longer after an interrupted commit, never shorter.
#include "host/store/dataset.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <tuple>

#include "host/store/file_io.h"
#include "host/store/store_error.h"
#include "host/store/zarr_array.h"

namespace s2r {
namespace {

using json = nlohmann::json;

template <typename T>
std::vector<T> ReadColumn(const std::string& root, const std::string& name, int64_t rows) {
  const std::string path = JoinPath(root, name);
  ZarrArray a = ZarrArray::Open(path);
  const ArrayMetadata& m = a.metadata();
  if (m.shape.size() != 1) throw StoreError(path, "an episode column must be one-dimensional");
  if (m.data_type != DataTypeOf<T>()) {
    throw StoreError(path, std::string("holds ") + DataTypeName(m.data_type) + ", the schema says " +
                               DataTypeName(DataTypeOf<T>()));
  }
  if (m.shape[0] < rows) {
    throw StoreError(path, "holds " + std::to_string(m.shape[0]) + " rows, the commit record " + std::to_string(rows));
  }
  std::vector<T> out(static_cast<size_t>(rows));
  if (rows > 0) a.ReadRegionBytes({0}, {rows}, out.data(), out.size() * sizeof(T));
  return out;
}

std::string RowText(int64_t row, const std::string& value) {
  return "row " + std::to_string(row) + " holds " + value;
}

}  // namespace

void CheckEpisodeTable(const std::string& path, const DatasetSpec& spec, int64_t episodes, int64_t steps) {
  const std::vector<int64_t> start = ReadColumn<int64_t>(path, "episodes/start", episodes);
  const std::vector<int64_t> length = ReadColumn<int64_t>(path, "episodes/length", episodes);
  const std::vector<int32_t> label = ReadColumn<int32_t>(path, "episodes/failure_label", episodes);
  const std::vector<int32_t> task = ReadColumn<int32_t>(path, "episodes/task_index", episodes);
  int64_t end = 0;  // where the episodes before row e end
  for (int64_t e = 0; e < episodes; ++e) {
    const size_t i = static_cast<size_t>(e);
    if (start[i] != end) {
      throw StoreError(JoinPath(path, "episodes/start"),
                       RowText(e, std::to_string(start[i])) + ", but the episodes before it end at step " +
                           std::to_string(end) + " (episodes are stored one after another): the store was modified "
                           "outside s2r");
    }
    if (length[i] <= 0 || length[i] > steps - end) {
      throw StoreError(JoinPath(path, "episodes/length"),
                       RowText(e, std::to_string(length[i])) + ", not a length from step " + std::to_string(end) +
                           " within the commit record's " + std::to_string(steps) + " steps: the store was modified "
                           "outside s2r");
    }
    end += length[i];
    if (label[i] != 0 && std::none_of(spec.labels.begin(), spec.labels.end(),
                                      [&](const LabelSpec& l) { return l.code == label[i]; })) {
      throw StoreError(JoinPath(path, "episodes/failure_label"),
                       RowText(e, std::to_string(label[i])) + ", a code not in the dataset's label taxonomy");
    }
    if (task[i] < 0 || static_cast<size_t>(task[i]) >= spec.tasks.size()) {
      throw StoreError(JoinPath(path, "episodes/task_index"),
                       RowText(e, std::to_string(task[i])) + ", but the dataset has " +
                           std::to_string(spec.tasks.size()) + " task(s)");
    }
  }
  if (end != steps) {
    throw StoreError(JoinPath(path, "zarr.json"), "the commit record says " + std::to_string(steps) +
                                                      " steps but its episodes end at step " + std::to_string(end));
  }
}

bool DatasetReader::IsDataset(const std::string& path) {
  try {
    const json doc = ReadZarrJson(path);
    const json attrs = doc.value("attributes", json::object());
    return attrs.is_object() && attrs.contains("s2r") && attrs["s2r"].is_object() &&
           attrs["s2r"].value("format", std::string()) == kDatasetFormat;
  } catch (const StoreError&) {
    return false;
  }
}

bool DatasetReader::IsDatasetFolder(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec) || std::filesystem::exists(JoinPath(path, "zarr.json"), ec)) return false;
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
    if (e.is_directory() && IsDataset(e.path().string())) return true;
  }
  return false;
}

DatasetReader::~DatasetReader() = default;
DatasetReader::DatasetReader(DatasetReader&&) noexcept = default;

template <typename T, typename F>
std::vector<T> DatasetReader::Gather(F&& column) const {
  std::vector<std::vector<T>> per_part;
  for (const auto& p : parts_) per_part.push_back(column(*p));
  std::vector<T> out;
  out.reserve(order_.size());
  for (const auto& e : order_) out.push_back(per_part[e.first][e.second]);
  return out;
}

void DatasetReader::OpenParts() {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::directory_iterator(path_)) {
    if (e.is_directory() && IsDataset(e.path().string())) paths.push_back(e.path().string());
  }
  std::sort(paths.begin(), paths.end());
  if (paths.empty()) throw StoreError(path_, "is neither an s2r dataset nor a folder of them");
  json schema;
  std::vector<std::tuple<uint64_t, int, int64_t>> episodes;  // seed, part, row
  for (const std::string& p : paths) {
    parts_.push_back(std::make_unique<DatasetReader>(p));
    const DatasetReader& r = *parts_.back();
    json s = r.spec().ToJson();
    s.erase("generator");
    if (parts_.size() == 1) {
      schema = s;
      spec_ = r.spec();
      attrs_ = r.root_attributes();
    } else if (s != schema) {
      throw StoreError(p, "has another schema than " + paths[0] + ": not parts of one dataset");
    }
    const std::vector<uint64_t> seeds = r.EpisodeSeeds();
    for (size_t i = 0; i < seeds.size(); ++i) {
      episodes.emplace_back(seeds[i], static_cast<int>(parts_.size() - 1), static_cast<int64_t>(i));
    }
  }
  std::sort(episodes.begin(), episodes.end());
  for (size_t i = 1; i < episodes.size(); ++i) {
    if (std::get<0>(episodes[i]) == std::get<0>(episodes[i - 1])) {
      throw StoreError(paths[std::get<1>(episodes[i])], "repeats episode " + std::to_string(std::get<0>(episodes[i])) +
                                                            " of " + paths[std::get<1>(episodes[i - 1])]);
    }
  }
  std::vector<std::vector<int64_t>> lengths;
  for (const auto& p : parts_) lengths.push_back(p->EpisodeLengths());
  for (const auto& e : episodes) {
    order_.emplace_back(std::get<1>(e), std::get<2>(e));
    starts_.push_back(steps_);
    steps_ += lengths[std::get<1>(e)][std::get<2>(e)];
  }
  episodes_ = static_cast<int64_t>(order_.size());
  attrs_["s2r"]["commit"] = {{"episodes", episodes_}, {"steps", steps_}};
  attrs_["s2r"]["parts"] = paths;
}

DatasetReader::DatasetReader(const std::string& path) : path_(path) {
  if (IsDatasetFolder(path)) {
    OpenParts();
    return;
  }
  const std::string file = JoinPath(path, "zarr.json");
  const json doc = ReadZarrJson(path);
  if (NodeTypeOf(doc, file) != "group") throw StoreError(file, "an s2r dataset's root is a group");
  attrs_ = ParseGroupMetadata(doc, file).attributes;
  if (!attrs_.contains("s2r") || !attrs_["s2r"].is_object()) {
    throw StoreError(file, "not an s2r dataset: attributes.s2r is missing");
  }
  json schema = attrs_["s2r"];
  const json commit = schema.contains("commit") ? schema["commit"] : json();
  schema.erase("commit");
  spec_ = DatasetSpec::FromJson(schema, file);
  if (commit.is_null()) throw StoreError(file, "attributes.s2r.commit is null: the store's creation never finished");
  if (!commit.is_object() || !commit.contains("episodes") || !commit.contains("steps") ||
      !commit["episodes"].is_number_integer() || !commit["steps"].is_number_integer() ||
      commit["episodes"].get<int64_t>() < 0 || commit["steps"].get<int64_t>() < 0) {
    throw StoreError(file, "attributes.s2r.commit must be {\"episodes\": N, \"steps\": M}");
  }
  episodes_ = commit["episodes"].get<int64_t>();
  steps_ = commit["steps"].get<int64_t>();
  // Every column must cover the record.
  for (const BuiltinColumn& b : BuiltinStepColumns()) {
    ZarrArray a = ZarrArray::Open(JoinPath(path, std::string("steps/") + b.name));
    if (a.metadata().shape.empty() || a.metadata().shape[0] < steps_) {
      throw StoreError(a.path(), "holds fewer rows than the commit record's " + std::to_string(steps_) + " steps");
    }
  }
  for (const FeatureSpec& f : spec_.features) {
    ZarrArray a = ZarrArray::Open(JoinPath(path, "steps/" + f.name));
    if (a.metadata().shape.empty() || a.metadata().shape[0] < steps_) {
      throw StoreError(a.path(), "holds fewer rows than the commit record's " + std::to_string(steps_) + " steps");
    }
  }
  CheckEpisodeTable(path, spec_, episodes_, steps_);
  // success is a bool column; a byte other than 0 or 1 is not one s2r wrote
  const std::vector<uint8_t> success = EpisodeSuccess();
  for (size_t e = 0; e < success.size(); ++e) {
    if (success[e] > 1) {
      throw StoreError(JoinPath(path, "episodes/success"),
                       RowText(int64_t(e), std::to_string(int(success[e]))) + ", not a bool");
    }
  }
}

std::vector<int64_t> DatasetReader::EpisodeStarts() const {
  if (!parts_.empty()) return starts_;
  return ReadColumn<int64_t>(path_, "episodes/start", episodes_);
}
std::vector<int64_t> DatasetReader::EpisodeLengths() const {
  if (!parts_.empty()) return Gather<int64_t>([](const DatasetReader& r) { return r.EpisodeLengths(); });
  return ReadColumn<int64_t>(path_, "episodes/length", episodes_);
}
std::vector<uint64_t> DatasetReader::EpisodeSeeds() const {
  if (!parts_.empty()) return Gather<uint64_t>([](const DatasetReader& r) { return r.EpisodeSeeds(); });
  return ReadColumn<uint64_t>(path_, "episodes/seed", episodes_);
}
std::vector<uint8_t> DatasetReader::EpisodeSuccess() const {
  if (!parts_.empty()) return Gather<uint8_t>([](const DatasetReader& r) { return r.EpisodeSuccess(); });
  const std::string path = JoinPath(path_, "episodes/success");
  ZarrArray a = ZarrArray::Open(path);
  if (a.metadata().data_type != DataType::kBool || a.metadata().shape.size() != 1) {
    throw StoreError(path, "must be a one-dimensional bool array");
  }
  if (a.metadata().shape[0] < episodes_) throw StoreError(path, "holds fewer rows than the commit record");
  std::vector<uint8_t> out(static_cast<size_t>(episodes_));
  if (episodes_ > 0) a.ReadRegionBytes({0}, {episodes_}, out.data(), out.size());
  return out;
}
std::vector<int32_t> DatasetReader::EpisodeFailureLabels() const {
  if (!parts_.empty()) return Gather<int32_t>([](const DatasetReader& r) { return r.EpisodeFailureLabels(); });
  return ReadColumn<int32_t>(path_, "episodes/failure_label", episodes_);
}
std::vector<int32_t> DatasetReader::EpisodeTaskIndices() const {
  if (!parts_.empty()) return Gather<int32_t>([](const DatasetReader& r) { return r.EpisodeTaskIndices(); });
  return ReadColumn<int32_t>(path_, "episodes/task_index", episodes_);
}
std::vector<double> DatasetReader::EpisodeMetric(const std::string& name) const {
  if (!parts_.empty()) return Gather<double>([&](const DatasetReader& r) { return r.EpisodeMetric(name); });
  return ReadColumn<double>(path_, "episodes/metrics/" + name, episodes_);
}

std::vector<double> DatasetReader::EpisodeParam(const std::string& name) const {
  if (!parts_.empty()) return Gather<double>([&](const DatasetReader& r) { return r.EpisodeParam(name); });
  return ReadColumn<double>(path_, "episodes/params/" + name, episodes_);
}

std::vector<uint8_t> DatasetReader::StepRows(const std::string& name, int64_t start, int64_t count) const {
  const std::string path = JoinPath(path_, "steps/" + name);
  if (!parts_.empty()) {
    if (start < 0 || count < 0 || start + count > steps_) {
      throw StoreError(path, "rows [" + std::to_string(start) + ", " + std::to_string(start + count) +
                                 ") lie outside the " + std::to_string(steps_) + " committed steps");
    }
    // the episodes the rows cross, each read from its part
    std::vector<uint8_t> out;
    size_t e = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), start) - starts_.begin()) - 1;
    std::vector<std::vector<int64_t>> part_starts(parts_.size());
    for (int64_t at = start; at < start + count; ++e) {
      const auto [part, row] = order_[e];
      if (part_starts[part].empty()) part_starts[part] = parts_[part]->EpisodeStarts();
      const int64_t end = std::min(start + count, e + 1 < starts_.size() ? starts_[e + 1] : steps_);
      const std::vector<uint8_t> rows = parts_[part]->StepRows(name, part_starts[part][row] + (at - starts_[e]), end - at);
      out.insert(out.end(), rows.begin(), rows.end());
      at = end;
    }
    return out;
  }
  if (start < 0 || count < 0 || start + count > steps_) {
    throw StoreError(path, "rows [" + std::to_string(start) + ", " + std::to_string(start + count) +
                               ") lie outside the " + std::to_string(steps_) + " committed steps");
  }
  ZarrArray a = ZarrArray::Open(path);
  std::vector<int64_t> st(a.metadata().shape.size(), 0), cnt = a.metadata().shape;
  st[0] = start;
  cnt[0] = count;
  int64_t n = 1;
  for (int64_t c : cnt) n *= c;
  std::vector<uint8_t> out(static_cast<size_t>(n) * a.element_size());
  if (n > 0) a.ReadRegionBytes(st, cnt, out.data(), out.size());
  return out;
}

std::vector<double> DatasetReader::StepValues(const std::string& name, int64_t start, int64_t count) const {
  const FeatureSpec* feature = nullptr;
  for (const FeatureSpec& f : spec_.features) {
    if (f.name == name) feature = &f;
  }
  const std::string path = JoinPath(path_, "steps/" + name);
  if (!feature) throw StoreError(path, "is not one of the dataset's features");
  const std::vector<uint8_t> bytes = StepRows(name, start, count);
  std::vector<double> out;
  if (feature->dtype == DataType::kFloat32) {
    std::vector<float> v(bytes.size() / sizeof(float));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    out.assign(v.begin(), v.end());
  } else if (feature->dtype == DataType::kFloat64) {
    out.resize(bytes.size() / sizeof(double));
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(double));
  } else {
    throw StoreError(path, std::string("is ") + DataTypeName(feature->dtype) + ", not a float feature");
  }
  return out;
}

}  // namespace s2r
