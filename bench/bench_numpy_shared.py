"""What sharing memory with NumPy costs (docs/design.md, "Shared memory with NumPy").

    python bench/bench_numpy_shared.py                  # 16x16 and 1024x1024
    python bench/bench_numpy_shared.py --before /path/to/other/src/torchjax

Per call, medians of alternating batches: an op on a tensor never shared, the same op on a
tensor made by from_numpy of an array the program keeps, an in-place op on it, from_numpy of
a temporary array used once, and t.detach().numpy(). With --before, another torchjax tree is
loaded in the same process (as torchjax_before) and the never-shared op chain is timed in
alternation with this tree's, so both meet the same machine load: the ratio is the cost of
the mechanism on tensors that never share (expected: 1, within noise).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time

import numpy as np

import torchjax


def per_call(fn, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


def medians(fns: dict, n: int, rounds: int) -> dict:
    """Median µs per call of each function, batches of n calls taken in turn."""
    for fn in fns.values():
        for _ in range(10):
            fn()
    times: dict = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            times[k].append(per_call(fn, n))
    return {k: statistics.median(v) for k, v in times.items()}


def load_before(path: str):
    spec = importlib.util.spec_from_file_location(
        "torchjax_before", path + "/__init__.py", submodule_search_locations=[path])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["torchjax_before"] = mod
    spec.loader.exec_module(mod)
    return mod


def chain(lib):
    x, y = lib.randn(16, 16), lib.randn(16, 16)
    return lambda: (x * y).tanh().sum()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", help="another tree's src/torchjax to compare the hot path with")
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    if args.before:
        before = load_before(args.before)
        fb, fa = chain(before), chain(torchjax)
        ratios = []
        for i in range(args.rounds * 4):  # the order alternates too: ABBA
            if i % 2:
                a, b = per_call(fa, 200), per_call(fb, 200)
            else:
                b, a = per_call(fb, 200), per_call(fa, 200)
            ratios.append(a / b)
        print(f"never-shared (x*y).tanh().sum(), 16x16: this tree / before = "
              f"{statistics.median(ratios):.3f} (median of {len(ratios)} paired batches)")
    for n in (16, 1024):
        keep = np.random.rand(n, n).astype(np.float32)
        shared = torchjax.from_numpy(keep)
        plain = torchjax.randn(n, n)
        calls = 200 if n == 16 else 20
        got = medians({
            "op, never shared": lambda: plain * 2,
            "op, shared (array kept)": lambda: shared * 2,
            "in-place, shared": lambda: shared.mul_(1.0),
            "from_numpy(temporary) * 2": lambda: torchjax.from_numpy(
                np.ones((n, n), np.float32)) * 2,
            "t.detach().numpy()": lambda: plain.detach().numpy(),
        }, calls, args.rounds)
        print(f"{n}x{n}: " + ", ".join(f"{k} {v:.1f} us" for k, v in got.items()))


if __name__ == "__main__":
    main()
