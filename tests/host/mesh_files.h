// Writers of small mesh files (binary and ASCII STL, OBJ) for the mesh tests.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace s2r {
namespace test_util {

using Tri = std::array<std::array<double, 3>, 3>;

// the 12 outward triangles of an axis-aligned box with centre c and half-extents h
inline std::vector<Tri> BoxTriangles(std::array<double, 3> c, std::array<double, 3> h) {
  auto v = [&](int i) {
    return std::array<double, 3>{c[0] + ((i & 1) ? h[0] : -h[0]), c[1] + ((i & 2) ? h[1] : -h[1]),
                                 c[2] + ((i & 4) ? h[2] : -h[2])};
  };
  // faces as corner index quads, counter-clockwise seen from outside
  const int quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                           {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  std::vector<Tri> t;
  for (const auto& q : quads) {
    t.push_back({v(q[0]), v(q[1]), v(q[2])});
    t.push_back({v(q[0]), v(q[2]), v(q[3])});
  }
  return t;
}

// a regular n-gon prism (a cylinder-ish solid) of radius r and half-height h along z
inline std::vector<Tri> PrismTriangles(int n, double r, double h) {
  std::vector<Tri> t;
  for (int k = 0; k < n; ++k) {
    const double a0 = 2 * M_PI * k / n, a1 = 2 * M_PI * (k + 1) / n;
    std::array<double, 3> b0{r * std::cos(a0), r * std::sin(a0), -h};
    std::array<double, 3> b1{r * std::cos(a1), r * std::sin(a1), -h};
    std::array<double, 3> t0{b0[0], b0[1], h}, t1{b1[0], b1[1], h};
    t.push_back({b0, b1, t1});
    t.push_back({b0, t1, t0});
    t.push_back({std::array<double, 3>{0, 0, h}, t0, t1});
    t.push_back({std::array<double, 3>{0, 0, -h}, b1, b0});
  }
  return t;
}

// a tetrahedron with outward faces
inline std::vector<Tri> TetraTriangles(std::array<double, 3> a, std::array<double, 3> b,
                                       std::array<double, 3> c, std::array<double, 3> d) {
  return {{a, c, b}, {a, b, d}, {a, d, c}, {b, c, d}};
}

inline void WriteBinaryStl(const std::string& path, const std::vector<Tri>& tris) {
  std::ofstream out(path, std::ios::binary);
  char header[80] = "s2r test mesh";
  out.write(header, 80);
  const uint32_t n = static_cast<uint32_t>(tris.size());
  out.write(reinterpret_cast<const char*>(&n), 4);
  for (const Tri& t : tris) {
    float f[12] = {0, 0, 0};
    for (int v = 0; v < 3; ++v) {
      for (int k = 0; k < 3; ++k) f[3 + 3 * v + k] = static_cast<float>(t[v][k]);
    }
    out.write(reinterpret_cast<const char*>(f), sizeof(f));
    const uint16_t attr = 0;
    out.write(reinterpret_cast<const char*>(&attr), 2);
  }
}

inline void WriteAsciiStl(const std::string& path, const std::vector<Tri>& tris) {
  std::ofstream out(path);
  out.precision(10);
  out << "solid test\n";
  for (const Tri& t : tris) {
    out << "facet normal 0 0 0\n outer loop\n";
    for (const auto& v : t) out << "  vertex " << v[0] << " " << v[1] << " " << v[2] << "\n";
    out << " endloop\nendfacet\n";
  }
  out << "endsolid test\n";
}

inline void WriteObj(const std::string& path, const std::vector<Tri>& tris) {
  std::ofstream out(path);
  out.precision(10);
  for (const Tri& t : tris) {
    for (const auto& v : t) out << "v " << v[0] << " " << v[1] << " " << v[2] << "\n";
  }
  for (size_t i = 0; i < tris.size(); ++i) {
    out << "f " << 3 * i + 1 << " " << 3 * i + 2 << " " << 3 * i + 3 << "\n";
  }
}

}  // namespace test_util
}  // namespace s2r
