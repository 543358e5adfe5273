#!/usr/bin/env python3
"""Where the device's step kernel touches local memory, read from its machine code (sm_90 SASS),
and how often, from the same code's line counts on the CPU.

  sass_local.py --compile-commands build/compile_commands.json --coverage-build build-cov \\
                [--nvdisasm PATH] [--blocks 4 8] [--scenes box_push pick_lift stack5] \\
                [--report bench/results/dev-2core/sass_local.md] [--jsonl ...]

1. The `<slide_trees>` step kernels are compiled as the CUDA build compiles them, once per
   `--blocks` value (-DS2R_CUDA_STEP_MIN_BLOCKS; cuda_kernels.py compile_pruned, with line tables),
   and disassembled (nvdisasm -g: each instruction's source file and line, the innermost of what
   was inlined). Every local load and store (LDL / STL) of ControlStepKernel and of the functions
   it calls is listed with its width and its address: *fixed* where it is the stack pointer plus a
   constant ([R1+0x..]: ptxas' spill slots, and the few fields it placed at fixed offsets, the
   Workspace pointers and the staged StateView), *addressed* where a register holds the address
   (the step block's arrays and the step's own small arrays). Generic loads and stores (LD / ST
   without a state space: the world's state, staged in local memory or not, reached through the
   StateView's pointers, and the model's parameters) are counted apart.
2. `--coverage-build` is a CPU build of s2r with gcc's coverage counters and the device's lean
   reads (`cmake -S . -B build-cov -DCMAKE_BUILD_TYPE=Release -DS2R_CUDA=OFF -DS2R_BUILD_TESTS=OFF
   -DS2R_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS="--coverage -DS2R_LEAN_READS"
   -DCMAKE_EXE_LINKER_FLAGS=--coverage && cmake --build build-cov --target s2r`). Its
   `--backend cuda-emulation` runs the same kernel source (cuda/backend_cuda.cu) on the CPU; gcov
   counts how often each source line ran (in every object: the linker keeps one copy of an inline
   function, from whichever object it chose). Two runs of each scene that differ only in their
   control steps, differenced, give each line's executions per env-step.
3. Each instruction's bytes times its line's executions per env-step, summed, estimate the bytes a
   thread moves per env-step. A rough one, high: where nvcc made several copies of a line's code
   (a loop unrolled: the box-box clipper's, the staging copies; a branch duplicated into both
   paths), each copy runs a share of the line's count but is counted at the whole count. For
   box_push and stack5 the non-spill bytes come out about 6 times what valgrind measures on the
   CPU for the step block, state and world block (local_traffic.py; the model's parameters
   aside), so read the figures as where the accesses are and how two builds of the same code
   differ (4 and 8 blocks per SM: the same copies, other spills), not as bytes to divide a
   bandwidth by. Also: a branch nvcc predicated runs what the CPU skipped (low).
"""
import argparse
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cuda_kernels import (compile_pruned, device_function_name, parse_log, short_name,  # noqa: E402
                          write_measured)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WIDTH = {"64": 8, "128": 16, "U8": 1, "S8": 1, "U16": 2, "S16": 2}
KERNEL = "ControlStepKernel<slide_trees>"


def find_nvdisasm(given):
    """nvdisasm: --nvdisasm, $NVDISASM, the PATH, the CUDA toolkit's bin, or the PyPI package
    nvidia-cuda-nvdisasm's (the toolkit on the dev machine has none)."""
    for path in (given, os.environ.get("NVDISASM"), shutil.which("nvdisasm"), "/usr/local/cuda/bin/nvdisasm"):
        if path and os.access(path, os.X_OK):
            return path
    try:
        import nvidia
        for base in nvidia.__path__:
            found = glob.glob(os.path.join(base, "*", "bin", "nvdisasm"))
            if found:
                return found[0]
    except ImportError:
        pass
    sys.exit("no nvdisasm: pass --nvdisasm, set NVDISASM, or `pip install nvidia-cuda-nvdisasm`")


