// The model's fields, declared once.
//
// Every array and option a scene holds is one line of one of the three lists below; the host
// model (host/scene/model.h), the view the kernels read (kernels/model_view.h), the engine's
// SetParam / GetParam / ClearParam, the loader's `s2r_` custom settings, both backends' uploads
// (by FieldId, never by name string), `s2r inspect --fields` and docs/fields.md are all expanded
// from them (MuJoCo's mjxmacro.h does the same for mjModel). Adding a per-world parameter is one
// line in S2R_MODEL_PARAMS plus the physics that reads it.
//
//   S2R_MODEL_OPTIONS   scene-wide settings, one value for every world (substeps, control rate)
//   S2R_MODEL_TOPOLOGY  shared arrays that describe the system (parents, types, joint frames);
//                       `Derived` ones are computed by Model::Finalize, never given by a scene
//   S2R_MODEL_PARAMS    physical parameters: one default set from the scene, and per-world values
//                       when the engine is given them (a Batched array, kernels/model_view.h)
//
// Columns:
//   name        C++ member name and the name users address (`body_mass[box]`)
//   type        element type: Real or int32_t
//   entity      what the leading dimension counts: Body, Geom, Joint, Actuator, Site, Pair,
//               Reduced (bodies of slide trees), Tree (bodies of articulated trees), HullVert (mesh
//               hull vertices), Equality (<equality> joint couplings and connects), Tendon (fixed tendons),
//               Wrap (the joint terms of fixed tendons), or None (one set per model / world)
//   per         values per entity
//   components  names of those values, space separated ("" when per is 1 or they have none);
//               a component is addressed by name or index (`gravity.z`, `actuator_gear[a].0`)
//   unit        SI unit ("1": dimensionless; "m or rad": slide or hinge joint)
//   bound       the values' valid set (FieldBound below), checked at load and on SetParam
//   custom      the MJCF <custom><numeric name=...> that sets it ("" if none): `s2r_x` sets every
//               entity, `s2r_x:<entity name>` one of them
//   defaults    default values per entity, in parentheses
//   description one line, for docs/fields.md and `s2r inspect --fields`
//
// Conventions (MJCF's): lengths in m, angles in rad, masses in kg, quaternions (w, x, y, z)
// rotating the child frame into the parent frame, body 0 is the world body.
#pragma once

#include "kernels/base.h"

