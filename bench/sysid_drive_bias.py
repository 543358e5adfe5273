#!/usr/bin/env python3
"""Where does s2r sysid's bias on the linear drive come from? MuJoCo records the drive
(tests/python/sysid_recordings.py) with one thing changed at a time, `s2r sysid` fits each, and the
fitted values' errors are printed (docs/sysid.md, "Against MuJoCo's recordings").

Usage: bench/sysid_drive_bias.py [--s2r build/s2r] [--scene XML] [--window S] [VARIANT ...]
VARIANT: base nofl nodamp nodelay hardfl softfl rk4 fine clean (default: all). --scene replaces
configs/scenes/test/linear_drive.xml for both engines (MuJoCo ignores s2r's <custom> settings).
"""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "python"))

import mujoco  # noqa: E402
import sysid_recordings as rec  # noqa: E402

VARIANTS = {  # name: (description, truth changes, MjSpec changes)
    "base": ("as the bench makes it", {}, {}),
    "clean": ("noise 1e-6 m", {}, {"noise": 1e-6}),
    "nofl": ("friction loss 0", {"friction_loss": 0.0}, {}),
    "nodamp": ("damping 0", {"damping": 0.0}, {}),
    "nodelay": ("delay 0", {"delay": 0.0}, {}),
    "hardfl": ("solreffriction 0.004", {}, {"solref": [0.004, 1.0]}),
    "softfl": ("solreffriction 0.05", {}, {"solref": [0.05, 1.0]}),
    "rk4": ("integrator RK4", {}, {"integrator": mujoco.mjtIntegrator.mjINT_RK4}),
    "fine": ("MuJoCo timestep 0.2 ms", {}, {"timestep": 0.0002}),
}


def model(truth, solref=None, integrator=None, timestep=None):
    spec = mujoco.MjSpec.from_file(rec.DRIVE_XML)
    act = spec.actuator("drive")
    act.gainprm[0] = truth["kp"]
    act.biasprm[1] = -truth["kp"]
    joint = spec.joint("slide")
    joint.damping[0] = truth["damping"]
    joint.frictionloss = truth["friction_loss"]
    if solref is not None:
        joint.solref_friction = solref
    if integrator is not None:
        spec.option.integrator = integrator
    if timestep is not None:
        spec.option.timestep = timestep
    return spec.compile()


def run(s2r, name, window):
    what, changes, mj = VARIANTS[name]
    truth = dict(rec.DRIVE_TRUTH, **changes)
    mj = dict(mj)
    noise = mj.pop("noise", rec.DRIVE_NOISE)
    m = model(truth, **mj)
    d = tempfile.mkdtemp(prefix="s2r_bias_")
    for nm, seed in zip("abc", (1, 2, 3)):
        t, c, o, _ = rec.simulate(m, rec.steps_and_sine(seed), 8.0, rec.observe_slide, truth["delay"])
        rec.write_csv(os.path.join(d, nm + ".csv"), t, c, o, ["joint_qpos[slide]"], noise, 100 + seed)
    cfg = rec.drive_config(d, noise=noise, window_s=window)
    fit, wall = rec.run_s2r_sysid(s2r, cfg, os.path.join(d, "fit.json"))
    cells = []
    for p in ("kp", "damping", "friction_loss", "delay"):
        v, tr = rec.fitted(fit, p)["value"], truth[p]
        cells.append(f"{100 * (v - tr) / tr:+.2f}" if tr else f"({v:.3g})")
    print(f"| {what} | " + " | ".join(cells) + f" | {fit['residual_variance']:.3g} | {wall:.2f} |", flush=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    os.rmdir(d)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--s2r", default=os.path.join(os.path.dirname(HERE), "build", "s2r"))
    ap.add_argument("--scene", help="drive scene for both engines (default: linear_drive.xml)")
    ap.add_argument("--window", type=float, default=2.0, help="window.length_s (default 2)")
    ap.add_argument("variants", nargs="*", default=list(VARIANTS))
    a = ap.parse_args()
    if a.scene:
        rec.DRIVE_XML = os.path.abspath(a.scene)
    print("| MuJoCo recording | kp % | damping % | friction loss % | delay % | residual variance | s2r wall s |")
    print("|---|---|---|---|---|---|---|")
    for v in a.variants:
        run(a.s2r, v, a.window)


if __name__ == "__main__":
    main()
