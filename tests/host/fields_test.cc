// The field lists (kernels/model_fields.h, state_view.h, workspace.h) and what is expanded from
// them: every parameter round-trips through the engine per world and shared, bounds reject bad
// values naming field, entity and world, addresses resolve by entity name, the generated
// documentation matches the list, and the state and scratch layouts are what the backends use.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/engine.h"
#include "host/scene/fields.h"
#include "host/scene/scene_source.h"
#include "kernels/workspace.h"
#include "tests/host/test_scenes.h"

namespace s2r {
namespace {

constexpr int kWorlds = 3;

// pick_lift has bodies, geoms, joints, actuators and a site; latency up to 3 control steps
Model PickLift() {
  Model m = LoadScene("builtin:pick_lift");
  m.max_latency_steps = 3;
  m.Finalize();
  return m;
}

std::vector<double> Nominal(const Model& m, FieldId id) {
  std::vector<double> out;
  ForEachParam(m, [&](FieldId f, const auto& values) {
    if (f == id) out.assign(values.begin(), values.end());
  });
  return out;
}

// world w's values of a field: valid, and different in every world and from the nominal ones
std::vector<Real> ValidValues(const Model& m, const FieldInfo& f, int w) {
  std::vector<double> v = Nominal(m, IdOf(f));
  const double d = 0.25 * (w + 1);
  for (size_t i = 0; i < v.size(); ++i) {
    int k = static_cast<int>(i) % f.per;
    switch (f.bound) {
      case FieldBound::kPositive:
      case FieldBound::kMovingPositive: v[i] *= 1 + d; break;
      case FieldBound::kNonNegative: v[i] += d; break;
      case FieldBound::kUnitInterval: v[i] = 0.1 * (w + 1); break;
      case FieldBound::kOrdered: v[i] += k == 0 ? -d : d; break;
      case FieldBound::kUnitQuat: v[i] = k == 0 ? std::cos(d) : (k == 3 ? std::sin(d) : 0); break;
      case FieldBound::kLatency: v[i] = (w + 1) % 4; break;
      default: v[i] += d; break;
    }
  }
  return std::vector<Real>(v.begin(), v.end());
}

TEST(Fields, TheListIsConsistent) {
  std::set<std::string> names, customs;
  for (const FieldInfo& f : kModelFields) {
    EXPECT_TRUE(names.insert(f.name).second) << "duplicate field " << f.name;
    EXPECT_GE(f.per, 1) << f.name;
    EXPECT_LE(f.per, 6) << f.name << ": defaults hold 6 values per entity";
    std::vector<std::string> components = ComponentNames(f);
    EXPECT_TRUE(components.empty() || static_cast<int>(components.size()) == f.per) << f.name;
    EXPECT_NE(std::string(f.description), "") << f.name;
    if (f.custom[0] != '\0') {
      EXPECT_EQ(std::string(f.custom).rfind("s2r_", 0), 0u) << f.name;
      EXPECT_TRUE(customs.insert(f.custom).second) << "duplicate custom name " << f.custom;
    }
    if (f.cls == FieldClass::kParam) {
      EXPECT_NE(std::string(f.unit), "") << f.name;
      EXPECT_NE(f.bound, FieldBound::kAny) << f.name;
      // the defaults lie within the bound
      std::vector<double> d(f.defaults, f.defaults + f.per);
      if (f.bound != FieldBound::kOrdered && f.bound != FieldBound::kUnitQuat) {
        for (double x : d) EXPECT_TRUE(WithinScalarBound(f, x)) << f.name;
      }
    }
    if (f.cls == FieldClass::kOption) EXPECT_TRUE(WithinScalarBound(f, f.defaults[0])) << f.name;
  }
  EXPECT_EQ(FindField("body_mass"), &kModelFields[static_cast<int>(FieldId::body_mass)]);
  EXPECT_EQ(FindField("no_such_field"), nullptr);
}

// Every per-world parameter, per world and shared: SetParam then GetParam gives back exactly what
// was set in each world, ClearParam returns every world to the scene's values.
TEST(Fields, EveryParameterRoundTripsPerWorldAndShared) {
  EngineOptions opt;
  opt.nworld = kWorlds;
  opt.threads = 1;
  Engine e(PickLift(), opt);
  const Model& m = e.model();
  int tested = 0;
  for (const FieldInfo& f : kModelFields) {
    if (f.cls != FieldClass::kParam) continue;
    SCOPED_TRACE(f.name);
    std::vector<Real> all;
    for (int w = 0; w < kWorlds; ++w) {
      std::vector<Real> v = ValidValues(m, f, w);
      all.insert(all.end(), v.begin(), v.end());
    }
    ASSERT_NO_THROW(e.SetParam(f.name, all));
    for (int w = 0; w < kWorlds; ++w) EXPECT_EQ(e.GetParam(f.name, w), ValidValues(m, f, w)) << "world " << w;
    e.Step(nullptr);  // the backend takes the per-world field
    e.ClearParam(f.name);
    std::vector<double> nominal = Nominal(m, IdOf(f));
    for (int w = 0; w < kWorlds; ++w) {
      EXPECT_EQ(e.GetParam(f.name, w), std::vector<Real>(nominal.begin(), nominal.end())) << "world " << w;
    }
    ++tested;
  }
  EXPECT_EQ(tested, static_cast<int>(e.Params().size()));
}

// Addressing some entities (or one component) changes only those elements, in every world.
TEST(Fields, AddressedElementsChangeAloneAndClearAlone) {
  EngineOptions opt;
  opt.nworld = 2;
  opt.threads = 1;
  Engine e(PickLift(), opt);
  const Model& m = e.model();
  const int object = m.BodyId("object"), hand = m.BodyId("hand");
  e.SetParam("body_mass[object, hand]", {1, 2, 3, 4});
  std::vector<Real> w1 = e.GetParam("body_mass", 1);
  EXPECT_EQ(w1[object], 3);
  EXPECT_EQ(w1[hand], 4);
  EXPECT_EQ(w1[m.BodyId("finger_left")], m.body_mass[m.BodyId("finger_left")]);
  EXPECT_EQ(e.GetParam("body_mass[hand]", 0), std::vector<Real>{2});

  e.SetParam("gravity.z", {-1, -2});
  EXPECT_EQ(e.GetParam("gravity", 1), (std::vector<Real>{0, 0, -2}));
  e.SetParam("joint_range[*].hi", std::vector<Real>(2 * m.njoint(), Real(0.5)));
  EXPECT_EQ(e.GetParam("joint_range[#1]", 0)[1], Real(0.5));
  EXPECT_EQ(e.GetParam("joint_range[#1]", 0)[0], m.joint_range[2]);

  e.ClearParam("body_mass[hand]");
  EXPECT_EQ(e.GetParam("body_mass[hand]", 1), std::vector<Real>{m.body_mass[hand]});
  EXPECT_EQ(e.GetParam("body_mass[object]", 1), std::vector<Real>{3});
}

// SetParamForWorlds changes only the listed worlds, checks them all before storing any, and the
// other worlds keep stepping exactly as before.
TEST(Fields, SetParamForWorldsChangesOnlyTheListedWorlds) {
  EngineOptions opt;
  opt.nworld = 4;
  opt.threads = 2;
  Engine e(PickLift(), opt), same(PickLift(), opt);
  const Model& m = e.model();
  const FieldAddress mass = ResolveFieldAddress(m, "body_mass[object]");
  for (int k = 0; k < 20; ++k) {
    e.Step(nullptr);
    same.Step(nullptr);
  }
  e.SetParamForWorlds(mass, {1, 3}, {0.5f, 0.7f});
  EXPECT_EQ(e.GetParam("body_mass[object]", 1), std::vector<Real>{0.5f});
  EXPECT_EQ(e.GetParam("body_mass[object]", 3), std::vector<Real>{0.7f});
  EXPECT_EQ(e.GetParam("body_mass[object]", 0), std::vector<Real>{m.body_mass[m.BodyId("object")]});
  EXPECT_THROW(e.SetParamForWorlds(mass, {0, 2}, {0.9f, 0.0f}), std::invalid_argument) << "world 2: mass 0";
  EXPECT_EQ(e.GetParam("body_mass[object]", 0), std::vector<Real>{m.body_mass[m.BodyId("object")]})
      << "a rejected call stored nothing";
  EXPECT_THROW(e.SetParamForWorlds(mass, {4}, {1.0f}), std::invalid_argument);
  for (int k = 0; k < 30; ++k) {
    e.Step(nullptr);
    same.Step(nullptr);
  }
  for (int w : {0, 2}) {
    for (int b = 1; b < m.nbody(); ++b) {
      for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(e.state().view.body_pos(w, b)[i], same.state().view.body_pos(w, b)[i]) << "world " << w;
      }
    }
  }
}

// Each bound, broken in one world: the error names the field, the entity and the world, and
// nothing changes.
TEST(Fields, BoundsRejectBadValuesNamingFieldEntityAndWorld) {
  EngineOptions opt;
  opt.nworld = 2;
  opt.threads = 1;
  Engine e(PickLift(), opt);
  const Model& m = e.model();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    const char* address;
    std::vector<double> bad;  // world 1's values
    const char* expect;       // in the message
  };
  const Case cases[] = {
      {"body_mass[object]", {0}, "body_mass[object]: must be > 0 for a moving body, got 0"},
      {"body_inertia[hand].y", {-1}, "body_inertia[hand].y: must be >= 0"},
      {"geom_friction[object]", {-0.5}, "geom_friction[object]: must be a number >= 0, got -0.5"},
      {"geom_restitution[floor]", {1.5}, "geom_restitution[floor]: must be a number >= 0 and <= 1"},
      {"joint_range[slide_x]", {1, 0}, "joint_range[slide_x]: lo 1 is above hi 0"},
      {"geom_quat[object]", {2, 0, 0, 0}, "geom_quat[object]: must be a unit quaternion"},
      {"latency_steps", {4}, "latency_steps: must be an integer >= 0 and <= max_latency_steps (3"},
      {"latency_steps", {1.5}, "latency_steps: must be an integer"},
      {"contact_hertz", {0}, "contact_hertz: must be a number > 0, got 0"},
      {"body_pos0[object].x", {nan}, "body_pos0[object].x: must be a finite number, got nan"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.address);
    FieldAddress a = ResolveFieldAddress(m, c.address);
    std::vector<Real> before = e.GetParam(FieldInfoOf(a.field).name, 1);
    std::vector<double> current(a.elements.size());
    std::vector<Real> values;
    for (int w = 0; w < 2; ++w) {
      std::vector<Real> now = e.GetParam(c.address, w);
      if (w == 1) now.assign(c.bad.begin(), c.bad.end());
      values.insert(values.end(), now.begin(), now.end());
    }
    try {
      e.SetParam(c.address, values);
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& err) {
      std::string what = err.what();
      EXPECT_NE(what.find("world 1"), std::string::npos) << what;
      EXPECT_NE(what.find(c.expect), std::string::npos) << what;
    }
    EXPECT_EQ(e.GetParam(FieldInfoOf(a.field).name, 1), before) << "a rejected SetParam changed the field";
  }
}

