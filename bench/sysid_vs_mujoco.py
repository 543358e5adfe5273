#!/usr/bin/env python3
"""s2r sysid side by side with MuJoCo's own mujoco.sysid on the cross-engine problems.

MuJoCo makes the recordings (tests/python/sysid_recordings.py: known parameters, Gaussian noise
from fixed seeds); both tools start from the same wrong values with the same bounds, on 2 threads,
and the fitted values are compared with the truth. The problems:

  * linear_drive: kp, damping, friction loss (and the 34 ms command delay for s2r) from three 8 s
    recordings at 50 Hz with a 2 ms timestep, 2 train + 1 held out (mujoco.sysid uses the 2 train
    recordings). mujoco.sysid has no delay parameter: it is given the truth delay, i.e. the
    control in force at every physics step, shifted exactly as the recordings were made.
  * box_push: box mass and friction (box and floor), one 6 s train recording.
  * box_slide: friction only, one 2.5 s train recording.

mujoco.sysid runs as its documentation shows: single shooting over each whole recording from the
recording's true initial state (noise-free; s2r starts its windows from the noisy samples), the
default "mujoco" least-squares backend (batched finite differences through mujoco.rollout with
n_threads=2 MjData), residuals whitened by the stated noise (a modify_residual that samples the
simulated state at the recording's 50 Hz times). s2r runs `s2r sysid CONFIG --threads 2 --quiet`
(multiple shooting; 2 s windows on the drive, 1 s on the boxes). The drive's scene asks s2r to
step as MuJoCo does there (soft friction loss, one substep, explicit servo spring: docs/physics.md).
Wall time is the whole call (s2r: the process, including loading
the scene and recordings; mujoco.sysid: optimize()). Both use the same initial values and bounds.

Usage: bench/sysid_vs_mujoco.py [--s2r build/s2r] [--out bench/results/dev-2core/sysid_vs_mujoco.md]
                                [--repeats 3]
Needs the mujoco[sysid] extras in .venv (scipy, absl-py, colorama, tabulate:
tests/python/requirements.txt).
"""
import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "python"))

import mujoco  # noqa: E402
import numpy as np  # noqa: E402
import sysid_recordings as rec  # noqa: E402

try:
    from absl import logging as absl_logging  # noqa: E402
    from mujoco import sysid  # noqa: E402
    from mujoco.sysid._src import parameter as _sysid_parameter  # noqa: E402,F401
    sysid.optimize  # noqa: B018  (the package swallows missing extras; this raises then)
except (ImportError, AttributeError) as e:
    sys.exit(f"mujoco.sysid is not usable ({e}); install the mujoco[sysid] extras: "
             ".venv/bin/pip install -r tests/python/requirements.txt")

THREADS = 2

# mujoco.sysid backends. The default ("mujoco", unscaled) stops after 0 iterations on both box
# problems ("insufficient reduction": the cost's curvature in friction and mass is badly scaled), so
# it runs with x_scale="jac", the remedy optimize()'s own conditioning warning names; scipy's
# least_squares (2-point differences) is the other backend it ships.
MJ_BACKENDS = (("mujoco.sysid (mujoco, x_scale=jac)", {"optimizer": "mujoco", "x_scale": "jac"}),
               ("mujoco.sysid (scipy)", {"optimizer": "scipy"}))


# --- mujoco.sysid -------------------------------------------------------------------------------

def whitened_residual(noise, observe_col):
    """modify_residual: simulated state sampled at the recording's times (k >= 1), minus the recorded
    value, over the stated noise. The rollout's state row j is the state after physics step j,
    at time (j + 1) h; sample k sits at k T = (k spc - 1 + 1) h."""
    def fn(params, pred_sensordata, measured_sensordata, model, return_pred_all, state=None, **_):
        del params, return_pred_all
        h = model.opt.timestep
        spc = int(round(rec.PERIOD / h))
        meas = measured_sensordata.data[1:, 0]
        idx = np.arange(1, len(meas) + 1) * spc - 1
        pred = state[idx, 1 + observe_col]
        res = (pred - meas) / noise
        ts_pred = sysid.TimeSeries(measured_sensordata.times[1:], pred[:, None], measured_sensordata.signal_mapping)
        ts_meas = sysid.TimeSeries(measured_sensordata.times[1:], meas[:, None], measured_sensordata.signal_mapping)
        return res, ts_pred, ts_meas
    return fn


