// Which geoms are visual only: skipped by the loader with a note, because they cannot change the
// dynamics.
//
// One rule, in one place (the mesh-collision work extends the geom types; this stays the same):
// a geom of a type s2r does not simulate (mesh, cylinder, ellipsoid, hfield, sdf) that cannot
// collide (contype = conaffinity = 0) adds nothing to the dynamics when its body's mass does not
// come from its geoms -- the body has an explicit <inertial>, or it is static (the world or a
// jointless body fixed to it, whose mass is never used). Such a geom is skipped; its mesh file
// (if any) is never read, so a missing visual mesh file is no error. Any other geom of those
// types is an error.
#pragma once

#include <string>

namespace s2r::mjcf {

inline bool GeomTypeSimulated(const std::string& type) {
  return type == "plane" || type == "sphere" || type == "capsule" || type == "box";
}

inline bool IsVisualOnlyGeom(const std::string& type, int contype, int conaffinity,
                             bool body_mass_given) {
  return !GeomTypeSimulated(type) && contype == 0 && conaffinity == 0 && body_mass_given;
}

}  // namespace s2r::mjcf
