#!/usr/bin/env python3
"""MuJoCo side of the CPU benchmark: the bench scenes with s2r bench's scripted actions.

    mujoco_bench.py --scene configs/scenes/box_push.xml --worlds 256 --control-steps 100 \
        --threads 1 --repeats 3 [--timestep 0.005] --json
    mujoco_bench.py --validate [--timestep 0.005] --json

Throughput (env-steps/s = control steps x worlds / s), measured like `s2r bench`
(host/cli_bench.cc): all worlds start from the model's initial state, take one untimed control
step, then --control-steps more are timed; the median of --repeats runs is reported (the first
step is deterministic, so it is taken once and every repeat restarts from its result).
Actions follow the same script, per world w, actuator i and control step k at t = k / control_hz:
    u_i(w, t) = mid_i + 0.5 * half_i * sin(2 pi 0.5 t + 0.1 w + i)
with mid/half the centre and half-width of the actuator's ctrlrange (0 and 1 if unlimited),
held over the control step (control_hz from the scene's s2r_control_hz, 50 Hz for the bench
scenes). The physics timestep is the file's (0.005 s) unless --timestep is given; MuJoCo runs
round(1 / (control_hz * timestep)) mj_steps per control step with its own defaults otherwise
(Newton solver, pyramidal cones, Euler integrator, as the files leave them).

How worlds are run: mujoco.rollout (MuJoCo's C++ batched rollout). Each world is an independent
open-loop trajectory from its own initial state with its own control sequence; the rollout keeps
one MjData per thread and runs whole trajectories (world-major), which is MuJoCo's fastest way to
step many independent worlds from Python. --threads 1 runs on the calling thread (nthread=0, no
pool); --threads T > 1 uses a pool of T threads (T = 0 means os.cpu_count()). Python threads over
mj_step would serialize on the interpreter and multiprocessing would add IPC; neither is used.
The controls are precomputed and the first control step is taken outside the timed region (one
MjData, world by world), its state and solver warm start (qacc_warmstart) handed to the rollout,
so only the rollout calls are timed (they also copy each step's state out: ~0.5 KB per world
step, small next to mj_step).

--validate: at the chosen timestep, whether MuJoCo passes the checks s2r's physics validation
applies (tests/host/physics_validation_test.cc): stack5 stands 10 s with every cube within 2 mm
of its start and within 1 degree of upright, and box_push's cube (actions zero) stays within
1 mm of its start (resting height) over 10 s. Prints one JSON line per check; for stack5 also
"standing" (the same without the vertical axis: nothing slides or tips, however far the contacts
settle). With --s2r-bin BIN the same checks run on `BIN rollout` trajectories instead, so both
engines are held to identical criteria.
"""
import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

try:
    import mujoco
    from mujoco import rollout as mj_rollout
except ImportError as e:  # pragma: no cover
    sys.exit(f"mujoco_bench.py: needs the mujoco Python package ({e})")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FULL = mujoco.mjtState.mjSTATE_FULLPHYSICS


def control_hz(model):
    for i in range(model.nnumeric):
        if mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_NUMERIC, i) == "s2r_control_hz":
            return float(model.numeric_data[model.numeric_adr[i]])
    return 50.0


def load(scene, timestep):
    model = mujoco.MjModel.from_xml_path(scene)
    if timestep:
        model.opt.timestep = timestep
    hz = control_hz(model)
    spc = round(1.0 / (hz * model.opt.timestep))
    if spc < 1 or abs(spc * model.opt.timestep * hz - 1) > 1e-6:
        sys.exit(f"mujoco_bench.py: timestep {model.opt.timestep} does not divide the "
                 f"control period 1/{hz} s")
    return model, hz, spc


def scripted_actions(model, hz, nworld, steps):
    """(nworld, len(steps), nu): the s2r bench action script."""
    nu = model.nu
    mid = np.zeros(nu)
    half = np.ones(nu)
    for i in range(nu):
        if model.actuator_ctrllimited[i]:
            lo, hi = model.actuator_ctrlrange[i]
            mid[i] = 0.5 * (lo + hi)
            half[i] = 0.5 * (hi - lo)
    t = np.asarray(steps, float) / hz
    w = np.arange(nworld, dtype=float)
    i = np.arange(nu, dtype=float)
    phase = 2 * math.pi * 0.5 * t[None, :, None] + 0.1 * w[:, None, None] + i[None, None, :]
    return mid + 0.5 * half * np.sin(phase)


