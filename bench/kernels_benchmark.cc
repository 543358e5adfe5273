// Micro-benchmarks of single kernels (Google Benchmark). Whole-scene throughput is `s2r bench`.
#include <benchmark/benchmark.h>

#include "host/engine.h"
#include "host/scene/scene_source.h"
#include "kernels/collide.h"

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

}  // namespace
}  // namespace s2r
