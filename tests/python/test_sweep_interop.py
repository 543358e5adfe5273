"""A sweep's store read by zarr-python: the episode table matches `--summary-json`, and the
recorded steps are consistent with the scene (the box starts where its randomized parameters put
it, and the episodes that succeeded end with the box in the goal)."""
import json
import os
import subprocess

import pytest

np = pytest.importorskip("numpy")
zarr = pytest.importorskip("zarr", exc_type=ImportError)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
S2R_BIN = os.environ.get("S2R_BIN", os.path.join(REPO, "build", "s2r"))


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    if not (os.path.isfile(S2R_BIN) and os.access(S2R_BIN, os.X_OK)):
        pytest.skip(f"{S2R_BIN} not built")
    tmp = tmp_path_factory.mktemp("sweep")
    store, summary = tmp / "push.zarr", tmp / "summary.json"
    subprocess.run([S2R_BIN, "sweep", "builtin:push", "--out", str(store), "--episodes", "40", "--worlds", "16",
                    "--summary-json", str(summary)], check=True, capture_output=True)
    return store, json.loads(summary.read_text())


def test_episode_table_matches_the_summary(sweep):
    store, summary = sweep
    root = zarr.open_group(store=str(store), mode="r")
    s2r = root.attrs["s2r"]
    E = s2r["commit"]["episodes"]
    assert E == summary["episodes"] == 40
    success = root["episodes/success"][:E]
    labels = root["episodes/failure_label"][:E]
    assert int(success.sum()) == summary["successes"]
    assert summary["success_rate"] == pytest.approx(success.mean())
    names = {l["code"]: l["name"] for l in s2r["labels"]}
    for code, name in names.items():
        if code:
            assert int(((labels == code) & ~success).sum()) == summary["failure_counts"][name], name
    assert (labels[success] == 0).all()
    assert list(root["episodes/seed"][:E]) == list(range(E)), "episodes in index order"
    assert int(root["episodes/length"][:E].sum()) == s2r["commit"]["steps"]
    assert int(root["episodes/metrics/near_miss"][:E].sum()) == summary["near_miss_count"]
    # the times: parts of the whole; the worlds stepped exactly the stored steps (a world with no
    # episode left does not step)
    t = summary["seconds"]
    assert 0 < summary["setup_seconds"] and 0 < summary["close_seconds"]
    assert summary["setup_seconds"] + summary["step_seconds"] + summary["close_seconds"] <= t
    assert 0 < summary["physics_seconds"] < summary["step_seconds"]
    assert summary["world_steps"] == s2r["commit"]["steps"]
    assert summary["env_steps_per_s"] == pytest.approx(summary["world_steps"] / t, rel=1e-9)
    names = [m["name"] for m in s2r["metrics"]]
    assert names[:5] == ["phase", "margin", "min_margin", "max_slip", "near_miss"]
    # builtin:push has two events, each with fired / time / magnitude / direction
    assert names[5:] == [f"event{i}_{f}" for i in range(2) for f in ("fired", "time", "magnitude", "direction")]
    fired = root["episodes/metrics/event0_fired"][:E]
    assert set(np.unique(fired)) <= {0.0, 1.0}


def test_steps_agree_with_the_sampled_parameters(sweep):
    store, _ = sweep
    root = zarr.open_group(store=str(store), mode="r")
    E = root.attrs["s2r"]["commit"]["episodes"]
    start, length = root["episodes/start"][:E], root["episodes/length"][:E]
    state = root["steps/state"][:]
    bodies = root.attrs["s2r"]["embodiment"]["body_names"]
    box = bodies.index("box")
    dx, dy = root["episodes/params/box_x"][:E], root["episodes/params/box_y"][:E]
    goal_y = root["episodes/params/goal_y"][:E]
    success = root["episodes/success"][:E]
    for e in range(E):
        first = state[start[e], box]
        # the box starts at the scene's (0, 0) plus the sampled offsets (float32)
        assert first[0] == pytest.approx(dx[e], abs=1e-6) and first[1] == pytest.approx(dy[e], abs=1e-6)
        if success[e]:
            last = state[start[e] + length[e] - 1, box]
            assert np.hypot(last[0] - 0.25, last[1] - goal_y[e]) <= 0.03 + 1e-4
    assert root["steps/state"].attrs["units"][0] == "m"
    assert root["episodes/params/box_mass"].attrs["distribution"] == "uniform"


