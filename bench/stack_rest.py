#!/usr/bin/env python3
"""Is a resting stack at rest? The speeds of configs/scenes/stack5.xml's five cubes, s2r against MuJoCo.

    bench/stack_rest.py [--s2r build/s2r] [--duration 6] [--report bench/results/MACHINE/stack_rest.md]

Five 10 cm cubes stacked exactly touching on the floor should come to rest. For each setting below,
`s2r rollout` steps the scene (one world, no actions) for --duration seconds and the table gives each
cube's largest speed (linear, mm/s) over the second half, from the trajectory CSV's 50 Hz samples;
MuJoCo steps the same file at its own timestep (0.01 s, its defaults otherwise). The settings vary
what the scene's <custom> block says: the substeps (the file's 4, 5, 8), the contact stiffness
(s2r_contact_hertz; at 4 substeps of 2.5 ms the solver caps it at a quarter of the substep rate,
100 Hz) and the contact damping ratio (s2r_contact_damping_ratio, default 10). A cube resting
within 0.1 mm/s is still; tens of mm/s at the top is the stack vibrating in place (its positions
stay within the validation test's 2 mm). Writes the table to --report (stdout without it).
"""
import argparse
import csv
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCENE = ROOT / "configs" / "scenes" / "stack5.xml"
FILE_SUBSTEPS = '<numeric name="s2r_substeps" data="4"/>'

SETTINGS = [  # (label, what replaces the file's s2r_substeps line)
    ("the file: 4 substeps, 120 Hz (capped at 100), damping ratio 10", FILE_SUBSTEPS),
    ("5 substeps", '<numeric name="s2r_substeps" data="5"/>'),
    ("8 substeps", '<numeric name="s2r_substeps" data="8"/>'),
    ("4 substeps, 80 Hz", FILE_SUBSTEPS + '<numeric name="s2r_contact_hertz" data="80"/>'),
    ("4 substeps, 60 Hz", FILE_SUBSTEPS + '<numeric name="s2r_contact_hertz" data="60"/>'),
    ("4 substeps, damping ratio 2", FILE_SUBSTEPS + '<numeric name="s2r_contact_damping_ratio" data="2"/>'),
    ("4 substeps, damping ratio 5", FILE_SUBSTEPS + '<numeric name="s2r_contact_damping_ratio" data="5"/>'),
    ("4 substeps, damping ratio 20", FILE_SUBSTEPS + '<numeric name="s2r_contact_damping_ratio" data="20"/>'),
]
CUBES = [f"cube{i}" for i in range(5)]


def s2r_speeds(s2r, xml, duration, tmp):
    scene = tmp / "stack.xml"
    scene.write_text(xml)
    out = tmp / "traj.csv"
    proc = subprocess.run([s2r, "rollout", str(scene), "--duration", repr(duration), "--out", str(out)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"s2r rollout failed:\n{proc.stderr}")
    with open(out) as f:
        rows = list(csv.reader(f))
    col = {name: i for i, name in enumerate(rows[0])}
    data = [[float(x) for x in r] for r in rows[1:]]
    half = [r for r in data if r[col["time"]] >= 0.5 * duration]
    return [max((sum(r[col[f"{c}.v{a}"]] ** 2 for a in "xyz")) ** 0.5 for r in half) for c in CUBES]


def mujoco_speeds(duration):
    import mujoco
    import numpy as np
    model = mujoco.MjModel.from_xml_path(str(SCENE))
    data = mujoco.MjData(model)
    ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, c) for c in CUBES]
    worst = [0.0] * len(CUBES)
    v = np.zeros(6)
    steps = round(duration / model.opt.timestep)
    for k in range(steps):
        mujoco.mj_step(model, data)
        if k >= steps // 2:
            for i, b in enumerate(ids):
                mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, b, v, 0)
                worst[i] = max(worst[i], float(np.linalg.norm(v[3:])))
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--s2r", default=str(ROOT / "build" / "s2r"))
    ap.add_argument("--duration", type=float, default=6.0)
    ap.add_argument("--report")
    a = ap.parse_args()
    text = SCENE.read_text()
    if FILE_SUBSTEPS not in text:
        sys.exit(f"{SCENE}: no line {FILE_SUBSTEPS} to vary")
    lines = ["| engine, setting | " + " | ".join(CUBES) + " |", "|---|" + "---:|" * len(CUBES)]
    with tempfile.TemporaryDirectory() as tmp:
        for label, custom in SETTINGS:
            speeds = s2r_speeds(a.s2r, text.replace(FILE_SUBSTEPS, custom), a.duration, pathlib.Path(tmp))
            lines.append(f"| s2r, {label} | " + " | ".join(f"{1e3 * s:.2f}" for s in speeds) + " |")
    try:
        speeds = mujoco_speeds(a.duration)
        lines.append("| MuJoCo, the file (0.01 s) | " + " | ".join(f"{1e3 * s:.2f}" for s in speeds) + " |")
    except ImportError:
        lines.append("| MuJoCo | not installed |")
    table = "\n".join(lines)
    head = (f"# Resting stack: largest speed over the second half of {a.duration:g} s (mm/s)\n\n"
            f"`bench/stack_rest.py` (configs/scenes/stack5.xml, one world, no actions; what each setting "
            f"changes is in the script's docstring).\n\n")
    if a.report:
        pathlib.Path(a.report).write_text(head + table + "\n")
    print(table)


if __name__ == "__main__":
    main()
