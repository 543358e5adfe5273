"""Behaviour cloning of a built-in sweep's expert (builtin:push's by default, the file's name) into a
policy network for `s2r sweep --policy-net`, then DAgger rounds on the network's own episodes.

    python3 python/examples/train_push_net.py push_net.npz [--task push|pick_lift|peg_insert|panda_push]
        [--episodes 512] [--dagger 4] [--noise 0.004] [--s2r build/s2r] [--from-store STORE]

1. `s2r sweep` of the task's built-in config (configs/sweeps/TASK.yaml) with `store:
   {policy_inputs: true}` (docs/sweep.md): the expert's episodes, whose store holds at every step
   the observation, the task parameters, the joints and (peg_insert) the target (the inputs a
   network gets in the step, kernels/policy_net.h) and the expert's action. Or --from-store STORE:
   a store of the task made so already (the labels are its steps/expert_action where it has them,
   else its steps/action).
2. A tanh MLP (two hidden layers of 64) fits the actions to those inputs (mean squared error, Adam,
   NumPy only), its inputs standardised and its outputs scaled by the data's statistics
   (input_mean, input_std, action_scale, action_bias in the file): behaviour cloning.
3. DAgger (Ross, Gordon and Bagnell, 2011), --dagger rounds: the task's sweep (new seeds) with this
   script as the policy process (`--policy ME --policy-expert`), the network acting
   (s2r_policy.net_act, the step's arithmetic in NumPy; the expert in a fraction --beta^k of round
   k's episodes) and the expert's actions sent at every step: the network visits the states its own
   mistakes lead to, the expert says what it would do there, those pairs join the data and the
   network is fitted again. Each round prints the network's success rate on its episodes.
4. The file: layer0.weight ... as torch's nn.Linear lays them out.

--noise STD collects step 1 DART-style (Laskey et al., 2017): the sweep's config also has
`action_noise` (docs/sweep.md), so the engine adds noise of STD m (correlated over
--noise-time-constant s) to the expert's actions; the episodes wander off the expert's path and the
store's label of the next step (steps/expert_action) is the expert's clean action in the state the
noise led to: the network learns recoveries from its own kind of error.

Then `s2r sweep builtin:TASK --out net.zarr --policy-net push_net.npz` evaluates it in every
world's step (on the GPU with --backend cuda), and `s2r compare expert.zarr net.zarr` shows where it
falls short of the expert it imitates. The network has no memory: what the expert does from its own timers
it can only guess from what it sees.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))


def serve(record, net=None, beta="0"):
    """The policy process of step 3: the network's actions (the expert's in a fraction beta of the
    episodes, chosen by episode index; all of them without a network), every step's inputs and the
    expert's actions kept in RECORD (.npz)."""
    import s2r_policy

    act_net = s2r_policy.net_act(net) if net else None
    beta = float(beta)
    xs, ys = [], []

    def act(obs, task_params, episodes, first, info, joints, target, expert):
        if expert is None:
            raise RuntimeError("the sweep sends no expert actions: run it with --policy-expert")
        xs.append(np.concatenate([obs, task_params, joints] + ([target] if info["target_size"] else []), axis=1))
        ys.append(expert.copy())
        if act_net is None:
            return expert
        out = act_net(obs, task_params, episodes, first, info, joints, target)
        by_expert = (episodes * 2654435761 % 1000) < beta * 1000
        out[by_expert] = expert[by_expert]
        return out

    try:
        s2r_policy.serve(act)
    finally:
        if xs:  # (a failure before the first step shows as itself)
            np.savez(record, x=np.concatenate(xs), y=np.concatenate(ys))


