"""Dispatch's fast path before/after, in one process (issue 14, eager14c).

    PYTHONPATH=src python bench/bench_fast_path_ab.py [--rounds 9] [--number 1000]
    PYTHONPATH=src:bench python bench/bench_fast_path_ab.py --rows mlp_seed,tree_same,chain
    PYTHONPATH=src:bench python bench/bench_fast_path_ab.py --rows tree_new,tree_same --only list

"before" switches the fast path off (every row's `_Prepared.fast` set to None: the general
path of unwrap, compute dtype, `_fwd_for`, wrap); "after" is the default. Times are CPU time
of the process per call; rounds alternate the order of before/after; ratios are the medians
of the per-round ratios. PyTorch and a bare jax.jit of the whole chain run in the same rounds.
With --rows, whole steps of bench_dynamic's rows instead, PyTorch's step in the same rounds.
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

_FAST = {name: prep.fast for name, prep in _dispatch.PREPARED.items()}
ONLY = None  # --only list: switch only the tensor-list rows' fast path (cat, stack; eager17)


def _mode(new: bool):
    for name, prep in _dispatch.PREPARED.items():
        if ONLY == "list" and not prep.list_fast:
            continue
        prep.fast = _FAST.get(name) if new else None


def rows_ab(names, rounds):
    """bench_dynamic's steps with the fast path off and on per round."""
    from bench_dynamic import ROWS
    med = statistics.median
    for name in names:
        _, make, number = ROWS[name]
        tj, pt = make(torchjax), make(torch)
        for new in (False, True):
            _mode(new)
            for _ in range(20):
                tj()
                pt()
        times = {"torch": [], False: [], True: []}

        def run(f, n=number):
            t0 = time.process_time()
            for _ in range(n):
                f()
            return (time.process_time() - t0) / n * 1e3

        for r in range(rounds):
            times["torch"].append(run(pt))
            for new in ((False, True) if r % 2 else (True, False)):
                _mode(new)
                times[new].append(run(tj))
        _mode(True)
        off, on, ref = times[False], times[True], times["torch"]
        print(f"{name}: PyTorch {med(ref):.3f} ms, off {med(off):.3f} ms, on {med(on):.3f} ms, "
              f"on/off {med(a / b for a, b in zip(on, off)):.3f}, "
              f"off/PyTorch {med(a / b for a, b in zip(off, ref)):.2f}x, "
              f"on/PyTorch {med(a / b for a, b in zip(on, ref)):.2f}x", flush=True)


def main():
    from bench_dispatch_ab import interleaved_ab  # (a sibling script: bench/ is on the path)
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--number", type=int, default=1000)
    ap.add_argument("--rows", default=None, help="bench_dynamic rows, comma-separated")
    ap.add_argument("--only", choices=("list",), default=None,
                    help="switch only the tensor-list rows' fast path (cat, stack)")
    args = ap.parse_args()
    global ONLY
    ONLY = args.only
    if args.rows:
        rows_ab(args.rows.split(","), args.rounds)
        return
    data = np.random.default_rng(0).standard_normal((16, 16)).astype(np.float32)
    x, y = torchjax.tensor(data), torchjax.tensor(data).requires_grad_()
    tx, ty = torch.tensor(data), torch.tensor(data).requires_grad_()
    torchjax.manual_seed(0)
    lin, h = torchjax.nn.Linear(128, 64), torchjax.randn(1, 128)
    tlin, th = torch.nn.Linear(128, 64), torch.randn(1, 128)
    bare = jax.jit(lambda a: (a * 2 + 1).sum())
    arr = x._data

    def tj_nograd():
        with torchjax.no_grad():
            return (x * 2 + 1).sum()

    def torch_nograd():
        with torch.no_grad():
            return (tx * 2 + 1).sum()

    ab = {"chain no_grad": tj_nograd, "chain forward, grad on": lambda: (y * 2 + 1).sum(),
          "chain forward+backward": lambda: (y * 2 + 1).sum().backward(),
          "tanh(Linear(128, 64)) forward": lambda: torchjax.tanh(lin(h))}
    fixed = {"PyTorch chain no_grad": torch_nograd, "bare jax.jit chain": lambda: bare(arr),
             "PyTorch chain forward, grad on": lambda: (ty * 2 + 1).sum(),
             "PyTorch tanh(Linear) forward": lambda: torch.tanh(tlin(th))}
    times = interleaved_ab(ab, fixed, _mode, args.number, args.rounds)
    med = statistics.median
    for k in fixed:
        print(f"{k:32s} {med(times[k]):8.1f} us")
    for k in ab:
        b, a = times[(k, "before")], times[(k, "after")]
        print(f"{k:32s} before {med(b):8.1f} us  after {med(a):8.1f} us  "
              f"after/before {med(x / y for x, y in zip(a, b)):.2f}")
    for k, ref in (("chain no_grad", "PyTorch chain no_grad"),
                   ("chain forward, grad on", "PyTorch chain forward, grad on"),
                   ("tanh(Linear(128, 64)) forward", "PyTorch tanh(Linear) forward")):
        for m in ("before", "after"):
            t = times[(k, m)]
            print(f"{k} vs PyTorch, {m}: {med(x / y for x, y in zip(t, times[ref])):.2f}x")


if __name__ == "__main__":
    main()
