// DatasetReader: the committed part of an s2r dataset, read-only. The root attribute s2r.commit
// is the authority: arrays may be longer after an interrupted commit, never shorter.
#include "host/store/dataset.h"
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

}  // namespace

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

DatasetReader::DatasetReader(const std::string& path) : path_(path) {
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
}

std::vector<int64_t> DatasetReader::EpisodeStarts() const { return ReadColumn<int64_t>(path_, "episodes/start", episodes_); }
std::vector<int64_t> DatasetReader::EpisodeLengths() const {
  return ReadColumn<int64_t>(path_, "episodes/length", episodes_);
}
std::vector<uint64_t> DatasetReader::EpisodeSeeds() const {
  return ReadColumn<uint64_t>(path_, "episodes/seed", episodes_);
}
std::vector<uint8_t> DatasetReader::EpisodeSuccess() const {
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
  return ReadColumn<int32_t>(path_, "episodes/failure_label", episodes_);
}
std::vector<int32_t> DatasetReader::EpisodeTaskIndices() const {
  return ReadColumn<int32_t>(path_, "episodes/task_index", episodes_);
}
std::vector<double> DatasetReader::EpisodeMetric(const std::string& name) const {
  return ReadColumn<double>(path_, "episodes/metrics/" + name, episodes_);
}

std::vector<double> DatasetReader::EpisodeParam(const std::string& name) const {
  return ReadColumn<double>(path_, "episodes/params/" + name, episodes_);
}

std::vector<uint8_t> DatasetReader::StepRows(const std::string& name, int64_t start, int64_t count) const {
  const std::string path = JoinPath(path_, "steps/" + name);
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

}  // namespace s2r
