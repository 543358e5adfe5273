#!/usr/bin/env python3
"""The short table that ends bench/gpu_check.sh: what passed, env-steps/s, sweeps, memcheck, ncu.

Usage: gpu_summary.py WORKDIR   (the folder gpu_check.sh writes its logs to)
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_kernels import traffic_model  # noqa: E402  (the bytes-per-env-step model of the report)

# HBM bandwidth by the GPU's name in nvidia-smi (vendor data sheets): the roofline's memory bound
HBM = (("H200", 4.8e12), ("H100 NVL", 3.9e12), ("H100 PCIe", 2.0e12), ("H100", 3.35e12))


def hbm_bytes_per_s(machine_lines):
    """The HBM bandwidth of the GPU machine.txt names, or (None, None) where it is not one we know."""
    for line in machine_lines:
        for name, bw in HBM:
            if name in line:
                return name, bw
    return None, None


# the issue side of the roofline: bench/issue_bound.py's instructions per env-step (the CPU backend's
# x86-64 count, a proxy) for the bench scenes, over an SM90 GPU's 3.35e13 thread-instructions/s
ISSUE_PER_S = 132 * 4 * 32 * 1.98e9
ISSUE_ROWS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "dev-2core", "issue_bound.jsonl")


def issue_bounds(path=ISSUE_ROWS):
    """scene -> issue bound (env-steps/s) from the committed issue_bound.jsonl's bench rows ({} without it)."""
    try:
        rows = [json.loads(line) for line in open(path) if line.strip()]
    except OSError:
        return {}
    return {r["name"]: ISSUE_PER_S / r["instructions"] for r in rows if r.get("kind") == "bench"}


def roofline(rows, machine_lines):
    """Each CUDA bench row against its memory bound: HBM bandwidth over the modelled bytes per env-step
    (bench/cuda_kernels.py traffic_model, for the row's placement and steps per launch), and issue 14's
    goals (box_push at 65,536 worlds >= 1e8 env-steps/s; every bench scene >= 30 % of its bound)."""
    gpu, bw = hbm_bytes_per_s(machine_lines)
    out = ["== roofline (memory bound from the traffic model; issue 14: box_push 65,536 worlds >= 1e8, "
           "each scene >= 30 % of its bound)"]
    if bw is None:
        return out + ["  unknown GPU: no HBM bandwidth to divide by"]
    out.append(f"  {gpu}: {bw / 1e12:.2f} TB/s")
    out.append("  issue: the instruction-issue bound (bench/results/dev-2core/issue_bound.md: CPU instruction "
               "counts as a proxy)")
    issue = issue_bounds()
    out.append(f"  {'scene':<12}{'tag':<28}{'worlds':>7}{'B/env-step':>12}{'bound':>11}{'measured':>11}{'of bound':>10}"
               f"{'issue':>11}")
    for name, r in rows:
        if not r["backend"].startswith("cuda") or "state_bytes_per_world" not in r:
            continue
        place = r.get("step_block_memory", "global")
        per_launch = r.get("steps_per_launch", 1)
        _, cur = traffic_model(r, place, per_launch)
        bound = bw / cur
        scene = r["scene"].replace("builtin:", "")
        tag = place + (f"/x{per_launch}" if per_launch > 1 else "") + ("/mb8" if "mb8" in name else "")
        frac = r["env_steps_per_s"] / bound
        goal = ""
        if r["worlds"] == 65536:
            goal = " goal met" if frac >= 0.3 else " under 30 %"
            if scene == "box_push":
                goal += ", >= 1e8" if r["env_steps_per_s"] >= 1e8 else ", < 1e8"
        issue_text = f"{issue[scene]:.3g}" if scene in issue else "-"
        out.append(f"  {scene:<12}{tag:<28}{r['worlds']:>7}{cur:>12,}{bound:>11.3g}{r['env_steps_per_s']:>11.3g}"
                   f"{100 * frac:>9.1f}%{issue_text:>11}{goal}")
    return out


# a failed test's lines in GoogleTest's output (an assertion's place and values, a CUDA error)
FAILURE_LINE = re.compile(r"\bFailure\b|\bExpected\b|\bWhich is\b|\berror:|CUDA error|terminate called")


def short_scene(scene):
    """builtin:box_push -> box_push; a path -> its last two parts (universal_robots_ur5e/scene.xml)"""
    scene = scene.replace("builtin:", "")
    return "/".join(scene.split("/")[-2:])


