// libFuzzer harness for the chunk decoder (host/store/codecs.h DecodeChunk): the first input byte
// picks one of the fixed array configurations below, the rest is decoded as one stored chunk of
// it: a sharding_indexed shard (index parsing, offset/size checks, inner chunk decoding) or a
// plain chunk through blosc, zstd, gzip and crc32c chains.
//
// A finding is anything but a clean refusal (StoreError):
//   - a crash, a sanitizer report, an exception of another type (std::bad_alloc included), or an
//     allocation over libFuzzer's -malloc_limit_mb: decoding a chunk of at most a few hundred
//     bytes has no business allocating gigabytes, whatever a header claims;
//   - a decoded chunk that does not survive EncodeChunk + DecodeChunk bit for bit;
//   - a shard on which the partial-read path (ShardIndexSize + DecodeShardIndex, then each inner
//     chunk by its index entry, as ZarrArray::ReadShardedRegion reads) and DecodeChunk of the
//     whole shard disagree: one refuses what the other accepts, or they give different bits.
// The configurations are parsed from zarr.json text, so they pass the same Validate as a store.
// Some shard indexes carry no crc32c so that the fuzzer can reach the offsets behind it.
//
// S2RFuzzWriteSeeds (called by `replay_main --write-seeds DIR`) writes seed inputs encoded by
// s2r's own EncodeChunk; make_seed_corpus.py reads the table below and adds shards zarr-python
// writes for the same configurations (the index is the first byte of every input).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/store/codecs.h"
#include "host/store/dtype.h"
#include "host/store/metadata.h"
#include "host/store/nd_box.h"
#include "host/store/store_error.h"

namespace {

using json = nlohmann::json;

struct Config {
  const char* name;
  s2r::ArrayMetadata meta;
  size_t chunk_bytes = 0;
};

// The configurations: name, then the zarr.json fields that matter (shape == chunk shape, so one
// stored chunk is the whole array). Appending is fine; reordering changes what the corpus means.
const char* const kConfigs[][2] = {
    // 0-6: sharding_indexed shards
    {"shard_f32_bytes",
     R"({"data_type":"float32","shape":[8,4],"fill_value":"NaN","codecs":[{"name":"sharding_indexed",
         "configuration":{"chunk_shape":[2,4],"codecs":[{"name":"bytes","configuration":{"endian":"little"}}],
         "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],
         "index_location":"end"}}]})"},
    {"shard_f32_zstd",
     R"({"data_type":"float32","shape":[8,4],"fill_value":0,"codecs":[{"name":"sharding_indexed",
         "configuration":{"chunk_shape":[2,4],"codecs":[{"name":"bytes","configuration":{"endian":"little"}},
         {"name":"zstd","configuration":{"level":0,"checksum":false}}],
         "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],
         "index_location":"end"}}]})"},
    {"shard_f32_blosc_crc32c",
     R"({"data_type":"float32","shape":[8,4],"fill_value":-1.5,"codecs":[{"name":"sharding_indexed",
         "configuration":{"chunk_shape":[2,4],"codecs":[{"name":"bytes","configuration":{"endian":"little"}},
         {"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":4,"blocksize":0}},
         {"name":"crc32c"}],
         "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],
         "index_location":"end"}}]})"},
    {"shard_u8_rawindex_end",
     R"({"data_type":"uint8","shape":[64],"fill_value":7,"codecs":[{"name":"sharding_indexed",
         "configuration":{"chunk_shape":[8],"codecs":[{"name":"bytes"}],
         "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"end"}}]})"},
    {"shard_i16_rawindex_start_gzip",
     R"({"data_type":"int16","shape":[32],"fill_value":-1,"codecs":[{"name":"sharding_indexed",
         "configuration":{"chunk_shape":[4],"codecs":[{"name":"bytes","configuration":{"endian":"big"}},
         {"name":"gzip","configuration":{"level":1}}],
         "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"start"}}]})"},
    {"shard_u16_nested",
     R"({"data_type":"uint16","shape":[16],"fill_value":0,"codecs":[{"name":"sharding_indexed",
         "configuration":{"chunk_shape":[8],"codecs":[{"name":"sharding_indexed",
           "configuration":{"chunk_shape":[2],"codecs":[{"name":"bytes","configuration":{"endian":"little"}}],
           "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"end"}}],
         "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"end"}}]})"},
    {"shard_f64_scalar",
     R"({"data_type":"float64","shape":[],"fill_value":"Infinity","codecs":[{"name":"sharding_indexed",
         "configuration":{"chunk_shape":[],"codecs":[{"name":"bytes","configuration":{"endian":"little"}}],
         "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"end"}}]})"},
    // 7-13: plain chunks
    {"plain_f32_blosc_lz4",
     R"({"data_type":"float32","shape":[16],"fill_value":0,"codecs":[
         {"name":"bytes","configuration":{"endian":"little"}},
         {"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":4,
          "blocksize":0}}]})"},
    {"plain_f64_blosc_zstd_bitshuffle",
     R"({"data_type":"float64","shape":[8],"fill_value":0,"codecs":[
         {"name":"bytes","configuration":{"endian":"little"}},
         {"name":"blosc","configuration":{"cname":"zstd","clevel":3,"shuffle":"bitshuffle","typesize":8,
          "blocksize":0}}]})"},
    {"plain_i32_zstd",
     R"({"data_type":"int32","shape":[16],"fill_value":0,"codecs":[
         {"name":"bytes","configuration":{"endian":"little"}},
         {"name":"zstd","configuration":{"level":0,"checksum":false}}]})"},
    {"plain_u16_gzip",
     R"({"data_type":"uint16","shape":[16],"fill_value":0,"codecs":[{"name":"bytes","configuration":{"endian":"big"}},
         {"name":"gzip","configuration":{"level":6}}]})"},
    {"plain_u8_crc32c",
     R"({"data_type":"uint8","shape":[16],"fill_value":0,"codecs":[{"name":"bytes"},{"name":"crc32c"}]})"},
    {"plain_i64_blosc_noshuffle_gzip",
     R"({"data_type":"int64","shape":[4],"fill_value":0,"codecs":[
         {"name":"bytes","configuration":{"endian":"little"}},
         {"name":"blosc","configuration":{"cname":"blosclz","clevel":5,"shuffle":"noshuffle","blocksize":0}},
         {"name":"gzip","configuration":{"level":1}}]})"},
    {"plain_f32_zstd_checksum_crc32c",
     R"({"data_type":"float32","shape":[4,4],"fill_value":0,"codecs":[
         {"name":"bytes","configuration":{"endian":"little"}},
         {"name":"zstd","configuration":{"level":3,"checksum":true}},{"name":"crc32c"}]})"},
};
constexpr size_t kNumConfigs = sizeof(kConfigs) / sizeof(kConfigs[0]);

