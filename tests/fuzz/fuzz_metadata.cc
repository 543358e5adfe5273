// libFuzzer harness for the zarr.json parser (host/store/metadata.h): arbitrary bytes are read as
// a metadata document the way the store reads one from disk, then given to NodeTypeOf,
// ParseArrayMetadata and ParseGroupMetadata.
//
// A finding is anything but a clean refusal. Refusals are StoreError (and, as the store's callers
// tolerate them today, nlohmann::json exceptions out of the parse functions); everything else
// aborts so libFuzzer (or replay_main) records the input:
//   - a crash, a sanitizer report, or an exception of another type;
//   - text for which ParseZarrJsonText (what ReadZarrJson runs) throws anything but a StoreError;
//   - accepted metadata from which a reader's size arithmetic (ChunkElements() x element size,
//     the element count, GridShape(), a shard's index) overflows int64: Validate must refuse it;
//   - accepted metadata whose canonical JSON (ArrayMetadataToJson, written as text) is refused
//     when read back, or reads back to a different document.
// Nothing here allocates by a parsed shape: the checks use overflow-checked arithmetic only.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "host/store/dtype.h"
#include "host/store/metadata.h"
#include "host/store/store_error.h"
#include "host/store/zarr_array.h"

namespace {

using json = nlohmann::json;

const std::string kPath = "fuzz/zarr.json";

[[noreturn]] void Finding(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "\nfuzz_metadata FINDING: %s\n%s\n", what.c_str(), detail.c_str());
  std::fflush(stderr);
  std::abort();
}

// a * b, or false when it does not fit in int64.
bool Mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

bool CheckedProduct(const std::vector<int64_t>& v, int64_t* out) {
  int64_t n = 1;
  for (int64_t x : v) {
    if (!Mul(n, x, &n)) return false;
  }
  *out = n;
  return true;
}

// The sizes a reader derives from one codec chain applied to chunks of `chunk_shape`, recursing
// into sharding's inner chunks.
void CheckChainSizes(const std::vector<s2r::CodecConfig>& codecs, const std::vector<int64_t>& chunk_shape,
                     size_t elem, const std::string& doc) {
  for (const s2r::CodecConfig& c : codecs) {
    if (c.kind != s2r::CodecKind::kShardingIndexed) continue;
    if (c.chunk_shape.size() != chunk_shape.size()) Finding("accepted sharding with a rank mismatch", doc);
    std::vector<int64_t> per_shard(chunk_shape.size());
    for (size_t d = 0; d < chunk_shape.size(); ++d) {
      if (c.chunk_shape[d] <= 0 || chunk_shape[d] % c.chunk_shape[d] != 0) {
        Finding("accepted an inner chunk shape that does not divide the shard", doc);
      }
      per_shard[d] = chunk_shape[d] / c.chunk_shape[d];
    }
    // the index holds 2 x uint64 per inner chunk
    int64_t entries = 0, index_bytes = 0, inner = 0, inner_bytes = 0;
    if (!CheckedProduct(per_shard, &entries) || !Mul(entries, 16, &index_bytes)) {
      Finding("accepted a shard whose index size overflows int64", doc);
    }
    if (!CheckedProduct(c.chunk_shape, &inner) || !Mul(inner, int64_t(elem), &inner_bytes)) {
      Finding("accepted an inner chunk whose byte size overflows int64", doc);
    }
    CheckChainSizes(c.codecs, c.chunk_shape, elem, doc);
  }
}

