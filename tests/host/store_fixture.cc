// s2r_store_fixture DIR: writes the C++ side of the Zarr interop test (tests/python/
// test_zarr_interop.py) -- a store with sharded and unsharded arrays over every supported codec
// and a spread of data types. Every value comes from a formula the Python test recomputes, so the
// comparison there is bit for bit. Keep the two in sync.
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <vector>

#include "host/store/metadata.h"
#include "host/store/nd_box.h"
#include "host/store/zarr_array.h"

namespace s2r {
namespace {

// Values v(k) for the flat C-order index k, replaced by `fill` where mask(index) holds.
template <typename T>
std::vector<T> Make(const std::vector<int64_t>& shape, const std::function<T(int64_t)>& v,
                    const std::function<bool(const std::vector<int64_t>&)>& mask = nullptr, T fill = T()) {
  std::vector<T> out;
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t k = 0;
  if (Product(shape) == 0) return out;
  do {
    out.push_back(mask && mask(idx) ? fill : v(k));
    ++k;
  } while (NextIndex(&idx, shape));
  return out;
}

// Bool arrays go through bytes (std::vector<bool> is packed).
void WriteBool(ZarrArray array, const std::vector<bool>& v) {
  std::vector<uint8_t> bytes(v.begin(), v.end());
  array.WriteAllBytes(bytes.data(), bytes.size());
}

void WriteFixture(const std::string& root) {
  const float nan32 = std::numeric_limits<float>::quiet_NaN();
  ZarrGroup g = ZarrGroup::Create(root, {{"s2r_fixture", 1}});

  // Unsharded.
  {
    ArrayMetadata m =
        MakeArrayMetadata(DataType::kFloat32, {13, 17}, {5, 6}, {BytesCodec(), ZstdCodec(3, true)}, FillValueOf(nan32));
    m.dimension_names = std::vector<std::optional<std::string>>{"row", "col"};
    m.attributes = {{"units", "m"}};
    g.CreateArray("f32_zstd", m)
        .WriteAll(Make<float>(
            {13, 17}, [](int64_t k) { return float(k) * 0.25f - 7.0f; },
            [](const std::vector<int64_t>& i) { return i[0] < 5 && i[1] < 6; }, nan32));
  }
  g.CreateArray("i64_blosc_lz4_shuffle",
                MakeArrayMetadata(DataType::kInt64, {100}, {16}, {BytesCodec(), BloscCodec("lz4", 5, "shuffle", 8)},
                     FillValueOf<int64_t>(-1)))
      .WriteAll(Make<int64_t>({100}, [](int64_t k) { return k * k * 1000003 - 5000000000LL; }));
  g.CreateArray("u8_blosc_zstd_bitshuffle",
                MakeArrayMetadata(DataType::kUint8, {7, 9, 11}, {4, 4, 4}, {BytesCodec(), BloscCodec("zstd", 3, "bitshuffle", 1)},
                     FillValueOf<uint8_t>(0)))
      .WriteAll(Make<uint8_t>({7, 9, 11}, [](int64_t k) { return uint8_t((k * 7) % 256); }));
  WriteBool(
      g.CreateArray("bool_gzip", MakeArrayMetadata(DataType::kBool, {33}, {8}, {BytesCodec(), GzipCodec(6)}, FillValueOf(false))),
      [] {
        std::vector<bool> v;
        for (int k = 0; k < 33; ++k) v.push_back(k % 3 == 0);
        return v;
      }());
  g.CreateArray("f64_crc32c_bigendian",
                MakeArrayMetadata(DataType::kFloat64, {6, 5}, {4, 4}, {BytesCodec(/*big_endian=*/true), Crc32cCodec()},
                     FillValueOf(-std::numeric_limits<double>::infinity())))
      .WriteAll(Make<double>({6, 5}, [](int64_t k) { return double(k) / 7.0 - 2.5; }));
  g.CreateArray("f32_transpose_zstd",
                MakeArrayMetadata(DataType::kFloat32, {6, 7, 5}, {4, 4, 5}, {TransposeCodec({2, 0, 1}), BytesCodec(), ZstdCodec(2)},
                     FillValueOf(0.0f)))
      .WriteAll(Make<float>({6, 7, 5}, [](int64_t k) { return float(k % 5) - float(k) * 0.125f; }));
  g.CreateArray("scalar_i32", MakeArrayMetadata(DataType::kInt32, {}, {}, {BytesCodec()}, FillValueOf<int32_t>(0)))
      .WriteAll(std::vector<int32_t>{42});

  // Sharded (index: bytes + crc32c at the end of each shard).
  ZarrGroup sharded = g.CreateGroup("sharded");
  sharded
      .CreateArray("f32_blosc_lz4", MakeArrayMetadata(DataType::kFloat32, {20, 35}, {10, 16},
                                         {ShardingCodec({5, 8}, {BytesCodec(), BloscCodec("lz4", 5, "shuffle", 4)})},
                                         FillValueOf(nan32)))
      .WriteAll(Make<float>(
          {20, 35}, [](int64_t k) { return float(k) * 0.5f; },
          [](const std::vector<int64_t>& i) { return i[0] < 5 && i[1] < 8; }, nan32));
  sharded
      .CreateArray("u16_gzip_crc32c",
                   MakeArrayMetadata(DataType::kUint16, {9, 9}, {6, 6},
                        {ShardingCodec({3, 3}, {BytesCodec(), GzipCodec(4), Crc32cCodec()})}, FillValueOf<uint16_t>(7)))
      .WriteAll(Make<uint16_t>({9, 9}, [](int64_t k) { return uint16_t((k * 37) % 1000); }));
  WriteBool(sharded.CreateArray(
                "bool_zstd", MakeArrayMetadata(DataType::kBool, {40}, {16}, {ShardingCodec({4}, {BytesCodec(), ZstdCodec(1, true)})},
                                  FillValueOf(false))),
            [] {
              std::vector<bool> v;
              for (int k = 0; k < 40; ++k) v.push_back(k % 5 == 1);
              return v;
            }());
  sharded
      .CreateArray(
          "i64_blosc_zstd_bitshuffle",
          MakeArrayMetadata(DataType::kInt64, {50}, {20},
               {ShardingCodec({5}, {BytesCodec(), BloscCodec("zstd", 5, "bitshuffle", 8)})}, FillValueOf<int64_t>(0)))
      .WriteAll(Make<int64_t>(
          {50}, [](int64_t k) { return -k * 123456789; },
          [](const std::vector<int64_t>& i) { return i[0] >= 20 && i[0] < 25; }, 0));

  // the dataset writer's step-array layout: [steps, bodies, 13] inner chunks stored column by column
  sharded
      .CreateArray("f32_transpose_blosc_lz4",
                   MakeArrayMetadata(DataType::kFloat32, {25, 3, 13}, {10, 3, 13},
                        {ShardingCodec({5, 3, 13}, {TransposeCodec({1, 2, 0}), BytesCodec(), BloscCodec("lz4", 5, "shuffle", 4),
                                                   Crc32cCodec()})},
                        FillValueOf(nan32)))
      .WriteAll(Make<float>(
          {25, 3, 13}, [](int64_t k) { return k % 13 < 4 ? 1.0f : float(k) * 0.25f; },
          [](const std::vector<int64_t>& i) { return i[0] >= 10 && i[0] < 15; }, nan32));

  // One small array per remaining integer type.
  ZarrGroup misc = g.CreateGroup("misc");
  const std::vector<CodecConfig> zstd = {BytesCodec(), ZstdCodec(0)};
  misc.CreateArray("int8", MakeArrayMetadata(DataType::kInt8, {10}, {4}, zstd, FillValueOf<int8_t>(0)))
      .WriteAll(Make<int8_t>({10}, [](int64_t k) { return int8_t(k - 5); }));
  misc.CreateArray("int16", MakeArrayMetadata(DataType::kInt16, {10}, {4}, zstd, FillValueOf<int16_t>(0)))
      .WriteAll(Make<int16_t>({10}, [](int64_t k) { return int16_t(k * 1000 - 5000); }));
  misc.CreateArray("int32", MakeArrayMetadata(DataType::kInt32, {10}, {4}, zstd, FillValueOf<int32_t>(0)))
      .WriteAll(Make<int32_t>({10}, [](int64_t k) { return int32_t(k * 100000 - 500000); }));
  misc.CreateArray("uint32", MakeArrayMetadata(DataType::kUint32, {10}, {4}, zstd, FillValueOf<uint32_t>(0)))
      .WriteAll(Make<uint32_t>({10}, [](int64_t k) { return uint32_t(k * 400000000LL); }));
  misc.CreateArray("uint64", MakeArrayMetadata(DataType::kUint64, {10}, {4}, zstd, FillValueOf<uint64_t>(0)))
      .WriteAll(Make<uint64_t>({10}, [](int64_t k) { return uint64_t(k) * (uint64_t(1) << 60) + uint64_t(k); }));
}

}  // namespace
}  // namespace s2r

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: s2r_store_fixture DIR\n");
    return 2;
  }
  try {
    s2r::WriteFixture(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "s2r_store_fixture: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
