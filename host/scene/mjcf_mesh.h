// MJCF mesh assets and mesh geoms: <asset><mesh name file scale maxhullvert inertia>, the
// <compiler meshdir assetdir> lookup of mesh files, and what a `type="mesh"` geom takes from its
// mesh (frame, hull, mass properties). See host/scene/mesh_hull.h for the mesh processing and
// docs/mjcf_subset.md for the rules.
#pragma once

#include <array>
#include <pugixml.hpp>
#include <string>
#include <vector>

#include "host/scene/mjcf_loader.h"

namespace s2r::mjcf {

// Reads every <asset> section: meshes are checked and kept in state->mesh_assets by name (their
// files are read when a simulated geom first uses them, so a mesh only visual geoms use -- whose
// file may be missing -- is never read); textures and materials (visual only) are skipped;
// anything else is an error.
void ReadAssets(const std::vector<pugi::xml_node>& sections, LoadState* state);

// The mesh a mesh geom names (its layered 'mesh' attribute), loaded and hulled on first use (kept
// in state->meshes); fails at the geom's line when the attribute is missing or names no mesh
// asset, and at the <mesh> element's line, naming its file, when the file is missing, unreadable,
// empty or flat.
const MeshHull& MeshOfGeom(LoadState* state, pugi::xml_node geom, const Layers& layers);

// A mesh geom's frame in its body: the geom's own pos/quat composed with the mesh's inertial
// frame (MuJoCo's convention: the geom frame sits at the mesh centroid, on its principal axes).
void ComposeMeshFrame(const MeshHull& mesh, Vec3d* pos, Quatd* rot);

// Attaches the hull to geom g of the model (hull_vert, geom_hull, geom_size = bounding radius).
void AttachMeshHull(Model* model, int g, const MeshHull& mesh);

}  // namespace s2r::mjcf
