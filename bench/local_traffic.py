#!/usr/bin/env python3
"""What a world's step touches of its scratch and state, measured: the bytes behind issue 14's bounds.

  local_traffic.py --s2r build/s2r --report bench/results/dev-2core/local_traffic.md [--jsonl ...]

For the device's bytes build the binary with -DS2R_LEAN_READS (a CPU-only build: cmake
-DS2R_CUDA=OFF -DCMAKE_CXX_FLAGS=-DS2R_LEAN_READS); a plain build counts the CPU's, which reads
what the device's step skips (kLeanReads, kernels/solver_body.h).

bench/cuda_kernels.py's traffic model counts sizes: the step block written and read once per
physics step, the state and world block per launch. This script measures, on the CPU backend (one
thread, the same kernels/ code the CUDA kernels run), for each bench scene:

  accessed   the bytes read and written per env-step in the step block, the world blocks and the
             state arrays: valgrind's DHAT counts every load and store into each heap block (the
             CPU backend's step block is one block per thread, its world blocks one array, each
             state array one vector)
  footprint  the bytes of the step block a world's control step writes (`s2r bench
             --scratch-probe`: each control step starts on a block of marker bytes; what differs
             afterwards was written), per array

On a device the step block, the staged state and the world block live in the thread's local
memory, cached by L1 (256 KB per SM, shared memory's carve-out included) and L2 (50 MB). Their
traffic reaches HBM unless it stays cached; the hot set per SM is the footprint (step block
written, staged state, world block) times the resident threads. *Bound, all accessed bytes* divides
4.8 TB/s (H200) by everything accessed per env-step (nothing cached: a floor); *L1 holds* says how
many resident threads' hot sets fit in 256 KB against the 512 (4 blocks of 128) or 1,024 (8 blocks)
the kernels are built for. Model data (read-only, the same addresses for every world: the constant
and L1 caches serve them) is left out.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_kernels import (HBM_BYTES_PER_S, measure_args, step_block_place, traffic_model,  # noqa: E402
                          write_measured)

SCENES = ("box_push", "pick_lift", "stack5")
WORLDS, CONTROL_STEPS = 64, 50
L1_BYTES = 256 * 1024


def bench(s2r, scene, extra=()):
    cmd = [s2r, "bench", "--scene", f"builtin:{scene}", "--worlds", str(WORLDS), "--control-steps",
           str(CONTROL_STEPS), "--backend", "cpu", "--threads", "1", "--repeats", "1", "--json"] + list(extra)
    return cmd


def dhat(s2r, scene, tmp):
    """(read, written) bytes per env-step of the step block, the world blocks and the state arrays."""
    out = os.path.join(tmp, "dhat.json")
    proc = subprocess.run(["valgrind", "--tool=dhat", f"--dhat-out-file={out}"] + bench(s2r, scene),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{scene} under DHAT failed:\n{proc.stderr[-2000:]}")
    j = json.loads(proc.stdout)
    d = json.load(open(out))
    env_steps = (CONTROL_STEPS + 1) * WORLDS  # the untimed first step included
    sums = {"step block": [0, 0], "world blocks": [0, 0], "state": [0, 0]}
    for p in d["pps"]:
        frames = " ".join(d["ftbl"][f] for f in p["fs"][:4])
        if "CpuBackend::SetModel" in frames:
            key = "step block" if p["tb"] == j["step_scratch_bytes"] else "world blocks"
        elif "HostState::Allocate" in frames:
            key = "state"
        else:
            continue
        sums[key][0] += p.get("rb", 0)
        sums[key][1] += p.get("wb", 0)
    return j, {k: (r / env_steps, w / env_steps) for k, (r, w) in sums.items()}


def main():
    a, room = measure_args(__doc__)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scene in SCENES:
            j, accessed = dhat(a.s2r, scene, tmp)
            probe = json.loads(subprocess.run(bench(a.s2r, scene, ["--scratch-probe"]), check=True,
                                              capture_output=True, text=True).stdout)
            if probe["state_hash"] != j["state_hash"]:
                sys.exit(f"{scene}: the scratch probe changed the result ({probe['state_hash']} vs {j['state_hash']})")
            rows.append({"scene": scene, "step_block_bytes": j["step_scratch_bytes"],
                         "state_bytes": j["state_bytes_per_world"], "world_block_bytes": j["world_scratch_bytes"],
                         "physics_steps_per_control": j["physics_steps_per_control"], "substeps": j["substeps"],
                         "contacts_per_step": j["contacts_per_step"],
                         "lean_reads": j.get("lean_reads", False),
                         "written_per_array": probe["scratch_written_bytes"],
                         "written": probe["scratch_written_total"],
                         "accessed": {k: {"read": r, "written": w} for k, (r, w) in accessed.items()},
                         "placement": step_block_place(j, room),
                         "sized_model": traffic_model(j, step_block_place(j, room))[1]})
    lines = ["# Scratch and state traffic per env-step, measured (CPU backend, one thread)", "",
             "Generated by `bench/local_traffic.py` (what each column is: its docstring; docs/gpu.md, *Traffic per "
             f"env-step and the H200 bound*). `s2r bench` at {WORLDS} worlds x {CONTROL_STEPS + 1} control steps, the "
             "bench's scripted actions; *accessed* from valgrind's DHAT (bytes read + written per env-step), "
             "*footprint* from `--scratch-probe` (bytes of the step block a control step writes). The scratch "
             "probe's state hash equals the plain run's (checked: a step reads nothing it did not write).",
             "",
              ("The binary was built with `S2R_LEAN_READS`: its CPU step skips the loads the device's skips "
              "(kLeanReads, kernels/solver_body.h), so these are the device's bytes."
              if all(r["lean_reads"] for r in rows) else
              "The binary is a plain CPU build: its step reads what the device's skips (kLeanReads, "
              "kernels/solver_body.h); build with `-DS2R_LEAN_READS` to count the device's bytes."), "",
             "| scene | step block (B) | footprint (B) | accessed, step block (B/env-step) | per footprint byte | "
             "accessed, state (B/env-step) | accessed, world block (B/env-step) | sized model, as built "
             "(B/env-step, cuda_kernels.py) | bound, all accessed + staging (env-steps/s) | hot set per thread (B) | threads whose "
             "hot sets fit L1 | 4 / 8 blocks resident |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        acc = r["accessed"]
        step = acc["step block"]["read"] + acc["step block"]["written"]
        state = acc["state"]["read"] + acc["state"]["written"]
        world = acc["world blocks"]["read"] + acc["world blocks"]["written"]
        sized = r["sized_model"]
        # staged for the launch: the state and world block cross global memory once each way
        total = step + state + world + 2 * r["state_bytes"] + 2 * r["world_block_bytes"]
        hot = r["written"] + r["state_bytes"] + r["world_block_bytes"]
        lines.append(f"| {r['scene']} | {r['step_block_bytes']:,} | {r['written']:,.0f} | {step:,.0f} | "
                     f"{step / r['written']:.1f} | {state:,.0f} | {world:,.0f} | {sized:,} | "
                     f"{HBM_BYTES_PER_S / total:,.0f} | {hot:,.0f} | {L1_BYTES / hot:,.0f} | 512 / 1,024 |")
    lines += ["", "Footprint by array (bytes written per world control step, each array's span counted to the "
              "next array's offset, padding included):", "",
              "| scene | " + " | ".join(rows[0]["written_per_array"].keys()) + " |",
              "|---|" + "---:|" * len(rows[0]["written_per_array"])]
    for r in rows:
        lines.append(f"| {r['scene']} | " + " | ".join(f"{v:,.0f}" for v in r["written_per_array"].values()) + " |")
    write_measured(a, rows, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
