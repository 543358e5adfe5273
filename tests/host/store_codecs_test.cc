// The codec chain in memory: every codec round-trips, the byte layouts match the spec (crc32c
// appended little-endian, big-endian bytes, the shard index), and sharding leaves out inner chunks
// that are all fill.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "host/store/codecs.h"
#include "host/store/crc32c.h"
#include "host/store/store_error.h"

namespace s2r {
namespace {

std::vector<uint8_t> RandomishBytes(size_t n, uint32_t seed) {
  // Compressible but not trivial: runs of small values with noise.
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = uint8_t((i / 16) % 7 + (rng() % 4 == 0 ? rng() % 256 : 0));
  return out;
}

TEST(StoreCodecs, BytesToBytesRoundTrip) {
  const std::vector<CodecConfig> codecs = {BloscCodec("lz4", 5, "shuffle", 4),
                                           BloscCodec("zstd", 3, "bitshuffle", 8),
                                           BloscCodec("blosclz", 9, "noshuffle", 0),
                                           BloscCodec("lz4hc", 1, "shuffle", 2, 256),
                                           ZstdCodec(0),
                                           ZstdCodec(19, true),
                                           ZstdCodec(-5),
                                           GzipCodec(0),
                                           GzipCodec(9),
                                           Crc32cCodec()};
  for (size_t n : {size_t(0), size_t(1), size_t(1000), size_t(1) << 20}) {
    std::vector<uint8_t> data = RandomishBytes(n, uint32_t(n));
    for (const CodecConfig& c : codecs) {
      std::vector<uint8_t> enc = EncodeBytesToBytes(c, data, "mem");
      EXPECT_EQ(DecodeBytesToBytes(c, enc, "mem"), data) << c.Name() << " n=" << n;
    }
  }
}

TEST(StoreCodecs, Crc32cAppendsLittleEndianChecksum) {
  std::vector<uint8_t> data = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  std::vector<uint8_t> enc = EncodeBytesToBytes(Crc32cCodec(), data, "mem");
  ASSERT_EQ(enc.size(), 13u);
  EXPECT_EQ(std::vector<uint8_t>(enc.end() - 4, enc.end()), (std::vector<uint8_t>{0x83, 0x92, 0x06, 0xE3}));
}

TEST(StoreCodecs, GzipWritesGzipMembers) {
  std::vector<uint8_t> enc = EncodeBytesToBytes(GzipCodec(5), RandomishBytes(100, 1), "mem");
  ASSERT_GE(enc.size(), 2u);
  EXPECT_EQ(enc[0], 0x1f);
  EXPECT_EQ(enc[1], 0x8b);
  // Two concatenated members decode to both contents.
  std::vector<uint8_t> a = RandomishBytes(50, 2), b = RandomishBytes(70, 3);
  std::vector<uint8_t> two = EncodeBytesToBytes(GzipCodec(1), a, "mem");
  std::vector<uint8_t> eb = EncodeBytesToBytes(GzipCodec(1), b, "mem");
  two.insert(two.end(), eb.begin(), eb.end());
  std::vector<uint8_t> ab = a;
  ab.insert(ab.end(), b.begin(), b.end());
  EXPECT_EQ(DecodeBytesToBytes(GzipCodec(1), two, "mem"), ab);
}

TEST(StoreCodecs, BigEndianBytesSwapsEachElement) {
  std::vector<uint32_t> data = {0x01020304u, 0xA0B0C0D0u};
  std::vector<uint8_t> enc = EncodeChunk({BytesCodec(true)}, DataType::kUint32, {2}, FillValueOf<uint32_t>(0),
                                         reinterpret_cast<const uint8_t*>(data.data()), "mem");
  EXPECT_EQ(enc, (std::vector<uint8_t>{1, 2, 3, 4, 0xA0, 0xB0, 0xC0, 0xD0}));
  std::vector<uint32_t> back(2);
  DecodeChunk({BytesCodec(true)}, DataType::kUint32, {2}, FillValueOf<uint32_t>(0), enc.data(), enc.size(),
              reinterpret_cast<uint8_t*>(back.data()), "mem");
  EXPECT_EQ(back, data);
}

TEST(StoreCodecs, ShardLayoutAndMissingInnerChunks) {
  // A 4x4 int16 shard of 2x2 inner chunks; inner chunk (0,1) is all fill and must be left out.
  const FillValue fill = FillValueOf<int16_t>(-1);
  std::vector<int16_t> shard(16);
  for (int i = 0; i < 16; ++i) shard[i] = int16_t(i);
  for (int r = 0; r < 2; ++r) {
    for (int c = 2; c < 4; ++c) shard[r * 4 + c] = -1;
  }
  for (bool at_end : {true, false}) {
    CodecConfig sharding = ShardingCodec({2, 2}, {BytesCodec(), Crc32cCodec()});
    sharding.index_at_end = at_end;
    std::vector<uint8_t> enc =
        EncodeChunk({sharding}, DataType::kInt16, {4, 4}, fill, reinterpret_cast<const uint8_t*>(shard.data()), "mem");
    // Three inner chunks of 2*2*2 + 4 bytes, plus the index of 4 * 16 + 4 bytes.
    ASSERT_EQ(enc.size(), 3u * 12 + 68);
    const uint8_t* index = at_end ? enc.data() + enc.size() - 68 : enc.data();
    EXPECT_EQ(Crc32c(index, 64),
              uint32_t(index[64]) | uint32_t(index[65]) << 8 | uint32_t(index[66]) << 16 | uint32_t(index[67]) << 24);
    uint64_t entries[8];
    std::memcpy(entries, index, 64);
    EXPECT_EQ(entries[0], at_end ? 0u : 68u);  // chunk (0,0) first
    EXPECT_EQ(entries[1], 12u);
    EXPECT_EQ(entries[2], ~uint64_t(0));  // chunk (0,1) missing
    EXPECT_EQ(entries[3], ~uint64_t(0));
    std::vector<int16_t> back(16, 0);
    DecodeChunk({sharding}, DataType::kInt16, {4, 4}, fill, enc.data(), enc.size(),
                reinterpret_cast<uint8_t*>(back.data()), "mem");
    EXPECT_EQ(back, shard);
  }
}

TEST(StoreCodecs, NestedShardingAndCompressedShards) {
  const FillValue fill = FillValueOf(0.0);
  std::vector<double> data(8 * 6);
  for (size_t i = 0; i < data.size(); ++i) data[i] = i % 5 == 0 ? 0.0 : double(i) / 3.0;
  CodecConfig inner = ShardingCodec({2, 3}, {BytesCodec(true), ZstdCodec(2)});
  CodecConfig outer = ShardingCodec({4, 6}, {inner, GzipCodec(3)});
  std::vector<CodecConfig> chain = {outer, Crc32cCodec()};
  std::vector<uint8_t> enc =
      EncodeChunk(chain, DataType::kFloat64, {8, 6}, fill, reinterpret_cast<const uint8_t*>(data.data()), "mem");
  std::vector<double> back(data.size());
  DecodeChunk(chain, DataType::kFloat64, {8, 6}, fill, enc.data(), enc.size(), reinterpret_cast<uint8_t*>(back.data()),
              "mem");
  EXPECT_EQ(back, data);
}

TEST(StoreCodecs, TransposeStoresTheChunkPermuted) {
  // A 2x3x4 uint16 chunk, order [1, 2, 0]: the encoded array is 3x4x2, element (j, k, i) = in (i, j, k).
  std::vector<uint16_t> data(24);
  for (int i = 0; i < 24; ++i) data[i] = uint16_t(100 + i);
  const std::vector<CodecConfig> chain = {TransposeCodec({1, 2, 0}), BytesCodec()};
  std::vector<uint8_t> enc = EncodeChunk(chain, DataType::kUint16, {2, 3, 4}, FillValueOf<uint16_t>(0),
                                         reinterpret_cast<const uint8_t*>(data.data()), "mem");
  ASSERT_EQ(enc.size(), 48u);
  std::vector<uint16_t> stored(24);
  std::memcpy(stored.data(), enc.data(), 48);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) EXPECT_EQ(stored[(j * 4 + k) * 2 + i], data[(i * 3 + j) * 4 + k]);
    }
  }
  std::vector<uint16_t> back(24);
  DecodeChunk(chain, DataType::kUint16, {2, 3, 4}, FillValueOf<uint16_t>(0), enc.data(), enc.size(),
              reinterpret_cast<uint8_t*>(back.data()), "mem");
  EXPECT_EQ(back, data);
}

