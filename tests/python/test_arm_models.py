"""More published arms in MuJoCo and in s2r: Menagerie's UR5e and Kinova Gen3, robosuite's Lift.

Each scene is loaded by the venv's MuJoCo and by s2r (`s2r inspect --fields --json`, `s2r rollout`)
and compared: sizes, masses, inertias, joint ranges and parameters, actuator gains and ranges, the
starting keyframe; then trajectories from the keyframe "home" with s2r at the file's 2 ms step
and its default 50 Hz control, MuJoCo holding each control for 20 ms at the file's step (the
Gen3: 0.2 ms, see ARMS):

  * a servo hold (the key's ctrl held) for 0.5 s;
  * a servo step: every arm joint's target moved by +0.3 rad at t = 0, held for 1 s;
  * zero control for 1 s (Menagerie's arms): the position servos pull every joint towards 0, a
    large motion with saturated actuators -- the free swing these servo-driven arms allow;
  * robosuite's scene: the gravity-torque hold of its keyframe with the fingers closing;
  * an unlimited hinge whose servo winds it one and a half turns (joint_q, docs/physics.md).

Joint angles are recovered from body frames (the rotation of a body relative to its parent about
the joint axis), so both engines are measured the same way; test_hinge_angles_from_frames checks
that on MuJoCo's own qpos.

Scenes (configs/robots/README.md): universal_robots_ur5e/scene.xml and kinova_gen3/scene.xml are
Menagerie's files unchanged (Gen3's collision meshes are the convex hulls of Kinova's meshes,
kinova_gen3/make_hulls.py); the UR5e's mesh geoms are all visual and its mesh files are not
shipped, so MuJoCo loads a copy without them (test_ur5e_stripped_copy_drops_only_visual_meshes).
robosuite_panda/lift_panda.xml is written by robosuite_panda/make_scene.py.
"""
import os
import re
import subprocess

import pytest

mujoco = pytest.importorskip("mujoco")
np = pytest.importorskip("numpy")

from robot_util import (ABS_TOL, HAVE_S2R, REL_TOL, ROBOTS, S2R_BIN, SKIP_REASON,  # noqa: E402,F401
                        s2r_fields, strip_meshes)

UR5E = os.path.join(ROBOTS, "universal_robots_ur5e", "scene.xml")
GEN3 = os.path.join(ROBOTS, "kinova_gen3", "scene.xml")
LIFT = os.path.join(ROBOTS, "robosuite_panda", "lift_panda.xml")

if not HAVE_S2R:
    pytest.skip(SKIP_REASON, allow_module_level=True)

CONTROL_HZ = 50.0


@pytest.fixture()
def ur5e_for_mujoco(tmp_path):
    folder = os.path.dirname(UR5E)
    for name in ("scene.xml", "ur5e.xml"):
        with open(os.path.join(folder, name)) as f:
            (tmp_path / name).write_text(strip_meshes(f.read()))
    return str(tmp_path / "scene.xml")


def scene_for_mujoco(scene, ur5e_copy):
    return ur5e_copy if scene == UR5E else scene


def s2r_rollout(scene, duration, tmp_path, actions=None, keyframe="home"):
    out = tmp_path / "traj.csv"
    cmd = [S2R_BIN, "rollout", scene, "--duration", str(duration), "--out", str(out)]
    if keyframe:
        cmd += ["--keyframe", keyframe]
    if actions is not None:
        act = tmp_path / "actions.csv"
        names, rows = actions
        act.write_text(",".join(names) + "\n" +
                       "".join(",".join(f"{v:.9g}" for v in r) + "\n" for r in rows))
        cmd += ["--actions", str(act)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text().splitlines()
    header = lines[0].split(",")
    rows = np.array([[float(x) for x in line.split(",")] for line in lines[1:]])
    return {h: rows[:, i] for i, h in enumerate(header)}


def mujoco_rollout(mj, ctrl_rows, steps, keyframe="home"):
    """xpos, xquat (per control step, from the key) with ctrl_rows[k] held over step k."""
    data = mujoco.MjData(mj)
    mujoco.mj_resetDataKeyframe(mj, data, mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_KEY, keyframe))
    mujoco.mj_forward(mj, data)
    substeps = round(1 / (CONTROL_HZ * mj.opt.timestep))
    xpos, xquat = [data.xpos.copy()], [data.xquat.copy()]
    for k in range(steps):
        data.ctrl[:] = ctrl_rows[k]
        for _ in range(substeps):
            mujoco.mj_step(mj, data)
        xpos.append(data.xpos.copy())
        xquat.append(data.xquat.copy())
    return np.array(xpos), np.array(xquat)


