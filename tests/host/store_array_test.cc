// Arrays and groups on disk: create/open, chunk and shard writes, region reads across chunk and
// shard boundaries, fill for missing chunks, resize, the append protocol (data first, metadata
// after), hierarchy listing, and no temp files left behind.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <vector>

#include "host/store/file_io.h"
#include "host/store/zarr_array.h"
#include "tests/host/store_test_util.h"

namespace s2r {
namespace {

namespace fs = std::filesystem;

std::vector<int32_t> Iota(size_t n, int32_t start = 0) {
  std::vector<int32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + int32_t(i);
  return v;
}

bool AnyTempFiles(const std::string& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().extension() == ".tmp") return true;
  }
  return false;
}

TEST(StoreArray, CreateWriteAllReadAllRegion) {
  const std::string dir = FreshDir();
  for (bool sharded : {false, true}) {
    const std::string path = dir + (sharded ? "/sharded" : "/plain");
    std::vector<CodecConfig> codecs =
        sharded ? std::vector<CodecConfig>{ShardingCodec({2, 3}, {BytesCodec(), BloscCodec("lz4", 5, "shuffle", 4)})}
                : std::vector<CodecConfig>{BytesCodec(), ZstdCodec(1)};
    ZarrArray a = ZarrArray::Create(path, MakeArrayMetadata(DataType::kInt32, {7, 10}, {4, 6}, codecs, FillValueOf<int32_t>(-9)));
    std::vector<int32_t> data = Iota(70, 100);
    a.WriteAll(data);
    ZarrArray b = ZarrArray::Open(path);
    EXPECT_EQ(b.metadata().shape, (std::vector<int64_t>{7, 10}));
    EXPECT_EQ(b.metadata().IsSharded(), sharded);
    EXPECT_EQ(b.ReadAll<int32_t>(), data);
    // A box that crosses chunk (and inner chunk) boundaries.
    std::vector<int32_t> box(3 * 5);
    b.ReadRegion<int32_t>({3, 4}, {3, 5}, box.data(), box.size());
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 5; ++c) EXPECT_EQ(box[r * 5 + c], data[(3 + r) * 10 + 4 + c]) << r << "," << c;
    }
    EXPECT_TRUE(FileExists(path + "/c/1/1"));
    EXPECT_FALSE(AnyTempFiles(path));
  }
}

TEST(StoreArray, WholeChunkWritesAndMissingChunksReadAsFill) {
  const std::string dir = FreshDir();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ZarrArray a = ZarrArray::Create(
      dir + "/a", MakeArrayMetadata(DataType::kFloat32, {5, 5}, {2, 4}, {BytesCodec(), Crc32cCodec()}, FillValueOf(nan)));
  std::vector<float> chunk(8);
  for (int i = 0; i < 8; ++i) chunk[i] = float(i) + 0.5f;
  a.WriteChunk<float>({2, 1}, chunk.data(), chunk.size());  // the corner edge chunk
  EXPECT_TRUE(FileExists(dir + "/a/c/2/1"));
  std::vector<float> all = a.ReadAll<float>();
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 5; ++c) {
      float v = all[r * 5 + c];
      if (r == 4 && c == 4) {
        EXPECT_EQ(v, 0.5f);  // element (0,0) of chunk (2,1)
      } else {
        EXPECT_TRUE(std::isnan(v)) << r << "," << c;
      }
    }
  }
  std::vector<float> back(8);
  a.ReadChunk<float>({2, 1}, back.data(), back.size());
  EXPECT_EQ(back, chunk);
  EXPECT_THROW(a.WriteChunk<float>({0, 0}, chunk.data(), 7), StoreError);  // wrong size
  EXPECT_THROW(a.WriteChunk<float>({0}, chunk.data(), 8), StoreError);     // wrong rank
  std::vector<int32_t> ints(8);
  EXPECT_THROW(a.WriteChunk<int32_t>({0, 0}, ints.data(), 8), StoreError);  // wrong type
}

