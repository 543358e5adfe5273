#include "host/store/outcomes.h"

#include <algorithm>
#include <cmath>

#include "host/store/store_error.h"

namespace s2r {

DatasetReader OpenDataset(const std::string& path) {
  if (!DatasetReader::IsDataset(path) && !DatasetReader::IsDatasetFolder(path)) {
    throw StoreError(path, "not an s2r dataset (or a folder of shard datasets)");
  }
  return DatasetReader(path);
}

EpisodeColumn ReadEpisodeColumn(const DatasetReader& r, const std::string& name) {
  const DatasetSpec& spec = r.spec();
  EpisodeColumn c;
  c.name = name;
  for (const ParamSpec& p : spec.params) {
    if (p.name != name) continue;
    c.kind = "randomized parameter";
    c.units = p.units;
    c.values = r.EpisodeParam(name);
    return c;
  }
  for (const MetricSpec& m : spec.metrics) {
    if (m.name != name) continue;
    c.kind = "episode metric";
    c.units = m.units;
    c.values = r.EpisodeMetric(name);
    return c;
  }
  std::string names;
  for (const ParamSpec& p : spec.params) names += (names.empty() ? "" : ", ") + p.name;
  for (const MetricSpec& m : spec.metrics) names += (names.empty() ? "" : ", ") + m.name;
  throw StoreError(r.path(), name + ": no such randomized parameter or episode metric (the store has: " +
                                 (names.empty() ? std::string("none") : names) + ")");
}

bool HasEpisodeMetric(const DatasetReader& r, const std::string& name) {
  for (const MetricSpec& m : r.spec().metrics) {
    if (m.name == name) return true;
  }
  return false;
}

std::vector<double> QuantileEdges(const std::vector<double>& values, int bins) {
  std::vector<double> sorted;
  for (double v : values) {
    if (!std::isnan(v)) sorted.push_back(v);
  }
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> distinct = sorted;
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  if (int(distinct.size()) <= bins) {
    return distinct.empty() ? distinct : std::vector<double>(distinct.begin() + 1, distinct.end());
  }
  std::vector<double> edges;
  const size_t n = sorted.size();
  for (int k = 1; k < bins; ++k) {
    const double e = sorted[size_t(double(k) * double(n) / double(bins))];
    if (e > sorted.front() && (edges.empty() || e > edges.back())) edges.push_back(e);
  }
  return edges;
}

size_t BinOf(const std::vector<double>& edges, double v) {
  return size_t(std::upper_bound(edges.begin(), edges.end(), v) - edges.begin());
}

std::vector<int64_t> SelectEpisodes(const DatasetReader& r, const std::string& select) {
  const DatasetSpec& spec = r.spec();
  std::vector<std::string> terms;
  for (size_t at = 0; at <= select.size();) {
    size_t comma = select.find(',', at);
    if (comma == std::string::npos) comma = select.size();
    terms.push_back(select.substr(at, comma - at));
    at = comma + 1;
  }
  const std::vector<uint64_t> seeds = r.EpisodeSeeds();
  const std::vector<uint8_t> success = r.EpisodeSuccess();
  const std::vector<int32_t> labels = r.EpisodeFailureLabels();
  std::vector<uint8_t> chosen(seeds.size(), 0);
  for (const std::string& t : terms) {
    if (t == "failed" || t == "success") {
      for (size_t e = 0; e < seeds.size(); ++e) chosen[e] |= (success[e] != 0) == (t == "success");
      continue;
    }
    if (t == "near_miss") {
      if (!HasEpisodeMetric(r, t)) throw StoreError(r.path(), "--select near_miss: the store records no near_miss metric");
      const std::vector<double> near = r.EpisodeMetric(t);
      for (size_t e = 0; e < seeds.size(); ++e) chosen[e] |= near[e] != 0;
      continue;
    }
    const LabelSpec* label = nullptr;
    std::string names = "failed, success, near_miss";
    for (const LabelSpec& l : spec.labels) {
      if (l.code == 0) continue;
      names += ", " + l.name;
      if (l.name == t) label = &l;
    }
    if (label == nullptr) {
      throw StoreError(r.path(), "--select: unknown outcome '" + t + "' (one or more, comma-separated, of: " + names + ")");
    }
    for (size_t e = 0; e < seeds.size(); ++e) chosen[e] |= !success[e] && labels[e] == label->code;
  }
  std::vector<int64_t> out;
  for (size_t e = 0; e < seeds.size(); ++e) {
    if (chosen[e]) out.push_back(int64_t(seeds[e]));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string OutcomeName(const DatasetSpec& spec, bool success, int32_t label) {
  if (success) return "success";
  for (const LabelSpec& l : spec.labels) {
    if (l.code == label) return l.name;
  }
  return "<code " + std::to_string(label) + ">";
}

}  // namespace s2r
