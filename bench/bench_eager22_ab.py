"""Session eager22's changes off and on in one process (issue 14), against PyTorch.

    PYTHONPATH=src:bench python bench/bench_eager22_ab.py --rows tree_same,mlp_seed --rounds 9
    PYTHONPATH=src:bench python bench/bench_eager22_ab.py --changes shared --clock thread

Each change has a switch here (CHANGES: name -> function setting it off or on); "off" runs
every chosen change off, "on" every one on, set inside each timed call so both sides share
every table and program. Rounds interleaved (torch, off, on, ...), ratios are medians of the
per-round ratios to PyTorch; on/off is the median of per-round on/off ratios. On this shared
2-core machine the on/off ratio of one process is steadier than ratios across processes.
"""

from __future__ import annotations

import argparse

from bench_deferred_ab import changes_table

from torchjax import _deferred, _deferred_backward, _deferred_split
from torchjax._autograd import fused

_ARRAY = fused._CONCRETE


def _shared(on: bool):
    # the fused backward passes each distinct saved array once (fused.Fused); off: every
    # saved leaf is an argument of its own, as before
    fused._CONCRETE = _ARRAY if on else None


def _with_forward(on: bool):
    # a backward that finds its forward pending runs both as one program (_deferred_backward)
    _deferred_backward.ON[0] = on


def _split(on: bool):
    # split/chunk/unbind recorded into the pending sequence (_deferred_split)
    _deferred_split.ON[0] = on


CHANGES = {"shared": _shared, "with_forward": _with_forward, "split": _split}


def switched(names):
    def make(step, on: bool):
        def call():
            for n in names:
                CHANGES[n](on)
            try:
                return step()
            finally:
                for n in names:
                    CHANGES[n](True)
                _deferred.flush()  # nothing left pending into the other side's timing
        return call
    return make


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="tree_same,tree_new,mlp_seed,chain")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--changes", default=",".join(CHANGES))
    ap.add_argument("--clock", choices=("wall", "thread"), default="wall")
    args = ap.parse_args()
    changes_table(args.rows.split(","), args.rounds, args.changes.split(","), switched,
                  args.clock)

if __name__ == "__main__":
    main()