TEST(StoreArray, WriteAllDropsAllFillChunks) {
  const std::string dir = FreshDir();
  ZarrArray a =
      ZarrArray::Create(dir + "/a", MakeArrayMetadata(DataType::kInt32, {8}, {4}, {BytesCodec()}, FillValueOf<int32_t>(0)));
  a.WriteAll(Iota(8, 1));
  EXPECT_TRUE(FileExists(dir + "/a/c/0"));
  std::vector<int32_t> half = {0, 0, 0, 0, 5, 6, 7, 8};
  a.WriteAll(half);
  EXPECT_FALSE(FileExists(dir + "/a/c/0"));
  EXPECT_EQ(a.ReadAll<int32_t>(), half);
}

TEST(StoreArray, ResizeAndAppendDataFirst) {
  const std::string dir = FreshDir();
  ZarrArray a = ZarrArray::Create(
      dir + "/a", MakeArrayMetadata(DataType::kInt64, {4, 3}, {2, 3}, {BytesCodec(), GzipCodec(1)}, FillValueOf<int64_t>(7)));
  std::vector<int64_t> first(12);
  for (int i = 0; i < 12; ++i) first[i] = i;
  a.WriteAll(first);
  // Append two rows: write the chunk past the shape first; readers still see 4 rows ...
  std::vector<int64_t> extra = {100, 101, 102, 103, 104, 105};
  a.WriteChunk<int64_t>({2, 0}, extra.data(), extra.size());
  EXPECT_EQ(ZarrArray::Open(dir + "/a").ReadAll<int64_t>(), first);
  // ... until the metadata is committed.
  a.Resize({6, 3});
  ZarrArray b = ZarrArray::Open(dir + "/a");
  EXPECT_EQ(b.metadata().shape, (std::vector<int64_t>{6, 3}));
  std::vector<int64_t> all = b.ReadAll<int64_t>();
  ASSERT_EQ(all.size(), 18u);
  EXPECT_EQ(std::vector<int64_t>(all.begin() + 12, all.end()), extra);
  a.Resize({5, 3});
  EXPECT_EQ(ZarrArray::Open(dir + "/a").ReadAll<int64_t>().size(), 15u);
  EXPECT_THROW(a.Resize({5}), StoreError);
  EXPECT_FALSE(AnyTempFiles(dir));
  // Shrinking removes the chunks wholly outside the new shape: growing again shows the fill value,
  // not the old rows; the chunk that still overlaps the shape keeps its data.
  EXPECT_TRUE(FileExists(a.ChunkPath({2, 0})));
  a.Resize({3, 3});
  EXPECT_TRUE(FileExists(a.ChunkPath({1, 0})));
  EXPECT_FALSE(FileExists(a.ChunkPath({2, 0})));
  a.Resize({6, 3});
  std::vector<int64_t> regrown = ZarrArray::Open(dir + "/a").ReadAll<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(regrown.begin(), regrown.begin() + 12), first);
  EXPECT_EQ(std::vector<int64_t>(regrown.begin() + 12, regrown.end()), std::vector<int64_t>(6, 7));
}