def memory_ops(sass):
    """[(function, chain, op, bytes, kind)] for every local and generic load and store in the SASS
    text (nvdisasm -gi): op 'load' / 'store', kind 'fixed' / 'addressed' (local, LDL / STL) or
    'generic' (LD / ST); chain: the instruction's source lines, 'file:line', innermost first, each
    inlined at the next; function: the kernel's short name or the called function's."""
    ops = []
    function, chain, fresh = None, [], True
    for line in sass.splitlines():
        m = re.match(r"^\$?([\w$.]+):\s*$", line)
        if m and not line.startswith("."):
            name = m.group(1).split("$")[-1]
            function = short_name(name) if "Kernel" in name else device_function_name(name)
            continue
        m = re.search(r'//## File "([^"]+)", line (\d+)', line)
        if m:
            if fresh:  # the first of a run of annotations: the innermost location
                chain, fresh = [], False
            chain.append(f"{os.path.relpath(os.path.realpath(m.group(1)), ROOT)}:{m.group(2)}")
            continue
        fresh = True
        m = re.search(r"\b(LDL|STL|LD|ST)((?:\.[A-Z0-9]+)*)\s+([^;]*);", line)
        if not m or function is None:
            continue
        op, mods, operands = m.groups()
        suffixes = mods.split(".")[1:]
        if op in ("LD", "ST") and not any(s == "E" for s in suffixes):
            continue
        width = 4
        for s in suffixes:
            width = WIDTH.get(s, width)
        if op in ("LDL", "STL"):
            kind = "fixed" if re.search(r"\[R1(?:\+0x[0-9a-f]+|\+\d+)?\]", operands) else "addressed"
        else:
            kind = "generic"
        ops.append((function, tuple(chain), "load" if op.startswith("LD") else "store", width, kind))
    return ops


def gcov_lines(build):
    """The coverage build's counts since its counters were last cleared (gcov's JSON of every .gcda:
    an inline function the linker kept from another object than the emulated backend's counts
    there): {'file:line': executions} and {(file, first line, last line): calls} per function
    (template instances summed)."""
    gcda = sorted(glob.glob(os.path.join(build, "CMakeFiles", "**", "*.gcda"), recursive=True))
    if not any(g.endswith("backend_cuda_emulation.cc.gcda") for g in gcda):
        sys.exit(f"{build}: no backend_cuda_emulation.cc.gcda: not a --coverage build, or nothing ran")
    lines, calls = collections.Counter(), collections.Counter()
    for one in gcda:
        r = subprocess.run(["gcov", "--json-format", "--stdout", one], capture_output=True, text=True,
                           cwd=os.path.dirname(one))
        if r.returncode != 0:
            sys.exit(f"gcov failed on {one}:\n{r.stderr[-2000:]}")
        for doc in r.stdout.splitlines():
            if not doc.strip():
                continue
            for f in json.loads(doc)["files"]:
                path = f["file"] if os.path.isabs(f["file"]) else os.path.join(os.path.dirname(one), f["file"])
                rel = os.path.relpath(os.path.realpath(path), ROOT)
                if rel.startswith(".."):
                    continue  # system headers
                for ln in f["lines"]:
                    lines[f"{rel}:{ln['line_number']}"] += ln["count"]
                for fn in f.get("functions", []):
                    calls[(rel, fn["start_line"], fn["end_line"])] += fn["execution_count"]
    return lines, calls


def counts_per_env_step(build, scene, worlds, steps):
    """gcov_lines' two maps per env-step: two bench runs of the emulated backend, `steps` and
    2 x `steps` control steps, differenced (reset, loading and the first steps cancel)."""
    runs = []
    for n in (steps, 2 * steps):
        for old in glob.glob(os.path.join(build, "CMakeFiles", "**", "*.gcda"), recursive=True):
            os.remove(old)
        # one thread: gcov's counters are not atomic, and racing threads lose counts
        subprocess.run([os.path.join(build, "s2r"), "bench", "--scene", f"builtin:{scene}", "--backend",
                        "cuda-emulation", "--worlds", str(worlds), "--control-steps", str(n), "--repeats", "1",
                        "--threads", "1"], check=True, capture_output=True, text=True,
                       env=dict(os.environ, S2R_CUDA_EMULATION_WORKERS="1"))
        runs.append(gcov_lines(build))
    env_steps = worlds * steps
    return tuple({k: max(0, later[k] - earlier.get(k, 0)) / env_steps for k in later}
                 for earlier, later in zip(runs[0], runs[1]))


