// Bad input made by mutating good input at random: sweep configs, MJCF scenes, CSV files; since
// stop 50 also a sweep config with every optional section, fit files, sysid configs and the robot
// models of configs/robots. Run once at 3,000 mutations per sweep config, 2,000 per robot model,
// 8,000 sysid configs and 20,000 fit files (stop 50): no finding.
//
// Bad sweep configs, made by mutating the built-in ones at random (a value replaced by a number out
// of range, a wrong type, garbage or nothing; a line deleted, repeated or cut short; stray YAML
// syntax): every one either loads or fails with a ConfigError whose message begins with the config
// file's path (or a StoreError naming it) -- never another exception type (a yaml-cpp or nlohmann
// exception escaping, std::out_of_range, std::bad_alloc), never a crash. The sanitizer
// builds (tests/run_all.sh) run the same cases under ASan/UBSan and TSan. Run at 3000 mutations per
// config once (stop 41), this found that a `scene:` path that does not open was reported without
// the config's line and key (now it is, as every other key's error).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "host/scene/mjcf_load.h"
#include "host/scene/scene_source.h"
#include "host/store/store_error.h"
#include "host/sweep/config_yaml.h"
#include "host/sweep/sweep_config.h"
#include "host/trajectory_io.h"
#include "solvers/sysid_config.h"
#include "tests/host/test_dir.h"

namespace s2r {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// The lines joined again, each ended by a newline.
std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// One random edit of a config's text.
std::string Mutate(const std::string& text, std::mt19937& rng) {
  static const std::vector<std::string> values = {
      "-1", "0", "1e308", "-1e308", "nan", ".inf", "-.inf", "abc", "[]", "{}", "", "999999999999999999999",
      "0.5", "true", "[1, 2, 3]", "{a: 1}", "'", "\"", "~", "1e-300", "2147483648", "-2147483649", "[[]]"};
  static const std::vector<std::string> junk = {":", "-", "[", "{", "]", "}", "\t", "'", "\"", "&a", "*a", "!!x",
                                                "#", ",", "?", "|", ">", "%"};
  std::vector<std::string> lines = Lines(text);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  const size_t i = pick(lines.size());
  switch (pick(6)) {
    case 0: {  // a value replaced
      const size_t colon = lines[i].find(": ");
      if (colon != std::string::npos) lines[i] = lines[i].substr(0, colon + 2) + values[pick(values.size())];
      break;
    }
    case 1:  // a line deleted
      lines.erase(lines.begin() + long(i));
      break;
    case 2:  // a line repeated
      lines.insert(lines.begin() + long(i), lines[i]);
      break;
    case 3: {  // stray syntax inserted
      std::string& l = lines[i];
      l.insert(l.empty() ? 0 : pick(l.size() + 1), junk[pick(junk.size())]);
      break;
    }
    case 4: {  // a number scaled or negated
      const size_t colon = lines[i].find(": ");
      if (colon != std::string::npos) {
        const std::string v = lines[i].substr(colon + 2);
        try {
          size_t used = 0;
          const double x = std::stod(v, &used);
          const double f[] = {-1.0, 0.0, 1e6, 1e-6, 2.0};
          if (used == v.size()) lines[i] = lines[i].substr(0, colon + 2) + std::to_string(x * f[pick(5)]);
        } catch (const std::exception&) {
        }
      }
      break;
    }
    default:  // cut short
      lines.resize(i + 1);
      lines[i] = lines[i].substr(0, pick(lines[i].size() + 1));
  }
  return Join(lines);
}

// The outcomes of loading mutated inputs: `load()` returns (loaded) or throws an E whose message
// begins with `prefix` (refused); any other exception fails the test. `input` (the text loaded,
// labelled) goes with a failure.
struct Outcomes {
  int loaded = 0, refused = 0;
  template <typename E, typename F>
  void Expect(F load, const std::string& prefix, const std::string& input) {
    try {
      load();
      ++loaded;
    } catch (const E& e) {
      ++refused;
      EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what() << "\n" << input;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "an exception of another type: " << e.what() << "\n" << input;
    }
  }
};

// builtin:push with the optional sections the built-in configs leave out: action noise (a map per
// actuator, correlated), a distribution centred on a fit file (written beside the config), the
// store's other keys (policy_inputs, checksum, transpose, chunk_episodes), a state checker's
// thresholds for pick_lift. builtin:panda_push brings task.arm.
std::string PushWithEverySection(const std::string& dir) {
  std::ofstream(dir + "/fit.json") << R"({"parameters": [
    {"name": "pusher_mass", "targets": ["body_mass[pusher_x]"], "value": 0.62, "std": 0.02}]})";
  std::string text = LoadSweepConfig("builtin:push").text;
  text = text.substr(0, text.find("store:\n"));
  const size_t observation = text.find("observation:\n");
  text = text.substr(0, observation) + R"(  - name: fitted_mass
    targets: ["body_mass[pusher_x]"]
    distribution: truncnormal
    fit: {file: fit.json, parameter: pusher_mass, k: 3}
)" + text.substr(observation);
  text += R"(action_noise:
  std: {act_x: 0.004, act_y: 0.002}
  time_constant_s: 0.1