def initial_qpos(model):
    """s2r's initial pose: the keyframe "home" when the scene has one (docs/mjcf_subset.md,
    <keyframe>), else qpos0 with the joints the scene's s2r_qpos0:<joint> numerics set."""
    home = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, "home")
    if home >= 0:
        return model.key_qpos[home].copy()
    qpos = model.qpos0.copy()
    for i in range(model.nnumeric):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_NUMERIC, i)
        if name.startswith("s2r_qpos0:"):
            j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name.split(":", 1)[1])
            qpos[model.jnt_qposadr[j]] = model.numeric_data[model.numeric_adr[i]]
    return qpos


def first_control_step(model, spc, ctrl0):
    """Every world from the model's initial state through its first control step (untimed), on
    one MjData: (states (nworld, nstate), qacc_warmstart (nworld, nv)), so the timed rollout
    starts with the solver warm start a continuing simulation would have (as s2r's does)."""
    data = mujoco.MjData(model)
    nworld = ctrl0.shape[0]
    states = np.empty((nworld, mujoco.mj_stateSize(model, FULL)))
    warm = np.empty((nworld, model.nv))
    for w in range(nworld):
        mujoco.mj_resetData(model, data)
        data.qpos[:] = initial_qpos(model)
        data.ctrl[:] = ctrl0[w]
        for _ in range(spc):
            mujoco.mj_step(model, data)
        mujoco.mj_getState(model, data, states[w], FULL)
        warm[w] = data.qacc_warmstart
    return states, warm


