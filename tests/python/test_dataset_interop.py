"""s2r datasets read by the standard tools.

`s2r_dataset_fixture STORE --episodes N` (built with the test suite; path from
$S2R_DATASET_FIXTURE, default <repo>/build/s2r_dataset_fixture) streams synthetic episodes whose
every value is a formula (tests/host/dataset_fixture.h, mirrored by `episode()` below) through the
C++ DatasetWriter. Here zarr-python 3 and tensorstore read the result -- also after the writer was
killed with SIGKILL -- and `s2r inspect --json` is checked against numpy.
"""
import json
import os
import signal
import subprocess
import time

import pytest

np = pytest.importorskip("numpy")
zarr = pytest.importorskip("zarr", exc_type=ImportError)
ts = pytest.importorskip("tensorstore", exc_type=ImportError)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
S2R_BIN = os.environ.get("S2R_BIN", os.path.join(REPO, "build", "s2r"))
FIXTURE_BIN = os.environ.get("S2R_DATASET_FIXTURE", os.path.join(REPO, "build", "s2r_dataset_fixture"))


def need(path):
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.skip(f"{path} not built (build the tests, or set S2R_BIN / S2R_DATASET_FIXTURE)")


def episode(e):
    """The fixture episode e, as tests/host/dataset_fixture.h makes it."""
    L = 1 + (e * 7919) % 37
    k = np.arange(L, dtype=np.float64)[:, None]
    obs = (e + k * 0.001 + np.arange(4, dtype=np.float64)[None, :] * 0.25).astype(np.float32)
    action = (e * 0.5 - k * 0.01 - np.arange(2, dtype=np.float64)[None, :]).astype(np.float32)
    success = e % 3 != 0
    reward = np.zeros(L, np.float32)
    if success:
        reward[-1] = 1
    return dict(length=L, obs=obs, action=action, reward=reward, success=success, terminal=success,
                seed=1000 + e, task=e % 2, label=0 if success else (1 if e % 2 else 2),
                friction=0.5 + (e % 10) * 0.05, mass=0.1 + (e % 7) * 0.04)


def check_committed(store):
    """Checks the committed episodes with zarr-python; returns the commit record."""
    root = zarr.open_group(store=str(store), mode="r")
    s2r = root.attrs["s2r"]
    assert s2r["format"] == "s2r.dataset" and s2r["format_version"] == 1
    E, S = s2r["commit"]["episodes"], s2r["commit"]["steps"]
    start = root["episodes/start"][:E]
    length = root["episodes/length"][:E]
    obs = root["steps/obs"][:S]
    action = root["steps/action"][:S]
    ep_index = root["steps/episode_index"][:S]
    frame = root["steps/frame_index"][:S]
    is_first = root["steps/is_first"][:S]
    is_last = root["steps/is_last"][:S]
    is_terminal = root["steps/is_terminal"][:S]
    reward = root["steps/reward"][:S]
    tstamp = root["steps/timestamp"][:S]
    seeds = root["episodes/seed"][:E]
    success = root["episodes/success"][:E]
    labels = root["episodes/failure_label"][:E]
    friction = root["episodes/params/friction"][:E]
    mass = root["episodes/params/mass"][:E]
    at = 0
    for e in range(E):
        want = episode(e)
        L = want["length"]
        assert start[e] == at and length[e] == L, e
        rows = slice(at, at + L)
        np.testing.assert_array_equal(obs[rows], want["obs"])
        np.testing.assert_array_equal(action[rows], want["action"])
        np.testing.assert_array_equal(reward[rows], want["reward"])
        assert np.all(ep_index[rows] == e)
        np.testing.assert_array_equal(frame[rows], np.arange(L))
        assert is_first[at] and is_first[rows].sum() == 1
        assert is_last[at + L - 1] and is_last[rows].sum() == 1
        assert is_terminal[rows].sum() == (1 if want["terminal"] else 0)
        np.testing.assert_array_equal(tstamp[rows], np.arange(L) / 50.0)
        assert seeds[e] == want["seed"] and bool(success[e]) == want["success"] and labels[e] == want["label"]
        assert friction[e] == want["friction"] and mass[e] == want["mass"]
        at += L
    assert at == S
    return E, S


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    need(FIXTURE_BIN)
    store = tmp_path_factory.mktemp("dataset") / "ds"
    out = subprocess.run([FIXTURE_BIN, str(store), "--episodes", "150", "--resume", "--chunk-steps", "32",
                          "--shard-steps", "256", "--chunk-episodes", "16"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return store


def test_dataset_reads_in_zarr_python(dataset):
    E, S = check_committed(dataset)
    assert E == 150
    root = zarr.open_group(store=str(dataset), mode="r")
    # Array shapes equal the commit record after a clean close; axes are named.
    assert root["steps/obs"].shape == (S, 4)
    assert root["episodes/start"].shape == (E,)
    assert root["steps/obs"].metadata.dimension_names == ("step", "component")
    assert root["steps/obs"].attrs["units"] == ["m", "m", "m", "rad"]
    assert root["episodes/params/mass"].attrs["units"] == "kg"


def test_dataset_reads_in_tensorstore(dataset):
    root = zarr.open_group(store=str(dataset), mode="r")
    S = root.attrs["s2r"]["commit"]["steps"]
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(dataset / "steps" / "obs")}}
    arr = ts.open(spec, read=True).result()
    np.testing.assert_array_equal(arr[:S].read().result(), root["steps/obs"][:S])
    start = root["episodes/start"][:]
    lengths = root["episodes/length"][:]
    e = 77
    rows = arr[start[e]:start[e] + lengths[e]].read().result()
    np.testing.assert_array_equal(rows, episode(e)["obs"])