store:
  chunk_steps: 1024
  shard_steps: 4096
  chunk_episodes: 64
  compressor: blosc-zstd
  level: 3
  checksum: false
  transpose: false
  policy_inputs: true
)";
  return text;
}

std::string PickLiftWithStateChecker() {
  std::string text = LoadSweepConfig("builtin:pick_lift").text;
  const std::string task = "task:\n";
  const size_t at = text.find(task) + task.size();
  return text.substr(0, at) +
         "  state_checker: {touch_force: 0.5, closed_target: 0.01, lift_gain: 0.02, put_down_gain: 0.01, "
         "still_tol: 0.002}\n  params: {grasp_height: 0.1}\n" +
         text.substr(at);
}

TEST(BadInputMutation, EveryMutatedBuiltinConfigLoadsOrFailsNamingTheFile) {
  const std::string dir = TestDir();
  const std::string path = dir + "/mutated.yaml";
  std::mt19937 rng(41);
  int loaded = 0, refused = 0;
  const std::vector<std::string> bases = {LoadSweepConfig("builtin:push").text, LoadSweepConfig("builtin:pick_lift").text,
                                          LoadSweepConfig("builtin:peg_insert").text, PushWithEverySection(dir),
                                          PickLiftWithStateChecker(), LoadSweepConfig("builtin:panda_push").text};
  for (const std::string& base : bases) {
    {  // the unmutated base loads (so the mutations start from a good config)
      std::ofstream(path) << base;
      EXPECT_NO_THROW(LoadSweepConfig(path)) << base;
    }
    for (int k = 0; k < 200; ++k) {
      std::string text = Mutate(base, rng);
      if (k % 3 == 2) text = Mutate(text, rng);  // some with two edits
      std::ofstream(path) << text;
      try {
        LoadSweepConfig(path);
        ++loaded;
      } catch (const ConfigError& e) {
        ++refused;
        EXPECT_EQ(std::string(e.what()).rfind(path, 0), 0u) << e.what() << "\nconfig:\n" << text;
      } catch (const StoreError& e) {
        ++refused;
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what() << "\nconfig:\n" << text;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "an exception of another type: " << e.what() << "\nconfig:\n" << text;
      }
    }
  }
  // the mutations reach both sides
  EXPECT_GT(loaded, 30);
  EXPECT_GT(refused, 100);
}

