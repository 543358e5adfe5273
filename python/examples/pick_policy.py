"""A hand-written pick-and-lift policy for `s2r sweep builtin:pick_lift --policy`, as a template.

It acts on what a learned policy would see: the noisy observation of the box, the gantry's joint
positions (encoders) and the task's lift height among the task parameters, and it knows
builtin:pick_lift's gripper: the hand sits at (q_x, q_y, 0.1 + q_z) in the world, its finger centres
7 cm below it, and a finger target of 4 cm presses the box with the fingers' whole force limit.
Per episode it keeps a phase and the box's position averaged over the steps while it still stands:
go over the box, close, wait until the fingers have stopped, then raise the box 1 cm more than
lift_height and hold it there. The episodes are labelled by the state checker (docs/sweep.md).

    s2r sweep builtin:pick_lift --out policy.zarr --policy 'python3 python/examples/pick_policy.py'
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import s2r_policy  # noqa: E402

HAND_Z0 = 0.1       # builtin:pick_lift: the hand's world z at q_z = 0
GRASP_ABOVE = 0.07  # m: the hand this far above the box's centre puts the finger centres on it
GRIP = 0.04         # m: finger target (the fingers touch a 5 cm box at 2 cm; the servo caps the force)
STEP = 0.006        # m a step while moving over the box
LIFT_STEP = 0.004   # m a step while lifting (0.2 m/s at 50 Hz)
ALIGNED = 0.003     # m: over the box within this, and at the grasp height within this, close

episodes = {}  # episode -> {"phase", "box" (mean observed position), "seen", "steps", "z", "fingers"}


def act(obs, task_params, episodes_now, first, info, joints=None):
    lift = task_params[:, info["task_param_names"].index("lift_height")]
    out = np.zeros((len(obs), info["action_size"]), np.float32)
    for i, e in enumerate(episodes_now.tolist()):
        if first[i]:
            episodes[e] = {"phase": "approach", "box": np.zeros(3), "seen": 0, "steps": 0}
        m = episodes[e]
        hand = np.array([joints[i, 0], joints[i, 1], HAND_Z0 + joints[i, 2]])
        fingers = joints[i, 3:5].copy()
        target, grip = hand.copy(), 0.0
        if m["phase"] == "approach":
            m["seen"] += 1
            m["box"] += (obs[i, 0:3] - m["box"]) / m["seen"]  # the box stands still: average its noise away
            goal = m["box"] + np.array([0.0, 0.0, GRASP_ABOVE])
            step = goal - hand
            n = np.linalg.norm(step)
            target = hand + step * min(1.0, STEP / max(n, 1e-9))
            if np.abs(goal - hand).max() < ALIGNED and m["seen"] > 5:
                m.update(phase="close", z=hand[2], xy=hand[:2].copy(), steps=0, fingers=fingers)
        if m["phase"] == "close":
            target = np.array([*m["xy"], m["z"]])
            grip = GRIP
            m["steps"] += 1
            moved = np.abs(fingers - m["fingers"]).max()
            m["fingers"] = fingers
            if m["steps"] >= 8 and moved < 2e-4:  # the fingers have stopped on the box
                m.update(phase="lift", top=m["z"] + lift[i] + 0.01, zt=m["z"])
        elif m["phase"] == "lift":
            m["zt"] = min(m["top"], m["zt"] + LIFT_STEP)
            target = np.array([*m["xy"], m["zt"]])
            grip = GRIP
        out[i] = [target[0], target[1], target[2] - HAND_Z0, grip, grip]
    return out


if __name__ == "__main__":
    s2r_policy.serve(act)