def s2r_frames(mj, traj):
    """s2r's body origins and frames in MuJoCo's body order; the world and bodies s2r does not
    have (merged into their parent) are taken from MuJoCo's world / parent rule: None."""
    n = len(traj["time"])
    xpos = np.full((n, mj.nbody, 3), np.nan)
    xquat = np.full((n, mj.nbody, 4), np.nan)
    xquat[:, 0] = [1, 0, 0, 0]
    xpos[:, 0] = 0
    for b in range(1, mj.nbody):
        body = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, b)
        if f"{body}.px" not in traj:
            continue
        xpos[:, b] = np.stack([traj[f"{body}.p{c}"] for c in "xyz"], axis=1)
        xquat[:, b] = np.stack([traj[f"{body}.q{c}"] for c in "wxyz"], axis=1)
    return xpos, xquat


def quat_mul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def quat_conj(q):
    return np.array([q[0], -q[1], -q[2], -q[3]])


def hinge_angles(mj, xquat):
    """Hinge joint angles (rad) from body frames: the rotation of each jointed body relative to
    its parent's frame composed with the body's rest offset, about the joint axis."""
    angles = {}
    for j in range(mj.njnt):
        if mj.jnt_type[j] != mujoco.mjtJoint.mjJNT_HINGE:
            continue
        b = mj.jnt_bodyid[j]
        rest = quat_mul(xquat[mj.body_parentid[b]], mj.body_quat[b])
        rel = quat_mul(quat_conj(rest), xquat[b])
        angle = 2 * np.arctan2(np.dot(rel[1:], mj.jnt_axis[j]), rel[0])
        angles[mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j)] = angle
    return angles


def frame_errors(mj, ref, s2r, bodies):
    """Worst body-origin distance (m) and frame angle (rad) over the given bodies and samples."""
    (rp, rq), (sp, sq) = ref, s2r
    dp = np.linalg.norm(rp[:, bodies] - sp[:, bodies], axis=2)
    dots = np.abs(np.sum(rq[:, bodies] * sq[:, bodies], axis=2))
    dq = 2 * np.arccos(np.minimum(1.0, dots))
    return dp, dq


def model_matches(mj, report, fields, nbody_merged=0):
    """Sizes, body masses and inertias, joints, actuators and the home key: s2r's against MuJoCo's."""
    name = lambda kind, i: mujoco.mj_id2name(mj, kind, i)
    assert report["counts"]["actuators"] == mj.nu
    assert report["counts"]["bodies"] == mj.nbody - nbody_merged
    for b in range(1, mj.nbody):
        body = name(mujoco.mjtObj.mjOBJ_BODY, b)
        if mj.body_weldid[b] == 0 or f"body_mass[{body}]" not in fields:
            continue  # static (its mass is never used) or merged into its parent
        assert fields[f"body_mass[{body}]"][0] == pytest.approx(mj.body_mass[b], rel=REL_TOL), body
        assert sorted(fields[f"body_inertia[{body}]"]) == pytest.approx(
            sorted(mj.body_inertia[b]), rel=1e-5, abs=1e-9), body
    key = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_KEY, "home")
    for j in range(mj.njnt):
        if mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            continue
        joint = name(mujoco.mjtObj.mjOBJ_JOINT, j)
        dof = mj.jnt_dofadr[j]
        if mj.jnt_limited[j]:
            assert fields[f"joint_range[{joint}]"] == pytest.approx(list(mj.jnt_range[j]), abs=ABS_TOL)
        else:
            r = fields[f"joint_range[{joint}]"]
            assert r[0] >= r[1] or r == pytest.approx([0, 0]), (joint, r)  # no limit
        for field, ref in (("joint_damping", mj.dof_damping[dof]),
                           ("joint_armature", mj.dof_armature[dof]),
                           ("joint_frictionloss", mj.dof_frictionloss[dof])):
            assert fields[f"{field}[{joint}]"][0] == pytest.approx(ref, rel=REL_TOL), (field, joint)
        assert fields[f"joint_qpos0[{joint}]"][0] == pytest.approx(
            mj.key_qpos[key, mj.jnt_qposadr[j]], abs=ABS_TOL), joint
    for a in range(mj.nu):
        act = name(mujoco.mjtObj.mjOBJ_ACTUATOR, a)
        kp, kv = fields[f"actuator_kp[{act}]"][0], fields[f"actuator_kv[{act}]"][0]
        if mj.actuator_biastype[a] == mujoco.mjtBias.mjBIAS_AFFINE:  # position servo
            assert kp == pytest.approx(mj.actuator_gainprm[a, 0], rel=REL_TOL), act
            assert -kp == pytest.approx(mj.actuator_biasprm[a, 1], rel=REL_TOL), act
            assert -kv == pytest.approx(mj.actuator_biasprm[a, 2], rel=REL_TOL), act
        else:  # motor: gear * ctrl
            assert mj.actuator_gainprm[a, 0] == 1 and fields[f"actuator_gear[{act}]"][0] == \
                pytest.approx(mj.actuator_gear[a, 0], rel=REL_TOL), act
        if mj.actuator_forcelimited[a]:
            assert fields[f"actuator_forcerange[{act}]"] == pytest.approx(
                list(mj.actuator_forcerange[a]), abs=ABS_TOL), act
        assert fields[f"actuator_ctrlrange[{act}]"] == pytest.approx(
            list(mj.actuator_ctrlrange[a]), abs=ABS_TOL), act


