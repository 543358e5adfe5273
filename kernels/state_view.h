// StateView: the mutable state of a batch of worlds.
//
// World-major structure of arrays: each field is one array whose leading index is the world, so a
// world's bodies are contiguous and worlds never share a cache line of hot data. Always go through
// the accessors (`s.body_pos(world, body)`), never hand-written index arithmetic.
//
// Body state is the body frame as MJCF defines it (origin and orientation, world frame) plus the
// velocity of the centre of mass and the angular velocity, both in the world frame. Each world has
// its own local frame (worlds are not offset in one shared space: float32 would lose precision).
#pragma once

#include "kernels/contact.h"
#include "kernels/model_view.h"

namespace s2r {

// World status bits. A non-zero status freezes the world: it is skipped by every stage until it
// is reset; the rest of the batch runs on.
enum WorldStatus : int32_t {
  kWorldOk = 0,
  kWorldNonFinite = 1,   // a body's state became NaN or infinite
  kWorldRunaway = 2,     // a body's speed exceeded max_linear_speed
};

// per-joint warm-start slots: 3 linear locks, 3 angular locks, lower and upper limit, damping,
// friction loss, armature, spare
constexpr int kJointImpulseSlots = 12;
enum JointSlot : int {
  kSlotLinear = 0,
  kSlotAngular = 3,
  kSlotLowerLimit = 6,
  kSlotUpperLimit = 7,
  kSlotDamping = 8,
  kSlotFrictionLoss = 9,
  kSlotArmature = 10,
};

struct StateView {
  int32_t nworld = 0;
  int32_t nbody = 0;
  int32_t nactuator = 0;
  int32_t njoint = 0;
  int32_t max_contacts = 0;
  int32_t latency_capacity = 1;

  Real* body_pos_ = nullptr;     // (nworld, nbody, 3) body origin, world frame, m
  Real* body_quat_ = nullptr;    // (nworld, nbody, 4) body orientation, world frame
  Real* body_linvel_ = nullptr;  // (nworld, nbody, 3) COM velocity, world frame, m/s
  Real* body_angvel_ = nullptr;  // (nworld, nbody, 3) angular velocity, world frame, rad/s
  Real* ctrl_queue_ = nullptr;   // (nworld, latency_capacity, nactuator) submitted actions
  Real* ctrl_ = nullptr;         // (nworld, nactuator) action in effect this control step
  Real* joint_impulse_ = nullptr;  // (nworld, njoint, kJointImpulseSlots) warm start, N s
  Real* actuator_impulse_ = nullptr;  // (nworld, nactuator) implicit actuator warm start, N s
  Real* actuator_force_ = nullptr;    // (nworld, nactuator) actuator force last substep, N or N m
  Contact* contacts_ = nullptr;    // (nworld, max_contacts)
  int32_t* contact_count_ = nullptr;     // (nworld) contacts in the pool after the last step
  int64_t* contact_overflow_ = nullptr;  // (nworld) points dropped for lack of capacity, total
  int32_t* status_ = nullptr;            // (nworld) WorldStatus bits
  int64_t* control_step_ = nullptr;      // (nworld) control steps taken since reset
  Real* time_ = nullptr;                 // (nworld) simulated time since reset, s

  S2R_HD Real* body_pos(int w, int b) const { return body_pos_ + (int64_t(w) * nbody + b) * 3; }
  S2R_HD Real* body_quat(int w, int b) const { return body_quat_ + (int64_t(w) * nbody + b) * 4; }
  S2R_HD Real* body_linvel(int w, int b) const { return body_linvel_ + (int64_t(w) * nbody + b) * 3; }
  S2R_HD Real* body_angvel(int w, int b) const { return body_angvel_ + (int64_t(w) * nbody + b) * 3; }
  S2R_HD Real* ctrl_queue(int w, int slot) const {
    return ctrl_queue_ + (int64_t(w) * latency_capacity + slot) * nactuator;
  }
  S2R_HD Real* ctrl(int w) const { return ctrl_ + int64_t(w) * nactuator; }
  S2R_HD Real* joint_impulse(int w, int j) const {
    return joint_impulse_ + (int64_t(w) * njoint + j) * kJointImpulseSlots;
  }
  S2R_HD Real* actuator_impulse(int w) const { return actuator_impulse_ + int64_t(w) * nactuator; }
  S2R_HD Real* actuator_force(int w) const { return actuator_force_ + int64_t(w) * nactuator; }
  S2R_HD Contact* contacts(int w) const { return contacts_ + int64_t(w) * max_contacts; }
  S2R_HD int32_t& contact_count(int w) const { return contact_count_[w]; }
  S2R_HD int64_t& contact_overflow(int w) const { return contact_overflow_[w]; }
  S2R_HD int32_t& status(int w) const { return status_[w]; }
  S2R_HD int64_t& control_step(int w) const { return control_step_[w]; }
  S2R_HD Real& time(int w) const { return time_[w]; }
};

}  // namespace s2r
