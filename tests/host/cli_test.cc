// The s2r binary on good and bad input: exit codes, error messages that name file, line and
// column or element, and no output file left behind when a run fails.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/host/run_command.h"
#include "tests/host/test_dir.h"

namespace s2r {
namespace {

using RunResult = CommandResult;

RunResult RunS2r(const std::string& args) { return RunCommand(std::string(S2R_BINARY) + " " + args); }

std::string TempPath(const std::string& name) { return TestDir() + "/" + name; }

std::string Write(const std::string& name, const std::string& text) {
  std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

std::string Scene() { return std::string(S2R_SOURCE_DIR) + "/configs/scenes/box_push.xml"; }

TEST(Cli, RolloutWritesTrajectoryWithNamedColumns) {
  std::string out = TempPath("traj.csv");
  std::remove(out.c_str());
  std::string actions = Write("actions.csv", "act_x,act_y\n0.1,0\n0.2,0.05\n");
  RunResult r = RunS2r("rollout " + Scene() + " --duration 0.2 --actions " + actions + " --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(out);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("time,box.px,box.py,box.pz,box.qw,box.qx,box.qy,box.qz,box.vx", 0), 0u) << header;
  EXPECT_NE(header.find(",act_x,act_y"), std::string::npos);
  int rows = 0;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, 11) << "t = 0 plus 10 control steps at 50 Hz";
  EXPECT_FALSE(Exists(out + ".tmp"));
}

TEST(Cli, BenchPrintsOneJsonObjectWithTheRequiredKeys) {
  RunResult r = RunS2r("bench --scene builtin:stack5 --worlds 4 --control-steps 3 --repeats 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* key : {"\"scene\"", "\"backend\"", "\"worlds\"", "\"threads\"", "\"control_steps\"",
                          "\"substeps\"", "\"dt\"", "\"control_hz\"", "\"env_steps_per_s\"",
                          "\"contacts_per_step\"", "\"bytes_per_world\"", "\"state_hash\""}) {
    EXPECT_NE(r.output.find(key), std::string::npos) << key << " missing from " << r.output;
  }
  EXPECT_EQ(r.output.front(), '{');
  // stack5 (free boxes, a gantry's slide tree) runs the smallest compiled step
  EXPECT_NE(r.output.find("\"step_variant\":\"slide_trees\""), std::string::npos) << r.output;
}

TEST(Cli, ActionsWithMissingColumnFailWithoutOutput) {
  std::string out = TempPath("bad1.csv");
  std::remove(out.c_str());
  std::string actions = Write("missing.csv", "act_x\n0.1\n");
  RunResult r = RunS2r("rollout " + Scene() + " --duration 0.1 --actions " + actions + " --out " + out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find(actions + ":1:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("act_y"), std::string::npos) << r.output;
  EXPECT_FALSE(Exists(out));
}

TEST(Cli, ActionsWithExtraColumnFailNamingIt) {
  std::string out = TempPath("bad2.csv");
  std::string actions = Write("extra.csv", "act_x,act_y,gripper\n0.1,0,1\n");
  RunResult r = RunS2r("rollout " + Scene() + " --duration 0.1 --actions " + actions + " --out " + out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("column 3 'gripper'"), std::string::npos) << r.output;
  EXPECT_FALSE(Exists(out));
}

TEST(Cli, ActionsWithBadNumberFailNamingLineAndColumn) {
  std::string out = TempPath("bad3.csv");
  std::string actions = Write("nan.csv", "act_x,act_y\n0.1,0\n0.2,nan\n");
  RunResult r = RunS2r("rollout " + Scene() + " --duration 0.1 --actions " + actions + " --out " + out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find(actions + ":3: column 'act_y'"), std::string::npos) << r.output;
  EXPECT_FALSE(Exists(out));
}

TEST(Cli, ActionsWithRaggedRowFail) {
  std::string out = TempPath("bad4.csv");
  std::string actions = Write("ragged.csv", "act_x,act_y\n0.1\n");
  RunResult r = RunS2r("rollout " + Scene() + " --duration 0.1 --actions " + actions + " --out " + out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find(actions + ":2: expected 2 columns, got 1"), std::string::npos) << r.output;
}

TEST(Cli, MalformedSceneFailsWithFileAndLine) {
  std::string scene = Write("broken.xml", "<mujoco>\n  <worldbody>\n    <body name=\"a\">\n  </worldbody>\n</mujoco>\n");
  std::string out = TempPath("bad5.csv");
  std::remove(out.c_str());
  RunResult r = RunS2r("rollout " + scene + " --duration 0.1 --out " + out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find(scene + ":"), std::string::npos) << r.output;
  EXPECT_FALSE(Exists(out));
}

TEST(Cli, UnknownElementFailsNamingIt) {
  std::string scene = Write("tendon.xml", "<mujoco>\n  <worldbody/>\n  <tendon><spatial/></tendon>\n</mujoco>\n");
  RunResult r = RunS2r("rollout " + scene + " --duration 0.1 --out " + TempPath("bad6.csv"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find(scene + ":3:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tendon"), std::string::npos) << r.output;
}

// a robot model: the loader's notes on stderr, the keyframe "home" as the start, its ctrl held
TEST(Cli, RolloutStartsFromHomeAndHoldsItsControls) {
  const std::string scene = std::string(S2R_SOURCE_DIR) + "/configs/robots/franka_emika_panda/scene_s2r.xml";
  const std::string out = TempPath("panda.csv");
  RunResult r = RunS2r("rollout " + scene + " --duration 0.1 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("note: " + std::string(S2R_SOURCE_DIR) +
                          "/configs/robots/franka_emika_panda/mjx_panda_s2r.xml:125: <geom>: "
                          "visual-only mesh geom skipped"),
            std::string::npos)
      << r.output;
  std::ifstream in(out);
  std::string header, line, last;
  std::getline(in, header);
  while (std::getline(in, line)) last = line;
  // the last column is actuator9 (right finger), the one before it actuator8; actuator4 (joint4)
  // holds home's -1.57079
  std::vector<std::string> names, values;
  std::stringstream hs(header), ls(last);
  for (std::string x; std::getline(hs, x, ',');) names.push_back(x);
  for (std::string x; std::getline(ls, x, ',');) values.push_back(x);
  ASSERT_EQ(names.size(), values.size());
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "actuator4") EXPECT_NEAR(std::stod(values[i]), -1.57079, 1e-5);
    if (names[i] == "actuator9") EXPECT_NEAR(std::stod(values[i]), 0.04, 1e-6);
  }

  RunResult bad = RunS2r("rollout " + scene + " --duration 0.1 --keyframe nope --out " + TempPath("x.csv"));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--keyframe: no keyframe named 'nope' (the scene has 'home')"), std::string::npos)
      << bad.output;
  EXPECT_FALSE(Exists(TempPath("x.csv")));
}

TEST(Cli, MissingSceneFileFailsCleanly) {
  RunResult r = RunS2r("bench --scene /nonexistent/scene.xml --worlds 1 --control-steps 1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("/nonexistent/scene.xml"), std::string::npos) << r.output;
}

TEST(Cli, BadBackendAndCountsAreRejected) {
  EXPECT_NE(RunS2r("bench --worlds 0 --control-steps 1").exit_code, 0);
  EXPECT_NE(RunS2r("bench --worlds 1 --backend tpu").exit_code, 0);
  RunResult r = RunS2r("bench --worlds 1 --control-steps 1 --steps-per-launch 0");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--steps-per-launch must be >= 1"), std::string::npos) << r.output;
  EXPECT_NE(RunS2r("rollout builtin:box_push --duration -1 --out " + TempPath("x.csv")).exit_code, 0);
}

// inspect --fields: every address a config can use, with what the engine holds for it
TEST(Cli, InspectFieldsListsAddressesWithNominalValues) {
  RunResult r = RunS2r("inspect --fields builtin:box_push --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* text : {"\"address\": \"body_mass[box]\"", "\"address\": \"geom_friction[floor]\"",
                           "\"address\": \"actuator_kp[act_x]\"", "\"address\": \"gravity\"",
                           "\"field\": \"substeps\"", "\"unit\": \"kg\""}) {
    EXPECT_NE(r.output.find(text), std::string::npos) << text << " missing from " << r.output.substr(0, 400);
  }
  EXPECT_EQ(r.output.find("body_mass[world]"), std::string::npos) << "the world body is not listed";
  RunResult table = RunS2r("inspect --fields builtin:box_push");
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("body_mass[box]"), std::string::npos);
  EXPECT_NE(table.output.find("0.5"), std::string::npos) << "the box's nominal mass";
}

TEST(Cli, InspectFieldsOfABadSceneFailsNamingIt) {
  std::string scene = Write("fields_broken.xml", "<mujoco>\n  <worldbody>\n    <bogus/>\n  </worldbody>\n</mujoco>\n");
  RunResult r = RunS2r("inspect --fields " + scene);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find(scene + ":3:"), std::string::npos) << r.output;
  EXPECT_NE(RunS2r("inspect --fields /nonexistent/scene.xml").exit_code, 0);
  EXPECT_NE(RunS2r("inspect --fields --arrays builtin:box_push").exit_code, 0) << "--fields excludes --arrays";
}

}  // namespace
}  // namespace s2r