class Executions:
    """How often an instruction runs per env-step, from its inline chain: the outermost line's count,
    times, for each line inlined into it, that line's runs per call of its function (1 for a line
    that runs once a call, more in a loop), each call site's runs bounded by the function's calls.
    gcov counts a helper's line (a Vec3 operator) over every caller; the chain gives the one this
    instruction came from."""

    def __init__(self, lines, calls):
        self.lines = lines
        self.by_file = collections.defaultdict(list)
        for (f, first, last), n in calls.items():
            self.by_file[f].append((last - first, first, last, n))
        for ranges in self.by_file.values():
            ranges.sort()  # the innermost function first

    def calls_at(self, loc):
        f, line = loc.rsplit(":", 1)
        for _, first, last, n in self.by_file.get(f, []):
            if first <= int(line) <= last:
                return n
        return None

    def __call__(self, chain):
        if not chain or chain[-1] not in self.lines:
            return None
        runs = self.lines[chain[-1]]
        for loc in reversed(chain[:-1]):  # outward in
            n = self.calls_at(loc)
            if not n or loc not in self.lines:
                return 0.0 if n == 0 else None
            # the call site's line may run more often than the call (`if (c) f();` counts the
            # test): the function's calls from all sites bound the calls from this one
            runs = min(runs, n) * self.lines[loc] / n
        return runs


def estimate(ops, executions):
    """Bytes per env-step by (function, kind, op), and by (kind, function, inline chain's first three
    lines) for the fixed and generic kinds."""
    by_kind = collections.Counter()
    by_line = collections.Counter()
    unseen = collections.Counter()
    for function, chain, op, width, kind in ops:
        runs = executions(chain)
        if runs is None:
            unseen[kind] += width
            continue
        b = width * runs
        by_kind[(function, kind, op)] += b
        if kind != "addressed":
            by_line[(kind, function, " < ".join(chain[:3]))] += b
    return by_kind, by_line, unseen


def top_lines(by_line, count=20):
    """estimate's by_line as [kind, function, chain, bytes] rows, the `count` largest of each kind,
    PhysicsStep's and its calls' only (the kernel's own staging lines cannot be weighted)."""
    rows = []
    for kind in ("fixed", "generic"):
        mine = [(k, f, w, round(v)) for (k, f, w), v in by_line.most_common()
                if k == kind and round(v) > 0 and not f.startswith("ControlStepKernel")]
        rows += [list(t) for t in mine[:count]]
    return rows


def static_bytes(ops):
    c = collections.Counter()
    for function, where, op, width, kind in ops:
        c[(kind, op)] += width
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compile-commands", required=True)
    ap.add_argument("--coverage-build", required=True)
    ap.add_argument("--nvdisasm")
    ap.add_argument("--blocks", type=int, nargs="+", default=[4, 8])
    ap.add_argument("--scenes", nargs="+", default=["box_push", "pick_lift", "stack5"])
    ap.add_argument("--worlds", type=int, default=8)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--report")
    ap.add_argument("--jsonl")
    a = ap.parse_args()
    nvdisasm = find_nvdisasm(a.nvdisasm)
    builds = {}
    for blocks in a.blocks:
        with tempfile.TemporaryDirectory() as tmp:
            log, cubin = compile_pruned(a.compile_commands, blocks, tmp, lineinfo=True)
            r = subprocess.run([nvdisasm, "-c", "-gi", cubin], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"nvdisasm failed ({r.returncode}):\n{r.stderr[-2000:]}")
        ops = memory_ops(r.stdout)
        kernel = parse_log(log)[KERNEL]
        # the kernel's section and its calls' (ptxas compiles a kept call once per kernel; the
        # step kernel's calls come after it in its own sections, named kernel$function)
        mine = [o for o in ops if o[0] == KERNEL or o[0] in {device_function_name(f) for f in kernel["calls"]}]
        builds[blocks] = (kernel, mine)
    rows = []
    for scene in a.scenes:
        executions = Executions(*counts_per_env_step(a.coverage_build, scene, a.worlds, a.steps))
        for blocks, (kernel, ops) in builds.items():
            by_kind, by_line, unseen = estimate(ops, executions)
            rows.append({"scene": scene, "blocks": blocks, "registers": kernel["regs"],
                         "bytes_per_env_step": {f"{fn}|{k}_{o}": round(v) for (fn, k, o), v in sorted(by_kind.items())},
                         "top_lines": top_lines(by_line),
                         "static_bytes": {f"{k}_{o}": v for (k, o), v in sorted(static_bytes(ops).items())},
                         "static_bytes_not_run": dict(unseen)})
    write_measured(a, rows, report(a, builds, rows))
    return 0


