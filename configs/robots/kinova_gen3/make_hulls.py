#!/usr/bin/env python3
"""Writes kinova_gen3/assets/*.stl: the convex hulls of the Kinova Gen3 link meshes.

Menagerie's gen3.xml names eight link meshes (assets/base_link.stl ... bracelet_with_vision_link.stl)
and uses each twice: as a visual geom (contype 0, skipped by s2r) and as a collision geom. Every
body has an explicit <inertial>, so the meshes never set a mass; they only collide, and both MuJoCo
and s2r collide a mesh as its convex hull. The hull of the hull is the hull, so a file holding
only the hull's triangles collides exactly like the full mesh in both engines, at a fraction of
the size (the full meshes are 5.6 MB, the hulls about 0.5 MB).

Menagerie's binary meshes are not in the stored snapshot we can read; the same eight files (same
names, same Kinova ros_kortex origin, same link inertials in the robot file) ship in robosuite's
wheel under robosuite/models/assets/robots/kinova3/meshes/ (MIT, see LICENSE.robosuite). Point
this script at that folder:

    pip download robosuite==1.5.2 --no-deps -d /tmp/rs && unzip -q /tmp/rs/*.whl -d /tmp/rs/w
    python3 configs/robots/kinova_gen3/make_hulls.py /tmp/rs/w/robosuite/models/assets/robots/kinova3/meshes

Needs numpy and scipy (scipy.spatial.ConvexHull is qhull, as s2r's loader and MuJoCo use).
"""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from stl_hull import read_stl, write_hull  # noqa: E402

MESHES = ["base_link", "shoulder_link", "half_arm_1_link", "half_arm_2_link", "forearm_link",
          "spherical_wrist_1_link", "spherical_wrist_2_link", "bracelet_with_vision_link"]


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    src = pathlib.Path(sys.argv[1])
    out = HERE / "assets"
    out.mkdir(exist_ok=True)
    for name in MESHES:
        points = read_stl(src / f"{name}.stl")
        n = write_hull(points, out / f"{name}.stl", f"robosuite 1.5.2 kinova3/meshes/{name}.stl")
        print(f"{name}.stl: {len(points) // 3} triangles -> hull of {n} vertices")


if __name__ == "__main__":
    main()
