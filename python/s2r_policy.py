"""Serve a policy to `s2r sweep CONFIG --out STORE --policy 'python3 my_policy.py'`.

s2r starts the command with pipes on its standard input and output and, at every control step,
sends the observations of the worlds whose episodes are running; the policy answers one action row
per world (the protocol: host/sweep/policy.h; docs/sweep.md *Evaluating a policy*). With this
module a policy is one function:

    import numpy as np
    import s2r_policy

    def act(obs, task_params, episodes, first, info, joints=None, target=None):
        # obs: (n, info["obs_size"]) float32, the observation model's output (noise, bias,
        #      latency as configured), columns info["obs_names"]
        # task_params: (n, info["task_param_size"]) float32, the episode's task parameters
        #      (goal_x, goal_y, ...: info["task_param_names"]; a goal_change event moves the goal)
        # episodes: (n,) int64 episode indices; first: (n,) bool, the episode's first step (reset
        #      any per-episode memory)
        # joints: (n, info["joint_size"]) float32, the positions of the joints the actions drive
        #      (info["joint_names"]; true values, as encoders read them)
        # target: (n, info["target_size"]) float32, the task's target body's position, world
        #      (peg_insert: the socket's hole mouth; (n, 0) for tasks without one)
        # -> (n, info["action_size"]) actions, the task's actuator targets (info["action_names"])
        return np.zeros((len(obs), info["action_size"]), np.float32)

    s2r_policy.serve(act)

`joints` and `target` are passed only to a function that names them (or takes **kwargs).

Anything the policy prints must go to standard error: standard output carries the answers.
"""

import inspect
import json
import struct
import sys

import numpy as np

PROTOCOL = "s2r.policy/2"


def _read(stream, n):
    data = stream.read(n)
    if len(data) != n:
        raise EOFError("s2r closed the pipe in the middle of a message")
    return data


def serve(act, stdin=None, stdout=None):
    """Answer s2r's steps with act(obs, task_params, episodes, first, info) until s2r says the
    sweep ended. `info` is the layout s2r sent at the start (a dict: obs_size, obs_names,
    action_size, action_names, task_param_size, task_param_names, joint_size, joint_names,
    target_size, target_names, target_body, control_hz, task, worlds). act also gets joints= and
    target= when its signature names them or takes **kwargs."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    info = json.loads(stdin.readline())
    if info.get("protocol") != PROTOCOL:
        raise ValueError(f"s2r speaks {info.get('protocol')!r}, this module {PROTOCOL!r}")
    obs_size, action_size, tp_size = info["obs_size"], info["action_size"], info["task_param_size"]
    joint_size, target_size = info["joint_size"], info["target_size"]
    params = inspect.signature(act).parameters
    takes_all = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values())
    wants = [k for k in ("joints", "target") if takes_all or k in params]
    while True:
        magic, n, _step = struct.unpack("<4sIQ", _read(stdin, 16))
        if magic == b"S2RE":
            return
        if magic != b"S2RS":
            raise ValueError(f"unexpected message {magic!r}")
        episodes = np.frombuffer(_read(stdin, 8 * n), "<i8")
        first = np.frombuffer(_read(stdin, n), "u1").astype(bool)
        obs = np.frombuffer(_read(stdin, 4 * n * obs_size), "<f4").reshape(n, obs_size)
        task_params = np.frombuffer(_read(stdin, 4 * n * tp_size), "<f4").reshape(n, tp_size)
        extra = {
            "joints": np.frombuffer(_read(stdin, 4 * n * joint_size), "<f4").reshape(n, joint_size),
            "target": np.frombuffer(_read(stdin, 4 * n * target_size), "<f4").reshape(n, target_size),
        }
        kwargs = {k: extra[k] for k in wants}
        actions = np.asarray(act(obs, task_params, episodes, first, info, **kwargs), dtype="<f4")
        if actions.shape != (n, action_size):
            raise ValueError(f"act returned shape {actions.shape}, s2r needs ({n}, {action_size})")
        stdout.write(struct.pack("<4sI", b"S2RA", n))
        stdout.write(actions.tobytes())
        stdout.flush()