# ------------------------------------------------------------------------------------------------
# the model: the same numbers in both engines


def test_ur5e_stripped_copy_drops_only_visual_meshes():
    with open(os.path.join(ROBOTS, "universal_robots_ur5e", "ur5e.xml")) as f:
        text = f.read()
    visual = re.findall(r"<geom [^>]*/>", text)
    meshes = [g for g in visual if "mesh=" in g]
    assert meshes and all('class="visual"' in g for g in meshes)  # every mesh geom is visual
    stripped = strip_meshes(text)
    assert "mesh=" not in stripped and "<mesh " not in stripped
    assert len(re.findall(r"<geom ", stripped)) == len(visual) - len(meshes) == 12


def test_hinge_angles_from_frames():
    """hinge_angles reads MuJoCo's own qpos back from its body frames (so the same function
    measures s2r's)."""
    mj = mujoco.MjModel.from_xml_path(GEN3)
    data = mujoco.MjData(mj)
    mujoco.mj_resetDataKeyframe(mj, data, 0)
    mujoco.mj_forward(mj, data)
    angles = hinge_angles(mj, data.xquat)
    assert len(angles) == 7
    for j in range(mj.njnt):
        a = angles[mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j)]
        q = data.qpos[mj.jnt_qposadr[j]]
        assert np.angle(np.exp(1j * (a - q))) == pytest.approx(0, abs=1e-9)


@pytest.mark.parametrize("scene", [UR5E, GEN3], ids=["ur5e", "gen3"])
def test_menagerie_arm_matches_mujoco(scene, ur5e_for_mujoco):
    mj = mujoco.MjModel.from_xml_path(scene_for_mujoco(scene, ur5e_for_mujoco))
    report, fields = s2r_fields(scene)
    assert (mj.nq, mj.nv, mj.nu) == ((6, 6, 6) if scene == UR5E else (7, 7, 7))
    model_matches(mj, report, fields)


def test_robosuite_lift_matches_mujoco():
    """robosuite's assembled scene: 7 arm torque motors + 2 finger servos, the cube's free joint;
    the cube's mass is its collision box alone (<compiler inertiagrouprange="0 0"> leaves out the
    1e-8 kg visual box of group 1); the mocap-free scene has the same bodies except the eef
    frame, a massless body s2r merges into the hand."""
    mj = mujoco.MjModel.from_xml_path(LIFT)
    report, fields = s2r_fields(LIFT)
    assert (mj.nq, mj.nv, mj.nu) == (16, 15, 9)
    model_matches(mj, report, fields, nbody_merged=1)
    cube = mj.body("cube_main").id
    size = mj.geom_size[mj.geom("cube_g0").id]
    assert mj.body_mass[cube] == pytest.approx(1000 * 8 * np.prod(size), rel=1e-12)
    assert fields["body_mass[cube_main]"][0] == pytest.approx(mj.body_mass[cube], rel=REL_TOL)


