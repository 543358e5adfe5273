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

// Reads every <asset> section: meshes are loaded, hulled and kept in state->meshes by name;
// textures and materials (visual only) are skipped; anything else is an error. Mesh failures
// (missing file, unreadable file, empty or flat mesh) name the <mesh> element's line and file.
void ReadAssets(const std::vector<pugi::xml_node>& sections, LoadState* state);

// The mesh a mesh geom names (its layered 'mesh' attribute); fails at the geom's line when the
// attribute is missing or names no mesh asset.
const MeshHull& MeshOfGeom(const LoadState& state, pugi::xml_node geom, const Layers& layers);

// A mesh geom's frame in its body: the geom's own pos/quat composed with the mesh's inertial
// frame (MuJoCo's convention: the geom frame sits at the mesh centroid, on its principal axes).
void ComposeMeshFrame(const MeshHull& mesh, Vec3d* pos, Quatd* rot);

// Attaches the hull to geom g of the model (hull_vert, geom_hull, geom_size = bounding radius).
void AttachMeshHull(Model* model, int g, const MeshHull& mesh);

}  // namespace s2r::mjcf
