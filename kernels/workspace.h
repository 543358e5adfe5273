// Scratch memory of one world's step, laid out once for both backends.
//
// Each array is one line of S2R_WORKSPACE_ARRAYS: its element type, its element count for a model
// (an expression over the ModelView `m`), and its lifetime:
//   Step   written and read within one step: the CPU backend gives each thread one block and
//          reuses it for every world that thread steps; CUDA gives each world its own. A world's
//          control step (ControlStep) runs all its physics steps on one block, so the tree block
//          carries from one physics step to the next within it (PrepareTree), never further
//   World  kept between a world's steps (the slide-tree block, solver_reduced.h): one block per
//          world on every backend, rebuilt when the backend clears its validity word
// ComputeWorkspaceLayout places the arrays of each lifetime in one block (every array starting on
// a 64-byte line, so threads never share a line of scratch) and BindWorkspace turns a block
// address into the pointers the step reads; an array of no elements gets a null pointer.
#pragma once

#include "kernels/collide.h"
#include "kernels/solver_contact.h"
#include "kernels/solver_coupling.h"
#include "kernels/solver_joint.h"
#include "kernels/solver_reduced.h"

namespace s2r {

// Reals of the all-locks factor (R x R), or 0 when the world's R lock rows are too many to be
// solved together (kMaxTreeLockRows) or there are none; LockScratchSize likewise.
S2R_HD int LockFactorSize(const ModelView& m) {
  int r = TotalBlockRows(m);
  return r > 0 && r <= kMaxTreeLockRows ? r * r : 0;
}
S2R_HD int LockTogetherScratchSize(const ModelView& m) {
  return LockFactorSize(m) > 0 ? LockScratchSize(m) : 0;
}

// The per-joint lock-block factors, for models with a joint stepped in maximal coordinates (not
// free, not in a slide tree or an articulated tree: JointIsReduced); only those joints' paths read
// them (kStepJointBlocks), so a gantry's or an arm's step block does not carry the array.
S2R_HD int JointFactorSize(const ModelView& m) {
  for (int j = 0; j < m.njoint; ++j) {
    if (m.joint_type[j] != kJointFree && !JointIsReduced(m, j)) return (m.njoint + 1) * kJointFactorSize;
  }
  return 0;
}

// Manifolds a step can hold: one per geom pair with points (CollideWorld emits each candidate
// pair's points together, PrepareContacts makes a manifold of each run), so no more than the
// candidate pairs or the points
S2R_HD int ManifoldCapacity(const ModelView& m) { return m.npair < m.contact_capacity ? m.npair : m.contact_capacity; }

// The step's contact pool: the capacity, and room past it for one pair's points, which the narrow
// phase writes in place before CollideWorld knows how many fit (those past the capacity are
// counted as overflow, not kept)
S2R_HD int ContactPoolSize(const ModelView& m) { return m.npair > 0 ? m.contact_capacity + kMaxManifoldPoints : 0; }

// X(name, type, count, lifetime, description)
#define S2R_WORKSPACE_ARRAYS(X)                                                                   \
  X(bodies, SolverBody, m.nbody, Step, "bodies' solver state")                                    \
  X(constraints, ContactConstraint, m.contact_capacity, Step, "one contact row set per point")         \
  X(manifolds, ContactManifold, ManifoldCapacity(m), Step, "one per touching geom pair")           \
  X(contacts, Contact, ContactPoolSize(m), Step, "this step's points, copied to the state")          \
  X(geom_xform, Transform, m.ngeom, Step, "world pose of each geom at the step start")            \
  X(geom_reach, Real, 2 * m.ngeom, Step,                                                          \
    "each geom's bounding radius (-1: unbounded) and how far it can travel in the step")         \
  X(joint_qdot0, Real, m.njoint + 1, Step, "joint velocity at the substep start")                 \
  X(joint_frame, JointFrame, m.njoint + 1, Step, "joint geometry at the substep start")           \
  X(joint_factor, Real, JointFactorSize(m), Step,                                                 \
    "per-joint lock-block Cholesky factors (models with maximal-coordinate joints)")              \
  X(lock_factor, Real, LockFactorSize(m), Step, "all lock rows' factor (R, R)")                   \
  X(lock_scratch, Real, LockTogetherScratchSize(m), Step,                                         \
    "two vectors, the factor's envelope and each joint's lock coupling")                          \
  X(axis_prep, Real, AxisPrepSize(m), Step, "this step's axis-row coefficients")                  \
  X(tree, Real, TreeScratchSize(m.ntree), Step,                                                   \
    "the world's articulated trees: M^-1, Jacobian axes and anchors, q, q-dot (solver_tree.h); " \
    "q, q-dot and the end's kinematics carry between the physics steps of one control step")     \
  X(coupling_rows, BodyCouplingRows, m.nequality, Step,                                          \
    "each connect's and weld's rows and factor, built at the substep start (solver_coupling.h)") \
  X(reduced, Real, ReducedScratchSize(m.nreduced), World,                                         \
    "the world's slide-tree block (solver_reduced.h)")                                            \
  X(reduced_valid, uint32_t, 1, World,                                                            \
    "what of that block is current; the backend sets it to 0 when parameters or state change")

enum class WorkspaceLifetime : int32_t { kStep, kWorld };

enum class WorkspaceArray : int32_t {
#define S2R_WORKSPACE_ID(name, ...) name,
  S2R_WORKSPACE_ARRAYS(S2R_WORKSPACE_ID)
#undef S2R_WORKSPACE_ID
  kCount
};
constexpr int kNumWorkspaceArrays = static_cast<int>(WorkspaceArray::kCount);
constexpr int64_t kWorkspaceAlign = 64;

// Pointers into a world's scratch (see the list above for each one's size and meaning).
struct Workspace {
#define S2R_WORKSPACE_MEMBER(name, type, elements, lifetime, description) type* name;
  S2R_WORKSPACE_ARRAYS(S2R_WORKSPACE_MEMBER)
#undef S2R_WORKSPACE_MEMBER
  int32_t locks_together;  // set per step: the world's locks are solved as one block
};

// Where each array sits in its lifetime's block, in bytes; block sizes are multiples of 64.
struct WorkspaceLayout {
  int64_t offset[kNumWorkspaceArrays];
  int64_t count[kNumWorkspaceArrays];  // elements
  int64_t step_bytes;                  // one step block (per thread on the CPU, per world on CUDA)
  int64_t world_bytes;                 // one world block
};

S2R_HD int64_t AlignUp(int64_t bytes, int64_t align) { return (bytes + align - 1) / align * align; }

S2R_HD WorkspaceLayout ComputeWorkspaceLayout(const ModelView& m) {
  WorkspaceLayout layout{};
  int64_t end[2] = {0, 0};
#define S2R_WORKSPACE_PLACE(name, type, elements, lifetime, description)                        \
  {                                                                                               \
    const int i = static_cast<int>(WorkspaceArray::name);                                         \
    const int life = static_cast<int>(WorkspaceLifetime::k##lifetime);                            \
    layout.count[i] = elements;                                                                   \
    layout.offset[i] = end[life];                                                                 \
    end[life] = AlignUp(end[life] + layout.count[i] * int64_t(sizeof(type)), kWorkspaceAlign);    \
  }
  S2R_WORKSPACE_ARRAYS(S2R_WORKSPACE_PLACE)
#undef S2R_WORKSPACE_PLACE
  layout.step_bytes = end[0];
  layout.world_bytes = end[1];
  return layout;
}

// The pointers of one world's step: `step_block` and `world_block` are blocks of the layout's
// sizes (locks_together starts at 0; the step sets it).
S2R_HD Workspace BindWorkspace(const WorkspaceLayout& layout, char* step_block, char* world_block) {
  Workspace ws;
  char* blocks[2] = {step_block, world_block};
#define S2R_WORKSPACE_BIND(name, type, elements, lifetime, description)                          \
  {                                                                                               \
    const int i = static_cast<int>(WorkspaceArray::name);                                         \
    char* base = blocks[static_cast<int>(WorkspaceLifetime::k##lifetime)];                        \
    ws.name = layout.count[i] > 0 ? reinterpret_cast<type*>(base + layout.offset[i]) : nullptr;   \
  }
  S2R_WORKSPACE_ARRAYS(S2R_WORKSPACE_BIND)
#undef S2R_WORKSPACE_BIND
  ws.locks_together = 0;
  return ws;
}

}  // namespace s2r
