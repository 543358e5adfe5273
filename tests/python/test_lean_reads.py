"""The device's code path on the CPU: a float32 CPU build with S2R_LEAN_READS (kernels/solver_body.h
kLeanReads: the contact solver skips the loads a body's kind makes needless, as the CUDA kernels do)
gives the plain build's results bit for bit: the bench's final state on every built-in scene, and a
sweep's store array for array. tests/run_all.sh builds it (build-lean) and passes it as
S2R_LEAN_BIN; without it these tests skip."""
import os
import subprocess
import json

import pytest

np = pytest.importorskip("numpy")
zarr = pytest.importorskip("zarr", exc_type=ImportError)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
S2R_BIN = os.environ.get("S2R_BIN", os.path.join(REPO, "build", "s2r"))
S2R_LEAN_BIN = os.environ.get("S2R_LEAN_BIN", "")

SCENES = ["box_push", "pick_lift", "peg_insert", "stack5", "franka_emika_panda/scene_mjx",
          "franka_emika_panda/scene_s2r", "panda_pick", "robotiq_2f85/2f85_s2r", "ur5e_2f85/scene"]


def need_binaries():
    for b in (S2R_BIN, S2R_LEAN_BIN):
        if not (b and os.path.isfile(b) and os.access(b, os.X_OK)):
            pytest.skip(f"{b or 'S2R_LEAN_BIN'} not built (tests/run_all.sh builds build-lean)")


def bench(binary, scene):
    r = subprocess.run([binary, "bench", "--scene", f"builtin:{scene}", "--worlds", "8", "--control-steps", "20",
                        "--repeats", "1", "--threads", "2", "--backend", "cpu", "--json"],
                       check=True, capture_output=True, text=True)
    return json.loads(r.stdout)


@pytest.mark.parametrize("scene", SCENES)
def test_bench_state_hash_equals_the_plain_build(scene):
    need_binaries()
    plain, lean = bench(S2R_BIN, scene), bench(S2R_LEAN_BIN, scene)
    assert plain["lean_reads"] is False and lean["lean_reads"] is True
    assert lean["state_hash"] == plain["state_hash"], scene


def test_sweep_store_equals_the_plain_build(tmp_path):
    need_binaries()
    stores = []
    for name, binary in (("plain", S2R_BIN), ("lean", S2R_LEAN_BIN)):
        out = tmp_path / f"{name}.zarr"
        subprocess.run([binary, "sweep", "builtin:pick_lift", "--worlds", "12", "--episodes", "24", "--seed", "3",
                        "--threads", "2", "--out", str(out)], check=True, capture_output=True)
        stores.append(zarr.open_group(store=str(out), mode="r"))
    names = sorted(stores[0]["steps"].keys())
    assert "state" in names and "obs" in names
    assert names == sorted(stores[1]["steps"].keys())
    for name in names:
        a, b = np.asarray(stores[0]["steps"][name][...]), np.asarray(stores[1]["steps"][name][...])
        assert a.shape == b.shape and np.array_equal(a, b, equal_nan=True), name
    assert np.array_equal(np.asarray(stores[0]["episodes"]["success"][...]),
                          np.asarray(stores[1]["episodes"]["success"][...]))
