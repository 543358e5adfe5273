// Model: the host-side owner of one scene's arrays, and the builder the MJCF loader fills.
//
// Its options and arrays are expanded from kernels/model_fields.h, one member per field, the same
// names as kernels/model_view.h: topology arrays are shared by every world; physical parameters
// hold one default value set that every world sees until the engine is given per-world values
// (Engine::SetParam). Names are kept here, never in the kernels.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/model_fields.h"
#include "kernels/contact.h"
#include "kernels/model_view.h"

namespace s2r {

// A field's default values for a model built in code: the list's defaults for one-per-model
// fields (gravity, contact_hertz, ...), empty for per-entity ones (Add* appends them).
template <typename T>
std::vector<T> ModelDefaults(FieldId id) {
  const FieldInfo& f = FieldInfoOf(id);
  if (f.entity != Entity::kNone) return {};
  std::vector<T> v(f.per);
  for (int k = 0; k < f.per; ++k) v[k] = static_cast<T>(f.defaults[k]);
  return v;
}

// A Finalize error about one entity (an equality, a tendon): the MJCF loader turns it into an error
// at that entity's element.
struct ModelEntityError : std::runtime_error {
  ModelEntityError(Entity e, int i, const std::string& what) : std::runtime_error(what), entity(e), index(i) {}
  Entity entity;
  int index;
};

struct Model {
  // --- scene-wide options (S2R_MODEL_OPTIONS), at their defaults ---
#define S2R_MODEL_OPTION(name, type, unit, bound, max, custom, defaults, description) \
  type name = type(S2R_FIELD_EXPAND defaults);
  S2R_MODEL_OPTIONS(S2R_MODEL_OPTION)
#undef S2R_MODEL_OPTION
  int steps_per_control = 10;  // derived by Finalize: round(1 / (control_hz * timestep))
  int latency_capacity = 1;    // derived by Finalize: max_latency_steps + 1
  // Substeps by what the model needs (ChooseSubsteps): the MJCF loader sets auto_substeps when the
  // scene gives neither s2r_substeps nor s2r_substeps_no_contact, and Finalize then sets both
  // substeps and substeps_no_contact by the rule and says why in substeps_reason. A model built in code
  // (auto_substeps false) keeps its own.
  bool auto_substeps = false;
  std::string substeps_reason;  // "" when the scene gave its counts (or the model was built in code)

  // --- names, in index order ---
  std::vector<std::string> body_name;   // body 0 is "world"
  std::vector<std::string> geom_name;   // "" when unnamed
  std::vector<std::string> joint_name;
  std::vector<std::string> actuator_name;
  std::vector<std::string> site_name;
  std::vector<std::string> equality_name;  // "" when unnamed
  std::vector<std::string> tendon_name;
  std::vector<std::pair<int32_t, int32_t>> exclude_body_pairs;  // <contact><exclude>

  // --- topology (S2R_MODEL_TOPOLOGY): (entities x per) each; Finalize derives the Derived ones ---
#define S2R_MODEL_TOPOLOGY_ARRAY(name, type, entity, per, derived, description) \
  std::vector<type> name;
  S2R_MODEL_TOPOLOGY(S2R_MODEL_TOPOLOGY_ARRAY)
#undef S2R_MODEL_TOPOLOGY_ARRAY

  // --- physical parameters (S2R_MODEL_PARAMS): the defaults every world sees until the engine is
  // given per-world values; one-per-model ones start at the list's defaults ---
#define S2R_MODEL_PARAM_ARRAY(name, type, entity, per, components, unit, bound, custom, defaults, \
                              description)                                                         \
  std::vector<type> name = ModelDefaults<type>(FieldId::name);
  S2R_MODEL_PARAMS(S2R_MODEL_PARAM_ARRAY)
#undef S2R_MODEL_PARAM_ARRAY

  // --- MJCF <keyframe> entries (host only: the chosen one is written into joint_qpos0,
  // joint_qvel0, body_pos0/quat0/linvel0/angvel0 by ApplyKeyframe) ---
  struct Keyframe {
    std::string name;
    std::vector<double> qpos, qvel, ctrl;  // empty: not given (qpos: the model's own start)
  };
  std::vector<Keyframe> keyframes;
  std::string keyframe;  // the keyframe applied ("" when none): "home" by default

  // notes the loader made about things it accepted but does not use (one line each, with file and
  // line): printed by the command line when it loads a scene
  std::vector<std::string> load_notes;