def mujoco_sysid(xml, recordings, params_spec, noise, observe_col, initial_state, **opt_kwargs):
    """params_spec: [(name, initial, lo, hi, modifier(spec, value))]. Returns ({name: value}, wall s,
    nfev)."""
    spec = mujoco.MjSpec.from_file(xml)
    model = spec.compile()
    params = sysid.ParameterDict()
    for name, init, lo, hi, mod in params_spec:
        params.add(sysid.Parameter(name, nominal=init, min_value=lo, max_value=hi,
                                   modifier=lambda s, p, mod=mod: mod(s, p.value[0])))
    h = model.opt.timestep
    controls, sensors, states = [], [], []
    mapping = {"obs": (sysid.SignalType.CustomObs, np.array([0]))}
    for r in recordings:
        # one control per physics step; sysid_rollout drops the last control of a series (it would
        # only make the state after the last sample), so the last one is repeated
        ctrl = np.append(r["ctrl_steps"], r["ctrl_steps"][-1])
        controls.append(sysid.TimeSeries(np.arange(len(ctrl)) * h, ctrl[:, None]))
        sensors.append(sysid.TimeSeries(r["time"], r["obs"][:, :1], mapping))
        states.append(initial_state(model))
    ms = sysid.ModelSequences("problem", spec, [f"r{i}" for i in range(len(recordings))], states, controls, sensors,
                              allow_missing_sensors=True)
    calls = [0]
    inner = sysid.build_residual_fn(models_sequences=[ms], modify_residual=whitened_residual(noise, observe_col),
                                    n_threads=THREADS)

    def counted(x, p, **kw):
        calls[0] += 1 if np.ndim(x) == 1 else np.shape(x)[1]
        return inner(x, p, **kw)

    t0 = time.perf_counter()
    opt, _ = sysid.optimize(initial_params=params, residual_fn=counted, verbose=False, **opt_kwargs)
    wall = time.perf_counter() - t0
    return {name: float(opt[name].value[0]) for name, *_ in params_spec}, wall, calls[0]


def zero_state(model):
    d = mujoco.MjData(model)
    mujoco.mj_forward(model, d)
    return sysid.create_initial_state(model, d.qpos, d.qvel, d.act)


def set_kp(s, v):
    s.actuator("drive").gainprm[0] = v
    s.actuator("drive").biasprm[1] = -v


def set_damping(s, v):
    s.joint("slide").damping[0] = v


def set_frictionloss(s, v):
    s.joint("slide").frictionloss = v


def set_mass(s, v):
    s.geom("box").mass = v


def set_friction(s, v):
    s.geom("box").friction[0] = v
    s.geom("floor").friction[0] = v


# --- the problems ---------------------------------------------------------------------------------

DRIVE_INIT = {"kp": 150.0, "damping": 3.0, "friction_loss": 1.0, "delay": 0.01}
DRIVE_BOUNDS = {"kp": (10.0, 2000.0), "damping": (0.0, 100.0), "friction_loss": (0.0, 50.0)}


