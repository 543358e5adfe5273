#!/usr/bin/env bash
# Everything that needs a GPU, in one run (about 15 minutes of device time are lent at most):
#   1. configure and build with the CUDA backend (S2R_CUDA=ON),
#   2. run the CUDA tests (backend parity, reproducibility) -- they skip without a device,
#   3. benchmark the CUDA backend on the three scenes at N up to 65536, beside the CPU backend,
#   4. a push sweep on the device beside one on the CPU (summary JSON: env-steps/s, success rate),
#   5. the kernels' footprint (ptxas) and, where Nsight Compute exists, one profiled step kernel.
# Results go to $OUT (the device tool brings them back) or bench/results/h200/.
#
# `bench/gpu_check.sh --bench-only` with S2R_CUDA_STEP_MIN_BLOCKS=8 in the environment rebuilds the
# bench scenes' step kernels for 8 blocks per SM (64 registers, more spills; docs/gpu.md) and runs
# step 3 alone into cuda_bench_min_blocks8.jsonl: the register-cap comparison, if time is left.
set -euo pipefail
bench_only=0
[ "${1:-}" = "--bench-only" ] && bench_only=1
min_blocks="${S2R_CUDA_STEP_MIN_BLOCKS:-4}"
cd "$(dirname "$0")/.."
out="${OUT:-bench/results/h200}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/gpu.txt"
jobs=$(nproc)
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DS2R_CUDA=ON -DS2R_BUILD_BENCH=OFF \
  -DS2R_CUDA_STEP_MIN_BLOCKS="$min_blocks" > "$out/configure.log"
cmake --build build-gpu -j"$jobs" > "$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
if [ "$bench_only" = 1 ]; then
  for n in 16384 65536; do
    for scene in box_push pick_lift stack5; do
      timeout 120 ./build-gpu/s2r bench --scene "builtin:$scene" --worlds "$n" --control-steps 100 \
        --backend cuda --repeats 3 --json | tee -a "$out/cuda_bench_min_blocks$min_blocks.jsonl"
    done
  done
  exit 0
fi
# Only the tests that touch the device: the rest of the suite is CPU-only and runs in CI (the store
# crash tests alone can take minutes of fsyncs, which device time should not pay for).
timeout 300 ./build-gpu/s2r_tests --gtest_filter='*BackendParity*:*Cuda*:*CUDA*' 2>&1 | tee "$out/cuda_tests.txt"
: > "$out/cuda_bench.jsonl"
for scene in box_push pick_lift stack5; do
  for n in 1024 4096 16384 65536; do
    timeout 120 ./build-gpu/s2r bench --scene "builtin:$scene" --worlds "$n" --control-steps 100 \
      --backend cuda --repeats 3 --json | tee -a "$out/cuda_bench.jsonl"
  done
  timeout 120 ./build-gpu/s2r bench --scene "builtin:$scene" --worlds 4096 --control-steps 20 \
    --backend cpu --repeats 1 --json | tee -a "$out/cuda_bench.jsonl"
done
# the sweep on the device (experts, labels, recording in kernels/sweep_step.h) beside the CPU's
for backend in cuda cpu; do
  n=$([ "$backend" = cuda ] && echo 16384 || echo 1024)
  timeout 180 ./build-gpu/s2r sweep builtin:push --backend "$backend" --worlds "$n" --episodes $((4 * n)) \
    --out "$(mktemp -d)/push.zarr" --summary-json "$out/sweep_$backend.json" > "$out/sweep_$backend.txt" 2>&1 || true
done
# the step kernel under Nsight Compute, where the device machine has it: achieved occupancy, DRAM
# throughput, and the warp stall reasons (one launch of ControlStepKernel at 65,536 worlds)
python3 bench/cuda_kernels.py --log build-gpu/cuda_resource_usage.txt --budgets bench/cuda_kernel_budgets.txt \
  > "$out/cuda_kernels.txt" 2>&1 || true
if command -v ncu > /dev/null; then
  timeout 240 ncu --kernel-name regex:ControlStepKernel --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
    ./build-gpu/s2r bench --scene builtin:box_push --worlds 65536 --control-steps 4 --backend cuda --repeats 1 \
    > "$out/ncu_box_push.txt" 2>&1 || true
else
  echo "ncu not found on this machine" > "$out/ncu_box_push.txt"
fi
