"""How DataLoader workers start (torchjax.utils.data._start): a PyTorch program written as
tutorials write it runs in subprocesses with torch and with torchjax, as a script file and
through standard input, and prints the same batches; a worker that dies is reported at once.
"""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import runpy
import subprocess
import sys
import time

import pytest

import torchjax
from torchjax.utils.data import DataLoader, Dataset

PROGRAM = pathlib.Path(__file__).parent / "programs" / "worker_start.py"
SRC = str(pathlib.Path(torchjax.__file__).parents[1])


def start(source: str, as_file: bool, tmp_path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": SRC}
    if as_file:
        script = tmp_path / "program.py"
        script.write_text(source)
        cmd = [sys.executable, str(script)]
    else:
        cmd = [sys.executable, "-"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    proc.stdin.write("" if as_file else source)
    proc.stdin.close()
    return proc


def finish(proc: subprocess.Popen) -> tuple[str, str]:
    try:
        proc.wait(timeout=120)
    finally:
        proc.kill()
    out, err = proc.stdout.read(), proc.stderr.read()
    assert proc.returncode == 0, err[-3000:]
    return out, err


def torch_output() -> str:
    """The program run by PyTorch, in this process (torch is imported by the suite anyway;
    its workers fork from here as they would from the script)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(str(PROGRAM), run_name="__main__")
    return out.getvalue()


def test_tutorial_program_forks_like_pytorch(tmp_path):
    source = PROGRAM.read_text()
    ported = source.replace("import torch\n", "import torchjax as torch\n").replace(
        "from torch.utils", "from torchjax.utils")
    # the two torchjax runs overlap: each mostly waits for its imports
    as_file = start(ported, True, tmp_path)
    piped = start(ported, False, tmp_path)  # a main module that is no file, as a notebook's
    expected = torch_output()
    assert expected.count("\n") == 7
    out, err = finish(as_file)
    assert out == expected
    # forkserver would run the unguarded script again in every worker: said before starting
    assert "forkserver: DataLoader workers started with 'forkserver' run the main script" in \
        err and "multiprocessing_context='fork'" in err
    out, err = finish(piped)
    assert out == expected
    assert "forkserver: DataLoader workers started with 'forkserver' cannot load Plain " \
        "(used by the dataset): it is defined in __main__" in err


class Computes(Dataset):
    def __init__(self):
        self.x = torchjax.arange(4.)

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return self.x[i] * 2


class Dies(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        os._exit(3)


def test_forked_worker_refuses_xla_and_deaths_are_reported_at_once():
    with pytest.raises(RuntimeError, match=r"(?s)Caught ForkedWorkerError in DataLoader worker "
                                           r"process 0\..*multiprocessing_context='forkserver'"):
        list(DataLoader(Computes(), batch_size=2, num_workers=1))
    start = time.perf_counter()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           r"unexpectedly"):
        list(DataLoader(Dies(), batch_size=2, num_workers=1))
    assert time.perf_counter() - start < 3  # not at the next 5 s status check