const std::vector<Config>& Configs() {
  static const std::vector<Config> configs = [] {
    std::vector<Config> out;
    for (const auto& entry : kConfigs) {
      json doc = json::parse(entry[1]);
      doc["zarr_format"] = 3;
      doc["node_type"] = "array";
      doc["chunk_grid"] = {{"name", "regular"}, {"configuration", {{"chunk_shape", doc["shape"]}}}};
      doc["chunk_key_encoding"] = {{"name", "default"}};
      Config c{entry[0], s2r::ParseArrayMetadata(doc, std::string("config ") + entry[0])};
      c.chunk_bytes = size_t(c.meta.ChunkElements()) * s2r::DataTypeSize(c.meta.data_type);
      out.push_back(std::move(c));
    }
    return out;
  }();
  return configs;
}

[[noreturn]] void Finding(const Config& c, const std::string& what) {
  std::fprintf(stderr, "\nfuzz_chunk FINDING (config %s): %s\n", c.name, what.c_str());
  std::fflush(stderr);
  std::abort();
}

// Decodes `n` bytes as a chunk of `c`; false on a StoreError.
bool Decode(const Config& c, const uint8_t* data, size_t n, std::vector<uint8_t>* out) {
  out->assign(c.chunk_bytes, 0xA5);
  try {
    s2r::DecodeChunk(c.meta.codecs, c.meta.data_type, c.meta.chunk_shape, c.meta.fill_value, data, n, out->data(),
                     "fuzz/c/0");
  } catch (const s2r::StoreError&) {
    return false;
  }
  return true;
}

