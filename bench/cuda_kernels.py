#!/usr/bin/env python3
"""Every CUDA kernel's footprint from ptxas, its theoretical occupancy on sm_90, budgets, and a
global-memory traffic model per env-step with the H200 roofline bound that follows.

  cuda_kernels.py --log build/cuda_resource_usage.txt --budgets bench/cuda_kernel_budgets.txt
      checks each kernel against its budget (exit 1 naming the kernel and the number over it; a
      kernel without a budget line is an error too): the cuda_kernel_budgets ctest
  cuda_kernels.py --log ... --budgets ... --s2r build/s2r --report bench/results/dev-2core/cuda_kernels.md
      also writes the report: the footprint table and, per bench scene, the bytes-per-env-step model
  cuda_kernels.py --compile-commands build/compile_commands.json --min-blocks 8 \
                  --budgets bench/cuda_kernel_budgets_8blocks.txt
      the bench scenes' step kernels (<slide_trees>) as a build with -DS2R_CUDA_STEP_MIN_BLOCKS=8
      would compile them: the PTX of the build's command with that define, pruned to those kernels
      and what they call, through ptxas -v (about a minute, where the whole source takes three);
      checked against the budgets file like the build's log: the cuda_kernel_budgets_8blocks ctest

The log is what ptxas printed with -Xptxas -v during the normal build (cuda/resource_log.sh keeps
it). Occupancy follows the CUDA occupancy rules for compute capability 9.0: 65,536 registers per
SM allocated per warp in units of 256, at most 64 resident warps and 32 blocks per SM, 128-thread
blocks (cuda/backend_cuda.cu kThreadsPerBlock). Local memory (the stack frame) does not limit
occupancy, but every byte of it a thread touches is memory traffic once L1 (256 KB per SM, shared
with the resident threads) cannot hold it.
"""
import argparse
import json
import math
import re
import subprocess
import sys

SM90 = {"regs_per_sm": 65536, "reg_unit": 256, "max_warps": 64, "max_blocks": 32, "smem_per_sm": 233472,
        "sms": 132}
BLOCK = 128
HBM_BYTES_PER_S = 4.8e12  # H200
FP32_FLOPS = 67e12


