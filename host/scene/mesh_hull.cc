#include "host/scene/mesh_hull.h"

#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <Eigen/Dense>
#include <algorithm>
#include <assimp/Importer.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>

extern "C" {
#include <libqhull_r/libqhull_r.h>
}

namespace s2r {
namespace {

// Mass properties of the solid bounded by triangles (outward winding), per unit density: each
// triangle spans a signed tetrahedron with the origin; the second moment of the canonical
// tetrahedron is scaled by the determinant (Tonon 2004, "Explicit exact formulas for the 3-D
// tetrahedron inertia tensor").
struct MassIntegrals {
  double volume = 0;
  Eigen::Vector3d first = Eigen::Vector3d::Zero();   // integral of x dV
  Eigen::Matrix3d second = Eigen::Matrix3d::Zero();  // integral of x x^T dV
};

MassIntegrals Integrate(const std::vector<Eigen::Vector3d>& p,
                        const std::vector<std::array<int, 3>>& tris) {
  MassIntegrals m;
  Eigen::Matrix3d canonical;
  canonical << 2, 1, 1, 1, 2, 1, 1, 1, 2;
  canonical /= 120.0;
  for (const auto& t : tris) {
    Eigen::Matrix3d a;
    a.col(0) = p[t[0]];
    a.col(1) = p[t[1]];
    a.col(2) = p[t[2]];
    const double det = a.determinant();  // 6 x signed volume
    m.volume += det / 6.0;
    m.first += det / 24.0 * (p[t[0]] + p[t[1]] + p[t[2]]);
    m.second += det * a * canonical * a.transpose();
  }
  return m;
}

// qhull's triangulated hull of the points, capped at max_vertices: vertex indices into points,
// and outward triangles. Throws MeshError when qhull finds no 3-D hull.
void ConvexHull(const std::vector<Eigen::Vector3d>& p, int max_vertices, std::vector<int>* verts,
                std::vector<std::array<int, 3>>* tris) {
  std::vector<coordT> coords(3 * p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    for (int k = 0; k < 3; ++k) coords[3 * i + k] = p[i][k];
  }
  qhT qh_storage;
  qhT* qh = &qh_storage;
  QHULL_LIB_CHECK
  qh_zero(qh, nullptr);
  // Qt: triangulated facets; TA<n>: stop after adding n points to the initial simplex
  std::string options = "qhull Qt";
  if (max_vertices > 4) options += " TA" + std::to_string(max_vertices - 4);
  FILE* devnull = std::fopen("/dev/null", "w");
  const int status = qh_new_qhull(qh, 3, static_cast<int>(p.size()), coords.data(), False,
                                  const_cast<char*>(options.c_str()), nullptr, devnull);
  if (status == 0) {
    std::vector<int> index(p.size(), -1);
    vertexT* vertex;
    FORALLvertices {
      const int id = qh_pointid(qh, vertex->point);
      if (id >= 0 && id < static_cast<int>(p.size())) {
        index[id] = static_cast<int>(verts->size());
        verts->push_back(id);
      }
    }
    facetT* facet;
    FORALLfacets {
      if (!facet->simplicial) continue;
      std::array<int, 3> t;
      int k = 0;
      vertexT** vertexp;
      FOREACHvertex_(facet->vertices) {
        if (k < 3) t[k++] = qh_pointid(qh, vertex->point);
      }
      if (k != 3) continue;
      // wind outwards, along qhull's facet normal
      Eigen::Vector3d n = (p[t[1]] - p[t[0]]).cross(p[t[2]] - p[t[0]]);
      Eigen::Vector3d out(facet->normal[0], facet->normal[1], facet->normal[2]);
      if (n.dot(out) < 0) std::swap(t[1], t[2]);
      tris->push_back(t);
    }
  }
  int curlong, totlong;
  qh_freeqhull(qh, !qh_ALL);
  qh_memfreeshort(qh, &curlong, &totlong);
  if (devnull) std::fclose(devnull);
  if (status != 0 || verts->size() < 4 || tris->empty()) {
    throw MeshError("its points span no volume (flat, on a line, or too few): no convex hull");
  }
}

}  // namespace

MeshHull MakeMeshHull(const std::vector<std::array<double, 3>>& points,
                      const std::vector<std::array<int, 3>>& triangles, int max_hull_vertices) {
  if (points.size() < 4) {
    throw MeshError("has " + std::to_string(points.size()) +
                    " vertices; a collision mesh needs at least 4 that span a volume");
  }
  std::vector<Eigen::Vector3d> p(points.size());
  for (size_t i = 0; i < points.size(); ++i) p[i] = Eigen::Vector3d(points[i][0], points[i][1], points[i][2]);
  for (const auto& t : triangles) {
    for (int k : t) {
      if (k < 0 || k >= static_cast<int>(p.size())) throw MeshError("a face refers to a missing vertex");
    }
  }
  std::vector<int> hull_ids;
  std::vector<std::array<int, 3>> hull_tris;
  ConvexHull(p, max_hull_vertices, &hull_ids, &hull_tris);

  // mass properties: the mesh's own surface if it encloses a volume, else the hull's
  const MassIntegrals hull_mass = Integrate(p, hull_tris);
  MassIntegrals mass = triangles.empty() ? hull_mass : Integrate(p, triangles);
  if (mass.volume < 0) {  // inward winding throughout: the same solid
    mass.volume = -mass.volume;
    mass.first = -mass.first;
    mass.second = -mass.second;
  }
  if (!(mass.volume > 1e-9 * hull_mass.volume)) mass = hull_mass;
  if (!(mass.volume > 0)) throw MeshError("encloses no volume");
  const Eigen::Vector3d centroid = mass.first / mass.volume;
  const Eigen::Matrix3d cov = mass.second - mass.volume * centroid * centroid.transpose();
  const Eigen::Matrix3d inertia = cov.trace() * Eigen::Matrix3d::Identity() - cov;
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(inertia);
  Eigen::Matrix3d axes = eig.eigenvectors();
  if (axes.determinant() < 0) axes.col(2) = -axes.col(2);
  const Eigen::Quaterniond q(axes);

  MeshHull out;
  out.volume = mass.volume;
  out.inertia = {eig.eigenvalues()[0], eig.eigenvalues()[1], eig.eigenvalues()[2]};
  out.pos = {centroid.x(), centroid.y(), centroid.z()};
  out.quat = {q.w(), q.x(), q.y(), q.z()};
  out.file_vertices = static_cast<int>(points.size());
  for (int id : hull_ids) {
    const Eigen::Vector3d v = axes.transpose() * (p[id] - centroid);
    out.vertices.push_back({v.x(), v.y(), v.z()});
  }
  return out;
}

MeshHull LoadMeshHull(const std::string& path, const std::array<double, 3>& scale,
                      int max_hull_vertices) {
  if (!std::ifstream(path, std::ios::binary)) throw MeshError("cannot open mesh file '" + path + "'");
  Assimp::Importer importer;
  const aiScene* scene = importer.ReadFile(
      path, aiProcess_Triangulate | aiProcess_JoinIdenticalVertices | aiProcess_PreTransformVertices);
  if (scene == nullptr) {
    throw MeshError("cannot read mesh file '" + path + "': " + importer.GetErrorString());
  }
  std::vector<std::array<double, 3>> points;
  std::vector<std::array<int, 3>> tris;
  for (unsigned m = 0; m < scene->mNumMeshes; ++m) {
    const aiMesh* mesh = scene->mMeshes[m];
    const int base = static_cast<int>(points.size());
    for (unsigned i = 0; i < mesh->mNumVertices; ++i) {
      const aiVector3D& v = mesh->mVertices[i];
      points.push_back({v.x * scale[0], v.y * scale[1], v.z * scale[2]});
    }
    for (unsigned f = 0; f < mesh->mNumFaces; ++f) {
      const aiFace& face = mesh->mFaces[f];
      if (face.mNumIndices != 3) continue;  // points and lines carry no volume
      tris.push_back({base + int(face.mIndices[0]), base + int(face.mIndices[1]),
                      base + int(face.mIndices[2])});
    }
  }
  if (points.empty()) throw MeshError("mesh file '" + path + "' has no vertices");
  // a negative scale mirrors the mesh and turns its winding inside out; Integrate's sign fix
  // covers it
  try {
    return MakeMeshHull(points, tris, max_hull_vertices);
  } catch (const MeshError& e) {
    throw MeshError("mesh file '" + path + "' " + e.what());
  }
}

}  // namespace s2r
