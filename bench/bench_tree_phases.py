"""Where a tree-net step goes (issue 14): forward, backward, optimizer step and .item() timed
apart, PyTorch against torchjax in one process, rounds interleaved.

    python bench/bench_tree_phases.py same     # one tree shape repeated (fused backward)
    python bench/bench_tree_phases.py new      # a new random tree every sample

The step is bench_dynamic.py's tree net; PyTorch runs with one intra-op thread (its ops on
1x64 rows never use more, and its idle pool would only add noise). Prints microseconds per
step of each phase, summed over the rounds' steps (medians would mix phases of different
steps).
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
import torch
from bench_dynamic import LEAVES, random_tree, settle, tree_net

import torchjax

PHASES = ("forward", "backward", "opt.step", "item", "total")


def phased_step(lib, new_shape: bool):
    emb, opt, fixed, tokens, encode = tree_net(lib)
    rng = random.Random(0)
    acc = np.zeros(len(PHASES))

    def step():
        tree = random_tree(rng, 0, LEAVES) if new_shape else fixed
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = encode(tree, emb(tokens).split(1)).sum()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        loss.item()
        t4 = time.perf_counter()
        acc[:] += (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0)
    return step, acc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shape", choices=("same", "new"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20, help="steps per round and library")
    args = ap.parse_args()
    torch.set_num_threads(1)
    runs = {name: phased_step(lib, args.shape == "new")
            for name, lib in (("torch", torch), ("torchjax", torchjax))}
    for step, acc in runs.values():
        for _ in range(30):  # compile (new shapes keep coming: the node-by-node programs)
            step()
        settle(step)
        acc[:] = 0
    for _ in range(args.rounds):
        for step, _ in runs.values():
            for _ in range(args.steps):
                step()
    n = args.rounds * args.steps
    print("| library | " + " | ".join(PHASES) + " |\n" + "|---" * (len(PHASES) + 1) + "|")
    for name, (_, acc) in runs.items():
        print(f"| {name} | " + " | ".join(f"{v / n * 1e6:.0f} us" for v in acc) + " |")
    ratio = runs["torchjax"][1] / runs["torch"][1]
    print("| ratio | " + " | ".join(f"{r:.2f}x" for r in ratio) + " |")


if __name__ == "__main__":
    main()
