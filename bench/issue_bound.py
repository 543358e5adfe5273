#!/usr/bin/env python3
"""The other half of issue 14's roofline: instructions per env-step, and the bound they set.

  issue_bound.py --s2r build/s2r --budgets bench/cuda_kernel_budgets.txt \
                 --report bench/results/dev-2core/issue_bound.md [--jsonl ...]

For the device's code path build the binary with -DS2R_LEAN_READS (as for bench/local_traffic.py).

bench/cuda_kernels.py bounds the step kernels by HBM bandwidth over the bytes an env-step moves.
This script bounds them by instruction issue: an SM90 GPU (H100 or H200 SXM: 132 SMs, four
schedulers per SM each issuing one warp instruction per clock, 1.98 GHz boost) issues at most
132 x 4 x 32 x 1.98e9 = 3.35e13 thread-instructions per second, so a kernel whose threads execute I
instructions per env-step runs at most 3.35e13 / I env-steps per second, however its memory behaves
(the fp32 FMA peak, 67 TFLOP/s, is the same issue rate counted as two FLOPs per FMA).

I comes from the CPU backend, which runs the same kernels/ code on one thread: `valgrind
--tool=callgrind` counts the x86-64 instructions executed inside the backend's per-world step
(`s2r bench`: PhysicsStep and everything it calls, per control step; `s2r sweep`: the whole
SweepWorldPass, the expert, task checks and observation rows included), divided by the env-steps
taken. As a count of the device's instructions it is a proxy, off either way by a factor that
only a device can measure: SASS needs a separate load where x86 folds one into an arithmetic
instruction, spills add local loads and stores, a warp issues the union of its threads' paths
when their worlds diverge (contact counts differ), and the GPU computes sqrt, rsqrt, sin and cos
in a few instructions where the CPU calls libm.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_kernels import (HBM_BYTES_PER_S, measure_args, scene_sizes, step_block_place,  # noqa: E402
                          sweep_row_bytes, sweep_traffic, traffic_model, write_measured)

ISSUE_PER_S = 132 * 4 * 32 * 1.98e9  # thread-instructions per second, H100 / H200 SXM
SCENES = ("box_push", "pick_lift", "stack5")
TASKS = ("push", "pick_lift", "peg_insert")
WORLDS, CONTROL_STEPS, EPISODES = 64, 50, 64


def callgrind(cmd, tmp):
    """Inclusive instruction counts per function of one run of `cmd` (callgrind_annotate's lines)."""
    out = os.path.join(tmp, "callgrind.out")
    proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + cmd,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} under callgrind failed:\n{proc.stderr[-2000:]}")
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
                          check=True, capture_output=True, text=True).stdout
    rows = []
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$", line)
        if m:
            rows.append((int(m.group(1).replace(",", "")), m.group(2)))
    return rows


def inclusive(rows, pattern):
    """The largest inclusive count of a function matching `pattern` (the outermost such frame)."""
    found = [n for n, name in rows if re.search(pattern, name)]
    if not found:
        sys.exit(f"no function matching {pattern!r} in the profile (inlined? renamed?)")
    return max(found)


def bench_row(s2r, scene, tmp):
    cmd = [s2r, "bench", "--scene", f"builtin:{scene}", "--worlds", str(WORLDS), "--control-steps",
           str(CONTROL_STEPS), "--backend", "cpu", "--threads", "1", "--repeats", "1", "--json"]
    rows = callgrind(cmd, tmp)
    env_steps = (CONTROL_STEPS + 1) * WORLDS  # the untimed first step is counted too
    physics = inclusive(rows, r"s2r::PhysicsStep<")
    step = inclusive(rows, r"CpuBackend::Step\(.*\{lambda")
    return {"kind": "bench", "name": scene, "env_steps": env_steps, "instructions_physics": physics / env_steps,
            "instructions": step / env_steps}