def test_inspect_summary_matches_numpy(dataset):
    need(S2R_BIN)
    out = subprocess.run([S2R_BIN, "inspect", str(dataset), "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout)
    root = zarr.open_group(store=str(dataset), mode="r")
    success = root["episodes/success"][:]
    labels = root["episodes/failure_label"][:]
    assert s["episodes"] == 150
    assert s["steps"] == int(root["episodes/length"][:].sum())
    assert s["success_rate"] == pytest.approx(success.mean(), abs=1e-12)
    assert s["failure_counts"] == {"dropped": int((labels == 1).sum()), "timeout": int((labels == 2).sum())}
    friction = root["episodes/params/friction"][:]
    p = {q["name"]: q for q in s["params"]}
    assert p["friction"]["observed"]["min"] == friction.min()
    assert p["friction"]["observed"]["max"] == friction.max()
    assert {f["name"]: f["units"] for f in s["features"]} == {"obs": ["m", "m", "m", "rad"], "action": ["m"]}


def test_sigkilled_writer_leaves_a_store_standard_readers_open(tmp_path):
    """Kill the writer at several moments; each time zarr-python opens the store and every
    episode the writer reported committed is there, bit for bit; a resume then completes it."""
    need(FIXTURE_BIN)
    store = tmp_path / "ds"
    promised = 0
    rng = np.random.default_rng(7)
    for trial in range(6):
        proc = subprocess.Popen([FIXTURE_BIN, str(store), "--episodes", "300", "--resume", "--delay-us", "500"],
                                stdout=subprocess.PIPE, text=True)
        time.sleep(float(rng.uniform(0.05, 0.3)))
        proc.send_signal(signal.SIGKILL)
        lines = proc.communicate()[0].splitlines()
        commits = [int(line.split()[1]) for line in lines if line.startswith("commit")]
        if commits:
            promised = max(promised, commits[-1])
        if (store / "zarr.json").exists() and zarr.open_group(store=str(store), mode="r").attrs["s2r"]["commit"]:
            E, _ = check_committed(store)
            assert E >= promised, f"trial {trial}: {E} episodes on disk, {promised} reported committed"
            promised = E
    out = subprocess.run([FIXTURE_BIN, str(store), "--episodes", "300", "--resume"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    E, _ = check_committed(store)
    assert E == 300
