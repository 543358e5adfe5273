"""Recordings for the cross-engine system-identification checks, made by MuJoCo.

Shared by tests/python/test_sysid_mujoco.py and bench/sysid_vs_mujoco.py. MuJoCo (default
settings: Euler integrator, pyramidal cones, condim 3, default solref/solimp) steps a scene from
configs/scenes/test/ with known ("truth") parameters; the recording is written in the layout
`s2r sysid` reads (solvers/sysid_config.cc):

  * a header row, a `time` column sampled every control period (50 Hz here, 10 physics steps of
    0.002 s), one `cmd` column (the commanded actuator) and one column per observed quantity;
  * sample 0 is the initial state; row k's command acts during [t_k, t_k+1) (after the delay, if
    any);
  * Gaussian noise of a stated standard deviation on every observed column, from a fixed seed.

The command delay of the linear drive is applied the way a real drive sees it: the command in force
at physics step j (starting at t_j = j h) is the 50 Hz command given `delay` seconds earlier (zero
order hold; zeros before the first one arrives, as s2r's latency buffer starts with zeros), so the
switch happens at the first physics step starting at or after k T + delay.
"""
import csv
import json
import math
import os
import subprocess

import mujoco
import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCENES = os.path.join(REPO, "configs", "scenes", "test")
DRIVE_XML = os.path.join(SCENES, "linear_drive.xml")
BOX_XML = os.path.join(SCENES, "box_slide.xml")

CONTROL_HZ = 50.0
PERIOD = 1.0 / CONTROL_HZ


# --- command profiles --------------------------------------------------------------------------

def steps_and_sine(seed, amplitude=0.2, hold=0.5):
    """Position targets: a new random level every `hold` s plus a slow sine (the drive moves at many
    speeds and stops, so damping and friction loss both show). Returns u(t)."""
    rng = np.random.default_rng(seed)
    levels = rng.uniform(-amplitude, amplitude, size=200)
    return lambda t: float(levels[int(t / hold) % len(levels)] + 0.3 * amplitude * math.sin(2.0 * t))


def pushes(seed, lo=4.0, hi=14.0, on=1.0, period=2.0):
    """Forces (N): a random push of lo..hi N for `on` s every `period` s, nothing in between (the box
    accelerates, slides and stops)."""
    rng = np.random.default_rng(seed)
    forces = rng.uniform(lo, hi, size=100)
    return lambda t: float(forces[int(t / period) % len(forces)] if math.fmod(t, period) < on else 0.0)


def one_push(force, duration):
    """One push of `force` N for `duration` s from t = 0, then nothing: the box slides to rest."""
    return lambda t: float(force if t < duration - 1e-9 else 0.0)


# --- MuJoCo models with the truth applied ------------------------------------------------------

def drive_model(kp, damping, frictionloss):
    """linear_drive.xml with the truth, compiled from an MjSpec (so every derived constant, e.g. the
    constraint weights, follows the new values)."""
    spec = mujoco.MjSpec.from_file(DRIVE_XML)
    act = spec.actuator("drive")
    act.gainprm[0] = kp
    act.biasprm[1] = -kp
    joint = spec.joint("slide")
    joint.damping[0] = damping  # MjsJoint.damping is a vector in mujoco 4 (per-dof)
    joint.frictionloss = frictionloss
    return spec.compile()


def box_model(mass, friction):
    """box_slide.xml with the truth, compiled from an MjSpec. (Writing MjModel.body_mass directly is
    not enough: MuJoCo's soft-constraint weights (body_invweight0) are computed at compile time and
    would keep the old mass; the friction then acts like a softer, weaker one.)"""
    spec = mujoco.MjSpec.from_file(BOX_XML)
    spec.geom("box").mass = mass  # the inertia follows, as s2r's body_mass target scales it
    for g in ("box", "floor"):
        spec.geom(g).friction[0] = friction
    return spec.compile()


# --- rollouts ------------------------------------------------------------------------------------

