#!/usr/bin/env bash
# Robot-arm benchmark: configs/scenes/test/arm7.xml (7-axis Panda-like arm, two finger slides, a
# box), s2r against MuJoCo, side by side in one run, single-threaded.
#
#   bench/run_arm_bench.sh [MACHINE]        (default dev-2core)
#
# Rows, each `s2r bench --backend cpu --threads 1` or bench/mujoco_bench.py (mujoco.rollout on the
# calling thread), the same scripted servo targets (host/cli_bench.cc's script), 50 Hz control:
#   s2r reduced   - the arm as an articulated tree (kernels/solver_tree.h), the file's 0.01 s step
#   s2r maximal   - the same file with s2r_reduce_trees 0: lock rows (the path before)
#   mujoco        - at 0.002 s (Menagerie's Panda timestep; its Euler there is about as accurate on
#                   this arm as s2r's 0.01 s step, see tests/python/test_mujoco_parity.py) and at
#                   the file's 0.01 s
# plus the gantry scenes (box_push, pick_lift) with this s2r and, when OLD_S2R names one, an older
# binary, to show they did not get slower.
# Writes bench/results/MACHINE/arm_bench.jsonl and arm_bench.md.
#
#   bench/run_arm_bench.sh MACHINE arms     (the published arms)
#
# Rows for Menagerie's UR5e (configs/robots/universal_robots_ur5e/scene.xml), the s2r Panda
# scene (configs/robots/franka_emika_panda/scene_s2r.xml), the UR5e with the Robotiq 2F-85
# (configs/robots/ur5e_2f85/scene.xml), builtin:panda_pick (configs/robots/panda_pick.xml: the MJX
# Panda over a table with three boxes) and a scene of mesh objects (tests/python/
# test_mesh_mujoco.py's: three STL hulls, a cylinder, an ellipsoid, one mesh on a table; 500 Hz
# control) and a quadruped on a floating base (configs/scenes/test/quadruped.xml), each at 64 and
# 256 worlds, 1 thread:
# s2r at the files' 0.002 s step and MuJoCo at the same 0.002 s, the same env-steps, both from the
# keyframe "home" (MuJoCo loads a copy without the mesh geoms: all are visual in these two files,
# and their mesh files are not shipped). Writes bench/results/MACHINE/arms_bench.jsonl and .md;
# the .md ends with arms_bench_notes.md beside it (hand-written notes per run, newest first).
# Environment: S2R_BIN (default build/s2r), OLD_S2R (optional), PYTHON (default .venv/bin/python),
# REPEATS (default 5), WORLDS (default 256; the arms suite runs 64 and 256).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
MACHINE="${1:-dev-2core}"
SUITE="${2:-arm7}"
S2R_BIN="${S2R_BIN:-build/s2r}"
PYTHON="${PYTHON:-.venv/bin/python}"
REPEATS="${REPEATS:-5}"
WORLDS="${WORLDS:-256}"
OLD_S2R="${OLD_S2R:-}"
OUT_DIR="bench/results/$MACHINE"
mkdir -p "$OUT_DIR"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
TMP="$WORK/results.jsonl"
cp "$S2R_BIN" "$WORK/s2r"
S2R="$WORK/s2r"
ARM=configs/scenes/test/arm7.xml
sed 's|<custom>|<custom>\n    <numeric name="s2r_reduce_trees" data="0"/>|' "$ARM" > "$WORK/arm7_maximal.xml"
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"