// A region read of a sharded array decodes only the inner chunks it touches: a corrupt inner
// chunk elsewhere in the shard does not stop it, and reading across the corrupt one names the file.
TEST(StoreArray, ShardedRegionReadsTouchOnlyTheirInnerChunks) {
  const std::string dir = FreshDir();
  ZarrArray a = ZarrArray::Create(dir + "/a", MakeArrayMetadata(DataType::kInt32, {64, 2}, {32, 2},
                                                   {ShardingCodec({4, 2}, {BytesCodec(), Crc32cCodec()})},
                                                   FillValueOf<int32_t>(-1)));
  std::vector<int32_t> v = Iota(128, 1);
  for (size_t i = 40; i < 48; ++i) v[i] = -1;  // rows 20..23: inner chunk 5 of shard 0 is all fill
  a.WriteAll(v);
  // Region reads of every shape agree with the whole array.
  for (int64_t r0 : {0, 3, 17, 31, 33}) {
    for (int64_t n : {1, 2, 9, 30}) {
      if (r0 + n > 64) continue;
      std::vector<int32_t> got(size_t(n) * 2);
      a.ReadRegion<int32_t>({r0, 0}, {n, 2}, got.data(), got.size());
      EXPECT_EQ(got, std::vector<int32_t>(v.begin() + r0 * 2, v.begin() + (r0 + n) * 2)) << r0 << " " << n;
    }
  }
  std::vector<int32_t> col(10);
  a.ReadRegion<int32_t>({30, 1}, {10, 1}, col.data(), col.size());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(col[size_t(i)], v[size_t((30 + i) * 2 + 1)]);
  // Corrupt the second inner chunk of shard 0 (rows 4..7): each stored inner chunk is 8 data
  // bytes x 4 + 4 checksum bytes = 36 bytes, in order, all-fill chunk 5 left out.
  const std::string shard = a.ChunkPath({0, 0});
  std::vector<uint8_t> bytes = ReadAll(shard);
  bytes[36 + 5] ^= 0x40;
  WriteAllTo(shard, bytes);
  std::vector<int32_t> rows(8);
  a.ReadRegion<int32_t>({0, 0}, {4, 2}, rows.data(), rows.size());  // inner chunk 0: fine
  EXPECT_EQ(rows, std::vector<int32_t>(v.begin(), v.begin() + 8));
  a.ReadRegion<int32_t>({20, 0}, {4, 2}, rows.data(), rows.size());  // the absent one: fill
  EXPECT_EQ(rows, std::vector<int32_t>(8, -1));
  try {
    a.ReadRegion<int32_t>({2, 0}, {4, 2}, rows.data(), rows.size());
    ADD_FAILURE() << "a corrupt inner chunk was read";
  } catch (const StoreError& e) {
    EXPECT_EQ(e.path(), shard);
    EXPECT_NE(std::string(e.what()).find("crc32c"), std::string::npos) << e.what();
  }
  // A shard cut short loses its index: named as truncated.
  bytes.resize(bytes.size() - 3);
  WriteAllTo(shard, bytes);
  EXPECT_THROW(a.ReadRegion<int32_t>({0, 0}, {4, 2}, rows.data(), rows.size()), StoreError);
  // A missing shard reads as fill.
  RemoveFileIfExists(a.ChunkPath({1, 0}));
  a.ReadRegion<int32_t>({40, 0}, {4, 2}, rows.data(), rows.size());
  EXPECT_EQ(rows, std::vector<int32_t>(8, -1));
}

TEST(StoreArray, ScalarAndBoolArrays) {
  const std::string dir = FreshDir();
  ZarrArray s = ZarrArray::Create(dir + "/s", MakeArrayMetadata(DataType::kFloat64, {}, {}, {}, FillValueOf(1.5)));
  EXPECT_EQ(s.ReadAll<double>(), std::vector<double>{1.5});
  s.WriteAll(std::vector<double>{2.5});
  EXPECT_TRUE(FileExists(dir + "/s/c"));
  EXPECT_EQ(ZarrArray::Open(dir + "/s").ReadAll<double>(), std::vector<double>{2.5});

  ZarrArray b = ZarrArray::Create(
      dir + "/b", MakeArrayMetadata(DataType::kBool, {5}, {2}, {ShardingCodec({1}, {BytesCodec()})}, FillValueOf(true)));
  std::vector<uint8_t> bits = {1, 0, 0, 1, 0};
  b.WriteAllBytes(bits.data(), bits.size());
  EXPECT_EQ(ZarrArray::Open(dir + "/b").ReadAllBytes(), bits);
  bool region[2];
  b.ReadRegion<bool>({1}, {2}, region, 2);
  EXPECT_FALSE(region[0]);
  EXPECT_FALSE(region[1]);
}

