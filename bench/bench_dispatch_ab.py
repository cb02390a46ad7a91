"""Forward dispatch before/after, in one process (issue 14): the 3-op chain (x*2+1).sum() on
16x16 with the scalar-argument and `_types` changes switched off and on per round.

    PYTHONPATH=src python bench/bench_dispatch_ab.py [--rounds 9] [--number 1000]

"before" puts back the pass-through of Python numbers (each converted to a device array by
the jitted call) and `_types` without its empty-statics shortcut. Times are CPU time of the
process per chain; rounds alternate the order of before/after, ratios are the median of the
per-round ratios. PyTorch and a bare jax.jit of the whole chain are timed in the same rounds.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import numpy as np
import torch

import torchjax
from torchjax import _dispatch

_NEW = (_dispatch._on_device, _dispatch._types)


def _old_types(stat):
    types = tuple(map(type, stat))
    if tuple in types:
        return tuple(_old_types(v) if type(v) is tuple else k for v, k in zip(stat, types))
    return types


def _mode(new: bool):
    _dispatch._on_device, _dispatch._types = _NEW if new else ((lambda v: v), _old_types)


def interleaved_ab(ab: dict, fixed: dict, mode, number: int, rounds: int) -> dict:
    """CPU µs per call: times[(name, "before"|"after")] for each of `ab` with mode(False) and
    mode(True) in alternating order per round, times[name] for each of `fixed` in the same
    rounds; mode(True) is left set."""
    for new in (False, True):
        mode(new)
        for f in (*ab.values(), *fixed.values()):
            for _ in range(50):
                f()
    times = {k: [] for k in (*[(k, m) for k in ab for m in ("before", "after")], *fixed)}

    def run(f):
        t0 = time.process_time()
        for _ in range(number):
            f()
        return (time.process_time() - t0) / number * 1e6

    for r in range(rounds):
        for k, f in fixed.items():
            times[k].append(run(f))
        for k, f in ab.items():
            for new in ((False, True) if r % 2 else (True, False)):
                mode(new)
                times[(k, "after" if new else "before")].append(run(f))
    mode(True)
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--number", type=int, default=1000)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    data = rng.standard_normal((16, 16)).astype(np.float32)
    x, y = torchjax.tensor(data), torchjax.tensor(data).requires_grad_()
    tx, ty = torch.tensor(data), torch.tensor(data).requires_grad_()
    bare = jax.jit(lambda a: (a * 2 + 1).sum())
    arr = x._data

    def tj_nograd():
        with torchjax.no_grad():
            return (x * 2 + 1).sum()

    def torch_nograd():
        with torch.no_grad():
            return (tx * 2 + 1).sum()

    ab = {"chain no_grad": tj_nograd, "chain forward, grad on": lambda: (y * 2 + 1).sum(),
          "chain forward+backward": lambda: (y * 2 + 1).sum().backward()}
    fixed = {"PyTorch chain no_grad": torch_nograd, "bare jax.jit chain": lambda: bare(arr),
             "PyTorch chain forward+backward": lambda: (ty * 2 + 1).sum().backward()}
    times = interleaved_ab(ab, fixed, _mode, args.number, args.rounds)
    med = statistics.median
    for k in fixed:
        print(f"{k:32s} {med(times[k]):8.1f} us")
    torch_ng = times["PyTorch chain no_grad"]
    for k in ab:
        b, a = times[(k, "before")], times[(k, "after")]
        print(f"{k:32s} before {med(b):8.1f} us  after {med(a):8.1f} us  "
              f"after/before {med(x / y for x, y in zip(a, b)):.2f}")
    for m in ("before", "after"):
        t = times[("chain no_grad", m)]
        print(f"chain no_grad vs PyTorch, {m}: {med(x / y for x, y in zip(t, torch_ng)):.2f}x")


if __name__ == "__main__":
    main()
