// `s2r inspect`: the JSON report's hashes equal SHA-256 over the array contents as C-order
// little-endian bytes, the plain listing exits 0, and a damaged chunk makes it exit 1 naming the
// file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "host/store/dataset.h"
#include "host/store/sha256.h"
#include "host/store/zarr_array.h"
#include "tests/host/dataset_fixture.h"
#include "tests/host/run_command.h"
#include "tests/host/store_test_util.h"

namespace s2r {
namespace {

struct InspectRun {
  int exit_code;
  std::string out;
};

InspectRun Inspect(const std::string& args, bool merge_stderr) {
  CommandResult r = RunCommand(std::string(S2R_BINARY) + " inspect " + args, merge_stderr);
  return {r.exit_code, r.output};
}

TEST(StoreInspectCli, ReportsShapesCodecsAndContentHashes) {
  const std::string dir = FreshDir();
  ZarrGroup root = ZarrGroup::Create(dir + "/s");
  std::vector<uint16_t> a(7 * 5);
  for (size_t i = 0; i < a.size(); ++i) a[i] = uint16_t(i * 1000);
  root.CreateArray("a", MakeArrayMetadata(DataType::kUint16, {7, 5}, {3, 2}, {BytesCodec(true), GzipCodec(1)})).WriteAll(a);
  std::vector<double> b(20, 0.0);
  b[13] = 3.25;
  root.CreateGroup("g")
      .CreateArray("b", MakeArrayMetadata(DataType::kFloat64, {20}, {8}, {ShardingCodec({2}, {BytesCodec()})}))
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
  ZarrArray a = ZarrArray::Create(dir + "/s/x", MakeArrayMetadata(DataType::kInt32, {4}, {4}, {BytesCodec(), Crc32cCodec()}));
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

TEST(StoreInspectCli, SummarisesADataset) {
  const std::string dir = FreshDir() + "/ds";
  WriteFixtureDataset(dir, 0, 30);
  InspectRun run = Inspect(dir + " --json", false);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  nlohmann::json s = nlohmann::json::parse(run.out);
  int64_t steps = 0, successes = 0, dropped = 0, timeout = 0;
  for (int64_t e = 0; e < 30; ++e) {
    steps += FixtureLength(e);
    FixtureEpisode ep;
    MakeFixtureEpisode(e, &ep);
    successes += ep.view.success ? 1 : 0;
    dropped += ep.view.failure_label == 1 ? 1 : 0;
    timeout += ep.view.failure_label == 2 ? 1 : 0;
  }
  EXPECT_EQ(s["episodes"], 30);
  EXPECT_EQ(s["steps"], steps);
  EXPECT_DOUBLE_EQ(s["success_rate"].get<double>(), double(successes) / 30.0);
  EXPECT_EQ(s["failure_counts"], nlohmann::json({{"dropped", dropped}, {"timeout", timeout}}));
  ASSERT_EQ(s["params"].size(), 2u);
  EXPECT_EQ(s["params"][0]["name"], "friction");
  EXPECT_DOUBLE_EQ(s["params"][0]["observed"]["min"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(s["params"][0]["observed"]["max"].get<double>(), 0.95);
  // The text form names the same numbers.
  InspectRun text = Inspect(dir, false);
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("episodes 30, steps " + std::to_string(steps)), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("dropped=" + std::to_string(dropped)), std::string::npos) << text.out;
}

// --by: the outcomes per range of a randomized parameter. The fixture's friction takes 10 values
// (0.5 + 0.05 (e % 10)), three episodes each of 30, so 5 bins of equal count hold two values each;
// its mass takes 7 values, so 10 bins are one per value. Every count is recomputed here from the
// fixture's formulas (success: e % 3 != 0; failures: dropped for odd e, timeout for even).
TEST(StoreInspectCli, BreaksOutcomesDownByAParameter) {
  const std::string dir = FreshDir() + "/ds";
  WriteFixtureDataset(dir, 0, 30);
  InspectRun run = Inspect(dir + " --by friction --by mass --bins 10 --json", false);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  nlohmann::json by = nlohmann::json::parse(run.out)["outcomes_by"];
  ASSERT_EQ(by.size(), 2u);
  // 10 bins asked, friction's 10 values: one bin per value
  ASSERT_EQ(by[0]["bins"].size(), 10u) << by[0].dump();
  run = Inspect(dir + " --by friction --by mass --bins 5 --json", false);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  by = nlohmann::json::parse(run.out)["outcomes_by"];
  ASSERT_EQ(by.size(), 2u);
  const nlohmann::json& friction = by[0];
  EXPECT_EQ(friction["by"], "friction");
  EXPECT_EQ(friction["episodes"], 30);
  ASSERT_EQ(friction["bins"].size(), 5u) << friction.dump();
  for (int k = 0; k < 5; ++k) {
    int64_t n = 0, ok = 0, dropped = 0, timeout = 0;
    for (int64_t e = 0; e < 30; ++e) {
      if (e % 10 / 2 != k) continue;
      ++n;
      ok += e % 3 != 0;
      dropped += e % 3 == 0 && e % 2 == 1;
      timeout += e % 3 == 0 && e % 2 == 0;
    }
    const nlohmann::json& b = friction["bins"][k];
    EXPECT_DOUBLE_EQ(b["low"].get<double>(), 0.5 + 0.05 * (2 * k)) << k;
    EXPECT_DOUBLE_EQ(b["high"].get<double>(), 0.5 + 0.05 * (2 * k + 1)) << k;
    EXPECT_EQ(b["episodes"], n) << k;
    EXPECT_DOUBLE_EQ(b["success_rate"].get<double>(), double(ok) / double(n)) << k;
    EXPECT_EQ(b["failure_counts"], nlohmann::json({{"dropped", dropped}, {"timeout", timeout}})) << k;
    EXPECT_FALSE(b.contains("near_misses")) << "the fixture has no near_miss metric";
  }
  // mass: 7 values of 0.1 + 0.04 (e % 7), fewer than 10 bins asked for: one bin each
  const nlohmann::json& mass = by[1];
  run = Inspect(dir + " --by mass --bins 10 --json", false);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const nlohmann::json mass10 = nlohmann::json::parse(run.out)["outcomes_by"][0];
  ASSERT_EQ(mass10["bins"].size(), 7u) << mass10.dump();
  for (int v = 0; v < 7; ++v) {
    int64_t n = 0;
    for (int64_t e = 0; e < 30; ++e) n += e % 7 == v;
    EXPECT_DOUBLE_EQ(mass10["bins"][v]["low"].get<double>(), 0.1 + 0.04 * v);
    EXPECT_DOUBLE_EQ(mass10["bins"][v]["high"].get<double>(), 0.1 + 0.04 * v);
    EXPECT_EQ(mass10["bins"][v]["episodes"], n) << v;
  }
  int64_t total = 0;
  for (const auto& b : mass["bins"]) total += b["episodes"].get<int64_t>();
  EXPECT_EQ(total, 30) << "every episode in one bin";
  // the text form; an unknown column names the store and what it has; --by is not for --arrays
  InspectRun text = Inspect(dir + " --by friction", false);
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("outcomes by friction (randomized parameter, unit 1; 30 episodes in 5 bins"), std::string::npos)
      << text.out;
  InspectRun bad = Inspect(dir + " --by viscosity", true);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find(dir + ": viscosity: no such randomized parameter or episode metric (the store has: "
                               "friction, mass)"),
            std::string::npos)
      << bad.out;
  EXPECT_NE(Inspect(dir + " --by friction --arrays", true).exit_code, 0);
}

// A column holding NaN (a store another writer made): those episodes are counted apart, in no bin,
// and the others are binned as usual.
TEST(StoreInspectCli, NaNValuesAreCountedApartNotBinned) {
  const std::string dir = FreshDir() + "/ds";
  WriteFixtureDataset(dir, 0, 30, [](int64_t e, FixtureEpisode* ep) {
    if (e % 4 == 0) ep->params[1] = std::nan("");
  });
  InspectRun run = Inspect(dir + " --by mass --bins 3 --json", false);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const nlohmann::json o = nlohmann::json::parse(run.out)["outcomes_by"][0];
  EXPECT_EQ(o["nan_episodes"], 8);  // e = 0, 4, ..., 28
  int64_t binned = 0;
  for (const auto& b : o["bins"]) binned += b["episodes"].get<int64_t>();
  EXPECT_EQ(binned, 22);
  InspectRun text = Inspect(dir + " --by mass", false);
  EXPECT_NE(text.out.find("(8 episodes whose value is NaN are in no bin)"), std::string::npos) << text.out;
}

// --select: outcome terms are alternatives, conditions on parameters and metrics must all hold.
// Every selection is recomputed from the fixture's formulas (seed 1000 + e; success e % 3 != 0;
// dropped for odd e, timeout for even; friction 0.5 + 0.05 (e % 10); mass 0.1 + 0.04 (e % 7)).
TEST(StoreInspectCli, SelectsEpisodesByOutcomeAndCondition) {
  const std::string dir = FreshDir() + "/ds";
  WriteFixtureDataset(dir, 0, 30);
  struct Case {
    std::string select;
    std::function<bool(int64_t)> picks;
  };
  const auto friction = [](int64_t e) { return 0.5 + 0.05 * double(e % 10); };
  const auto mass = [](int64_t e) { return 0.1 + 0.04 * double(e % 7); };
  const std::vector<Case> cases = {
      {"failed", [](int64_t e) { return e % 3 == 0; }},
      {"success", [](int64_t e) { return e % 3 != 0; }},
      {"all", [](int64_t) { return true; }},
      {"dropped", [](int64_t e) { return e % 3 == 0 && e % 2 == 1; }},
      {"dropped,timeout", [](int64_t e) { return e % 3 == 0; }},
      // conditions alone: every episode is a candidate; the values are the float64 column's
      {"friction>=0.7", [&](int64_t e) { return friction(e) >= 0.7; }},
      {"friction>0.6, friction <= 0.8", [&](int64_t e) { return friction(e) > 0.6 && friction(e) <= 0.8; }},
      {"timeout,mass<0.2", [&](int64_t e) { return e % 3 == 0 && e % 2 == 0 && mass(e) < 0.2; }},
      {"success,friction!=0.5,mass==0.1", [&](int64_t e) { return e % 3 != 0 && e % 10 != 0 && e % 7 == 0; }},
      {"dropped,friction<0", [](int64_t) { return false; }},
  };
  for (const Case& c : cases) {
    InspectRun run = Inspect(dir + " --select '" + c.select + "' --json", false);
    ASSERT_EQ(run.exit_code, 0) << c.select << "\n" << run.out;
    const nlohmann::json s = nlohmann::json::parse(run.out)["selection"];
    std::vector<int64_t> want;
    int64_t ok = 0, dropped = 0, timeout = 0;
    for (int64_t e = 0; e < 30; ++e) {
      if (!c.picks(e)) continue;
      want.push_back(1000 + e);
      ok += e % 3 != 0;
      dropped += e % 3 == 0 && e % 2 == 1;
      timeout += e % 3 == 0 && e % 2 == 0;
    }
    EXPECT_EQ(s["episode_indices"].get<std::vector<int64_t>>(), want) << c.select;
    EXPECT_EQ(s["episodes"], int64_t(want.size())) << c.select;
    EXPECT_EQ(s["episodes_in_store"], 30) << c.select;
    nlohmann::json failures = nlohmann::json::object();
    if (dropped > 0) failures["dropped"] = dropped;
    if (timeout > 0) failures["timeout"] = timeout;
    EXPECT_EQ(s["failure_counts"], failures) << c.select;
    if (!want.empty()) EXPECT_DOUBLE_EQ(s["success_rate"].get<double>(), double(ok) / double(want.size())) << c.select;
  }
  // with --by: the breakdown of the selected episodes only, the bins cut at their values
  InspectRun run = Inspect(dir + " --select failed --by friction --bins 10 --json", false);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const nlohmann::json by = nlohmann::json::parse(run.out)["outcomes_by"][0];
  EXPECT_EQ(by["episodes"], 10);  // e = 0, 3, ..., 27: frictions of e % 10 = 0, 3, 6, 9, 2, 5, 8, 1, 4, 7
  int64_t binned = 0;
  for (const auto& b : by["bins"]) {
    binned += b["episodes"].get<int64_t>();
    EXPECT_EQ(b["success_rate"].get<double>(), 0.0);
  }
  EXPECT_EQ(binned, 10);
  // the text form lists the episodes and the command that reruns them
  InspectRun text = Inspect(dir + " --select dropped", false);
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("--select dropped: 5 of 30 episodes"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("episodes 1003 1009 1015 1021 1027\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("--episodes-from " + dir + " --select 'dropped'"), std::string::npos) << text.out;
  // bad selections name the store and the term, exit 1
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"wobbly", "--select: unknown outcome 'wobbly' (outcomes, any of: all, failed, success, near_miss, dropped, "
                 "timeout; or a condition"},
      {"viscosity<2", "--select 'viscosity<2': viscosity: no such randomized parameter or episode metric"},
      {"friction=0.5", "--select 'friction=0.5': the comparison must be one of < <= > >= == !="},
      {"friction<abc", "--select 'friction<abc': 'abc' is not a number"},
      {"friction<", "--select 'friction<': '' is not a number"},
      {">0.5", "--select '>0.5': no parameter or metric name before >"},
      {"failed,", "--select 'failed,': an empty term"},
      {"near_miss", "--select near_miss: the store records no near_miss metric"},
  };
  for (const auto& [select, message] : bad) {
    InspectRun r = Inspect(dir + " --select '" + select + "'", true);
    EXPECT_EQ(r.exit_code, 1) << select << "\n" << r.out;
    EXPECT_NE(r.out.find(dir + ": " + message), std::string::npos) << select << "\n" << r.out;
  }
  EXPECT_NE(Inspect(dir + " --select failed --arrays", true).exit_code, 0);
}

TEST(StoreInspectCli, DamagedDatasetExitsOneNamingTheFile) {
  const std::string dir = FreshDir() + "/ds";
  WriteFixtureDataset(dir, 0, 12);
  const std::string chunk = dir + "/episodes/success/c/0";
  std::vector<uint8_t> bytes = ReadAll(chunk);
  ASSERT_FALSE(bytes.empty());
  bytes[bytes.size() / 2] ^= 0x5a;
  WriteAllTo(chunk, bytes);
  InspectRun run = Inspect(dir, true);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("episodes/success/c/0"), std::string::npos) << run.out;
  // A missing commit record is named too.
  const std::string dir2 = FreshDir("_nocommit") + "/ds";
  WriteFixtureDataset(dir2, 0, 3);
  nlohmann::json doc = nlohmann::json::parse(ReadAll(dir2 + "/zarr.json"));
  doc["attributes"]["s2r"].erase("commit");
  WriteText(dir2 + "/zarr.json", doc.dump());
  run = Inspect(dir2, true);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("commit"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace s2r
