"""Convex hulls of binary STL meshes, for the robot folders' generator scripts.

MuJoCo and s2r both collide a mesh geom as the convex hull of its vertices (docs/mjcf_subset.md,
<asset>). When the mesh's body has an explicit <inertial> the mesh sets no mass, so replacing the
file by its hull (the hull of a hull is the hull) changes nothing either engine simulates, and
makes the shipped file a fraction of the size. Needs numpy and scipy (scipy.spatial.ConvexHull is
qhull, as s2r's loader and MuJoCo use).
"""
import pathlib
import struct
import sys

import numpy as np
from scipy.spatial import ConvexHull


def read_stl(path: pathlib.Path) -> np.ndarray:
    """Vertices (3 per triangle) of a binary STL file."""
    data = path.read_bytes()
    (count,) = struct.unpack_from("<I", data, 80)
    if len(data) != 84 + 50 * count:
        sys.exit(f"stl_hull.py: {path} is not a binary STL file")
    rec = np.frombuffer(data, dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")]),
                        count=count, offset=84)
    return rec["v"].reshape(-1, 3).astype(np.float64)


def write_hull(points: np.ndarray, path: pathlib.Path, source: str) -> int:
    """Writes the convex hull of points as a binary STL (outward normals); returns its vertex count."""
    hull = ConvexHull(points)
    tris = []
    centre = points[hull.vertices].mean(axis=0)
    for simplex in hull.simplices:
        a, b, c = points[simplex]
        n = np.cross(b - a, c - a)
        if np.dot(n, a - centre) < 0:  # outward winding
            b, c, n = c, b, -n
        n = n / np.linalg.norm(n)
        tris.append(struct.pack("<12fH", *n, *a, *b, *c, 0))
    header = f"convex hull of {source}".encode()[:80].ljust(80, b" ")
    path.write_bytes(header + struct.pack("<I", len(tris)) + b"".join(tris))
    return len(hull.vertices)