def kb(x):
    return f"{x / 1000:.1f}"


def report(a, builds, rows):
    lines = ["# Local memory in the device's step, from its machine code (sm_90)", "",
             "Generated by `bench/sass_local.py` (its docstring says how): `ControlStepKernel<slide_trees>` and "
             "the functions it keeps as calls, compiled as the CUDA build does for each number of blocks per SM "
             "and disassembled (nvdisasm, line tables); every local load and store weighted by how often its "
             "source line runs per env-step in the emulated CUDA backend on the CPU (gcov, the lean reads the "
             f"device takes; {a.worlds} worlds, {a.steps} and {2 * a.steps} control steps differenced). "
             "*Fixed*: at the stack pointer plus a constant (ptxas' spill slots, and the arrays it placed at "
             "constant offsets where it unrolled their loops, as the box-box clipper's polygon); *addressed*: "
             "through a register (the step block, the step's small arrays); *generic*: loads and stores "
             "without a state space (the state through the StateView's pointers, staged in local memory for "
             "these scenes, the step block through the Workspace's, and the model's parameters). Bytes per "
             "thread, **a rough estimate and a high one**: code nvcc copied (unrolled loops, duplicated "
             "branches) counts each copy at its line's whole count; box_push's and stack5's non-spill bytes "
             "come out about 6 times valgrind's measure on the CPU (local_traffic.md). Read it for where "
             "the accesses are and for the difference between the two builds of the same code (4 and 8 "
             "blocks per SM), not as bytes to divide a bandwidth by.", "",
             "## Static bytes (instructions, not executions)", "",
             "| blocks per SM | registers | ptxas spills: kernel + calls (B) | fixed loads / stores (B) | "
             "addressed loads / stores (B) | generic loads / stores (B) |", "|---:|---:|---:|---:|---:|---:|"]
    for blocks, (kernel, ops) in builds.items():
        s = static_bytes(ops)
        lines.append(f"| {blocks} | {kernel['regs']} | {kernel['spill_stores'] + kernel['spill_loads']} | "
                     f"{s[('fixed', 'load')]} / {s[('fixed', 'store')]} | "
                     f"{s[('addressed', 'load')]} / {s[('addressed', 'store')]} | "
                     f"{s[('generic', 'load')]} / {s[('generic', 'store')]} |")
    lines += ["", "## Bytes per env-step in the physics step (estimate, KB per thread)", "",
              "`PhysicsStep<slide_trees>` (a call ptxas keeps, run twice per control step in these scenes) and "
              "box-box's closest pair, which it calls. The kernel around them (staging the state and world block "
              "in and out, the control step's actions) is left out: its copy loops are macro-expanded and "
              "unrolled, so one source line stands for many instructions and the line counts cannot weight them "
              "(the traffic model in cuda_kernels.md counts those bytes).", "",
              "| scene | blocks per SM | fixed loads | fixed stores | addressed loads | addressed stores | "
              "generic loads | generic stores |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        step = collections.Counter()
        for key, v in r["bytes_per_env_step"].items():
            function, kind = key.split("|")
            if not function.startswith("ControlStepKernel"):
                step[kind] += v
        lines.append(f"| {r['scene']} | {r['blocks']} | " + " | ".join(
            kb(step[k]) for k in ("fixed_load", "fixed_store", "addressed_load", "addressed_store",
                                  "generic_load", "generic_store")) + " |")
    constant = "the constant-offset bytes go (spill slots, unrolled arrays)"
    for kind, what, blocks in (("fixed", constant, 8), ("fixed", constant, 4),
                               ("generic", "the generic loads and stores go (state, step block through pointers, "
                                "model parameters)", 4)):
        for r in rows:
            if r["scene"] != a.scenes[0] or r["blocks"] != blocks:
                continue
            lines += ["", f"### Where {what}: {r['scene']}, {r['blocks']} blocks per SM", "",
                      "| function | source line (inlined at ...) | bytes per env-step |", "|---|---|---:|"]
            for k, f, w, v in [t for t in r["top_lines"] if t[0] == kind][:12]:
                lines.append(f"| {f} | {w} | {v:,} |")
    return lines


if __name__ == "__main__":
    sys.exit(main())
