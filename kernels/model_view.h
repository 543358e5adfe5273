// ModelView: the read-only description of a batch of worlds, as flat arrays.
//
// One model (topology: bodies, geoms, joints, actuators, sites) is shared by all worlds. Every
// physical parameter is a Batched array: its world stride is 0 when all worlds share one value
// (broadcast) and the element count when each world has its own, so randomizing friction for 4096
// worlds is one upload of 4096 values and no rebuild. Read a batched field as
// `m.geom_friction.At(world)[geom]` (mujoco_warp reads `field[world % n]`; a stride avoids the
// modulo). Derived quantities (inverse mass, world inertia) are not stored here: the step
// recomputes them from these parameters every step, so a change can never leave them stale.
//
// Conventions (MJCF's): lengths in m, angles in rad, masses in kg, quaternions (w, x, y, z)
// rotating the child frame into the parent frame, body 0 is the world body.
#pragma once

#include "kernels/base.h"

namespace s2r {

template <typename T>
struct Batched {
  const T* data = nullptr;
  int32_t world_stride = 0;  // 0: broadcast to all worlds; else elements per world
  S2R_HD const T* At(int world) const { return data + static_cast<int64_t>(world) * world_stride; }
};

enum GeomType : int32_t {
  kGeomPlane = 0,    // infinite half-space z <= 0 in the geom frame; size unused
  kGeomSphere = 1,   // size[0] radius
  kGeomCapsule = 2,  // size[0] radius, size[1] half-length of the segment along local z
  kGeomBox = 3,      // size[0..2] half-extents
  kGeomTypeCount = 4,
};

enum JointType : int32_t {
  kJointFree = 0,   // no constraint: the body moves freely
  kJointHinge = 1,  // rotation about axis through pos
  kJointSlide = 2,  // translation along axis
  kJointWeld = 3,   // rigid attachment (a jointless body below a moving body)
};

enum ActuatorType : int32_t {
  kActuatorMotor = 0,     // force = gear * ctrl (through transmission)
  kActuatorPosition = 1,  // force = kp (ctrl - length) - kv d(length)/dt
  kActuatorVelocity = 2,  // force = kv (ctrl - d(length)/dt)
};

enum TransmissionType : int32_t {
  kTransmissionJoint = 0,  // length = gear[0] * q
  kTransmissionSite = 1,   // wrench gear[0:3] force, gear[3:6] torque, in the site frame
};

struct ModelView {
  // --- sizes ---
  int32_t nbody = 0;      // including body 0, the world
  int32_t ngeom = 0;
  int32_t njoint = 0;     // one per moving body that is not free-floating ... see body_joint
  int32_t nactuator = 0;
  int32_t nsite = 0;
  int32_t npair = 0;      // candidate collision pairs after contype/conaffinity/exclude filtering
  int32_t nreduced = 0;   // bodies of slide trees stepped in reduced coordinates (solver_reduced.h)
  int32_t max_contacts = 0;       // contact pool capacity per world
  int32_t substeps = 1;           // solver substeps per physics step
  int32_t steps_per_control = 1;  // physics steps per control step
  int32_t latency_capacity = 1;   // ring-buffer slots per world (max latency + 1)
  Real timestep = Real(0.002);    // physics step, s

  // --- topology (shared by all worlds) ---
  const int32_t* body_parent = nullptr;   // (nbody) parent body, -1 for the world
  const int32_t* body_joint = nullptr;    // (nbody) joint that moves this body, -1 if none
  const int32_t* body_dynamic = nullptr;  // (nbody) 1 if the body moves, 0 if fixed to the world
  const int32_t* geom_type = nullptr;     // (ngeom) GeomType
  const int32_t* geom_body = nullptr;     // (ngeom)
  const int32_t* joint_type = nullptr;    // (njoint) JointType
  const int32_t* joint_body = nullptr;    // (njoint) child body moved by the joint
  const int32_t* joint_parent = nullptr;  // (njoint) parent body (0 = world)
  const int32_t* joint_limited = nullptr; // (njoint) 1 if range is enforced
  const int32_t* actuator_type = nullptr;     // (nactuator) ActuatorType
  const int32_t* actuator_trntype = nullptr;  // (nactuator) TransmissionType
  const int32_t* actuator_trnid = nullptr;    // (nactuator) joint or site index
  const int32_t* actuator_ctrllimited = nullptr;   // (nactuator)
  const int32_t* actuator_forcelimited = nullptr;  // (nactuator)
  const int32_t* site_body = nullptr;     // (nsite)
  const int32_t* pair_geom = nullptr;     // (npair, 2) geom indices, first <= second
  const int32_t* body_reduced = nullptr;  // (nbody) rank among the reduced bodies, -1 if none
  const int32_t* reduced_body = nullptr;  // (nreduced) body of each rank, in body order
  const int32_t* reduced_parent = nullptr;  // (nreduced) rank of the parent, -1 if it is fixed
  // the position and velocity actuators of each joint, in index order, as a list:
  // for (int i = joint_actuator[j]; i >= 0; i = actuator_next[i])
  const int32_t* joint_actuator = nullptr;  // (njoint) first, -1 if none
  const int32_t* actuator_next = nullptr;   // (nactuator) next on the same joint, -1 at the end

