"""The CUDA backend's code run on the CPU (`--backend cuda-emulation`, cuda/emulation.h) through the
CLI: a sweep writes the same store as the CPU backend, array for array and bit for bit, and the
bench's final state hash equals the CPU's. On a machine without a GPU this is what exercises the
CUDA path end to end (episode starts and finished episodes through pinned staging and two
streams); what it cannot show is the device's own rounding, which the `cuda` parity tests bound."""
import os
import subprocess
import json

import pytest

np = pytest.importorskip("numpy")
zarr = pytest.importorskip("zarr", exc_type=ImportError)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
S2R_BIN = os.environ.get("S2R_BIN", os.path.join(REPO, "build", "s2r"))


def need_binary():
    if not (os.path.isfile(S2R_BIN) and os.access(S2R_BIN, os.X_OK)):
        pytest.skip(f"{S2R_BIN} not built")


def arrays(group, prefix=""):
    for name in sorted(group.keys()):
        item = group[name]
        if isinstance(item, zarr.Group):
            yield from arrays(item, prefix + name + "/")
        else:
            yield prefix + name, np.asarray(item[...])


@pytest.mark.parametrize("task", ["push", "peg_insert"])
def test_sweep_store_equals_the_cpu_backend(tmp_path, task):
    need_binary()
    stores = {}
    for backend in ("cpu", "cuda-emulation"):
        out = tmp_path / f"{backend}.zarr"
        subprocess.run([S2R_BIN, "sweep", f"builtin:{task}", "--backend", backend, "--worlds", "12", "--episodes", "30",
                        "--seed", "5", "--threads", "2", "--out", str(out)], check=True, capture_output=True)
        stores[backend] = zarr.open_group(store=str(out), mode="r")
    cpu, emu = stores["cpu"], stores["cuda-emulation"]
    assert cpu.attrs["s2r"]["commit"] == emu.attrs["s2r"]["commit"]
    names = [n for n, _ in arrays(cpu)]
    assert names == [n for n, _ in arrays(emu)]
    assert "steps/state" in names and "steps/obs" in names and "episodes/success" in names
    for (name, a), (_, b) in zip(arrays(cpu), arrays(emu)):
        assert a.shape == b.shape, name
        assert np.array_equal(a, b, equal_nan=True), name


def test_hard_set_equals_the_cpu_backend(tmp_path):
    """A hard set (`--episodes-from`: a list of episode indices with gaps, docs/sweep.md) through the
    CUDA backend's host loop and kernels: the same store as the CPU backend's, array for array."""
    need_binary()
    source = tmp_path / "source.zarr"
    subprocess.run([S2R_BIN, "sweep", "builtin:pick_lift", "--worlds", "8", "--episodes", "40", "--seed", "3",
                    "--out", str(source)], check=True, capture_output=True)
    stores = {}
    for backend in ("cpu", "cuda-emulation"):
        out = tmp_path / f"hard-{backend}.zarr"
        subprocess.run([S2R_BIN, "sweep", "builtin:pick_lift", "--backend", backend, "--worlds", "5",
                        "--episodes-from", str(source), "--select", "failed,near_miss", "--out", str(out)],
                       check=True, capture_output=True)
        stores[backend] = zarr.open_group(store=str(out), mode="r")
    cpu, emu = stores["cpu"], stores["cuda-emulation"]
    seeds = cpu["episodes/seed"][:]
    assert 0 < len(seeds) < 40 and (np.diff(seeds.astype(np.int64)) > 0).all()
    assert [n for n, _ in arrays(cpu)] == [n for n, _ in arrays(emu)]
    for (name, a), (_, b) in zip(arrays(cpu), arrays(emu)):
        assert a.shape == b.shape, name
        assert np.array_equal(a, b, equal_nan=True), name


@pytest.mark.parametrize("scene", ["box_push", "stack5"])
def test_bench_state_hash_equals_the_cpu_backend(scene):
    need_binary()
    # and with 4 control steps per call (Engine::StepMany: 15 steps are calls of 4, 4, 4 and 3)
    hashes = {}
    for backend in ("cpu", "cuda-emulation"):
        for per_launch in ("1", "4"):
            r = subprocess.run([S2R_BIN, "bench", "--scene", f"builtin:{scene}", "--worlds", "40", "--control-steps",
                                "15", "--repeats", "1", "--backend", backend, "--steps-per-launch", per_launch, "--json"],
                               check=True, capture_output=True, text=True)
            hashes[(backend, per_launch)] = json.loads(r.stdout)["state_hash"]
    assert len(set(hashes.values())) == 1, hashes


def test_unknown_backend_is_refused():
    need_binary()
    r = subprocess.run([S2R_BIN, "bench", "--backend", "gpu"], capture_output=True, text=True)
    assert r.returncode != 0
    assert "--backend must be cpu, cuda or cuda-emulation, got 'gpu'" in r.stdout + r.stderr


@pytest.mark.parametrize("gpu,bandwidth", [("NVIDIA H200, 143771 MiB", 4.8e12), ("NVIDIA H100 80GB HBM3, 81559 MiB", 3.35e12),
                                           ("NVIDIA H100 PCIe, 81559 MiB", 2.0e12), ("NVIDIA A100-SXM4-40GB", None)])