TEST(StoreCodecs, TransposeInsideShardsRoundTrips) {
  // The dataset writer's step-array layout: inner chunks [rows, 3, 13] stored column by column,
  // blosc-shuffled and checksummed, in a shard of two of them; every permutation of a rank-3 chunk.
  const FillValue fill = FillValueOf(0.0f);
  std::vector<float> data(8 * 3 * 13);
  for (size_t i = 0; i < data.size(); ++i) data[i] = (i % 13 < 4) ? 1.0f : float(i) * 0.25f;
  const std::vector<std::vector<int64_t>> orders = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const auto& order : orders) {
    CodecConfig sharding =
        ShardingCodec({4, 3, 13}, {TransposeCodec(order), BytesCodec(), BloscCodec("lz4", 5, "shuffle", 4), Crc32cCodec()});
    std::vector<uint8_t> enc = EncodeChunk({sharding}, DataType::kFloat32, {8, 3, 13}, fill,
                                           reinterpret_cast<const uint8_t*>(data.data()), "mem");
    std::vector<float> back(data.size());
    DecodeChunk({sharding}, DataType::kFloat32, {8, 3, 13}, fill, enc.data(), enc.size(),
                reinterpret_cast<uint8_t*>(back.data()), "mem");
    EXPECT_EQ(back, data) << "order " << order[0] << order[1] << order[2];
  }
}

TEST(StoreCodecs, BloscCompressorsAvailable) {
  for (const char* name : {"lz4", "lz4hc", "blosclz", "zstd", "zlib"}) EXPECT_TRUE(BloscHasCompressor(name)) << name;
  EXPECT_FALSE(BloscHasCompressor("nosuch"));
}

}  // namespace
}  // namespace s2r
