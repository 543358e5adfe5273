// The peg_insert task's labels on crafted worlds whose outcome is known (kernels/task_peg_insert.h).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "host/engine.h"
#include "kernels/tasks.h"
#include "tests/host/task_run.h"

namespace s2r {
namespace {

// One world of peg_insert with the expert until the task ends (5 s horizon, as builtin:peg_insert);
// `friction` (< 0: the scene's 1) is the peg's and the fingers'; `hook(engine, state)` runs after
// every control step.
TaskState RunPeg(double friction, std::vector<std::pair<int, double>> task_params,
                 const std::function<void(Engine&, const TaskState&)>& hook = nullptr,
                 TaskChecker checker = kCheckerPhases) {
  std::vector<std::pair<std::string, std::vector<Real>>> engine_params;
  if (friction >= 0) {
    engine_params.push_back({"geom_friction[peg, finger_left, finger_right]", {Real(friction), Real(friction), Real(friction)}});
  }
  return test_util::RunTask("builtin:peg_insert", engine_params, task_params, 250,
                            [&hook](Engine& e, const TaskState& ts, int) {
                              if (hook) hook(e, ts);
                            },
                            checker)
      .ts;
}

TEST(PegInsertTask, AnAlignedInsertionSucceeds) {
  TaskState ts = RunPeg(-1, {});
  EXPECT_TRUE(ts.success) << "label " << ts.label;
  EXPECT_EQ(ts.phase, kPhaseInsert);
  // the tip at least insert_depth (3 cm) below the mouth, and not beyond the last target (3.5 cm)
  // by more than 2 mm
  EXPECT_GE(ts.margin, 0);
  EXPECT_LT(ts.margin, kPegInsertOvershoot + 0.002);
  EXPECT_LT(ts.max_slip, 0.003) << "the peg stays where the fingers hold it";
  EXPECT_FALSE(ts.near_miss);
}

TEST(PegInsertTask, AnAimWithinTheClearanceSucceeds) {
  // 2 mm off the hole's axis across the fingers: the peg still fits (3 mm of clearance per side)
  for (double y : {-0.002, 0.002}) {
    TaskState ts = RunPeg(-1, {{kPeg_align_y, y}});
    EXPECT_TRUE(ts.success) << "align_y " << y << ": label " << ts.label;
  }
}

TEST(PegInsertTask, AnAimOffByMoreThanTheClearanceLandsOnTheRim) {
  // 6-10 mm off the axis: the tip comes down on a wall's top and is pressed onto it (the peg's
  // top is 1 cm under the palm, so it cannot slide more than that in the grip)
  for (std::pair<int, double> off : std::vector<std::pair<int, double>>{
           {kPeg_align_x, 0.01}, {kPeg_align_x, -0.01}, {kPeg_align_y, 0.006}, {kPeg_align_y, -0.008}}) {
    TaskState ts = RunPeg(-1, {off});
    EXPECT_EQ(ts.label, kLabelCollision) << "param " << off.first << " = " << off.second;
    EXPECT_EQ(ts.phase, kPhaseInsert);
    EXPECT_LT(ts.best, kPegRimDepth) << "the tip never got into the hole";
  }
}

TEST(PegInsertTask, AWeakGripOnTheRimSlips) {
  // friction 0.3: the fingers' 2 x 5 N hold 3 N; with the peg's top 2 cm under the palm, the peg
  // slides up in the grip once it lands on the rim
  TaskState ts = RunPeg(0.3, {{kPeg_align_y, 0.008}, {kPeg_grasp_height, 0.13}});
  EXPECT_EQ(ts.label, kLabelSlip);
  EXPECT_EQ(ts.phase, kPhaseInsert);
  EXPECT_GT(ts.max_slip, 0.01);
  EXPECT_LT(ts.min_margin, 0);
}

TEST(PegInsertTask, AGraspAboveThePegClosesOnNothing) {
  // the fingers' lower ends (hand - 0.06 m) above the peg's top (0.1 m)
  TaskState ts = RunPeg(-1, {{kPeg_grasp_height, 0.2}});
  EXPECT_EQ(ts.label, kLabelGraspMiss);
  EXPECT_EQ(ts.phase, kPhaseLift);
}

TEST(PegInsertTask, APegWhoseGripLosesItsFrictionWhileCarriedDrops) {
  bool cut = false;
  TaskState ts = RunPeg(-1, {}, [&cut](Engine& e, const TaskState& t) {
    if (!cut && t.phase == kPhaseTransport) {
      e.SetParam("geom_friction[peg, finger_left, finger_right]", {0, 0, 0});
      cut = true;
    }
  });
  ASSERT_TRUE(cut);
  EXPECT_EQ(ts.label, kLabelDrop);
  EXPECT_EQ(ts.phase, kPhaseTransport);
}

TEST(PegInsertTask, APegThatBottomsOutShortOfTheDepthIsStuck) {
  // insert_depth 4.2 cm in a 4 cm deep hole: the peg stops on the floor and the hand's last target
  // is only 7 mm lower (less than slip_limit), so the depth stops growing
  TaskState ts = RunPeg(-1, {{kPeg_insert_depth, 0.042}});
  EXPECT_EQ(ts.label, kLabelStuck);
  EXPECT_EQ(ts.phase, kPhaseInsert);
  EXPECT_NEAR(ts.best, 0.04, 0.002) << "the tip rests on the hole's floor";
  EXPECT_TRUE(ts.near_miss) << "it got more than halfway to insert_depth";
}

// The state checker (kCheckerState, what a policy's episodes are labelled by) on the crafted worlds
// above, the expert acting: the same labels from the grip, the contact forces and the depth alone,
// and the stage the state showed at the end.
TEST(PegInsertTask, TheStateCheckerLabelsTheCraftedWorldsAlike) {
  struct Case {
    const char* what;
    double friction;
    std::vector<std::pair<int, double>> params;
    int label, stage;
  };
  const std::vector<Case> cases = {
      {"aligned", -1, {}, kLabelNone, kPhaseInsert},
      {"2 mm off", -1, {{kPeg_align_y, 0.002}}, kLabelNone, kPhaseInsert},
      {"1 cm off", -1, {{kPeg_align_x, 0.01}}, kLabelCollision, kPhaseInsert},
      {"8 mm off", -1, {{kPeg_align_y, -0.008}}, kLabelCollision, kPhaseInsert},
      {"weak grip on the rim", 0.3, {{kPeg_align_y, 0.008}, {kPeg_grasp_height, 0.13}}, kLabelSlip, kPhaseInsert},
      {"grasp above", -1, {{kPeg_grasp_height, 0.2}}, kLabelGraspMiss, kPhaseGrasp},
      {"bottoms out", -1, {{kPeg_insert_depth, 0.042}}, kLabelStuck, kPhaseInsert},
  };
  for (const Case& c : cases) {
    TaskState ts = RunPeg(c.friction, c.params, nullptr, kCheckerState);
    EXPECT_EQ(ts.label, c.label) << c.what;
    EXPECT_EQ(ts.stage, c.stage) << c.what;
    if (c.label == kLabelStuck) {
      EXPECT_NEAR(ts.deepest, 0.04, 0.002) << "the tip rests on the hole's floor";
      EXPECT_TRUE(ts.near_miss);
    }
    if (c.label == kLabelCollision) EXPECT_LT(ts.deepest, kPegRimDepth) << c.what;
  }
  bool cut = false;
  TaskState ts = RunPeg(
      -1, {},
      [&cut](Engine& e, const TaskState& t) {
        if (!cut && t.phase == kPhaseTransport) {
          e.SetParam("geom_friction[peg, finger_left, finger_right]", {0, 0, 0});
          cut = true;
        }
      },
      kCheckerState);
  ASSERT_TRUE(cut);
  EXPECT_EQ(ts.label, kLabelDrop);
  EXPECT_EQ(ts.stage, kPhaseTransport);
}

}  // namespace
}  // namespace s2r