def simulate(model, command, duration, observe, delay=0.0):
    """Steps `model` from its initial state for `duration` s with the 50 Hz command u(t) (delayed by
    `delay` s on the physics-step grid). Returns (time[n], cmd[n], obs[n, k], ctrl_steps[N]) with
    n = duration * 50 + 1 samples (sample 0 = the initial state) and ctrl_steps the control in force
    at each of the N = (n - 1) * steps_per_control physics steps (what mujoco.sysid is given)."""
    d = mujoco.MjData(model)
    mujoco.mj_forward(model, d)
    h = model.opt.timestep
    spc = int(round(PERIOD / h))
    n = int(round(duration / PERIOD)) + 1
    time = np.arange(n) * PERIOD
    cmd = np.array([command(t) for t in time])
    obs = np.zeros((n, len(observe(model, d))))
    ctrl_steps = np.zeros((n - 1) * spc)
    for k in range(n):
        obs[k] = observe(model, d)
        if k == n - 1:
            break
        for s in range(spc):
            j = k * spc + s
            # the command given at t_j - delay: the sample index whose period holds it
            t = j * h - delay
            i = int(math.floor(t / PERIOD + 1e-9)) if t > -1e-12 else -1
            u = cmd[i] if i >= 0 else 0.0
            d.ctrl[0] = u
            ctrl_steps[j] = u
            mujoco.mj_step(model, d)
    return time, cmd, obs, ctrl_steps


def observe_slide(model, d):
    return [d.qpos[model.jnt_qposadr[model.joint("slide").id]]]


def observe_box_x(model, d):
    return [d.xpos[model.body("box").id][0]]


def write_csv(path, time, cmd, obs, columns, noise, seed):
    """Writes one recording with Gaussian noise (std `noise`, seed `seed`) on the observations.
    Returns the noisy observations."""
    rng = np.random.default_rng(seed)
    noisy = obs + noise * rng.standard_normal(obs.shape)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time", "cmd"] + list(columns))
        for k in range(len(time)):
            w.writerow([repr(float(time[k])), repr(float(cmd[k]))] + [repr(float(v)) for v in noisy[k]])
    return noisy


# --- the three problems ----------------------------------------------------------------------------

DRIVE_TRUTH = {"kp": 300.0, "damping": 8.0, "friction_loss": 3.0, "delay": 0.034}
DRIVE_NOISE = 5e-4  # m
BOX_PUSH_TRUTH = {"mass": 1.3, "friction": 0.55}
BOX_SLIDE_TRUTH = {"friction": 0.3}
BOX_NOISE = 5e-4  # m


def drive_recordings(folder, truth=DRIVE_TRUTH, noise=DRIVE_NOISE, duration=8.0, seeds=(1, 2, 3)):
    """Three 8 s recordings of the linear drive (a.csv, b.csv train; c.csv held out). Returns a list
    of dicts (path, time, cmd, obs (noisy), ctrl_steps) for the benchmark."""
    model = drive_model(truth["kp"], truth["damping"], truth["friction_loss"])
    out = []
    for name, seed in zip(("a", "b", "c"), seeds):
        time, cmd, obs, ctrl = simulate(model, steps_and_sine(seed), duration, observe_slide, truth["delay"])
        path = os.path.join(str(folder), name + ".csv")
        noisy = write_csv(path, time, cmd, obs, ["joint_qpos[slide]"], noise, 100 + seed)
        out.append({"path": path, "time": time, "cmd": cmd, "obs": noisy, "clean": obs, "ctrl_steps": ctrl})
    return out


def box_push_recordings(folder, truth=BOX_PUSH_TRUTH, noise=BOX_NOISE, duration=6.0, seeds=(1, 2)):
    """Two 6 s recordings of the box pushed by 10..16 N for 0.25 s every 1 s (a.csv train, b.csv held
    out). Short pushes keep the box below ~3.5 m/s: pushed longer and faster (the host test's 4..14 N
    for 1 s reach 6-7 m/s) MuJoCo's box rocks on its soft contacts (pitch rates of 20-50 rad/s,
    hops of 4 cm) and no rigid-contact model follows it."""
    model = box_model(truth["mass"], truth["friction"])
    out = []
    for name, seed in zip(("a", "b"), seeds):
        time, cmd, obs, ctrl = simulate(model, pushes(seed, 10.0, 16.0, 0.25, 1.0), duration, observe_box_x)
        path = os.path.join(str(folder), name + ".csv")
        noisy = write_csv(path, time, cmd, obs, ["body_pos[box].x"], noise, 200 + seed)
        out.append({"path": path, "time": time, "cmd": cmd, "obs": noisy, "clean": obs, "ctrl_steps": ctrl})
    return out


