"""Published robot models (configs/robots) in MuJoCo and in s2r: the same file, the same system.

The MJX Panda as s2r runs it (configs/robots/franka_emika_panda/mjx_panda_s2r.xml, written by
configs/robots/trim_panda.py from Menagerie's mjx_panda.xml: no <equality>, two finger servos) is
loaded by the venv's MuJoCo and by s2r (`s2r inspect --fields --json`, `s2r rollout`) and
compared: sizes, body masses, joint ranges, actuator gains, ranges and the starting keyframe, then
a 0.5 s servo hold from "home".

MuJoCo needs the mesh files the model names, and Menagerie's binary meshes are not shipped here.
Every mesh geom of this model is visual or a contype = conaffinity = 0 collision mesh in a body
with an explicit <inertial>, so it changes nothing in the dynamics (s2r skips them with a note:
host/scene/mjcf_visual.h); the MuJoCo side loads a copy with the <mesh> assets and mesh geoms
removed. test_stripped_copy_drops_only_mesh_geoms checks that nothing else is removed.
"""
import os
import pathlib
import re
import subprocess

import pytest

mujoco = pytest.importorskip("mujoco")
np = pytest.importorskip("numpy")

from robot_util import (ABS_TOL, HAVE_S2R, REL_TOL, ROBOTS, S2R_BIN, SKIP_REASON,  # noqa: E402,F401
                        s2r_fields, strip_meshes)

PANDA_DIR = os.path.join(ROBOTS, "franka_emika_panda")
SCENE = os.path.join(PANDA_DIR, "scene_s2r.xml")

if not HAVE_S2R:
    pytest.skip(SKIP_REASON, allow_module_level=True)


@pytest.fixture()
def mujoco_scene(tmp_path):
    """A copy of the scene and robot files, meshes stripped, for MuJoCo."""
    for name in ("scene_s2r.xml", "mjx_panda_s2r.xml"):
        with open(os.path.join(PANDA_DIR, name)) as f:
            (tmp_path / name).write_text(strip_meshes(f.read()))
    return str(tmp_path / "scene_s2r.xml")


def test_stripped_copy_drops_only_mesh_geoms():
    with open(os.path.join(PANDA_DIR, "mjx_panda_s2r.xml")) as f:
        text = f.read()
    stripped = strip_meshes(text)
    assert "mesh=" not in stripped and "<mesh " not in stripped
    # every primitive geom survives: 4 fingertip pads per finger and the hand capsule
    n_geoms = len(re.findall(r"<geom ", stripped)) - len(re.findall(r"<geom ", stripped.split("<worldbody>")[0]))
    assert n_geoms == 9


def test_panda_model_matches_mujoco(mujoco_scene):
    mj = mujoco.MjModel.from_xml_path(mujoco_scene)
    report, fields = s2r_fields(SCENE)
    name = lambda kind, i: mujoco.mj_id2name(mj, kind, i)

    # sizes: every MuJoCo joint is a hinge or slide here, so nq = nv = njnt; s2r adds an unnamed
    # weld joint for the jointless hand, and no body or joint more
    assert (mj.nq, mj.nv, mj.nu) == (9, 9, 9)
    assert report["counts"]["actuators"] == mj.nu
    assert report["counts"]["bodies"] == mj.nbody
    s2r_joints = {p["entity"] for p in report["parameters"] if p["field"] == "joint_range"}
    mj_joints = {name(mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(mj.njnt)}
    assert {j for j in s2r_joints if not j.startswith("#")} == mj_joints  # "#7": the weld

    # body masses and principal inertias
    for b in range(1, mj.nbody):
        body = name(mujoco.mjtObj.mjOBJ_BODY, b)
        assert fields[f"body_mass[{body}]"][0] == pytest.approx(mj.body_mass[b], rel=REL_TOL), body
        assert sorted(fields[f"body_inertia[{body}]"]) == pytest.approx(
            sorted(mj.body_inertia[b]), rel=1e-5, abs=1e-9), body

    # joint ranges (rad / m), damping, armature
    for j in range(mj.njnt):
        joint = name(mujoco.mjtObj.mjOBJ_JOINT, j)
        assert bool(mj.jnt_limited[j])
        assert fields[f"joint_range[{joint}]"] == pytest.approx(list(mj.jnt_range[j]), abs=ABS_TOL)
        dof = mj.jnt_dofadr[j]
        assert fields[f"joint_damping[{joint}]"][0] == pytest.approx(mj.dof_damping[dof], rel=REL_TOL)
        assert fields[f"joint_armature[{joint}]"][0] == pytest.approx(mj.dof_armature[dof], rel=REL_TOL)

    # actuators: every one is a position servo, gain kp and bias (0, -kp, -kv)
    for a in range(mj.nu):
        act = name(mujoco.mjtObj.mjOBJ_ACTUATOR, a)
        kp, kv = fields[f"actuator_kp[{act}]"][0], fields[f"actuator_kv[{act}]"][0]
        assert kp == pytest.approx(mj.actuator_gainprm[a, 0], rel=REL_TOL), act
        assert -kp == pytest.approx(mj.actuator_biasprm[a, 1], rel=REL_TOL), act
        assert -kv == pytest.approx(mj.actuator_biasprm[a, 2], rel=REL_TOL), act
        assert fields[f"actuator_forcerange[{act}]"] == pytest.approx(
            list(mj.actuator_forcerange[a]), abs=ABS_TOL), act
        assert fields[f"actuator_ctrlrange[{act}]"] == pytest.approx(
            list(mj.actuator_ctrlrange[a]), abs=ABS_TOL), act

    # the starting state is the keyframe "home"
    key = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_KEY, "home")
    for j in range(mj.njnt):
        joint = name(mujoco.mjtObj.mjOBJ_JOINT, j)
        assert fields[f"joint_qpos0[{joint}]"][0] == pytest.approx(
            mj.key_qpos[key, mj.jnt_qposadr[j]], abs=ABS_TOL), joint