TEST(StoreArray, ZeroLengthDimension) {
  const std::string dir = FreshDir();
  ZarrArray a = ZarrArray::Create(dir + "/a", MakeArrayMetadata(DataType::kUint8, {0, 4}, {2, 2}, {}, {}));
  EXPECT_TRUE(a.ReadAll<uint8_t>().empty());
  a.WriteAll(std::vector<uint8_t>{});
  a.Resize({2, 4});
  EXPECT_EQ(a.ReadAll<uint8_t>(), std::vector<uint8_t>(8, 0));
}

TEST(StoreArray, GroupsChildrenAndNodeListing) {
  const std::string dir = FreshDir();
  ZarrGroup root = ZarrGroup::Create(dir + "/root", {{"title", "t"}});
  ZarrGroup sub = root.CreateGroup("sub");
  sub.CreateArray("x", MakeArrayMetadata(DataType::kUint8, {3}, {3}, {}, {}));
  root.CreateArray("y", MakeArrayMetadata(DataType::kInt8, {3}, {3}, {}, {}));
  fs::create_directories(dir + "/root/implicit/z");
  ZarrArray::Create(dir + "/root/implicit/z", MakeArrayMetadata(DataType::kInt8, {1}, {1}, {}, {}));
  fs::create_directories(dir + "/root/not_a_node");

  EXPECT_EQ(root.ListChildren(), (std::vector<std::string>{"sub", "y"}));
  EXPECT_EQ(ZarrGroup::Open(dir + "/root").metadata().attributes["title"], "t");
  EXPECT_EQ(root.OpenGroup("sub").ListChildren(), std::vector<std::string>{"x"});
  EXPECT_EQ(root.OpenArray("y").metadata().data_type, DataType::kInt8);

  std::vector<ZarrNode> nodes = ListNodes(dir + "/root");
  std::vector<std::string> paths;
  for (const ZarrNode& n : nodes) paths.push_back(n.path + (n.is_array ? ":a" : ":g"));
  EXPECT_EQ(paths, (std::vector<std::string>{":g", "implicit/z:a", "sub:g", "sub/x:a", "y:a"}));

  EXPECT_THROW(root.CreateGroup("sub"), StoreError);  // exists
  EXPECT_THROW(root.CreateGroup("a/b"), StoreError);
  EXPECT_THROW(root.CreateGroup(".."), StoreError);
  EXPECT_THROW(root.CreateGroup("__x"), StoreError);
  EXPECT_THROW(root.CreateGroup(""), StoreError);
  EXPECT_THROW(ZarrGroup::Open(dir + "/root/sub/x"), StoreError);  // an array
  EXPECT_THROW(ZarrArray::Open(dir + "/root/sub"), StoreError);    // a group
  EXPECT_FALSE(AnyTempFiles(dir));
}

TEST(StoreArray, MetadataFileIsCanonicalJson) {
  const std::string dir = FreshDir();
  ArrayMetadata m =
      MakeArrayMetadata(DataType::kFloat32, {3}, {2}, {BytesCodec()}, FillValueOf(-std::numeric_limits<float>::infinity()));
  m.dimension_names = std::vector<std::optional<std::string>>{"t"};
  ZarrArray::Create(dir + "/a", m);
  nlohmann::json doc = nlohmann::json::parse(ReadAll(dir + "/a/zarr.json"));
  EXPECT_EQ(doc["zarr_format"], 3);
  EXPECT_EQ(doc["node_type"], "array");
  EXPECT_EQ(doc["fill_value"], "-Infinity");
  EXPECT_EQ(doc["dimension_names"], nlohmann::json({"t"}));
  EXPECT_EQ(doc["codecs"][0]["configuration"]["endian"], "little");
  EXPECT_THROW(ZarrArray::Create(dir + "/a", m), StoreError);  // never replaces a node
}

}  // namespace
}  // namespace s2r
