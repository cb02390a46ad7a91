"""Programs written as real PyTorch projects are (a GPT, a DCGAN, a VAE, a graph network, an
actor-critic, a seq2seq GRU with attention), each run with PyTorch and with
`python -m torchjax`, comparing what each records: losses over a few optimizer steps,
outputs, gradient norms and, within sampling error, the spread of the initialisers."""

from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent
SRC = str(HERE.parents[1] / "src")
PROGRAMS = sorted(p.stem for p in HERE.glob("*.py")
                  if not p.stem.startswith(("_", "test_")))


def _run(program: str, torchjax: bool) -> subprocess.Popen:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, *(["-m", "torchjax"] if torchjax else []), f"{program}.py"]
    return subprocess.Popen(cmd, cwd=HERE, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _record(proc: subprocess.Popen, what: str) -> dict:
    out, err = proc.communicate(timeout=1200)
    assert proc.returncode == 0, f"{what} failed:\n{err[-4000:]}"
    line = [x for x in out.splitlines() if x.startswith("RECORD ")][-1]
    return json.loads(line[len("RECORD "):])


def compare(got, want, path="", rtol=2e-4, atol=2e-5):
    """Equal structures with numbers equal to within rtol/atol; under a key starting with
    "init" (random initialisers) to within sampling error."""
    if path.split("/")[-1].startswith("init"):
        rtol, atol = 0.2, 3e-3
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), (path, sorted(got))
        for k in want:
            compare(got[k], want[k], f"{path}/{k}", rtol, atol)
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), (path, got, want)
        for i, (g, w) in enumerate(zip(got, want)):
            compare(g, w, f"{path}[{i}]", rtol, atol)
    elif isinstance(want, float) or isinstance(got, float):
        assert got is not None and want is not None, (path, got, want)
        if math.isnan(want):
            assert math.isnan(got), (path, got, want)
        else:
            assert abs(got - want) <= atol + rtol * abs(want), (path, got, want)
    else:
        assert got == want, (path, got, want)


@pytest.mark.parametrize("program", PROGRAMS)
def test_program_matches_pytorch(program):
    # started together: each process spends seconds importing its library
    reference, ours = _run(program, False), _run(program, True)
    want = _record(reference, f"{program}.py with PyTorch")
    got = _record(ours, f"{program}.py with torchjax")
    compare(got, want)
