#include "host/scene/mjcf_mesh.h"

#include <cstdlib>
#include <string>

#include "host/scene/mjcf_defaults.h"

namespace s2r::mjcf {
namespace {

bool IsAbsolute(const std::string& path) { return !path.empty() && path[0] == '/'; }

std::string Join(const std::string& dir, const std::string& file) {
  if (dir.empty() || IsAbsolute(file)) return file;
  return dir.back() == '/' ? dir + file : dir + "/" + file;
}

// MuJoCo's lookup: an absolute file name as it is; else under meshdir, or else under assetdir,
// either of them relative to the model file's directory unless absolute
std::string MeshPath(const LoadState& s, const std::string& file) {
  if (IsAbsolute(file)) return file;
  const std::string& name = s.file.name();
  const size_t slash = name.rfind('/');
  const std::string model_dir = slash == std::string::npos ? "" : name.substr(0, slash);
  const std::string& sub = !s.compiler.meshdir.empty() ? s.compiler.meshdir : s.compiler.assetdir;
  return Join(Join(model_dir, sub), file);
}

// a file's base name without its extension (MuJoCo names an unnamed mesh after its file)
std::string Stem(const std::string& file) {
  const size_t slash = file.rfind('/');
  std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  const size_t dot = base.rfind('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

void ReadMesh(pugi::xml_node n, LoadState* s) {
  const SourceFile& file = s->file;
  CheckAttributes(file, n, false);
  CheckNoText(file, n);
  if (n.first_child()) file.Fail(n.first_child(), "<mesh> takes no child elements");
  const std::string file_name = n.attribute("file").value();
  if (file_name.empty()) {
    file.Fail(n, "missing attribute 'file' (s2r reads meshes from files: STL, OBJ, ...)");
  }
  std::string name = n.attribute("name").value();
  if (name.empty()) name = Stem(file_name);
  // scale, maxhullvert and inertia may come from <default><mesh> (the class, else main)
  const int cls = n.attribute("class") ? s->defaults.ClassIndex(n, "class") : 0;
  const Layers layers = s->defaults.LayersFor(n, cls);
  std::array<double, 3> scale = {1, 1, 1};
  if (pugi::xml_node src = Source(layers, "scale")) {
    const Vec3d v = Real3(src, "scale");
    for (int k = 0; k < 3; ++k) {
      if (v[k] == 0) {
        file.Fail(n, "attribute 'scale' must not contain 0, got " + Num(v[k]) + file.Origin(src));
      }
      scale[k] = v[k];
    }
  }
  int max_vertices = kDefaultMaxHullVertices;
  if (pugi::xml_node src = Source(layers, "maxhullvert")) {
    const long v = std::strtol(src.attribute("maxhullvert").value(), nullptr, 10);
    if (v != -1 && v < 4) {
      file.Fail(n, "attribute 'maxhullvert' must be -1 or >= 4, got " + std::to_string(v) +
                       file.Origin(src));
    }
    if (v > 0 && v < max_vertices) max_vertices = static_cast<int>(v);
  }
  MeshAsset asset;
  asset.node = n;
  asset.name = name;
  asset.path = MeshPath(*s, file_name);
  asset.scale = scale;
  asset.max_vertices = max_vertices;
  asset.convex_inertia = LayeredWord(layers, "inertia", "legacy") == "convex";
  if (!s->mesh_assets.emplace(name, std::move(asset)).second) {
    file.Fail(n, "duplicate mesh name " + Quote(name));
  }
}

// The hull of a mesh asset, read and hulled the first time a geom that is simulated uses it.
const MeshHull& LoadAsset(LoadState* s, const MeshAsset& a) {
  auto cached = s->meshes.find(a.name);
  if (cached != s->meshes.end()) return cached->second;
  const SourceFile& file = s->file;
  MeshHull hull;
  try {
    hull = LoadMeshHull(a.path, a.scale, a.max_vertices);
  } catch (const MeshError& e) {
    file.Fail(a.node, "mesh " + Quote(a.name) + ": " + e.what());
  }
  // inertia="convex": MuJoCo takes the mass properties of the hull, not of the surface
  if (a.convex_inertia) {
    std::vector<std::array<double, 3>> hull_points;
    for (const auto& v : hull.vertices) hull_points.push_back(v);
    MeshHull convex = MakeMeshHull(hull_points, {}, a.max_vertices);
    // the hull's frame is the surface's inertial frame; re-express it in the file frame
    const Quatd q0(hull.quat[0], hull.quat[1], hull.quat[2], hull.quat[3]);
    const Quatd q1(convex.quat[0], convex.quat[1], convex.quat[2], convex.quat[3]);
    const Vec3d p = Vec3d(hull.pos[0], hull.pos[1], hull.pos[2]) +
                    q0 * Vec3d(convex.pos[0], convex.pos[1], convex.pos[2]);
    const Quatd q = (q0 * q1).normalized();
    convex.pos = {p.x(), p.y(), p.z()};
    convex.quat = {q.w(), q.x(), q.y(), q.z()};
    hull = convex;
  }
  return s->meshes.emplace(a.name, std::move(hull)).first->second;
}

}  // namespace

void ReadAssets(const std::vector<pugi::xml_node>& sections, LoadState* s) {
  for (pugi::xml_node section : sections) {
    CheckAttributes(s->file, section, false);
    CheckNoText(s->file, section);
    for (pugi::xml_node c : section.children()) {
      if (c.type() != pugi::node_element) continue;
      const std::string tag = c.name();
      if (tag == "texture" || tag == "material") continue;  // visual only
      if (tag != "mesh") {
        s->file.Fail(c, "element not supported inside <asset> by the s2r subset (it has mesh, "
                        "and ignores texture and material)");
      }
      ReadMesh(c, s);
    }
  }
}

const MeshHull& MeshOfGeom(LoadState* s, pugi::xml_node geom, const Layers& layers) {
  pugi::xml_node src = Source(layers, "mesh");
  const std::string name = src ? src.attribute("mesh").value() : "";
  if (name.empty()) s->file.Fail(geom, "a mesh geom needs attribute 'mesh' naming an <asset><mesh>");
  auto it = s->mesh_assets.find(name);
  if (it == s->mesh_assets.end()) {
    s->file.Fail(geom, "attribute 'mesh' names no mesh asset: " + Quote(name) + s->file.Origin(src));
  }
  return LoadAsset(s, it->second);
}

void ComposeMeshFrame(const MeshHull& mesh, Vec3d* pos, Quatd* rot) {
  const Quatd q(mesh.quat[0], mesh.quat[1], mesh.quat[2], mesh.quat[3]);
  *pos = *pos + *rot * Vec3d(mesh.pos[0], mesh.pos[1], mesh.pos[2]);
  *rot = (*rot * q).normalized();
}

void AttachMeshHull(Model* model, int g, const MeshHull& mesh) {
  std::vector<std::array<Real, 3>> verts;
  verts.reserve(mesh.vertices.size());
  for (const auto& v : mesh.vertices) {
    verts.push_back({static_cast<Real>(v[0]), static_cast<Real>(v[1]), static_cast<Real>(v[2])});
  }
  SetGeomHull(model, g, verts);
}

}  // namespace s2r::mjcf