// The partial-read path over the whole shard: the index alone, then every inner chunk through its
// own entry (absent: fill), each copied to its place. False on a StoreError or an entry outside
// the shard. Only for shards with no bytes->bytes codec after sharding_indexed.
bool DecodeByIndex(const Config& c, const uint8_t* data, size_t n, std::vector<uint8_t>* out) {
  const s2r::CodecConfig& sh = c.meta.codecs[0];
  const std::vector<int64_t>& shape = c.meta.chunk_shape;
  const std::vector<int64_t>& inner_shape = sh.chunk_shape;
  const size_t elem = s2r::DataTypeSize(c.meta.data_type);
  constexpr uint64_t kMissing = ~uint64_t(0);
  out->assign(c.chunk_bytes, 0x5A);
  try {
    const size_t index_size = s2r::ShardIndexSize(sh, shape);
    if (n < index_size) return false;
    const std::vector<uint64_t> index =
        s2r::DecodeShardIndex(sh, shape, sh.index_at_end ? data + (n - index_size) : data, index_size, "fuzz/c/0");
    std::vector<int64_t> per_shard(shape.size()), idx(shape.size(), 0), start(shape.size()), zeros(shape.size(), 0);
    for (size_t d = 0; d < shape.size(); ++d) per_shard[d] = shape[d] / inner_shape[d];
    if (index.size() != size_t(s2r::Product(per_shard)) * 2) Finding(c, "DecodeShardIndex: wrong entry count");
    std::vector<uint8_t> inner(size_t(s2r::Product(inner_shape)) * elem);
    size_t k = 0;
    do {
      for (size_t d = 0; d < shape.size(); ++d) start[d] = idx[d] * inner_shape[d];
      const uint64_t offset = index[2 * k], nbytes = index[2 * k + 1];
      if (offset == kMissing && nbytes == kMissing) {
        s2r::FillElements(inner.data(), s2r::Product(inner_shape), c.meta.fill_value);
      } else {
        if (offset > n || nbytes > n - offset) return false;
        s2r::DecodeChunk(sh.codecs, c.meta.data_type, inner_shape, c.meta.fill_value, data + offset, size_t(nbytes),
                         inner.data(), "fuzz/c/0");
      }
      s2r::CopyBox(inner.data(), inner_shape, zeros, out->data(), shape, start, inner_shape, elem);
      ++k;
    } while (s2r::NextIndex(&idx, per_shard));
  } catch (const s2r::StoreError&) {
    return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Config& c = Configs()[data[0] % kNumConfigs];
  // An exact-size copy: ASan then sees any read past the chunk's last byte.
  std::vector<uint8_t> encoded(data + 1, data + size);
  std::vector<uint8_t> decoded;
  const bool ok = Decode(c, encoded.data(), encoded.size(), &decoded);
  if (c.meta.IsSharded() && c.meta.codecs.size() == 1) {
    std::vector<uint8_t> partial;
    const bool partial_ok = DecodeByIndex(c, encoded.data(), encoded.size(), &partial);
    if (ok != partial_ok) {
      Finding(c, ok ? "the partial-read path refuses a shard DecodeChunk accepts"
                    : "the partial-read path accepts a shard DecodeChunk refuses");
    }
    if (ok && partial != decoded) Finding(c, "the partial-read path and DecodeChunk decode different bits");
  }
  if (!ok) return 0;

  // What was accepted must encode and decode back to the same bits (fill-valued inner chunks are
  // left out of a shard and read back as fill, which is the same bits again).
  std::vector<uint8_t> again;
  std::vector<uint8_t> reencoded;
  try {
    reencoded = s2r::EncodeChunk(c.meta.codecs, c.meta.data_type, c.meta.chunk_shape, c.meta.fill_value,
                                 decoded.data(), "fuzz/c/0");
  } catch (const s2r::StoreError& e) {
    Finding(c, std::string("EncodeChunk refuses a chunk DecodeChunk produced: ") + e.what());
  }
  if (!Decode(c, reencoded.data(), reencoded.size(), &again)) Finding(c, "DecodeChunk refuses EncodeChunk's output");
  if (again != decoded) Finding(c, "decode -> encode -> decode changes the chunk");
  return 0;
}

// Seeds from s2r's own encoder: for every configuration a chunk of distinct values, one that is
// all fill (an empty shard: index only) and one half fill; files "<dir>/s2r-<config>-<kind>".
extern "C" int S2RFuzzWriteSeeds(const char* dir) {
  const std::vector<Config>& configs = Configs();
  for (size_t i = 0; i < configs.size(); ++i) {
    const Config& c = configs[i];
    const size_t elem = s2r::DataTypeSize(c.meta.data_type);
    const size_t count = c.chunk_bytes / elem;
    for (const char* kind : {"values", "fill", "half"}) {
      std::vector<uint8_t> chunk(c.chunk_bytes);
      for (size_t k = 0; k < count; ++k) {
        bool fill = std::strcmp(kind, "fill") == 0 || (std::strcmp(kind, "half") == 0 && k < count / 2);
        uint8_t* p = chunk.data() + k * elem;
        if (fill) {
          std::memcpy(p, c.meta.fill_value.data(), elem);
        } else if (c.meta.data_type == s2r::DataType::kFloat32) {
          float v = 0.25f * float(k) - 3.0f;
          std::memcpy(p, &v, elem);
        } else if (c.meta.data_type == s2r::DataType::kFloat64) {
          double v = std::sqrt(double(k) + 2.0);
          std::memcpy(p, &v, elem);
        } else {
          uint64_t v = uint64_t(k * 37 + 11);
          std::memcpy(p, &v, elem);
        }
      }
      std::vector<uint8_t> enc = s2r::EncodeChunk(c.meta.codecs, c.meta.data_type, c.meta.chunk_shape,
                                                  c.meta.fill_value, chunk.data(), "seed");
      enc.insert(enc.begin(), uint8_t(i));
      const std::string file = std::string(dir) + "/s2r-" + c.name + "-" + kind;
      std::ofstream f(file, std::ios::binary);
      f.write(reinterpret_cast<const char*>(enc.data()), std::streamsize(enc.size()));
      if (!f) {
        std::fprintf(stderr, "cannot write %s\n", file.c_str());
        return 1;
      }
    }
  }
  return 0;
}
