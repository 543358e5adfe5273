// Episode outcomes by a per-episode column of an s2r dataset: the analysis behind `s2r inspect
// --by` and `s2r compare` (docs/dataset.md). A column is a randomized parameter
// (episodes/params/NAME) or an episode metric (episodes/metrics/NAME); its values are cut into
// bins of about equal count at their quantiles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "host/store/dataset.h"

namespace s2r {

struct EpisodeColumn {
  std::string name;
  std::string kind;   // "randomized parameter" or "episode metric"
  std::string units;
  std::vector<double> values;  // one per committed episode
};

// The dataset (or folder of shard datasets) at `path`; anything else is a StoreError naming it
// ("not an s2r dataset").
DatasetReader OpenDataset(const std::string& path);

// The column NAME of a dataset, a parameter before a metric of the same name. An unknown name is a
// StoreError naming the store and listing its parameters and metrics.
EpisodeColumn ReadEpisodeColumn(const DatasetReader& r, const std::string& name);

// Whether the dataset records the metric NAME.
bool HasEpisodeMetric(const DatasetReader& r, const std::string& name);

// Edges cutting `values` into up to `bins` bins of about equal count: the values at the quantiles
// k / bins (k = 1 .. bins - 1), ascending and distinct; a column with `bins` distinct values or
// fewer gets one bin per value. Bin b holds the values v with edges[b-1] <= v < edges[b]. NaN
// values (another writer's store may hold them) take no part in the edges and belong to no bin:
// callers count them apart.
std::vector<double> QuantileEdges(const std::vector<double>& values, int bins);
size_t BinOf(const std::vector<double>& edges, double v);

// An episode's outcome by name: "success", or its failure label's name in the dataset's taxonomy
// ("<code N>" for a code outside it).
std::string OutcomeName(const DatasetSpec& spec, bool success, int32_t label);

// A selection of a dataset's episodes (`--select TERMS`, docs/sweep.md *Hard sets*): comma-separated
// terms of two kinds. Outcome terms, `failed`, `success`, `near_miss` (the metric non-zero), `all`
// or a failure label's name (`stuck`, `timeout`, ...), are alternatives: an episode matching any of
// them is a candidate (every episode is one where no outcome term is given). Conditions, `NAME OP
// VALUE` on a randomized parameter or an episode metric with OP one of < <= > >= == !=, must all
// hold (so `friction>=0.3,friction<0.5` is a range); a NaN value meets none. For example
// `stuck,timeout,box_mass>1.5`: the stuck or timed-out episodes whose box is heavier than 1.5.
// The mask has one entry per committed episode, in the store's episode order. An unknown term or
// name, a condition whose value is not a number, near_miss in a store without the metric or an
// empty term is a StoreError naming the store (and the term).
std::vector<uint8_t> SelectionMask(const DatasetReader& r, const std::string& select);

// The episode indices (the seed column) of the episodes SelectionMask picks, ascending and distinct.
std::vector<int64_t> SelectEpisodes(const DatasetReader& r, const std::string& select);

}  // namespace s2r
