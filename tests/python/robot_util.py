"""What the robot-model tests (test_robot_models.py, test_arm_models.py) share: where the models
and the s2r binary are, the tolerances of a float32 build against MuJoCo's float64, and the two
small tools every comparison needs (a copy of a model without its mesh geoms for MuJoCo, whose
mesh files are not shipped; the engine fields `s2r inspect` reports)."""
import json
import os
import re
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROBOTS = os.path.join(REPO, "configs", "robots")
S2R_BIN = os.environ.get("S2R_BIN", os.path.join(REPO, "build", "s2r"))
HAVE_S2R = os.path.isfile(S2R_BIN) and os.access(S2R_BIN, os.X_OK)
SKIP_REASON = f"s2r binary not found at {S2R_BIN} (build it, or set S2R_BIN)"

# float32 storage in s2r (Real) against MuJoCo's float64: relative 1e-6 on masses and gains
REL_TOL = 1e-6
ABS_TOL = 1e-6


def strip_meshes(text):
    """The model without <mesh> assets and mesh geoms (geoms with a 'mesh' attribute)."""
    text = re.sub(r"\n\s*<mesh [^>]*/>", "", text)
    return re.sub(r"\n\s*<geom [^>]*mesh=\"[^\"]*\"[^>]*/>", "", text)


def s2r_fields(scene):
    """`s2r inspect --fields --json`: the report and {address: nominal value}."""
    proc = subprocess.run([S2R_BIN, "inspect", "--fields", "--json", scene],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    return report, {p["address"]: p["nominal"] for p in report["parameters"]}