void CheckDerivedSizes(const s2r::ArrayMetadata& m, const std::string& doc) {
  const size_t elem = s2r::DataTypeSize(m.data_type);
  int64_t chunk = 0, chunk_bytes = 0, count = 0;
  // ZarrArray::chunk_bytes() and every chunk buffer
  if (!CheckedProduct(m.chunk_shape, &chunk) || !Mul(chunk, int64_t(elem), &chunk_bytes)) {
    Finding("accepted a chunk (shard) whose byte size overflows int64", doc);
  }
  // ZarrArray::NumElements()
  if (!CheckedProduct(m.shape, &count)) Finding("accepted a shape whose element count overflows int64", doc);
  // GridShape(): ceil(shape / chunk) as (shape + chunk - 1) / chunk
  for (size_t d = 0; d < m.shape.size(); ++d) {
    int64_t sum = 0;
    if (__builtin_add_overflow(m.shape[d], m.chunk_shape[d] - 1, &sum)) {
      Finding("accepted a shape whose grid size overflows int64 in GridShape()", doc);
    }
  }
  CheckChainSizes(m.codecs, m.chunk_shape, elem, doc);
  // Now safe to call the real accessors (UBSan watches them in the libFuzzer build).
  if (m.ChunkElements() != chunk) Finding("ChunkElements() disagrees with the chunk shape", doc);
  const std::vector<int64_t> grid = m.GridShape();
  if (grid.size() != m.shape.size()) Finding("GridShape() has the wrong rank", doc);
  std::vector<int64_t> last(grid.size());
  for (size_t d = 0; d < grid.size(); ++d) last[d] = grid[d] > 0 ? grid[d] - 1 : 0;
  if (m.ChunkKey(last).empty()) Finding("empty chunk key", doc);
}

// What ReadZarrJson does with the text (ParseZarrJsonText): every failure must be a StoreError.
void CheckParseLikeReadZarrJson(const uint8_t* data, size_t size) {
  try {
    json ignored = s2r::ParseZarrJsonText(data, size, kPath);
    (void)ignored;
  } catch (const s2r::StoreError&) {
    return;
  } catch (const std::exception& e) {
    Finding("ParseZarrJsonText lets an exception other than StoreError escape", e.what());
  }
}

void CheckArray(const json& doc, const std::string& text) {
  s2r::ArrayMetadata m;
  try {
    m = s2r::ParseArrayMetadata(doc, kPath);
  } catch (const s2r::StoreError&) {
    return;
  } catch (const json::exception&) {
    return;
  }
  CheckDerivedSizes(m, text);

  // The canonical form goes through text and back, as a writer and a later reader would see it.
  const std::string once = s2r::ArrayMetadataToJson(m).dump();
  json reread = json::parse(once, nullptr, false);
  if (reread.is_discarded()) Finding("ArrayMetadataToJson wrote text that is not JSON", text + "\n->\n" + once);
  s2r::ArrayMetadata m2;
  try {
    m2 = s2r::ParseArrayMetadata(reread, kPath);
  } catch (const std::exception& e) {
    Finding(std::string("the canonical JSON of accepted metadata is refused: ") + e.what(), text + "\n->\n" + once);
  }
  const std::string twice = s2r::ArrayMetadataToJson(m2).dump();
  if (once != twice) Finding("metadata round trip is not stable", text + "\n->\n" + once + "\n->\n" + twice);
  if (m2.fill_value != m.fill_value) Finding("fill value bits change in the round trip", text + "\n->\n" + once);
}

void CheckGroup(const json& doc, const std::string& text) {
  s2r::GroupMetadata g;
  try {
    g = s2r::ParseGroupMetadata(doc, kPath);
  } catch (const s2r::StoreError&) {
    return;
  } catch (const json::exception&) {
    return;
  }
  const std::string once = s2r::GroupMetadataToJson(g).dump();
  s2r::GroupMetadata g2;
  try {
    g2 = s2r::ParseGroupMetadata(json::parse(once), kPath);
  } catch (const std::exception& e) {
    Finding(std::string("the canonical JSON of an accepted group is refused: ") + e.what(), text + "\n->\n" + once);
  }
  if (s2r::GroupMetadataToJson(g2).dump() != once) Finding("group round trip is not stable", text + "\n->\n" + once);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  json doc = json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    CheckParseLikeReadZarrJson(data, size);
    return 0;
  }
  const std::string text(reinterpret_cast<const char*>(data), size);

  // The node type decides which parser the store calls; both must refuse the other kind cleanly.
  try {
    (void)s2r::NodeTypeOf(doc, kPath);
  } catch (const s2r::StoreError&) {
  } catch (const json::exception&) {
  }
  CheckArray(doc, text);
  CheckGroup(doc, text);
  return 0;
}