  // --- provenance ---
  std::string source_path;  // file the model was read from ("" when built in code)
  std::string source_text;  // the exact text that was parsed

  int nbody() const { return static_cast<int>(body_parent.size()); }
  int ngeom() const { return static_cast<int>(geom_type.size()); }
  int njoint() const { return static_cast<int>(joint_type.size()); }
  int nactuator() const { return static_cast<int>(actuator_type.size()); }
  int nsite() const { return static_cast<int>(site_body.size()); }
  int npair() const { return static_cast<int>(pair_geom.size() / 2); }
  int nreduced() const { return static_cast<int>(reduced_body.size()); }
  int nhullvert() const { return static_cast<int>(hull_vert.size() / 3); }
  int ntree() const { return static_cast<int>(tree_body.size()); }
  int nequality() const { return static_cast<int>(equality_active.size()); }
  int ntendon() const { return static_cast<int>(tendon_wrap.size() / 2); }
  int nwrap() const { return static_cast<int>(wrap_joint.size()); }
  // the contact pool a world needs: max_contacts, capped by what the collision pairs can produce
  // in one step (kMaxManifoldPoints each), so a scene of few pairs does not carry the pool
  // s2r_max_contacts asks for (box_push: 3 pairs, 12 points, not 64)
  int contact_capacity() const {
    const int64_t bound = int64_t(npair()) * kMaxManifoldPoints;
    return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(max_contacts, bound)));
  }
  // entities of a kind (kNone: 1), and their names (nullptr for kinds without names)
  int Count(Entity e) const;
  const std::vector<std::string>* Names(Entity e) const;

  // index of a named entity, -1 if absent
  int BodyId(const std::string& name) const;
  int GeomId(const std::string& name) const;
  int JointId(const std::string& name) const;
  int ActuatorId(const std::string& name) const;
  int SiteId(const std::string& name) const;
  int TendonId(const std::string& name) const;

  // Checks every option and array against kernels/model_fields.h (sizes, finite numbers, bounds)
  // and the indices between them, then derives steps_per_control, latency_capacity and the
  // Derived topology (joint parent frames, collision pairs, slide trees, actuator lists). Throws
  // std::runtime_error naming the field and entity on failure.
  void Finalize();
  void FindSlideTrees();  // part of Finalize: body_reduced, reduced_*, body_tree, tree_*
  // The substeps a physics step without contact points needs, with the reason (one line): 1 when
  // every joint is stepped in reduced coordinates (articulated or slide trees, no
  // maximal-coordinate joint), no equality or tendon couples joints and one substep would not cap
  // the joint rows' stiffness (joint_hertz <= 0.25 / timestep); else 0 (= substeps, 4 by default).
  // A joint equality or fixed tendon gives 1 substep with 2 solve passes (passes), a connect or
  // weld 2 substeps. A step with contact points runs substeps of at most kContactSubstepSeconds in such a model
  // (1 at a 2 ms timestep; never fewer than a step without), else kDefaultSubsteps. Reads the
  // Derived topology: call after Finalize's tree derivation.
  struct SubstepChoice {
    int contact;     // substeps
    int no_contact;  // substeps_no_contact (0: the same as contact)
    int soft_contact;  // substeps_soft_contact (0: the same as contact)
    int passes;      // solve_passes
    std::string reason;
  };
  static constexpr int kDefaultSubsteps = 4;
  static constexpr double kContactSubstepSeconds = 0.0025;
  SubstepChoice ChooseSubsteps() const;

  // MuJoCo's qpos / qvel sizes: 7 / 6 per free joint (a floating base's six parts), 4 / 3 per
  // ball (its three hinges), 1 / 1 per hinge or slide, 0 per weld
  int nq() const;
  int nv() const;
  // The bodies a trajectory CSV records (s2r rollout), in index order: the MJCF's own bodies after
  // the world, without the massless links the loader inserts between two joints of one body
  // (body_link: a ball's, a floating base's). (Sweep datasets record every moving body, links
  // too: a world's state is restored from them, solvers/sysid_config.cc.)
  std::vector<int> TrajectoryBodies() const;
  int JointQposSize(int j) const;  // MuJoCo's qpos entries of joint j (a ball's 4 on its first hinge)
  bool JointIsFreePart(int j) const;  // one of a floating base's six joints (joint_part)
  // Makes keyframe `name` the initial state (joint_qpos0, joint_qvel0 and, for free joints,
  // body_pos0 / body_quat0 / body_linvel0 / body_angvel0). Throws std::runtime_error naming the
  // known keyframes when there is none of that name.
  void ApplyKeyframe(const std::string& name);
  // a ball's keyframe quaternion and child-frame rates (either may be null) as its hinges' angles
  // and rates (ball joint j: its first hinge)
  void ApplyBallKeyframe(const std::string& name, int j, const double* qpos, const double* qvel);
  // A ball's three hinge angles (about the child's x, then y, then z: joint_part 1, 2, 3) of the
  // rotation q (w x y z) from its reference orientation, and the rotation of three angles; its
  // child-frame angular velocity of three rates at those angles, and the rates of one (false at 90
  // degrees about y, where they are not defined: the rates are then left as they are).
  static void BallAngles(const double q[4], double angles[3]);
  static void BallRotation(const double angles[3], double q[4]);
  static void BallVelocity(const double angles[3], const double rates[3], double w[3]);
  static bool BallRates(const double angles[3], const double w[3], double rates[3]);
  const Keyframe* FindKeyframe(const std::string& name) const;

  // a view whose batched fields all broadcast this model's defaults
  ModelView View() const;
};