def test_inspect_by_agrees_with_numpy(sweep):
    """`s2r inspect --by`: each bin's episodes, success rate, failure counts and near misses equal
    numpy's over the episodes whose value lies in the bin's range; the bins cover every episode
    once, in order, and hold about equal counts."""
    store, _ = sweep
    root = zarr.open_group(store=str(store), mode="r")
    E = root.attrs["s2r"]["commit"]["episodes"]
    names = {l["code"]: l["name"] for l in root.attrs["s2r"]["labels"]}
    success = root["episodes/success"][:E]
    labels = root["episodes/failure_label"][:E]
    near = root["episodes/metrics/near_miss"][:E]
    out = subprocess.run([S2R_BIN, "inspect", str(store), "--by", "friction", "--by", "margin", "--bins", "4",
                          "--json"], check=True, capture_output=True, text=True).stdout
    by = json.loads(out)["outcomes_by"]
    assert [o["by"] for o in by] == ["friction", "margin"]
    for o, column in zip(by, ["episodes/params/friction", "episodes/metrics/margin"]):
        v = root[column][:E]
        assert o["episodes"] == E and len(o["bins"]) == 4
        covered = np.zeros(E, dtype=int)
        for k, b in enumerate(o["bins"]):
            inside = (v >= b["low"]) & (v <= b["high"])
            covered += inside
            n = int(inside.sum())
            assert b["episodes"] == n and E // 4 - 1 <= n <= E // 4 + 1, (column, k)
            assert b["success_rate"] == pytest.approx(success[inside].mean(), rel=1e-12)
            assert b["near_misses"] == int((near[inside] != 0).sum())
            present = sorted(c for c in np.unique(labels) if c != 0)
            assert b["failure_counts"] == {names[c]: int((labels[inside] == c).sum()) for c in present}
            if k:
                assert b["low"] > o["bins"][k - 1]["high"]
        assert (covered == 1).all(), column


def test_inspect_select_agrees_with_numpy(sweep):
    """`s2r inspect --select`: outcome terms are alternatives and conditions on parameters and
    metrics all hold; the episode indices each selection lists equal numpy's mask over the store."""
    store, _ = sweep
    root = zarr.open_group(store=str(store), mode="r")
    E = root.attrs["s2r"]["commit"]["episodes"]
    names = {l["name"]: l["code"] for l in root.attrs["s2r"]["labels"]}
    success = root["episodes/success"][:E].astype(bool)
    labels = root["episodes/failure_label"][:E]
    near = root["episodes/metrics/near_miss"][:E] != 0
    friction = root["episodes/params/friction"][:E]
    mass = root["episodes/params/box_mass"][:E]
    margin = root["episodes/metrics/margin"][:E]
    seeds = root["episodes/seed"][:E]
    mid = float(np.median(friction))
    cases = {
        "failed": ~success,
        "success,near_miss": success | near,
        f"friction<{mid!r}": friction < mid,
        f"all,friction>={mid!r},box_mass<=1.3": (friction >= mid) & (mass <= 1.3),
        f"success,margin>0.01,friction!={float(friction[0])!r}": success & (margin > 0.01) & (friction != friction[0]),
        "stuck,timeout": (labels == names["stuck"]) | (labels == names["timeout"]),
    }
    for select, mask in cases.items():
        out = subprocess.run([S2R_BIN, "inspect", str(store), "--select", select, "--json"], check=True,
                             capture_output=True, text=True).stdout
        s = json.loads(out)["selection"]
        assert s["episode_indices"] == sorted(int(x) for x in seeds[mask]), select
        assert s["episodes"] == int(mask.sum()) and s["episodes_in_store"] == E, select
        assert s["config"] == "builtin:push", "the rerun command names the store's config"
        if mask.any():
            assert s["success_rate"] == pytest.approx(success[mask].mean(), rel=1e-12), select


def test_compare_agrees_with_numpy(sweep, tmp_path):
    """`s2r compare`: the same 40 episodes pushed by the expert without braking (`brake_decel: 0`)
    and with it: every episode matched by seed, the same worlds (no parameter differs), and the
    fixed / broken counts and the outcome table equal numpy's over the two stores."""
    store, _ = sweep
    text = open(os.path.join(REPO, "configs", "sweeps", "push.yaml")).read()
    text = text.replace("stuck_s: 1.0}", "stuck_s: 1.0, brake_decel: 0}")
    assert "brake_decel: 0" in text
    (tmp_path / "nobrake.yaml").write_text(text)
    before = tmp_path / "nobrake.zarr"
    subprocess.run([S2R_BIN, "sweep", str(tmp_path / "nobrake.yaml"), "--out", str(before), "--episodes", "40",
                    "--worlds", "16"], check=True, capture_output=True)
    out = subprocess.run([S2R_BIN, "compare", str(before), str(store), "--json"], check=True, capture_output=True,
                         text=True).stdout
    c = json.loads(out)
    ra, rb = zarr.open_group(store=str(before), mode="r"), zarr.open_group(store=str(store), mode="r")
    sa, sb = ra["episodes/success"][:40], rb["episodes/success"][:40]
    la, lb = ra["episodes/failure_label"][:40], rb["episodes/failure_label"][:40]
    assert list(ra["episodes/seed"][:40]) == list(rb["episodes/seed"][:40])
    assert c["matched"] == 40 and c["only_before"] == 0 and c["only_after"] == 0
    assert c["fixed"] == int((~sa & sb).sum())
    assert c["broken"] == int((sa & ~sb).sum())
    assert all(p["differ"] == 0 for p in c["params"]), "the same worlds"
    names = {l["code"]: l["name"] for l in ra.attrs["s2r"]["labels"]}
    outcome = lambda s, l: "success" if s else names[int(l)]
    table = {}
    for e in range(40):
        row = table.setdefault(outcome(sa[e], la[e]), {})
        col = outcome(sb[e], lb[e])
        row[col] = row.get(col, 0) + 1
    assert c["transitions"] == table
    assert c["success_rate"]["before"] == pytest.approx(sa.mean()) and c["success_rate"]["after"] == pytest.approx(sb.mean())
