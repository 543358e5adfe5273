#include "host/store/outcomes.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

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

namespace {

std::string Trim(const std::string& t) {
  const size_t a = t.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return t.substr(a, t.find_last_not_of(" \t") - a + 1);
}

// A condition `NAME OP VALUE`: false where the term has no comparison operator.
struct Condition {
  std::string name, op;
  double value = 0;
};

bool ParseCondition(const DatasetReader& r, const std::string& term, Condition* c) {
  const size_t at = term.find_first_of("<>=!");
  if (at == std::string::npos) return false;
  const size_t len = at + 1 < term.size() && term[at + 1] == '=' ? 2 : 1;
  c->name = Trim(term.substr(0, at));
  c->op = term.substr(at, len);
  const std::string value = Trim(term.substr(at + len));
  if (c->op == "=" || c->op == "!") {
    throw StoreError(r.path(), "--select '" + term + "': the comparison must be one of < <= > >= == !=");
  }
  if (c->name.empty()) throw StoreError(r.path(), "--select '" + term + "': no parameter or metric name before " + c->op);
  char* stop = nullptr;
  c->value = std::strtod(value.c_str(), &stop);
  if (value.empty() || stop != value.c_str() + value.size() || std::isnan(c->value)) {
    throw StoreError(r.path(), "--select '" + term + "': '" + value + "' is not a number");
  }
  return true;
}

bool Holds(const Condition& c, double v) {
  if (std::isnan(v)) return false;
  if (c.op == "<") return v < c.value;
  if (c.op == "<=") return v <= c.value;
  if (c.op == ">") return v > c.value;
  if (c.op == ">=") return v >= c.value;
  if (c.op == "==") return v == c.value;
  return v != c.value;  // "!="
}

}  // namespace

std::vector<uint8_t> SelectionMask(const DatasetReader& r, const std::string& select) {
  const DatasetSpec& spec = r.spec();
  std::vector<std::string> terms;
  for (size_t at = 0; at <= select.size();) {
    size_t comma = select.find(',', at);
    if (comma == std::string::npos) comma = select.size();
    terms.push_back(Trim(select.substr(at, comma - at)));
    at = comma + 1;
  }
  const std::vector<uint8_t> success = r.EpisodeSuccess();
  const std::vector<int32_t> labels = r.EpisodeFailureLabels();
  const size_t n = success.size();
  std::vector<uint8_t> chosen(n, 0), holds(n, 1);
  bool any_outcome = false;
  for (const std::string& t : terms) {
    if (t.empty()) throw StoreError(r.path(), "--select '" + select + "': an empty term (two commas, or one at an end)");
    Condition c;
    if (ParseCondition(r, t, &c)) {
      std::vector<double> v;
      try {
        v = ReadEpisodeColumn(r, c.name).values;
      } catch (const StoreError& e) {
        throw StoreError(e.path(), "--select '" + t + "': " + e.message());
      }
      for (size_t e = 0; e < n; ++e) holds[e] &= Holds(c, v[e]) ? 1 : 0;
      continue;
    }
    any_outcome = true;
    if (t == "all") {
      std::fill(chosen.begin(), chosen.end(), 1);
      continue;
    }
    if (t == "failed" || t == "success") {
      for (size_t e = 0; e < n; ++e) chosen[e] |= (success[e] != 0) == (t == "success");
      continue;
    }
    if (t == "near_miss") {
      if (!HasEpisodeMetric(r, t)) throw StoreError(r.path(), "--select near_miss: the store records no near_miss metric");
      const std::vector<double> near = r.EpisodeMetric(t);
      for (size_t e = 0; e < n; ++e) chosen[e] |= near[e] != 0;
      continue;
    }
    const LabelSpec* label = nullptr;
    std::string names = "all, failed, success, near_miss";
    for (const LabelSpec& l : spec.labels) {
      if (l.code == 0) continue;
      names += ", " + l.name;
      if (l.name == t) label = &l;
    }
    if (label == nullptr) {
      throw StoreError(r.path(), "--select: unknown outcome '" + t + "' (outcomes, any of: " + names +
                                     "; or a condition NAME<VALUE on a parameter or metric, with < <= > >= == !=)");
    }
    for (size_t e = 0; e < n; ++e) chosen[e] |= !success[e] && labels[e] == label->code;
  }
  for (size_t e = 0; e < n; ++e) chosen[e] = (any_outcome ? chosen[e] : 1) & holds[e];
  return chosen;
}

std::vector<int64_t> SelectEpisodes(const DatasetReader& r, const std::string& select) {
  const std::vector<uint8_t> chosen = SelectionMask(r, select);
  const std::vector<uint64_t> seeds = r.EpisodeSeeds();
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
