"""Serve a policy to `s2r sweep CONFIG --out STORE --policy 'python3 my_policy.py'`.

s2r starts the command with pipes on its standard input and output and, at every control step,
sends the observations of the worlds whose episodes are running; the policy answers one action row
per world (the protocol: host/sweep/policy.h; docs/sweep.md *Evaluating a policy*). With this
module a policy is one function:

    import numpy as np
    import s2r_policy

    def act(obs, task_params, episodes, first, info, joints=None, target=None, expert=None):
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
        # expert: (n, info["action_size"]) float32, what the task's scripted expert would do in
        #      each world at this step, when the sweep runs with --policy-expert (else None): the
        #      labels for DAgger-style training on the policy's own episodes
        # -> (n, info["action_size"]) actions, the task's actuator targets (info["action_names"])
        return np.zeros((len(obs), info["action_size"]), np.float32)

    s2r_policy.serve(act)

`joints`, `target` and `expert` are passed only to a function that names them (or takes **kwargs).

Anything the policy prints must go to standard error: standard output carries the answers.

`python3 s2r_policy.py --net FILE.npz` serves a policy network file (`s2r sweep --policy-net`'s) as
a policy process, computed in NumPy as s2r's step computes it (net_act): a reference for the file's
meaning. net_forward(FILE) is the same network as a function of its input rows, and
store_inputs(STORE, names) builds those rows from a sweep store recorded with `store:
{policy_inputs: true}` (docs/sweep.md *What is recorded*): training or checking a network offline.
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
    target_size, target_names, target_body, expert_size, control_hz, task, worlds). act also gets
    joints=, target= and expert= when its signature names them or takes **kwargs (expert is None
    unless the sweep sends it: `s2r sweep --policy-expert`, info["expert_size"] > 0)."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    info = json.loads(stdin.readline())
    if info.get("protocol") != PROTOCOL:
        raise ValueError(f"s2r speaks {info.get('protocol')!r}, this module {PROTOCOL!r}")
    obs_size, action_size, tp_size = info["obs_size"], info["action_size"], info["task_param_size"]
    joint_size, target_size = info["joint_size"], info["target_size"]
    expert_size = info.get("expert_size", 0)
    params = inspect.signature(act).parameters
    takes_all = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values())
    wants = [k for k in ("joints", "target", "expert") if takes_all or k in params]
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
        extra["expert"] = (np.frombuffer(_read(stdin, 4 * n * expert_size), "<f4").reshape(n, expert_size)
                           if expert_size else None)
        kwargs = {k: extra[k] for k in wants}
        actions = np.asarray(act(obs, task_params, episodes, first, info, **kwargs), dtype="<f4")
        if actions.shape != (n, action_size):
            raise ValueError(f"act returned shape {actions.shape}, s2r needs ({n}, {action_size})")
        stdout.write(struct.pack("<4sI", b"S2RA", n))
        stdout.write(actions.tobytes())
        stdout.flush()


def net_forward(path):
    """The policy network of an .npz file (`s2r sweep --policy-net FILE`, docs/sweep.md) as a function
    of its input rows: forward(x) -> actions, x (n, inputs) float32 in the order of the file's
    `inputs` (its second return value; None: the default obs, task_params, joints and, where the task
    has one, target). The arithmetic of s2r's step (kernels/policy_net.h), in float32, each output
    summed over its inputs in order starting from its bias: bit for bit with relu or linear layers
    (tanh and elu may differ in the last bit between NumPy and the C library)."""
    z = np.load(path)
    names = list(z.files)
    nlayer = 0
    while f"layer{nlayer}.weight" in names:
        nlayer += 1
    weights = [z[f"layer{k}.weight"].astype(np.float32) for k in range(nlayer)]
    biases = [z[f"layer{k}.bias"].astype(np.float32) if f"layer{k}.bias" in names
              else np.zeros(len(weights[k]), np.float32) for k in range(nlayer)]
    hidden = str(z["activation"]) if "activation" in names else "linear"
    output = str(z["output_activation"]) if "output_activation" in names else "linear"
    opt = {k: z[k].astype(np.float32) for k in ("input_mean", "input_std", "action_scale", "action_bias")
           if k in names}
    clip = np.float32(z["input_clip"]) if "input_clip" in names else None
    inputs = [str(s) for s in z["inputs"]] if "inputs" in names else None
    functions = {"linear": lambda v: v, "relu": lambda v: np.maximum(v, np.float32(0)), "tanh": np.tanh,
                 "elu": lambda v: np.where(v > 0, v, np.expm1(v)).astype(np.float32)}

    def forward(x):
        x = np.asarray(x, np.float32)
        if "input_mean" in opt:
            x = x - opt["input_mean"]
        if "input_std" in opt:
            x = x / opt["input_std"]
        if clip is not None:
            x = np.clip(x, -clip, clip)
        for k in range(nlayer):
            w = weights[k]
            y = np.broadcast_to(biases[k], (len(x), len(w))).copy()
            for j in range(w.shape[1]):
                y = y + w[:, j][None, :] * x[:, j:j + 1]
            x = functions[output if k + 1 == nlayer else hidden](y).astype(np.float32)
        if "action_scale" in opt:
            x = x * opt["action_scale"]
        if "action_bias" in opt:
            x = x + opt["action_bias"]
        return x

    return forward, inputs


def net_act(path):
    """The policy network of an .npz file as an act function for serve() (net_forward's arithmetic),
    so that `--policy 'python3 python/s2r_policy.py --net FILE'` acts as `--policy-net FILE` does on
    the CPU backend. A reference for what the file means, and a way to run it outside the step."""
    forward, inputs = net_forward(path)
    # episode -> its last actions (the `last_action` input; zeros at its first step). Every running
    # episode is asked at every step, so the last step's answers are all there is to keep.
    last = {}

    def act(obs, task_params, episodes, first, info, joints, target):
        zeros = np.zeros(info["action_size"], np.float32)
        previous = np.array([zeros if first[i] else last[e] for i, e in enumerate(episodes.tolist())],
                            np.float32).reshape(len(obs), info["action_size"])
        blocks = {"obs": obs, "task_params": task_params, "joints": joints, "target": target,
                  "last_action": previous}
        names_in = inputs or ["obs", "task_params", "joints"] + (["target"] if info["target_size"] else [])
        x = forward(np.concatenate([blocks[k] for k in names_in], axis=1))
        last.clear()
        last.update((e, x[i].copy()) for i, e in enumerate(episodes.tolist()))
        return x

    return act


def store_inputs(store, names=None):
    """A network's input rows for every step of a sweep store, (steps, inputs) float32: the blocks
    `names` (a network file's `inputs`; None: obs, task_params, joints and, where the store has it,
    target) side by side, as the step gives them to a network. obs is steps/obs; task_params, joints
    and target are the store's arrays of them, which a sweep records with `store: {policy_inputs:
    true}` (docs/sweep.md *What is recorded*); last_action is the episode's previous steps/action row
    (zeros at its first step). A block the store lacks is a ValueError naming it."""
    import zarr

    root = zarr.open_group(store=str(store), mode="r")
    meta = root.attrs["s2r"]
    steps = meta["commit"]["steps"]
    features = meta["features"]
    if names is None:
        names = ["obs", "task_params", "joints"] + (["target"] if "target" in features else [])
    blocks = []
    for name in names:
        if name == "last_action":
            action = root["steps/action"][:steps].astype(np.float32)
            previous = np.zeros_like(action)
            previous[1:] = action[:-1]
            previous[root["steps/is_first"][:steps].astype(bool)] = 0
            blocks.append(previous)
        elif name in features:
            blocks.append(root[f"steps/{name}"][:steps].astype(np.float32).reshape(steps, -1))
        else:
            hint = (": sweep it with `store: {policy_inputs: true}` in its config (docs/sweep.md)"
                    if name in ("task_params", "joints", "target") else "")
            raise ValueError(f"{store}: no steps/{name}{hint}")
    return np.concatenate(blocks, axis=1)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--net":
        serve(net_act(sys.argv[2]))
    else:
        sys.exit("usage: python3 s2r_policy.py --net FILE.npz  (serve a policy network as a policy process)")