def test_gpu_summary_puts_each_cuda_row_against_its_roofline(tmp_path, gpu, bandwidth):
    """bench/gpu_summary.py, the end of the device run: every CUDA bench row's modelled bytes per
    env-step (bench/cuda_kernels.py traffic_model, for the row's placement and steps per launch), the
    GPU's HBM bandwidth over it, and the measured rate's share, read from rows the emulation writes."""
    need_binary()
    import sys
    sys.path.insert(0, os.path.join(REPO, "bench"))
    from cuda_kernels import traffic_model
    (tmp_path / "machine.txt").write_text(gpu + "\n")
    rows = {}
    for per_launch, name in (("1", "bench.jsonl"), ("4", "bench_steps_per_launch.jsonl")):
        r = subprocess.run([S2R_BIN, "bench", "--scene", "builtin:box_push", "--worlds", "16", "--control-steps", "4",
                            "--repeats", "1", "--backend", "cuda-emulation", "--steps-per-launch", per_launch, "--json"],
                           check=True, capture_output=True, text=True)
        (tmp_path / name).write_text(r.stdout)
        rows[per_launch] = json.loads(r.stdout)
    out = subprocess.run([sys.executable, os.path.join(REPO, "bench", "gpu_summary.py"), str(tmp_path)], check=True,
                         capture_output=True, text=True).stdout
    section = out[out.index("== roofline"):out.index("== sweeps")].splitlines()
    if bandwidth is None:
        assert "unknown GPU" in section[1]
        return
    lines = [l.split() for l in section if l.strip().startswith("box_push")]
    assert len(lines) == 2, section
    for per_launch, line in zip(("1", "4"), lines):
        r = rows[per_launch]
        _, modelled = traffic_model(r, r["step_block_memory"], int(per_launch))
        assert line[1] == r["step_block_memory"] + ("/x4" if per_launch == "4" else "")
        assert int(line[3].replace(",", "")) == modelled
        assert float(line[4]) == pytest.approx(bandwidth / modelled, rel=5e-3)  # printed to 3 digits
        assert float(line[6].rstrip("%")) == pytest.approx(100 * r["env_steps_per_s"] / (bandwidth / modelled),
                                                           rel=0.05, abs=0.06)
        # the issue bound: the committed instruction count's (bench/issue_bound.py)
        with open(os.path.join(REPO, "bench", "results", "dev-2core", "issue_bound.jsonl")) as f:
            counted = next(json.loads(l) for l in f if '"name": "box_push"' in l)
        assert float(line[7]) == pytest.approx(132 * 4 * 32 * 1.98e9 / counted["instructions"], rel=5e-3)


def test_gpu_summary_shows_where_a_failed_smoke_run_died(tmp_path):
    """bench/gpu_check.sh runs one small command per CUDA path first and, where one fails, runs it
    again under cuda-gdb and compute-sanitizer in the same call; the summary lists each smoke run's
    outcome and, from the debug logs, the signal, the backtrace frames and the sanitizer's verdict,
    not the debugger's chatter."""
    import sys
    (tmp_path / "smoke.txt").write_text(
        "+ [9 s, cap 30 s] s2r bench --scene builtin:pick_lift --backend cuda\nrc=139\nsmoke bench: FAILED\n"
        "+ [11 s, cap 30 s] s2r sweep builtin:push --backend cuda\nrc=0\nsmoke sweep: ok\n")
    (tmp_path / "smoke_debug_bench.txt").write_text(
        "+ [12 s, cap 60 s] cuda-gdb -batch -ex run -ex bt --args s2r bench\n"
        "[Thread debugging using libthread_db enabled]\n"
        "Program received signal SIGSEGV, Segmentation fault.\n"
        "#0  0x00005555556a7e10 in s2r::CudaBackend::SetModel(s2r::Model const&) ()\n"
        "#1  0x00005555556a2c44 in s2r::Engine::Engine(s2r::Model, s2r::EngineOptions const&) ()\n"
        "rc=0\n"
        "========= ERROR SUMMARY: 0 errors\n")
    out = subprocess.run([sys.executable, os.path.join(REPO, "bench", "gpu_summary.py"), str(tmp_path)], check=True,
                         capture_output=True, text=True).stdout
    section = out[out.index("== smoke"):out.index("== CUDA tests")]
    assert "smoke bench: FAILED" in section and "smoke sweep: ok" in section, section
    assert "-- smoke_debug_bench.txt" in section
    assert "Program received signal SIGSEGV" in section
    assert "#0  0x00005555556a7e10 in s2r::CudaBackend::SetModel" in section
    assert "#1  0x00005555556a2c44 in s2r::Engine::Engine" in section
    assert "ERROR SUMMARY: 0 errors" in section
    assert "Thread debugging" not in section


def test_emulation_workers_variable_is_checked():
    """S2R_CUDA_EMULATION_WORKERS (host threads per emulated launch, cuda/emulation.h): a count from 1
    to 64 is taken, anything else is said on stderr and the default used; the run's state does not
    depend on the count."""
    need_binary()
    hashes = {}
    for value in ("1", "3", "abc", "0"):
        env = dict(os.environ, S2R_CUDA_EMULATION_WORKERS=value)
        r = subprocess.run([S2R_BIN, "bench", "--scene", "builtin:pick_lift", "--worlds", "9", "--control-steps", "3",
                            "--repeats", "1", "--backend", "cuda-emulation", "--json"],
                           check=True, capture_output=True, text=True, env=env)
        hashes[value] = json.loads(r.stdout)["state_hash"]
        warned = f"S2R_CUDA_EMULATION_WORKERS={value} is not a count from 1 to 64" in r.stderr
        assert warned == (value in ("abc", "0")), (value, r.stderr)
    assert len(set(hashes.values())) == 1, hashes