class Runner:
    """A mujoco.rollout pool and its per-thread MjData."""

    def __init__(self, model, threads):
        self.nthread = os.cpu_count() if threads == 0 else threads
        pool = 0 if self.nthread <= 1 else self.nthread
        self.pool = mj_rollout.Rollout(nthread=pool)
        self.datas = [mujoco.MjData(model) for _ in range(max(1, pool))]
        self.model = model

    def run(self, state0, warmstart0, control, memory_cap=256 << 20):
        """Rolls every world through `control` (nworld, nstep, nu) from its state and solver warm
        start; returns the final states. Worlds go in chunks so the recorded states stay under
        memory_cap."""
        nworld, nstep, _ = control.shape
        nstate = state0.shape[1]
        chunk = max(1, min(nworld, memory_cap // max(1, nstep * nstate * 8)))
        final = np.empty_like(state0)
        for a in range(0, nworld, chunk):
            b = min(nworld, a + chunk)
            states, _ = self.pool.rollout(self.model, self.datas, state0[a:b], control[a:b],
                                          initial_warmstart=warmstart0[a:b])
            final[a:b] = states[:, -1, :]
        return final

    def close(self):
        self.pool.close()


def bench(args):
    scene = args.scene
    model, hz, spc = load(scene, args.timestep)
    runner = Runner(model, args.threads)
    K, N = args.control_steps, args.worlds
    ctrl = scripted_actions(model, hz, N, range(K + 1))            # (N, K+1, nu)
    timed = np.repeat(ctrl[:, 1:, :], spc, axis=1)                  # control steps 1..K
    # the first control step is deterministic, so it is taken once; every repeat restarts from it
    state, warm = first_control_step(model, spc, ctrl[:, 0, :])
    seconds = []
    final = None
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        final = runner.run(state, warm, timed)
        seconds.append(time.perf_counter() - t0)
    runner.close()
    qpos = final[:, 1:1 + model.nq]
    nonfinite = int(np.sum(~np.all(np.isfinite(final), axis=1)))
    median = statistics.median(seconds)
    out = {
        "engine": "mujoco",
        "mujoco_version": mujoco.__version__,
        "scene": os.path.relpath(os.path.abspath(scene), REPO),
        "method": "mujoco.rollout",
        "worlds": N,
        "threads": runner.nthread,
        "control_steps": K,
        "repeats": args.repeats,
        "physics_steps_per_control": spc,
        "dt": model.opt.timestep,
        "control_hz": hz,
        "env_steps_per_s": N * K / median,
        "run_seconds": seconds,
        "nonfinite_worlds": nonfinite,
        "solver": ["pgs", "cg", "newton"][model.opt.solver],
        "integrator": ["euler", "rk4", "implicit", "implicitfast"][model.opt.integrator],
        "precision": "float64",
        "qpos_checksum": float(np.sum(qpos)),
    }
    print(json.dumps(out) if args.json else
          f"{out['scene']}  mujoco  worlds={N} threads={runner.nthread}  "
          f"{out['env_steps_per_s']:.0f} env-steps/s")


def trajectory_mujoco(scene, timestep, seconds):
    """{body: (pos (T, 3), quat (T, 4))} of one MuJoCo world at the control rate, actions zero."""
    model, hz, spc = load(scene, timestep)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    pos, quat = [data.xpos.copy()], [data.xquat.copy()]
    for _ in range(round(seconds * hz)):
        for _ in range(spc):
            mujoco.mj_step(model, data)
        pos.append(data.xpos.copy())
        quat.append(data.xquat.copy())
    pos, quat = np.array(pos), np.array(quat)
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(model.nbody)]
    return {n: (pos[:, b], quat[:, b]) for b, n in enumerate(names) if b > 0}, model.opt.timestep


def trajectory_s2r(scene, s2r_bin, seconds):
    """The same from `s2r rollout` (actions zero), and the file's timestep."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "traj.csv")
        subprocess.run([s2r_bin, "rollout", scene, "--duration", str(seconds), "--out", out],
                       check=True)
        with open(out) as f:
            reader = csv.reader(f)
            header = next(reader)
            data = np.array([[float(x) for x in row] for row in reader])
    col = {h: i for i, h in enumerate(header)}
    bodies = [h[:-3] for h in header if h.endswith(".px")]
    traj = {b: (data[:, [col[f"{b}.p{c}"] for c in "xyz"]],
                data[:, [col[f"{b}.q{c}"] for c in "wxyz"]]) for b in bodies}
    return traj, mujoco.MjModel.from_xml_path(scene).opt.timestep


def validate(args):
    """The checks of tests/host/physics_validation_test.cc on either engine."""
    seconds = 10.0
    engine = "s2r" if args.s2r_bin else "mujoco"

    def trajectory(name):
        scene = os.path.join(REPO, "configs/scenes", name)
        if args.s2r_bin:
            return trajectory_s2r(scene, args.s2r_bin, seconds)
        return trajectory_mujoco(scene, args.timestep, seconds)

    results = []
    # stack5: every cube within 2 mm of its start (each axis) and within 1 degree of upright
    traj, dt = trajectory("stack5.xml")
    cubes = [f"cube{k}" for k in range(5)]
    final = np.array([np.abs(traj[c][0][-1] - traj[c][0][0]) for c in cubes])
    worst = max(float(np.abs(traj[c][0] - traj[c][0][0]).max()) for c in cubes)
    tilt = max(float(np.degrees(2 * np.arccos(np.clip(np.abs(traj[c][1][:, 0]), 0, 1))).max())
               for c in cubes)
    results.append({
        "engine": engine, "check": "stack5_stands_10s", "dt": dt,
        "passed": bool(final.max() < 2e-3 and tilt < 1.0),
        # the same without the vertical axis: the stack stands, whatever its contacts settle by
        "standing": bool(final[:, :2].max() < 2e-3 and tilt < 1.0),
        "final_max_lateral_m": float(final[:, :2].max()),
        "final_max_vertical_m": float(final[:, 2].max()),
        "worst_displacement_m": worst,
        "worst_tilt_deg": tilt,
        "criterion": "after 10 s every cube within 2 mm of its start per axis, tilt < 1 deg",
    })
    # box_push: the cube at rest (zero actions, the pusher held at its start) within 1 mm over 10 s
    traj, dt = trajectory("box_push.xml")
    pos = traj["box"][0]
    results.append({
        "engine": engine, "check": "box_push_cube_rests_1mm", "dt": dt,
        "passed": bool(np.abs(pos - pos[0]).max() < 1e-3),
        "worst_displacement_m": float(np.abs(pos - pos[0]).max()),
        "resting_height_m": float(pos[-1, 2]),
        "criterion": "cube within 1 mm of its start (each axis) over 10 s, actions zero",
    })
    for r in results:
        print(json.dumps(r) if args.json else
              f"{r['engine']} {r['check']} dt={r['dt']}: {'PASS' if r['passed'] else 'FAIL'}")
    return all(r["passed"] for r in results)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scene", default=os.path.join(REPO, "configs/scenes/box_push.xml"))
    p.add_argument("--worlds", type=int, default=1024)
    p.add_argument("--control-steps", type=int, default=100)
    p.add_argument("--threads", type=int, default=1, help="1 = calling thread, 0 = all cores")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--timestep", type=float, default=None, help="override the file's timestep")
    p.add_argument("--json", action="store_true")
    p.add_argument("--validate", action="store_true",
                   help="run the physics validation checks instead of the benchmark")
    p.add_argument("--s2r-bin", default=None,
                   help="with --validate: check s2r (this binary, `s2r rollout`) instead of MuJoCo")
    args = p.parse_args()
    if args.validate:
        validate(args)
        return
    if args.worlds < 1 or args.control_steps < 1 or args.repeats < 1 or args.threads < 0:
        sys.exit("mujoco_bench.py: --worlds, --control-steps, --repeats must be >= 1, --threads >= 0")
    bench(args)


if __name__ == "__main__":
    main()