// The same for scenes: random mutations of the built-in MJCF scenes (an attribute's value replaced,
// an element's line deleted or repeated, the text cut short, stray XML syntax) either load or fail
// with a LoadError that begins with the scene's name, never another exception or a crash (8000
// mutations per scene found nothing, stop 41).
std::string MutateXml(const std::string& text, std::mt19937& rng) {
  static const std::vector<std::string> values = {"-1", "0", "1e308", "nan", "inf", "abc", "", "1 2", "1 2 3 4 5 6 7 8 9",
                                                  "0 0 0 0", "-0.1 -0.1 -0.1", "1e-300", "2147483648", "&", "<"};
  static const std::vector<std::string> junk = {"<", ">", "/", "\"", "=", "&", "<!--", "]]>", "<x>", "</body>"};
  std::vector<std::string> lines = Lines(text);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  const size_t i = pick(lines.size());
  std::string& l = lines[i];
  switch (pick(5)) {
    case 0: {  // an attribute value replaced: the k-th ="..." of the line
      std::vector<size_t> at;
      for (size_t p = l.find("=\""); p != std::string::npos; p = l.find("=\"", p + 1)) at.push_back(p + 2);
      if (at.empty()) break;
      const size_t start = at[pick(at.size())], end = l.find('"', start);
      if (end != std::string::npos) l = l.substr(0, start) + values[pick(values.size())] + l.substr(end);
      break;
    }
    case 1:
      lines.erase(lines.begin() + long(i));
      break;
    case 2:
      lines.insert(lines.begin() + long(i), l);
      break;
    case 3:
      l.insert(l.empty() ? 0 : pick(l.size() + 1), junk[pick(junk.size())]);
      break;
    default:
      lines.resize(i + 1);
      lines[i] = lines[i].substr(0, pick(lines[i].size() + 1));
  }
  return Join(lines);
}

TEST(BadInputMutation, EveryMutatedBuiltinSceneLoadsOrFailsNamingTheFile) {
  std::mt19937 rng(41);
  Outcomes out;
  for (const char* name : {"builtin:box_push", "builtin:pick_lift", "builtin:peg_insert", "builtin:stack5"}) {
    const std::string base = LoadScene(name).source_text;
    ASSERT_FALSE(base.empty()) << name;
    for (int k = 0; k < 150; ++k) {
      std::string text = MutateXml(base, rng);
      if (k % 3 == 2) text = MutateXml(text, rng);
      out.Expect<LoadError>([&] { LoadMjcfString(text, "mutated.xml"); }, "mutated.xml", "scene:\n" + text);
    }
  }
  EXPECT_GT(out.loaded, 30);
  EXPECT_GT(out.refused, 100);
}

