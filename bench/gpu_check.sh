#!/usr/bin/env bash
# Everything that needs a GPU, in one run (about 15 minutes of device time are lent at most):
#   1. the binaries: built here with the CUDA backend (S2R_CUDA=ON), or carried prebuilt (below);
#      then one small run of each CUDA path, and where one fails, its backtrace (cuda-gdb) in this call,
#   2. the CUDA tests (backend parity, sweep parity) -- they skip without a device,
#   3. the CUDA backend on the three bench scenes at 1k-65k worlds, beside the CPU backend (all cores),
#      and at 65k worlds with the state, then the step block too, in global memory instead of local
#      (S2R_CUDA_STATE, S2R_CUDA_STEP_BLOCK),
#   4. Nsight Compute on one step kernel launch per scene (occupancy, DRAM throughput, stalls),
#   5. sweeps of every builtin task (the Panda's push too) on the device beside the same sweep on the CPU (outcome parity),
#      a push sweep at 16k worlds (env-steps/s with the store writing), and push and peg_insert
#      sweeps acted by the example policy processes on the device and on the CPU, and by a policy
#      network in the step (--policy-net),
#   6. compute-sanitizer memcheck over a small bench and a small sweep,
#   7. where a second build for 8 blocks per SM is carried (64 registers), its bench at 65k worlds
#      and its box_push launch's bytes under ncu (local memory: its spills, bench/sass_local.py),
#   8. where time is left, three arms (panda_pick, the UR5e, the UR5e with the 2F-85) on the device beside
#      the CPU backend, staged and with per-world global step blocks.
# Every stage runs under a share of one deadline ($S2R_GPU_BUDGET_S seconds, default 330), so the run
# ends in time and says what it skipped. Results: $OUT/summary.txt and $OUT/results.tgz (every log;
# the device tool brings back at most 8 files), or bench/results/<h200|h100>/ without $OUT.
#
# Prebuilt mode (the device machine's image lacks Ceres, yaml-cpp, blosc and the rest): on a machine
# with the toolkit, `bench/gpu_pack.sh` builds and copies s2r, s2r_tests and every shared library
# they need into .gpu/ (ignored by git); carry `.gpu` and this script uses it ($S2R_GPU_PACK_DIR names
# another folder).
#
# Rehearsal without a GPU (tests/python/test_gpu_check.py): S2R_GPU_REHEARSAL=N runs every stage with
# the CUDA backend's code on the CPU (`--backend cuda-emulation`) at 1/N of the worlds and episodes
# (at least 8), so that the script, the pack and gpu_summary.py have run before a device's minutes
# are spent on them. Its test puts stand-ins for ncu and compute-sanitizer on PATH that fail as they
# do on a gVisor machine (no counters, device not supported): each is tried once, not per stage.
# $S2R_GPU_PYTHON (default python3, on a device the image's, which has NumPy) runs the policy process.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
budget="${S2R_GPU_BUDGET_S:-330}"
gpu="$(realpath -m "${S2R_GPU_PACK_DIR:-.gpu}")"
rehearsal="${S2R_GPU_REHEARSAL:-}"
cuda=cuda
scale=1
if [ -n "$rehearsal" ]; then
  cuda=cuda-emulation
  scale=$rehearsal
fi
n() { local v=$(($1 / scale)); echo $((v < 8 ? 8 : v)); }  # worlds or episodes at the rehearsal's scale
have() { command -v "$1" > /dev/null; }  # a device tool on PATH
work="$(mktemp -d "${TMPDIR:-/tmp}/s2r_gpu.XXXXXX")"
trap 'rm -rf "$work"' EXIT  # everything in it is packed into $final
# results by machine: bench/results/h200 or h100 (the device tool lends both; the same sm_90 build runs on each)
case "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" in
  *H200*) machine=h200 ;;
  *H100*) machine=h100 ;;
  *) machine=gpu ;;
esac
[ -n "$rehearsal" ] && machine=rehearsal
final="${OUT:-bench/results/$machine}"
mkdir -p "$final"
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"