def sweep_row(s2r, task, tmp):
    summary = os.path.join(tmp, "summary.json")
    cmd = [s2r, "sweep", f"builtin:{task}", "--episodes", str(EPISODES), "--worlds", str(WORLDS), "--threads", "1",
           "--out", os.path.join(tmp, "s.zarr"), "--overwrite", "--summary-json", summary]
    rows = callgrind(cmd, tmp)
    env_steps = json.load(open(summary))["world_steps"]
    physics = inclusive(rows, r"s2r::PhysicsStep<")
    step = inclusive(rows, r"CpuBackend::SweepStep\(.*\{lambda")
    return {"kind": "sweep", "name": task, "env_steps": env_steps, "instructions_physics": physics / env_steps,
            "instructions": step / env_steps}


def main():
    a, room = measure_args(__doc__)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scene in SCENES:
            r = bench_row(a.s2r, scene, tmp)
            j = scene_sizes(a.s2r, scene)
            r["bytes_as_built"] = traffic_model(j, step_block_place(j, room))[1]
            r["lean_reads"] = j.get("lean_reads", False)
            rows.append(r)
        for task in TASKS:
            r = sweep_row(a.s2r, task, tmp)
            scene, logged = sweep_row_bytes(a.s2r, task)
            j = scene_sizes(a.s2r, scene.replace("builtin:", ""))
            if step_block_place(j, room) == "local+state+world":  # SweepStepKernel, 4 steps per pass
                _, glob, local = sweep_traffic(j, logged, per_pass=4)
                r["bytes_as_built"] = glob + local
            rows.append(r)
    lines = ["# Instructions per env-step and the issue bound (sm_90, H100 / H200)", "",
             "Generated by `bench/issue_bound.py` (the model is in its docstring and in docs/gpu.md, *Traffic per "
             "env-step and the H200 bound*). x86-64 instructions the CPU backend executes per env-step on one thread "
             f"(callgrind; `s2r bench` at {WORLDS} worlds x {CONTROL_STEPS + 1} control steps with its scripted "
             f"actions, `s2r sweep builtin:TASK` of {EPISODES} episodes on {WORLDS} worlds), as a proxy for a "
             "device thread's instructions; the issue bound is 3.35e13 thread-instructions/s (132 SMs x 4 "
             "schedulers x 32 lanes x 1.98 GHz) over them. *Memory bound as built* is cuda_kernels.py's "
             "(H200's 4.8 TB/s over the bytes per env-step: bench rows ControlStepKernel at one control step "
             "per launch, sweep rows SweepStepKernel at 4 per pass, global and local memory together); the "
             "lower of the two bounds is the roofline's.", "",
             ("The binary was built with `S2R_LEAN_READS`: its CPU step runs the device's code path (kLeanReads, "
              "kernels/solver_body.h: fewer loads, more instructions)."
              if all(r.get("lean_reads", True) for r in rows) else
              "The binary is a plain CPU build: the device's step (kLeanReads, kernels/solver_body.h) skips some "
              "of its loads at a few instructions each; build with `-DS2R_LEAN_READS` to count those."), "",
             "| run | scene or task | env-steps counted | instructions / env-step (physics) | "
             "instructions / env-step (all of the step) | issue bound (env-steps/s) | memory bound as built, "
             "H200 (env-steps/s) | bound by |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        issue = ISSUE_PER_S / r["instructions"]
        if "bytes_as_built" in r:
            mem = HBM_BYTES_PER_S / r["bytes_as_built"]
            mem_text, by = f"{mem:,.0f}", "memory" if mem < issue else "issue"
        else:
            mem_text, by = "(not staged)", ""
        lines.append(f"| {r['kind']} | {r['name']} | {r['env_steps']:,} | {r['instructions_physics']:,.0f} | "
                     f"{r['instructions']:,.0f} | {issue:,.0f} | {mem_text} | {by} |")
    write_measured(a, rows, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
