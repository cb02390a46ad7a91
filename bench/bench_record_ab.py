"""Recording with the per-kind-of-call data off and on (issue 14, eager18), one process.

    python bench/bench_record_ab.py --rounds 15
    python bench/bench_record_ab.py --rows tree_new,tree_same --rounds 15

"off" makes _record_simple / _record_list work out the node's backward spec, class and saved
positions on every call (rec=None, as before the change: _spec_for's key built and hashed per
op); "on" looks them up in the fast-path entry's dict. Rounds alternate off/on (their order
flips every round) next to PyTorch (one intra-op thread); times are the calling thread's CPU
time (time.thread_time), which the shared machine's other jobs disturb less than wall time;
on/off is the median of per-round ratios.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
from bench_dynamic import tree_step

import torchjax
from torchjax import _dispatch

_ON = (_dispatch._record_simple, _dispatch._record_list)


def _off_simple(prep, dyn, arrays, stat, cd, out, rec=None):
    return _ON[0](prep, dyn, arrays, stat, cd, out)


def _off_list(prep, dyn, arrays, stat, cd, out, rec=None):
    return _ON[1](prep, dyn, arrays, stat, cd, out)


def _switch(on: bool):
    _dispatch._record_simple, _dispatch._record_list = _ON if on else (_off_simple, _off_list)


def linear_case(lib):
    lib.manual_seed(0)
    cell = lib.nn.Linear(128, 64)
    x = lib.randn(1, 128, requires_grad=True) * 1.0
    keep = cell(x)  # the parameters' AccumulateGrad nodes stay alive, as within a step
    return lambda: (keep, lib.tanh(cell(x)))[1]


def chain_case(lib):
    x = lib.randn(16, 16, requires_grad=True) * 1.0
    return lambda: (x * 2 + 1).sum()


ROWS = {  # name: (step factory over a library, calls per round)
    "tanh_linear": (linear_case, 1000),
    "chain_grad": (chain_case, 1000),
    "tree_same": (lambda lib: tree_step(lib, False), 20),
    "tree_new": (lambda lib: tree_step(lib, True), 20),
}


def _time(f, n):
    t0 = time.thread_time()
    for _ in range(n):
        f()
    return (time.thread_time() - t0) / n


def run(name, rounds):
    make, n = ROWS[name]
    pt, tj = make(torch), make(torchjax)
    for on in (False, True):
        _switch(on)
        for _ in range(20):
            tj()
    for _ in range(20):
        pt()
    times = {"torch": [], "off": [], "on": []}
    for r in range(rounds):
        times["torch"].append(_time(pt, n))
        for on in ((False, True) if r % 2 else (True, False)):
            _switch(on)
            times["on" if on else "off"].append(_time(tj, n))
    _switch(True)
    med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
    ratio = statistics.median(np.array(times["on"]) / np.array(times["off"]))
    print(f"| {name} | {med['torch']:.1f} us | {med['off']:.1f} us | {med['on']:.1f} us | "
          f"**{ratio:.3f}** | {med['off'] / med['torch']:.2f}x | {med['on'] / med['torch']:.2f}x |",
          flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    torch.set_num_threads(1)
    print("| workload | PyTorch | off | on | on/off | off / PyTorch | on / PyTorch |")
    print("|---|---|---|---|---|---|---|")
    for name in args.rows.split(","):
        run(name, args.rounds)


if __name__ == "__main__":
    main()
