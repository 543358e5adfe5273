// Zarr v3 metadata documents (zarr.json) for arrays and groups: the typed form s2r works with,
// parsing that rejects anything it cannot honour (naming the file and key), and the canonical JSON
// it writes. Supported: the core data types without float16/complex/raw, the regular chunk grid,
// the default chunk key encoding, and the codecs transpose (leading a chain that does not shard),
// bytes, blosc, zstd, gzip, crc32c and sharding_indexed.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "host/store/dtype.h"

namespace s2r {

enum class CodecKind {
  kTranspose,        // array -> array
  kBytes,            // array -> bytes
  kShardingIndexed,  // array -> bytes
  kBlosc,            // bytes -> bytes
  kZstd,             // bytes -> bytes
  kGzip,             // bytes -> bytes
  kCrc32c,           // bytes -> bytes
};

// One entry of a `codecs` list, parsed. Only the fields of its kind are meaningful.
struct CodecConfig {
  CodecKind kind = CodecKind::kBytes;

  // transpose: a permutation of the chunk's dimensions; dimension i of the encoded array is
  // dimension order[i] of the decoded one.
  std::vector<int64_t> order;

  // bytes: element byte order on disk (ignored for 1-byte types; then omitted when written).
  bool big_endian = false;

  // blosc: c-blosc 1.x parameters. shuffle: 0 noshuffle, 1 shuffle, 2 bitshuffle.
  std::string cname = "lz4";
  int clevel = 5;
  int shuffle = 1;
  int typesize = 0;  // 0: not given (allowed only with noshuffle)
  int64_t blocksize = 0;

  // zstd and gzip: compression level; zstd: whether frames carry a content checksum.
  int level = 0;
  bool checksum = false;

  // sharding_indexed: inner chunk shape, inner codecs, index codecs, index position.
  std::vector<int64_t> chunk_shape;
  std::vector<CodecConfig> codecs;
  std::vector<CodecConfig> index_codecs;
  bool index_at_end = true;

  std::string Name() const;
  bool IsArrayToBytes() const { return kind == CodecKind::kBytes || kind == CodecKind::kShardingIndexed; }
};

// Builders for the codecs s2r writes.
CodecConfig TransposeCodec(std::vector<int64_t> order);
CodecConfig BytesCodec(bool big_endian = false);
CodecConfig BloscCodec(const std::string& cname, int clevel, const std::string& shuffle, int typesize,
                       int64_t blocksize = 0);
CodecConfig ZstdCodec(int level, bool checksum = false);
CodecConfig GzipCodec(int level);
CodecConfig Crc32cCodec();
// Sharding with the usual index codecs (bytes little-endian + crc32c), index at the end.
CodecConfig ShardingCodec(std::vector<int64_t> inner_chunk_shape, std::vector<CodecConfig> inner_codecs);

struct ArrayMetadata {
  std::vector<int64_t> shape;
  DataType data_type = DataType::kFloat32;
  std::vector<int64_t> chunk_shape;  // the regular grid; with sharding, the shard shape
  char separator = '/';              // chunk key separator ("/" or ".")
  FillValue fill_value;              // empty: zero of data_type (set by Validate)
  std::vector<CodecConfig> codecs;   // empty: [bytes little] (set by Validate)
  std::optional<std::vector<std::optional<std::string>>> dimension_names;
  nlohmann::json attributes = nlohmann::json::object();

  // Element count of one stored chunk (shard) and the number of chunks along each dimension.
  int64_t ChunkElements() const;
  std::vector<int64_t> GridShape() const;
  // Whether the array->bytes codec is sharding_indexed (a chain with transposes does not shard).
  bool IsSharded() const { return !codecs.empty() && codecs[0].kind == CodecKind::kShardingIndexed; }
  // The store key of the chunk at grid index `idx`: "c/1/0" ("c" for 0-d arrays).
  std::string ChunkKey(const std::vector<int64_t>& idx) const;

  // Fills defaults and checks consistency (ranks, positive chunk sizes, codec order, sharding
  // divisibility, blosc typesize); throws StoreError naming `path`.
  void Validate(const std::string& path);
};

// An array's metadata from its essentials (codecs empty: [bytes]; fill empty: zero); the rest
// takes the defaults. Validate (or ZarrArray::Create) fills them in and checks the result.
ArrayMetadata MakeArrayMetadata(DataType type, std::vector<int64_t> shape, std::vector<int64_t> chunk_shape,
                                std::vector<CodecConfig> codecs = {}, FillValue fill = {});

// Parses an array zarr.json; `path` (the file) is used in every error.
ArrayMetadata ParseArrayMetadata(const nlohmann::json& doc, const std::string& path);
nlohmann::json ArrayMetadataToJson(const ArrayMetadata& meta);

// Parses a codec list (also used for sharding's inner and index codecs); `where` names the file
// and key path in errors.
std::vector<CodecConfig> ParseCodecs(const nlohmann::json& list, const std::string& where);
nlohmann::json CodecsToJson(const std::vector<CodecConfig>& codecs, DataType type);

struct GroupMetadata {
  nlohmann::json attributes = nlohmann::json::object();
};
GroupMetadata ParseGroupMetadata(const nlohmann::json& doc, const std::string& path);
nlohmann::json GroupMetadataToJson(const GroupMetadata& meta);

// "array" or "group" from a parsed zarr.json, after checking zarr_format == 3.
std::string NodeTypeOf(const nlohmann::json& doc, const std::string& path);

}  // namespace s2r
