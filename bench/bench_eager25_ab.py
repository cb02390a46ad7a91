"""Session eager25's changes off and on in one process (issue 14), against PyTorch.

    PYTHONPATH=src:bench python bench/bench_eager25_ab.py --rows chain,mlp_seed --rounds 15
    PYTHONPATH=src:bench python bench/bench_eager25_ab.py --changes fold --clock thread
    PYTHONPATH=src:bench python bench/bench_eager25_ab.py --rows rl_act,rl_act_nograd

Changes (CHANGES: name -> switch): "replay", a sequence checked against the thread's last
repeated one as it is recorded (_deferred_replay.py; off, each side keeps no trace), and
"fold", the optimizer's update computed by the forward+backward program (_deferred_fold.py).
"off" runs every chosen change off, "on" every one on, set inside each timed call; each side
keeps its own replay state (the trace it expects next). Rounds interleaved as in
bench_eager22_ab.py; on/off is the median of per-round on/off ratios. A column that comes
later in the round gains up to ~30% from its place alone on some rows (eager23's A/A check;
`--changes none` repeats it): `--on-first` swaps the two sides, and the two orders' on/off
read together.

Extra rows: rl_act and rl_act_nograd, an RL script's action step (a 4-128-2 policy on a 1x4
state, softmax, Categorical sample, .item(); with and without grad), the same per-op path.
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_deferred_ab import changes_table
from bench_dynamic import ROWS

from torchjax import _deferred, _deferred_fold, _deferred_replay


def rl_act(grad: bool):
    def make(lib):
        lib.manual_seed(0)
        nn = lib.nn
        policy = nn.Sequential(nn.Linear(4, 128), nn.ReLU(), nn.Linear(128, 2))
        state = np.random.default_rng(0).normal(size=4).astype(np.float32)

        def act():
            x = lib.from_numpy(state).float().unsqueeze(0)
            m = lib.distributions.Categorical(lib.softmax(policy(x), dim=1))
            a = m.sample()
            return a.item(), m.log_prob(a)

        def act_no_grad():
            with lib.no_grad():
                return act()
        return act if grad else act_no_grad
    return make


ROWS = dict(ROWS, rl_act=("RL action step (policy 4-128-2, Categorical), grad", rl_act(True), 20),
            rl_act_nograd=("RL action step, no grad", rl_act(False), 20))


def _replay(on: bool):
    _deferred_replay.REPLAY[0] = on


def _fold(on: bool):
    _deferred_fold.ON[0] = on


def _none(on: bool):
    pass  # (an A/A check: both sides run the same code)


CHANGES = {"replay": _replay, "fold": _fold, "none": _none}


def switched(names):
    def make(step, on: bool):
        state = [None, None]  # this side's (trace expected next, trace of the last run)

        def call():
            loc = _deferred_replay.LOCAL
            loc.trace, loc.ran = state
            for n in names:
                CHANGES[n](on)
            try:
                return step()
            finally:
                _deferred.flush()  # nothing left pending into the other side's timing
                state[:] = loc.trace, loc.ran
                for n in names:
                    CHANGES[n](True)
        return call
    return make


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="chain,mlp_seed")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--changes", default="replay,fold",
                    help="switched off and on: replay, fold, or none (an A/A check)")
    ap.add_argument("--clock", choices=("wall", "thread"), default="wall")
    ap.add_argument("--on-first", action="store_true",
                    help="time the on side before the off side in each round")
    args = ap.parse_args()
    changes_table(args.rows.split(","), args.rounds, args.changes.split(","), switched,
                  args.clock, args.on_first, ROWS)

if __name__ == "__main__":
    main()
