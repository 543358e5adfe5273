// The step variants (kernels/step_features.h): which one each scene runs, and that a scene's
// variant steps it bit for bit like the general step (kStepAll), which keeps every stage.
#include "kernels/step_features.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "host/engine.h"
#include "host/scene/scene_source.h"
#include "kernels/step_world.h"
#include "tests/host/test_dir.h"
#include "tests/host/test_scenes.h"

namespace s2r {
namespace {

std::string TestScene(const std::string& name) {
  return std::string(S2R_SOURCE_DIR) + "/configs/scenes/test/" + name;
}

Model ConvexScene() {
  const std::string xml = test_util::Scene(R"(
  <worldbody>
    <geom type="plane" size="0 0 1"/>
    <body pos="0 0 0.1" euler="0.1 0.2 0"><freejoint/><geom type="cylinder" size="0.04 0.06"/></body>
    <body pos="0.3 0 0.1"><freejoint/><geom type="ellipsoid" size="0.08 0.05 0.04"/></body>
    <body pos="0.6 0 0.1"><freejoint/><geom type="box" size="0.05 0.05 0.05"/></body>
  </worldbody>)");
  return test_util::LoadText(xml);
}

int VariantOf(const Model& model) { return StepVariantFor(StepFeaturesOf(model.View())); }

TEST(StepFeatures, EachSceneRunsTheSmallestVariantThatHoldsIt) {
  // the bench and sweep scenes: slide trees and free bodies of primitive geoms
  for (const char* scene : {"builtin:box_push", "builtin:pick_lift", "builtin:stack5", "builtin:peg_insert"}) {
    SCOPED_TRACE(scene);
    Model m = LoadScene(scene);
    EXPECT_EQ(StepFeaturesOf(m.View()) & ~kStepSlideTrees, 0u);
    EXPECT_EQ(VariantOf(m), 0);
  }
  // an arm of hinges as an articulated tree, capsule geoms
  Model arm = LoadScene(TestScene("arm7.xml"));
  EXPECT_NE(StepFeaturesOf(arm.View()) & kStepTrees, 0u);
  EXPECT_EQ(VariantOf(arm), 1);
  // the same gantry with its slides in maximal coordinates needs the joint blocks
  Model maximal = test_util::WithSlideTrees(LoadScene("builtin:box_push"), false);
  EXPECT_NE(StepFeaturesOf(maximal.View()) & kStepJointBlocks, 0u);
  EXPECT_EQ(VariantOf(maximal), kStepVariantCount - 1);
  // cylinders and ellipsoids need the convex narrow phase
  Model convex = ConvexScene();
  EXPECT_EQ(StepFeaturesOf(convex.View()), unsigned(kStepConvex));
  EXPECT_EQ(VariantOf(convex), kStepVariantCount - 1);
  // every variant holds itself, and kStepAll holds everything
  for (int v = 0; v < kStepVariantCount; ++v) EXPECT_EQ(StepVariantFor(kStepVariants[v]), v);
  EXPECT_EQ(StepVariantFor(kStepAll), kStepVariantCount - 1);
}

// Steps `nworld` worlds of `model` for `steps` control steps with random actions inside the
// control ranges, twice from the same reset: through the engine (the CPU backend runs the
// model's variant) and through ControlStep<kStepAll> called here with its own scratch. The two
// states must be equal byte for byte: a variant only drops stages its models cannot reach.
void ExpectVariantMatchesGeneralStep(const Model& model, int nworld, int steps) {
  EngineOptions opt;
  opt.nworld = nworld;
  opt.threads = 1;
  Engine variant(model, opt), general(model, opt);
  variant.Reset();
  general.Reset();
  const ModelView& m = general.view();
  StateView s = general.mutable_state().view;
  WorkspaceLayout layout = ComputeWorkspaceLayout(m);
  std::vector<char> step_block(size_t(layout.step_bytes));
  std::vector<char> world_blocks(size_t(layout.world_bytes) * nworld, 0);  // validity words 0
  std::mt19937 rng(7);
  std::vector<Real> actions(size_t(nworld) * m.nactuator);
  for (int k = 0; k < steps; ++k) {
    for (int w = 0; w < nworld; ++w) {
      for (int i = 0; i < m.nactuator; ++i) {
        Real lo = -1, hi = 1;
        if (m.actuator_ctrllimited[i]) {
          lo = m.actuator_ctrlrange.At(w)[2 * i];
          hi = m.actuator_ctrlrange.At(w)[2 * i + 1];
        }
        actions[size_t(w) * m.nactuator + i] = std::uniform_real_distribution<Real>(lo, hi)(rng);
      }
    }
    variant.Step(actions.data());
    for (int w = 0; w < nworld; ++w) {
      Workspace ws = BindWorkspace(layout, step_block.data(), world_blocks.data() + size_t(w) * layout.world_bytes);
      ControlStep<kStepAll>(m, s, w, &ws, actions.data() + size_t(w) * m.nactuator);
    }
  }
  variant.Download();
  StateView a = variant.mutable_state().view, b = s;
  std::vector<std::pair<const char*, std::vector<char>>> bytes;
  ForEachStateArray(a, [&](const char* name, auto* ptr, int64_t per_world, bool) {
    const char* p = reinterpret_cast<const char*>(ptr);
    bytes.emplace_back(name, std::vector<char>(p, p + per_world * sizeof(*ptr) * nworld));
  });
  size_t i = 0;
  ForEachStateArray(b, [&](const char* name, auto* ptr, int64_t per_world, bool) {
    const char* p = reinterpret_cast<const char*>(ptr);
    ASSERT_EQ(bytes[i].second.size(), size_t(per_world * sizeof(*ptr) * nworld)) << name;
    if (!bytes[i].second.empty()) {  // an empty array's pointer is null
      EXPECT_EQ(std::memcmp(bytes[i].second.data(), p, bytes[i].second.size()), 0) << "state array " << name;
    }
    ++i;
  });
  for (int w = 0; w < nworld; ++w) EXPECT_EQ(general.state().status[w], kWorldOk) << "world " << w;
}

TEST(StepFeatures, GantryVariantStepsLikeTheGeneralStep) {
  for (const char* scene : {"builtin:box_push", "builtin:pick_lift", "builtin:stack5", "builtin:peg_insert"}) {
    SCOPED_TRACE(scene);
    ExpectVariantMatchesGeneralStep(LoadScene(scene), 3, 40);
  }
}

TEST(StepFeatures, ArmVariantStepsLikeTheGeneralStep) {
  Model arm = LoadScene(TestScene("arm7.xml"));
  ASSERT_EQ(VariantOf(arm), 1);
  ExpectVariantMatchesGeneralStep(arm, 2, 40);
  // Menagerie's MJX Panda as published: fingers coupled by a joint equality, boxes on a table
  Model panda = LoadScene("builtin:panda_pick");
  ASSERT_GT(panda.nequality(), 0);
  ASSERT_EQ(VariantOf(panda), 1);
  ExpectVariantMatchesGeneralStep(panda, 2, 20);
}

TEST(StepFeatures, GeneralVariantStillStepsMaximalJointsAndConvexShapes) {
  // the engine picks kStepAll itself here; the comparison checks the dispatch, not a reduction
  ExpectVariantMatchesGeneralStep(test_util::WithSlideTrees(LoadScene("builtin:box_push"), false), 2, 20);
  ExpectVariantMatchesGeneralStep(ConvexScene(), 2, 20);
}

}  // namespace
}  // namespace s2r
