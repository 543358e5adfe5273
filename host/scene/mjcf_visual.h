// Which geoms are visual only: skipped by the loader with a note, because they cannot change the
// dynamics.
//
// One rule, in one place: a geom that is not a primitive (mesh, cylinder, ellipsoid, hfield, sdf)
// and cannot collide (contype = conaffinity = 0) adds nothing to the dynamics when its body's mass
// does not come from its geoms -- the body has an explicit <inertial>, or it is static (the world
// or a jointless body fixed to it, whose mass is never used). Such a geom is skipped; its mesh
// file (if any) is never read, so a missing visual mesh file is no error (mesh assets are hulled
// only when a geom that stays uses them, mjcf_mesh.h). Mesh, cylinder and ellipsoid geoms that
// can collide or give mass are simulated (convex hulls, kernels/collide_convex.h); hfield and sdf
// geoms are an error unless visual.
#pragma once

#include <string>

namespace s2r::mjcf {

inline bool GeomTypeSimulated(const std::string& type) {
  return type == "plane" || type == "sphere" || type == "capsule" || type == "box" ||
         type == "cylinder" || type == "ellipsoid" || type == "mesh";
}

inline bool IsVisualOnlyGeom(const std::string& type, int contype, int conaffinity,
                             bool body_mass_given) {
  const bool primitive = type == "plane" || type == "sphere" || type == "capsule" || type == "box";
  return !primitive && contype == 0 && conaffinity == 0 && body_mass_given;
}

}  // namespace s2r::mjcf