// Add helpers used by the loader and by tests that build scenes in code. Each returns the index.
// Body poses are given in the WORLD frame (the loader composes MJCF's parent-relative poses);
// geom, joint and site poses in their body's frame. AddJoint marks the body as moving.
int AddBody(Model* m, const std::string& name, int parent, const std::array<Real, 3>& pos,
            const std::array<Real, 4>& quat);
int AddGeom(Model* m, const std::string& name, int body, GeomType type,
            const std::array<Real, 3>& size, const std::array<Real, 3>& pos,
            const std::array<Real, 4>& quat, Real friction);
int AddJoint(Model* m, const std::string& name, int body, JointType type,
             const std::array<Real, 3>& pos, const std::array<Real, 3>& axis);
int AddActuator(Model* m, const std::string& name, ActuatorType type, TransmissionType trn,
                int trnid);
int AddSite(Model* m, const std::string& name, int body, const std::array<Real, 3>& pos,
            const std::array<Real, 4>& quat);
// An <equality><joint> coupling joint1 = a0 + a1 joint2 + ... (joint2 -1: joint1 held at a0),
// polycoef (0 1 0 0 0) and solref (0.02 1) as MJCF's defaults; active.
int AddEqualityJoint(Model* m, const std::string& name, int joint1, int joint2);
// <equality><connect>: body1's point anchor1 (its frame) held on body2's point anchor2 (its frame);
// body2 0 is the world
int AddEqualityConnect(Model* m, const std::string& name, int body1, int body2,
                       const std::array<Real, 3>& anchor1, const std::array<Real, 3>& anchor2);
// a weld: body2's pose held in body1's frame (anchors as a connect's, relquat body2's orientation
// in body1's frame, w x y z)
int AddEqualityWeld(Model* m, const std::string& name, int body1, int body2,
                    const std::array<Real, 3>& anchor1, const std::array<Real, 3>& anchor2,
                    const std::array<Real, 4>& relquat, Real torquescale);
// A fixed tendon: length = sum of coef q over its (joint, coef) terms.
int AddFixedTendon(Model* m, const std::string& name,
                   const std::vector<std::pair<int, Real>>& terms);
// Attaches a convex hull to a mesh geom: its vertices (geom frame, m) are appended to hull_vert,
// geom_hull points at them and geom_size[0] becomes their bounding radius about the geom origin.
void SetGeomHull(Model* m, int geom, const std::vector<std::array<Real, 3>>& vertices);
// Sets a body's mass and principal inertia (with its COM frame) explicitly.
void SetBodyInertial(Model* m, int body, Real mass, const std::array<Real, 3>& inertia,
                     const std::array<Real, 3>& ipos, const std::array<Real, 4>& iquat);
// Computes mass and inertia of every body that has no explicit <inertial> from its geoms
// (density or mass per geom, parallel-axis theorem, principal axes by Jacobi rotation).
struct GeomMassSpec {
  int geom;
  Real mass;     // kg, or < 0 to use density
  Real density;  // kg/m^3
  // mesh geoms: the mesh's volume (m^3) and principal second moments per unit density (m^5)
  // along the geom axes (the geom frame is the mesh's inertial frame: host/scene/mesh_hull.h)
  Real volume = -1;
  std::array<Real, 3> unit_inertia = {0, 0, 0};
};
void ComputeBodyInertiaFromGeoms(Model* m, int body, const std::vector<GeomMassSpec>& geoms);

}  // namespace s2r