namespace s2r {

// --- the lists -----------------------------------------------------------------------------------

// X(name, type, unit, bound, max, custom, defaults, description); max: the largest value accepted
// (a sanity limit: a scene asking for more is an error, not an allocation failure)
#define S2R_MODEL_OPTIONS(X)                                                                      \
  X(timestep, Real, "s", Positive, 1, "", (0.002), "physics step (MJCF option timestep)")       \
  X(substeps, int32_t, "1", Positive, 1000, "s2r_substeps", (4),                                  \
    "solver substeps per physics step")                                                           \
  X(substeps_no_contact, int32_t, "1", NonNegative, 1000, "s2r_substeps_no_contact", (0),         \
    "substeps of a physics step with no contact point (0: substeps); without it and "             \
    "s2r_substeps, 1 for models that need no more (Model::ChooseSubsteps, docs/physics.md)")      \
  X(substeps_soft_contact, int32_t, "1", NonNegative, 1000, "s2r_substeps_soft_contact", (0),     \
    "substeps of a physics step whose contact points all take the scene's s2r_contact_hertz (no " \
    "pair of a stiffer geom_contact_hertz; 0: substeps); without it and s2r_substeps, fewer "    \
    "than substeps where the stiffest geoms need more than the scene's (Model::ChooseSubsteps)")  \
  X(solve_passes, int32_t, "1", Positive, 100, "s2r_solve_passes", (1),                          \
    "fewest solve passes over every row in a physics step: each substep runs ceil(solve_passes "  \
    "/ substeps); without it, s2r_substeps and s2r_substeps_no_contact, 2 for models whose "      \
    "joints a joint equality or fixed tendon couples (Model::ChooseSubsteps, docs/physics.md)")   \
  X(control_hz, Real, "Hz", Positive, 1e6, "s2r_control_hz", (50),                                \
    "control rate; 1 / (control_hz timestep) physics steps per control step")                     \
  X(max_contacts, int32_t, "1", Positive, 65536, "s2r_max_contacts", (64),                        \
    "contact pool per world; points beyond it are dropped and counted")                          \
  X(max_latency_steps, int32_t, "control steps", NonNegative, 10000, "s2r_max_latency_steps", (0),\
    "largest latency_steps any world may use (sizes the action ring buffer)")                     \
  X(reduce_slide_trees, int32_t, "1", Bool, kUnbounded, "s2r_reduce_slide_trees", (1),                     \
    "step slide-joint trees in reduced coordinates (kernels/solver_reduced.h)")                   \
  X(reduce_trees, int32_t, "1", Bool, kUnbounded, "s2r_reduce_trees", (1),                        \
    "step hinge/slide trees in reduced coordinates (kernels/solver_tree.h); 0 also keeps slide "  \
    "trees maximal")                                                                              \
  X(explicit_servo_spring, int32_t, "1", Bool, kUnbounded, "s2r_explicit_servo_spring", (0),      \
    "position actuators' spring on the substep-start position, explicit (MuJoCo's Euler); 0: "    \
    "on the mid-step position, implicit")

// X(name, type, entity, per, derived, description)
#define S2R_MODEL_TOPOLOGY(X)                                                                     \
  X(body_parent, int32_t, Body, 1, Input, "parent body, -1 for the world")                        \
  X(body_joint, int32_t, Body, 1, Input, "joint that moves the body, -1 if none")                 \
  X(body_dynamic, int32_t, Body, 1, Input, "1 if the body moves, 0 if fixed to the world")        \
  X(body_link, int32_t, Body, 1, Input,                                                           \
    "1 for a massless link s2r inserted between two joints of one MJCF body (named body:joint)")  \
  X(geom_type, int32_t, Geom, 1, Input, "GeomType")                                               \
  X(geom_body, int32_t, Geom, 1, Input, "body the geom belongs to")                               \
  X(geom_contype, int32_t, Geom, 1, Input, "contact type bits (MJCF contype)")                     \
  X(geom_conaffinity, int32_t, Geom, 1, Input, "contact affinity bits (MJCF conaffinity)")         \
  X(joint_type, int32_t, Joint, 1, Input, "JointType")                                            \
  X(joint_body, int32_t, Joint, 1, Input, "child body moved by the joint")                        \
  X(joint_parent, int32_t, Joint, 1, Input, "parent body (0 = world)")                            \
  X(joint_limited, int32_t, Joint, 1, Input,                                                       \
    "1 if joint_range is enforced; 2 on a ball's first hinge: its cone limit, the rotation angle at " \
    "most joint_range hi")                                                                       \
  X(joint_part, int32_t, Joint, 1, Input,                                                         \
    "part of an MJCF ball or free joint stepped in an articulated tree: 1, 2, 3 the hinge about " \
    "the child's x, y, z (joint:x, :y, :z), 4, 5, 6 a free joint's slide along world x, y, z "    \
    "(joint:tx, :ty, :tz); 0 otherwise (kernels/solver_tree.h)")                                  \
  X(actuator_type, int32_t, Actuator, 1, Input, "ActuatorType")                                   \
  X(actuator_trntype, int32_t, Actuator, 1, Input, "TransmissionType")                            \
  X(actuator_trnid, int32_t, Actuator, 1, Input, "joint or site the actuator drives")             \
  X(actuator_ctrllimited, int32_t, Actuator, 1, Input, "1 if controls are clamped to ctrlrange")  \
  X(actuator_forcelimited, int32_t, Actuator, 1, Input, "1 if forces are clamped to forcerange")  \
  X(site_body, int32_t, Site, 1, Input, "body the site belongs to")                               \
  X(joint_pos_child, Real, Joint, 3, Input, "joint anchor in the child body frame, m")            \
  X(joint_axis_child, Real, Joint, 3, Input, "unit joint axis in the child body frame")           \
  X(site_pos, Real, Site, 3, Input, "site position in its body frame, m")                         \
  X(geom_hull, int32_t, Geom, 2, Input,                                                           \
    "mesh geoms: first hull_vert row and vertex count of the convex hull; -1 0 for other types")  \
  X(hull_vert, Real, HullVert, 3, Input,                                                          \
    "convex hull vertices of the mesh geoms, each in its geom frame, m")                          \
  X(site_quat, Real, Site, 4, Input, "site orientation in its body frame")                        \
  X(equality_type, int32_t, Equality, 1, Input, "EqualityType: joint coupling, connect or weld") \
  X(equality_joint, int32_t, Equality, 2, Input,                                                  \
    "joint1 and joint2 of an <equality><joint> (joint2 -1: joint1 held at polycoef a0); -1 -1 "   \
    "for a connect or weld")                                                                      \
  X(equality_body, int32_t, Equality, 2, Input,                                                   \
    "body1 and body2 of an <equality><connect> or <weld> (0: the world); -1 -1 for a joint "      \
    "coupling")                                                                                   \
  X(equality_active, int32_t, Equality, 1, Input, "1 if the coupling is enforced (MJCF active)")  \
  X(tendon_wrap, int32_t, Tendon, 2, Input, "first wrap_joint row of a fixed tendon and its count")\
  X(wrap_joint, int32_t, Wrap, 1, Input, "joint of each fixed-tendon term")                       \
  X(wrap_coef, Real, Wrap, 1, Input, "coefficient of each term: tendon length = sum coef q")      \
  X(pair_geom, int32_t, Pair, 2, Derived,                                                         \
    "candidate collision pairs (geom indices, first < second) after contype/conaffinity, "        \
    "parent and exclude filtering")                                                               \
  X(body_reduced, int32_t, Body, 1, Derived, "rank among the reduced (slide-tree) bodies, -1")    \
  X(reduced_body, int32_t, Reduced, 1, Derived, "body of each reduced rank, in body order")       \
  X(reduced_parent, int32_t, Reduced, 1, Derived, "rank of the parent, -1 if it is fixed")        \
  X(body_tree, int32_t, Body, 1, Derived, "rank among the articulated-tree bodies, -1")           \
  X(tree_body, int32_t, Tree, 1, Derived, "body of each articulated-tree rank, in body order")    \
  X(tree_parent, int32_t, Tree, 1, Derived, "tree rank of the parent, -1 if it is fixed")         \
  X(joint_actuator, int32_t, Joint, 1, Derived,                                                   \
    "first position/velocity actuator on the joint, -1 if none (list through actuator_next)")     \
  X(tendon_actuator, int32_t, Tendon, 1, Derived,                                                 \
    "first position/velocity actuator on the tendon, -1 if none (list through actuator_next)")    \
  X(actuator_next, int32_t, Actuator, 1, Derived,                                                 \
    "next actuator on the same joint or tendon, -1 at end")                                      \
  X(joint_pos_parent, Real, Joint, 3, Derived, "joint anchor in the parent body frame, m")        \
  X(joint_axis_parent, Real, Joint, 3, Derived, "unit joint axis in the parent body frame")       \
  X(joint_qrel0, Real, Joint, 4, Derived, "parent^-1 * child rotation at q = 0")

// X(name, type, entity, per, components, unit, bound, custom, defaults, description)
#define S2R_MODEL_PARAMS(X)                                                                       \
  X(gravity, Real, None, 3, "x y z", "m/s^2", Finite, "", (0, 0, -9.81),                          \
    "gravitational acceleration (MJCF option gravity)")                                        \
  X(body_mass, Real, Body, 1, "", "kg", MovingPositive, "", (0), "mass")                          \
  X(body_inertia, Real, Body, 3, "x y z", "kg m^2", MovingPositive, "", (0, 0, 0),                \
    "principal moments of inertia about the COM")                                                 \
  X(body_ipos, Real, Body, 3, "x y z", "m", Finite, "", (0, 0, 0), "COM in the body frame")       \
  X(body_iquat, Real, Body, 4, "w x y z", "1", UnitQuat, "", (1, 0, 0, 0),                        \
    "principal-axis frame in the body frame")                                                     \
  X(body_pos0, Real, Body, 3, "x y z", "m", Finite, "", (0, 0, 0),                                \
    "initial body origin, world frame (free and static bodies; jointed ones follow joint_qpos0)")  \
  X(body_quat0, Real, Body, 4, "w x y z", "1", UnitQuat, "", (1, 0, 0, 0),                        \
    "initial body orientation, world frame (free and static bodies)")                             \
  X(body_linvel0, Real, Body, 3, "x y z", "m/s", Finite, "", (0, 0, 0),                           \
    "initial COM velocity, world frame (free bodies)")                                            \
  X(body_angvel0, Real, Body, 3, "x y z", "rad/s", Finite, "", (0, 0, 0),                         \
    "initial angular velocity, world frame (free bodies)")                                        \
  X(geom_size, Real, Geom, 3, "", "m", NonNegative, "", (0, 0, 0),                                \
"sphere: radius; capsule, cylinder: radius, half-length; box: half-extents; ellipsoid: "  \
    "semi-axes; mesh: bounding radius of the hull")                            \
  X(geom_pos, Real, Geom, 3, "x y z", "m", Finite, "", (0, 0, 0), "position in the body frame")   \
  X(geom_quat, Real, Geom, 4, "w x y z", "1", UnitQuat, "", (1, 0, 0, 0),                         \
    "orientation in the body frame")                                                              \
  X(geom_friction, Real, Geom, 1, "", "1", NonNegative, "", (1),                                  \
    "sliding (Coulomb) friction coefficient; a pair uses the larger")                             \
  X(geom_contact_hertz, Real, Geom, 1, "", "Hz", NonNegative, "", (0),                            \
    "the geom's contact stiffness as a natural frequency; a pair takes the largest of its geoms' " \
    "and contact_hertz (MJCF solref and solimp, mapped: docs/mjcf_subset.md); a scene whose geoms " \
    "all have 0 runs a step without it (kernels/step_features.h), where per-world values are not used") \
  X(geom_restitution, Real, Geom, 1, "", "1", UnitInterval, "s2r_restitution", (0),               \
    "coefficient of restitution; a pair uses the larger")                                         \
  X(joint_range, Real, Joint, 2, "lo hi", "m or rad", Ordered, "", (0, 0),                        \
    "joint limits, enforced where joint_limited")                                                 \
  X(joint_damping, Real, Joint, 1, "", "N s/m or N m s/rad", NonNegative, "", (0),                \
    "viscous damping on the joint")                                                               \
  X(joint_frictionloss, Real, Joint, 1, "", "N or N m", NonNegative, "", (0),                     \
    "dry friction on the joint")                                                                  \
  X(joint_frictionloss_timeconst, Real, Joint, 1, "", "s", NonNegative, "", (0),                  \
    "friction loss softness (MJCF solreffriction[0]); 0: hard")                                   \
  X(joint_frictionloss_impedance, Real, Joint, 2, "dmin dmax", "1", UnitInterval, "", (0.9, 0.95),\
    "soft friction loss impedance (MJCF solimpfriction[0:2])")                                    \
  X(joint_limit_hertz, Real, Joint, 1, "", "Hz", NonNegative, "", (0),                           \
    "the joint's limit stiffness as a natural frequency; 0: joint_hertz (MJCF solreflimit and "   \
    "solimplimit, mapped: docs/mjcf_subset.md)")                                                 \
  X(joint_stiffness, Real, Joint, 1, "", "N/m or N m/rad", NonNegative, "", (0),                  \
    "joint spring: generalized force -stiffness (q - springref) (MJCF stiffness; tree joints)")   \
  X(joint_springref, Real, Joint, 1, "", "m or rad", Finite, "", (0),                             \
    "the spring's rest position (MJCF springref)")                                                \
  X(joint_armature, Real, Joint, 1, "", "kg or kg m^2", NonNegative, "", (0),                     \
    "inertia added on the joint axis (rotor)")                                                    \
  X(joint_qpos0, Real, Joint, 1, "", "m or rad", Finite, "s2r_qpos0", (0), "initial joint position") \
  X(joint_qvel0, Real, Joint, 1, "", "m/s or rad/s", Finite, "", (0), "initial joint velocity")   \
  X(actuator_gear, Real, Actuator, 6, "", "1", Finite, "", (1, 0, 0, 0, 0, 0),                    \
    "transmission gear: joint: [0] scales q; site: force [0:3] and torque [3:6], site frame")     \
  X(actuator_ctrlmap, Real, Actuator, 2, "scale offset", "1", Finite, "", (1, 0),                 \
    "the control as the actuator reads it: scale ctrl + offset (the target of a servo, a "        \
    "motor's force; MJCF general: gainprm[0] / kp and biasprm[0] / kp)")                          \
  X(actuator_kp, Real, Actuator, 1, "", "N/m or N m/rad", NonNegative, "", (0),                   \
    "position gain: force = kp (ctrl - length) - kv d(length)/dt")                                \
  X(actuator_kv, Real, Actuator, 1, "", "N s/m or N m s/rad", NonNegative, "", (0),               \
    "velocity gain")                                                                              \
  X(actuator_ctrlrange, Real, Actuator, 2, "lo hi", "ctrl", Ordered, "", (0, 0),                  \
    "control limits, enforced where actuator_ctrllimited")                                        \
  X(actuator_forcerange, Real, Actuator, 2, "lo hi", "N or N m", Ordered, "", (0, 0),             \
    "force limits, enforced where actuator_forcelimited")                                         \
  X(latency_steps, int32_t, None, 1, "", "control steps", Latency, "s2r_latency_steps", (0),      \
    "action delay: an action acts this many control steps after it is given")                     \
  X(latency_timesteps, Real, None, 1, "", "physics steps", TimestepLatency, "s2r_latency_timesteps",  \
    (0), "further action delay in physics steps, fractions included (< steps_per_control)")      \
  X(contact_hertz, Real, None, 1, "", "Hz", Positive, "s2r_contact_hertz", (120),                 \
    "contact stiffness as a natural frequency")                                                   \
  X(contact_damping_ratio, Real, None, 1, "", "1", NonNegative, "s2r_contact_damping_ratio",      \
    (10), "contact damping ratio")                                                                \
  X(joint_hertz, Real, None, 1, "", "Hz", Positive, "s2r_joint_hertz", (60),                      \
    "joint and limit constraint stiffness as a natural frequency")                                \
  X(joint_damping_ratio, Real, None, 1, "", "1", NonNegative, "s2r_joint_damping_ratio", (2),     \
    "joint and limit constraint damping ratio")                                                   \
  X(contact_push_velocity, Real, None, 1, "", "m/s", Positive, "s2r_contact_push_velocity", (3),  \
    "largest speed at which penetration is resolved")                                            \
  X(restitution_threshold, Real, None, 1, "", "m/s", NonNegative, "s2r_restitution_threshold",    \
    (0.2), "approach speed below which contacts do not bounce")                                   \
  X(linear_slop, Real, None, 1, "", "m", NonNegative, "s2r_linear_slop", (0),                     \
    "penetration the push-out bias leaves alone")                                                 \
  X(speculative_distance, Real, None, 1, "", "m", NonNegative, "s2r_speculative_distance",        \
    (0.002), "contacts are created below this gap (plus the distance the pair can close)")        \
  X(max_linear_speed, Real, None, 1, "", "m/s", Positive, "s2r_max_linear_speed", (100),          \
    "a body faster than this freezes its world as runaway")                                      \
  X(body_gravcomp, Real, Body, 1, "", "1", NonNegative, "", (0),                                  \
    "gravity compensation: a force -gravcomp m g at the COM (MJCF body gravcomp; 1 cancels gravity)") \
  X(equality_polycoef, Real, Equality, 5, "a0 a1 a2 a3 a4", "m or rad", Finite, "", (0, 1, 0, 0, 0), \
    "joint coupling q1 = a0 + a1 q2 + a2 q2^2 + a3 q2^3 + a4 q2^4 (MJCF polycoef)")              \
  X(equality_anchor, Real, Equality, 6, "x1 y1 z1 x2 y2 z2", "m", Finite, "", (0, 0, 0, 0, 0, 0),  \
    "connect, weld: the joined point in body1's frame and in body2's frame (MJCF anchor, weld "   \
    "relpose; the one not given from the reference configuration)")                              \
  X(equality_relquat, Real, Equality, 4, "w x y z", "1", UnitQuat, "", (1, 0, 0, 0),              \
    "weld: body2's orientation in body1's frame that the weld holds (MJCF relpose, or the "       \
    "reference configuration's; with sites site1 quat * conj(site2 quat))")                      \
  X(equality_torquescale, Real, Equality, 1, "", "m", NonNegative, "", (1),                       \
    "weld: weight of the angular rows against the linear ones (MJCF torquescale; 0: a connect)")  \
  X(equality_solref, Real, Equality, 2, "timeconst dampratio", "s, 1", Positive, "", (0.02, 1),   \
    "how fast a coupling error is corrected: a spring of frequency 1 / (2 pi timeconst dampratio) " \
    "and damping ratio dampratio (MJCF solref)")

// --- what the columns mean ----------------------------------------------------------------------

enum class Entity : int32_t {
  kNone, kBody, kGeom, kJoint, kActuator, kSite, kPair, kReduced, kHullVert, kTree, kEquality,
  kTendon, kWrap
};
enum class FieldClass : int32_t { kOption, kTopology, kParam };
enum class FieldType : int32_t { kReal, kInt32 };

// The valid values of a field. Integer fields must also hold whole numbers.
enum class FieldBound : int32_t {
  kAny,             // anything (topology: checked by Model::Finalize)
  kFinite,          // any finite number
  kPositive,        // > 0 (integers: >= 1)
  kNonNegative,     // >= 0
  kUnitInterval,    // in [0, 1]
  kBool,            // 0 or 1
  kOrdered,         // (lo, hi) pairs with lo <= hi
  kUnitQuat,        // quaternions of unit length (within 1e-4)
  kMovingPositive,  // >= 0, and > 0 for bodies that move
  kLatency,         // an integer in [0, max_latency_steps]
  kTimestepLatency, // a number in [0, steps_per_control)
};

struct FieldInfo {
  const char* name;
  FieldClass cls;
  FieldType type;
  Entity entity;
  int32_t per;             // values per entity
  const char* components;  // space-separated names of the per-entity values, or ""
  const char* unit;
  FieldBound bound;
  const char* custom;      // MJCF <custom> numeric name, or ""
  bool derived;            // topology computed by Model::Finalize
  double max_value;        // options: the largest value accepted; others: unbounded above
  double defaults[6];      // per-entity default values (options and parameters)
  const char* description;
};

template <typename T>
struct FieldTypeOf;
template <>
struct FieldTypeOf<float> { static constexpr FieldType value = FieldType::kReal; };
template <>
struct FieldTypeOf<double> { static constexpr FieldType value = FieldType::kReal; };
template <>
struct FieldTypeOf<int32_t> { static constexpr FieldType value = FieldType::kInt32; };

constexpr double kUnbounded = 1e300;

#define S2R_FIELD_EXPAND(...) __VA_ARGS__
#define S2R_FIELD_Input false
#define S2R_FIELD_Derived true

// Every field's index: FieldId::body_mass. The order is the lists' order.
enum class FieldId : int32_t {
#define S2R_FIELD_ID(name, ...) name,
  S2R_MODEL_OPTIONS(S2R_FIELD_ID) S2R_MODEL_TOPOLOGY(S2R_FIELD_ID) S2R_MODEL_PARAMS(S2R_FIELD_ID)
#undef S2R_FIELD_ID
  kCount
};
constexpr int kNumModelFields = static_cast<int>(FieldId::kCount);

// The table, indexed by FieldId.
inline constexpr FieldInfo kModelFields[kNumModelFields] = {
#define S2R_FIELD_OPTION_INFO(name, type, unit, bound, max, custom, defaults, description)         \
  {#name, FieldClass::kOption, FieldTypeOf<type>::value, Entity::kNone, 1, "", unit,              \
   FieldBound::k##bound, custom, false, max, {S2R_FIELD_EXPAND defaults}, description},
#define S2R_FIELD_TOPOLOGY_INFO(name, type, entity, per, derived, description)                     \
  {#name, FieldClass::kTopology, FieldTypeOf<type>::value, Entity::k##entity, per, "", "",         \
   FieldBound::kAny, "", S2R_FIELD_##derived, kUnbounded, {0}, description},
#define S2R_FIELD_PARAM_INFO(name, type, entity, per, components, unit, bound, custom, defaults,   \
                             description)                                                          \
  {#name, FieldClass::kParam, FieldTypeOf<type>::value, Entity::k##entity, per, components, unit,  \
   FieldBound::k##bound, custom, false, kUnbounded, {S2R_FIELD_EXPAND defaults}, description},
    S2R_MODEL_OPTIONS(S2R_FIELD_OPTION_INFO) S2R_MODEL_TOPOLOGY(S2R_FIELD_TOPOLOGY_INFO)
        S2R_MODEL_PARAMS(S2R_FIELD_PARAM_INFO)
#undef S2R_FIELD_OPTION_INFO
#undef S2R_FIELD_TOPOLOGY_INFO
#undef S2R_FIELD_PARAM_INFO
};

constexpr const FieldInfo& FieldInfoOf(FieldId id) { return kModelFields[static_cast<int>(id)]; }

}  // namespace s2r
