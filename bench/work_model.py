#!/usr/bin/env python3
"""Where a world's step spends its work, and what that says about a warp per world (issue 14).

  work_model.py --s2r build/s2r --report bench/results/dev-2core/work_model.md [--scenes ...]

Samples the CPU backend on one thread with `perf record` (the same step code the CUDA kernels run,
kernels/) and sorts each function's own time into what a warp of 32 lanes could share within one
world and what it could not:

  pairs    the narrow phase: one candidate geom pair per lane (Collide*)
  rows     building contact and joint rows, manifolds and their tree responses: one row per lane
  columns  the trees' mass matrix and its inverse: one column per lane
  serial   everything else: the Gauss-Seidel passes (each row reads the velocities the last one
           wrote), the trees' recursions along the chain (forward kinematics, bias forces),
           integration, and what the compiler inlined into PhysicsStep (counted serial: it cannot
           be told apart, so the estimate leans against the warp)

With a parallel share p spread perfectly over 32 lanes, one world's step is at most
S = 1 / ((1 - p) + p / 32) times faster on a warp than on a thread. Thread per world fills the GPU
(C resident threads: SMs x the variant's resident threads per SM from ptxas) at C worlds and runs
N / t worlds per unit time below that; warp per world fills it at C / 32 worlds and then runs at
most C * S / (32 t). So a warp per world can only win below N* = C * S / 32 worlds. This is a
bound from a CPU profile, not a GPU measurement: on a device, memory behaviour (a warp's lanes
reading one world's rows coalesce; threads reading 32 worlds' rows coalesce too where staged) and
divergence (worlds with different contact counts in one warp) move it either way.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_kernels import SM90, occupancy, parse_log  # noqa: E402

CATEGORIES = (  # first match wins, on the function name without its namespace
    ("pairs", re.compile(r"^(Collide|ClipPolygon|ReduceManifold|CapsuleBox|collide_internal|Gjk|Epa|Support)")),
    ("rows", re.compile(r"^(MakeContactRow|PrepareManifold|PrepareContacts|PrepareAxisRows|PrepareJoints|"
                        r"TreeRowResponse|MakeJointRow|PrepareCouplings|JointRow)")),
    ("columns", re.compile(r"^(TreeMassMatrix|SpdInverse|SpdFactor|Cholesky)")),
)


def classify(symbol):
    name = re.sub(r"^s2r::", "", symbol)
    for cat, pat in CATEGORIES:
        if pat.search(name):
            return cat
    return "serial"


def profile(s2r, scene, worlds, steps):
    """{symbol: percent of samples} for the s2r:: functions of one bench run, and the run's JSON."""
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        out = subprocess.run(["perf", "record", "-F", "4000", "-o", data, "--", s2r, "bench", "--scene", scene,
                              "--worlds", str(worlds), "--control-steps", str(steps), "--repeats", "1", "--threads", "1",
                              "--json"], check=True, capture_output=True, text=True).stdout
        rep = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "symbol", "--stdio", "-g", "none"],
                             check=True, capture_output=True, text=True).stdout
    shares = {}
    for line in rep.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[\.\]\s+(.+?)\s*(-\s+-\s*)?$", line)
        if m and m.group(2).startswith("s2r::") and "RunBench" not in m.group(2):
            shares[m.group(2)] = shares.get(m.group(2), 0.0) + float(m.group(1))
    return shares, json.loads(out)


def resident_threads(kernels, variant):
    k = kernels.get(f"ControlStepKernel<{variant}>")
    if k is None:
        return None
    warps, _ = occupancy(k["regs"], k["smem"])
    return warps * 32 * SM90["sms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--s2r", required=True)
    ap.add_argument("--log", default="build/cuda_resource_usage.txt", help="ptxas -v output (cuda/resource_log.sh)")
    ap.add_argument("--report", required=True)
    ap.add_argument("--scenes", nargs="+", default=["builtin:box_push", "builtin:pick_lift", "builtin:stack5",
                                                    "builtin:panda_pick",
                                                    "configs/robots/universal_robots_ur5e/scene.xml"])
    ap.add_argument("--worlds", type=int, default=512)
    ap.add_argument("--control-steps", type=int, default=200)
    a = ap.parse_args()
    kernels = parse_log(open(a.log).read())
    rows, details = [], []
    for scene in a.scenes:
        shares, j = profile(a.s2r, scene, a.worlds, a.control_steps)
        total = sum(shares.values())
        cats = collections.Counter()
        for sym, pct in shares.items():
            cats[classify(sym)] += pct / total
        p = cats["pairs"] + cats["rows"] + cats["columns"]
        speedup = 1.0 / ((1.0 - p) + p / 32.0)
        c = resident_threads(kernels, j["step_variant"])
        nstar = c * speedup / 32.0 if c else float("nan")
        name = scene.replace("builtin:", "").replace("configs/robots/", "")
        rows.append(f"| {name} | {j['step_variant']} | {j['contacts_per_step']:.1f} | {100 * cats['pairs']:.0f} % | "
                    f"{100 * cats['rows']:.0f} % | {100 * cats['columns']:.0f} % | {100 * cats['serial']:.0f} % | "
                    f"{speedup:.2f} | {c:,} | {nstar:,.0f} |")
        top = sorted(shares.items(), key=lambda kv: -kv[1])[:12]
        details += [f"**{name}** ({j['env_steps_per_s']:,.0f} env-steps/s on one thread, {total:.0f} % of samples in s2r "
                    "functions): " + ", ".join(f"{re.sub(r'^s2r::', '', s)} {100 * v / total:.1f} % ({classify(s)})"
                                               for s, v in top), ""]
    lines = ["# Work model: thread per world or warp per world (issue 14)", "",
             f"Generated by `bench/work_model.py` (perf on the CPU backend, one thread, {a.worlds} worlds, "
             f"{a.control_steps} control steps; ptxas footprints from `{a.log}`). Categories and the bound: the "
             "script's docstring and docs/gpu.md, *The redesign*, step 5.", "",
             "| scene | variant | contacts per step | pairs | rows | columns | serial | warp speedup bound S | "
             "resident threads C (sm_90, 132 SMs) | warp per world can win below N* = C S / 32 worlds |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"] + rows + ["", "Each scene's largest functions "
                                                                            "(own time, share of the s2r samples):",
                                                                            ""] + details
    with open(a.report, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines[:len(rows) + 6]))


if __name__ == "__main__":
    main()
