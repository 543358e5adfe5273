// Damaged and unsupported stores: every case must end in a StoreError that names the file at
// fault -- never a crash, never silently wrong data. Includes a small deterministic mutation loop
// over encoded shards and chunks (a smoke test, not a fuzzer).
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "host/store/codecs.h"
#include "host/store/zarr_array.h"
#include "tests/host/store_test_util.h"

namespace s2r {
namespace {

// Runs `read` and returns the StoreError's text after checking that its path is `path`.
template <typename F>
std::string ErrorOf(F read, const std::string& path) {
  try {
    read();
  } catch (const StoreError& e) {
    EXPECT_EQ(e.path(), path) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no StoreError for " << path;
  return "";
}

// An array with one written chunk (or shard) c/0; returns the array path.
std::string OneChunkArray(const std::string& dir, std::vector<CodecConfig> codecs, int64_t n = 64) {
  const std::string path = dir + "/a";
  ZarrArray a = ZarrArray::Create(path, MakeArrayMetadata(DataType::kInt32, {n}, {n}, std::move(codecs)));
  std::vector<int32_t> data(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) data[size_t(i)] = int32_t(i * i % 1000 + 1);
  a.WriteAll(data);
  return path;
}

TEST(StoreBadInput, CorruptedChunkFailsCrc32c) {
  const std::string path = OneChunkArray(FreshDir(), {BytesCodec(), Crc32cCodec()});
  const std::string chunk = path + "/c/0";
  std::vector<uint8_t> bytes = ReadAll(chunk);
  bytes[10] ^= 0x01;
  WriteAllTo(chunk, bytes);
  std::string what = ErrorOf([&] { ZarrArray::Open(path).ReadAllBytes(); }, chunk);
  EXPECT_NE(what.find("crc32c checksum mismatch"), std::string::npos) << what;
}

TEST(StoreBadInput, TruncatedShard) {
  const std::string path = OneChunkArray(FreshDir(), {ShardingCodec({8}, {BytesCodec(), ZstdCodec(1)})});
  const std::string shard = path + "/c/0";
  std::vector<uint8_t> full = ReadAll(shard);
  // Cut below the index size, cut in the middle (the index is now garbage), cut one byte.
  for (size_t keep : {size_t(0), size_t(20), full.size() / 2, full.size() - 1}) {
    WriteAllTo(shard, std::vector<uint8_t>(full.begin(), full.begin() + long(keep)));
    std::string what = ErrorOf([&] { ZarrArray::Open(path).ReadAllBytes(); }, shard);
    EXPECT_NE(what.find("shard"), std::string::npos) << what;
  }
}

TEST(StoreBadInput, ShardIndexPointingOutsideTheShard) {
  // Without a crc32c on the index, a bad offset must be caught by the bounds check.
  CodecConfig sharding = ShardingCodec({8}, {BytesCodec()});
  sharding.index_codecs = {BytesCodec()};
  const std::string path = OneChunkArray(FreshDir(), {sharding});
  const std::string shard = path + "/c/0";
  std::vector<uint8_t> bytes = ReadAll(shard);
  size_t index_at = bytes.size() - 8 * 16;
  std::vector<uint8_t> bad = bytes;
  bad[index_at + 16 * 3 + 15] = 0x7F;  // nbytes of inner chunk 3 becomes huge
  WriteAllTo(shard, bad);
  std::string what = ErrorOf([&] { ZarrArray::Open(path).ReadAllBytes(); }, shard);
  EXPECT_NE(what.find("outside the shard"), std::string::npos) << what;
  bad = bytes;
  bad[index_at + 16 * 2 + 7] = 0x01;  // offset of inner chunk 2 moves far past the end
  WriteAllTo(shard, bad);
  what = ErrorOf([&] { ZarrArray::Open(path).ReadAllBytes(); }, shard);
  EXPECT_NE(what.find("outside the shard"), std::string::npos) << what;
  bad = bytes;
  bad[index_at + 16 * 1 + 8] ^= 0x01;  // nbytes of inner chunk 1 off by one: wrong decoded size
  WriteAllTo(shard, bad);
  what = ErrorOf([&] { ZarrArray::Open(path).ReadAllBytes(); }, shard);
  EXPECT_NE(what.find("expected 32"), std::string::npos) << what;
}

TEST(StoreBadInput, TruncatedOrGarbageCompressedChunks) {
  const std::vector<std::vector<CodecConfig>> chains = {{BytesCodec(), ZstdCodec(3)},
                                                        {BytesCodec(), GzipCodec(6)},
                                                        {BytesCodec(), BloscCodec("lz4", 5, "shuffle", 4)},
                                                        {BytesCodec(), BloscCodec("zstd", 5, "bitshuffle", 4)},
                                                        {BytesCodec()}};
  int i = 0;
  for (const auto& chain : chains) {
    const std::string path = OneChunkArray(FreshDir("_" + std::to_string(i++)), chain, 1000);
    const std::string chunk = path + "/c/0";
    std::vector<uint8_t> full = ReadAll(chunk);
    WriteAllTo(chunk, std::vector<uint8_t>(full.begin(), full.begin() + long(full.size() / 2)));
    ErrorOf([&] { ZarrArray::Open(path).ReadAllBytes(); }, chunk);
    if (chain.size() > 1) {  // raw bytes of the right length are valid data by definition
      WriteAllTo(chunk, std::vector<uint8_t>(full.size(), 0xAB));
      ErrorOf([&] { ZarrArray::Open(path).ReadAllBytes(); }, chunk);
    }
    WriteAllTo(chunk, {});
    ErrorOf([&] { ZarrArray::Open(path).ReadAllBytes(); }, chunk);
  }
}

TEST(StoreBadInput, MalformedOrMissingZarrJson) {
  const std::string dir = FreshDir();
  const std::string file = dir + "/zarr.json";
  WriteText(file, "{\"zarr_format\": 3, \"node_type\": \"array\",");
  std::string what = ErrorOf([&] { ZarrArray::Open(dir); }, file);
  EXPECT_NE(what.find("malformed JSON"), std::string::npos) << what;
  WriteText(file, "[]");
  ErrorOf([&] { ZarrArray::Open(dir); }, file);
  WriteText(file, "{\"zarr_format\": 2, \"node_type\": \"array\"}");
  ErrorOf([&] { ZarrArray::Open(dir); }, file);
  WriteText(file, "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [\"x\"]}");
  what = ErrorOf([&] { ZarrArray::Open(dir); }, file);
  EXPECT_NE(what.find("\"shape\""), std::string::npos) << what;
  ErrorOf([&] { ZarrGroup::Open(dir + "/nothing"); }, dir + "/nothing/zarr.json");
  std::remove(file.c_str());
  WriteText(dir + "/.zarray", "{}");
  what = ErrorOf([&] { ZarrArray::Open(dir); }, file);
  EXPECT_NE(what.find("Zarr v2"), std::string::npos) << what;
}

TEST(StoreBadInput, UnsupportedCodecAndDtypeInAFile) {
  const std::string path = OneChunkArray(FreshDir(), {BytesCodec()});
  const std::string file = path + "/zarr.json";
  nlohmann::json doc = nlohmann::json::parse(ReadAll(file));
  nlohmann::json bad = doc;
  bad["codecs"] =
      nlohmann::json::parse(R"([{"name": "bitround", "configuration": {"keepbits": 4}}, {"name": "bytes"}])");
  WriteText(file, bad.dump());
  std::string what = ErrorOf([&] { ZarrArray::Open(path); }, file);
  EXPECT_NE(what.find("bitround"), std::string::npos) << what;
  bad = doc;
  bad["data_type"] = "complex128";
  WriteText(file, bad.dump());
  what = ErrorOf([&] { ZarrArray::Open(path); }, file);
  EXPECT_NE(what.find("complex128"), std::string::npos) << what;
  bad = doc;
  bad["codecs"].push_back(
      {{"name", "blosc"}, {"configuration", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "magic"}}}});
  WriteText(file, bad.dump());
  what = ErrorOf([&] { ZarrArray::Open(path); }, file);
  EXPECT_NE(what.find("shuffle"), std::string::npos) << what;
}

TEST(StoreBadInput, WrongDecodedSize) {
  const std::string path = OneChunkArray(FreshDir(), {BytesCodec(), ZstdCodec(1)});
  // A valid zstd frame of the wrong length.
  std::vector<uint8_t> short_data(10, 1);
  WriteAllTo(path + "/c/0", EncodeBytesToBytes(ZstdCodec(1), short_data, "mem"));
  std::string what = ErrorOf([&] { ZarrArray::Open(path).ReadAllBytes(); }, path + "/c/0");
  EXPECT_NE(what.find("expected 256"), std::string::npos) << what;
}

TEST(StoreBadInput, RandomMutationsNeverCrash) {
  // Flip, overwrite, truncate and extend encoded chunks; each read must either succeed or throw a
  // StoreError naming the chunk.
  const std::vector<std::vector<CodecConfig>> chains = {
      {ShardingCodec({8}, {BytesCodec(), BloscCodec("lz4", 5, "shuffle", 4)})},
      {ShardingCodec({16}, {BytesCodec(), ZstdCodec(1), Crc32cCodec()})},
      {ShardingCodec({4}, {BytesCodec(), GzipCodec(2)})},
      {BytesCodec(), BloscCodec("zstd", 3, "bitshuffle", 4)},
      {BytesCodec(), GzipCodec(5)},
      {BytesCodec(), ZstdCodec(2, true)}};
  std::mt19937 rng(12345);
  int chain_no = 0, failures = 0, reads = 0;
  for (const auto& chain : chains) {
    const std::string path = OneChunkArray(FreshDir("_" + std::to_string(chain_no++)), chain);
    const std::string chunk = path + "/c/0";
    const std::vector<uint8_t> original = ReadAll(chunk);
    ZarrArray a = ZarrArray::Open(path);
    for (int trial = 0; trial < 150; ++trial) {
      std::vector<uint8_t> bytes = original;
      switch (rng() % 4) {
        case 0:
          bytes[rng() % bytes.size()] ^= uint8_t(1u << (rng() % 8));
          break;
        case 1:
          for (int k = 0; k < 8; ++k) bytes[rng() % bytes.size()] = uint8_t(rng());
          break;
        case 2:
          bytes.resize(rng() % bytes.size());
          break;
        case 3:
          bytes.insert(bytes.begin() + long(rng() % bytes.size()), uint8_t(rng()));
          break;
      }
      WriteAllTo(chunk, bytes);
      ++reads;
      try {
        a.ReadAllBytes();
      } catch (const StoreError& e) {
        ++failures;
        EXPECT_EQ(e.path(), chunk) << e.what();
      }
    }
  }
  EXPECT_GT(failures, reads / 2);  // most mutations are detected
}

}  // namespace
}  // namespace s2r