  // joint frames, fixed by the model's reference configuration (q = 0)
  const Real* joint_pos_child = nullptr;   // (njoint, 3) anchor in the child body frame, m
  const Real* joint_pos_parent = nullptr;  // (njoint, 3) anchor in the parent body frame, m
  const Real* joint_axis_child = nullptr;  // (njoint, 3) unit axis in the child body frame
  const Real* joint_axis_parent = nullptr; // (njoint, 3) unit axis in the parent body frame
  const Real* joint_qrel0 = nullptr;       // (njoint, 4) parent^-1 * child rotation at q = 0
  const Real* site_pos = nullptr;          // (nsite, 3) in the body frame, m
  const Real* site_quat = nullptr;         // (nsite, 4) in the body frame

  // --- per-world physical parameters ---
  Batched<Real> gravity;            // (3) m/s^2
  Batched<Real> body_mass;          // (nbody) kg
  Batched<Real> body_inertia;       // (nbody, 3) principal moments about the COM, kg m^2
  Batched<Real> body_ipos;          // (nbody, 3) COM in the body frame, m
  Batched<Real> body_iquat;         // (nbody, 4) principal-axis frame in the body frame
  // initial pose of free and static bodies; bodies below a hinge, slide or weld are placed from
  // their parent by the joint (joint_qpos0), see ResetWorld
  Batched<Real> body_pos0;          // (nbody, 3) initial body-frame origin, world frame, m
  Batched<Real> body_quat0;         // (nbody, 4) initial body orientation, world frame
  Batched<Real> body_linvel0;       // (nbody, 3) initial COM velocity, world frame, m/s
  Batched<Real> body_angvel0;       // (nbody, 3) initial angular velocity, world frame, rad/s
  Batched<Real> geom_size;          // (ngeom, 3) m, see GeomType
  Batched<Real> geom_pos;           // (ngeom, 3) in the body frame, m
  Batched<Real> geom_quat;          // (ngeom, 4) in the body frame
  Batched<Real> geom_friction;      // (ngeom) sliding (Coulomb) coefficient; a pair uses the max
  Batched<Real> geom_restitution;   // (ngeom) coefficient of restitution; a pair uses the max
  Batched<Real> joint_range;        // (njoint, 2) rad (hinge) or m (slide)
  Batched<Real> joint_damping;      // (njoint) N s/m or N m s/rad
  Batched<Real> joint_frictionloss; // (njoint) N or N m
  Batched<Real> joint_armature;     // (njoint) kg or kg m^2, added inertia on the joint axis
  Batched<Real> joint_qpos0;        // (njoint) initial joint coordinate, rad or m (hinge, slide)
  Batched<Real> joint_qvel0;        // (njoint) initial joint velocity, rad/s or m/s (hinge, slide)
  Batched<Real> actuator_gear;      // (nactuator, 6)
  Batched<Real> actuator_kp;        // (nactuator) N/m or N m/rad
  Batched<Real> actuator_kv;        // (nactuator) N s/m or N m s/rad
  Batched<Real> actuator_ctrlrange; // (nactuator, 2)
  Batched<Real> actuator_forcerange;// (nactuator, 2) N or N m
  Batched<int32_t> latency_steps;   // (1) action delay, control steps, < latency_capacity
  Batched<Real> contact_hertz;      // (1) contact stiffness as a natural frequency, Hz
  Batched<Real> contact_damping_ratio;  // (1) contact damping ratio, dimensionless
  Batched<Real> joint_hertz;        // (1) joint constraint stiffness, Hz
  Batched<Real> joint_damping_ratio;    // (1)
  Batched<Real> contact_push_velocity;  // (1) max speed penetration is resolved at, m/s
  Batched<Real> restitution_threshold;  // (1) approach speed below which no bounce, m/s
  Batched<Real> linear_slop;        // (1) penetration left uncorrected, m
  Batched<Real> speculative_distance;   // (1) contacts are created below this gap, m
  Batched<Real> max_linear_speed;   // (1) runaway threshold, m/s
};

}  // namespace s2r
