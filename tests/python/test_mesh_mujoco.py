"""Mesh, cylinder and ellipsoid geoms against MuJoCo: contacts at t = 0 and drop-and-settle.

The meshes (a cube, a tetrahedron and a 12-sided prism) are written as binary STL files into the
test's temporary directory, next to one MJCF scene that both engines load. s2r runs through
`s2r rollout --contacts` (the binary named by $S2R_BIN, default <repo>/build/s2r).

Contacts at t = 0: s2r's first control step is one physics step, so its contact list is the
narrow phase at the initial pose. Every pair starts 2-5 mm into its support, so MuJoCo (which
reports only penetrating contacts at zero margin) and s2r (which also keeps speculative ones) both
report it. Compared per geom pair: the deepest separation (0.2 mm: EPA on curved shapes is within
0.1 mm, polytope pairs within 1e-6), the normal (cosine > 0.999), and for the cube and tetrahedron
on the plane the contact points themselves as a set (1e-5 m); the prism's 12-gon face keeps 4 of
its corners in both engines, not necessarily the same 4.

Drop and settle: the same objects dropped from 2 cm, 1.5 s. The rest pose (body origin within
2 mm, tilt within 1 degree of MuJoCo's) compares what the contacts do, not just where they are.
MuJoCo reference settings as in test_mujoco_parity.py (timestep 0.5 ms, implicitfast, elliptic
cones, impratio 10, solref 0.005); MuJoCo 4's default multiccd gives its mesh-on-box contact a
full patch.
"""
import csv
import json
import math
import os
import struct
import subprocess

import pytest

mujoco = pytest.importorskip("mujoco")
np = pytest.importorskip("numpy")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
S2R_BIN = os.environ.get("S2R_BIN", os.path.join(REPO, "build", "s2r"))
if not (os.path.isfile(S2R_BIN) and os.access(S2R_BIN, os.X_OK)):
    pytest.skip(f"s2r binary not found at {S2R_BIN} (build it, or set S2R_BIN)",
                allow_module_level=True)


# --- mesh files ---------------------------------------------------------------------------------

def box_triangles(h):
    v = [np.array([(1 if i & 1 else -1) * h[0], (1 if i & 2 else -1) * h[1],
                   (1 if i & 4 else -1) * h[2]]) for i in range(8)]
    quads = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    tris = []
    for q in quads:
        tris += [(v[q[0]], v[q[1]], v[q[2]]), (v[q[0]], v[q[2]], v[q[3]])]
    return tris


def tetra_triangles(s):
    a, b, c, d = (np.array(p) * s for p in ([0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]))
    return [(a, c, b), (a, b, d), (a, d, c), (b, c, d)]


def prism_triangles(n, r, h):
    tris = []
    for k in range(n):
        a0, a1 = 2 * math.pi * k / n, 2 * math.pi * (k + 1) / n
        b0 = np.array([r * math.cos(a0), r * math.sin(a0), -h])
        b1 = np.array([r * math.cos(a1), r * math.sin(a1), -h])
        t0, t1 = b0 + [0, 0, 2 * h], b1 + [0, 0, 2 * h]
        tris += [(b0, b1, t1), (b0, t1, t0), (np.array([0, 0, h]), t0, t1),
                 (np.array([0, 0, -h]), b1, b0)]
    return tris


def write_stl(path, tris):
    with open(path, "wb") as f:
        f.write(b"s2r test mesh".ljust(80, b" "))
        f.write(struct.pack("<I", len(tris)))
        for t in tris:
            f.write(struct.pack("<12fH", 0, 0, 0, *t[0], *t[1], *t[2], 0))


