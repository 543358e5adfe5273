// Micro-benchmarks of single kernels (Google Benchmark). Whole-scene throughput is `s2r bench`.
#include <benchmark/benchmark.h>

#include "host/engine.h"
#include "host/scene/scene_source.h"
#include "kernels/collide.h"
#include "kernels/observation.h"
#include "kernels/policy_net.h"
#include "kernels/state_view.h"

#include <vector>

namespace s2r {
namespace {

void BM_CollideBoxBox(benchmark::State& state) {
  Real size[3] = {0.05f, 0.05f, 0.05f};
  Transform a{Vec3{0, 0, 0.05f}, QuatIdentity()};
  Transform b{Vec3{0.01f, 0.005f, 0.149f}, QuatFromAxisAngle(Vec3{0, 0, 1}, 0.3f)};
  ContactPoint out[kMaxManifoldPoints];
  for (auto _ : state) {
    int n = CollideGeoms(kGeomBox, a, size, kGeomBox, b, size, 0.002f, out);
    benchmark::DoNotOptimize(n);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_CollideBoxBox);

// --- the convex narrow phase (kernels/collide_convex.h): compare per pair with BM_CollideBoxBox ---

// a box's corners as a mesh hull, and a 64-sided prism's 128 corners (a cylinder-like mesh)
std::vector<Real> BoxHullVerts(Real h) {
  std::vector<Real> v;
  for (int i = 0; i < 8; ++i) {
    v.push_back((i & 1) ? h : -h);
    v.push_back((i & 2) ? h : -h);
    v.push_back((i & 4) ? h : -h);
  }
  return v;
}
std::vector<Real> PrismHullVerts(int n, Real r, Real h) {
  std::vector<Real> v;
  for (int k = 0; k < n; ++k) {
    for (Real z : {-h, h}) {
      v.push_back(r * Cos(Real(2) * kPi * Real(k) / Real(n)));
      v.push_back(r * Sin(Real(2) * kPi * Real(k) / Real(n)));
      v.push_back(z);
    }
  }
  return v;
}

// one pair, resting face on face 1 mm deep (the common case of a settled scene), slightly turned
void BM_CollideConvex(benchmark::State& state, int type_a, int type_b, int hull) {
  const std::vector<Real> cube = BoxHullVerts(0.05f), prism = PrismHullVerts(64, 0.05f, 0.05f);
  const std::vector<Real>& verts = hull == 0 ? cube : prism;
  const GeomHull mesh{verts.data(), int(verts.size() / 3)};
  Real box[3] = {0.05f, 0.05f, 0.05f}, cyl[3] = {0.05f, 0.05f, 0}, ell[3] = {0.05f, 0.04f, 0.05f};
  Real mesh_size[3] = {0.0866f, 0, 0};
  auto size_of = [&](int t) {
    return t == kGeomBox ? box : t == kGeomCylinder ? cyl : t == kGeomEllipsoid ? ell : mesh_size;
  };
  Transform a{Vec3{0, 0, type_a == kGeomPlane ? Real(0) : Real(0.05)}, QuatIdentity()};
  const Real top = type_a == kGeomPlane ? Real(0) : Real(0.1);
  Transform b{Vec3{0.01f, 0.005f, top + 0.049f}, QuatFromAxisAngle(Vec3{0, 0, 1}, 0.3f)};
  ContactPoint out[kMaxManifoldPoints];
  int points = 0;
  for (auto _ : state) {
    int n = CollideGeoms(type_a, a, size_of(type_a), type_b, b, size_of(type_b), 0.002f, out,
                         type_a == kGeomMesh ? mesh : GeomHull{}, type_b == kGeomMesh ? mesh : GeomHull{});
    points = n;
    benchmark::DoNotOptimize(n);
    benchmark::DoNotOptimize(out);
  }
  state.counters["points"] = points;
}
BENCHMARK_CAPTURE(BM_CollideConvex, plane_mesh8, kGeomPlane, kGeomMesh, 0);
BENCHMARK_CAPTURE(BM_CollideConvex, plane_mesh128, kGeomPlane, kGeomMesh, 1);
BENCHMARK_CAPTURE(BM_CollideConvex, plane_cylinder, kGeomPlane, kGeomCylinder, 0);
BENCHMARK_CAPTURE(BM_CollideConvex, box_mesh8, kGeomBox, kGeomMesh, 0);
BENCHMARK_CAPTURE(BM_CollideConvex, mesh8_mesh8, kGeomMesh, kGeomMesh, 0);
BENCHMARK_CAPTURE(BM_CollideConvex, mesh128_mesh128, kGeomMesh, kGeomMesh, 1);
BENCHMARK_CAPTURE(BM_CollideConvex, box_cylinder, kGeomBox, kGeomCylinder, 0);
BENCHMARK_CAPTURE(BM_CollideConvex, box_ellipsoid, kGeomBox, kGeomEllipsoid, 0);

void BM_ControlStep(benchmark::State& state, const char* scene) {
  EngineOptions opt;
  opt.nworld = 1;
  opt.threads = 1;
  Engine engine(LoadScene(scene), opt);
  for (auto _ : state) engine.Step(nullptr);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_ControlStep, box_push, "builtin:box_push");
BENCHMARK_CAPTURE(BM_ControlStep, stack5, "builtin:stack5");
BENCHMARK_CAPTURE(BM_ControlStep, pick_lift, "builtin:pick_lift");

// One control step's observation with every distortion on (configs/sweeps/push.yaml's model).
// A policy network's forward pass for one world (kernels/policy_net.h, `s2r sweep --policy-net`):
// compare with BM_ControlStep/box_push, what the network's step adds to a world's step on the CPU.
// Widths in, hidden, hidden, out; random weights, tanh or relu hidden layers.
void BM_NetForward(benchmark::State& state, int in, int hidden, int out, int32_t activation) {
  PolicyNet net;
  net.nlayer = 3;
  const int width[4] = {in, hidden, hidden, out};
  std::vector<float> params;
  uint32_t seed = 1;
  auto next = [&seed]() {
    seed = seed * 1664525u + 1013904223u;
    return (static_cast<float>(seed >> 8) / 16777216.0f - 0.5f) * 0.3f;
  };
  for (int l = 0; l < 3; ++l) {
    net.width[l] = width[l];
    net.weight[l] = static_cast<int64_t>(params.size());
    for (int k = 0; k < width[l] * width[l + 1]; ++k) params.push_back(next());
    net.bias[l] = static_cast<int64_t>(params.size());
    for (int k = 0; k < width[l + 1]; ++k) params.push_back(next());
  }
  net.width[3] = out;
  net.activation = activation;
  net.nparams = static_cast<int64_t>(params.size());
  net.params = params.data();
  std::vector<float> x0(static_cast<size_t>(in)), x(x0.size()), scratch(2 * kNetMaxWidth), y(static_cast<size_t>(out));
  for (float& v : x0) v = next();
  for (auto _ : state) {
    x = x0;
    NetForward(net, x.data(), scratch.data(), y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["flops"] = benchmark::Counter(
      2.0 * (in * hidden + hidden * hidden + hidden * out), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(BM_NetForward, push_22_64_64_2_tanh, 22, 64, 2, kNetTanh);
BENCHMARK_CAPTURE(BM_NetForward, push_22_64_64_2_relu, 22, 64, 2, kNetRelu);
BENCHMARK_CAPTURE(BM_NetForward, peg_37_256_256_8_tanh, 37, 256, 8, kNetTanh);
BENCHMARK_CAPTURE(BM_NetForward, peg_37_256_256_8_relu, 37, 256, 8, kNetRelu);

void BM_Observe(benchmark::State& state) {
  ObservationModel om;
  om.position_noise_std = Real(0.002);
  om.orientation_noise_std = Real(0.01);
  om.position_bias_std = Real(0.003);
  om.camera_rotation_std = Real(0.01);
  om.camera_translation_std = Real(0.005);
  om.dropout = Real(0.02);
  om.latency_steps = 1;
  ObservationState os{};
  ObservationReset(om, 7, 3, &os);
  Real truth[kObsSize] = {Real(0.3), Real(0.1), Real(0.05), 1, 0, 0, 0, Real(0.2), Real(0.1), Real(0.05)};
  Real out[kObsSize];
  for (auto _ : state) {
    if (os.steps > 1000000) os.steps = 0;
    Observe(om, 7, 3, truth, &os, out);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Observe);

// The CUDA backend's host transposition of one state array between the host's world-major layout
// and the device's interleaved one (Download / Upload, kernels/state_view.h): stack5's 3,960 B
// (990 words) per world. Arguments: worlds, and 1 for TransposeWorldWords' tiles or 0 for the
// word-by-word loop it replaced (each world's words read nworld words apart).
void BM_TransposeWorldWords(benchmark::State& state) {
  const int64_t nworld = state.range(0), words = 990;
  const bool tiled = state.range(1) != 0;
  std::vector<uint32_t> device(static_cast<size_t>(nworld * words)), host(device.size());
  for (size_t i = 0; i < device.size(); ++i) device[i] = static_cast<uint32_t>(i);
  for (auto _ : state) {
    if (tiled) {
      TransposeWorldWords(device.data(), host.data(), nworld, words, /*to_interleaved=*/false);
    } else {
      for (int64_t w = 0; w < nworld; ++w) CopyStateWords(device.data() + w, host.data() + w * words, words * 4, nworld);
    }
    benchmark::DoNotOptimize(host.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * nworld * words * 4);
}
BENCHMARK(BM_TransposeWorldWords)
    ->Args({4096, 0})
    ->Args({4096, 1})
    ->Args({65536, 0})
    ->Args({65536, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace s2r