def test_panda_holds_home_like_mujoco(mujoco_scene, tmp_path):
    """0.5 s servo hold from "home" (ctrl = the key's ctrl) in both engines at the file's 2 ms.

    Under gravity the position servos give way (gravity torque / kp, and joint 5-7 servos saturate
    at their 12 N m force range): the hand sags about 32 mm in 0.5 s, in both engines. The
    tolerances: every body origin within 2 mm of MuJoCo's and every body frame within 5 mrad of it
    at every 20 ms sample, and within 0.5 mm / 5 mrad at 0.5 s. (Measured: 0.40 mm / 0.74 mrad
    worst, 0.03 mm / 0.47 mrad at the end; s2r solves joints as soft maximal-coordinate
    constraints, MuJoCo in generalized coordinates.)
    """
    duration = 0.5
    out = tmp_path / "traj.csv"
    proc = subprocess.run([S2R_BIN, "rollout", SCENE, "--duration", str(duration), "--out", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    header = out.read_text().splitlines()[0].split(",")
    rows = np.array([[float(x) for x in line.split(",")] for line in out.read_text().splitlines()[1:]])
    s2r = {h: rows[:, i] for i, h in enumerate(header)}

    mj = mujoco.MjModel.from_xml_path(mujoco_scene)
    data = mujoco.MjData(mj)
    key = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_KEY, "home")
    mujoco.mj_resetDataKeyframe(mj, data, key)
    mujoco.mj_forward(mj, data)
    hz = 50.0
    substeps = round(1 / (hz * mj.opt.timestep))
    worst_pos, worst_rot, end_pos, end_rot = 0.0, 0.0, 0.0, 0.0
    for k in range(round(duration * hz) + 1):
        if k > 0:
            for _ in range(substeps):
                mujoco.mj_step(mj, data)
        for b in range(1, mj.nbody):
            body = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, b)
            p = np.array([s2r[f"{body}.p{c}"][k] for c in "xyz"])
            q = np.array([s2r[f"{body}.q{c}"][k] for c in "wxyz"])
            dp = np.linalg.norm(p - data.xpos[b])
            dq = 2 * np.arccos(min(1.0, abs(float(np.dot(q, data.xquat[b])))))
            worst_pos, worst_rot = max(worst_pos, dp), max(worst_rot, dq)
            if k == round(duration * hz):
                end_pos, end_rot = max(end_pos, dp), max(end_rot, dq)
    # the arm really held: the hand stayed near its start
    hand = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "hand")
    start = np.array([s2r[f"hand.p{c}"][0] for c in "xyz"])
    print(f"hand sag {np.linalg.norm(data.xpos[hand] - start) * 1e3:.2f} mm (MuJoCo); s2r vs MuJoCo: "
          f"worst {worst_pos * 1e3:.3f} mm {worst_rot:.5f} rad, end {end_pos * 1e3:.3f} mm {end_rot:.5f} rad")
    assert np.linalg.norm(data.xpos[hand] - start) < 0.05
    assert worst_pos < 2e-3, f"body origin off MuJoCo by {worst_pos * 1e3:.2f} mm"
    assert worst_rot < 5e-3, f"body frame off MuJoCo by {worst_rot:.4f} rad"
    assert end_pos < 5e-4, f"body origin off MuJoCo by {end_pos * 1e3:.2f} mm at the end"
    assert end_rot < 5e-3, f"body frame off MuJoCo by {end_rot:.4f} rad at the end"


def test_include_resolution_matches_mujoco(tmp_path):
    """<include> paths: MuJoCo 4 looks next to the main file first, then next to the including
    file; s2r does the same. parts/robot.xml includes "arm.xml" and "hand.xml": arm.xml exists in
    both folders (the main folder's wins), hand.xml only in parts/."""
    (tmp_path / "parts").mkdir()
    (tmp_path / "main.xml").write_text('<mujoco>\n  <include file="parts/robot.xml"/>\n</mujoco>\n')
    (tmp_path / "parts" / "robot.xml").write_text(
        '<mujoco>\n  <worldbody>\n    <include file="arm.xml"/>\n    <include file="hand.xml"/>\n'
        '  </worldbody>\n</mujoco>\n')
    body = '<mujoco>\n  <body name="%s"><joint/><geom size="0.1"/></body>\n</mujoco>\n'
    (tmp_path / "arm.xml").write_text(body % "arm_main_folder")
    (tmp_path / "parts" / "arm.xml").write_text(body % "arm_parts_folder")
    (tmp_path / "parts" / "hand.xml").write_text(body % "hand_parts_folder")
    mj = mujoco.MjModel.from_xml_path(str(tmp_path / "main.xml"))
    mj_bodies = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(1, mj.nbody)]
    report, fields = s2r_fields(str(tmp_path / "main.xml"))
    s2r_bodies = [p["entity"] for p in report["parameters"] if p["field"] == "body_mass"]
    assert mj_bodies == ["arm_main_folder", "hand_parts_folder"]
    assert s2r_bodies == mj_bodies


GRAVCOMP_PENDULUM = """<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <body name="arm" pos="0 0 1" gravcomp="0.5">
      <joint name="hinge" axis="0 1 0" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1"/>
    </body>
  </worldbody>
  <keyframe><key name="home" qpos="-0.5"/></keyframe>
</mujoco>
"""