SCENE = """<mujoco model="convex">
  <compiler angle="radian" meshdir="meshes"/>
  <option timestep="0.002"/>
  <custom>
    <numeric name="s2r_control_hz" data="500"/>
  </custom>
  <asset>
    <mesh name="cube" file="cube.stl"/>
    <mesh name="tetra" file="tetra.stl"/>
    <mesh name="prism" file="prism.stl"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
    <geom name="table" type="box" size="0.15 0.15 0.05" pos="1 1 0.05"/>
    <body name="cube" pos="0 0 {cube_z}" euler="0 0 0.3"><freejoint/>
      <geom name="cube" type="mesh" mesh="cube" density="500"/></body>
    <body name="tetra" pos="0.5 0 {tetra_z}"><freejoint/>
      <geom name="tetra" type="mesh" mesh="tetra" density="500"/></body>
    <body name="prism" pos="1 0 {prism_z}"><freejoint/>
      <geom name="prism" type="mesh" mesh="prism" density="500"/></body>
    <body name="cyl" pos="0 1 {cyl_z}"><freejoint/>
      <geom name="cyl" type="cylinder" size="0.04 0.06" density="500"/></body>
    <body name="ell" pos="0.5 1 {ell_z}"><freejoint/>
      <geom name="ell" type="ellipsoid" size="0.08 0.05 0.04" density="500"/></body>
    <body name="oncube" pos="1.02 1.01 {oncube_z}" euler="0 0 0.4"><freejoint/>
      <geom name="oncube" type="mesh" mesh="cube" density="500"/></body>
  </worldbody>
</mujoco>
"""
# body origins at rest: the tetrahedron's file frame has its base at z = 0 (its geom frame, at the
# centroid, sits 0.025 higher); the other meshes are centred in their files
REST = {"cube": 0.05, "tetra": 0.0, "prism": 0.05, "cyl": 0.06, "ell": 0.04, "oncube": 0.15}


def write_scene(tmp_path, lift):
    """Scene with each body `lift` above its resting height (negative: into its support)."""
    meshes = tmp_path / "meshes"
    meshes.mkdir(exist_ok=True)
    write_stl(meshes / "cube.stl", box_triangles([0.05, 0.05, 0.05]))
    write_stl(meshes / "tetra.stl", tetra_triangles(0.1))
    write_stl(meshes / "prism.stl", prism_triangles(12, 0.05, 0.05))
    heights = {f"{k}_z": REST[k] + lift[k] for k in REST}
    path = tmp_path / "convex.xml"
    path.write_text(SCENE.format(**heights))
    return str(path)


def run_s2r(scene, duration, tmp_path):
    out, contacts = tmp_path / "traj.csv", tmp_path / "contacts.csv"
    cmd = [S2R_BIN, "rollout", scene, "--duration", repr(duration), "--out", str(out),
           "--contacts", str(contacts)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stderr}"

    def read(path):
        with open(path) as f:
            rows = list(csv.reader(f))
        return {h: np.array([float(r[i]) for r in rows[1:]]) for i, h in enumerate(rows[0])}

    return read(out), read(contacts)


def mujoco_model(scene):
    model = mujoco.MjModel.from_xml_path(scene)
    model.opt.timestep = 0.0005
    model.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    model.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    model.opt.impratio = 10
    # multiccd (a contact patch for convex-convex pairs) is on by default in MuJoCo 4
    assert not model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_MULTICCD
    model.geom_solref[:, 0] = 0.005
    return model


def geom_name(model, g):
    return mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, int(g))


# --- contacts at t = 0 --------------------------------------------------------------------------

DEPTH = {"cube": -0.002, "tetra": -0.003, "prism": -0.002, "cyl": -0.002, "ell": -0.004,
         "oncube": -0.002}