# ------------------------------------------------------------------------------------------------
# trajectories


def compare_run(scene, mj, tmp_path, ctrl_rows, duration, names, keyframe="home"):
    steps = round(duration * CONTROL_HZ)
    traj = s2r_rollout(scene, duration, tmp_path,
                       None if ctrl_rows is None else (names, ctrl_rows), keyframe)
    key = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_KEY, keyframe)
    rows = np.tile(mj.key_ctrl[key], (steps, 1)) if ctrl_rows is None else ctrl_rows
    ref = mujoco_rollout(mj, rows, steps, keyframe)
    return ref, s2r_frames(mj, traj)


def arm_report(mj, ref, s2r, ee_body, ee_offset, label):
    moving = [b for b in range(1, mj.nbody) if mj.body_weldid[b] != 0 and not np.isnan(s2r[0][0, b, 0])]
    dp, dq = frame_errors(mj, ref, s2r, moving)
    ee = lambda p, q, k: p[k, ee_body] + rotate(q[k, ee_body], ee_offset)
    n = ref[0].shape[0]
    ee_err = np.array([np.linalg.norm(ee(*ref, k) - ee(*s2r, k)) for k in range(n)])
    ee_travel = max(np.linalg.norm(ee(*ref, k) - ee(*ref, 0)) for k in range(n))
    ang_ref = [hinge_angles(mj, ref[1][k]) for k in range(n)]
    ang_s2r = [hinge_angles(mj, s2r[1][k]) for k in range(n)]
    joint_err = max(abs(np.angle(np.exp(1j * (a[j] - b[j]))))
                    for a, b in zip(ang_ref, ang_s2r) for j in a)
    joint_travel = max(abs(np.angle(np.exp(1j * (ang_ref[k][j] - ang_ref[0][j]))))
                       for k in range(n) for j in ang_ref[0])
    print(f"{label}: joints worst {joint_err * 1e3:.2f} mrad (travel {joint_travel:.3f} rad), "
          f"end effector worst {ee_err.max() * 1e3:.2f} mm, at the end {ee_err[-1] * 1e3:.2f} mm "
          f"(travel {ee_travel * 1e3:.1f} mm); bodies worst {dp.max() * 1e3:.2f} mm "
          f"{dq.max() * 1e3:.2f} mrad")
    return joint_err, joint_travel, ee_err, ee_travel


def rotate(q, v):
    return quat_mul(quat_mul(q, np.array([0.0, *v])), quat_conj(q))[1:]


# Gen3's keys "home" and "retract" both hold joint_3 (unlimited) at pi: s2r keeps an unlimited
# hinge's turn in its state (joint_q) so its servo sees pi, not -pi (before, it wound the joint a
# full turn: bodies 0.78 m off MuJoCo's). The trajectories also start from "test_pose" ("home"
# with joint_3 at 0, added to a copy of the robot file). The copy excludes the contact
# of base_link and shoulder_link: their collision hulls overlap by 12 mm at every joint_1 angle
# (test_gen3_base_shoulder_overlap), a contact neither engine can resolve (the hinge holds the
# shoulder in place) and that they treat differently: MuJoCo's soft contact drags joint_1 by up to
# 0.28 rad in the step response, s2r's does not (measured with it: 279 mrad / 45 mm apart;
# without: 8 mrad / 1.7 mm).
GEN3_TEST_POSE = "0 0.26179939 0 -2.26892803 0 0.95993109 1.57079633"
GEN3_EXCLUDE = '<contact><exclude body1="base_link" body2="shoulder_link"/></contact>'


def gen3_with_test_pose(tmp_path):
    import shutil
    folder = tmp_path / "kinova_gen3"
    shutil.copytree(os.path.dirname(GEN3), folder)
    robot = (folder / "gen3.xml").read_text()
    key = f'<key name="test_pose" qpos="{GEN3_TEST_POSE}" ctrl="{GEN3_TEST_POSE}"/>\n  </keyframe>'
    assert robot.count("</keyframe>") == 1
    robot = robot.replace("</keyframe>", key)
    (folder / "gen3.xml").write_text(robot.replace("</mujoco>", GEN3_EXCLUDE + "\n</mujoco>"))
    return str(folder / "scene.xml")