// A fit file (what `s2r sysid --out` writes) that a sweep config centres a distribution on, mutated
// byte by byte: the config loads or fails with a ConfigError naming the config or the fit file.
TEST(BadInputMutation, EveryMutatedFitFileLoadsOrFailsNamingAFile) {
  const std::string dir = TestDir();
  const std::string config = dir + "/push.yaml";
  std::ofstream(config) << PushWithEverySection(dir);
  std::string base;
  {
    std::ifstream in(dir + "/fit.json", std::ios::binary);
    base.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  static const std::vector<std::string> junk = {"{", "}", "[", "]", ",", ":", "\"", "-", "1e999", "nan", "null", "true",
                                                "0", "\\", "\xff", std::string(1, '\0'), "\"name\": 1,"};
  std::mt19937 rng(50);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  Outcomes out;
  for (int k = 0; k < 400; ++k) {
    std::string text = base;
    for (int edits = 1 + int(pick(2)); edits > 0; --edits) {
      const size_t at = pick(text.size() + 1);
      switch (pick(3)) {
        case 0:
          text.insert(at, junk[pick(junk.size())]);
          break;
        case 1:
          text.erase(std::min(at, text.size()), 1 + pick(4));
          break;
        default:
          text = text.substr(0, at);
      }
    }
    std::ofstream(dir + "/fit.json", std::ios::binary) << text;
    out.Expect<ConfigError>([&] { LoadSweepConfig(config); }, dir + "/", "fit:\n" + text);
  }
  EXPECT_GT(out.loaded, 0);  // few byte edits leave valid JSON
  EXPECT_GT(out.refused, 300);
}

// The same for system-identification configs (solvers/sysid_config.cc): one that sets every key,
// written a key per line, over two recordings of the test scene's linear drive. Every outcome
// is a config or a ConfigError that begins with the config's path or a recording's (the
// recordings it names, the scene it loads).
TEST(BadInputMutation, EveryMutatedSysidConfigLoadsOrFailsNamingAFile) {
  const std::string dir = TestDir();
  const std::string path = dir + "/mutated.yaml";
  for (const char* name : {"a.csv", "b.csv"}) {
    std::ofstream csv(dir + "/" + name);
    csv << "time,cmd,x,junk\n";
    for (int k = 0; k <= 50; ++k) csv << 0.02 * k << "," << 0.1 * (k / 10 % 2) << "," << 0.001 * k << ",7\n";
  }
  const std::string base = "scene: " + std::string(S2R_SOURCE_DIR) + R"(/configs/scenes/test/linear_drive.xml
description: the linear drive's gain and damping
parameters:
  - name: kp
    targets: ["actuator_kp[drive]"]
    initial: 100
    bounds: [10, 1000]
    scale: log
    fd_step: 0.001
  - name: damping
    targets: ["joint_damping[slide]"]
    initial: 5
    bounds: [0, 50]
    prior: {mean: 5, std: 2}
data:
  train: [a.csv]
  held_out: [b.csv]
  time_column: time
  ignore_columns: [junk]
actions: {drive: cmd}
observations:
  - quantity: "joint_qpos[slide]"
    column: x
    noise: 0.001
    weight: 2
window:
  length_s: 0.2
  start_state: recorded
  velocity_half_width: 2
loss: {type: huber, scale: 2}
solver:
  max_iterations: 20
  starts: 2
  scan: 4
  differences: central
  cost_tolerance: 1e-9
identifiability:
  max_relative_std: 0.5
  max_correlation: 0.99
)";
  {
    std::ofstream(path) << base;
    EXPECT_NO_THROW(LoadSysidConfig(path)) << base;
  }
  std::mt19937 rng(50);
  Outcomes out;
  for (int k = 0; k < 300; ++k) {
    std::string text = Mutate(base, rng);
    if (k % 3 == 2) text = Mutate(text, rng);
    std::ofstream(path) << text;
    out.Expect<ConfigError>([&] { LoadSysidConfig(path); }, dir + "/", "config:\n" + text);
  }
  EXPECT_GT(out.loaded, 30);
  EXPECT_GT(out.refused, 100);
}