def test_initial_contacts_match_mujoco(tmp_path):
    scene = write_scene(tmp_path, DEPTH)
    model = mujoco_model(scene)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    ref = {}
    for c in data.contact[:data.ncon]:
        key = tuple(sorted((geom_name(model, c.geom1), geom_name(model, c.geom2))))
        sign = 1 if geom_name(model, c.geom1) == key[0] else -1
        ref.setdefault(key, []).append((c.pos.copy(), sign * c.frame[:3].copy(), c.dist))

    _, contacts = run_s2r(scene, 0.002, tmp_path)
    got = {}
    for i in range(len(contacts["time"])):
        ga, gb = int(contacts["geom_a"][i]), int(contacts["geom_b"][i])
        key = tuple(sorted((geom_name(model, ga), geom_name(model, gb))))
        sign = 1 if geom_name(model, ga) == key[0] else -1
        point = np.array([contacts[k][i] for k in ("px", "py", "pz")])
        normal = sign * np.array([contacts[k][i] for k in ("nx", "ny", "nz")])
        got.setdefault(key, []).append((point, normal, contacts["separation"][i]))

    assert set(ref) == {k for k, v in got.items() if min(p[2] for p in v) < 0}
    for key, want in ref.items():
        have = got[key]
        deepest_ref = min(want, key=lambda p: p[2])
        deepest = min(have, key=lambda p: p[2])
        assert deepest[2] == pytest.approx(deepest_ref[2], abs=2e-4), key
        assert np.dot(deepest[1], deepest_ref[1]) > 0.999, (key, deepest[1], deepest_ref[1])
        pen = [p for p in have if p[2] < 0]
        if key in (("cube", "floor"), ("floor", "tetra")):
            # a face or vertex on the plane: the manifold is unique (4 corners, 1 vertex), the
            # same points in both (s2r may add speculative ones above the plane)
            assert len(pen) == len(want), key
            for p, _, d in want:
                dist = min(np.linalg.norm(p - q) for q, _, _ in pen)
                assert dist < 1e-5, (key, p)
        if key == ("floor", "prism"):
            # a 12-gon face on the plane: both keep 4 of its 12 corners, not necessarily the
            # same 4; every s2r point must be a bottom corner at the same depth
            assert len(pen) == 4 and len(want) == 4
            b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "prism")
            for q, _, d in pen:
                assert d == pytest.approx(deepest_ref[2], abs=1e-5)
                assert np.linalg.norm((q - data.xpos[b])[:2]) == pytest.approx(0.05, abs=1e-5)


# --- drop and settle ----------------------------------------------------------------------------

LIFT = {k: 0.02 for k in REST}


def test_drop_and_settle_matches_mujoco(tmp_path):
    scene = write_scene(tmp_path, LIFT)
    duration = 1.5
    traj, _ = run_s2r(scene, duration, tmp_path)
    model = mujoco_model(scene)
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, nstep=round(duration / model.opt.timestep))
    worst = [0.0, 0.0, 0.0]  # position (m), tilt (rad), speed (m/s)
    for name in REST:
        b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name)
        pos = np.array([traj[f"{name}.p{k}"][-1] for k in "xyz"])
        quat = np.array([traj[f"{name}.q{k}"][-1] for k in "wxyz"])
        np.testing.assert_allclose(pos, data.xpos[b], atol=2e-3, err_msg=name)
        # relative rotation angle between the two rest orientations
        dot = abs(float(np.dot(quat, data.xquat[b])))
        angle = 2 * math.acos(min(1.0, dot))
        assert angle < math.radians(1.0), (name, math.degrees(angle))
        # and at rest in s2r: speed below 1 cm/s
        speed = math.sqrt(sum(traj[f"{name}.v{k}"][-1] ** 2 for k in "xyz"))
        assert speed < 1e-2, (name, speed)
        worst = [max(worst[0], float(np.max(np.abs(pos - data.xpos[b])))), max(worst[1], angle),
                 max(worst[2], speed)]
    print(f"mesh drop and settle: worst rest position {worst[0] * 1e3:.3f} mm, tilt "
          f"{math.degrees(worst[1]):.3f} deg, speed {worst[2] * 1e3:.3f} mm/s")


# --- mass properties ----------------------------------------------------------------------------