def test_gen3_base_shoulder_overlap():
    """Menagerie's Gen3 as shipped: base_link's and shoulder_link's collision hulls overlap by
    about 12 mm (MuJoCo collides them: base_link is welded to the world, so the parent filter
    does not apply -- s2r's rule is the same), whatever joint_1's angle."""
    mj = mujoco.MjModel.from_xml_path(GEN3)
    data = mujoco.MjData(mj)
    mujoco.mj_resetDataKeyframe(mj, data, 0)
    for q1 in (0.0, 1.0, 2.5):
        data.qpos[0] = q1
        mujoco.mj_forward(mj, data)
        bodies = {(mj.geom_bodyid[c.geom1], mj.geom_bodyid[c.geom2]) for c in data.contact[:data.ncon]}
        assert bodies == {(mj.body("base_link").id, mj.body("shoulder_link").id)}
        assert min(c.dist for c in data.contact[:data.ncon]) == pytest.approx(-0.012, abs=1e-3)


ARMS = {
    # arm: scene, key, end-effector body, tool point in its frame (Gen3: pinch_site), MuJoCo's
    # reference timestep (None: the file's 2 ms). The Gen3's light wrist (bracelet 0.5 kg, no
    # armature) on kp 500 servos is at the edge of MuJoCo's stability at 2 ms: its step and
    # zero-control runs there differ from its own 0.2 ms runs by 62 and 110 mm (0.5 ms: 2.5 and
    # 6.4 mm), so the reference is MuJoCo at 0.2 ms; s2r runs at the file's 2 ms in every test.
    "ur5e": (UR5E, "home", "wrist_3_link", (0.0, 0.0, 0.0), None),
    "gen3": (GEN3, "home", "bracelet_link", (0.0, 0.0, -0.061525), 0.0002),
    "gen3_test_pose": (GEN3, "test_pose", "bracelet_link", (0.0, 0.0, -0.061525), 0.0002),
}


def arm_setup(arm, ur5e_copy, tmp_path):
    scene, key, ee_body, ee_offset, reference_dt = ARMS[arm]
    if arm.startswith("gen3"):
        scene = gen3_with_test_pose(tmp_path)
    mj = mujoco.MjModel.from_xml_path(scene_for_mujoco(scene, ur5e_copy))
    if reference_dt:
        mj.opt.timestep = reference_dt
    names = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, a) for a in range(mj.nu)]
    return scene, key, mj, mj.body(ee_body).id, ee_offset, names


@pytest.mark.parametrize("arm", sorted(ARMS))
def test_menagerie_arm_holds_home_like_mujoco(arm, ur5e_for_mujoco, tmp_path):
    """0.5 s with the key's ctrl held: the servos give way to gravity by (gravity torque / kp)
    and hold. Tolerances: joints within 2 mrad and the end effector within 1 mm of MuJoCo's at
    every 20 ms sample."""
    scene, key, mj, ee_body, ee_offset, _ = arm_setup(arm, ur5e_for_mujoco, tmp_path)
    ref, s2r = compare_run(scene, mj, tmp_path, None, 0.5, None, key)
    joint_err, _, ee_err, ee_travel = arm_report(mj, ref, s2r, ee_body, ee_offset, f"{arm} hold")
    assert ee_travel < 0.02  # it held
    assert joint_err < 2e-3, f"joint angle off MuJoCo by {joint_err * 1e3:.2f} mrad"
    assert ee_err.max() < 1e-3, f"end effector off MuJoCo by {ee_err.max() * 1e3:.2f} mm"


