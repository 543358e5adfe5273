"""bench/gpu_check.sh rehearsed without a GPU: the device is lent for about 15 minutes, by chance, and
the script has to work the first time. `S2R_GPU_REHEARSAL=N` runs every stage on the CUDA backend's
code on the CPU (`--backend cuda-emulation`) at 1/N of the worlds, from a pack made by
bench/gpu_pack.sh as a device run would be, and the checks here read what it brings back: the
summary (bench/gpu_summary.py), its parity sections and every command's exit status. A second run
with a budget too small for the stages checks that the script ends in time and says what it
skipped. Needs the build that S2R_BIN is in to have the CUDA backend (s2r_tests beside it)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
S2R_BIN = os.environ.get("S2R_BIN", os.path.join(REPO, "build", "s2r"))
BUILD = os.path.dirname(os.path.abspath(S2R_BIN))


@pytest.fixture(scope="module")
def pack(tmp_path_factory):
    """The folder gpu_pack.sh packs the build S2R_BIN is in into (skips where it has no CUDA backend)."""
    make = os.path.join(BUILD, "CMakeFiles", "s2r_core.dir", "build.make")
    if not (os.path.isfile(os.path.join(BUILD, "s2r_tests")) and os.path.isfile(make)
            and "backend_cuda.cu" in open(make).read()):
        pytest.skip(f"{BUILD} has no CUDA backend or no s2r_tests")
    where = tmp_path_factory.mktemp("gpu_pack") / "gpu"
    env = dict(os.environ, S2R_GPU_PACK_DIR=str(where), XZ_OPT="-0")  # fastest xz: the pack is not carried
    # the same build as the 8-blocks-per-SM one: stage 7 runs too
    subprocess.run(["bash", os.path.join(REPO, "bench", "gpu_pack.sh"), BUILD, BUILD], env=env, check=True,
                   capture_output=True, timeout=300)
    assert (where / "pack.tar.xz").is_file()
    return where


def rehearse(pack, tmp_path, budget_s, **env_extra):
    """gpu_check.sh at 1/256 of the worlds on its own copy of the pack: (seconds, summary, {log name: text})"""
    out = tmp_path / "out"
    scratch = tmp_path / "scratch"
    carried = tmp_path / "gpu"  # the device tool's carried .gpu: only the pack, unpacked by the script
    for path in (out, scratch, carried):
        path.mkdir()
    shutil.copyfile(pack / "pack.tar.xz", carried / "pack.tar.xz")
    env = dict(os.environ, OUT=str(out), TMPDIR=str(scratch), S2R_GPU_PACK_DIR=str(carried), S2R_GPU_REHEARSAL="256",
               S2R_GPU_BUDGET_S=str(budget_s), S2R_GPU_PYTHON=sys.executable, **env_extra)
    t0 = time.monotonic()
    run = subprocess.run(["bash", os.path.join(REPO, "bench", "gpu_check.sh")], env=env, capture_output=True,
                         text=True, timeout=budget_s + 120)
    seconds = time.monotonic() - t0
    assert run.returncode == 0, run.stderr[-2000:]
    assert os.listdir(scratch) == [], "the script's work folder was left behind"
    summary = (out / "summary.txt").read_text()
    logs = {}
    with tarfile.open(out / "results.tgz") as tar:
        for member in tar.getmembers():
            if member.isfile():
                logs[os.path.basename(member.name)] = tar.extractfile(member).read().decode(errors="replace")
    return seconds, summary, logs


# ncu and compute-sanitizer as a gVisor machine has them: on PATH, failing at start-up (KINDS.md of
# the device tool, 2026-11-04); each call is logged to $TOOL_CALLS
FAILING_TOOLS = {
    "ncu": "==ERROR== Failed to initialize the profiler: LibraryNotLoaded",
    "compute-sanitizer": "========= Error: Device not supported",
}


def failing_tools(where):
    where.mkdir()
    for name, message in FAILING_TOOLS.items():
        path = where / name
        path.write_text(f'#!/bin/sh\necho "{name} $*" >> "$TOOL_CALLS"\necho "{message}" >&2\nexit 1\n')
        path.chmod(0o755)
    return where


def test_rehearsal_runs_every_stage(pack, tmp_path):
    # through the carried C library's loader, as on a device whose system library is older than the
    # build machine's (the riskier way; the short run below takes the system's)
    tools = failing_tools(tmp_path / "tools")
    calls = tmp_path / "tool_calls.txt"
    seconds, summary, logs = rehearse(pack, tmp_path, 600, S2R_GPU_CARRIED_LOADER="1", TOOL_CALLS=str(calls),
                                      PATH=f"{tools}:{os.environ['PATH']}")
    assert "Traceback" not in summary, summary
    assert "using the carried C library" in logs["machine.txt"]
    assert "s2r 0." in logs["machine.txt"], logs["machine.txt"]  # s2r --version through the wrapper
    for path in ("bench", "sweep", "arm"):
        assert f"smoke {path}: ok" in summary, summary
    assert re.search(r"^\[  PASSED  \] \d+ tests", summary, re.M), summary
    assert "[  FAILED  ]" not in summary, summary
    assert "== skipped, out of time: 0 commands" in summary, summary
    # every command the stages ran passed, but for the failing tools, each tried once
    statuses = [(name, rc) for name, text in logs.items() if name != "summary.txt"
                for rc in re.findall(r"^rc=(\d+)$", text, re.M)]
    assert len(statuses) >= 40, statuses
    assert sorted(s for s in statuses if s[1] != "0") == [("memcheck.txt", "1"), ("ncu_box_push.txt", "1")], statuses
    assert [line.split()[0] for line in calls.read_text().splitlines()] == ["ncu", "compute-sanitizer"]
    assert "Failed to initialize the profiler" in logs["ncu_box_push.txt"]
    for name in ("ncu_stack5.txt", "ncu_bytes_box_push.txt", "ncu_bytes_box_push_mb8.txt"):
        assert "not run: an earlier ncu run failed" in logs[name], name
    assert "not run: the sweep's memcheck" in summary, summary
    # rows from every bench stage (stage 3, placements, steps per launch, the 8-block build, arms)
    for name, rows in (("bench.jsonl", 15), ("bench_global_block.jsonl", 6), ("bench_steps_per_launch.jsonl", 3),
                       ("bench_mb8.jsonl", 3), ("bench_arms.jsonl", 11)):
        assert logs.get(name, "").count('"state_hash"') == rows, (name, logs.get(name, "")[-1000:])
    # the same arithmetic whatever the placement, launch or build: one hash per scene, worlds and steps
    groups = re.search(r"^  (\d+) of (\d+) groups agree$", summary, re.M)
    assert groups and groups.group(1) == groups.group(2) and int(groups.group(2)) >= 10, summary
    assert "DIFFER" not in summary
    # the emulated device runs the CPU's episodes bit for bit: the same outcome counts
    for task in ("push", "pick_lift", "peg_insert", "panda_push", "policy_push", "policy_peg_insert", "net_push"):
        assert re.search(rf"^  {task}: successes \d+ cpu, \d+ device; same counts$", summary, re.M), summary
    assert re.search(r"^push_cuda_16k_p16 +episodes (\d+)/\1 ", summary, re.M), summary
    assert re.search(r"^net_push_cuda_16k +episodes (\d+)/\1 ", summary, re.M), summary
    # the network's sweeps are labelled by the expert on both backends: the same agreement (bit for bit
    # on the emulated device)
    agree = {b: json.loads(logs[f"inspect_net_push_{b}.json"])["expert_agreement"] for b in ("cpu", "cuda-emulation")}
    assert agree["cpu"]["all"] and agree["cpu"] == agree["cuda-emulation"], agree
    assert re.search(r"^  network \S+ env-steps/s, expert \S+: \d+\.\d\d of the expert's$", summary, re.M), summary
    assert re.search(r"^\d+ kernels within their budgets", summary, re.M), summary
    assert seconds < 300


def test_a_short_budget_ends_in_time_and_says_what_it_skipped(pack, tmp_path):
    seconds, summary, logs = rehearse(pack, tmp_path, 25)
    assert "using the carried C library" not in logs["machine.txt"]
    skipped = re.search(r"^== skipped, out of time: (\d+) commands$", summary, re.M)
    assert skipped and int(skipped.group(1)) > 20, summary
    assert seconds < 25 + 20, seconds
    assert "== bench" in summary and "== sweeps" in summary
