// `s2r compare`: two fixture datasets whose episodes overlap by seed, the second with some outcomes
// flipped and one parameter changed in some episodes; every count of the report is recomputed here
// from the fixture's formulas (tests/host/dataset_fixture.h). And the gate and the refusals.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/store/dataset.h"
#include "tests/host/dataset_fixture.h"
#include "tests/host/run_command.h"
#include "tests/host/store_test_util.h"

namespace s2r {
namespace {

// episodes [first, first + n) of the fixture; `changed` flips the outcome of every fifth episode
// (a success becomes a timeout, a failure a success) and doubles the friction of every seventh
bool Flipped(int64_t e) { return e % 5 == 0; }
bool FrictionChanged(int64_t e) { return e % 7 == 0; }

void WriteFixture(const std::string& dir, int64_t first, int64_t n, bool changed) {
  WriteFixtureDataset(dir, first, n, [changed](int64_t e, FixtureEpisode* ep) {
    if (changed && Flipped(e)) {
      ep->view.success = !ep->view.success;
      ep->view.failure_label = ep->view.success ? 0 : 2;
    }
    if (changed && FrictionChanged(e)) ep->params[0] *= 2;
  });
}

CommandResult Compare(const std::string& args) {
  return RunCommand(std::string(S2R_BINARY) + " compare " + args, /*merge_stderr=*/true);
}

TEST(CompareCli, MatchesEpisodesBySeedAndCountsWhatChanged) {
  const std::string dir = FreshDir();
  WriteFixture(dir + "/a", 0, 30, false);
  WriteFixture(dir + "/b", 5, 30, true);  // seeds 1005 .. 1034: 25 shared with a
  CommandResult r = Compare(dir + "/a " + dir + "/b --json --by friction --bins 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json c = nlohmann::json::parse(r.output);
  EXPECT_EQ(c["matched"], 25);
  EXPECT_EQ(c["only_before"], 5);
  EXPECT_EQ(c["only_after"], 5);
  int64_t ok_a = 0, ok_b = 0, fixed = 0, broken = 0, relabelled = 0, friction_differs = 0;
  nlohmann::json broken_seeds = nlohmann::json::array();
  nlohmann::json transitions = nlohmann::json::object();
  auto name = [](bool ok, int32_t label) { return ok ? "success" : label == 1 ? "dropped" : "timeout"; };
  for (int64_t e = 5; e < 30; ++e) {
    FixtureEpisode ep;
    MakeFixtureEpisode(e, &ep);
    const bool a = ep.view.success;
    const int32_t la = ep.view.failure_label;
    const bool b = Flipped(e) ? !a : a;
    const int32_t lb = Flipped(e) ? (b ? 0 : 2) : la;
    ok_a += a;
    ok_b += b;
    fixed += !a && b;
    broken += a && !b;
    if (a && !b) broken_seeds.push_back(1000 + e);
    relabelled += !a && !b && la != lb;
    friction_differs += FrictionChanged(e);
    const std::string from = name(a, la), to = name(b, lb);
    if (!transitions.contains(from)) transitions[from] = nlohmann::json::object();
    transitions[from][to] = transitions[from].value(to, 0) + 1;
  }
  EXPECT_DOUBLE_EQ(c["success_rate"]["before"].get<double>(), double(ok_a) / 25);
  EXPECT_DOUBLE_EQ(c["success_rate"]["after"].get<double>(), double(ok_b) / 25);
  EXPECT_EQ(c["fixed"], fixed);
  EXPECT_EQ(c["broken"], broken);
  EXPECT_GT(fixed, 0);
  EXPECT_GT(broken, 0);
  EXPECT_EQ(c["failure_changed"], relabelled);
  EXPECT_EQ(c["broken_episodes"], broken_seeds) << "their seeds, in order";
  EXPECT_EQ(c["transitions"], transitions);
  ASSERT_EQ(c["params"].size(), 2u);
  EXPECT_EQ(c["params"][0], nlohmann::json({{"name", "friction"}, {"differ", friction_differs}}));
  EXPECT_EQ(c["params"][1], nlohmann::json({{"name", "mass"}, {"differ", 0}}));
  // by before's friction, in two bins: they hold every matched episode and their fixed and broken
  // sum to the totals
  ASSERT_EQ(c["by"].size(), 1u);
  int64_t episodes = 0, bin_fixed = 0, bin_broken = 0;
  for (const auto& b : c["by"][0]["bins"]) {
    episodes += b["episodes"].get<int64_t>();
    bin_fixed += b["fixed"].get<int64_t>();
    bin_broken += b["broken"].get<int64_t>();
  }
  EXPECT_EQ(c["by"][0]["bins"].size(), 2u);
  EXPECT_EQ(episodes, 25);
  EXPECT_EQ(bin_fixed, fixed);
  EXPECT_EQ(bin_broken, broken);

  // the text form, and the gate: more broken than allowed exits 1 after the report
  CommandResult text = Compare(dir + "/a " + dir + "/b");
  EXPECT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("25 episodes matched by seed (5 only before, 5 only after: left out)"), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("broken (success -> failure) " + std::to_string(broken)), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("broken episodes: " + std::to_string(broken_seeds[0].get<int64_t>())), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("differ (episodes): friction (" + std::to_string(friction_differs) + ")"), std::string::npos)
      << text.output;
  EXPECT_EQ(Compare(dir + "/a " + dir + "/b --max-broken " + std::to_string(broken)).exit_code, 0);
  CommandResult gate = Compare(dir + "/a " + dir + "/b --max-broken " + std::to_string(broken - 1));
  EXPECT_EQ(gate.exit_code, 1);
  EXPECT_NE(gate.output.find(std::to_string(broken) + " episodes went from success to failure, more than --max-broken"),
            std::string::npos)
      << gate.output;
  // a dataset compared with itself: nothing fixed or broken, every parameter equal
  const nlohmann::json same = nlohmann::json::parse(Compare(dir + "/a " + dir + "/a --json").output);
  EXPECT_EQ(same["matched"], 30);
  EXPECT_EQ(same["fixed"], 0);
  EXPECT_EQ(same["broken"], 0);
}

// Edits a dataset's root attributes (the s2r record) in place, as another run would have written them.
void EditRecord(const std::string& store, const std::function<void(nlohmann::json*)>& edit) {
  const std::vector<uint8_t> bytes = ReadAll(store + "/zarr.json");
  nlohmann::json doc = nlohmann::json::parse(std::string(bytes.begin(), bytes.end()));
  edit(&doc["attributes"]["s2r"]);
  WriteText(store + "/zarr.json", doc.dump());
}

// What differs between the runs (the code revision and every key of the config), and --select: only
// BEFORE's episodes the selection picks are compared.
TEST(CompareCli, SaysWhatDiffersBetweenTheRunsAndComparesASelection) {
  const std::string dir = FreshDir();
  WriteFixture(dir + "/a", 0, 30, false);
  WriteFixture(dir + "/b", 0, 30, true);
  std::string revision;
  EditRecord(dir + "/a", [&](nlohmann::json* s2r) {
    revision = (*s2r)["generator"]["git_revision"].get<std::string>();
    (*s2r)["generator"]["config"] = {{"seed", "1"}, {"task", {{"name", "push"}, {"params", {{"goal_x", "0.25"}, {"hold_s", "0.2"}}}}}};
  });
  EditRecord(dir + "/b", [](nlohmann::json* s2r) {
    (*s2r)["generator"]["git_revision"] = "feedfacecafe";
    (*s2r)["generator"]["config"] = {{"seed", "1"}, {"task", {{"name", "push"}, {"params", {{"goal_x", "0.3"}}}}}};
  });
  ASSERT_NE(revision, "feedfacecafe");
  CommandResult r = Compare(dir + "/a " + dir + "/b --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json c = nlohmann::json::parse(r.output);
  EXPECT_EQ(c["changes"], nlohmann::json::array({
                              {{"key", "config.task.params.goal_x"}, {"before", "0.25"}, {"after", "0.3"}},
                              {{"key", "config.task.params.hold_s"}, {"before", "0.2"}, {"after", "(not set)"}},
                              {{"key", "git_revision"}, {"before", revision}, {"after", "feedfacecafe"}},
                          }));
  CommandResult text = Compare(dir + "/a " + dir + "/b");
  EXPECT_NE(text.output.find("runs differ in: config.task.params.goal_x 0.25 -> 0.3, config.task.params.hold_s 0.2 -> "
                             "(not set), git_revision " + revision + " -> feedfacecafe\n"),
            std::string::npos)
      << text.output;
  EXPECT_NE(Compare(dir + "/a " + dir + "/a").output.find("runs: the same code, seed, policy, checker, scene and config"),
            std::string::npos);

  // --select on BEFORE: its failures (e % 3 == 0), then a condition on its friction
  for (const std::string select : {"failed", "friction<0.7", "success,mass>=0.2"}) {
    r = Compare(dir + "/a " + dir + "/b --json --select '" + select + "'");
    ASSERT_EQ(r.exit_code, 0) << select << "\n" << r.output;
    c = nlohmann::json::parse(r.output);
    int64_t n = 0, fixed = 0, broken = 0;
    for (int64_t e = 0; e < 30; ++e) {
      const bool ok = e % 3 != 0;
      const double friction = 0.5 + 0.05 * double(e % 10), mass = 0.1 + 0.04 * double(e % 7);
      const bool picked = select == "failed" ? !ok : select == "friction<0.7" ? friction < 0.7 : ok && mass >= 0.2;
      if (!picked) continue;
      ++n;
      fixed += !ok && Flipped(e);
      broken += ok && Flipped(e);
    }
    EXPECT_EQ(c["matched"], n) << select;
    EXPECT_EQ(c["select"], nlohmann::json({{"terms", select}, {"left_out", 30 - n}})) << select;
    EXPECT_EQ(c["only_before"], 0) << select;
    EXPECT_EQ(c["only_after"], 0) << select << ": episodes --select left out are not AFTER's alone";
    EXPECT_EQ(c["fixed"], fixed) << select;
    EXPECT_EQ(c["broken"], broken) << select;
  }
  r = Compare(dir + "/a " + dir + "/b --select 'friction<0'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find(dir + "/a: --select friction<0 picks no episode that " + dir + "/b holds"), std::string::npos)
      << r.output;
  r = Compare(dir + "/a " + dir + "/b --select 'wobbly'");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find(dir + "/a: --select: unknown outcome 'wobbly'"), std::string::npos) << r.output;
}

TEST(CompareCli, RefusesWhatItCannotCompare) {
  const std::string dir = FreshDir();
  WriteFixture(dir + "/a", 0, 10, false);
  WriteFixture(dir + "/far", 100, 10, false);
  CommandResult none = Compare(dir + "/a " + dir + "/far");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.output.find("share no episode"), std::string::npos) << none.output;
  CommandResult missing = Compare(dir + "/a " + dir + "/nowhere");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find(dir + "/nowhere: not an s2r dataset"), std::string::npos) << missing.output;
  // datasets of different tasks
  WriteFixture(dir + "/lift", 0, 10, false);
  EditRecord(dir + "/lift", [](nlohmann::json* s2r) {
    (*s2r)["tasks"] = {{{"name", "lift"}, {"instruction", "lift it"}}, {{"name", "place"}, {"instruction", "place it"}}};
  });
  CommandResult tasks = Compare(dir + "/a " + dir + "/lift");
  EXPECT_EQ(tasks.exit_code, 1);
  EXPECT_NE(tasks.output.find(dir + "/a holds episodes of the task(s) lift, push, " + dir +
                              "/lift of lift, place: episodes of different tasks do not compare"),
            std::string::npos)
      << tasks.output;
  CommandResult column = Compare(dir + "/a " + dir + "/a --by viscosity");
  EXPECT_EQ(column.exit_code, 1);
  EXPECT_NE(column.output.find("viscosity: no such randomized parameter or episode metric"), std::string::npos)
      << column.output;
}

}  // namespace
}  // namespace s2r
