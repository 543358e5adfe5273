// Mesh assets for collision: a mesh file (STL, OBJ, ...) read with assimp, scaled, its mass
// properties integrated, and its convex hull built with qhull.
//
// MuJoCo's convention, which s2r keeps so that a scene means the same in both: a mesh geom's frame
// is not the mesh file's frame but the mesh's inertial frame, with its origin at the volume
// centroid and its axes along the principal axes of inertia. The hull vertices are stored in that
// frame, and the loader composes the geom's pos/quat with `pos`/`quat` below (the inertial frame
// in the file's frame). Volume and inertia come from the mesh's own triangles (signed tetrahedra
// from the origin, exact for a closed mesh); a mesh whose triangles enclose no volume (an open
// surface) falls back to its hull's.
#pragma once

#include <array>
#include <stdexcept>
#include <string>
#include <vector>

namespace s2r {

// A mesh that cannot be used: the message says why (the loader prefixes file, line and asset).
class MeshError : public std::runtime_error {
 public:
  explicit MeshError(const std::string& what) : std::runtime_error(what) {}
};

// largest hull MuJoCo-compatible scenes get unless <mesh maxhullvert> asks for fewer: the GPU
// support function scans every vertex, so hulls are capped (qhull stops adding points at the cap)
constexpr int kDefaultMaxHullVertices = 256;

struct MeshHull {
  std::vector<std::array<double, 3>> vertices;  // hull vertices, inertial frame, m
  double volume = 0;                            // m^3
  std::array<double, 3> inertia = {0, 0, 0};    // principal moments per unit density, m^5
  std::array<double, 3> pos = {0, 0, 0};        // inertial frame origin in the file frame, m
  std::array<double, 4> quat = {1, 0, 0, 0};    // inertial axes in the file frame (w x y z)
  int file_vertices = 0;                        // vertices the file had (after merging)
};

// Builds the hull and mass properties from points (already scaled) and triangles (indices into
// points; may be empty: the hull's own faces are then integrated). Throws MeshError for fewer
// than 4 points, or points that span no volume (all on a plane or a line).
MeshHull MakeMeshHull(const std::vector<std::array<double, 3>>& points,
                      const std::vector<std::array<int, 3>>& triangles, int max_hull_vertices);

// Reads a mesh file, scales its vertices by `scale` (per axis) and calls MakeMeshHull. Throws
// MeshError for a missing or unreadable file, a file without vertices, or a degenerate mesh.
MeshHull LoadMeshHull(const std::string& path, const std::array<double, 3>& scale,
                      int max_hull_vertices);

}  // namespace s2r