def problems(folder):
    out = []
    d = os.path.join(folder, "drive")
    os.makedirs(d)
    recs = rec.drive_recordings(d)
    out.append({
        "problem": "linear_drive", "truth": rec.DRIVE_TRUTH, "s2r_config": rec.drive_config(d, DRIVE_INIT),
        "mj": lambda kw, recs=recs: mujoco_sysid(rec.DRIVE_XML, recs[:2], [
            ("kp", DRIVE_INIT["kp"], *DRIVE_BOUNDS["kp"], set_kp),
            ("damping", DRIVE_INIT["damping"], *DRIVE_BOUNDS["damping"], set_damping),
            ("friction_loss", DRIVE_INIT["friction_loss"], *DRIVE_BOUNDS["friction_loss"], set_frictionloss),
        ], rec.DRIVE_NOISE, 0, zero_state, **kw),
        "mj_note": "delay given (0.034 s)",
    })
    d = os.path.join(folder, "box_push")
    os.makedirs(d)
    recs = rec.box_push_recordings(d)
    out.append({
        "problem": "box_push", "truth": rec.BOX_PUSH_TRUTH,
        "s2r_config": rec.box_config(d, [
            '{name: mass, targets: ["body_mass[box]"], initial: 0.8, bounds: [0.1, 10], scale: log}',
            '{name: friction, targets: ["geom_friction[box, floor]"], initial: 0.3, bounds: [0.01, 2]}'], window_s=1.0),
        "mj": lambda kw, recs=recs: mujoco_sysid(rec.BOX_XML, recs[:1], [
            ("mass", 0.8, 0.1, 10.0, set_mass), ("friction", 0.3, 0.01, 2.0, set_friction),
        ], rec.BOX_NOISE, 0, zero_state, **kw),
        "mj_note": "",
    })
    d = os.path.join(folder, "box_slide")
    os.makedirs(d)
    recs = rec.box_slide_recordings(d)
    out.append({
        "problem": "box_slide", "truth": rec.BOX_SLIDE_TRUTH,
        "s2r_config": rec.box_config(d, [
            '{name: friction, targets: ["geom_friction[box, floor]"], initial: 0.6, bounds: [0.01, 2]}'], window_s=1.0),
        "mj": lambda kw, recs=recs: mujoco_sysid(rec.BOX_XML, recs[:1], [("friction", 0.6, 0.01, 2.0, set_friction)],
                                             rec.BOX_NOISE, 0, zero_state, **kw),
        "mj_note": "",
    })
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--s2r", default=os.path.join(REPO, "build", "s2r"))
    ap.add_argument("--out", default=os.path.join(HERE, "results", "dev-2core", "sysid_vs_mujoco.md"))
    ap.add_argument("--repeats", type=int, default=3, help="runs of each tool; the median wall time is reported")
    args = ap.parse_args()
    absl_logging.set_verbosity(absl_logging.ERROR)

    rows, summary = [], []
    with tempfile.TemporaryDirectory(prefix="sysid_vs_mujoco.") as tmp:
        for p in problems(tmp):
            walls = {"s2r sysid": []}
            vals, extras = {}, {}
            for _ in range(args.repeats):
                fit, wall = rec.run_s2r_sysid(args.s2r, p["s2r_config"], os.path.join(tmp, "fit.json"), THREADS)
                walls["s2r sysid"].append(wall)
                vals["s2r sysid"] = {q["name"]: q["value"] for q in fit["parameters"]}
                extras["s2r sysid"] = f"{fit['iterations']} iterations, {fit['rollouts']} window rollouts"
                for tool, kw in MJ_BACKENDS:
                    v, w, nfev = p["mj"](kw)
                    walls.setdefault(tool, []).append(w)
                    vals[tool] = v
                    extras[tool] = f"{nfev} trajectory rollouts" + (f"; {p['mj_note']}" if p["mj_note"] else "")
            med = {t: float(np.median(w)) for t, w in walls.items()}
            worst = {}
            for tool in walls:
                errs = []
                for name, truth in p["truth"].items():
                    if name not in vals[tool]:
                        rows.append((p["problem"], tool, name, truth, None, None, med[tool], "not fitted (given)"))
                        continue
                    v = vals[tool][name]
                    err = 100 * (v - truth) / truth
                    if name != "delay":
                        errs.append(abs(err))
                    rows.append((p["problem"], tool, name, truth, v, err, med[tool], extras[tool]))
                worst[tool] = max(errs)
            summary.append((p["problem"], med, worst))
            print(p["problem"], {t: ["%.2f" % x for x in w] for t, w in walls.items()}, flush=True)

    s2r_version = subprocess.run([args.s2r, "--version"], capture_output=True, text=True).stdout.strip() or "?"
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    load = os.getloadavg()
    lines = [
        "# s2r sysid vs mujoco.sysid (dev-2core)",
        "",
        "Generated by `bench/sysid_vs_mujoco.py`; the recordings come from MuJoCo with known parameters "
        "(tests/python/sysid_recordings.py), both tools start from the same wrong values and bounds on 2 threads. "
        "Wall time: median of %d runs of each tool (s2r: the whole `s2r sysid` process; mujoco.sysid: `optimize()`)." % args.repeats,
        "",
        "| problem | tool | parameter | truth | fitted | error % | wall s | notes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for prob, tool, name, truth, v, err, wall, extra in rows:
        lines.append("| %s | %s | %s | %g | %s | %s | %.2f | %s |" % (
            prob, tool, name, truth, "—" if v is None else "%.5g" % v, "—" if err is None else "%+.2f" % err, wall, extra))
    lines += ["", "| problem | tool | wall s | s2r time / this tool's | worst error %, delay excluded |", "|---|---|---|---|---|"]
    for prob, med, worst in summary:
        for tool in med:
            lines.append("| %s | %s | %.2f | %.2f | %.2f |" % (prob, tool, med[tool], med["s2r sysid"] / med[tool], worst[tool]))
    lines += [
        "",
        "Versions: %s (commit %s, Release, float32, CPU), mujoco %s (Python %s), numpy %s; %s, %d cores; "
        "load average %.2f %.2f %.2f at the end." % (
            s2r_version, commit, mujoco.__version__, platform.python_version(), np.__version__,
            platform.platform(), os.cpu_count() or 0, *load),
        "",
        "Command: `OMP_NUM_THREADS=2 .venv/bin/python bench/sysid_vs_mujoco.py --s2r build/s2r --repeats %d`" % args.repeats,
        "(s2r runs as `s2r sysid CONFIG --out fit.json --threads 2 --quiet`; mujoco.sysid as "
        "`sysid.optimize(params, residual_fn, optimizer=\"mujoco\", x_scale=\"jac\")` and `optimizer=\"scipy\"`, "
        "both with `build_residual_fn(n_threads=2, modify_residual=<whitened, sampled at 50 Hz>)`).",
    ]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
