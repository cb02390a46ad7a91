"""A Dataset's __getitem__ that builds each sample with small tensor ops (makemore's names):
torchjax against PyTorch in one process, and the programs torchjax compiles for it.

    python bench/bench_dataset_items.py            # 9 interleaved rounds
    python bench/bench_dataset_items.py --rounds 5

Each sample is a name of 3-15 letters: `torch.tensor` of its letter ids, two `torch.zeros`
of the longest length + 1, and three slice assignments (`x[1:1 + n] = ix`, `y[:n] = ix`,
`y[n + 1:] = -1`), as makemore.py's CharDataset does. "programs" counts what torchjax
compiled for one pass over the names in a fresh process with an empty cache directory (each
new name length was a new slice and value length, i.e. new programs, before session 21's
host writes). Ratios are the median of per-round ratios (bench_eager.interleaved).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch
from bench_eager import interleaved

import torchjax

NAMES = ["ava", "emma", "mia", "olivia", "sophia", "isabella", "charlotte", "amelia",
         "evelyn", "abigail", "harper", "emily", "elizabeth", "avery", "sofia", "ella",
         "madison", "scarlett", "victoria", "aria", "grace", "chloe", "camila", "penelope",
         "maximiliano", "christopherjohn", "alexanderjames"]
LONGEST = max(map(len, NAMES))


def getitem(lib, word):
    ix = lib.tensor([ord(c) - 96 for c in word], dtype=lib.long)
    x = lib.zeros(LONGEST + 1, dtype=lib.long)
    y = lib.zeros(LONGEST + 1, dtype=lib.long)
    x[1:1 + len(ix)] = ix
    y[:len(ix)] = ix
    y[len(ix) + 1:] = -1
    return x, y


def epoch(lib):
    return [getitem(lib, w) for w in NAMES]


COLD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import torchjax
from bench_dataset_items import epoch
out = epoch(torchjax)
assert [int(v) for v in out[3][1][:8]] == [15, 12, 9, 22, 9, 1, 0, -1]
s = torchjax.compile_stats()
print(json.dumps({"compiled": s.compiled, "compile_s": s.compile_seconds + s.lower_seconds
                  + s.trace_seconds}))
"""


def cold_programs() -> dict:
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, TORCHJAX_CACHE_DIR=d)
        p = subprocess.run([sys.executable, "-c", COLD, os.path.dirname(__file__)], env=env,
                           capture_output=True, text=True, check=True)
        return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    for a, b in zip(epoch(torch), epoch(torchjax)):  # the same samples
        assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
    times, ratios = interleaved({"torch": lambda: epoch(torch),
                                 "torchjax": lambda: epoch(torchjax)}, 20, args.rounds)
    n = len(NAMES)
    cold = cold_programs()
    print(f"per sample: PyTorch {times['torch'] / n * 1e6:.1f} us, torchjax "
          f"{times['torchjax'] / n * 1e6:.1f} us, ratio {ratios['torchjax']:.2f}x; "
          f"first pass in a fresh process: {cold['compiled']} programs compiled "
          f"({cold['compile_s']:.2f} s tracing, lowering and compiling)")


if __name__ == "__main__":
    main()
