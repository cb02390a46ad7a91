"""DataLoader in the main process against torch: batches, lengths, options and their errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

from .common import both, same_error


class Squares(torchjax.utils.data.Dataset):
    """Map-style dataset of dict samples (usable with both libraries: no tensors in it)."""

    def __len__(self):
        return 7

    def __getitem__(self, i):
        return {"x": np.full(2, i, np.float32), "y": i * i, "name": f"s{i}"}


class _Count:
    def __init__(self, n, has_len=True):
        self.n, self.has_len = n, has_len

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n if self.has_len else 2


class TorchCount(_Count, torch.utils.data.IterableDataset):
    pass


class JaxCount(_Count, torchjax.utils.data.IterableDataset):
    pass


def count(lib, *args):
    return (TorchCount if lib is torch else JaxCount)(*args)


def make(lib, **kw):
    x = lib.arange(14.).reshape(7, 2)
    y = lib.arange(7)
    return lib.utils.data.DataLoader(lib.utils.data.TensorDataset(x, y), **kw)


@pytest.mark.parametrize("kw", [
    dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None),
    dict(batch_size=7), dict(batch_size=2, sampler=[6, 0, 3]),
])
def test_tensor_dataset_batches_and_len(kw):
    t, j = both(lambda lib: [len(make(lib, **kw)), list(make(lib, **kw))])
    assert t == j


def test_subset_of_tensor_dataset_and_negative_indices():
    def f(lib):
        d = lib.utils.data
        ds = d.TensorDataset(lib.arange(10) * 2)
        sub = d.Subset(d.Subset(ds, [9, 8, 7, 6, 5]), [4, -1, 0])
        sampler = d.BatchSampler([0, -1, 2], 2, False)
        return [list(d.DataLoader(sub, batch_size=2)),
                list(d.DataLoader(ds, batch_sampler=sampler))]
    t, j = both(f)
    assert t == j
    same_error(lambda lib: list(make(lib, sampler=[7], batch_size=2)))


def test_dict_samples_and_custom_collate():
    def f(lib):
        d = lib.utils.data
        return [list(d.DataLoader(Squares(), batch_size=3)),
                list(d.DataLoader(Squares(), batch_size=4, collate_fn=lambda b: len(b))),
                list(d.DataLoader(Squares(), batch_size=None, sampler=[2]))]
    t, j = both(f)
    assert t == j


def test_iterable_dataset_batches_len_and_warning():
    def f(lib):
        d = lib.utils.data
        return [list(d.DataLoader(count(lib, 5), batch_size=2)),
                list(d.DataLoader(count(lib, 5), batch_size=2, drop_last=True)),
                len(d.DataLoader(count(lib, 5), batch_size=2)),
                len(d.DataLoader(count(lib, 5), batch_size=2, drop_last=True)),
                list(d.DataLoader(count(lib, 2), batch_size=None))]
    t, j = both(f)
    assert t == j
    dl = torchjax.utils.data.DataLoader(count(torchjax, 5, False))
    assert len(dl) == 2
    with pytest.warns(UserWarning, match="was reported to be 2"):
        list(dl)


def test_shuffle_is_a_reproducible_permutation_per_epoch():
    torchjax.manual_seed(0)
    dl = make(torchjax, batch_size=3, shuffle=True)
    epochs = [[int(i) for b in dl for i in b[1]] for _ in range(2)]
    assert all(sorted(e) == list(range(7)) for e in epochs) and epochs[0] != epochs[1]
    torchjax.manual_seed(0)
    assert [int(i) for b in dl for i in b[1]] == epochs[0]
    g1, g2 = (torchjax.Generator().manual_seed(1) for _ in range(2))
    a = [b[1].tolist() for b in make(torchjax, batch_size=3, shuffle=True, generator=g1)]
    b = [b[1].tolist() for b in make(torchjax, batch_size=3, shuffle=True, generator=g2)]
    assert a == b


@pytest.mark.parametrize("kw", [
    dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2),
    dict(num_workers=1, prefetch_factor=-1), dict(persistent_workers=True),
    dict(sampler=[0], shuffle=True), dict(batch_sampler=[[0]], batch_size=2),
    dict(batch_sampler=[[0]], drop_last=True), dict(batch_sampler=[[0]], sampler=[0]),
    dict(batch_size=None, drop_last=True), dict(multiprocessing_context="spawn"),
    dict(num_workers=1, multiprocessing_context="nope"),
    dict(num_workers=1, multiprocessing_context=3),
])
def test_option_errors(kw):
    same_error(lambda lib: make(lib, **kw))


@pytest.mark.parametrize("kw", [dict(shuffle=True), dict(sampler=[0]),
                                dict(batch_sampler=[[0]])])
def test_iterable_dataset_option_errors(kw):
    same_error(lambda lib: lib.utils.data.DataLoader(count(lib, 3), **kw))


def test_attributes_frozen_and_timeout_needs_workers():
    same_error(lambda lib: setattr(make(lib), "batch_size", 2))
    same_error(lambda lib: iter(make(lib, timeout=1)))
    dl = make(torchjax, batch_size=2, pin_memory=True)
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true"):
        assert len(list(dl)) == 4


def test_too_many_workers_warning():
    n = 1000
    with pytest.warns(UserWarning) as tw:
        torch.utils.data.DataLoader([1], num_workers=n)
    with pytest.warns(UserWarning) as jw:
        torchjax.utils.data.DataLoader([1], num_workers=n)
    assert str(tw[0].message) == str(jw[0].message)
