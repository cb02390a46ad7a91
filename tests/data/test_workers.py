"""DataLoader with worker processes. Kept few: every loader starts real processes (forked by
default; the forkserver one also starts the fork server, which imports torchjax)."""

from __future__ import annotations

import os
import pickle
import time

import numpy as np
import pytest

import torchjax
from torchjax.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset
from torchjax.utils.data import get_worker_info as info

# Classes and functions a worker needs live at module level: workers unpickle them, and so
# import this module, which therefore does not import torch (slow to import).


def plain(x):
    """Batches as comparable Python data."""
    if isinstance(x, torchjax.Tensor):
        return (str(x.dtype), x.tolist())
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [plain(v) for v in x])
    return x


class Tagged(Dataset):
    """Samples say which process made them and what worker_init_fn / get_worker_info saw."""

    initialised = (-1, -1)

    def __len__(self):
        return 10

    def __getitem__(self, i):
        if i >= len(self):
            raise ValueError(f"no sample {i}")
        w = info()
        return {"x": np.full(2, i, np.float32), "i": i, "name": f"s{i}",
                "worker": -1 if w is None else w.id,
                "num_workers": -1 if w is None else w.num_workers,
                "seed_ok": w is None or w.seed == torchjax.initial_seed(),
                "init": self.initialised, "pid": os.getpid()}


def stack_doubled(batch):
    return torchjax.stack([x for (x,) in batch]) * 2


def mark_initialised(worker_id):
    w = info()
    w.dataset.initialised = (worker_id, w.id)


def data_only(batches):
    return [plain({k: b[k] for k in ("x", "i", "name")}) for b in batches]


class Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(1.0)
        return i


class Halves(IterableDataset):
    """Each worker yields its share of range(7), as PyTorch's documentation shows."""

    def __iter__(self):
        w = info()
        return iter(range(w.id, 7, w.num_workers))


def test_persistent_workers_order_init_info_and_errors():
    batches = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    reference = list(DataLoader(Tagged(), batch_sampler=batches))
    assert info() is None
    dl = DataLoader(Tagged(), batch_sampler=batches, num_workers=2,
                    worker_init_fn=mark_initialised, persistent_workers=True)
    first, second = list(dl), list(dl)
    for epoch in (first, second):
        assert data_only(epoch) == data_only(reference)  # the single-process order
        assert [b["worker"].tolist() for b in epoch] == [[0] * 3, [1] * 3, [0] * 3, [1]]
        assert all(b["num_workers"].tolist() == [2] * len(b["i"]) for b in epoch)
        assert all(all(b["seed_ok"].tolist()) for b in epoch)
        # worker_init_fn ran in each worker, on that worker's copy of the dataset
        expected = [[[w] * n, [w] * n] for w, n in ((0, 3), (1, 3), (0, 3), (1, 1))]
        assert [[t.tolist() for t in b["init"]] for b in epoch] == expected
    pids = {p for b in first for p in b["pid"].tolist()}
    assert len(pids) == 2 and os.getpid() not in pids
    assert pids == {p for b in second for p in b["pid"].tolist()}  # the same processes

    batches.append([99])
    with pytest.raises(ValueError, match=r"(?s)Caught ValueError in DataLoader worker process "
                                         r"[01]\.\nOriginal Traceback.*no sample 99"):
        list(dl)


def test_tensor_and_iterable_datasets_in_workers():
    x = torchjax.arange(14.).reshape(7, 2)
    ds = TensorDataset(x, torchjax.arange(7))
    single = list(DataLoader(ds, batch_size=3))
    multi = list(DataLoader(ds, batch_size=3, num_workers=2))
    assert plain(multi) == plain(single)
    unordered = list(DataLoader(ds, batch_size=3, num_workers=2, in_order=False))
    assert sorted(map(str, plain(unordered)[1])) == sorted(map(str, plain(single)[1]))
    got = list(DataLoader(Halves(), batch_size=2, num_workers=2))
    # worker 0 yields 0 2 4 6, worker 1 yields 1 3 5; batches alternate between them
    assert plain(got) == plain([torchjax.tensor(v) for v in ([0, 2], [1, 3], [4, 6], [5])])


def test_timeout_and_start_methods():
    dl = DataLoader(Slow(), num_workers=1, timeout=0.2)
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0\.2 seconds"):
        list(dl)
    # forked workers (Linux's default) inherit a lambda; forkserver ones would need to pickle it
    got = list(DataLoader(Tagged(), batch_size=5, num_workers=1, collate_fn=lambda b: len(b)))
    assert got == [5, 5]
    dl = DataLoader(Tagged(), num_workers=1, collate_fn=lambda b: b,
                    multiprocessing_context="forkserver")
    with pytest.raises(pickle.PicklingError, match=r"(?s)'forkserver' receive the collate_fn "
                                                   r"pickled.*multiprocessing_context='fork'"):
        iter(dl)
    # forkserver workers may compute with torchjax
    ds = TensorDataset(torchjax.arange(6.))
    got = list(DataLoader(ds, batch_size=4, num_workers=1, collate_fn=stack_doubled,
                          multiprocessing_context="forkserver"))
    assert plain(got) == plain([torchjax.tensor([0., 2, 4, 6]), torchjax.tensor([8., 10])])


def test_importing_torchjax_does_not_start_the_backend():
    """DataLoader's forkserver imports torchjax and then forks the workers: an XLA backend
    started at import time would not survive the fork (its compiles hang in the children)."""
    import subprocess
    import sys
    code = ("import torchjax\nfrom jax._src import xla_bridge as xb\n"
            "assert not xb._backends, sorted(xb._backends)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
