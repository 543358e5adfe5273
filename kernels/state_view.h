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

// The per-world state arrays, declared once: StateView's members and accessors, the host copy
// (host/engine.h HostState), the CUDA backend's device copy and transfers, Engine::StateHash and
// the state layout the dataset store records are all expanded from this list.
//
// X(shape, name, type, rows, cols, unit, hashed, description)
//   shape   ROWS: `name(w, i)` points at row i of world w (rows x cols per world);
//           BLOCK: `name(w)` points at world w's cols values (rows is 1);
//           SCALAR: `name(w)` is world w's one value, by reference (rows and cols are 1)
//   rows, cols  per-world extent, as expressions over the StateView `v`
//   hashed  1 if Engine::StateHash covers it (the bodies' state)
#define S2R_STATE_ARRAYS(X)                                                                       \
  X(ROWS, body_pos, Real, v.nbody, 3, "m", 1, "body origin, world frame")                         \
  X(ROWS, body_quat, Real, v.nbody, 4, "1", 1, "body orientation (w x y z), world frame")         \
  X(ROWS, body_linvel, Real, v.nbody, 3, "m/s", 1, "velocity of the COM, world frame")            \
  X(ROWS, body_angvel, Real, v.nbody, 3, "rad/s", 1, "angular velocity, world frame")             \
  X(ROWS, ctrl_queue, Real, v.latency_capacity, v.nactuator, "ctrl", 0,                           \
    "submitted actions, a ring buffer indexed by control step")                                    \
  X(BLOCK, ctrl, Real, 1, v.nactuator, "ctrl", 0, "action in effect this control step")           \
  X(ROWS, joint_impulse, Real, v.njoint, kJointImpulseSlots, "N s", 0,                            \
    "joint rows' warm start (JointSlot)")                                                          \
  X(BLOCK, joint_q, Real, 1, v.njoint, "rad or m", 0,                                             \
    "joint position at the last step's end, unwrapped: an unlimited hinge keeps its turns")       \
  X(BLOCK, actuator_impulse, Real, 1, v.nactuator, "N s", 0, "implicit actuator warm start")      \
  X(BLOCK, actuator_force, Real, 1, v.nactuator, "N or N m", 0,                                   \
    "actuator force in the last substep")                                                         \
  X(BLOCK, contacts, Contact, 1, v.max_contacts, "", 0, "contacts after the last step")           \
  X(SCALAR, contact_count, int32_t, 1, 1, "1", 0, "contacts in the pool after the last step")     \
  X(SCALAR, contact_overflow, int64_t, 1, 1, "1", 0, "points dropped for lack of capacity, total")\
  X(SCALAR, status, int32_t, 1, 1, "1", 0, "WorldStatus bits")                                    \
  X(SCALAR, control_step, int64_t, 1, 1, "1", 0, "control steps taken since reset")               \
  X(SCALAR, time, Real, 1, 1, "s", 0, "simulated time since reset")                             \
  X(BLOCK, equality_impulse, Real, 1, kEqualityImpulseSlots * v.nequality, "N s or N m s", 0,     \
    "equalities' warm start, 6 per equality: a joint coupling's generalized impulse along its "   \
    "row (the first), a connect's world-frame impulse on body1 (three), a weld's impulse and "    \
    "angular impulse on body1 (six)")

struct StateView {
  int32_t nworld = 0;
  int32_t nbody = 0;
  int32_t nactuator = 0;
  int32_t njoint = 0;
  int32_t nequality = 0;
  int32_t max_contacts = 0;
  int32_t latency_capacity = 1;
  // the first world the arrays hold: 0, except in a view of one world staged elsewhere
  // (StageWorldState), whose arrays hold world `world0` alone
  int32_t world0 = 0;
  // 1: every array is laid out world-fastest by 4-byte word (word k of world w's block at word
  // k * nworld + w), so a warp's threads, consecutive worlds, read consecutive words. The CUDA
  // backend keeps its device state so when its kernels stage every world they step
  // (cuda/backend_cuda.cu); the accessors do not apply to such a view, only
  // StageWorldState / UnstageWorldState read and write it.
  int32_t interleaved = 0;