TEST(Fields, AddressErrorsNameWhatIsUnknownAndTheValidNames) {
  Model m = PickLift();
  auto error = [&m](const std::string& address) {
    try {
      ResolveFieldAddress(m, address);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(error("body_mas[object]").find("unknown field 'body_mas'"), std::string::npos);
  EXPECT_NE(error("body_mas").find("body_mass, body_inertia"), std::string::npos) << "lists the parameters";
  std::string unknown = error("body_mass[objekt]");
  EXPECT_NE(unknown.find("unknown body 'objekt'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("world, object, gripper_x"), std::string::npos) << unknown;
  EXPECT_NE(error("geom_friction[box]").find("unknown geom 'box'; the geoms are floor, "), std::string::npos);
  EXPECT_NE(error("gravity[world]").find("one value set per world"), std::string::npos);
  EXPECT_NE(error("gravity.w").find("unknown component 'w' of 'gravity'; its components are x y z or 0..2"),
            std::string::npos);
  EXPECT_NE(error("body_mass[object].x").find("unknown component 'x'"), std::string::npos);
  EXPECT_NE(error("body_mass[object, object]").find("named twice"), std::string::npos);
  EXPECT_NE(error("body_mass[object").find("missing ']'"), std::string::npos);
  EXPECT_NE(error("body_mass[#99]").find("unknown body '#99'"), std::string::npos);
  EXPECT_NE(error("substeps").find("scene option"), std::string::npos);
  EXPECT_NE(error("substeps").find("s2r_substeps"), std::string::npos);
  EXPECT_NE(error("body_parent").find("topology"), std::string::npos);

  FieldAddress all = ResolveFieldAddress(m, "actuator_kp[*]");
  EXPECT_EQ(static_cast<int>(all.elements.size()), m.nactuator());
  EXPECT_FALSE(all.whole_field);
  EXPECT_TRUE(ResolveFieldAddress(m, "actuator_kp").whole_field);
  FieldAddress hi = ResolveFieldAddress(m, " joint_range[slide_y, slide_x].1 ");
  EXPECT_EQ(hi.elements, (std::vector<int>{2 * m.JointId("slide_y") + 1, 2 * m.JointId("slide_x") + 1}));
  EXPECT_EQ(ResolveFieldAddress(m, "gravity.z").elements, std::vector<int>{2});
}

// The loader sets any parameter that has a <custom> name, for every entity or one by name, and
// checks it against the field's bound at the entry's line.
TEST(Fields, CustomSettingsComeFromTheList) {
  using test_util::LoadText;
  using test_util::Scene;
  const std::string body = R"(<worldbody><geom name="floor" type="plane" size="1 1 0.1"/>
<body name="ball" pos="0 0 1"><freejoint/><geom name="ball" size="0.1"/></body></worldbody>)";
  Model m = LoadText(Scene(body, 0.002, 4, 50,
                           "    <numeric name=\"s2r_restitution:ball\" data=\"0.5\"/>\n"
                           "    <numeric name=\"s2r_restitution\" data=\"0.25\"/>\n"
                           "    <numeric name=\"s2r_max_contacts\" data=\"9\"/>\n"));
  EXPECT_FLOAT_EQ(m.geom_restitution[m.GeomId("ball")], 0.5f) << "one entity after the whole field";
  EXPECT_FLOAT_EQ(m.geom_restitution[m.GeomId("floor")], 0.25f);
  EXPECT_EQ(m.max_contacts, 9);
  EXPECT_EQ(m.View().max_contacts, 9);
  try {
    LoadText(Scene(body, 0.002, 4, 50, "    <numeric name=\"s2r_max_contacts\" data=\"100000\"/>\n"));
    ADD_FAILURE() << "accepted a pool of 100000 contacts per world";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("must be an integer >= 1 and <= 65536, got 100000"), std::string::npos)
        << e.what();
  }
  try {
    LoadText(Scene(body, 0.002, 4, 50, "    <numeric name=\"s2r_contact_hertz:ball\" data=\"5\"/>\n"));
    ADD_FAILURE() << "accepted an entity on a one-per-model setting";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("takes no ':<name>'"), std::string::npos) << e.what();
  }
}

// The documents' generated sections are the list's (S2R_UPDATE_DOCS=1 rewrites them).
void CheckGenerated(const std::string& doc, const std::string& name, const std::string& expected) {
  std::string path = std::string(S2R_SOURCE_DIR) + "/docs/" + doc;
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  const std::string begin = "<!-- generated:" + name + " -->\n", end = "<!-- end generated:" + name + " -->";
  size_t a = s.find(begin), b = s.find(end);
  ASSERT_NE(a, std::string::npos) << path << " lacks " << begin;
  ASSERT_NE(b, std::string::npos) << path << " lacks " << end;
  std::string current = s.substr(a + begin.size(), b - a - begin.size());
  if (current != expected && std::getenv("S2R_UPDATE_DOCS") != nullptr) {
    s.replace(a + begin.size(), b - a - begin.size(), expected);
    std::ofstream(path) << s;
    return;
  }
  EXPECT_EQ(current, expected) << path << " and kernels/model_fields.h disagree; rerun this test with "
                                          "S2R_UPDATE_DOCS=1 to regenerate the section";
}

TEST(Fields, DocumentationIsGeneratedFromTheList) {
  CheckGenerated("fields.md", "fields", FieldsMarkdown());
  CheckGenerated("mjcf_subset.md", "custom", CustomSettingsMarkdown());
  // every field is in the table
  for (const FieldInfo& f : kModelFields) {
    EXPECT_NE(FieldsMarkdown().find("| `" + std::string(f.name) + "` |"), std::string::npos) << f.name;
  }
}

// The one scratch layout: arrays in their lifetime's block, 64-byte aligned, not overlapping,
// sized as the model needs; an empty array binds to null.
TEST(Fields, WorkspaceLayoutPlacesEveryArrayOnce) {
  for (const char* scene : {"builtin:box_push", "builtin:pick_lift", "builtin:stack5"}) {
    SCOPED_TRACE(scene);
    Model model = LoadScene(scene);
    ModelView m = model.View();
    WorkspaceLayout l = ComputeWorkspaceLayout(m);
    EXPECT_EQ(l.step_bytes % kWorkspaceAlign, 0);
    EXPECT_EQ(l.world_bytes % kWorkspaceAlign, 0);
    EXPECT_EQ(l.count[static_cast<int>(WorkspaceArray::bodies)], m.nbody);
    EXPECT_EQ(l.count[static_cast<int>(WorkspaceArray::reduced)], ReducedScratchSize(m.nreduced));
    EXPECT_EQ(l.count[static_cast<int>(WorkspaceArray::reduced_valid)], 1);
    std::vector<char> step(l.step_bytes), world(l.world_bytes);
    Workspace ws = BindWorkspace(l, step.data(), world.data());
    EXPECT_EQ(ws.bodies, reinterpret_cast<SolverBody*>(step.data()));
    EXPECT_EQ(ws.reduced_valid != nullptr, true);
    EXPECT_EQ(ws.reduced == nullptr, m.nreduced == 0);
    EXPECT_EQ(ws.lock_factor == nullptr, LockFactorSize(m) == 0);
    // every joint of these scenes is free or in a slide tree: no lock-block factors
    EXPECT_EQ(ws.joint_factor, nullptr);
    // the byte ranges of one lifetime's arrays lie in its block and do not overlap
#define S2R_TEST_ELEMENT(name, type, elements, lifetime, description) {int64_t(sizeof(type)), #lifetime},
    const struct {
      int64_t size;
      const char* lifetime;
    } arrays[] = {S2R_WORKSPACE_ARRAYS(S2R_TEST_ELEMENT)};
#undef S2R_TEST_ELEMENT
    for (int i = 0; i < kNumWorkspaceArrays; ++i) {
      EXPECT_EQ(l.offset[i] % kWorkspaceAlign, 0) << i;
      int64_t block = std::string(arrays[i].lifetime) == "Step" ? l.step_bytes : l.world_bytes;
      int64_t end_i = l.offset[i] + l.count[i] * arrays[i].size;
      EXPECT_LE(end_i, block) << i;
      for (int j = 0; j < kNumWorkspaceArrays; ++j) {
        if (j == i || std::string(arrays[i].lifetime) != arrays[j].lifetime || l.count[i] == 0 || l.count[j] == 0) continue;
        int64_t end_j = l.offset[j] + l.count[j] * arrays[j].size;
        EXPECT_TRUE(end_i <= l.offset[j] || end_j <= l.offset[i]) << i << " overlaps " << j;
      }
    }
  }
}

// The state list: HostState holds exactly StateLayout's sizes, and StateHash covers the bodies.
TEST(Fields, StateLayoutMatchesTheEngineState) {
  EngineOptions opt;
  opt.nworld = 5;
  opt.threads = 1;
  Engine e(PickLift(), opt);
  std::vector<StateArrayInfo> layout = StateLayout(e.view());
  ASSERT_EQ(layout.size(), 17u);
  const HostState& s = e.state();
  auto per_world = [](const StateArrayInfo& a) {
    int64_t n = 1;
    for (int64_t d : a.shape) n *= d;
    return n;
  };
  EXPECT_EQ(layout[0].name, "body_pos");
  EXPECT_EQ(layout[0].shape, (std::vector<int64_t>{e.model().nbody(), 3}));
  EXPECT_EQ(static_cast<int64_t>(s.body_pos.size()), 5 * per_world(layout[0]));
  EXPECT_EQ(layout[4].name, "ctrl_queue");
  // max_latency_steps + 1 rows, and one older action for a part-period delay (latency_timesteps)
  EXPECT_EQ(layout[4].shape, (std::vector<int64_t>{5, e.model().nactuator()}));
  EXPECT_EQ(static_cast<int64_t>(s.ctrl_queue.size()), 5 * per_world(layout[4]));
  EXPECT_EQ(layout[7].name, "joint_q");
  EXPECT_EQ(layout[7].shape, (std::vector<int64_t>{e.model().njoint()}));
  EXPECT_EQ(static_cast<int64_t>(s.joint_q.size()), 5 * per_world(layout[7]));
  EXPECT_EQ(layout[10].name, "contacts");
  EXPECT_EQ(static_cast<int64_t>(s.contacts.size()), 5 * per_world(layout[10]));
  EXPECT_EQ(layout[15].name, "time");
  EXPECT_TRUE(layout[15].shape.empty());
  EXPECT_EQ(layout[16].name, "equality_impulse");
  EXPECT_EQ(layout[16].shape, (std::vector<int64_t>{e.model().nequality()}));
  int hashed = 0;
  for (const StateArrayInfo& a : layout) hashed += a.hashed ? 1 : 0;
  EXPECT_EQ(hashed, 4) << "body pose and velocity";
  // a change in a hashed array moves the hash; in an unhashed one it does not
  Engine& m = e;
  uint64_t h0 = m.StateHash();
  m.mutable_state().time[0] += 1;
  EXPECT_EQ(m.StateHash(), h0);
  m.mutable_state().body_linvel[3] += 1;
  EXPECT_NE(m.StateHash(), h0);
}

}  // namespace
}  // namespace s2r