@pytest.mark.parametrize("arm", sorted(ARMS))
def test_menagerie_arm_step_response_like_mujoco(arm, ur5e_for_mujoco, tmp_path):
    """Every joint's target steps by +0.3 rad at t = 0 and is held for 1 s (Gen3's joint_3 from
    pi through it). Tolerances: joint angles within 15 mrad (5% of the step) and the end effector
    within 5 mm of MuJoCo's at every 20 ms sample, within 2 mm at the end. (Measured: UR5e 3.9 mrad
    / 2.2 mm, Gen3 13 mrad / 1.3 mm, Gen3 from test_pose 8.2 mrad / 1.7 mm; 0.01 mm at the end.)"""
    scene, key, mj, ee_body, ee_offset, names = arm_setup(arm, ur5e_for_mujoco, tmp_path)
    k = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_KEY, key)
    target = mj.key_ctrl[k] + 0.3
    limited = mj.actuator_ctrllimited.astype(bool)
    assert np.all(target[limited] <= mj.actuator_ctrlrange[limited, 1])
    steps = round(1.0 * CONTROL_HZ)
    ref, s2r = compare_run(scene, mj, tmp_path, np.tile(target, (steps, 1)), 1.0, names, key)
    joint_err, joint_travel, ee_err, ee_travel = arm_report(
        mj, ref, s2r, ee_body, ee_offset, f"{arm} step")
    assert joint_travel > 0.25 and ee_travel > 0.05  # it moved
    assert joint_err < 15e-3, f"joint angle off MuJoCo by {joint_err * 1e3:.2f} mrad"
    assert ee_err.max() < 5e-3, f"end effector off MuJoCo by {ee_err.max() * 1e3:.2f} mm"
    assert ee_err[-1] < 2e-3, f"end effector off MuJoCo by {ee_err[-1] * 1e3:.2f} mm at the end"


@pytest.mark.parametrize("arm", sorted(ARMS))
def test_menagerie_arm_zero_control_like_mujoco(arm, ur5e_for_mujoco, tmp_path):
    """ctrl = 0 for 1 s from the key: the servos pull every joint towards 0 (a large motion, the
    actuators saturated at their force ranges; Gen3's joint_3 turns by pi). Tolerances: joint
    angles within 60 mrad (2% of pi) and the end effector within 15 mm of MuJoCo's at every 20 ms
    sample. (Measured: UR5e 3.9 mrad / 1.4 mm, Gen3 47 mrad / 12.6 mm, Gen3 from test_pose
    9.3 mrad / 3.1 mm; all within 1.4 mm at the end.)"""
    scene, key, mj, ee_body, ee_offset, names = arm_setup(arm, ur5e_for_mujoco, tmp_path)
    steps = round(1.0 * CONTROL_HZ)
    ref, s2r = compare_run(scene, mj, tmp_path, np.zeros((steps, mj.nu)), 1.0, names, key)
    joint_err, joint_travel, ee_err, ee_travel = arm_report(
        mj, ref, s2r, ee_body, ee_offset, f"{arm} zero control")
    assert joint_travel > 0.5 and ee_travel > 0.1  # it moved
    assert joint_err < 60e-3, f"joint angle off MuJoCo by {joint_err * 1e3:.2f} mrad"
    assert ee_err.max() < 15e-3, f"end effector off MuJoCo by {ee_err.max() * 1e3:.2f} mm"


UNLIMITED_HINGE = """<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="hinge" axis="0 0 1" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1"/>
    </body>
  </worldbody>
  <actuator><position name="servo" joint="hinge" kp="2" kv="0.4"/></actuator>
  <custom><numeric name="s2r_reduce_trees" data="%d"/></custom>
</mujoco>
"""