def train(x, y, hidden, steps, seed, inputs):
    """A tanh MLP fitted to y(x) by Adam on minibatches; returns the network's arrays (x's blocks:
    `inputs`)."""
    rng = np.random.default_rng(seed)
    x_mean, x_std = x.mean(0), np.maximum(x.std(0), 1e-3)   # constant inputs (most task parameters): std 1e-3
    y_mean, y_std = y.mean(0), np.maximum(y.std(0), 1e-4)
    xn, yn = (x - x_mean) / x_std, (y - y_mean) / y_std
    sizes = [x.shape[1], *hidden, y.shape[1]]
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        params += [rng.normal(0, np.sqrt(1.0 / a), (b, a)), np.zeros(b)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    lr, b1, b2 = 3e-3, 0.9, 0.999
    for t in range(1, steps + 1):
        idx = rng.integers(0, len(xn), 512)
        h, acts = xn[idx], [xn[idx]]
        for k in range(0, len(params), 2):
            h = h @ params[k].T + params[k + 1]
            if k + 2 < len(params):
                h = np.tanh(h)
            acts.append(h)
        grad_out = 2 * (h - yn[idx]) / len(idx)
        grads = [None] * len(params)
        for k in range(len(params) - 2, -1, -2):
            grads[k] = grad_out.T @ acts[k // 2]
            grads[k + 1] = grad_out.sum(0)
            if k > 0:
                grad_out = (grad_out @ params[k]) * (1 - acts[k // 2] ** 2)
        rate = lr * (0.1 if t > 0.8 * steps else 1.0)
        for i, g in enumerate(grads):
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            params[i] -= rate * (m[i] / (1 - b1 ** t)) / (np.sqrt(v[i] / (1 - b2 ** t)) + 1e-8)
        if t % 1000 == 0 or t == steps:
            print(f"step {t}: loss {np.mean((h - yn[idx]) ** 2):.4f} (normalized)", file=sys.stderr)
    net = {}
    for k in range(0, len(params), 2):
        net[f"layer{k // 2}.weight"] = params[k].astype(np.float32)
        net[f"layer{k // 2}.bias"] = params[k + 1].astype(np.float32)
    net.update(activation=np.array("tanh"), inputs=np.array(inputs),
               input_mean=x_mean.astype(np.float32), input_std=x_std.astype(np.float32),
               action_scale=y_std.astype(np.float32), action_bias=y_mean.astype(np.float32))
    return net


def collection_config(a, work):
    """The built-in sweep's config (configs/sweeps/TASK.yaml) recording the policy inputs, with
    action noise of a.noise (the actuators' units) where asked."""
    with open(os.path.join(HERE, "..", "..", "configs", "sweeps", a.task + ".yaml")) as f:
        text = f.read()
    if "\nstore:\n" not in text:
        raise RuntimeError(f"configs/sweeps/{a.task}.yaml has no store: section")
    text = text.replace("\nstore:\n", "\nstore:\n  policy_inputs: true\n", 1)
    if a.noise > 0:
        noise = f"action_noise:\n  std: {a.noise}\n  time_constant_s: {a.noise_time_constant}\n"
        text = text.replace("\nevents:", "\n" + noise + "events:", 1) if "\nevents:" in text else text + noise
    path = os.path.join(work, a.task + "_collect.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def from_store(path):
    """A sweep store's every step as (inputs, labels, success rate, task): a network's default inputs
    side by side (obs, task_params, joints and, where the task has one, target:
    s2r_policy.store_inputs), and the expert's actions (steps/expert_action, else steps/action); the
    store must record the policy inputs (store.policy_inputs)."""
    import zarr

    import s2r_policy

    try:
        x = s2r_policy.store_inputs(path)
    except ValueError as e:
        sys.exit(str(e))
    root = zarr.open_group(store=str(path), mode="r")
    meta = root.attrs["s2r"]
    label = "expert_action" if "expert_action" in meta["features"] else "action"
    success = root["episodes/success"][:meta["commit"]["episodes"]]
    return (x.astype(np.float64), root[f"steps/{label}"][:len(x)].astype(np.float64), float(np.mean(success)),
            meta["tasks"][0]["name"])


def collect_store(a, work, seed):
    """Step 1: the expert's sweep into a store that records the inputs, read back."""
    store = os.path.join(work, "expert.zarr")
    subprocess.run([a.s2r, "sweep", collection_config(a, work), "--episodes", str(a.episodes), "--worlds", "64",
                    "--seed", str(seed), "--out", store], check=True, stdout=subprocess.DEVNULL)
    out = from_store(store)
    shutil.rmtree(store, ignore_errors=True)
    return out[:3]


def collect(a, work, name, seed, net, beta):
    """One DAgger round's sweep of a.episodes episodes of the task with this script as the policy (the
    network's actions, the expert's in a fraction beta of them), returning the inputs, the expert's
    actions and the sweep's success rate."""
    record, store, summary = (os.path.join(work, name + ext) for ext in (".npz", ".zarr", ".json"))
    me = f"{sys.executable} {os.path.abspath(__file__)} --serve {record}" + (f" {net} {beta}" if net else "")
    subprocess.run([a.s2r, "sweep", "builtin:" + a.task, "--episodes", str(a.episodes), "--worlds", "64", "--seed",
                    str(seed), "--out", store, "--policy", me, "--policy-expert", "--summary-json", summary],
                   check=True, stdout=subprocess.DEVNULL)
    data = np.load(record)
    with open(summary) as f:
        rate = json.load(f)["success_rate"]
    shutil.rmtree(store, ignore_errors=True)
    return data["x"].astype(np.float64), data["y"].astype(np.float64), rate


def backing_off(x, y, task):
    """push: the share of steps whose expert action moves the pusher away from the box: its target
    (the slide joints' targets, y) minus where the joints are (x's last two columns) against the
    pusher's observed offset to the box (x's obs: object px py, effector px py at columns 0-1 and
    7-8), as text; "" for the other tasks."""
    if task != "push":
        return ""
    step = y - x[:, -2:]
    to_box = x[:, 0:2] - x[:, 7:9]
    return f"; the expert backs off in {float(np.mean((step * to_box).sum(1) < 0)):.2f} of them"


def main():
    if len(sys.argv) in (3, 5) and sys.argv[1] == "--serve":
        serve(*sys.argv[2:])
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", help="the network file to write (.npz)")
    p.add_argument("--episodes", type=int, default=512, help="episodes per sweep: the expert's, then each round's (default 512)")
    p.add_argument("--dagger", type=int, default=0, help="DAgger rounds after behaviour cloning (default 0: cloning only)")
    p.add_argument("--beta", type=float, default=0.5,
                   help="round k acts with the expert in a fraction beta^k of its episodes (default 0.5)")
    p.add_argument("--s2r", default=os.environ.get("S2R_BIN", "s2r"), help="the s2r binary (default: s2r on PATH)")
    p.add_argument("--hidden", default="64,64", help="hidden layer widths (default 64,64)")
    p.add_argument("--steps", type=int, default=6000, help="Adam steps per fit (default 6000)")
    p.add_argument("--seed", type=int, default=0, help="the first sweep's seed (round k's: seed + k) and the fits'")
    p.add_argument("--task", default="push", choices=["push", "pick_lift", "peg_insert", "panda_push"],
                   help="the built-in sweep whose expert is cloned (default push)")
    p.add_argument("--noise", type=float, default=0.0,
                   help="DART: action noise (the actuators' units, m for the built-in tasks) on the expert's "
                        "collection sweep (default 0: none)")
    p.add_argument("--noise-time-constant", type=float, default=0.1,
                   help="its correlation time constant, s (default 0.1; 0: independent steps)")
    p.add_argument("--from-store", help="fit to this store's steps instead of sweeping the expert (it must "
                                        "record the policy inputs: store.policy_inputs; its task is --task's)")
    a = p.parse_args()
    work = tempfile.mkdtemp(prefix="s2r_bc_")
    hidden = [int(h) for h in a.hidden.split(",")]
    try:
        if a.from_store:
            x, y, rate, task = from_store(a.from_store)
            if task != a.task:
                sys.exit(f"{a.from_store}: a {task} store; this fit is for --task {a.task}")
        else:
            x, y, rate = collect_store(a, work, a.seed)
        print(f"{a.from_store or 'expert'}{' under action noise' if a.noise > 0 else ''}: {len(x)} steps, "
              f"success {rate:.3f}{backing_off(x, y, a.task)}", file=sys.stderr)
        inputs = ["obs", "task_params", "joints"] + (["target"] if a.task == "peg_insert" else [])
        net = train(x, y, hidden, a.steps, a.seed, inputs)
        for k in range(1, a.dagger + 1):
            path = os.path.join(work, f"round{k - 1}.npz")
            np.savez(path, **net)
            xk, yk, rate = collect(a, work, f"round{k}", a.seed + k, path, a.beta ** k)
            print(f"round {k}: success {rate:.3f} in {a.episodes} episodes (the expert's in a fraction "
                  f"{a.beta ** k:.3f}); {len(xk)} steps labelled by the expert{backing_off(xk, yk, a.task)}, "
                  f"join {len(x)}", file=sys.stderr)
            x, y = np.concatenate([x, xk]), np.concatenate([y, yk])
            net = train(x, y, hidden, a.steps, a.seed, inputs)
        np.savez(a.out, **net)
        print(f"wrote {a.out}: layers {[net[f'layer{k}.weight'].shape[::-1] for k in range(len(hidden) + 1)]}",
              file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