def hash_agreement(rows):
    """Lines saying whether the device rows of one scene, world count and horizon -- whatever the
    placement, steps per launch or registers per thread -- end in the same state hash, as they must
    (the same arithmetic in every build and placement)."""
    groups = {}
    for name, r in rows:
        if r["backend"] == "cpu" or "state_hash" not in r:
            continue
        key = (short_scene(r["scene"]), r["worlds"], r.get("control_steps"))
        groups.setdefault(key, set()).add(r["state_hash"])
    out = ["== state hashes across placements, launches and builds (one per scene, worlds and steps)"]
    shared = [k for k, v in groups.items() if len(v) == 1]
    differ = [(k, v) for k, v in groups.items() if len(v) > 1]
    out.append(f"  {len(shared)} of {len(groups)} groups agree")
    out += [f"  DIFFER {k[0]} {k[1]} worlds {k[2]} steps: {' '.join(sorted(v))}" for k, v in differ]
    return out


def sweep_parity(sweeps):
    """Each task's device sweep against the same sweep on the CPU: outcome counts (1,024 episodes,
    the same seeds; the device's rounding may move a few episodes across a label's threshold)."""
    out = ["== sweep outcomes, device against CPU (same episodes)"]
    for name, s in sorted(sweeps.items()):
        if not name.endswith("_cpu"):
            continue
        task = name[:-4]
        dev = next((v for k, v in sweeps.items() if k.startswith(task + "_cuda") and "16k" not in k), None)
        if dev is None:
            out.append(f"  {task}: no device sweep")
            continue
        keys = sorted(set(s.get("failure_counts") or {}) | set(dev.get("failure_counts") or {}))
        moved = sum(abs((s.get("failure_counts") or {}).get(k, 0) - (dev.get("failure_counts") or {}).get(k, 0))
                    for k in keys) + abs((s.get("successes") or 0) - (dev.get("successes") or 0))
        same = "same counts" if moved == 0 else f"counts differ by {moved} (summed over labels)"
        out.append(f"  {task}: successes {s.get('successes')} cpu, {dev.get('successes')} device; {same}")
    return out


def network_cost(sweeps):
    """The policy network's device sweep (--policy-net, SweepNetKernel) against the expert's at the
    same size (16k worlds, 32k episodes): what the forward pass costs on the device."""
    net, expert = sweeps.get("net_push_cuda_16k"), sweeps.get("push_cuda_16k")
    if not net or not expert:
        return ["== policy network on the device: not run"]
    rate = lambda s: s.get("env_steps_per_s") if isinstance(s.get("env_steps_per_s"), (int, float)) else None  # noqa: E731
    a, b = rate(net), rate(expert)
    if not a or not b:
        return ["== policy network on the device: no rate"]
    return ["== policy network on the device (push, 16k worlds)",
            f"  network {a:.4g} env-steps/s, expert {b:.4g}: {a / b:.2f} of the expert's"]


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def jsonl(path):
    rows = []
    for line in read(path).splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
    return rows