left() { echo $((budget - ($(date +%s) - t0))); }
# run CAP_SECONDS LOGFILE CMD...: the command with its output appended to LOGFILE, under CAP or what
# is left of the budget (less 15 s for packing), whichever is smaller
run() {
  local cap=$1 log=$2
  shift 2
  local l=$(($(left) - 15))
  ((l < cap)) && cap=$l
  if ((cap < 5)); then
    echo "SKIPPED (out of time): $*" | tee -a "$work/$log" "$work/skipped.txt"
    return 124
  fi
  echo "+ [$(($(date +%s) - t0)) s, cap ${cap} s] $*" >> "$work/$log"
  timeout -k 5 "$cap" "$@" >> "$work/$log" 2>&1
  local rc=$?
  echo "rc=$rc" >> "$work/$log"
  return $rc
}
pack() {
  python3 bench/gpu_summary.py "$work" > "$work/summary.txt" 2>&1
  cp "$work/summary.txt" "$final/summary.txt"
  tar czf "$final/results.tgz" -C "$work" --exclude=tmp . 2>/dev/null
}

{
  date -u
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv
  nvidia-smi -q | grep -i -E "product name|persistence|compute mode|power limit" | head
  command -v ncu compute-sanitizer nvcc
  grep PRETTY /etc/os-release
} > "$work/machine.txt" 2>&1

# --- 1. binaries ------------------------------------------------------------------------------
if [ -f "$gpu/pack.tar.xz" ] && [ ! -x "$gpu/bin/s2r" ]; then
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1] + "/pack.tar.xz").extractall(sys.argv[1])' "$gpu" \
    >> "$work/machine.txt" 2>&1
