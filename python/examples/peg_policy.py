"""A hand-written peg-in-hole policy for `s2r sweep builtin:peg_insert --policy`, as a template.

It acts on the noisy observation of the peg (its tip: the peg body's origin), the gantry's joint
positions and the socket's position (the `target` s2r sends: the hole's mouth), and it knows
builtin:peg_insert's gripper: the hand sits at (q_x, q_y, 0.12 + q_z) in the world, a hand 12 cm
above the tip puts the fingers on the peg, and a finger target of 3 cm presses it with the servos'
force. Per episode it keeps a phase and running means of the peg's observed position: go over the
peg, close, wait until the fingers stop, lift the tip 4 cm above the mouth, carry it over the hole
(where the tip sits relative to the hand, averaged while carrying, puts the hand), settle, and
lower it until the tip would be insert_depth + 5 mm deep. Labelled by the state checker.

    s2r sweep builtin:peg_insert --out policy.zarr --policy 'python3 python/examples/peg_policy.py'
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import s2r_policy  # noqa: E402

HAND_Z0 = 0.12      # builtin:peg_insert: the hand's world z at q_z = 0
GRASP_ABOVE = 0.12  # m: the hand this far above the tip puts the finger centres 2.5 cm under the peg's top
GRIP = 0.03         # m: finger target (the fingers touch a 2 cm peg at 1.5 cm)
STEP = 0.006        # m a step while moving (0.3 m/s at 50 Hz)
LIFT_STEP = 0.004   # m a step while lifting
INSERT_STEP = 0.002  # m a step while lowering into the hole (0.1 m/s)
CLEAR = 0.04        # m: the tip this far above the mouth while carrying

episodes = {}


def toward(frm, to, step):
    d = to - frm
    n = np.linalg.norm(d)
    return frm + d * min(1.0, step / max(n, 1e-9))


def act(obs, task_params, episodes_now, first, info, joints=None, target=None):
    depth = task_params[:, info["task_param_names"].index("insert_depth")]
    out = np.zeros((len(obs), info["action_size"]), np.float32)
    for i, e in enumerate(episodes_now.tolist()):
        if first[i]:
            episodes[e] = {"phase": "approach", "peg": np.zeros(3), "seen": 0}
        m = episodes[e]
        hand = np.array([joints[i, 0], joints[i, 1], HAND_Z0 + joints[i, 2]])
        fingers = joints[i, 3:5].copy()
        tip = obs[i, 0:3]
        mouth = target[i]
        goal, grip = hand.copy(), GRIP
        if m["phase"] == "approach":
            grip = 0.0
            m["seen"] += 1
            m["peg"] += (tip - m["peg"]) / m["seen"]  # the peg stands still: average its noise away
            want = m["peg"] + np.array([0.0, 0.0, GRASP_ABOVE])
            goal = toward(hand, want, STEP)
            if np.abs(want - hand).max() < 0.003 and m["seen"] > 5:
                m.update(phase="close", hold=hand.copy(), steps=0, fingers=fingers)
        if m["phase"] == "close":
            goal = m["hold"]
            m["steps"] += 1
            moved = np.abs(fingers - m["fingers"]).max()
            m["fingers"] = fingers
            if m["steps"] >= 8 and moved < 2e-4:
                m.update(phase="lift", zt=hand[2], offset=None, n=0)
        elif m["phase"] in ("lift", "carry", "insert"):
            # where the tip sits relative to the hand, a running mean (the grip holds it still)
            rel = tip - hand
            m["n"] += 1
            m["offset"] = rel if m["offset"] is None else m["offset"] + (rel - m["offset"]) / min(m["n"], 25)
            top = mouth[2] + CLEAR - m["offset"][2]  # the hand height that carries the tip CLEAR above the mouth
            place = mouth[:2] - m["offset"][:2]
            if m["phase"] == "lift":
                m["zt"] = min(top, m["zt"] + LIFT_STEP)
                goal = np.array([*m["hold"][:2], m["zt"]])
                if m["zt"] >= top and abs(hand[2] - m.get("lastz", 0.0)) < 2e-4:  # risen as far as it goes
                    m.update(phase="carry", xy=hand[:2].copy(), last=hand.copy(), zbias=0.0)
                m["lastz"] = hand[2]
            if m["phase"] == "carry":
                # the z servo sags under the hand's and the peg's weight: learn by how much
                m["zbias"] = float(np.clip(m["zbias"] + 0.3 * (top - hand[2]), 0.0, 0.015))
                m["xy"] = toward(m["xy"], place, STEP)
                goal = np.array([*m["xy"], top + m["zbias"]])
                settled = (np.abs(hand - m["last"]).max() < 3e-4 and np.abs(hand[:2] - place).max() < 1e-3
                           and abs(top - hand[2]) < 1e-3)
                m["last"] = hand.copy()
                if settled:
                    m.update(phase="insert", zt=top, xy=place.copy())
            if m["phase"] == "insert":
                bottom = mouth[2] - (depth[i] + 0.005) - m["offset"][2]
                m["zt"] = max(bottom, m["zt"] - INSERT_STEP)
                goal = np.array([*m["xy"], m["zt"] + m["zbias"]])
        out[i] = [goal[0], goal[1], goal[2] - HAND_Z0, grip, grip]
    return out


if __name__ == "__main__":
    s2r_policy.serve(act)
