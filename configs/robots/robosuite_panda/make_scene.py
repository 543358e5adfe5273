#!/usr/bin/env python3
"""Writes robosuite_panda/lift_panda.xml (+ meshes/): robosuite's own assembled "Lift" scene.

robosuite builds its MJCF in Python: the robot file (robots/panda/robot.xml), the gripper
(grippers/panda_gripper.xml) attached to its hand, a mount, the table arena
(arenas/table_arena.xml) and a cube object, merged by ManipulationTask with every name prefixed
(robot0_, gripper0_right_, fixed_mount0_, cube_). This script runs that assembly -- robosuite's
suite.make("Lift", robots="Panda", seed=0) -- and keeps the XML it produces just before the
simulation would start (robosuite 1.5.2's own sim setup does not run under MuJoCo 4, and nothing
after the assembly changes the model). Then it makes these changes, each checked:

  removed, cannot change the dynamics:
    * <texture>, <material> and every 'material' attribute (visual; the textures are image files);
    * mesh geoms with contype = conaffinity = 0 (visual meshes; every one is in a body with an
      <inertial> or in a static body) and the mesh assets only they used;
    * the two mocap bodies robosuite adds as IK target markers (left_eef_target,
      right_eef_target: contype = conaffinity = 0 geoms, no joint, nothing attached);
    * the empty <equality/>, <tendon/>, <contact/> sections;
  replaced by an equivalent:
    * each collision mesh file by its convex hull (../stl_hull.py: both engines collide a mesh as
      its hull, and every mesh body has an <inertial>), under meshes/, names kept;
  changed (a dynamics change, documented in ../README.md):
    * <option density="1.2" viscosity="0.00002"> (air) removed: s2r has no fluid forces;
  added:
    * the keyframe "home": the Panda at robosuite's init_qpos, the fingers at the gripper's
      init_qpos (0.020833 m open each), the cube resting on the table centre; its ctrl holds that
      pose the way robosuite's controllers do at rest: the arm's seven torque motors get the
      gravity torques of the home pose (MuJoCo's qfrc_bias there, computed on this very file) and
      the two finger position servos their home positions.

The cube's size is drawn by robosuite's rng (seed 0): 0.0213 x 0.0205 x 0.0201 m half-extents.

robosuite 1.5.2 (MIT, see LICENSE) must be importable with its dependencies; this worked with the
project venv's MuJoCo 4.0.1:

    pip download robosuite==1.5.2 --no-deps -d /tmp/rs
    pip install --target /tmp/rs/site --no-deps /tmp/rs/robosuite-1.5.2-py3-none-any.whl \\
        termcolor tqdm pynput mink==0.0.5 Pillow opencv-python-headless numba llvmlite
    PYTHONPATH=/tmp/rs/site .venv/bin/python configs/robots/robosuite_panda/make_scene.py
"""
import os
import pathlib
import sys
import tempfile
import xml.etree.ElementTree as ET

import mujoco
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from stl_hull import read_stl, write_hull  # noqa: E402

OUT = HERE / "lift_panda.xml"
MESH_DIR = HERE / "meshes"


class _Assembled(Exception):
    pass


def assemble():
    """robosuite's Lift/Panda MJCF, as its ManipulationTask writes it, and the robot's init_qpos."""
    import robosuite
    from robosuite.environments.base import MujocoEnv

    if robosuite.__version__ != "1.5.2":
        sys.exit(f"make_scene.py: written for robosuite 1.5.2, found {robosuite.__version__}")
    captured = {}

    def capture(self, xml_string=None):
        captured["xml"] = self.model.get_xml()
        captured["env"] = self
        raise _Assembled()

    MujocoEnv._initialize_sim = capture
    try:
        robosuite.make("Lift", robots="Panda", has_renderer=False, has_offscreen_renderer=False,
                       use_camera_obs=False, seed=0)
    except _Assembled:
        pass
    robot = captured["env"].robots[0]
    arm_q = np.asarray(robot.robot_model.init_qpos, dtype=float)
    grip_q = np.asarray(robot.gripper["right"].init_qpos, dtype=float)
    return captured["xml"], arm_q, grip_q


def body_has_inertial_or_static(body, parents):
    if body.find("inertial") is not None:
        return True
    chain = [body] + parents
    return all(b.find("joint") is None and b.find("freejoint") is None for b in chain)


