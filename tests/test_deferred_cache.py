"""Deferred sequences' programs live in torchjax's program cache (_deferred._ident): a second
process with the same TORCHJAX_CACHE_DIR loads them without tracing or compiling, and prints
the same numbers, which are PyTorch's.

The script runs in fresh processes (cold, warm, then warm with other constants, which must
name other programs rather than load the first ones); the same code runs with torch 2.13 in
this process as the oracle.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from tests.test_compile_cache import _env

# the workload, as a function of the library (torch or torchjax) and two constants; the
# constants of the chains become constants of the sequence programs once seen 8 times
BODY = r"""
import numpy as np


def work(lib, scale, shift):
    rng = np.random.default_rng(3)
    x = lib.tensor(rng.standard_normal((16, 16)).astype(np.float32))
    idx = lib.tensor(rng.integers(0, 7, (16, 16)))
    out = []
    with lib.no_grad():
        for i in range(14):
            y = (x * scale + shift).sum()
            z = lib.cat([x * 3, x - i * 0.5]).softmax(0).mean(1)
            w = ((idx // 2) * scale).sum(1, keepdim=True).double() / 3
            out.append([y.item(), z.tolist(), w.tolist()])
    return out
"""

SCRIPT = BODY + r"""
import json
import os
import sys

import torchjax as torch
from torchjax import _deferred, _deferred_programs

# compiled on a worker thread (the default) or on this one: either way the cold run leaves
# every program the warm one needs (the worker drains its queue before the process exits)
_deferred_programs.BACKGROUND = os.environ["BACKGROUND"] == "1"
scale, shift = float(os.environ["SCALE"]), float(os.environ["SHIFT"])
torch.compile_stats(reset=True)
out = work(torch, scale, shift)
_deferred_programs.wait()  # the worker's compiles are counted too
print(json.dumps({"out": out, "stats": vars(torch.compile_stats()),
                  "sequences": _deferred.STATS["compiled"], "on": _deferred.ON[0]}))
"""


def _run(env, scale, shift, background):
    res = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         env={**env, "SCALE": str(scale), "SHIFT": str(shift),
                              "BACKGROUND": str(int(background))}, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1]), res.stderr


def _oracle(scale, shift):
    space: dict = {}
    exec(BODY, space)  # noqa: S102  (the script's own workload, run with torch)
    return space["work"](torch, scale, shift)


def _close(got, want):
    for g, w in zip(got, want):
        np.testing.assert_allclose(g[0], w[0], rtol=1e-5)
        np.testing.assert_allclose(g[1], w[1], rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(g[2], w[2], rtol=1e-12)


@pytest.mark.parametrize("background", [False, True])
def test_a_second_process_loads_the_sequence_programs(tmp_path, background):
    env = _env(TORCHJAX_CACHE_DIR=str(tmp_path), TORCHJAX_DEFER="1")
    cold, _ = _run(env, 2.0, 1.0, background)
    warm, err = _run({**env, "TORCHJAX_LOGS": "compiles"}, 2.0, 1.0, background)
    assert cold["on"] and warm["on"]
    # sequences were deferred and given programs in both (loaded, in the warm one)
    assert cold["sequences"] >= 2 and warm["sequences"] == cold["sequences"]
    assert cold["stats"]["compiled"] > 0
    # nothing traced, lowered or compiled: every sequence program came from the cache
    assert warm["stats"]["traced"] == 0, err[-3000:]
    assert warm["stats"]["compiled"] == 0, err[-3000:]
    assert warm["stats"]["lowered"] == 0
    assert "torchjax:" not in err  # no cache warning
    if not background:
        assert warm["out"] == cold["out"]  # the same executables: the same bits
    else:
        # which calls ran op by op while the worker compiled differs between the runs, and a
        # fused program may round differently from op-by-op calls in the last bits
        _close(warm["out"], cold["out"])
    _close(cold["out"], _oracle(2.0, 1.0))

    # other constants are other programs: compiled, never the first ones loaded
    other, _ = _run(env, 5.0, -2.0, background)
    assert other["stats"]["compiled"] > 0
    _close(other["out"], _oracle(5.0, -2.0))


def test_on_by_default_and_zero_turns_it_off():
    code = "from torchjax import _deferred; print(_deferred.ON[0], _deferred.GRAD[0])"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHJAX_DEFER")}
    got = [subprocess.run([sys.executable, "-c", code], env={**env, **extra},
                          capture_output=True, text=True, timeout=300)
           for extra in ({}, {"TORCHJAX_DEFER": "0"}, {"TORCHJAX_DEFER": "1"},
                         {"TORCHJAX_DEFER_GRAD": "0"})]
    # (grad deferral is on by default too, and needs ON: TORCHJAX_DEFER=0 turns both off)
    assert [r.stdout.split() for r in got] == [["True", "True"], ["False", "True"],
                                               ["True", "True"], ["True", "False"]], \
        [r.stderr for r in got]