@pytest.mark.parametrize("reduce_trees", [1, 0], ids=["tree", "maximal"])
def test_unlimited_hinge_winds_turns_like_mujoco(reduce_trees, tmp_path):
    """A servo on an unlimited hinge with its target 3 pi away winds the link one and a half
    turns, as in MuJoCo, and stops there: s2r keeps the hinge's turn (joint_q) instead of reading
    the angle modulo 2 pi, where the servo would never reach its target. Both solver paths (the
    articulated tree and maximal coordinates). Tolerances: the unwrapped angle within 60 mrad of
    MuJoCo's at every 20 ms sample over 3 s (0.6% of the 9.4 rad wound; measured 45 and 49 mrad,
    the two engines' different integrators during the spin) and within 5 mrad at the end."""
    scene = tmp_path / "hinge.xml"
    scene.write_text(UNLIMITED_HINGE % reduce_trees)
    mj = mujoco.MjModel.from_xml_path(str(scene))
    steps = round(3.0 * CONTROL_HZ)
    target = np.full((steps, 1), 3 * np.pi)
    traj = s2r_rollout(str(scene), 3.0, tmp_path, (["servo"], target), keyframe=None)
    s2r_angle = np.unwrap(2 * np.arctan2(traj["arm.qz"], traj["arm.qw"]))
    data = mujoco.MjData(mj)
    ref = [0.0]
    for k in range(steps):
        data.ctrl[0] = target[k, 0]
        for _ in range(round(1 / (CONTROL_HZ * mj.opt.timestep))):
            mujoco.mj_step(mj, data)
        ref.append(data.qpos[0])
    ref = np.array(ref)
    err = np.abs(s2r_angle - ref).max()
    print(f"unlimited hinge ({'tree' if reduce_trees else 'maximal'}): MuJoCo ends at "
          f"{ref[-1]:.3f} rad, s2r at {s2r_angle[-1]:.3f} rad, worst difference {err * 1e3:.2f} mrad")
    assert abs(ref[-1] - 3 * np.pi) < 0.05  # MuJoCo wound one and a half turns
    assert err < 60e-3
    assert abs(s2r_angle[-1] - ref[-1]) < 5e-3


def test_robosuite_lift_hold_like_mujoco(tmp_path):
    """robosuite's scene from "home" for 0.5 s: the arm motors hold the gravity torques of the
    home pose (what robosuite's controllers add at rest), the finger servos close from 0.0208 m
    to 0 at t = 0; the cube rests on the table. Tolerances: arm and finger bodies within 1 mm /
    2 mrad of MuJoCo's at every 20 ms sample, the cube within 1 mm of its start in both."""
    mj = mujoco.MjModel.from_xml_path(LIFT)
    key = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_KEY, "home")
    ctrl = mj.key_ctrl[key].copy()
    fingers = [mj.actuator(n).id for n in ("gripper0_right_gripper_finger_joint1",
                                           "gripper0_right_gripper_finger_joint2")]
    ctrl[fingers] = 0
    steps = round(0.5 * CONTROL_HZ)
    names = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, a) for a in range(mj.nu)]
    ref, s2r = compare_run(LIFT, mj, tmp_path, np.tile(ctrl, (steps, 1)), 0.5, names)
    arm = [b for b in range(1, mj.nbody) if mj.body_weldid[b] != 0 and
           mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, b).startswith(("robot0_", "gripper0_"))
           and not np.isnan(s2r[0][0, b, 0])]
    dp, dq = frame_errors(mj, ref, s2r, arm)
    cube = mj.body("cube_main").id
    finger = mj.body("gripper0_right_leftfinger").id
    hand = mj.body("gripper0_right_right_gripper").id
    travel = lambda p, b: np.linalg.norm(p[:, b] - p[0, b], axis=1).max()
    closing = lambda p: np.linalg.norm(p[-1, finger] - p[-1, hand]) - np.linalg.norm(p[0, finger] - p[0, hand])
    print(f"robosuite lift: arm+fingers worst {dp.max() * 1e3:.3f} mm {dq.max() * 1e3:.3f} mrad; "
          f"cube travel {travel(ref[0], cube) * 1e3:.3f} mm (MuJoCo) {travel(s2r[0], cube) * 1e3:.3f} mm "
          f"(s2r); hand travel {travel(ref[0], hand) * 1e3:.3f} mm; finger moved "
          f"{closing(ref[0]) * 1e3:.2f} mm (MuJoCo) {closing(s2r[0]) * 1e3:.2f} mm (s2r)")
    assert travel(ref[0], hand) < 2e-3 and travel(s2r[0], hand) < 2e-3  # the arm held
    assert abs(closing(ref[0])) > 3e-3  # the fingers moved (4 mm: damping 100 N s/m, kp 1000)
    assert dp.max() < 1e-3, f"body origin off MuJoCo by {dp.max() * 1e3:.2f} mm"
    assert dq.max() < 2e-3, f"body frame off MuJoCo by {dq.max() * 1e3:.2f} mrad"
    assert travel(ref[0], cube) < 1e-3 and travel(s2r[0], cube) < 1e-3
