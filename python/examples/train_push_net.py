"""Behaviour cloning of builtin:push's expert into a policy network for `s2r sweep --policy-net`.

    python3 python/examples/train_push_net.py push_net.npz [--episodes 512] [--s2r build/s2r]

1. `s2r sweep builtin:push` runs the expert's episodes into a store;
2. the same sweep again with this script as a policy process (`--policy`) that answers each world's
   step with the expert's recorded action (the same seeds: the same worlds, so the episodes are
   the expert's, bit for bit) and keeps what it was sent: the observation, the task parameters and
   the joints, the inputs a network gets in the step (kernels/policy_net.h);
3. a tanh MLP (two hidden layers of 64) fits the actions to those inputs (mean squared error, Adam,
   NumPy only), its inputs standardised and its outputs scaled by the data's statistics (input_mean,
   input_std, action_scale, action_bias in the file);
4. the file: layer0.weight ... as torch's nn.Linear lays them out.

Then `s2r sweep builtin:push --out net.zarr --policy-net push_net.npz` evaluates it in every world's
step (on the GPU with --backend cuda), and `s2r compare expert.zarr net.zarr` shows where it falls
short of the expert it imitates. The network has no memory: what the expert does from its own timers
it can only guess from what it sees.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))


def serve_replay(store, record):
    """The policy process of step 2: the expert's actions back, the inputs kept in RECORD (.npz)."""
    import s2r_policy
    import zarr

    root = zarr.open_group(store=store, mode="r")
    n = root.attrs["s2r"]["commit"]["episodes"]
    start = dict(zip(root["episodes/seed"][:n].tolist(), root["episodes/start"][:n].tolist()))
    action = root["steps/action"][:]
    step, xs, ys = {}, [], []

    def act(obs, task_params, episodes, first, info, joints):
        out = np.empty((len(obs), info["action_size"]), np.float32)
        for i, e in enumerate(episodes.tolist()):
            step[e] = 0 if first[i] else step[e] + 1
            out[i] = action[start[e] + step[e]]
        xs.append(np.concatenate([obs, task_params, joints], axis=1))
        ys.append(out.copy())
        return out

    try:
        s2r_policy.serve(act)
    finally:
        np.savez(record, x=np.concatenate(xs), y=np.concatenate(ys))


def train(x, y, hidden, steps, seed):
    """A tanh MLP fitted to y(x) by Adam on minibatches; returns the network's arrays."""
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
    net.update(activation=np.array("tanh"), inputs=np.array(["obs", "task_params", "joints"]),
               input_mean=x_mean.astype(np.float32), input_std=x_std.astype(np.float32),
               action_scale=y_std.astype(np.float32), action_bias=y_mean.astype(np.float32))
    return net


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--serve-replay":
        serve_replay(sys.argv[2], sys.argv[3])
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", help="the network file to write (.npz)")
    p.add_argument("--episodes", type=int, default=512, help="expert episodes to learn from (default 512)")
    p.add_argument("--s2r", default=os.environ.get("S2R_BIN", "s2r"), help="the s2r binary (default: s2r on PATH)")
    p.add_argument("--hidden", default="64,64", help="hidden layer widths (default 64,64)")
    p.add_argument("--steps", type=int, default=6000, help="Adam steps (default 6000)")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    work = tempfile.mkdtemp(prefix="s2r_bc_")
    try:
        expert, replay, record = (os.path.join(work, n) for n in ("expert.zarr", "replay.zarr", "inputs.npz"))
        sweep = [a.s2r, "sweep", "builtin:push", "--episodes", str(a.episodes), "--worlds", "64"]
        subprocess.run(sweep + ["--out", expert], check=True, stdout=subprocess.DEVNULL)
        me = f"{sys.executable} {os.path.abspath(__file__)} --serve-replay {expert} {record}"
        subprocess.run(sweep + ["--out", replay, "--policy", me], check=True, stdout=subprocess.DEVNULL)
        data = np.load(record)
        print(f"{len(data['x'])} steps of {a.episodes} expert episodes", file=sys.stderr)
        net = train(data["x"].astype(np.float64), data["y"].astype(np.float64),
                    [int(h) for h in a.hidden.split(",")], a.steps, a.seed)
        np.savez(a.out, **net)
        print(f"wrote {a.out}: layers {[net[f'layer{k}.weight'].shape[::-1] for k in range(len(net) // 2 - 3)]}",
              file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
