#include "host/store/outcomes.h"

#include <algorithm>

#include "host/store/store_error.h"

namespace s2r {

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
  std::vector<double> sorted = values;
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

std::string OutcomeName(const DatasetSpec& spec, bool success, int32_t label) {
  if (success) return "success";
  for (const LabelSpec& l : spec.labels) {
    if (l.code == label) return l.name;
  }
  return "<code " + std::to_string(label) + ">";
}

}  // namespace s2r