def test_mass_and_inertia_match_mujoco(tmp_path):
    """Body mass and principal inertia from mesh volumes (and cylinder, ellipsoid) as MuJoCo's
    compiler computes them: 1e-6 relative (float32 storage). Principal moments are compared as
    sorted triples: the principal-axis order is a convention of each engine's eigen solver."""
    scene = write_scene(tmp_path, {k: 0.0 for k in REST})
    proc = subprocess.run([S2R_BIN, "inspect", "--fields", scene, "--json"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    params = {p["address"]: p["nominal"] for p in json.loads(proc.stdout)["parameters"]}
    model = mujoco.MjModel.from_xml_path(scene)
    for name in REST:
        b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name)
        assert params[f"body_mass[{name}]"][0] == pytest.approx(model.body_mass[b], rel=1e-6), name
        np.testing.assert_allclose(sorted(params[f"body_inertia[{name}]"]),
                                   sorted(model.body_inertia[b]), rtol=1e-5, err_msg=name)


# --- real robot meshes --------------------------------------------------------------------------

ROBOSUITE = os.path.join(REPO, "configs", "robots", "robosuite_meshes")
PANDA_PARTS = ("link0", "hand", "finger")


def panda_scene(heights):
    bodies = "\n".join(
        f'    <body name="{p}" pos="{i} 0 {float(heights[p])!r}" euler="0.3 -0.2 {0.5 * i}"><freejoint/>'
        f'<geom name="{p}" type="mesh" mesh="{p}" density="1000"/></body>'
        for i, p in enumerate(PANDA_PARTS))
    assets = "".join(f'<mesh name="{p}" file="{p}.stl"/>' for p in PANDA_PARTS)
    return f"""<mujoco model="panda_parts">
  <compiler angle="radian" meshdir="{ROBOSUITE}"/>
  <option timestep="0.002"/>
  <custom><numeric name="s2r_control_hz" data="500"/></custom>
  <asset>{assets}</asset>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
{bodies}
  </worldbody>
</mujoco>
"""


def test_robosuite_panda_meshes_match_mujoco(tmp_path):
    """Franka Panda collision meshes (robosuite's STL files, open surfaces of ~100 vertices):
    mass and inertia from the mesh volume (1e-5 relative), the geom frame at the mesh centroid
    (1e-6 m), and each part placed 2 mm into the floor in a tilted pose: the deepest hull vertex
    at the same depth (1e-5 m) and place (1e-5 m)."""
    # each part's lowest hull vertex from MuJoCo, so that it goes exactly 2 mm into the floor
    probe = mujoco.MjModel.from_xml_string(panda_scene({p: 0.5 for p in PANDA_PARTS}))
    pdata = mujoco.MjData(probe)
    mujoco.mj_forward(probe, pdata)
    heights = {}
    for p in PANDA_PARTS:
        g = mujoco.mj_name2id(probe, mujoco.mjtObj.mjOBJ_GEOM, p)
        mesh = probe.geom_dataid[g]
        verts = probe.mesh_vert[probe.mesh_vertadr[mesh]:probe.mesh_vertadr[mesh] + probe.mesh_vertnum[mesh]]
        world = pdata.geom_xpos[g] + verts @ pdata.geom_xmat[g].reshape(3, 3).T
        heights[p] = 0.5 - world[:, 2].min() - 0.002
    scene = tmp_path / "panda_parts.xml"
    scene.write_text(panda_scene(heights))
    model = mujoco.MjModel.from_xml_path(str(scene))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)

    proc = subprocess.run([S2R_BIN, "inspect", "--fields", str(scene), "--json"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    params = {p["address"]: p["nominal"] for p in json.loads(proc.stdout)["parameters"]}
    for p in PANDA_PARTS:
        b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, p)
        g = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, p)
        assert params[f"body_mass[{p}]"][0] == pytest.approx(model.body_mass[b], rel=1e-5), p
        np.testing.assert_allclose(sorted(params[f"body_inertia[{p}]"]),
                                   sorted(model.body_inertia[b]), rtol=1e-4, err_msg=p)
        np.testing.assert_allclose(params[f"geom_pos[{p}]"], model.geom_pos[g], atol=1e-6,
                                   err_msg=p)

    _, contacts = run_s2r(str(scene), 0.002, tmp_path)
    for p in PANDA_PARTS:
        g = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, p)
        ref = [c for c in data.contact[:data.ncon] if g in (c.geom1, c.geom2)]
        assert ref, p
        deepest_ref = min(ref, key=lambda c: c.dist)
        rows = [i for i in range(len(contacts["time"])) if g in (contacts["geom_a"][i], contacts["geom_b"][i])]
        i = min(rows, key=lambda i: contacts["separation"][i])
        assert contacts["separation"][i] == pytest.approx(deepest_ref.dist, abs=1e-5), p
        point = np.array([contacts[k][i] for k in ("px", "py", "pz")])
        np.testing.assert_allclose(point, deepest_ref.pos, atol=1e-5, err_msg=p)
