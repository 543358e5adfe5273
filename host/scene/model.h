// Model: the host-side owner of one scene's arrays, and the builder the MJCF loader fills.
//
// Fields mirror kernels/model_view.h one to one: topology arrays are shared by every world;
// physical parameters hold one default value set that every world sees until the engine is given
// per-world values (Engine::SetParam). Names are kept here, never in the kernels.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/model_view.h"

namespace s2r {

struct Model {
  // --- scene-wide options ---
  Real timestep = Real(0.002);      // physics step, s (MJCF <option timestep>)
  int substeps = 4;                 // solver substeps per physics step (s2r_substeps)
  Real control_hz = Real(50);       // control rate, Hz (s2r_control_hz); a multiple of 1/timestep
  int steps_per_control = 10;       // derived: round(1 / (control_hz * timestep))
  int latency_capacity = 1;         // ring-buffer slots: max latency + 1 (s2r_max_latency_steps)
  int max_contacts = 64;            // contact pool per world (s2r_max_contacts)
  bool reduce_slide_trees = true;   // slide trees in reduced coordinates (s2r_reduce_slide_trees)

  // --- names, in index order ---
  std::vector<std::string> body_name;   // body 0 is "world"
  std::vector<std::string> geom_name;   // "" when unnamed
  std::vector<std::string> joint_name;
  std::vector<std::string> actuator_name;
  std::vector<std::string> site_name;

  // --- topology ---
  std::vector<int32_t> body_parent, body_joint, body_dynamic;
  std::vector<int32_t> geom_type, geom_body, geom_contype, geom_conaffinity;
  std::vector<int32_t> joint_type, joint_body, joint_parent, joint_limited;
  std::vector<int32_t> actuator_type, actuator_trntype, actuator_trnid;
  std::vector<int32_t> actuator_ctrllimited, actuator_forcelimited;
  std::vector<int32_t> site_body;
  std::vector<std::pair<int32_t, int32_t>> exclude_body_pairs;  // <contact><exclude>
  std::vector<int32_t> pair_geom;  // derived by Finalize: (npair, 2)
  // derived by Finalize: the bodies stepped in reduced coordinates (kernels/solver_reduced.h)
  std::vector<int32_t> body_reduced;    // (nbody) rank or -1
  std::vector<int32_t> reduced_body;    // (nreduced)
  std::vector<int32_t> reduced_parent;  // (nreduced) parent rank or -1
  // derived by Finalize: each joint's position/velocity actuators as a list (kernels/model_view.h)
  std::vector<int32_t> joint_actuator, actuator_next;

  // joint frames: the loader fills pos/axis in the child frame; Finalize derives the rest
  std::vector<Real> joint_pos_child, joint_axis_child;         // (njoint, 3)
  std::vector<Real> joint_pos_parent, joint_axis_parent;       // (njoint, 3) derived
  std::vector<Real> joint_qrel0;                               // (njoint, 4) derived
  std::vector<Real> site_pos, site_quat;                       // (nsite, 3), (nsite, 4)

  // --- physical parameters (defaults for every world), layouts as in ModelView ---
  std::vector<Real> gravity{Real(0), Real(0), Real(-9.81)};
  std::vector<Real> body_mass, body_inertia, body_ipos, body_iquat;
  std::vector<Real> body_pos0, body_quat0, body_linvel0, body_angvel0;
  std::vector<Real> geom_size, geom_pos, geom_quat, geom_friction, geom_restitution;
  std::vector<Real> joint_range, joint_damping, joint_frictionloss, joint_armature, joint_qpos0,
      joint_qvel0;
  std::vector<Real> actuator_gear, actuator_kp, actuator_kv, actuator_ctrlrange,
      actuator_forcerange;
  std::vector<int32_t> latency_steps{0};
  std::vector<Real> contact_hertz{Real(120)};
  std::vector<Real> contact_damping_ratio{Real(10)};
  std::vector<Real> joint_hertz{Real(60)};
  std::vector<Real> joint_damping_ratio{Real(2)};
  std::vector<Real> contact_push_velocity{Real(3)};
  std::vector<Real> restitution_threshold{Real(0.2)};
  std::vector<Real> linear_slop{Real(0)};
  std::vector<Real> speculative_distance{Real(0.002)};
  std::vector<Real> max_linear_speed{Real(100)};

  // --- provenance ---
  std::string source_path;  // file the model was read from ("" when built in code)
  std::string source_text;  // the exact text that was parsed

  int nbody() const { return static_cast<int>(body_parent.size()); }
  int ngeom() const { return static_cast<int>(geom_type.size()); }
  int njoint() const { return static_cast<int>(joint_type.size()); }
  int nactuator() const { return static_cast<int>(actuator_type.size()); }
  int nsite() const { return static_cast<int>(site_body.size()); }

  // index of a named entity, -1 if absent
  int BodyId(const std::string& name) const;
  int GeomId(const std::string& name) const;
  int JointId(const std::string& name) const;
  int ActuatorId(const std::string& name) const;
  int SiteId(const std::string& name) const;

  // Derives steps_per_control, joint parent frames and the collision pair list, and checks every
  // array's size and value (positive masses, finite numbers, valid indices). Throws
  // std::runtime_error naming the entity on failure.
  void Finalize();
  void FindSlideTrees();  // part of Finalize: body_reduced, reduced_body, reduced_parent

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
// Sets a body's mass and principal inertia (with its COM frame) explicitly.
void SetBodyInertial(Model* m, int body, Real mass, const std::array<Real, 3>& inertia,
                     const std::array<Real, 3>& ipos, const std::array<Real, 4>& iquat);
// Computes mass and inertia of every body that has no explicit <inertial> from its geoms
// (density or mass per geom, parallel-axis theorem, principal axes by Jacobi rotation).
struct GeomMassSpec {
  int geom;
  Real mass;     // kg, or < 0 to use density
  Real density;  // kg/m^3
};
void ComputeBodyInertiaFromGeoms(Model* m, int body, const std::vector<GeomMassSpec>& geoms);

}  // namespace s2r
