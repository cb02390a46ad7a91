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
import warnings

import numpy as np
import pytest

import torchjax
from torchjax.utils.data import DataLoader, Dataset

PROGRAM = pathlib.Path(__file__).parent / "programs" / "worker_start.py"
SRC = str(pathlib.Path(torchjax.__file__).parents[1])
PIN_MEMORY = "'pin_memory' argument is set as true but no accelerator is found"


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
    with contextlib.redirect_stdout(out), pytest.warns(UserWarning, match=PIN_MEMORY):
        # JAX's warning about forking this process, which has run JAX: torch's workers
        # do not use it
        warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called")
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
    assert PIN_MEMORY in err
    # forkserver would run the unguarded script again in every worker: said before starting
    assert "forkserver: DataLoader workers started with 'forkserver' run the main script" in \
        err and "multiprocessing_context='fork'" in err
    out, err = finish(piped)
    assert out == expected
    assert "forkserver: DataLoader workers started with 'forkserver' cannot load Plain " \
        "(used by the dataset): it is defined in __main__" in err


class Computes(Dataset):
    """torchjax ops in __getitem__: a forked worker evaluates them with NumPy (_host_eval)."""

    def __init__(self):
        self.x = torchjax.arange(24.).reshape(4, 6)
        self.img = np.arange(48, dtype=np.uint8).reshape(4, 3, 4)
        self.labels = torchjax.tensor([3, 1, 0, 2])

    def __len__(self):
        return 4

    def __getitem__(self, i):
        torch = torchjax
        g = torch.Generator().manual_seed(i)
        x = self.x[i]
        img = torch.from_numpy(self.img[i]).float() / 255.
        img = (img - img.mean()) / (img.std() + 1e-6)
        return {
            "x": x, "fancy": self.x[torch.tensor([i, 0])][:, 1:5:2], "mask": x[x >= x[2]],
            "img": img.permute(1, 0).flip(0).unsqueeze(0),
            "cat": torch.cat([x, -x]).clamp(-5, 5).view(3, 4),
            "one_hot": torch.nn.functional.one_hot(self.labels[i], 4),
            "stats": torch.stack([x.sum(), x.max(), x.min(), x.argmax().float()]),
            "math": torch.exp(-x / 10).sqrt() + torch.tanh(x) * torch.sigmoid(x),
            "int": torch.stack([torch.tensor(-i * 7) // 3, torch.tensor(-7) % 3]),
            "rand": torch.rand(3, generator=g), "randn": torch.randn(2, generator=g),
            "randint": torch.randint(0, 10, (3,), generator=g),
            "perm": torch.randperm(5, generator=g), "mm": x.view(2, 3) @ x.view(3, 2),
            "sort": torch.sort(torch.tensor([3., 1, 2]) * (i - 1.5)).values,
            "pad": torch.nn.functional.pad(x.view(1, 2, 3), (1, 2)), "cumsum": x.cumsum(0),
            "list": torch.tensor([[i, 2.5], [1, 0]]),
            "where": torch.where(x > 3, x, torch.full_like(x, -1.)),
        }


class Unsupported(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return torchjax.fft.fft(torchjax.ones(4))


class Dies(Dataset):
    """A worker that dies at its first item, writing the time it died to `stamp` first."""

    def __init__(self, stamp=None):
        self.stamp = stamp

    def __len__(self):
        return 4

    def __getitem__(self, i):
        if self.stamp is not None:
            with open(self.stamp, "w") as f:
                f.write(repr(time.time()))
        os._exit(3)


def test_forked_workers_compute_with_numpy():
    main = list(DataLoader(Computes(), batch_size=2))
    forked = list(DataLoader(Computes(), batch_size=2, num_workers=2))
    for m, f in zip(main, forked):
        assert m.keys() == f.keys()
        for k in m:
            assert m[k].dtype == f[k].dtype and m[k].shape == f[k].shape, k
            # exact but for float32 sums (mean, std), which XLA and NumPy order differently
            np.testing.assert_allclose(f[k].numpy(), m[k].numpy(), rtol=1e-5, err_msg=k)
    with pytest.raises(RuntimeError, match=r"(?s)Caught ForkedWorkerError in DataLoader worker "
                                           r"process 0\..*primitive 'fft' has no NumPy "
                                           r"evaluation.*multiprocessing_context='forkserver'"):
        list(DataLoader(Unsupported(), num_workers=1))


def test_a_dead_worker_is_reported_at_once(tmp_path):
    stamp = tmp_path / "died"
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           r"unexpectedly"):
        list(DataLoader(Dies(stamp), batch_size=2, num_workers=1))
    # from the worker's death, not from the start: starting a worker on a loaded machine
    # took 10 s once (not at the next 5 s status check)
    assert time.time() - float(stamp.read_text()) < 3
