// Measured quantities: what a sensor on a real robot reports, computed from one world's state.
//
// System identification compares a recording with a simulation through these: body origin
// positions and orientations, COM and angular velocities (world frame), joint positions and
// velocities (rad or m, relative to the reference configuration, as joint_qpos0 is), and site
// positions (world frame). The same S2R_HD code runs where the rollout runs.
#pragma once

#include "kernels/solver_joint.h"

namespace s2r {

enum MeasureKind : int32_t {
  kMeasureBodyPos = 0,     // body origin, world frame, m (components x y z)
  kMeasureBodyQuat = 1,    // body orientation, w x y z, sign chosen so that w >= 0
  kMeasureBodyLinvel = 2,  // COM velocity, world frame, m/s
  kMeasureBodyAngvel = 3,  // angular velocity, world frame, rad/s
  kMeasureJointQpos = 4,   // hinge angle (rad) or slide displacement (m)
  kMeasureJointQvel = 5,   // its rate (rad/s or m/s)
  kMeasureSitePos = 6,     // site position, world frame, m
  kNumMeasureKinds = 7,
};

struct Measure {
  int32_t kind = kMeasureBodyPos;
  int32_t index = 0;      // body, joint or site
  int32_t component = 0;  // vector or quaternion component; 0 for joints
};

// A joint's coordinate and rate in the world's current state (hinge and slide joints).
S2R_HD void JointCoordinate(const ModelView& m, const StateView& s, int world, int j, Real* q, Real* qdot) {
  SolverBody a, b;
  LoadSolverBody(m, s, world, m.joint_parent[j], &a);
  LoadSolverBody(m, s, world, m.joint_body[j], &b);
  JointFrame f = ComputeJointFrame(m, j, a, b);
  *q = f.q;
  if (m.joint_type[j] == kJointHinge) {
    *qdot = Dot(b.w - a.w, f.axis);
  } else {
    // the child's anchor point relative to the parent's material point under it
    Vec3 vb = b.v + Cross(b.w, f.rb);
    Vec3 va = a.v + Cross(a.w, f.ra);
    *qdot = Dot(vb - va, f.axis);
  }
}

S2R_HD Real Measured(const ModelView& m, const StateView& s, int world, const Measure& q) {
  switch (q.kind) {
    case kMeasureBodyPos: return s.body_pos(world, q.index)[q.component];
    case kMeasureBodyQuat: {
      const Real* r = s.body_quat(world, q.index);
      return r[0] < Real(0) ? -r[q.component] : r[q.component];
    }
    case kMeasureBodyLinvel: return s.body_linvel(world, q.index)[q.component];
    case kMeasureBodyAngvel: return s.body_angvel(world, q.index)[q.component];
    case kMeasureJointQpos:
    case kMeasureJointQvel: {
      Real pos = 0, vel = 0;
      JointCoordinate(m, s, world, q.index, &pos, &vel);
      return q.kind == kMeasureJointQpos ? pos : vel;
    }
    case kMeasureSitePos: {
      const int b = m.site_body[q.index];
      Vec3 p = LoadVec3(s.body_pos(world, b)) +
               Rotate(LoadQuat(s.body_quat(world, b)), LoadVec3(m.site_pos + 3 * q.index));
      return q.component == 0 ? p.x : q.component == 1 ? p.y : p.z;
    }
    default: return Real(0);
  }
}

}  // namespace s2r