  // one pointer per array, (nworld, rows, cols), world-major: `body_pos_`
#define S2R_STATE_POINTER(shape, name, type, rows, cols, unit, hashed, description) \
  type* name##_ = nullptr;
  S2R_STATE_ARRAYS(S2R_STATE_POINTER)
#undef S2R_STATE_POINTER

  // accessors: `s.body_pos(w, b)`, `s.ctrl(w)`, `s.status(w)`
#define S2R_STATE_ACCESSOR_ROWS(name, type, rows, cols)                 \
  S2R_HDI type* name(int w, int i) const {                              \
    const StateView& v = *this;                                         \
    return name##_ + (int64_t(w - world0) * (rows) + i) * (cols);       \
  }
#define S2R_STATE_ACCESSOR_BLOCK(name, type, rows, cols)                \
  S2R_HDI type* name(int w) const {                                     \
    const StateView& v = *this;                                         \
    return name##_ + int64_t(w - world0) * (cols);                      \
  }
#define S2R_STATE_ACCESSOR_SCALAR(name, type, rows, cols) \
  S2R_HDI type& name(int w) const { return name##_[w - world0]; }
#define S2R_STATE_ACCESSOR(shape, name, type, rows, cols, unit, hashed, description) \
  S2R_STATE_ACCESSOR_##shape(name, type, rows, cols)
  S2R_STATE_ARRAYS(S2R_STATE_ACCESSOR)
#undef S2R_STATE_ACCESSOR
#undef S2R_STATE_ACCESSOR_ROWS
#undef S2R_STATE_ACCESSOR_BLOCK
#undef S2R_STATE_ACCESSOR_SCALAR
};

// A StateView's sizes for a model and world count; the pointers are left null.
S2R_HD StateView StateDims(const ModelView& m, int nworld) {
  StateView v;
  v.nworld = nworld;
  v.nbody = m.nbody;
  v.nactuator = m.nactuator;
  v.njoint = m.njoint;
  v.nequality = m.nequality;
  v.max_contacts = m.contact_capacity;
  v.latency_capacity = m.latency_capacity;
  return v;
}

// Bytes of one world's state arrays laid out one after another, each starting on a 16-byte line
// (StageWorldState's block)
S2R_HD int64_t WorldStateBytes(const StateView& v) {
  int64_t bytes = 0;
#define S2R_WORLD_STATE_BYTES(shape, name, type, rows, cols, unit, hashed, description) \
  bytes = (bytes + int64_t(rows) * int64_t(cols) * int64_t(sizeof(type)) + 15) / 16 * 16;
  S2R_STATE_ARRAYS(S2R_WORLD_STATE_BYTES)
#undef S2R_WORLD_STATE_BYTES
  return bytes;
}

// 4-byte words from one place to another (every state type is a whole number of words: Real,
// int32_t, int64_t, Contact), each `stride` words apart at the source and `to_stride` at the
// destination
S2R_HDI void CopyStateWords(const void* from, void* to, int64_t bytes, int64_t stride = 1, int64_t to_stride = 1) {
  const uint32_t* src = static_cast<const uint32_t*>(from);
  uint32_t* dst = static_cast<uint32_t*>(to);
  for (int64_t k = 0; k < bytes / 4; ++k) dst[k * to_stride] = src[k * stride];
}

// Where world w's block of an array starts, and the distance between its words, in a view's layout
// (world-major, or interleaved by word)
template <typename T>
S2R_HDI T* WorldBlockStart(const StateView& s, T* array, int w, int64_t words_per_world) {
  if (s.interleaved) return reinterpret_cast<T*>(reinterpret_cast<uint32_t*>(array) + w);
  return reinterpret_cast<T*>(reinterpret_cast<uint32_t*>(array) + int64_t(w - s.world0) * words_per_world);
}
S2R_HDI int64_t WorldWordStride(const StateView& s) { return s.interleaved ? s.nworld : 1; }

// One array between the host's world-major layout (word k of world w at w * words + k) and the
// interleaved one (at k * nworld + w): `to_interleaved` says which way. Host code (the CUDA
// backend's Download / Upload). In tiles of 16 worlds by 16 words, so that both sides move whole
// 64-byte lines: word by word, one side strides nworld words per access and every access misses
// the cache once nworld is in the thousands (bench/kernels_benchmark.cc BM_TransposeWorldWords).
inline void TransposeWorldWords(const uint32_t* from, uint32_t* to, int64_t nworld, int64_t words,
                                bool to_interleaved) {
  constexpr int64_t kTile = 16;
  for (int64_t w0 = 0; w0 < nworld; w0 += kTile) {
    const int64_t w1 = w0 + kTile < nworld ? w0 + kTile : nworld;
    for (int64_t k0 = 0; k0 < words; k0 += kTile) {
      const int64_t k1 = k0 + kTile < words ? k0 + kTile : words;
      for (int64_t w = w0; w < w1; ++w) {
        for (int64_t k = k0; k < k1; ++k) {
          if (to_interleaved) to[k * nworld + w] = from[w * words + k];
          else to[w * words + k] = from[k * nworld + w];
        }
      }
    }
  }
}

// Copies world w's arrays of `s` into `block` (WorldStateBytes(s) bytes, 16-byte aligned) and
// returns a view of world w whose arrays are those copies: a step through it reads and writes the
// block. The CUDA step kernels stage a world's state in the thread's local memory this way
// (cuda/backend_cuda.cu); UnstageWorldState copies it back.
S2R_HD StateView StageWorldState(const StateView& s, int w, char* block) {
  StateView v = s;
  v.nworld = 1;
  v.world0 = w;
  v.interleaved = 0;
  int64_t off = 0;
#define S2R_STAGE_STATE(shape, name, type, rows, cols, unit, hashed, description)  \
  {                                                                               \
    const int64_t bytes = int64_t(rows) * int64_t(cols) * int64_t(sizeof(type));  \
    type* local = reinterpret_cast<type*>(block + off);                           \
    CopyStateWords(WorldBlockStart(s, s.name##_, w, bytes / 4), local, bytes, WorldWordStride(s)); \
    v.name##_ = local;                                                            \
    off = (off + bytes + 15) / 16 * 16;                                           \
  }
  S2R_STATE_ARRAYS(S2R_STAGE_STATE)
#undef S2R_STAGE_STATE
  return v;
}

// Copies a staged world's arrays back into `s` (the view StageWorldState staged it from).
S2R_HD void UnstageWorldState(const StateView& staged, const StateView& s) {
  const int w = staged.world0;
  const StateView& v = staged;  // the sizes the list's expressions read
#define S2R_UNSTAGE_STATE(shape, name, type, rows, cols, unit, hashed, description) \
  {                                                                                \
    const int64_t bytes = int64_t(rows) * int64_t(cols) * int64_t(sizeof(type));   \
    CopyStateWords(staged.name##_, WorldBlockStart(s, s.name##_, w, bytes / 4), bytes, 1, WorldWordStride(s)); \
  }
  S2R_STATE_ARRAYS(S2R_UNSTAGE_STATE)
#undef S2R_UNSTAGE_STATE
}

// Elements of one world's block of each array: f(name, pointer member, elements per world,
// hashed), in list order.
template <typename View, typename F>
void ForEachStateArray(View& v, F&& f) {
#define S2R_VISIT_STATE(shape, name, type, rows, cols, unit, hashed, description) \
  f(#name, v.name##_, int64_t(rows) * int64_t(cols), hashed != 0);
  S2R_STATE_ARRAYS(S2R_VISIT_STATE)
#undef S2R_VISIT_STATE
}

}  // namespace s2r
