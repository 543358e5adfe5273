"""A hand-written push policy for `s2r sweep builtin:push --policy`, as a template.

It acts on what a learned policy would see (the noisy observation and the goal among the task
parameters), keeps no state, and knows builtin:box_push's gantry: the actions are the slide joints'
position targets, and the pusher sits at (-0.1 + q_x, q_y) in the world. Each step: with the box
in the goal, hold still; behind the box on the line from the goal through it, push along that line;
elsewhere, go (at most 8 mm a step) to a point behind the box, around it if the box is in the way.

    s2r sweep builtin:push --out policy.zarr --policy 'python3 python/examples/push_policy.py'
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import s2r_policy  # noqa: E402

PUSHER_X0 = -0.1   # builtin:box_push: pusher_x's body x at q = 0
STANDOFF = 0.09    # m behind the box centre where a push starts
STEP = 0.008       # m a step while approaching
PUSH_DEPTH = 0.08  # m into the box that a push aims (the position servo's force grows with it)
CLEARANCE = 0.1    # m: how far around the box an approach goes


def act(obs, task_params, episodes, first, info):
    names = info["task_param_names"]
    goal = task_params[:, [names.index("goal_x"), names.index("goal_y")]]
    radius = task_params[:, names.index("goal_radius")]
    box, pusher = obs[:, 0:2], obs[:, 7:9]
    to_goal = goal - box
    dist = np.linalg.norm(to_goal, axis=1, keepdims=True)
    d = to_goal / np.maximum(dist, 1e-9)
    behind = box - STANDOFF * d
    rel = pusher - box
    along = np.sum(rel * d, axis=1, keepdims=True)                   # < 0: behind the box
    across = np.linalg.norm(rel - along * d, axis=1, keepdims=True)
    on_line = (along < -0.04) & (across < 0.015)
    # approach: straight to the point behind, unless the box is between: then sideways first
    side = np.stack([-d[:, 1], d[:, 0]], axis=1)
    side *= np.sign(np.sum(rel * side, axis=1, keepdims=True) + 1e-9)
    waypoint = np.where(along > -0.04, box + CLEARANCE * side - 0.02 * d, behind)
    step = waypoint - pusher
    n = np.linalg.norm(step, axis=1, keepdims=True)
    approach = pusher + step * np.minimum(1.0, STEP / np.maximum(n, 1e-9))
    push = box + (PUSH_DEPTH - STANDOFF) * d
    target = np.where(on_line, push, approach)
    target = np.where((dist[:, 0] < 0.5 * radius)[:, None], pusher, target)  # in the goal: hold
    return np.stack([target[:, 0] - PUSHER_X0, target[:, 1]], axis=1).astype(np.float32)


if __name__ == "__main__":
    s2r_policy.serve(act)