fi
if [ -x "$gpu/bin/s2r" ]; then
  bin="$gpu/bin"
  export LD_LIBRARY_PATH="$gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # the tests find configs/ under the source folder they were built in
  src="$(cat "$gpu/source_dir")"
  if [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"; fi
  # S2R_GPU_CARRIED_LOADER=1: the carried C library even where the system's would do (the rehearsal's test)
  if [ -n "${S2R_GPU_CARRIED_LOADER:-}" ] || ! "$bin/s2r" --version >> "$work/machine.txt" 2>&1; then
    # an older system C library than the build machine's: use the carried one
    echo "system loader failed; using the carried C library" >> "$work/machine.txt"
    for b in "$gpu/bin/s2r" "$gpu/bin/s2r_tests" "$gpu/bin-mb8/s2r"; do
      [ -x "$b" ] || continue
      mv "$b" "$b.real"
      printf '#!/bin/sh\nexec %s/core/ld-linux-x86-64.so.2 --library-path %s/core:%s/lib %s.real "$@"\n' \
        "$gpu" "$gpu" "$gpu" "$b" > "$b"
      chmod +x "$b"
    done
    "$bin/s2r" --version >> "$work/machine.txt" 2>&1
  fi
  cp "$gpu/cuda_resource_usage.txt" "$work/" 2>/dev/null
else
  bin="$PWD/build-gpu"
  run 900 build.log cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DS2R_CUDA=ON -DS2R_BUILD_BENCH=OFF
  run 900 build.log cmake --build build-gpu -j"$(nproc)" || { pack; tail -30 "$work/build.log"; exit 1; }
  cp build-gpu/cuda_resource_usage.txt "$work/" 2>/dev/null
fi
python3 bench/cuda_kernels.py --log "$work/cuda_resource_usage.txt" --budgets bench/cuda_kernel_budgets.txt \
  > "$work/cuda_kernels.txt" 2>&1
pack

# --- 1b. smoke: one small run of each CUDA path (a bench scene, a sweep, an arm). Where one fails,
# the same command again under cuda-gdb (host and device backtraces) and compute-sanitizer, in this
# call: on 2026-12-04 every CUDA process died in SetModel, and its backtrace took a second call.
smoke() {  # NAME CMD...: 0 when the command passed
  local name=$1
  shift
  run 30 smoke.txt "$@" && { echo "smoke $name: ok" >> "$work/smoke.txt"; return 0; }
  echo "smoke $name: FAILED" >> "$work/smoke.txt"
  if have cuda-gdb; then
    run 60 "smoke_debug_$name.txt" cuda-gdb -batch -ex run -ex bt -ex "info cuda kernels" \
      -ex "thread apply all bt 12" --args "$@"
  fi
  if have compute-sanitizer; then
    run 60 "smoke_debug_$name.txt" compute-sanitizer --tool memcheck --show-backtrace host "$@"
  fi
  pack
  return 1
}
smoke bench "$bin/s2r" bench --scene builtin:pick_lift --worlds $(n 256) --control-steps 3 --backend $cuda \
  --repeats 1 --json
smoke sweep "$bin/s2r" sweep builtin:push --backend $cuda --worlds $(n 64) --episodes $(n 64) --seed 3 \
  --out "$TMPDIR/smoke.zarr"
rm -rf "$TMPDIR/smoke.zarr"
smoke arm "$bin/s2r" bench --scene builtin:ur5e_2f85/scene --worlds $(n 256) --control-steps 2 --backend $cuda \
  --repeats 1 --json
pack

# --- 2. the CUDA tests ------------------------------------------------------------------------------
run 150 cuda_tests.txt "$bin/s2r_tests" --gtest_filter='*BackendParity*:*Cuda*:*CUDA*'
pack

# --- 3. env-steps/s on the device, beside the CPU backend on every core -------------------------------
for scene in box_push pick_lift stack5; do
  for n in 1024 4096 16384 65536; do
    run 30 bench.jsonl "$bin/s2r" bench --scene "builtin:$scene" --worlds $(n $n) --control-steps 100 --backend $cuda \
      --repeats 3 --json
  done
  run 30 bench.jsonl "$bin/s2r" bench --scene "builtin:$scene" --worlds $(n 4096) --control-steps 20 --backend cpu \
    --repeats 1 --json
  pack
done

# the step block's and the state's place (cuda/backend_cuda.cu LocalStepBlock): the same runs at 65k
# worlds with the state left in global memory (S2R_CUDA_STATE=global), then with the per-world step
# blocks in global memory too, as before stop 28 (the same state hash expected in every row)
for scene in box_push pick_lift stack5; do
  S2R_CUDA_STATE=global run 30 bench_global_block.jsonl "$bin/s2r" bench --scene "builtin:$scene" \
    --worlds $(n 65536) --control-steps 100 --backend $cuda --repeats 3 --json
  S2R_CUDA_STEP_BLOCK=global run 30 bench_global_block.jsonl "$bin/s2r" bench --scene "builtin:$scene" \
    --worlds $(n 65536) --control-steps 100 --backend $cuda --repeats 3 --json
done
pack

# several control steps per launch (Engine::StepMany, the actions known in advance): 4 per launch
# at 65k worlds, the state staged once per 4 steps (same hashes as the 1-step rows)
for scene in box_push pick_lift stack5; do
  run 30 bench_steps_per_launch.jsonl "$bin/s2r" bench --scene "builtin:$scene" --worlds $(n 65536) \
    --control-steps 100 --steps-per-launch 4 --backend $cuda --repeats 3 --json
done
pack

# --- 4. Nsight Compute: one step-kernel launch at 65,536 worlds ------------------------------------------
# ncu_run CAP LOG ARGS...: ncu with ARGS, not tried again once a run failed other than by time (on a
# gVisor machine ncu cannot read the counters: each run would fail only after its start-up)
ncu_ok=0
have ncu && ncu_ok=1
ncu_run() {
  local cap=$1 log=$2
  shift 2
  if ((!ncu_ok)); then
    echo "not run: an earlier ncu run failed (its log says how)" >> "$work/$log"
    return 1
  fi
  run "$cap" "$log" ncu --clock-control none "$@"
  local rc=$?
  ((rc != 0 && rc != 124)) && ncu_ok=0
  return $rc
}
if ((ncu_ok)); then
  for scene in box_push stack5; do
    ncu_run 60 "ncu_$scene.txt" --kernel-name regex:ControlStepKernel --launch-skip 2 \
      --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --section MemoryWorkloadAnalysis "$bin/s2r" bench --scene "builtin:$scene" --worlds $(n 65536) --control-steps 3 \
      --backend $cuda --repeats 1
  done
  # bytes per launch: DRAM both ways, and the local-memory (stack, spill) traffic through L1; fp32
  # operations (FFMA counts 2) for the compute side of the roofline, which nothing here can count
  bytes_metrics=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,\
l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum,\
l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum,\
sm__sass_thread_inst_executed_op_fadd_pred_on.sum,sm__sass_thread_inst_executed_op_fmul_pred_on.sum,\
sm__sass_thread_inst_executed_op_ffma_pred_on.sum
  ncu_run 40 ncu_bytes_box_push.txt --kernel-name regex:ControlStepKernel --launch-skip 2 \
    --launch-count 1 --metrics "$bytes_metrics" \
    "$bin/s2r" bench --scene builtin:box_push --worlds $(n 65536) --control-steps 3 --backend $cuda --repeats 1
  S2R_CUDA_STEP_BLOCK=global ncu_run 40 ncu_bytes_box_push_global_block.txt \
    --kernel-name regex:ControlStepKernel --launch-skip 2 --launch-count 1 --metrics dram__bytes_read.sum,\
dram__bytes_write.sum,gpu__time_duration.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,\
l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum \
    "$bin/s2r" bench --scene builtin:box_push --worlds $(n 65536) --control-steps 3 --backend $cuda --repeats 1
else
  echo "ncu not found" > "$work/ncu_box_push.txt"
fi
pack

# --- 5. sweeps: outcome parity per task, then a large push sweep ---------------------------------------
for task in push pick_lift peg_insert panda_push; do
  for backend in $cuda cpu; do
    run 40 "sweep_${task}_$backend.txt" "$bin/s2r" sweep "builtin:$task" --backend $backend --worlds $(n 256) \
      --episodes $(n 1024) --seed 11 --out "$TMPDIR/${task}_$backend.zarr" \
      --summary-json "$work/sweep_${task}_$backend.json"
    rm -rf "$TMPDIR/${task}_$backend.zarr"
  done
done
run 60 sweep_push_cuda_16k.txt "$bin/s2r" sweep builtin:push --backend $cuda --worlds $(n 16384) --episodes $(n 32768) \
  --seed 12 --out "$TMPDIR/push16k.zarr" --summary-json "$work/sweep_push_cuda_16k.json"
rm -rf "$TMPDIR/push16k.zarr"
# 16 control steps per pass: the state is staged a quarter as often (docs/gpu.md, *Sweeps: what is logged
# and what moves*), at the price of worlds idling from an episode's end to the pass's
run 60 sweep_push_cuda_16k_p16.txt "$bin/s2r" sweep builtin:push --backend $cuda --worlds $(n 16384) \
  --episodes $(n 32768) --seed 12 --steps-per-pass 16 --out "$TMPDIR/push16k_p16.zarr" \
  --summary-json "$work/sweep_push_cuda_16k_p16.json"
rm -rf "$TMPDIR/push16k_p16.zarr"
# a policy process acting (python/examples/push_policy.py, NumPy): each control step one launch takes its
# actions, steps, and gathers its next inputs on the device; one copy brings them over, one takes the
# actions back (docs/sweep.md, *On the CUDA backend*); against the same on the CPU
for backend in $cuda cpu; do
  run 45 "sweep_policy_push_$backend.txt" "$bin/s2r" sweep builtin:push --backend $backend --worlds $(n 4096) \
    --episodes $(n 8192) --seed 13 --out "$TMPDIR/policy_$backend.zarr" \
    --policy "${S2R_GPU_PYTHON:-python3} python/examples/push_policy.py" \
    --summary-json "$work/sweep_policy_push_$backend.json"
  rm -rf "$TMPDIR/policy_$backend.zarr"
done
# and the peg example (the joints and the socket's position among its inputs; a Python loop over the
# worlds, so fewer of them), labelled by the state checker
for backend in $cuda cpu; do
  run 40 "sweep_policy_peg_insert_$backend.txt" "$bin/s2r" sweep builtin:peg_insert --backend $backend \
    --worlds $(n 256) --episodes $(n 512) --seed 13 --out "$TMPDIR/policy_peg_$backend.zarr" \
    --policy "${S2R_GPU_PYTHON:-python3} python/examples/peg_policy.py" \
    --summary-json "$work/sweep_policy_peg_insert_$backend.json"
  rm -rf "$TMPDIR/policy_peg_$backend.zarr"
done
# a policy network in the step (--policy-net python/examples/push_net.npz, cloned from the expert): the
# expert's pass with the network's forward pass for the expert's action, 4 control steps per launch, no
# host round trip (SweepNetKernel); beside the CPU, then at the 16k expert sweep's size for its throughput
# (labelled by the expert, --policy-expert: TaskAct in the kernel, steps/expert_action copied out;
# inspect's agreement of each backend's store)
for backend in $cuda cpu; do
  run 40 "sweep_net_push_$backend.txt" "$bin/s2r" sweep builtin:push --backend $backend --worlds $(n 4096) \
    --episodes $(n 8192) --seed 13 --out "$TMPDIR/net_$backend.zarr" --policy-net python/examples/push_net.npz \
    --policy-expert --summary-json "$work/sweep_net_push_$backend.json"
  timeout 60 "$bin/s2r" inspect "$TMPDIR/net_$backend.zarr" --json > "$work/inspect_net_push_$backend.json" 2>&1
  rm -rf "$TMPDIR/net_$backend.zarr"
done
run 60 sweep_net_push_cuda_16k.txt "$bin/s2r" sweep builtin:push --backend $cuda --worlds $(n 16384) \
  --episodes $(n 32768) --seed 12 --out "$TMPDIR/net16k.zarr" --policy-net python/examples/push_net.npz \
  --summary-json "$work/sweep_net_push_cuda_16k.json"
rm -rf "$TMPDIR/net16k.zarr"
pack

# --- 6. memcheck ------------------------------------------------------------------------------------
if have compute-sanitizer; then
  run 40 memcheck.txt compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/s2r" bench \
    --scene builtin:pick_lift --worlds $(n 96) --control-steps 3 --backend $cuda --repeats 1
  rc=$?
  # 0: clean; 9: errors found (the sweep's are wanted too); else the tool failed (gVisor: device not supported)
  if ((rc == 0 || rc == 9)); then
    run 60 memcheck.txt compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/s2r" sweep builtin:push \
      --backend $cuda --worlds $(n 32) --episodes $(n 40) --seed 5 --out "$TMPDIR/memcheck.zarr"
  else
    echo "not run: the sweep's memcheck (compute-sanitizer failed on the bench, rc=$rc)" >> "$work/memcheck.txt"
  fi
else
  echo "compute-sanitizer not found" > "$work/memcheck.txt"
fi
pack

# --- 7. the 8-blocks-per-SM build (64 registers), where carried ---------------------------------------
if [ -x "$gpu/bin-mb8/s2r" ]; then
  for scene in box_push pick_lift stack5; do
    run 30 bench_mb8.jsonl "$gpu/bin-mb8/s2r" bench --scene "builtin:$scene" --worlds $(n 65536) --control-steps 100 \
      --backend $cuda --repeats 3 --json
  done
  cp "$gpu/cuda_resource_usage_mb8.txt" "$work/" 2>/dev/null
  # the same bytes as the 4-block build's launch (stage 4): bench/sass_local.py puts its PhysicsStep's
  # spills at up to 38 KB more local traffic per env-step (2.5 GB per launch of 65,536; a high estimate)
  if have ncu; then
    ncu_run 40 ncu_bytes_box_push_mb8.txt --kernel-name regex:ControlStepKernel \
      --launch-skip 2 --launch-count 1 --metrics "${bytes_metrics:-gpu__time_duration.sum}" \
      "$gpu/bin-mb8/s2r" bench --scene builtin:box_push --worlds $(n 65536) --control-steps 3 --backend $cuda \
      --repeats 1
  fi
fi
pack

# --- 8. arms (issue 13) on the device, where time is left: the MJX Panda pick scene, the UR5e and ------
# the UR5e with the 2F-85 (<slide_trees+trees>, <all>, <all>), beside the CPU backend on every core
for scene in builtin:panda_pick configs/robots/universal_robots_ur5e/scene.xml builtin:ur5e_2f85/scene; do
  for n in 1024 16384; do
    run 40 bench_arms.jsonl "$bin/s2r" bench --scene "$scene" --worlds $(n $n) --control-steps 20 --backend $cuda \
      --repeats 3 --json
  done
  run 30 bench_arms.jsonl "$bin/s2r" bench --scene "$scene" --worlds $(n 1024) --control-steps 10 --backend cpu \
    --repeats 1 --json
done
# since stop 30 the arms' variants keep their step block, state and world block in local memory where
# they fit (all three here: `local+state+world`; ur5e_2f85 since stop 31's 64 KB block); their old
# placement, per-world global blocks:
for scene in builtin:panda_pick builtin:ur5e_2f85/scene; do
  S2R_CUDA_STEP_BLOCK=global run 40 bench_arms.jsonl "$bin/s2r" bench --scene "$scene" --worlds $(n 16384) \
    --control-steps 20 --backend $cuda --repeats 3 --json
done
pack
cat "$final/summary.txt"