tag() { "$PYTHON" -c '
import json, sys
for line in sys.stdin:
    if line.strip():
        d = json.loads(line)
        d["label"] = sys.argv[1]
        print(json.dumps(d))' "$1"; }

s2r_row() {  # label binary scene steps
  "$2" bench --scene "$3" --worlds "$WORLDS" --control-steps "$4" --backend cpu --threads 1 \
    --repeats "$REPEATS" --json | tag "$1" >> "$TMP"
}
mj_row() {  # label scene steps timestep
  "$PYTHON" bench/mujoco_bench.py --scene "$2" --worlds "$WORLDS" --control-steps "$3" --threads 1 \
    --repeats "$REPEATS" --timestep "$4" --json | tag "$1" >> "$TMP"
}

if [[ "$SUITE" == arms ]]; then
  # MuJoCo's copies: the scenes without their (visual-only) mesh geoms and mesh assets
  "$PYTHON" bench/arms_bench.py strip "$WORK"
  for w in 64 256; do
    WORLDS=$w
    echo "== UR5e, Panda, UR5e + 2F-85, Panda pick, mesh objects, quadruped, $WORLDS worlds, 1 thread" >&2
    s2r_row "s2r ur5e $w" "$S2R" configs/robots/universal_robots_ur5e/scene.xml 50
    mj_row "mujoco ur5e $w" "$WORK/universal_robots_ur5e/scene.xml" 50 0.002
    s2r_row "s2r panda $w" "$S2R" configs/robots/franka_emika_panda/scene_s2r.xml 50
    mj_row "mujoco panda $w" "$WORK/franka_emika_panda/scene_s2r.xml" 50 0.002
    s2r_row "s2r ur5e_2f85 $w" "$S2R" configs/robots/ur5e_2f85/scene.xml 50
    mj_row "mujoco ur5e_2f85 $w" "$WORK/ur5e_2f85/scene.xml" 50 0.002
    s2r_row "s2r panda_pick $w" "$S2R" configs/robots/panda_pick.xml 50
    mj_row "mujoco panda_pick $w" "$WORK/panda_pick.xml" 50 0.002
    # 500 Hz control (the scene's s2r_control_hz): one physics step per control step
    s2r_row "s2r mesh_objects $w" "$S2R" "$WORK/mesh_objects/convex.xml" 500
    mj_row "mujoco mesh_objects $w" "$WORK/mesh_objects/convex.xml" 500 0.002
    # a floating base: the quadruped's free joint and eight leg hinges in one articulated tree
    s2r_row "s2r quadruped $w" "$S2R" configs/scenes/test/quadruped.xml 50
    mj_row "mujoco quadruped $w" configs/scenes/test/quadruped.xml 50 0.002
  done
  LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
  cat "$TMP" > "$OUT_DIR/arms_bench.jsonl"
  "$PYTHON" bench/arms_bench.py report "$OUT_DIR/arms_bench.jsonl" "$OUT_DIR/arms_bench.md" \
    "$MACHINE" "$LOAD_BEFORE" "$LOAD_AFTER"
  exit 0
fi

echo "== arm7, $WORLDS worlds, 1 thread" >&2
s2r_row "s2r reduced (0.01 s)" "$S2R" "$ARM" 100
s2r_row "s2r maximal (0.01 s)" "$S2R" "$WORK/arm7_maximal.xml" 20
mj_row "mujoco (0.002 s)" "$ARM" 40 0.002
mj_row "mujoco (0.01 s)" "$ARM" 100 0.01
echo "== gantry scenes" >&2
for scene in box_push pick_lift; do
  s2r_row "s2r $scene" "$S2R" "configs/scenes/$scene.xml" 200
  if [[ -n "$OLD_S2R" ]]; then s2r_row "s2r-old $scene" "$OLD_S2R" "configs/scenes/$scene.xml" 200; fi
done
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
cat "$TMP" > "$OUT_DIR/arm_bench.jsonl"

"$PYTHON" - "$OUT_DIR/arm_bench.jsonl" "$OUT_DIR/arm_bench.md" "$MACHINE" "$LOAD_BEFORE" "$LOAD_AFTER" "$WORLDS" <<'EOF'
import datetime, json, sys
jsonl, md, machine, load_before, load_after, worlds = sys.argv[1:]
rows = [json.loads(l) for l in open(jsonl)]
by = {r["label"]: r for r in rows}
out = [f"# Robot-arm benchmark: s2r vs MuJoCo ({machine})\n",
       f"Generated by `bench/run_arm_bench.sh {machine}` on {datetime.date.today()}; raw rows in "
       f"`arm_bench.jsonl`. {worlds} worlds, 1 thread, 50 Hz control, the bench's scripted servo "
       f"targets, median of the repeats. Load average before {load_before}, after {load_after} "
       "(the dev machine is shared: compare rows of one run, not runs).\n",
       "| row | physics step | env-steps/s | vs MuJoCo 0.002 s | spread |",
       "|---|---:|---:|---:|---:|"]
ref = by.get("mujoco (0.002 s)")
for label, r in by.items():
    t = sorted(r["run_seconds"])
    spread = (t[-1] - t[0]) / t[len(t) // 2]
    ratio = r["env_steps_per_s"] / ref["env_steps_per_s"] if ref and "arm" in r["scene"] else float("nan")
    out.append(f"| {label} | {r['dt']:g} s | {r['env_steps_per_s']:.0f} | "
               f"{'' if ratio != ratio else f'{ratio:.2f}x'} | {spread:.2f} |")
open(md, "w").write("\n".join(out) + "\n")
print("\n".join(out))
EOF