def parse_log(text):
    """{kernel: {regs, stack, spill_stores, spill_loads, smem, calls}} for every __global__ entry.
    ptxas lists, after an entry's own lines, the device functions it kept as calls (compiled for
    that entry: PhysicsStep, the box-box closest pair, ...), each with its own spills; `calls` maps
    each to its (spill stores, spill loads), and spill_stores / spill_loads add them to the
    entry's: they run in its threads, in the frame ptxas reserved for it."""
    kernels = {}
    current = None  # the entry whose own lines come next
    owner = None  # the entry whose called functions' lines come next
    function = None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '([^']+)' for 'sm_(\d+)'", line)
        if m:
            current = short_name(m.group(1))
            owner = None
            kernels[current] = {"regs": 0, "stack": 0, "spill_stores": 0, "spill_loads": 0, "smem": 0,
                                "arch": "sm_" + m.group(2), "calls": {}}
            continue
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            function = m.group(1)
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and current is not None and kernels[current]["stack"] == 0 and kernels[current]["regs"] == 0:
            kernels[current]["stack"] = int(m.group(1))
            kernels[current]["spill_stores"] = int(m.group(2))
            kernels[current]["spill_loads"] = int(m.group(3))
            continue
        if m and owner is not None and function is not None:
            stores, loads = int(m.group(2)), int(m.group(3))
            kernels[owner]["calls"][function] = (stores, loads)
            kernels[owner]["spill_stores"] += stores
            kernels[owner]["spill_loads"] += loads
            function = None
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and current is not None:
            kernels[current]["regs"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            kernels[current]["smem"] = int(s.group(1)) if s else 0
            owner, current = current, None  # the lines after belong to the functions it calls
    return kernels


# kernels/step_features.h's bits, for the names of the step variants
STEP_FEATURES = [(1, "joint_blocks"), (2, "slide_trees"), (4, "trees"), (8, "convex")]
STEP_ALL = 15


def variant_name(mask):
    """ControlStepKernel<2u> -> 'slide_trees', <6u> -> 'slide_trees+trees', <15u> -> 'all'."""
    if mask == STEP_ALL:
        return "all"
    return "+".join(n for bit, n in STEP_FEATURES if mask & bit) or "none"


def short_name(mangled):
    """The kernel's own identifier from its mangled name (..17ControlStepKernelENS_..): the
    length-prefixed name that ends in 'Kernel', with a step variant's template argument
    (..17ControlStepKernelILj2EEEv..) written ControlStepKernel<slide_trees>, and a size's
    (..17ResetWorldsKernelILl32768EEEv..) ResetWorldsKernel<32768>."""
    found = []
    i = 0
    while i < len(mangled):
        m = re.match(r"\d+", mangled[i:])
        if m:
            n = int(m.group(0))
            start = i + len(m.group(0))
            name = mangled[start:start + n]
            if len(name) == n and re.fullmatch(r"[A-Za-z_]\w*Kernel", name):
                t = re.match(r"IL([jl])(\d+)E", mangled[start + n:])
                # an unsigned argument is a step variant's mask, a long one a size (ResetWorldsKernel<32768>)
                arg = (variant_name(int(t.group(2))) if t.group(1) == "j" else t.group(2)) if t else None
                found.append(name + (f"<{arg}>" if arg else ""))
            i += len(m.group(0))
        else:
            i += 1
    return min(found, key=len) if found else mangled


def occupancy(regs, smem=0, block=BLOCK):
    warps_per_block = block // 32
    regs_per_warp = math.ceil(max(regs, 1) * 32 / SM90["reg_unit"]) * SM90["reg_unit"]
    blocks_regs = (SM90["regs_per_sm"] // regs_per_warp) // warps_per_block
    blocks_warps = SM90["max_warps"] // warps_per_block
    blocks_smem = SM90["smem_per_sm"] // smem if smem > 0 else SM90["max_blocks"]
    blocks = min(blocks_regs, blocks_warps, SM90["max_blocks"], blocks_smem)
    warps = blocks * warps_per_block
    return warps, warps / SM90["max_warps"]


def parse_budgets(path):
    """kernel -> {regs, stack, spills} maxima and local_step_block; lines
    'Kernel regs<=N stack<=N spills<=N [local_step_block=B]'. local_step_block: the kernel's frame
    holds the world's step block in local memory, B bytes (S2R_CUDA_LOCAL_STEP_BYTES,
    cuda/backend_cuda.cu), and `stack` budgets the rest of the frame."""
    budgets = {}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            limits = {}
            for p in parts[1:]:
                m = re.fullmatch(r"(regs|stack|spills)<=(\d+)|(local_step_block)=(\d+)", p)
                if not m:
                    sys.exit(f"{path}:{lineno}: cannot read '{p}' (expected regs<=N, stack<=N, spills<=N or "
                             "local_step_block=B)")
                if m.group(1):
                    limits[m.group(1)] = int(m.group(2))
                else:
                    limits[m.group(3)] = int(m.group(4))
            budgets[parts[0]] = limits
    return budgets


def check(kernels, budgets):
    errors = []
    for name, k in sorted(kernels.items()):
        b = budgets.get(name)
        if b is None:
            errors.append(f"{name}: no budget in the budgets file (add a line for every kernel)")
            continue
        if "regs" in b and k["regs"] > b["regs"]:
            errors.append(f"{name}: {k['regs']} registers, budget {b['regs']}")
        block = b.get("local_step_block", 0)
        if k["stack"] < block:
            errors.append(f"{name}: a {k['stack']} B stack frame cannot hold its {block} B local step block "
                          "(built with another S2R_CUDA_LOCAL_STEP_BYTES? the budget line names the size)")
        elif "stack" in b and k["stack"] - block > b["stack"]:
            errors.append(f"{name}: {k['stack'] - block} bytes of stack frame"
                          + (f" besides its {block} B local step block" if block else "") + f", budget {b['stack']}")
        if "spills" in b and k["spill_stores"] + k["spill_loads"] > b["spills"]:
            errors.append(f"{name}: {k['spill_stores'] + k['spill_loads']} bytes of spills ({call_spills(k)} in the "
                          f"functions it calls), budget {b['spills']}")
    for name in budgets:
        if name not in kernels:
            errors.append(f"{name}: has a budget but ptxas compiled no such kernel (renamed?)")
    return errors


def scene_sizes(s2r, scene):
    out = subprocess.run([s2r, "bench", "--scene", f"builtin:{scene}", "--worlds", "1", "--control-steps", "1",
                          "--repeats", "1", "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def local_room(budgets):
    """Step variant -> bytes of local memory its step kernel reserves for the step block (the
    budgets file's local_step_block of each ControlStepKernel<variant>): step_block_place's `room`."""
    return {name[name.index("<") + 1:-1]: b.get("local_step_block", 0) for name, b in budgets.items()
            if name.startswith("ControlStepKernel<")}


def measure_args(doc):
    """The command line of the scripts that measure a CPU build's step (issue_bound.py,
    local_traffic.py): --s2r, --budgets, --report, --jsonl; returns the arguments and local_room."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--s2r", required=True)
    ap.add_argument("--budgets", required=True, help="bench/cuda_kernel_budgets.txt (where each scene's step block goes)")
    ap.add_argument("--report", help="markdown report (stdout without it)")
    ap.add_argument("--jsonl", help="raw rows")
    a = ap.parse_args()
    return a, local_room(parse_budgets(a.budgets))


def write_measured(a, rows, lines):
    """The end of the measuring scripts (those two, sass_local.py): the rows to --jsonl, the report's
    lines to --report and stdout."""
    if a.jsonl:
        with open(a.jsonl, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    text = "\n".join(lines) + "\n"
    if a.report:
        with open(a.report, "w") as f:
            f.write(text)
    print(text)


def step_block_place(j, room):
    """Where the CUDA backend keeps the scene's step block (cuda/backend_cuda.cu
    StepBlockInLocalMemory, StateInLocalMemory): 'local+state+world', 'local+state', 'local' or
    'global'."""
    step = j["step_scratch_bytes"]
    if step > room.get(j["step_variant"], 0):
        return "global"
    staged = (step + 63) // 64 * 64 + j["staged_state_bytes"]
    if staged > room[j["step_variant"]]:
        return "local"
    return "local+state+world" if staged + j["world_scratch_bytes"] <= room[j["step_variant"]] else "local+state"


def traffic_model(j, place="global", per_launch=1):
    """Bytes of global memory per env-step (one control step of one world) for ControlStepKernel, or
    for ControlStepsKernel with `per_launch` control steps per launch (Engine::StepMany)."""
    spc = j["physics_steps_per_control"]
    state = j["state_bytes_per_world"]
    world_scratch = j["world_scratch_bytes"]
    actions = 4 * 8  # a few actuators' float each
    # compulsory: the state read and written once per control step, the world block read once
    compulsory = 2 * state + world_scratch + actions
    # as the kernel is now: the state is read and written through global memory in every physics
    # step (bodies loaded and stored, contacts rewritten) and the step block (contact rows,
    # manifolds, solver bodies: local memory or a per-world block of global memory on CUDA) written
    # and read at least once per physics step. The stack frame (local memory) is reserved for the deepest path; what
    # a bench scene touches of it per step (the narrow phase's candidate arrays, a few hundred
    # bytes) is left out (see the local-memory table)
    # a state staged in local memory for the launch (place 'local+state') goes through global
    # memory once each way per control step; the steps then read and write the local copy, like
    # the local step block (counted as traffic: neither fits L1 at full occupancy). The world
    # block is read in every physics step where it stays in global memory; staged ('+world'), it
    # is read and written once per launch instead, and its reads count as local traffic
    step_scratch = j["step_scratch_bytes"]
    staged = place.startswith("local+state")
    staged_world = place == "local+state+world"
    # staged, the state and the world block cross global memory once each way per launch: per env-step,
    # that over the launch's control steps
    state_traffic = 2 * state / per_launch if staged else 2 * state * spc
    world_traffic = 2 * world_scratch / per_launch if staged_world else spc * world_scratch
    current = 2 * spc * step_scratch + (2 * spc * state if staged else 0) + state_traffic \
        + (spc * world_scratch if staged_world else 0) + world_traffic + actions
    return compulsory, round(current)


def sweep_row_bytes(s2r, task):
    """Bytes of the rows a sweep of `task` logs per env-step (steps/state, obs, action: what the
    sweep kernel writes to device memory each control step), from a 2-episode sweep's store
    metadata, and the task's scene (its config's `scene:`)."""
    import os
    import tempfile
    config = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs", "sweeps", task + ".yaml")
    scene = next(line.split(":", 1)[1].strip() for line in open(config) if line.startswith("scene:"))
    itemsize = {"float32": 4, "float64": 8, "int32": 4, "int64": 8}
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "s.zarr")
        subprocess.run([s2r, "sweep", f"builtin:{task}", "--out", store, "--episodes", "2", "--worlds", "2",
                        "--threads", "1"], check=True, capture_output=True)
        for name in ("state", "obs", "action"):
            meta = json.load(open(os.path.join(store, "steps", name, "zarr.json")))
            rows[name] = math.prod(meta["shape"][1:]) * itemsize[meta["data_type"]]
    return scene, rows


def sweep_traffic(j, rows, per_pass):
    """(logged, global, local) bytes per env-step of SweepStepKernel with everything staged
    (local+state+world) and `per_pass` control steps per pass: the rows written every control step;
    the state, the episode record and the world block read once per pass and the state and record
    written once (the world block only where the pass rebuilt it: left out); in local memory, the
    step block written and read in each physics step, the staged state and world block read in each,
    the record read and written each control step."""
    spc = j["physics_steps_per_control"]
    state, record, world = j["state_bytes_per_world"], j["sweep_record_bytes"], j["world_scratch_bytes"]
    logged = sum(rows.values())
    global_bytes = logged + (2 * state + 2 * record + world) / per_pass
    local = 2 * spc * j["step_scratch_bytes"] + 2 * spc * state + spc * world + 2 * record
    return logged, round(global_bytes), round(local)


def policy_sweep_traffic(j, rows, action_bytes):
    """Global bytes per env-step of the sweep when a policy process acts (--policy): one launch per
    control step (SweepActObserveKernel, since stop 45; the observe kernel runs once at the start),
    staging the state, record and world block in and the state and record out, reading the world's
    actions and writing its next policy row; the rows logged as with the expert."""
    state, record, world = j["state_bytes_per_world"], j["sweep_record_bytes"], j["world_scratch_bytes"]
    return sum(rows.values()) + (2 * state + 2 * record + world) + j["policy_row_bytes"] + action_bytes


def build_command(compile_commands, source="cuda/backend_cuda.cu"):
    """The build's nvcc command for `source` without its output, -c, --generate-code and -Xptxas
    flags, and the folder it runs in."""
    import shlex
    entries = json.load(open(compile_commands))
    entry = next(e for e in entries if e["file"].endswith(source))
    args = shlex.split(entry["command"])
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-c"):
            skip = a == "-o"
            continue
        if a.startswith("--generate-code") or a.startswith("-Xptxas"):
            continue
        out.append(a)
    return out, entry["directory"]


def prune_ptx(ptx, keep_entry):
    """The PTX text with only the entries whose mangled name keep_entry accepts and the functions
    they reach through calls (their prototypes too); externs and data are kept as they are."""
    items = []  # (name or None, "entry" | "func" | None, has a body, text)
    depth, buf = 0, []
    for line in ptx.split("\n"):
        buf.append(line)
        depth += line.count("{") - line.count("}")
        stripped = line.strip()
        if depth == 0 and (not stripped or stripped.endswith("}") or stripped.endswith(";")):
            text = "\n".join(buf)
            buf = []
            m = re.search(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)?\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)",
                          text, re.M)
            items.append((m.group(2) if m else None, m.group(1) if m else None, "{" in text, text))
    if buf:
        items.append((None, None, False, "\n".join(buf)))
    bodies = {name: text for name, kind, body, text in items if name and body}
    keep = {name for name, kind, body, text in items if kind == "entry" and body and keep_entry(name)}
    todo = list(keep)
    while todo:
        for callee in re.findall(r"\bcall(?:\.uni)?\s+(?:\([^)]*\),\s*)?([\w$]+)", bodies[todo.pop()]):
            if callee in bodies and callee not in keep:
                keep.add(callee)
                todo.append(callee)
    # a prototype of a function whose body is left out would be an unresolved extern for ptxas
    return "\n".join(text for name, kind, body, text in items
                     if not name or name in keep or (not body and ".extern" in text)), keep


def compile_pruned(compile_commands, blocks, tmp, variant=2, lineinfo=False):
    """The step kernels of `variant` (kernels/step_features.h's mask; 2: <slide_trees>) compiled
    with -DS2R_CUDA_STEP_MIN_BLOCKS=`blocks` (None: the source's default), to a cubin in `tmp`:
    the build's nvcc command to PTX, pruned to those kernels and what they call, then ptxas -v
    (with line tables where `lineinfo`). Returns ptxas' -v text and the cubin's path."""
    import os
    args, directory = build_command(compile_commands)
    args = [a for a in args if not a.startswith("-DS2R_CUDA_STEP_MIN_BLOCKS")]
    defines = [f"-DS2R_CUDA_STEP_MIN_BLOCKS={blocks}"] if blocks is not None else []
    lines = ["-lineinfo"] if lineinfo else []
    nvcc = args[0]
    ptxas = os.path.join(os.path.dirname(nvcc), "ptxas")
    ptx = os.path.join(tmp, "k.ptx")
    r = subprocess.run([nvcc, "-arch=compute_90", "-ptx"] + lines + defines + args[1:] + ["-o", ptx],
                       cwd=directory, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"nvcc -ptx failed ({r.returncode}):\n{r.stderr[-4000:]}")
    pruned, kept = prune_ptx(open(ptx).read(), lambda name: re.search(rf"KernelILj{variant}E", name))
    if not any("Kernel" in k for k in kept):
        sys.exit(f"no step kernel of variant {variant} in the PTX of {compile_commands}'s CUDA source")
    with open(ptx, "w") as f:
        f.write(pruned)
    cubin = os.path.join(tmp, "k.cubin")
    r = subprocess.run([ptxas, "-arch=sm_90", "-O3", "-v"] + lines + [ptx, "-o", cubin], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"ptxas failed ({r.returncode}):\n{r.stderr[-4000:]}")
    return r.stdout + r.stderr, cubin


def ptxas_at_min_blocks(compile_commands, blocks, variant=2):
    """ptxas -v's text for the step kernels of `variant` compiled with
    -DS2R_CUDA_STEP_MIN_BLOCKS=`blocks` (compile_pruned)."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        return compile_pruned(compile_commands, blocks, tmp, variant)[0]


def device_function_name(mangled):
    """_ZN3s2r11PhysicsStepILj2EE.. -> PhysicsStep<slide_trees>, _ZN3s2r13CollideConvexINS_7ContactEE..
    -> CollideConvex<Contact>, _ZN3s2r14NormalQuantileEd -> NormalQuantile."""
    rest = re.sub(r"^_ZN?3s2r", "", mangled)
    n = re.match(r"\d+", rest)
    if not n:
        return mangled
    name = rest[len(n.group(0)):len(n.group(0)) + int(n.group(0))]
    after = rest[len(n.group(0)) + int(n.group(0)):]
    t = re.match(r"ILj(\d+)E", after)
    if t:
        return f"{name}<{variant_name(int(t.group(1)))}>"
    t = re.match(r"INS_(\d+)", after)
    if t:
        return f"{name}<{after[len(t.group(0)):len(t.group(0)) + int(t.group(1))]}>"
    return name


def ptx_local_memory(compile_commands, source="cuda/backend_cuda.cu"):
    """Regenerates the PTX of the CUDA source with the build's flags and returns (depots, lines):
    each function's local depot (bytes) and the source lines with the most local loads/stores."""
    import collections
    import os
    import tempfile
    out, directory = build_command(compile_commands, source)
    with tempfile.TemporaryDirectory() as tmp:
        ptx = os.path.join(tmp, "k.ptx")
        subprocess.run(out[:1] + ["-arch=compute_90", "-ptx"] + out[1:] + ["-o", ptx], check=True, cwd=directory,
                       capture_output=True)
        lines = open(ptx).read().split("\n")
    files, depots, hist = {}, {}, collections.Counter()
    for line in lines:  # the .file table stands at the end of the PTX
        m = re.match(r'\s*\.file\s+(\d+)\s+"([^"]+)"', line)
        if m:
            files[m.group(1)] = "/".join(m.group(2).split("/")[-2:])
    func, loc = None, None
    for line in lines:
        m = re.match(r"\.(?:visible\s+)?(?:func|entry)\s.*?(\w+)\(", line)
        if m:
            if "Kernel" in m.group(1):
                func = short_name(m.group(1))
            else:
                func = device_function_name(m.group(1))
        m = re.match(r"\s*\.local\s.*__local_depot\d+\[(\d+)\]", line)
        if m:
            depots[func] = int(m.group(1))
        m = re.match(r"\s*\.loc\s+(\d+)\s+(\d+)", line)
        if m:
            loc = f"{files.get(m.group(1), m.group(1))}:{m.group(2)}"
        if "st.local" in line or "ld.local" in line:
            hist[loc] += 1
    return depots, hist.most_common(12)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log", help="ptxas' -v output of the build (cuda/resource_log.sh)")
    ap.add_argument("--budgets", required=True)
    ap.add_argument("--s2r", help="the s2r binary, for the per-scene sizes of the traffic model")
    ap.add_argument("--report", help="write the markdown report here")
    ap.add_argument("--compile-commands", help="build/compile_commands.json: regenerate the PTX with the build's "
                    "flags and report where the stack frame comes from")
    ap.add_argument("--min-blocks", type=int, help="with --compile-commands and without --log: compile the "
                    "<slide_trees> step kernels for this many blocks per SM and check those")
    a = ap.parse_args()
    if a.min_blocks is not None:
        if a.log or a.report or not a.compile_commands:
            ap.error("--min-blocks takes --compile-commands and --budgets, without --log or --report")
        text = ptxas_at_min_blocks(a.compile_commands, a.min_blocks)
        a.log = f"ptxas of the <slide_trees> kernels at {a.min_blocks} blocks per SM"
    elif not a.log:
        ap.error("--log is required (or --min-blocks with --compile-commands)")
    else:
        try:
            text = open(a.log).read()
        except OSError as e:
            sys.exit(f"{a.log}: {e.strerror} (build the CUDA backend first)")
    kernels = parse_log(text)
    if not kernels:
        sys.exit(f"{a.log}: no 'Compiling entry function' lines: was the CUDA source built with -Xptxas -v?")
    budgets = parse_budgets(a.budgets)
    errors = check(kernels, budgets)
    for name, k in sorted(kernels.items()):
        warps, occ = occupancy(k["regs"], k["smem"])
        print(f"{name:24s} {k['arch']}  {k['regs']:3d} regs  {k['stack']:6d} B stack  "
              f"{k['spill_stores'] + k['spill_loads']:5d} B spills  {k['smem']:6d} B smem  "
              f"occupancy {warps}/64 warps ({100 * occ:.1f} %)")
    if a.report:
        write_report(a, kernels, budgets)
    if errors:
        print("over budget:\n  " + "\n  ".join(errors), file=sys.stderr)
        return 1
    print(f"{len(kernels)} kernels within their budgets ({a.budgets})")
    return 0


def call_spills(k):
    """Bytes of spill stores and loads in the device functions a kernel calls (parse_log's calls)."""
    return sum(stores + loads for stores, loads in k["calls"].values())


def write_report(a, kernels, budgets):
    lines = ["# CUDA kernels: footprint, occupancy and traffic (sm_90, H200)", "",
             "Generated by `bench/cuda_kernels.py` from ptxas' `-Xptxas -v` output of the normal build "
             "(`build/cuda_resource_usage.txt`, kept by `cuda/resource_log.sh`); budgets in "
             "`bench/cuda_kernel_budgets.txt`, checked by the `cuda_kernel_budgets` ctest. Occupancy: "
             "128-thread blocks, 65,536 registers per SM allocated per warp in units of 256, at most 64 warps "
             "and 32 blocks per SM (compute capability 9.0).", "",
             "*Stack frame* is ptxas' number; *of it, step block* is the world's step scratch the kernel keeps in "
             "local memory where the model's block fits (`LocalStepBlock`, S2R_CUDA_LOCAL_STEP_BYTES; docs/gpu.md), "
             "so *the step's own frame* is the rest, the figure issue 14's 1 KB goal is about. *Spills* are "
             "ptxas' static spill stores and loads, in bytes of instructions (not executions), of the kernel and "
             "of the device functions it keeps as calls (ptxas lists them after the kernel; PhysicsStep, box-box's "
             "closest pair, the sweep's normal quantiles); *of it, in calls* is their share. Before stop 39 the "
             "table and the budgets counted the kernel's own lines only.", "",
             "| kernel | registers | stack frame (B) | of it, step block (B) | the step's own frame (B) | spills (B) | "
             "of it, in calls (B) | shared (B) | resident warps / SM | occupancy | budget |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name, k in sorted(kernels.items()):
        warps, occ = occupancy(k["regs"], k["smem"])
        b = budgets.get(name, {})
        block = b.get("local_step_block", 0)
        bs = ", ".join(f"{key} <= {v}" for key, v in b.items() if key != "local_step_block") or "none"
        lines.append(f"| {name} | {k['regs']} | {k['stack']} | {block} | {k['stack'] - block} | "
                     f"{k['spill_stores'] + k['spill_loads']} | {call_spills(k)} | {k['smem']} | {warps} | "
                     f"{100 * occ:.1f} % | {bs} |")
    if a.compile_commands:
        at8 = parse_log(ptxas_at_min_blocks(a.compile_commands, 8))
        lines += ["", "### The bench scenes' kernels built for 8 blocks per SM", "",
                  "The same source compiled as `-DS2R_CUDA_STEP_MIN_BLOCKS=8` would compile the `<slide_trees>` "
                  "kernels (`--min-blocks 8`: the build's nvcc command to PTX, pruned to them, ptxas -v), the "
                  "build the `cuda_kernel_budgets_8blocks` ctest checks against "
                  "`bench/cuda_kernel_budgets_8blocks.txt`: at most 64 registers, twice the resident warps.", "",
                  "| kernel | registers | stack frame (B) | the step's own frame (B) | spills (B) | of it, in calls (B) | "
                  "resident warps / SM | occupancy |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for name, k in sorted(at8.items()):
            warps, occ = occupancy(k["regs"], k["smem"])
            block = budgets.get(name, {}).get("local_step_block", 0)
            lines.append(f"| {name} | {k['regs']} | {k['stack']} | {k['stack'] - block} | "
                         f"{k['spill_stores'] + k['spill_loads']} | {call_spills(k)} | {warps} | {100 * occ:.1f} % |")
    if a.s2r:
        lines += ["", "## Global-memory traffic per env-step and the H200 bound (65,536 worlds)", "",
                  "One env-step is one control step of one world. *Compulsory*: the world's state read and written "
                  "once per control step, its kept block (slide trees) read once, its actions read: what a kernel "
                  "that keeps a world's state in registers or shared memory across the substeps would move. "
                  "*As built*: `ControlStepKernel` loads and stores the state in every physics step, and its "
                  "step block (contact rows, manifolds, solver bodies) is written and read at least once per "
                  "physics step. *Step block*: where the CUDA backend keeps it for the scene: `local` (the "
                  "thread's local memory, which the hardware interleaves by 32-bit word across a warp's threads, "
                  "so a warp's accesses to one offset are one 128-byte transaction) or `global` (a per-world block, "
                  "world-major: the same 32 accesses touch 32 sectors, up to 8x the bytes the model counts when "
                  "L1 cannot keep a sector until its thread reads the rest of it); `local+state`: the world's state "
                  "is staged there too for the launch, read from and written to global memory once per control "
                  "step, coalesced (the device state is interleaved by world), counted in *as built* as global "
                  "traffic, and its use by the physics steps as local traffic; `local+state+world`: the world's "
                  "kept block (slide-tree responses) is staged too, read once per launch and written back only "
                  "where the launch rebuilt part of it (counted as read and written; interleaved by world in "
                  "global memory), where without staging it is read from global memory in every physics step. "
                  "*4 steps per launch*: the same with Engine::StepMany's kernel (`ControlStepsKernel`, "
                  "`s2r bench --steps-per-launch 4`), the staged state and world block crossing global memory "
                  "once per 4 control steps. The stack frame is reserved for "
                  "the deepest "
                  "path (below) and mostly not touched by these scenes; what they do touch of it, the narrow "
                  "phase's small arrays, is left out. The bound is HBM bandwidth (4.8 TB/s) "
                  "over bytes per env-step: a memory bound only (the fp32 compute bound, 67 TFLOP/s over the FLOPs "
                  "of a world's substeps, is not modelled here, and may be the lower one for the compulsory "
                  "traffic). Sizes from `s2r bench --json` (state_bytes_per_world, "
                  "world_scratch_bytes, step_scratch_bytes).", "",
                  "| scene | physics steps x substeps per env-step | state (B) | kept block (B) | step scratch (B) | "
                  "step block | compulsory (B/env-step) | bound (env-steps/s) | as built (B/env-step) | "
                  "bound as built (env-steps/s) | as built, 4 steps per launch (B/env-step) | bound (env-steps/s) |",
                  "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
        room = local_room(budgets)
        for scene in ("box_push", "pick_lift", "stack5"):
            j = scene_sizes(a.s2r, scene)
            where = step_block_place(j, room)
            comp, cur = traffic_model(j, where)
            _, many = traffic_model(j, where, per_launch=4)
            lines.append(f"| {scene} | {j['physics_steps_per_control']} x {j['substeps']} | {j['state_bytes_per_world']} | "
                         f"{j['world_scratch_bytes']} | {j['step_scratch_bytes']} | {where} | {comp:,} | "
                         f"{HBM_BYTES_PER_S / comp:,.0f} | {cur:,} | {HBM_BYTES_PER_S / cur:,.0f} | {many:,} | "
                         f"{HBM_BYTES_PER_S / many:,.0f} |")
        lines += ["", "The gap between the two bounds is the case for issue 14's redesign: state in registers or "
                  "shared memory across substeps, scratch sized by the model (a box-push world does not carry the "
                  "lock block), and world-fastest (structure-of-arrays) layouts so a warp's loads coalesce. Both "
                  "bounds are estimates from the sizes (traffic lower bounds, throughput upper bounds), not counts "
                  "of accesses, and neither has been measured on a device yet; `bench/gpu_check.sh` records the "
                  "measured throughput where a device is lent."]
        lines += ["", "### The sweep kernel: what is logged and what moves", "",
                  "`SweepStepKernel` (`s2r sweep --backend cuda`, 4 control steps per pass by default): per env-step it "
                  "writes the rows the store records (*logged*: steps/state, obs and action, sizes from a 2-episode "
                  "sweep's store), and, with everything staged, reads the world's state, episode record "
                  "(`SweepWorld`) and world block once per pass and writes the state and record back once (the world "
                  "block only where the pass rebuilt it, left out here: 94 of 862 stagings in the push sweep test). "
                  "That is *global*, the issue's 'HBM traffic per env-step is what is logged', as built. *Local* is "
                  "what the physics steps move in the thread's local memory (step block, staged state, world block "
                  "and record), counted as in the table above as if none of it stayed on chip; *bound* divides "
                  "4.8 TB/s by the global bytes, then by global and local together.", "",
                  "*With a policy* is the sweep's global bytes when a policy process acts (`--policy`): one "
                  "launch per control step (`SweepActObserveKernel`: the policy's actions, the physics, the "
                  "labels, then the next step's observation), staging the world in and out once, its actions "
                  "read and its next policy inputs (`SweepPolicyRow`) written (the host's copies of them cross "
                  "PCIe, not counted here). A policy network in the step (`--policy-net`, `SweepNetKernel`) "
                  "moves what the expert's pass moves, *global, as built*, plus its weights, which all threads "
                  "read at once.", "",
                  "| task | scene | logged (B/env-step) | global, as built (B/env-step) | global / logged | "
                  "bound, global (env-steps/s) | local (B/env-step) | bound, global + local (env-steps/s) | "
                  "global, with a policy (B/env-step) |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for task in ("push", "pick_lift", "peg_insert"):
            scene, rows = sweep_row_bytes(a.s2r, task)
            j = scene_sizes(a.s2r, scene.replace("builtin:", ""))
            if step_block_place(j, room) != "local+state+world":
                lines.append(f"| {task} | {scene} | {sum(rows.values())} | (not staged: "
                             f"{step_block_place(j, room)}) | | | | | |")
                continue
            logged, glob, local = sweep_traffic(j, rows, per_pass=4)
            policy = policy_sweep_traffic(j, rows, rows["action"])
            lines.append(f"| {task} | {scene} | {logged:,} | {glob:,} | {glob / logged:.1f} | "
                         f"{HBM_BYTES_PER_S / glob:,.0f} | {local:,} | {HBM_BYTES_PER_S / (glob + local):,.0f} | "
                         f"{policy:,} |")
    if a.compile_commands:
        depots, top = ptx_local_memory(a.compile_commands)
        lines += ["", "## Where the stack frame comes from", "",
                  "Local memory (`__local_depot`) per function in the PTX of `cuda/backend_cuda.cu` (same flags as "
                  "the build; ptxas' cumulative stack of a kernel is its own depot plus those of the functions it "
                  "calls), and the source lines with the most local loads and stores (static counts in the PTX, "
                  "not executions).", "",
                  "| function | local depot (B) |", "|---|---:|"]
        for f, b in sorted(depots.items(), key=lambda kv: -kv[1]):
            lines.append(f"| {f} | {b} |")
        lines += ["", "| source line | local loads + stores in the PTX |", "|---|---:|"]
        for loc, n in top:
            lines.append(f"| {loc} | {n} |")
        lines += ["", "Each step kernel is compiled once per step variant (kernels/step_features.h) and a scene runs "
                  "the smallest variant that holds what it contains. `<all>` keeps every path, and its frame is "
                  "mostly the maximal-coordinate joint path (`kernels/solver_joint.h`: the lock block's rows, "
                  "`Row rows[kMaxLockRows]`, and the joint frames) and EPA's polytope (`CollideConvex`). "
                  "`<slide_trees>`, which runs the bench and sweep scenes, has neither, nor the articulated "
                  "trees' J M^-1 J^T vectors; what is left in its frame is the narrow phase's small arrays "
                  "indexed at run time (box-box clipping polygons, `collide_box_box.h`), which the scenes with "
                  "box-box contacts do touch. The model and state views are `__grid_constant__` kernel "
                  "parameters, so the step functions' references to them read the parameter bank instead of a "
                  "per-thread copy."]
    with open(a.report, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
