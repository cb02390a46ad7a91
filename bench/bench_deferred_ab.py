"""Deferred op sequences (torchjax/_deferred.py) off and on, in one process (issue 14, eager19).

    PYTHONPATH=src:bench python bench/bench_deferred_ab.py --rows chain,mlp_seed,tree_same --rounds 7

For each of bench_dynamic's rows: PyTorch's step, torchjax's step with deferral off, the same
step with it on (the switch is flipped inside the timed call, so both share every table and
program), and for the chain a bare jax.jit of the whole chain; rounds interleaved
(as bench_eager.interleaved; --clock thread times the calling thread's CPU time), ratios
are medians of per-round ratios to PyTorch. Also printed:
the deferred sequences compiled during the timed rounds (a loop must reuse its programs)
and how sequences ran (fused / op by op).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
from bench_dynamic import ROWS, Encoder, jit_chain_step, settle, tree_step

import torchjax
from torchjax import _deferred


def mlp_infer_step(lib, sizes=(64, 128, 128, 10), batch=16):
    """No-grad inference of a small MLP (Linear, ReLU, ...; softmax), read with .item():
    the kind of code deferral is for besides the chain."""
    lib.manual_seed(0)
    nn = lib.nn
    mods = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        mods += [nn.Linear(a, b)] + ([nn.ReLU()] if i < len(sizes) - 2 else [])
    model = nn.Sequential(*mods).eval()
    x = lib.tensor(np.random.default_rng(0).normal(size=(batch, sizes[0])).astype(np.float32))

    def step():
        with lib.no_grad():
            return float(lib.softmax(model(x), dim=-1).max().item())
    return step


def encoder_infer_step(lib):
    """No-grad inference of bench_dynamic's 2-layer transformer encoder (d 128, 4 heads,
    FF 512, seq 64, batch 16): ~130 ops, cut into sequences of MAX_OPS."""
    lib.manual_seed(0)
    layers = [Encoder(lib, 128, 4, 512) for _ in range(2)]
    x = lib.tensor(np.random.default_rng(0).normal(size=(16, 64, 128)).astype(np.float32))

    def step():
        with lib.no_grad():
            h = x
            for m in layers:
                h = m(h)
            return float((h * h).mean().item())
    return step


LOCAL_ROWS = {
    "mlp_infer": ("MLP 64-128-128-10 inference, batch 16, no grad", mlp_infer_step, 200),
    "encoder_infer": ("2-layer transformer encoder inference, no grad", encoder_infer_step, 5),
}


GRAD = [False]  # --grad: the "on" side defers ops that record grad too (_deferred.GRAD)
BASE = [False]  # --grad-ab: both sides defer, only the "on" side grad ops too


def switched(step, on: bool):
    def call():
        _deferred.ON[0] = on or BASE[0]
        _deferred.GRAD[0] = on and GRAD[0]
        try:
            return step()
        finally:
            _deferred.ON[0] = _deferred.GRAD[0] = False
            _deferred.flush()  # nothing left pending into the other side's timing
    return call


def interleaved(fns, number, rounds, clock, times=None):
    """bench_eager.interleaved with a choice of clock: the calling thread's CPU time is
    disturbed less by other processes on the shared cores than wall time. `times`, a dict,
    receives every round's time per name."""
    times = {} if times is None else times
    times.update({k: [] for k in fns})
    for _ in range(rounds):
        for k, f in fns.items():
            t0 = clock()
            for _ in range(number):
                f()
            times[k].append((clock() - t0) / number)
    ratios = {k: statistics.median(a / b for a, b in zip(v, times["torch"]))
              for k, v in times.items()}
    return {k: statistics.median(v) for k, v in times.items()}, ratios


def warm_sides(name, make, switch):
    """{"torch", "off", "on" (and "jax.jit" for the chain): steps}, each warmed up and its
    programs compiled (settle). The tree_new row's "on" side gets its own sequence of trees
    (shared, it would meet every tree a second time and fuse each one's backward)."""
    from torchjax import _deferred_grad
    _deferred_grad.reset()  # (each row its own workload: see bench_dynamic._run_row)
    fns = {"torch": make(torch), "off": switch(make(torchjax), False),
           "on": switch(tree_step(torchjax, True, 1) if name == "tree_new"
                        else make(torchjax), True)}
    if name == "chain":
        fns["jax.jit"] = jit_chain_step()
    for f in fns.values():
        for _ in range(20):
            f()
        settle(f)
    return fns


