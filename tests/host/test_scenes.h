// Helpers for tests that build small scenes from MJCF text and step them.
#pragma once

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/engine.h"
#include "host/scene/mjcf_load.h"

namespace s2r {
namespace test_util {

// MJCF document with s2r options; `body` goes inside <mujoco>.
inline std::string Scene(const std::string& body, double timestep = 0.002, int substeps = 4,
                         double control_hz = 50, const std::string& extra_custom = "") {
  return "<mujoco model=\"test\">\n"
         "  <compiler angle=\"radian\"/>\n"
         "  <option timestep=\"" + std::to_string(timestep) + "\"/>\n"
         "  <custom>\n"
         "    <numeric name=\"s2r_substeps\" data=\"" + std::to_string(substeps) + "\"/>\n"
         "    <numeric name=\"s2r_control_hz\" data=\"" + std::to_string(control_hz) + "\"/>\n" +
         extra_custom + "  </custom>\n" + body + "</mujoco>\n";
}

inline Model LoadText(const std::string& xml) { return LoadMjcfString(xml, "test.xml"); }

// Every state array of `from` into `to`, the state of an engine of the same model and world count,
// in place (its view stays valid); call Engine::Upload after.
inline void CopyState(const HostState& from, HostState* to) {
  std::vector<std::pair<void*, size_t>> dst;
  StateView tv = to->view;
  ForEachStateArray(tv, [&](const char*, auto* ptr, int64_t per_world, bool) {
    dst.emplace_back(ptr, size_t(per_world) * sizeof(*ptr) * size_t(tv.nworld));
  });
  StateView fv = from.view;
  size_t i = 0;
  ForEachStateArray(fv, [&](const char* name, auto* ptr, int64_t per_world, bool) {
    const size_t bytes = size_t(per_world) * sizeof(*ptr) * size_t(fv.nworld);
    if (bytes != dst[i].second) throw std::logic_error(std::string("CopyState: sizes differ in ") + name);
    if (bytes > 0) std::memcpy(dst[i].first, ptr, bytes);  // an empty array's pointer is null
    ++i;
  });
}

// The model with its slide trees in reduced coordinates (the default) or all joints in maximal
// coordinates (s2r_reduce_slide_trees 0): tests run both solver paths on the same scene.
inline Model WithSlideTrees(Model m, bool reduced) {
  m.reduce_slide_trees = reduced;
  m.FindSlideTrees();
  return m;
}

// one world's body state, double precision copies
struct BodySample {
  double pos[3], quat[4], linvel[3], angvel[3];
};
inline BodySample Sample(const Engine& e, int world, int body) {
  const StateView& v = e.state().view;
  BodySample s;
  for (int k = 0; k < 3; ++k) {
    s.pos[k] = v.body_pos(world, body)[k];
    s.linvel[k] = v.body_linvel(world, body)[k];
    s.angvel[k] = v.body_angvel(world, body)[k];
  }
  for (int k = 0; k < 4; ++k) s.quat[k] = v.body_quat(world, body)[k];
  return s;
}

// the same values for every world
inline std::vector<Real> Repeat(const std::vector<Real>& per_world, int nworld) {
  std::vector<Real> out;
  for (int w = 0; w < nworld; ++w) out.insert(out.end(), per_world.begin(), per_world.end());
  return out;
}

}  // namespace test_util
}  // namespace s2r
