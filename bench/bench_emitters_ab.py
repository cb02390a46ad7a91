"""XLA's CPU emitters for eager mode's programs, A/B in one process: the legacy emitters
against XLA's default fusion emitters (torchjax's default), steady step time of the same
models and the compile time of their first step (docs/performance_startup.md, "XLA's CPU
emitters for eager mode").

    python bench/bench_emitters_ab.py                                  # every case, 6 rounds
    python bench/bench_emitters_ab.py --cases cnn,mlp_big --rounds 10

Each round runs every case's step `--number` times under one setting, then under the other
(which goes first alternates by round), so both see the same machine load. A switch drops the
executables held in memory; the warm-up steps after it load the setting's own from the program
cache (a temporary directory) and are not timed. Reported per case: the median over rounds of
legacy time / XLA-default time, and the seconds spent compiling the first round's programs
under each setting (the setting that goes first also compiles what both share: compare the
first-step CPU of bench_startup.py run with each instead). Cases: cnn, gpt, lstm (bench_startup.py's models and data) and mlp_big,
transformer, tree_same (bench_dynamic.py's rows).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("TORCHJAX_CACHE_DIR", tempfile.mkdtemp(prefix="emitters_ab_"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_dynamic  # noqa: E402
import bench_startup  # noqa: E402

import torchjax  # noqa: E402
from torchjax import _programs  # noqa: E402
from torchjax._autograd import engine  # noqa: E402

SETTINGS = {"legacy": {"xla_cpu_use_fusion_emitters": False}, "xla": None}


def make_step(case):
    if case in bench_startup.BUILD:
        torchjax.manual_seed(0)
        return bench_startup.training_step(torchjax, case, *bench_startup.data(case))
    return bench_dynamic.ROWS[case][1](torchjax)


def use(setting):
    _programs.compiler_options = SETTINGS[setting]
    _programs.clear()


def settle(step, n=3):
    for _ in range(n):
        step()
    pending = engine._compiling[0]  # the fused backward, compiled on another thread
    if pending is not None:
        pending.thread.join()
    step()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="cnn,gpt,lstm,mlp_big,transformer,tree_same")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--number", type=int, default=20)
    args = ap.parse_args()
    cases = args.cases.split(",")
    print(f"jax {__import__('jax').__version__}, load average {os.getloadavg()[0]:.1f}")
    steps, ratios, compile_s = {}, {c: [] for c in cases}, {c: {} for c in cases}
    for r in range(args.rounds):
        order = ("legacy", "xla") if r % 2 == 0 else ("xla", "legacy")
        times = {c: {} for c in cases}
        for setting in order:
            use(setting)
            for c in cases:
                if c not in steps:
                    steps[c] = make_step(c)
                before = torchjax.compile_stats()
                settle(steps[c])
                if setting not in compile_s[c]:  # its first round compiles; later ones load
                    compile_s[c][setting] = torchjax.compile_stats().compile_seconds - \
                        before.compile_seconds
                t = time.perf_counter()
                for _ in range(args.number):
                    steps[c]()
                times[c][setting] = (time.perf_counter() - t) / args.number
        for c in cases:
            ratios[c].append(times[c]["legacy"] / times[c]["xla"])
        print(f"round {r}: " + ", ".join(
            f"{c} {times[c]['legacy'] * 1e3:.2f}/{times[c]['xla'] * 1e3:.2f} ms" for c in cases),
            flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f}\n")
    print("| case | steady legacy / XLA default (median of rounds) | range | "
          "compile s legacy | compile s XLA default |\n|---|---|---|---|---|")
    for c in cases:
        rs = ratios[c]
        print(f"| {c} | {statistics.median(rs):.3f}x | {min(rs):.2f}-{max(rs):.2f} | "
              f"{compile_s[c].get('legacy', 0):.2f} | {compile_s[c].get('xla', 0):.2f} |")


if __name__ == "__main__":
    main()
