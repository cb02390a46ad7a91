"""This session's switches off and on in one process (issue 14, eager21): grad deferral
(_deferred.GRAD) and the chain-by-chain backward (engine.CHAINS).

    PYTHONPATH=src:bench python bench/bench_switches_ab.py --rows tree_same,tree_new,mlp_seed --rounds 9

For each of bench_dynamic's rows: PyTorch's step, torchjax's step with both switches off
("off": the code before them, but for the shared program arguments and the shape reads of
pending tensors, which have no switch) and with both on (the defaults); the switches are set
inside each timed call, so both sides share every table and program. Rounds interleaved, wall
time, ratios are medians of per-round ratios to PyTorch. The tree_new row gives each torchjax
side its own sequence of trees (shared, the second side would fuse every tree's backward).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from bench_deferred_ab import interleaved, warm_sides
from bench_dynamic import ROWS

from torchjax import _deferred
from torchjax._autograd import engine


def switched(step, on: bool):
    def call():
        _deferred.GRAD[0] = on
        engine.CHAINS = on
        try:
            return step()
        finally:
            _deferred.GRAD[0] = False
            engine.CHAINS = False
            _deferred.flush()  # nothing left pending into the other side's timing
    return call


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="tree_same,tree_new,mlp_seed,chain,transformer")
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    print(f"torch {torch.__version__} ({torch.get_num_threads()} threads), {args.rounds} rounds, "
          "wall time; off = GRAD and CHAINS off, on = both on")
    print("| workload | PyTorch | off | ratio | on | ratio | on/off |\n|---|---|---|---|---|---|---|")
    for name in args.rows.split(","):
        title, make, number = ROWS[name]
        if name == "transformer":
            torch.set_num_threads(1)
        fns = warm_sides(name, make, switched)
        times = {}
        med, ratio = interleaved(fns, number, args.rounds, time.perf_counter, times)
        onoff = statistics.median(a / b for a, b in zip(times["on"], times["off"]))
        unit, scale = ("us", 1e6) if med["torch"] < 1e-3 else ("ms", 1e3)
        print(f"| {title} | {med['torch'] * scale:.2f} {unit} | {med['off'] * scale:.2f} {unit} "
              f"| {ratio['off']:.2f}x | {med['on'] * scale:.2f} {unit} | **{ratio['on']:.2f}x** "
              f"| {onoff:.2f} |", flush=True)
        torch.set_num_threads(torch.get_num_threads() if name != "transformer" else 2)


if __name__ == "__main__":
    main()
