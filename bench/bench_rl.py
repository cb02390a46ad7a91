"""Reinforcement learning's whole run: torchjax against PyTorch, cold and warm (issue 12).

    python bench/bench_rl.py                       # both loops, 3 rounds, ~3 minutes
    python bench/bench_rl.py --algo reinforce --episodes 40 --rounds 1

pytorch/examples' reinforcement_learning scripts in miniature, so that no gymnasium is
needed: a pole balanced on a cart (NumPy, the classic equations of motion; an episode ends
when the pole falls or after --max-steps), a 4 -> 128 -> 2 policy with dropout, a Categorical
per step, and per episode one backward over every step's graph:
- reinforce: the log-probabilities of the actions taken, times the normalised returns,
  `torch.cat(...).sum()`;
- actor_critic: a shared layer with an action head and a value head, the policy loss plus
  smooth_l1 of the values, `torch.stack(...).sum()`.
Every episode's length is a new graph (and new shapes for its per-episode ops): the case
eager mode with a program cache finds hardest.

Each measurement is a fresh process (--child): torch, torchjax-cold (an empty
TORCHJAX_CACHE_DIR), torchjax-warm (a second process on the cache the cold one left). Rounds
interleave the variants; "whole" is the child's wall time, start to exit, "loop" the
training loop's. Ratios are torchjax's median over PyTorch's median; both run the same
episode lengths (Cart), so the same number of environment steps.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

GAMMA = 0.99


class Cart:
    """A cart-pole in NumPy: state (x, x', theta, theta'), actions push left or right.

    An episode's length is drawn from the seed, not from the pole's fall: both libraries
    then run the same episode lengths (the same sequence of new graphs and shapes) although
    their random streams, and so their actions, differ. The lengths grow as a learning
    agent's do: episode i lasts between 10 and 20 + 4 i steps, at most max_steps."""

    def __init__(self, seed, max_steps):
        self.rng = np.random.default_rng(seed)
        self.lengths = np.random.default_rng(seed + 1)
        self.max_steps = max_steps
        self.episode = 0

    def reset(self):
        self.s = self.rng.uniform(-0.05, 0.05, 4)
        self.t = 0
        self.length = min(int(self.lengths.integers(10, 20 + 4 * self.episode)),
                          self.max_steps)
        self.episode += 1
        return self.s.astype(np.float32)

    def step(self, action):
        x, v, th, w = self.s
        force = 10.0 if action == 1 else -10.0
        c, s = np.cos(th), np.sin(th)
        tmp = (force + 0.05 * w * w * s) / 1.1
        acc_th = (9.8 * s - c * tmp) / (0.5 * (4.0 / 3.0 - 0.1 * c * c / 1.1))
        acc_x = tmp - 0.05 * acc_th * c / 1.1
        self.s = np.array([x + 0.02 * v, v + 0.02 * acc_x, th + 0.02 * w, w + 0.02 * acc_th])
        self.t += 1
        if abs(self.s[2]) > 0.2095:  # (fallen: stood up again, the episode goes on)
            self.s = self.rng.uniform(-0.05, 0.05, 4)
        return self.s.astype(np.float32), 1.0, self.t >= self.length


def build(lib, algo):
    nn, F = lib.nn, lib.nn.functional

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.affine1 = nn.Linear(4, 128)
            self.dropout = nn.Dropout(p=0.6)
            self.affine2 = nn.Linear(128, 2)

        def forward(self, x):
            x = F.relu(self.dropout(self.affine1(x)))
            return F.softmax(self.affine2(x), dim=1), None

    class ActorCritic(nn.Module):
        def __init__(self):
            super().__init__()
            self.affine1 = nn.Linear(4, 128)
            self.action_head = nn.Linear(128, 2)
            self.value_head = nn.Linear(128, 1)

        def forward(self, x):
            x = F.relu(self.affine1(x))
            return F.softmax(self.action_head(x), dim=-1), self.value_head(x)

    return Policy() if algo == "reinforce" else ActorCritic()


