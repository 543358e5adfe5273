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
// The members are expanded from the field lists in kernels/model_fields.h, which give each one's
// shape, unit, bounds and meaning; only the sizes and the two derived options are written here.
#pragma once

#include "kernels/base.h"
#include "kernels/model_fields.h"

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
  kGeomCylinder = 4,   // size[0] radius, size[1] half-length along local z
  kGeomEllipsoid = 5,  // size[0..2] semi-axes along local x, y, z
  kGeomMesh = 6,       // convex hull of a mesh (hull_vert from geom_hull); size[0] bounding radius
  kGeomTypeCount = 7,
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
  kTransmissionTendon = 2, // length = gear[0] * (fixed tendon length sum coef q)
};

enum EqualityType : int32_t {
  kEqualityJoint = 0,    // joint1 = polycoef(joint2) (MJCF <equality><joint>)
  kEqualityConnect = 1,  // a point of body1 held on a point of body2 (MJCF <equality><connect>)
  kEqualityWeld = 2,     // body2's pose held relative to body1's (MJCF <equality><weld>)
};
// warm-start impulses per equality in the state (a weld's six rows)
constexpr int kEqualityImpulseSlots = 6;

struct ModelView {
  // --- sizes ---
  int32_t nbody = 0;      // including body 0, the world
  int32_t ngeom = 0;
  int32_t njoint = 0;     // one per moving body that is not free-floating ... see body_joint
  int32_t nactuator = 0;
  int32_t nsite = 0;
  int32_t npair = 0;      // candidate collision pairs after contype/conaffinity/exclude filtering
  int32_t nreduced = 0;   // bodies of slide trees stepped in reduced coordinates (solver_reduced.h)
  int32_t nhullvert = 0;  // mesh hull vertices of all mesh geoms (hull_vert rows)
  int32_t ntree = 0;      // bodies of hinge/slide trees in reduced coordinates (solver_tree.h)
  int32_t nequality = 0;  // <equality> joint couplings and connects (solver_coupling.h)
  int32_t ntendon = 0;    // fixed tendons
  int32_t nwrap = 0;      // joint terms of all fixed tendons (wrap_joint rows)
  // contact points a world's step can hold: max_contacts, but never more than the pairs' manifolds
  // hold (kMaxManifoldPoints each); it sizes the contact arrays of the state and the step's scratch
  int32_t contact_capacity = 0;

  // --- scene-wide options (S2R_MODEL_OPTIONS) and what follows from them ---
#define S2R_VIEW_OPTION(name, type, unit, bound, max, custom, defaults, description) \
  type name = type(S2R_FIELD_EXPAND defaults);
  S2R_MODEL_OPTIONS(S2R_VIEW_OPTION)
#undef S2R_VIEW_OPTION
  int32_t steps_per_control = 1;  // physics steps per control step
  int32_t latency_capacity = 1;   // ring-buffer slots per world (max_latency_steps + 1)

  // --- topology, shared by all worlds (S2R_MODEL_TOPOLOGY): `const T* name`, (entity, per) ---
#define S2R_VIEW_TOPOLOGY(name, type, entity, per, derived, description) const type* name = nullptr;
  S2R_MODEL_TOPOLOGY(S2R_VIEW_TOPOLOGY)
#undef S2R_VIEW_TOPOLOGY

  // --- per-world physical parameters (S2R_MODEL_PARAMS): `Batched<T> name`, (entity, per) ---
#define S2R_VIEW_PARAM(name, type, entity, per, components, unit, bound, custom, defaults, \
                       description)                                                         \
  Batched<type> name;
  S2R_MODEL_PARAMS(S2R_VIEW_PARAM)
#undef S2R_VIEW_PARAM
};

// How many entities of a kind the model has (kNone: one).
S2R_HD int32_t EntityCount(const ModelView& m, Entity e) {
  switch (e) {
    case Entity::kBody: return m.nbody;
    case Entity::kGeom: return m.ngeom;
    case Entity::kJoint: return m.njoint;
    case Entity::kActuator: return m.nactuator;
    case Entity::kSite: return m.nsite;
    case Entity::kPair: return m.npair;
    case Entity::kReduced: return m.nreduced;
    case Entity::kHullVert: return m.nhullvert;
    case Entity::kTree: return m.ntree;
    case Entity::kEquality: return m.nequality;
    case Entity::kTendon: return m.ntendon;
    case Entity::kWrap: return m.nwrap;
    default: return 1;
  }
}

// Calls f(FieldId, Batched<T>&) for every per-world parameter of a view, in list order.
template <typename View, typename F>
void ForEachParam(View& v, F&& f) {
#define S2R_VISIT_PARAM(name, ...) f(FieldId::name, v.name);
  S2R_MODEL_PARAMS(S2R_VISIT_PARAM)
#undef S2R_VISIT_PARAM
}

// Calls f(FieldId, const T*&) for every topology array of a view, in list order.
template <typename View, typename F>
void ForEachTopology(View& v, F&& f) {
#define S2R_VISIT_TOPOLOGY(name, ...) f(FieldId::name, v.name);
  S2R_MODEL_TOPOLOGY(S2R_VISIT_TOPOLOGY)
#undef S2R_VISIT_TOPOLOGY
}

}  // namespace s2r