// And for the robot models users bring (configs/robots: Menagerie's MJX Panda, UR5e with the 2F-85,
// Kinova Gen3 with its convex hulls, robosuite's Lift scene with STL meshes, the 2F-85 alone with
// its tendon and equality constraints): the folder copied into the test's directory, one of its
// files mutated, its scene loaded from the file. <include>, <default> classes, meshes, keyframes,
// tendons and equalities are all on this path, which the built-in scenes do not take. Every
// outcome is a model or a LoadError that begins with a file of the copied folder.
TEST(BadInputMutation, EveryMutatedRobotModelLoadsOrFailsNamingAFile) {
  namespace fs = std::filesystem;
  const std::string dir = TestDir();
  struct Robot {
    const char* folder;
    const char* mutated;  // the file mutated
    const char* loaded;   // the file loaded (it may include the mutated one)
  };
  const Robot robots[] = {{"franka_emika_panda", "mjx_panda_s2r.xml", "scene_s2r.xml"},
                          {"ur5e_2f85", "ur5e_2f85.xml", "scene.xml"},
                          {"kinova_gen3", "gen3.xml", "scene.xml"},
                          {"robosuite_panda", "lift_panda.xml", "lift_panda.xml"},
                          {"robotiq_2f85", "2f85_s2r.xml", "2f85_s2r.xml"}};
  std::mt19937 rng(50);
  Outcomes out;
  for (const Robot& r : robots) {
    const std::string from = std::string(S2R_SOURCE_DIR) + "/configs/robots/" + r.folder;
    const std::string to = dir + "/" + r.folder;
    fs::copy(from, to, fs::copy_options::recursive);
    std::string base;
    {
      std::ifstream in(from + "/" + r.mutated, std::ios::binary);
      base.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    ASSERT_FALSE(base.empty()) << from << "/" << r.mutated;
    EXPECT_NO_THROW(LoadMjcfFile(to + "/" + r.loaded)) << r.folder;
    for (int k = 0; k < 60; ++k) {
      std::string text = MutateXml(base, rng);
      if (k % 3 == 2) text = MutateXml(text, rng);
      std::ofstream(to + "/" + r.mutated, std::ios::binary) << text;
      out.Expect<LoadError>([&] { LoadMjcfFile(to + "/" + r.loaded); }, to + "/", std::string(r.mutated) + ":\n" + text);
    }
  }
  EXPECT_GT(out.loaded, 30);
  EXPECT_GT(out.refused, 60);
}

// And for CSV files (actions, recordings): a small table mutated at random (a cell replaced by
// garbage, a non-finite number or nothing, a separator added or removed, a line deleted, repeated or
// cut short, bytes that are not text) reads or fails with an InputError naming the file (20000
// mutations found nothing, stop 41).
TEST(BadInputMutation, EveryMutatedCsvReadsOrFailsNamingTheFile) {
  const std::string dir = TestDir();
  const std::string path = dir + "/mutated.csv";
  std::string base = "time,act_x,act_y\n";
  for (int r = 0; r < 6; ++r) base += std::to_string(0.02 * r) + "," + std::to_string(0.01 * r) + ",-0.5\n";
  static const std::vector<std::string> cells = {"", "nan", "inf", "-inf", "abc", "1e999", "0x10", "1,2", " ", "\"1\"",
                                                 "1e-400", "--1", "1.2.3", "\xff\xfe", std::string(1, '\0'), "#"};
  std::mt19937 rng(41);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  Outcomes out;
  for (int k = 0; k < 600; ++k) {
    std::vector<std::string> lines = Lines(base);
    for (int edits = 1 + int(pick(2)); edits > 0; --edits) {
      const size_t i = pick(lines.size());
      std::string& l = lines[i];
      switch (pick(6)) {
        case 0: {  // a cell replaced
          std::vector<size_t> starts = {0};
          for (size_t c = l.find(','); c != std::string::npos; c = l.find(',', c + 1)) starts.push_back(c + 1);
          const size_t a = starts[pick(starts.size())], b = std::min(l.find(',', a), l.size());
          l = l.substr(0, a) + cells[pick(cells.size())] + l.substr(b);
          break;
        }
        case 1:
          l.insert(pick(l.size() + 1), ",");
          break;
        case 2:
          if (l.find(',') != std::string::npos) l.erase(l.find(','), 1);
          break;
        case 3:
          lines.erase(lines.begin() + long(i));
          break;
        case 4:
          lines.insert(lines.begin() + long(i), l);
          break;
        default:
          lines.resize(i + 1);
          lines[i] = lines[i].substr(0, pick(lines[i].size() + 1));
      }
      if (lines.empty()) lines.push_back("");
    }
    const std::string text = Join(lines);
    std::ofstream(path, std::ios::binary) << text;
    out.Expect<InputError>([&] { ReadCsvTable(path, "recording"); }, path, "csv:\n" + text);
  }
  EXPECT_GT(out.loaded, 30);
  EXPECT_GT(out.refused, 100);
}

}  // namespace
}  // namespace s2r