// Seeds from s2r's own writer: the canonical JSON of arrays over every data type and codec, and of
// a group; files "<dir>/s2r-<n>.json". make_seed_corpus.py adds zarr-python's documents and
// malformed ones.
extern "C" int S2RFuzzWriteSeeds(const char* dir) {
  using s2r::DataType;
  std::vector<s2r::ArrayMetadata> arrays = {
      s2r::MakeArrayMetadata(DataType::kFloat32, {100, 6}, {10, 6}, {s2r::BytesCodec()}, s2r::FillValueOf<float>(NAN)),
      s2r::MakeArrayMetadata(DataType::kFloat64, {7}, {3}, {s2r::BytesCodec(true), s2r::GzipCodec(5)},
           s2r::FillValueOf<double>(-std::numeric_limits<double>::infinity())),
      s2r::MakeArrayMetadata(DataType::kInt16, {4, 5, 6}, {2, 5, 3}, {s2r::BytesCodec(), s2r::ZstdCodec(3, true), s2r::Crc32cCodec()},
           s2r::FillValueOf<int16_t>(-7)),
      s2r::MakeArrayMetadata(DataType::kUint64, {0}, {4}, {s2r::BytesCodec(), s2r::BloscCodec("zstd", 5, "bitshuffle", 8, 256)},
           s2r::FillValueOf<uint64_t>(~uint64_t(0))),
      s2r::MakeArrayMetadata(DataType::kBool, {}, {}, {s2r::BytesCodec()}, s2r::FillValueOf<bool>(true)),
      s2r::MakeArrayMetadata(DataType::kUint8, {1000, 3}, {100, 3},
           {s2r::ShardingCodec({10, 3}, {s2r::BytesCodec(), s2r::BloscCodec("lz4", 5, "shuffle", 1)})},
           s2r::FillValueOf<uint8_t>(255)),
      s2r::MakeArrayMetadata(DataType::kFloat32, {64, 4, 4}, {16, 4, 4},
           {s2r::ShardingCodec({4, 2, 4}, {s2r::BytesCodec(), s2r::ZstdCodec(1)}), s2r::Crc32cCodec()},
           s2r::FillValueOf<float>(0.1f)),
      s2r::MakeArrayMetadata(DataType::kInt32, {9, 9}, {9, 9},
           {s2r::ShardingCodec({3, 9}, {s2r::ShardingCodec({1, 9}, {s2r::BytesCodec(true)})})},
           s2r::FillValueOf<int32_t>(INT32_MIN)),
  };
  arrays[0].dimension_names = std::vector<std::optional<std::string>>{std::string("step"), std::nullopt};
  arrays[0].attributes = {{"s2r", {{"unit", "m/s"}, {"scene", "box_push"}}}};
  arrays[1].separator = '.';
  arrays[6].codecs[0].index_at_end = false;
  std::vector<std::string> docs;
  for (s2r::ArrayMetadata& m : arrays) {
    m.Validate("seed");
    docs.push_back(s2r::ArrayMetadataToJson(m).dump(2));
  }
  s2r::GroupMetadata g;
  g.attributes = {{"description", "s2r rollout"}, {"worlds", 4096}};
  docs.push_back(s2r::GroupMetadataToJson(g).dump(2));
  for (size_t i = 0; i < docs.size(); ++i) {
    const std::string file = std::string(dir) + "/s2r-" + std::to_string(i) + ".json";
    std::ofstream f(file, std::ios::binary);
    f << docs[i];
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", file.c_str());
      return 1;
    }
  }
  return 0;
}
