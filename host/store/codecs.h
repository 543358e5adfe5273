// Encoding and decoding of one stored chunk through a Zarr v3 codec chain: bytes (byte order),
// sharding_indexed (inner chunks plus an offset/size index), and the bytes->bytes codecs blosc
// (c-blosc 1.x), zstd, gzip and crc32c. Decoding never trusts its input: every size, offset and
// checksum is checked and a failure is a StoreError naming the file, never a crash.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host/store/dtype.h"
#include "host/store/metadata.h"

namespace s2r {

// Whether the linked c-blosc knows the internal compressor `cname` (lz4, zstd, blosclz, ...).
bool BloscHasCompressor(const std::string& cname);

// Encodes one chunk of `chunk_shape` whose elements (C order, native representation) are at
// `data`. With sharding, inner chunks equal to `fill` everywhere are left out of the shard.
std::vector<uint8_t> EncodeChunk(const std::vector<CodecConfig>& codecs, DataType type,
                                 const std::vector<int64_t>& chunk_shape, const FillValue& fill, const uint8_t* data,
                                 const std::string& path);

// Decodes `n` stored bytes into `out` (Product(chunk_shape) elements, C order, native). Missing
// inner chunks of a shard become `fill`. Throws StoreError naming `path` on any inconsistency.
void DecodeChunk(const std::vector<CodecConfig>& codecs, DataType type, const std::vector<int64_t>& chunk_shape,
                 const FillValue& fill, const uint8_t* encoded, size_t n, uint8_t* out, const std::string& path);

// Builds a sharding_indexed shard of `shard_shape` from inner chunks already encoded with the
// sharding codec's inner codecs (C order of the inner grid; null: absent, reads as fill) and
// appends or prepends the encoded index. Lets a streaming writer compress inner chunks as they
// fill and assemble each shard once.
std::vector<uint8_t> AssembleShard(const CodecConfig& sharding, const std::vector<int64_t>& shard_shape,
                                   const std::vector<const std::vector<uint8_t>*>& inner, const std::string& path);
// Only the encoded index of such a shard; the inner chunks go after it (index at the start) or
// before it (at the end), present ones in order. For writers that write the parts without
// assembling them.
std::vector<uint8_t> EncodeShardIndex(const CodecConfig& sharding, const std::vector<int64_t>& shard_shape,
                                      const std::vector<const std::vector<uint8_t>*>& inner,
                                      const std::string& path);

// The encoded size of a shard's index, and the index decoded (2 x inner chunks: offset, nbytes;
// 2^64-1 twice for an absent inner chunk) with its checksum verified. For partial shard reads.
size_t ShardIndexSize(const CodecConfig& sharding, const std::vector<int64_t>& shard_shape);
std::vector<uint64_t> DecodeShardIndex(const CodecConfig& sharding, const std::vector<int64_t>& shard_shape,
                                       const uint8_t* bytes, size_t n, const std::string& path);

// One bytes->bytes codec, for tests and tools. Decoding refuses to produce more than `limit`
// bytes (a compressed header's claimed size is never trusted beyond it).
std::vector<uint8_t> EncodeBytesToBytes(const CodecConfig& codec, const std::vector<uint8_t>& in,
                                        const std::string& path);
std::vector<uint8_t> DecodeBytesToBytes(const CodecConfig& codec, const std::vector<uint8_t>& in,
                                        const std::string& path, size_t limit = size_t(1) << 36);

}  // namespace s2r
