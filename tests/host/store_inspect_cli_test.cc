// `s2r inspect`: the JSON report's hashes equal SHA-256 over the array contents as C-order
// little-endian bytes, the plain listing exits 0, and a damaged chunk makes it exit 1 naming the
// file.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/store/sha256.h"
#include "host/store/zarr_array.h"
#include "tests/host/store_test_util.h"

namespace s2r {
namespace {

struct InspectRun {
  int exit_code;
  std::string out;
};

InspectRun Inspect(const std::string& args, bool merge_stderr) {
  std::string cmd = std::string(S2R_BINARY) + " inspect " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

ArrayMetadata Meta(DataType type, std::vector<int64_t> shape, std::vector<int64_t> chunks,
                   std::vector<CodecConfig> codecs) {
  ArrayMetadata m;
  m.data_type = type;
  m.shape = std::move(shape);
  m.chunk_shape = std::move(chunks);
  m.codecs = std::move(codecs);
  return m;
}

TEST(StoreInspectCli, ReportsShapesCodecsAndContentHashes) {
  const std::string dir = FreshDir();
  ZarrGroup root = ZarrGroup::Create(dir + "/s");
  std::vector<uint16_t> a(7 * 5);
  for (size_t i = 0; i < a.size(); ++i) a[i] = uint16_t(i * 1000);
  root.CreateArray("a", Meta(DataType::kUint16, {7, 5}, {3, 2}, {BytesCodec(true), GzipCodec(1)})).WriteAll(a);
  std::vector<double> b(20, 0.0);
  b[13] = 3.25;
  root.CreateGroup("g")
      .CreateArray("b", Meta(DataType::kFloat64, {20}, {8}, {ShardingCodec({2}, {BytesCodec()})}))
      .WriteAll(b);

  InspectRun run = Inspect(dir + "/s --arrays --json", false);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  nlohmann::json report = nlohmann::json::parse(run.out);
  ASSERT_EQ(report["arrays"].size(), 2u);
  const nlohmann::json& ra = report["arrays"][0];
  EXPECT_EQ(ra["path"], "a");
  EXPECT_EQ(ra["shape"], nlohmann::json({7, 5}));
  EXPECT_EQ(ra["dtype"], "uint16");
  EXPECT_EQ(ra["codecs"], nlohmann::json({"bytes", "gzip"}));
  EXPECT_EQ(ra["sha256"], Sha256Hex(a.data(), a.size() * 2));  // little-endian host: memory order
  const nlohmann::json& rb = report["arrays"][1];
  EXPECT_EQ(rb["path"], "g/b");
  EXPECT_EQ(rb["codecs"], nlohmann::json({"sharding_indexed(bytes)"}));
  EXPECT_EQ(rb["inner_chunk_shape"], nlohmann::json({2}));
  EXPECT_EQ(rb["sha256"], Sha256Hex(b.data(), b.size() * 8));

  InspectRun text = Inspect(dir + "/s --arrays", false);
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("g/b  shape=[20] dtype=float64 codecs=sharding_indexed(bytes) sha256="), std::string::npos)
      << text.out;

  InspectRun listing = Inspect(dir + "/s", false);
  EXPECT_EQ(listing.exit_code, 0);
  EXPECT_NE(listing.out.find("array  g/b"), std::string::npos) << listing.out;
}

TEST(StoreInspectCli, DamagedChunkExitsOneNamingTheFile) {
  const std::string dir = FreshDir();
  ZarrArray a = ZarrArray::Create(dir + "/s/x", Meta(DataType::kInt32, {4}, {4}, {BytesCodec(), Crc32cCodec()}));
  a.WriteAll(std::vector<int32_t>{1, 2, 3, 4});
  std::vector<uint8_t> bytes = ReadAll(dir + "/s/x/c/0");
  bytes[0] ^= 0x80;
  WriteAllTo(dir + "/s/x/c/0", bytes);
  InspectRun run = Inspect(dir + "/s --arrays", true);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find(dir + "/s/x/c/0"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("crc32c"), std::string::npos) << run.out;

  InspectRun missing = Inspect(dir + "/nowhere --arrays", true);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find(dir + "/nowhere"), std::string::npos) << missing.out;
}

}  // namespace
}  // namespace s2r