def changes_table(rows, rounds, names, switched, clock="wall", on_first=False, table=None):
    """The on/off table of the switches `names` (bench_eager22_ab.py, bench_eager25_ab.py):
    per row, PyTorch, every change off, every change on (`switched(names)` makes the two
    sides), rounds interleaved; on/off is the median of per-round ratios. `on_first` times the
    on side before the off side in each round (a later column gains from its place alone)."""
    table = table or ROWS
    timer = time.perf_counter if clock == "wall" else time.thread_time
    print(f"torch {torch.__version__} ({torch.get_num_threads()} threads), {rounds} rounds, "
          f"{clock} time; off/on: {', '.join(names)}")
    print("| workload | PyTorch | off | ratio | on | ratio | on/off |\n|---|---|---|---|---|---|---|")
    for name in rows:
        title, make, number = table[name]
        default = torch.get_num_threads()
        if name == "transformer":
            torch.set_num_threads(1)
        fns = warm_sides(name, make, switched(names))
        if on_first:
            fns = {k: fns[k] for k in ("torch", "on", "off", "jax.jit") if k in fns}
        times = {}
        med, ratio = interleaved(fns, number, rounds, timer, times)
        onoff = statistics.median(a / b for a, b in zip(times["on"], times["off"]))
        unit, scale = ("us", 1e6) if med["torch"] < 1e-3 else ("ms", 1e3)
        print(f"| {title} | {med['torch'] * scale:.2f} {unit} | {med['off'] * scale:.2f} {unit} "
              f"| {ratio['off']:.2f}x | {med['on'] * scale:.2f} {unit} | **{ratio['on']:.2f}x** "
              f"| {onoff:.2f} |", flush=True)
        torch.set_num_threads(default)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows",
                    default="chain,mlp_infer,encoder_infer,mlp_seed,tree_same,tree_new")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--clock", choices=("wall", "thread"), default="wall",
                    help="wall time (perf_counter) or the thread's CPU time (thread_time)")
    ap.add_argument("--grad", action="store_true",
                    help="with deferral on, defer ops that record grad too (experimental)")
    ap.add_argument("--grad-ab", action="store_true",
                    help="grad deferral off/on, plain deferral on for both sides")
    args = ap.parse_args()
    GRAD[0] = args.grad or args.grad_ab
    BASE[0] = args.grad_ab
    clock = time.perf_counter if args.clock == "wall" else time.thread_time
    print(f"torch {torch.__version__} ({torch.get_num_threads()} threads), torchjax deferred "
          f"A/B{' (grad ops too)' if args.grad else ''}, {args.rounds} rounds, {args.clock} time")
    print("| workload | PyTorch | torchjax off | ratio | torchjax on | ratio | on/off | "
          "programs compiled while timed |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.rows.split(","):
        title, make, number = (ROWS | LOCAL_ROWS)[name]
        fns = warm_sides(name, make, switched)
        before = dict(_deferred.STATS)
        med, ratio = interleaved(fns, number, args.rounds, clock)
        compiled = _deferred.STATS["compiled"] - before["compiled"]
        unit, scale = ("us", 1e6) if med["torch"] < 1e-3 else ("ms", 1e3)
        extra = f" (bare jax.jit {med['jax.jit'] * scale:.1f} {unit})" if "jax.jit" in med else ""
        print(f"| {title}{extra} | {med['torch'] * scale:.2f} {unit} | "
              f"{med['off'] * scale:.2f} {unit} | {ratio['off']:.2f}x | "
              f"{med['on'] * scale:.2f} {unit} | **{ratio['on']:.2f}x** | "
              f"{ratio['on'] / ratio['off']:.2f} | {compiled} |", flush=True)
    print("sequences:", _deferred.STATS)


if __name__ == "__main__":
    main()