def run(lib, algo, episodes, max_steps, seed):
    """The training loop; returns the number of environment steps taken."""
    from collections import deque
    Categorical = lib.distributions.Categorical
    F = lib.nn.functional
    lib.manual_seed(seed)
    env = Cart(seed, max_steps)
    model = build(lib, algo)
    opt = lib.optim.Adam(model.parameters(), lr=1e-2 if algo == "reinforce" else 3e-2)
    eps = np.finfo(np.float32).eps.item()
    steps = 0
    for _ in range(episodes):
        state = env.reset()
        saved, rewards = [], []
        done = False
        while not done:
            x = lib.from_numpy(state).float().unsqueeze(0) if algo == "reinforce" \
                else lib.from_numpy(state).float()
            probs, value = model(x)
            m = Categorical(probs)
            action = m.sample()
            saved.append((m.log_prob(action), value))
            state, reward, done = env.step(action.item())
            rewards.append(reward)
            steps += 1
        R = 0
        returns = deque()
        for r in rewards[::-1]:
            R = r + GAMMA * R
            returns.appendleft(R)
        returns = lib.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        opt.zero_grad()
        if algo == "reinforce":
            loss = lib.cat([-lp * R for (lp, _), R in zip(saved, returns)]).sum()
        else:
            policy, values = [], []
            for (lp, v), R in zip(saved, returns):
                policy.append(-lp * (R - v.item()))
                values.append(F.smooth_l1_loss(v, lib.tensor([R])))
            loss = lib.stack(policy).sum() + lib.stack(values).sum()
        loss.backward()
        opt.step()
    return steps


def child(args):
    start = time.perf_counter()
    if args.child == "torch":
        import torch as lib
    else:
        import torchjax as lib
    t0 = time.perf_counter()
    steps = run(lib, args.algo, args.episodes, args.max_steps, args.seed)
    loop = time.perf_counter() - t0
    print(json.dumps({"loop": loop, "steps": steps, "import": t0 - start}))


def spawn(args, variant, env):
    cmd = [sys.executable, os.path.abspath(__file__), "--child",
           "torch" if variant == "torch" else "torchjax", "--algo", args.algo,
           "--episodes", str(args.episodes), "--max-steps", str(args.max_steps),
           "--seed", str(args.seed)]
    t = time.perf_counter()
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    whole = time.perf_counter() - t
    if res.returncode:
        raise SystemExit(f"{variant} failed:\n{res.stderr[-3000:]}")
    out = json.loads(res.stdout.strip().splitlines()[-1])
    out["whole"] = whole
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--algo", choices=("reinforce", "actor_critic", "both"), default="both")
    p.add_argument("--episodes", type=int, default=60)
    p.add_argument("--max-steps", type=int, default=200)
    p.add_argument("--seed", type=int, default=543)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--child", choices=("torch", "torchjax"))
    args = p.parse_args()
    if args.child:
        return child(args)
    algos = ("reinforce", "actor_critic") if args.algo == "both" else (args.algo,)
    print(f"load: {os.getloadavg()[0]:.2f}  episodes {args.episodes}  max steps "
          f"{args.max_steps}  rounds {args.rounds}")
    for algo in algos:
        args.algo = algo
        got: dict = {"torch": [], "cold": [], "warm": []}
        for _ in range(args.rounds):
            got["torch"].append(spawn(args, "torch", dict(os.environ)))
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, TORCHJAX_CACHE_DIR=cache)
                got["cold"].append(spawn(args, "cold", env))
                got["warm"].append(spawn(args, "warm", env))
        base = statistics.median(r["whole"] for r in got["torch"])
        for variant, runs in got.items():
            whole = statistics.median(r["whole"] for r in runs)
            loop = statistics.median(r["loop"] for r in runs)
            steps = statistics.median(r["steps"] for r in runs)
            print(f"{algo:13s} {variant:6s} whole {whole:6.2f} s ({whole / base:4.2f}x)  "
                  f"loop {loop:6.2f} s  env steps {steps:.0f}")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
