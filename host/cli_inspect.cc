// s2r inspect STORE [--arrays] [--json]
// Looks inside a Zarr v3 directory store. With --arrays, every array under STORE is decoded and
// fingerprinted (SHA-256 of its contents as C-order little-endian bytes), so that a store written
// by s2r can be checked against numpy, zarr-python or tensorstore without moving the data. The
// summary of s2r datasets (without --arrays) comes with the dataset schema; for now it lists the
// nodes.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/cli.h"
#include "host/store/metadata.h"
#include "host/store/sha256.h"
#include "host/store/zarr_array.h"

namespace s2r {
namespace {

struct InspectArgs {
  std::string store;
  bool arrays = false;
  bool json = false;
};

// "bytes", "zstd", "sharding_indexed(bytes,blosc)".
std::vector<std::string> CodecNames(const std::vector<CodecConfig>& codecs) {
  std::vector<std::string> out;
  for (const CodecConfig& c : codecs) {
    std::string name = c.Name();
    if (c.kind == CodecKind::kShardingIndexed) {
      std::string inner;
      for (const std::string& n : CodecNames(c.codecs)) inner += (inner.empty() ? "" : ",") + n;
      name += "(" + inner + ")";
    }
    out.push_back(name);
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// SHA-256 of the decoded array, read one row of chunks at a time to bound memory.
std::string HashArray(const ZarrArray& array) {
  const ArrayMetadata& m = array.metadata();
  Sha256 hash;
  if (m.shape.empty()) {
    std::vector<uint8_t> all = array.ReadAllBytes();
    hash.Update(all.data(), all.size());
    return hash.HexFinal();
  }
  std::vector<int64_t> start(m.shape.size(), 0), count = m.shape;
  std::vector<uint8_t> slab;
  for (int64_t row = 0; row < m.shape[0]; row += m.chunk_shape[0]) {
    start[0] = row;
    count[0] = std::min(m.chunk_shape[0], m.shape[0] - row);
    int64_t elements = 1;
    for (int64_t c : count) elements *= c;
    slab.resize(size_t(elements) * array.element_size());
    array.ReadRegionBytes(start, count, slab.data(), slab.size());
    hash.Update(slab.data(), slab.size());
  }
  return hash.HexFinal();
}

void RunInspect(const InspectArgs& args) {
  std::vector<ZarrNode> nodes = ListNodes(args.store);
  if (!args.arrays) {
    // Short listing of the hierarchy until the dataset summary exists.
    for (const ZarrNode& n : nodes) {
      std::printf("%-5s  %s\n", n.is_array ? "array" : "group", n.path.empty() ? "/" : n.path.c_str());
    }
    return;
  }
  nlohmann::json report = {{"store", args.store}, {"arrays", nlohmann::json::array()}};
  int failures = 0;
  for (const ZarrNode& n : nodes) {
    if (!n.is_array) continue;
    const std::string path = n.path.empty() ? args.store : args.store + "/" + n.path;
    nlohmann::json entry = {{"path", n.path}};
    try {
      ZarrArray array = ZarrArray::Open(path);
      const ArrayMetadata& m = array.metadata();
      entry["shape"] = m.shape;
      entry["chunk_shape"] = m.chunk_shape;
      if (m.IsSharded()) entry["inner_chunk_shape"] = m.codecs[0].chunk_shape;
      entry["dtype"] = DataTypeName(m.data_type);
      entry["fill_value"] = FillValueToJson(m.fill_value, m.data_type);
      entry["codecs"] = CodecNames(m.codecs);
      entry["sha256"] = HashArray(array);
    } catch (const StoreError& e) {
      entry["error"] = e.what();
      ++failures;
    }
    if (args.json) {
      report["arrays"].push_back(entry);
    } else if (entry.contains("error")) {
      std::printf("%s  ERROR %s\n", n.path.empty() ? "/" : n.path.c_str(), entry["error"].get<std::string>().c_str());
    } else {
      std::printf("%s  shape=%s dtype=%s codecs=%s sha256=%s\n", n.path.empty() ? "/" : n.path.c_str(),
                  entry["shape"].dump().c_str(), entry["dtype"].get<std::string>().c_str(),
                  Join(entry["codecs"].get<std::vector<std::string>>(), ",").c_str(),
                  entry["sha256"].get<std::string>().c_str());
    }
  }
  if (args.json) std::printf("%s\n", report.dump(2).c_str());
  std::fflush(stdout);
  if (failures > 0) {
    throw StoreError(args.store, std::to_string(failures) + " array(s) could not be read (see above)");
  }
}

}  // namespace

void AddInspectCommand(CLI::App* app) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app->add_subcommand("inspect", "Inspect a Zarr v3 store (arrays, codecs, content hashes)");
  cmd->add_option("store", args->store, "store directory")->required();
  cmd->add_flag("--arrays", args->arrays, "decode every array and print shape, dtype, codecs and sha256");
  cmd->add_flag("--json", args->json, "with --arrays: print one JSON object");
  cmd->callback([args] { RunInspect(*args); });
}

}  // namespace s2r