def main():
    work = sys.argv[1]
    out = []
    machine = read(os.path.join(work, "machine.txt")).strip().splitlines()
    out += ["== machine"] + machine[:6]

    out.append("== smoke (one small run of each CUDA path)")
    out += [l for l in read(os.path.join(work, "smoke.txt")).splitlines() if l.startswith("smoke ")]
    for path in sorted(glob.glob(os.path.join(work, "smoke_debug_*.txt"))):
        # the backtrace frames and the sanitizer's errors: where it died
        lines = [l for l in read(path).splitlines() if re.match(r"#\d+\s", l) or "signal" in l.lower()
                 or "Invalid" in l or "ERROR SUMMARY" in l or "CUDA Exception" in l or l.startswith("rc=")]
        out.append(f"-- {os.path.basename(path)}")
        out += ["  " + l[:200] for l in lines[:40]]

    tests = read(os.path.join(work, "cuda_tests.txt"))
    out.append("== CUDA tests")
    for line in tests.splitlines():
        if re.match(r"\[\s+SKIPPED\s+\].* ms\)$", line):
            continue  # listed again at the end
        if re.match(r"\[\s+(PASSED|FAILED|SKIPPED)\s+\]", line) or "tests ran" in line or line.startswith("rc="):
            out.append(line)
        elif FAILURE_LINE.search(line) and not line.lstrip().startswith("note:"):
            out.append("  " + line[:200])

    out.append("== bench (env-steps/s, median of repeats)")
    out.append(f"{'scene':<32}{'backend':<36}{'worlds':>7}{'env-steps/s':>12}{'variant':>19}{'frozen':>7}"
               f"{'overflow':>9}  hash")
    rows = [(name, r) for name in ("bench.jsonl", "bench_global_block.jsonl", "bench_steps_per_launch.jsonl",
                                   "bench_mb8.jsonl", "bench_arms.jsonl") for r in jsonl(os.path.join(work, name))]
    for name, r in rows:
        tag = r["backend"] + ("/mb8" if "mb8" in name else "") + (
            f"/x{r['steps_per_launch']}" if r.get("steps_per_launch", 1) > 1 else "") + (
            "/" + r["step_block_memory"] if r.get("step_block_memory") in ("local", "local+state", "local+state+world", "global") else "")
        out.append(f"{short_scene(r['scene']):<32}{tag:<36}{r['worlds']:>7}{r['env_steps_per_s']:>12.4g}"
                   f"{r.get('step_variant', ''):>19}{r.get('frozen_worlds', -1):>7}{r.get('contact_overflow', -1):>9}"
                   f"  {r.get('state_hash', '')} t={r.get('threads', '')}")
    out += hash_agreement(rows)

    out += roofline([(n, r) for n, r in rows if n != "bench_arms.jsonl"], machine)

    out.append("== sweeps")
    sweeps = {}
    for path in sorted(glob.glob(os.path.join(work, "sweep_*.json"))):
        try:
            s = json.load(open(path))
        except (OSError, ValueError) as e:
            out.append(f"{os.path.basename(path)}: unreadable ({e})")
            continue
        sweeps[os.path.basename(path)[6:-5]] = s
        fails = " ".join(f"{k}={v}" for k, v in (s.get("failure_counts") or {}).items() if v)
        # a key may be null: the CUDA backend does not time the physics apart (physics_seconds)
        num = lambda key, spec: "-" if not isinstance(s.get(key), (int, float)) else format(s[key], spec)  # noqa: E731
        out.append(f"{os.path.basename(path)[6:-5]:<26} "
                   f"episodes {s.get('episodes_in_store')}/{s.get('episodes_planned')} "
                   f"success {num('success_rate', '.3f')} {num('env_steps_per_s', '.4g')} env-steps/s "
                   f"of {num('seconds', '.2f')} s: steps {num('step_seconds', '.2f')} physics "
                   f"{num('physics_seconds', '.2f')} policy {num('policy_seconds', '.2f')}  {fails}")
    for path in sorted(glob.glob(os.path.join(work, "sweep_*.txt"))):
        text = read(path)
        rc = re.findall(r"^rc=(\d+)", text, re.M)
        if rc and rc[-1] != "0":
            out.append(f"{os.path.basename(path)}: rc={rc[-1]}: " + " | ".join(text.strip().splitlines()[-3:])[:300])

    out += sweep_parity(sweeps)
    out += network_cost(sweeps)

    mem = read(os.path.join(work, "memcheck.txt"))
    out.append("== memcheck")
    out += [l[:200] for l in mem.splitlines() if "ERROR SUMMARY" in l or l.startswith("rc=") or "not found" in l
            or "Invalid" in l or l.startswith("not run") or "Error:" in l][:12]

    for path in sorted(glob.glob(os.path.join(work, "ncu_*.txt"))):
        out.append("== " + os.path.basename(path))
        keep = ("Duration", "DRAM Throughput", "Memory Throughput", "Compute (SM) Throughput", "Achieved Occupancy",
                "Theoretical Occupancy", "Registers Per Thread", "Local Memory", "L1/TEX Hit", "L2 Hit",
                "Warp Cycles Per Issued", "Block Limit Registers", "Elapsed Cycles", "SM Frequency", "==PROF==",
                "==ERROR==", "Stall", "dram__", "l1tex__", "gpu__time", "sm__sass", "not found", "not run")
        for line in read(path).splitlines():
            if any(k in line for k in keep):
                out.append("  " + line.strip()[:160])
            elif line.startswith("rc="):
                out.append(line)
        for line in read(path).splitlines():
            if "OPT" in line and "stall" in line.lower():
                out.append("  " + line.strip()[:300])
                break

    # gpu_check.sh's run() lists each command it had no time left for, in order
    skipped = [l for l in read(os.path.join(work, "skipped.txt")).splitlines() if l.startswith("SKIPPED")]
    out.append(f"== skipped, out of time: {len(skipped)} commands")
    out += ["  " + l[len("SKIPPED (out of time): "):][:200] for l in skipped[:20]]

    out.append("== kernel budgets")
    out += read(os.path.join(work, "cuda_kernels.txt")).strip().splitlines()[-4:]
    print("\n".join(out))


if __name__ == "__main__":
    main()