def s2r_rollout(tmp_path, text, duration, name="scene.xml"):
    """`s2r rollout` of a scene given as text: (CSV header, rows as an array, the run's stderr)."""
    scene = tmp_path / name
    scene.write_text(text)
    out = tmp_path / "traj.csv"
    proc = subprocess.run([S2R_BIN, "rollout", str(scene), "--duration", str(duration), "--out", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text().splitlines()
    rows = np.array([[float(x) for x in line.split(",")] for line in lines[1:]])
    return lines[0].split(","), rows, proc.stderr


def mujoco_origins(xml, samples, bodies, timestep, integrator):
    """MuJoCo's origins of `bodies` (samples, bodies, 3) at every 20 ms from keyframe 0, stepping
    at `timestep` with `integrator`."""
    mj = mujoco.MjModel.from_xml_string(xml)
    mj.opt.timestep = timestep
    mj.opt.integrator = integrator
    data = mujoco.MjData(mj)
    mujoco.mj_resetDataKeyframe(mj, data, 0)
    mujoco.mj_forward(mj, data)
    per_sample = int(round(0.02 / timestep))
    out = []
    for k in range(samples):
        if k > 0:
            for _ in range(per_sample):
                mujoco.mj_step(mj, data)
        out.append([data.xpos[mj.body(b).id].copy() for b in bodies])
    return np.array(out)


def s2r_origins(header, rows, bodies):
    """The rollout CSV's origins of `bodies` (samples, bodies, 3)."""
    return np.stack([rows[:, [header.index(f"{b}.p{c}") for c in "xyz"]] for b in bodies], axis=1)


def swing_against_mujoco(xml, header, rows, bodies):
    """s2r's rollout against MuJoCo's RK4 at 0.1 ms, per 20 ms sample: (the start's largest
    distance, the largest over the run, MuJoCo's own Euler at 2 ms against the same reference,
    how far the last body gets from its start in the reference), m."""
    ref = mujoco_origins(xml, len(rows), bodies, 1e-4, mujoco.mjtIntegrator.mjINT_RK4)
    euler = mujoco_origins(xml, len(rows), bodies, 2e-3, mujoco.mjtIntegrator.mjINT_EULER)
    err = np.linalg.norm(s2r_origins(header, rows, bodies) - ref, axis=2)
    return (err[0].max(), err.max(), np.linalg.norm(euler - ref, axis=2).max(),
            np.linalg.norm(ref[:, -1] - ref[0, -1], axis=1).max())


def test_gravcomp_pendulum_matches_mujoco(tmp_path):
    """A hinge pendulum with gravcomp 0.5, released from the keyframe home (-0.5 rad), swings as
    in MuJoCo (RK4, 0.1 ms steps): the same half-gravity period. Tolerance 5 mrad on the angle at
    every 20 ms sample over 1 s (1% of the 0.5 rad amplitude; measured 1.1 mrad)."""
    header, rows, _ = s2r_rollout(tmp_path, GRAVCOMP_PENDULUM, 1, "pendulum.xml")
    qw, qy = rows[:, header.index("arm.qw")], rows[:, header.index("arm.qy")]
    s2r_angle = 2 * np.arctan2(qy, qw)

    mj = mujoco.MjModel.from_xml_string(GRAVCOMP_PENDULUM)
    mj.opt.timestep = 1e-4
    mj.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    data = mujoco.MjData(mj)
    mujoco.mj_resetDataKeyframe(mj, data, 0)
    ref = [data.qpos[0]]
    for _ in range(50):
        for _ in range(200):
            mujoco.mj_step(mj, data)
        ref.append(data.qpos[0])
    ref = np.array(ref)
    assert abs(ref.min() - (-0.5)) < 1e-3 and ref.max() > 0.4  # it swings
    err = np.abs(s2r_angle - ref).max()
    print(f"gravcomp pendulum: worst angle difference {err * 1e3:.2f} mrad")
    assert err < 5e-3


# --- several joints in one body ----------------------------------------------------------------

SEVERAL_JOINTS = """<mujoco model="two joints in one body">
  <option timestep="0.002"/>
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="swing_y" axis="0 1 0" damping="0.01"/>
      <joint name="swing_x" axis="1 0 0" pos="0 0 -0.05" damping="0.01"/>
      <geom type="capsule" fromto="0 0 0 0.3 0.1 -0.2" size="0.02" mass="0.5" contype="0" conaffinity="0"/>
      <body name="tip" pos="0.3 0.1 -0.2">
        <joint name="roll" axis="0 0 1"/>
        <geom type="box" size="0.05 0.02 0.01" mass="0.2" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
  <keyframe><key name="home" qpos="0.3 -0.4 0.5"/></keyframe>
</mujoco>
"""


def test_several_joints_in_one_body_match_mujoco(tmp_path):
    """A body on two hinges in one <body> (y, then x through another point: MuJoCo applies them in
    order) carrying a third, released from the keyframe: s2r inserts a massless link between the
    two and the bodies swing as in MuJoCo (RK4 at 0.1 ms). Tolerance 3 mm on both bodies' origins
    at every 20 ms sample over 1 s (measured 1.2 mm; MuJoCo's own Euler at 2 ms: printed), and the
    starting poses within 1 um (the joints' order and anchors)."""
    header, rows, notes = s2r_rollout(tmp_path, SEVERAL_JOINTS, 1)
    assert "massless link" in notes
    # the inserted link is a body of the state, not of the trajectory CSV (the MJCF's bodies)
    assert "arm.px" in header and "arm:swing_y.px" not in header
    start, worst, mj_euler, swing = swing_against_mujoco(SEVERAL_JOINTS, header, rows, ("arm", "tip"))
    print(f"several joints in one body: start {start * 1e6:.2f} um, worst {worst * 1e3:.2f} mm over 1 s "
          f"(MuJoCo Euler at 2 ms: {mj_euler * 1e3:.2f} mm; the tip swings {swing * 1e3:.0f} mm)")
    assert swing > 0.2
    assert start < 1e-6
    assert worst < 3e-3


# --- ball joints ------------------------------------------------------------------------------------

# Two bodies on ball joints, the second off the first's axis, with damping and armature, started
# tilted and turning (keyframe quaternions and child-frame rates): a double spherical pendulum.
BALL_PENDULUM = """<mujoco model="double ball pendulum">
  <option timestep="0.002"/>
  <worldbody>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" type="ball" damping="0.005"/>
      <geom type="capsule" fromto="0 0 0 0.25 0.05 -0.15" size="0.02" mass="0.6" contype="0" conaffinity="0"/>
      <body name="lower" pos="0.25 0.05 -0.15">
        <joint name="elbow" type="ball" pos="0 0 0.02" armature="0.001"/>
        <geom type="box" pos="0.1 0 -0.05" size="0.08 0.03 0.015" mass="0.3" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
  <keyframe><key name="home" qpos="0.9 0.3 -0.2 0.25  0.8 -0.1 0.5 0.3" qvel="1 -2 3  0.5 2 -1"/></keyframe>
</mujoco>
"""


def test_ball_joints_swing_like_mujoco(tmp_path):
    """The double ball pendulum from its keyframe, 1 s: both bodies' origins within 12 mm of
    MuJoCo's RK4 (0.1 ms) at every 20 ms sample (measured 7.6 mm at s2r's 2 ms step, 3.9 at 1 ms, 1.9
    at 0.5 ms: first order; MuJoCo's own Euler at 2 ms is 10.4 mm off), and the start within 1 um
    (the keyframe's quaternions and rates read as MuJoCo reads them). The s2r ball is three hinges
    re-based at every step (kernels/solver_tree.h); without the armature's bias term the error
    stayed at 15 mm whatever the step."""
    header, rows, _ = s2r_rollout(tmp_path, BALL_PENDULUM, 1)
    assert "upper.px" in header and "upper:shoulder:x.px" not in header  # the CSV leaves out links
    start, worst, mj_euler, swing = swing_against_mujoco(BALL_PENDULUM, header, rows, ("upper", "lower"))
    print(f"ball joints: start {start * 1e6:.2f} um, worst {worst * 1e3:.2f} mm over 1 s "
          f"(MuJoCo Euler at 2 ms: {mj_euler * 1e3:.2f} mm; the lower body swings {swing * 1e3:.0f} mm)")
    assert swing > 0.2
    assert start < 1e-6
    assert worst < 12e-3


# A rod on a cone-limited ball spun into a 40-degree cone: configs/scenes/test/ball_cone.xml (both
# engines' limits stiff; the file says why).
CONE_PENDULUM = (pathlib.Path(ROBOTS).parent / "scenes" / "test" / "ball_cone.xml").read_text()


def rod_tips(quats):
    """The rod's far end (0.3 m along its x axis) from the pivot, for (n, 4) quaternions w x y z."""
    w, x, y, z = quats.T
    return 0.3 * np.stack([1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)], 1)


def test_ball_cone_limit_like_mujoco(tmp_path):
    """The cone-limited rod, 2 s: its tip within 15 mm of MuJoCo's RK4 (0.1 ms) at every 20 ms
    sample (measured 10 mm, at the impact; 2.4 mm at the end), and the rotation angle reaching the
    limit and not more than 0.5 degree past it (s2r: kernels/solver_coupling.h SolveBallLimit, a
    joint-space row on the ball's three hinges)."""
    header, rows, _ = s2r_rollout(tmp_path, CONE_PENDULUM, 2)
    quats = rows[:, [header.index(f"rod.q{c}") for c in "wxyz"]]
    angle = np.degrees(2 * np.arccos(np.clip(np.abs(quats[:, 0]), 0, 1)))
    mj = mujoco.MjModel.from_xml_string(CONE_PENDULUM)
    mj.opt.timestep = 1e-4
    mj.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    data = mujoco.MjData(mj)
    mujoco.mj_resetDataKeyframe(mj, data, 0)
    mujoco.mj_forward(mj, data)
    ref = []
    for k in range(len(rows)):
        if k > 0:
            mujoco.mj_step(mj, data, nstep=200)
        ref.append(data.xquat[mj.body("rod").id].copy())
    err = np.linalg.norm(rod_tips(quats) - rod_tips(np.array(ref)), axis=1)
    ref_angle = np.degrees(2 * np.arccos(np.clip(np.abs(np.array(ref)[:, 0]), 0, 1)))
    print(f"ball cone: s2r angle at most {angle.max():.2f} deg (MuJoCo {ref_angle.max():.2f}, limit 40); tip "
          f"worst {err.max() * 1e3:.1f} mm, at the end {err[-1] * 1e3:.1f} mm")
    assert angle.max() > 39.5 and ref_angle.max() > 39.5  # both reach the cone
    assert angle.max() < 40.5
    assert err.max() < 15e-3


# --- floating bases --------------------------------------------------------------------------------

# A free box with an arm on a hinge and a hand on a ball, tumbling without gravity from a keyframe
# that gives the base a position, orientation and both velocities (MuJoCo's free qpos / qvel):
# configs/scenes/test/floating_base.xml (SolverTree.FloatingBaseKeepsItsMomentum runs it too).
FLOATING_BASE = (pathlib.Path(ROBOTS).parent / "scenes" / "test" / "floating_base.xml").read_text()


def test_floating_base_tumbles_like_mujoco(tmp_path):
    """The floating base from its keyframe, 1 s without gravity: the three bodies' origins within
    3 mm of MuJoCo's RK4 (0.1 ms) at every 20 ms sample (measured 2.0 mm at 2 ms, 0.5 mm at 0.5 ms),
    the start within 1 um, and s2r notes the floating base (its free joint is three slides and a
    ball in the articulated tree of the bodies below it: kernels/solver_tree.h)."""
    header, rows, notes = s2r_rollout(tmp_path, FLOATING_BASE, 1)
    assert "a floating base" in notes
    # the trajectory records the MJCF's bodies, not the massless links inserted for the free joint
    assert "base.px" in header and not any(":root:" in column for column in header), header
    start, worst, _, travel = swing_against_mujoco(FLOATING_BASE, header, rows, ("base", "arm", "hand"))
    print(f"floating base: start {start * 1e6:.2f} um, worst {worst * 1e3:.2f} mm over 1 s "
          f"(the hand travels {travel * 1e3:.0f} mm)")
    assert travel > 0.5
    assert start < 1e-6
    assert worst < 3e-3


# The floating base dropped on a floor, its arm's hinge limited, comes to rest as in MuJoCo.
FLOATING_DROP = """<mujoco model="floating base drop">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="base" pos="0 0 0.3" euler="10 20 30">
      <freejoint name="root"/>
      <geom type="box" size="0.1 0.06 0.04" mass="2"/>
      <body name="arm" pos="0.1 0 0">
        <joint name="hinge" axis="0 1 0" damping="0.05" range="-60 60"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0.05" size="0.02" mass="0.5"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_floating_base_lands_like_mujoco(tmp_path):
    """Dropped from 0.3 m tilted, bounced on its corners and the arm: after 2 s both bodies rest
    (speeds under 1 mm/s) flat on the floor (box centre at its half height, 0.04 m, within 1 mm, as
    in MuJoCo), within 3 cm of MuJoCo's rest position in the plane (measured 0.8 cm; 1.6 cm with
    4 substeps in every contact step, before stop 26: the impacts differ, s2r's contact model is
    not MuJoCo's; s2r in maximal coordinates lands 1.1 cm from MuJoCo)."""
    header, rows, _ = s2r_rollout(tmp_path, FLOATING_DROP, 2)
    mj = mujoco.MjModel.from_xml_string(FLOATING_DROP)
    data = mujoco.MjData(mj)
    while data.time < 2 - 1e-9:
        mujoco.mj_step(mj, data)
    for b in ("base", "arm"):
        p = rows[-1, [header.index(f"{b}.p{c}") for c in "xyz"]]
        v = rows[-1, [header.index(f"{b}.v{c}") for c in "xyz"]]
        ref = data.xpos[mj.body(b).id]
        print(f"floating base landing, {b}: s2r {np.round(p, 4)}, MuJoCo {np.round(ref, 4)}")
        assert np.linalg.norm(v) < 1e-3
        assert np.linalg.norm(p[:2] - ref[:2]) < 0.03
    assert abs(rows[-1, header.index("base.pz")] - 0.04) < 1e-3


# A quadruped (configs/scenes/test/quadruped.xml): a torso on a free joint with four legs of two
# hinges each, held by position servos at the keyframe's crouch, dropped 5 cm onto a floor: a
# floating base carried by its contacts.
QUADRUPED = (pathlib.Path(ROBOTS).parent / "scenes" / "test" / "quadruped.xml").read_text()


def test_floating_base_quadruped_stands_like_mujoco(tmp_path):
    """The quadruped lands on its four feet and stands: its torso within 3 mm of MuJoCo's at every
    20 ms sample from 0.2 s to 3 s (measured 1.3 mm at 1 substep per step, 1.1 mm at 4; the feet's contacts carry the floating base
    through the tree's response) and at rest (under 1 mm/s) at the end."""
    header, rows, notes = s2r_rollout(tmp_path, QUADRUPED, 3)
    assert "a floating base" in notes
    mj = mujoco.MjModel.from_xml_string(QUADRUPED)
    data = mujoco.MjData(mj)
    mujoco.mj_resetDataKeyframe(mj, data, 0)
    per_sample = int(round(0.02 / mj.opt.timestep))
    worst = 0.0
    for k in range(1, len(rows)):
        for _ in range(per_sample):
            mujoco.mj_step(mj, data)
        if rows[k, 0] < 0.2 - 1e-9:
            continue
        p = rows[k, [header.index(f"torso.p{c}") for c in "xyz"]]
        worst = max(worst, np.linalg.norm(p - data.xpos[mj.body("torso").id]))
    speed = np.linalg.norm(rows[-1, [header.index(f"torso.v{c}") for c in "xyz"]])
    print(f"quadruped: torso {worst * 1e3:.2f} mm from MuJoCo's from 0.2 s to 3 s, final speed {speed:.2g} m/s")
    assert worst < 3e-3
    assert speed < 1e-3


# --- <equality><weld> closing a loop ----------------------------------------------------------------

# A four-bar whose coupler is two bodies welded together: crank A1 (hinge at the origin) carries A2
# (hinge at 0.2 m), rocker B1 (hinge at 0.5, 0.1) carries B2 (hinge at 0.35 m); the weld makes A2 and
# B2 one rigid coupler, so four hinges less three planar constraints leave one degree of freedom,
# and the linkage swings under gravity. Without the weld's angular rows (a connect) it would have
# two. All hinges along y (a planar loop: the weld's other three rows are redundant).
WELD_FOURBAR = """<mujoco model="welded four-bar">
  <option timestep="0.002" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="a1"><joint name="a1" axis="0 1 0" damping="0.002"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.01" mass="0.2" contype="0" conaffinity="0"/>
      <body name="a2" pos="0.2 0 0"><joint name="a2" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.01" mass="0.1" contype="0" conaffinity="0"/>
      </body>
    </body>
    <body name="b1" pos="0.5 0 0.1"><joint name="b1" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 -0.15 0 -0.1" size="0.01" mass="0.15" contype="0" conaffinity="0"/>
      <body name="b2" pos="-0.15 0 -0.1"><joint name="b2" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 -0.05 0 0" size="0.01" mass="0.05" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
  <equality><weld body1="a2" body2="b2" solref="0.005 1"/></equality>
</mujoco>
"""


def hinge_angles(rows, header, body):
    """Rotation about y of a body from the rollout CSV's quaternion columns."""
    qw, qy = rows[:, header.index(f"{body}.qw")], rows[:, header.index(f"{body}.qy")]
    return 2 * np.arctan2(qy, qw)


def test_weld_closes_a_four_bar_like_mujoco(tmp_path):
    """The welded four-bar released from rest swings as in MuJoCo (RK4 at 0.1 ms as the reference):
    the crank's and the rocker's angles within 30 mrad at every 20 ms sample over the first swing,
    0.5 s (measured 22 mrad at s2r's 2 ms step; MuJoCo's own Euler at 2 ms is 10 mrad off the same
    reference, and s2r at 0.5 ms 3.5 mrad: the linkage passes near a toggle position, where a step's
    error grows fast), and in s2r the welded bodies keep their relative angle (0.1 mrad; measured
    9 urad). The same weld without its angular rows (torquescale 0, a connect) leaves two degrees of
    freedom and misses by 190 mrad, so the tolerance checks that the weld holds the coupler's
    orientation."""
    header, rows, _ = s2r_rollout(tmp_path, WELD_FOURBAR, 0.5)
    s2r = {b: hinge_angles(rows, header, b) for b in ("a1", "a2", "b1", "b2")}

    mj = mujoco.MjModel.from_xml_string(WELD_FOURBAR)
    mj.opt.timestep = 1e-4
    mj.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    data = mujoco.MjData(mj)
    per_sample = int(round(0.02 / mj.opt.timestep))
    ref = {"a1": [], "b1": []}
    for k in range(len(rows)):
        if k > 0:
            for _ in range(per_sample):
                mujoco.mj_step(mj, data)
        mujoco.mj_forward(mj, data)
        for b in ref:
            q = data.xquat[mj.body(b).id]
            ref[b].append(2 * np.arctan2(q[2], q[0]))
    ref = {b: np.array(v) for b, v in ref.items()}
    assert np.ptp(ref["a1"]) > 0.1 and np.ptp(ref["b1"]) > 0.1, "the linkage swings"
    worst = max(np.abs(s2r[b] - ref[b]).max() for b in ref)
    # world angles: the weld holds a2's turn relative to b2's
    rel = s2r["a2"] - s2r["b2"]
    drift = np.abs(rel - rel[0]).max()
    print(f"welded four-bar: worst crank/rocker angle difference {worst * 1e3:.2f} mrad over 0.5 s "
          f"(crank swings {np.ptp(ref['a1']):.2f} rad); weld drift in s2r {drift * 1e6:.2f} urad")
    assert worst < 30e-3
    assert drift < 1e-4


# --- Menagerie's MJX Panda unchanged: the fingers coupled by its <equality> -----------------------

MJX_HOME = [0, 0, 0, -1.57079, 0, 1.57079, -0.7853]

GRASP_SCENE = """<mujoco model="panda grasp">
  <include file="mjx_panda.xml"/>
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" size="0 0 0.05" type="plane" contype="1"/>
    <geom name="pedestal" type="box" size="0.03 0.03 0.01" pos="0.5545 0 0.4459"/>
    <body name="box" pos="0.5585 0 0.4809">
      <freejoint name="box"/>
      <geom name="box" type="box" size="0.015 0.015 0.025" mass="0.05" friction="1"/>
    </body>
  </worldbody>
  <keyframe>
    <key name="home" qpos="0 0 0 -1.57079 0 1.57079 -0.7853 0.04 0.04 0.5585 0 0.4809 1 0 0 0"
      ctrl="0 0 0 -1.57079 0 1.57079 -0.7853 0.04"/>
  </keyframe>
</mujoco>
"""


def quat_to_mat(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def run_mjx_gripper(tmp_path, scene_text, gripper, duration=1.0, hz=50.0, arm=lambda t: MJX_HOME, boxes=None):
    """The scene (including mjx_panda.xml) in s2r (`s2r rollout` with an action CSV: the arm's
    servo targets arm(t), home by default, the gripper control gripper(t)) and in MuJoCo (meshes
    stripped). Returns per 20 ms sample (s2r q1, q2, MuJoCo q1, q2), and both final box x (None
    without a box). With a list `boxes`, appends per sample (s2r box position, MuJoCo's, s2r hand
    height, MuJoCo's) to it."""
    s2r_dir, mj_dir = tmp_path / "s2r", tmp_path / "mj"
    s2r_dir.mkdir()
    mj_dir.mkdir()
    original = open(os.path.join(PANDA_DIR, "mjx_panda.xml")).read()
    (s2r_dir / "mjx_panda.xml").write_text(original)  # s2r skips the mesh geoms unread
    (mj_dir / "mjx_panda.xml").write_text(strip_meshes(original))
    for d in (s2r_dir, mj_dir):
        (d / "scene.xml").write_text(scene_text)
    n = round(duration * hz)
    actions = tmp_path / "actions.csv"
    with open(actions, "w") as f:
        f.write("time," + ",".join(f"actuator{i}" for i in range(1, 9)) + "\n")
        for k in range(n + 1):
            f.write(",".join(str(v) for v in [k / hz] + list(arm(k / hz)) + [gripper(k / hz)]) + "\n")
    out = tmp_path / "traj.csv"
    proc = subprocess.run([S2R_BIN, "rollout", str(s2r_dir / "scene.xml"), "--duration", str(duration),
                           "--out", str(out), "--actions", str(actions)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text().splitlines()
    col = {h: i for i, h in enumerate(lines[0].split(","))}
    rows = np.array([[float(x) for x in line.split(",")] for line in lines[1:]])

    def s2r_fingers(k):
        # finger joint coordinates from the bodies: along the hand's y axis (the right finger's
        # frame is turned half a turn about z)
        vec = lambda body, f: np.array([rows[k, col[f"{body}.{f}{c}"]] for c in ("xyz" if f == "p" else "wxyz")])
        y = quat_to_mat(vec("hand", "q"))[:, 1]
        hand = vec("hand", "p")
        return np.dot(vec("left_finger", "p") - hand, y), -np.dot(vec("right_finger", "p") - hand, y)

    mj = mujoco.MjModel.from_xml_path(str(mj_dir / "scene.xml"))
    data = mujoco.MjData(mj)
    mujoco.mj_resetDataKeyframe(mj, data, mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_KEY, "home"))
    mujoco.mj_forward(mj, data)
    substeps = round(1 / (hz * mj.opt.timestep))
    samples = []
    for k in range(n + 1):
        if k > 0:
            data.ctrl[:] = list(arm((k - 1) / hz)) + [gripper((k - 1) / hz)]
            for _ in range(substeps):
                mujoco.mj_step(mj, data)
        samples.append(s2r_fingers(k) + (data.qpos[7], data.qpos[8]))
        if boxes is not None:
            hand = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "hand")
            boxes.append((np.array([rows[k, col[f"box.p{c}"]] for c in "xyz"]), data.qpos[9:12].copy(),
                          rows[k, col["hand.pz"]], data.xpos[hand][2]))
    box = (rows[-1, col["box.px"]], data.qpos[9]) if "box.px" in col else None
    return np.array(samples), box


def test_mjx_panda_unchanged_gripper_step_matches_mujoco(tmp_path):
    """Menagerie's mjx_panda.xml as published: one servo on finger_joint1, finger_joint2 coupled by
    the <equality>. Open (0.04 m) for 0.1 s, close (0) until 0.6 s, then half open (0.02 m); the
    fingers move freely. Tolerances: both finger coordinates within 1 mm of MuJoCo's at every 20 ms
    sample (measured 0.32 mm), and the coupling |q1 - q2| < 10 um in s2r (measured 0.1 um; MuJoCo's
    soft equality: 0.04 mm)."""
    scene = open(os.path.join(PANDA_DIR, "scene_mjx.xml")).read()
    s, _ = run_mjx_gripper(tmp_path, scene, lambda t: 0.04 if t < 0.1 else (0.0 if t < 0.6 else 0.02))
    err = np.abs(s[:, :2] - s[:, 2:]).max()
    coupling = np.abs(s[:, 0] - s[:, 1]).max()
    print(f"gripper step: worst finger difference {err * 1e3:.3f} mm, s2r |q1 - q2| {coupling * 1e6:.3f} um")
    assert s[30, 0] < 0.001 and abs(s[-1, 0] - 0.02) < 5e-4  # it closed, then reopened halfway
    assert err < 1e-3
    assert coupling < 1e-5


def test_mjx_panda_unchanged_fingers_centre_a_box_like_mujoco(tmp_path):
    """The unchanged MJX Panda at home closes its coupled fingers (control 0 from 0.1 s) on a
    30 mm box standing on a pedestal 4 mm off the hand's centre line. One finger reaches the box
    first and, coupled to the other, pushes it to the centre, where both squeeze it (a box on two
    independent servos would stay off-centre). Tolerances: finger coordinates within 2.5 mm of
    MuJoCo's at every sample (measured 1.7 mm, while the box slides; 1.4 mm at 4 substeps per
    contact step) and 1 mm at 1 s (0.78 mm with the pads' solref / solimp mapped onto their contact
    frequency, 0.55 mm with s2r's default contacts); the box within 2 mm of the centre line and of MuJoCo's box (measured 0.5 mm and
    0.5 mm); |q1 - q2| < 10 um in s2r while gripping."""
    s, box = run_mjx_gripper(tmp_path, GRASP_SCENE, lambda t: 0.04 if t < 0.1 else 0.0)
    err = np.abs(s[:, :2] - s[:, 2:]).max()
    end = np.abs(s[-1, :2] - s[-1, 2:]).max()
    coupling = np.abs(s[:, 0] - s[:, 1]).max()
    centre = 0.5545  # the hand's centre line (x) at home
    print(f"grasp: worst finger difference {err * 1e3:.3f} mm, at 1 s {end * 1e3:.3f} mm; box x s2r "
          f"{box[0]:.4f} MuJoCo {box[1]:.4f} (centre {centre}); s2r |q1 - q2| {coupling * 1e6:.3f} um")
    assert 0.013 < s[-1, 0] < 0.017  # squeezing the 30 mm box
    assert err < 2.5e-3
    assert end < 1e-3
    assert abs(box[0] - centre) < 2e-3
    assert abs(box[0] - box[1]) < 2e-3
    assert coupling < 1e-5


# joint offsets from home that raise the hand 8 cm straight up, orientation kept (solved with
# MuJoCo's Jacobian: least squares on the hand's position and rotation error, iterated)
MJX_LIFT = [0, 0.09968, 0, 0.34214, 0, -0.24245, 0]


def test_mjx_panda_unchanged_grasps_and_lifts_a_box_like_mujoco(tmp_path):
    """The grasp above, then a lift: the fingers close from 0.1 s; from 0.6 s the arm's servo
    targets move from home to the pose 8 cm higher (MJX_LIFT) along a smoothstep over 0.6 s, and
    hold there until 1.8 s. The box (50 g, friction 1) rises with the hand in both engines.
    Tolerances: the box within 3 mm of MuJoCo's box at every 20 ms sample (measured 1.79 mm; s2r lifts it 84.4 mm, MuJoCo 82.7 mm),
    lifted 7-9 cm at the end in both (the arm's servos sag under load), and held: its height
    relative to the hand changes by under 2 mm from 0.6 s to the end in s2r (measured 0.25 mm;
    MuJoCo's soft contacts let it sink 1.3 mm)."""
    def arm(t):
        tau = min(1.0, max(0.0, (t - 0.6) / 0.6))
        f = tau * tau * (3 - 2 * tau)
        return [h + f * d for h, d in zip(MJX_HOME, MJX_LIFT)]

    boxes = []
    s, _ = run_mjx_gripper(tmp_path, GRASP_SCENE, lambda t: 0.04 if t < 0.1 else 0.0, duration=1.8, arm=arm,
                           boxes=boxes)
    s2r_box = np.array([b[0] for b in boxes])
    mj_box = np.array([b[1] for b in boxes])
    err = np.linalg.norm(s2r_box - mj_box, axis=1).max()
    rise_s2r, rise_mj = s2r_box[-1, 2] - s2r_box[0, 2], mj_box[-1, 2] - mj_box[0, 2]
    fingers = np.abs(s[:, :2] - s[:, 2:]).max()
    grip = np.array([b[0][2] - b[2] for b in boxes])  # box height above the hand, s2r
    grip_mj = np.array([b[1][2] - b[3] for b in boxes])
    slip, slip_mj = np.abs(grip[30:] - grip[30]).max(), np.abs(grip_mj[30:] - grip_mj[30]).max()
    print(f"lift: worst box difference {err * 1e3:.3f} mm; rise s2r {rise_s2r * 1e3:.2f} mm, MuJoCo "
          f"{rise_mj * 1e3:.2f} mm; slip in the grip s2r {slip * 1e3:.3f} mm, MuJoCo {slip_mj * 1e3:.3f} mm; "
          f"worst finger difference {fingers * 1e3:.3f} mm")
    assert 0.07 < rise_s2r < 0.09 and 0.07 < rise_mj < 0.09
    assert err < 3e-3
    assert slip < 2e-3


TENDON_GRIPPER = """<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <body name="palm" pos="0 0 0.5">
      <geom type="box" size="0.05 0.02 0.02" mass="1" contype="0" conaffinity="0"/>
      <body name="left" pos="0.01 0 -0.05">
        <joint name="a" type="slide" axis="1 0 0" range="0 0.04" damping="2"/>
        <geom type="box" size="0.005 0.01 0.03" mass="0.1" contype="0" conaffinity="0"/>
      </body>
      <body name="right" pos="-0.01 0 -0.05">
        <joint name="b" type="slide" axis="-1 0 0" range="0 0.04" damping="2"/>
        <geom type="box" size="0.005 0.01 0.03" mass="0.1" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="split"><joint joint="a" coef="0.5"/><joint joint="b" coef="0.5"/></fixed>
  </tendon>
  <equality><joint joint1="a" joint2="b" solref="0.005 1"/></equality>
  <actuator>
    <position name="grip" tendon="split" kp="100" kv="5" ctrlrange="0 0.04" forcerange="-3 3"/>
  </actuator>
</mujoco>
"""


def test_tendon_servo_gripper_matches_mujoco(tmp_path):
    """Menagerie panda.xml's gripper pattern on a fixed palm: a fixed tendon split = (a + b) / 2,
    the equality a = b and one position servo on the tendon (force-limited at 3 N, so it saturates
    at the start). Control 0.035 m for 0.5 s, then 0.01 m. Tolerance: both finger coordinates
    within 0.5 mm of MuJoCo's at every 20 ms sample over 1 s (measured 0.25 mm), and |a - b| < 10 um
    in s2r."""
    scene = tmp_path / "gripper.xml"
    scene.write_text(TENDON_GRIPPER)
    hz, duration = 50.0, 1.0
    n = round(duration * hz)
    ctrl = lambda t: 0.035 if t < 0.5 else 0.01
    actions = tmp_path / "actions.csv"
    actions.write_text("time,grip\n" + "".join(f"{k / hz},{ctrl(k / hz)}\n" for k in range(n + 1)))
    out = tmp_path / "traj.csv"
    proc = subprocess.run([S2R_BIN, "rollout", str(scene), "--duration", str(duration), "--out", str(out),
                           "--actions", str(actions)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text().splitlines()
    col = {h: i for i, h in enumerate(lines[0].split(","))}
    rows = np.array([[float(x) for x in line.split(",")] for line in lines[1:]])
    # body origins: left at x = 0.01 + a, right at x = -0.01 - b
    s2r_a = rows[:, col["left.px"]] - 0.01
    s2r_b = -0.01 - rows[:, col["right.px"]]

    mj = mujoco.MjModel.from_xml_string(TENDON_GRIPPER)
    data = mujoco.MjData(mj)
    substeps = round(1 / (hz * mj.opt.timestep))
    ref = [(data.qpos[0], data.qpos[1])]
    for k in range(1, n + 1):
        data.ctrl[0] = ctrl((k - 1) / hz)
        for _ in range(substeps):
            mujoco.mj_step(mj, data)
        ref.append((data.qpos[0], data.qpos[1]))
    ref = np.array(ref)
    err = max(np.abs(s2r_a - ref[:, 0]).max(), np.abs(s2r_b - ref[:, 1]).max())
    print(f"tendon gripper: worst finger difference {err * 1e3:.3f} mm; s2r at 0.5 s {s2r_a[25]:.5f}, "
          f"1 s {s2r_a[-1]:.5f} (MuJoCo {ref[25, 0]:.5f}, {ref[-1, 0]:.5f})")
    assert abs(ref[25, 0] - 0.035) < 2e-3 and abs(ref[-1, 0] - 0.01) < 2e-3  # the servo moved them
    assert err < 5e-4
    assert np.abs(s2r_a - s2r_b).max() < 1e-5