def trim(root):
    notes = []
    # fluid forces: s2r has none
    option = root.find("option")
    for a in ("density", "viscosity"):
        if a in option.attrib:
            notes.append(f"option {a}={option.attrib.pop(a)} removed")
    # textures and materials (visual)
    asset = root.find("asset")
    for tag in ("texture", "material"):
        for e in asset.findall(tag):
            asset.remove(e)
    for e in root.iter():
        e.attrib.pop("material", None)
    # empty sections
    for tag in ("equality", "tendon", "contact"):
        for e in root.findall(tag):
            if len(e):
                sys.exit(f"make_scene.py: <{tag}> is not empty; s2r cannot load it")
            root.remove(e)
    # mocap target markers, and visual mesh geoms
    worldbody = root.find("worldbody")

    def walk(parent, parents):
        for body in list(parent.findall("body")):
            if body.get("mocap") == "true":
                ok = (body.find("body") is None and body.find("joint") is None and
                      all(g.get("contype") == "0" and g.get("conaffinity") == "0"
                          for g in body.findall("geom")))
                if not ok:
                    sys.exit(f"make_scene.py: mocap body {body.get('name')} is not visual-only")
                parent.remove(body)
                notes.append(f"mocap body {body.get('name')} removed")
                continue
            for g in list(body.findall("geom")):
                if (g.get("type") == "mesh" and g.get("contype") == "0" and
                        g.get("conaffinity") == "0"):
                    if not body_has_inertial_or_static(body, parents):
                        sys.exit(f"make_scene.py: visual mesh {g.get('name')} gives mass")
                    body.remove(g)
            walk(body, [body] + parents)

    walk(worldbody, [])
    used = {g.get("mesh") for g in root.iter("geom") if g.get("mesh")}
    for m in list(asset.findall("mesh")):
        if m.get("name") not in used:
            asset.remove(m)
    return notes


def write_meshes(root):
    MESH_DIR.mkdir(exist_ok=True)
    for old in MESH_DIR.glob("*.stl"):
        old.unlink()
    root.find("compiler").set("meshdir", "meshes")
    for m in root.find("asset").findall("mesh"):
        src = pathlib.Path(m.get("file"))
        name = m.get("name") + ".stl"
        rel = src.as_posix().split("/robosuite/models/assets/")[-1]
        write_hull(read_stl(src), MESH_DIR / name, "robosuite 1.5.2 " + rel)
        m.set("file", name)


def add_home(root, arm_q, grip_q):
    """The keyframe home: init poses, cube on the table, ctrl = gravity torques + finger targets."""
    text = ET.tostring(root, encoding="unicode")
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(MESH_DIR, os.path.join(tmp, "meshes"))
        path = os.path.join(tmp, "scene.xml")
        pathlib.Path(path).write_text(text)
        model = mujoco.MjModel.from_xml_path(path)
    data = mujoco.MjData(model)
    qpos = model.qpos0.copy()
    names = [f"robot0_joint{i}" for i in range(1, 8)] + \
        ["gripper0_right_finger_joint1", "gripper0_right_finger_joint2"]
    for name, q in zip(names, list(arm_q) + list(grip_q)):
        qpos[model.joint(name).qposadr[0]] = q
    cube = model.geom("cube_g0")
    table = model.geom("table_collision")
    table_top = model.body("table").pos[2] + model.geom_size[table.id][2]
    adr = model.joint("cube_joint0").qposadr[0]
    qpos[adr:adr + 7] = [0, 0, table_top + model.geom_size[cube.id][2], 1, 0, 0, 0]
    data.qpos[:] = qpos
    mujoco.mj_forward(model, data)
    ctrl = np.zeros(model.nu)
    for a in range(model.nu):
        joint = model.actuator_trnid[a, 0]
        dof = model.jnt_dofadr[joint]
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, joint)
        ctrl[a] = data.qfrc_bias[dof] if name.startswith("robot0_") else qpos[model.jnt_qposadr[joint]]
    fmt = lambda v: " ".join(f"{x:.9g}" for x in v)
    keyframe = ET.SubElement(root, "keyframe")
    ET.SubElement(keyframe, "key", name="home", qpos=fmt(qpos), ctrl=fmt(ctrl))


def main():
    xml, arm_q, grip_q = assemble()
    root = ET.fromstring(xml)
    notes = trim(root)
    write_meshes(root)
    add_home(root, arm_q, grip_q)
    ET.indent(root, space="  ")
    header = ("<!-- Generated by configs/robots/robosuite_panda/make_scene.py: robosuite 1.5.2's "
              "assembled Lift scene\n     (Panda, Panda gripper, table arena, cube; MIT, see LICENSE),"
              " trimmed as that script says. -->\n")
    OUT.write_text(header + ET.tostring(root, encoding="unicode") + "\n")
    for n in notes:
        print(n)
    print("wrote", OUT, "and", len(list(MESH_DIR.glob("*.stl"))), "meshes")


if __name__ == "__main__":
    main()