def box_slide_recordings(folder, truth=BOX_SLIDE_TRUTH, noise=BOX_NOISE, duration=2.5,
                         pushes_n=((12.0, 0.25), (8.0, 0.3))):
    """The box (1 kg, as in the scene) given one short push, then sliding to rest: one recording per
    (force N, push s) (a.csv train, b.csv held out)."""
    model = box_model(1.0, truth["friction"])
    out = []
    for k, (name, (force, dur)) in enumerate(zip(("a", "b"), pushes_n)):
        time, cmd, obs, ctrl = simulate(model, one_push(force, dur), duration, observe_box_x)
        path = os.path.join(str(folder), name + ".csv")
        noisy = write_csv(path, time, cmd, obs, ["body_pos[box].x"], noise, 300 + k)
        out.append({"path": path, "time": time, "cmd": cmd, "obs": noisy, "clean": obs, "ctrl_steps": ctrl})
    return out


# --- s2r sysid configs and runs ------------------------------------------------------------------

def drive_config(folder, initial=None, noise=DRIVE_NOISE, fit_delay=True, delay=None, window_s=2.0):
    """The linear drive's sysid config: kp, damping, friction loss (and the delay) free, mass known.
    2 s windows: each window's start state (position, rate) is two more free values, and with 1 s
    windows (16 of them) those cost the fit information it needs at the 0.1% level (kp, damping
    and friction loss within 0.25% instead of 0.15% on the benchmark's seeds)."""
    init = {"kp": 150.0, "damping": 3.0, "friction_loss": 1.0, "delay": 0.01}
    init.update(initial or {})
    lines = [
        f"scene: {DRIVE_XML}",
        "parameters:",
        f"  - {{name: kp, targets: [\"actuator_kp[drive]\"], initial: {init['kp']}, bounds: [10, 2000], scale: log}}",
        f"  - {{name: damping, targets: [\"joint_damping[slide]\"], initial: {init['damping']}, bounds: [0, 100]}}",
        f"  - {{name: friction_loss, targets: [\"joint_frictionloss[slide]\"], initial: {init['friction_loss']}, "
        "bounds: [0, 50]}",
    ]
    if fit_delay:
        lines.append(f"  - {{name: delay, targets: [latency], initial: {init['delay']}, bounds: [0, 0.1]}}")
    lines += [
        "data:",
        "  train: [a.csv, b.csv]",
        "  held_out: [c.csv]",
        "actions: {drive: cmd}",
        "observations:",
        f"  - {{quantity: \"joint_qpos[slide]\", noise: {noise}}}",
        f"window: {{length_s: {window_s}}}",
    ]
    path = os.path.join(str(folder), "drive.yaml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def box_config(folder, params, noise=BOX_NOISE, window_s=2.0, name="box.yaml"):
    """A box sysid config; params: YAML flow mappings of the free parameters."""
    lines = [f"scene: {BOX_XML}", "parameters:"] + [f"  - {p}" for p in params] + [
        "data: {train: [a.csv], held_out: [b.csv]}",
        "actions: {push_x: cmd}",
        "observations:",
        f"  - {{quantity: \"body_pos[box].x\", noise: {noise}}}",
        f"window: {{length_s: {window_s}}}",
    ]
    path = os.path.join(str(folder), name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def run_s2r_sysid(s2r_bin, config, out_json, threads=2, timeout=300):
    """`s2r sysid CONFIG --out OUT --threads T --quiet` -> (fit dict, wall s of the process)."""
    import time as _time
    cmd = [s2r_bin, "sysid", str(config), "--out", str(out_json), "--threads", str(threads), "--quiet"]
    t0 = _time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    wall = _time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    with open(out_json) as f:
        return json.load(f), wall


def fitted(fit, name):
    for p in fit["parameters"]:
        if p["name"] == name:
            return p
    raise KeyError(name)
