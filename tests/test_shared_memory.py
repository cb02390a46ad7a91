"""Tensor.share_memory_ / Module.share_memory (torchjax/_shared_memory.py): Hogwild training
(pytorch/examples mnist_hogwild) has worker processes train one model in place, and the parent
then tests the trained weights. Compared with PyTorch."""

import copy
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import torchjax

_HOGWILD = textwrap.dedent("""
    import sys
    import torch
    import torch.multiprocessing as mp

    def train(rank, model, extra, queue):
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
        x = torch.arange(12.).reshape(4, 3) / (rank + 4)
        for _ in range(3):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
        extra.add_(rank + 1)  # a tensor shared on its own, not a parameter
        got = queue.get()  # a shared tensor sent through a queue after the start
        got[0] = 10 * (rank + 1)
        print("worker", rank, model.weight.detach().numpy().round(5).tolist(), flush=True)

    if __name__ == "__main__":
        mp.set_start_method(sys.argv[1], force=True)
        model = torch.nn.Linear(3, 2)
        with torch.no_grad():
            model.weight.copy_(torch.arange(6.).reshape(2, 3) / 10)
            model.bias.fill_(0.5)
        model.share_memory()
        extra = torch.zeros(2, dtype=torch.int64).share_memory_()
        sent = torch.zeros(3).share_memory_()
        queue = mp.Queue()
        # one worker after the other: the second starts from what the first wrote
        for rank in range(2):
            p = mp.Process(target=train, args=(rank, model, extra, queue))
            p.start()
            queue.put(sent)
            p.join()
            assert p.exitcode == 0
        print("parent", model.weight.detach().numpy().round(5).tolist(),
              model.bias.detach().numpy().round(5).tolist(), flush=True)
        print("extra", extra.tolist(), "sent", sent.tolist(), model.weight.is_shared())
""")


def _run(tmp_path, torchjax_run: bool, method: str) -> list:
    script = tmp_path / "hogwild.py"
    script.write_text(_HOGWILD)
    cmd = [sys.executable] + (["-m", "torchjax"] if torchjax_run else []) + [str(script), method]
    env = dict(os.environ)
    if torchjax_run:
        src = os.path.dirname(os.path.dirname(torchjax.__file__))
        env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300,
                         cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    return res.stdout.splitlines()


def _numbers(line: str) -> np.ndarray:
    import re
    return np.array([float(v) for v in re.findall(r"-?\d+\.?\d*(?:e-?\d+)?", line)])


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_hogwild_workers_train_the_parents_model(tmp_path, method):
    pt = _run(tmp_path, False, method)
    tj = _run(tmp_path, True, method)
    assert [line.split()[0] for line in tj] == ["worker", "worker", "parent", "extra"]
    # the parent holds what the last worker wrote, and the same values as PyTorch's run
    np.testing.assert_allclose(_numbers(tj[2])[:6], _numbers(tj[1])[1:], atol=1e-5)
    for a, b in zip(pt, tj):
        np.testing.assert_allclose(_numbers(b), _numbers(a), atol=2e-5)
    assert tj[3] == pt[3] == "extra [3, 3] sent [20.0, 0.0, 0.0] True"


def test_is_shared_as_pytorch():
    def run(lib):
        t = lib.ones(3)
        before = t.is_shared()
        assert t.share_memory_() is t
        flags = [before, t.is_shared(), copy.deepcopy(t).is_shared(),
                 pickle.loads(pickle.dumps(t)).is_shared(), t[1:].is_shared(),
                 t.detach().is_shared(), (t + 1).is_shared(), t.clone().is_shared()]
        n = t.numpy()
        n[0] = 5  # NumPy still shares the (now shared) storage
        t.add_(1)
        m = lib.nn.Linear(2, 2)
        assert m.share_memory() is m
        return flags, t.tolist(), n.tolist(), m.weight.is_shared(), m.bias.is_shared()
    assert run(torchjax) == run(torch)


def test_share_memory_keeps_values_and_layout():
    def run(lib):
        x = lib.arange(6.).reshape(3, 2).t().clone()  # a root with column-major strides
        x.share_memory_()
        x.mul_(2)
        return x.stride(), x.tolist(), x.numpy().strides, x.numpy().tolist()
    assert run(torchjax) == run(torch)
