"""Datasets, random_split and samplers against torch.utils.data."""

from __future__ import annotations

import warnings

import pytest
import torch

import torchjax

from .common import both, same_error


def tensors(lib):
    return lib.arange(12.).reshape(6, 2), lib.arange(6)


def test_tensor_dataset():
    def f(lib):
        ds = lib.utils.data.TensorDataset(*tensors(lib))
        return [len(ds), ds[2], ds[-1], ds[1:3]]
    t, j = both(f)
    assert t == j
    same_error(lambda lib: lib.utils.data.TensorDataset(lib.zeros(3), lib.zeros(4)))


def test_concat_and_chain_datasets():
    def f(lib):
        d = lib.utils.data
        a = d.TensorDataset(lib.arange(3))
        ds = a + d.TensorDataset(lib.arange(10, 14))
        assert isinstance(ds, d.ConcatDataset)
        return [len(ds), ds.cumulative_sizes, [ds[i] for i in range(7)], ds[-1], ds[-7]]
    t, j = both(f)
    assert t == j
    same_error(lambda lib: lib.utils.data.ConcatDataset([]))
    same_error(lambda lib: lib.utils.data.ConcatDataset([[1, 2]])[-3])

    class Stream(torchjax.utils.data.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    chained = Stream(2) + Stream(3)
    assert isinstance(chained, torchjax.utils.data.ChainDataset)
    assert list(chained) == [0, 1, 0, 1, 2] and len(chained) == 5
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        torchjax.utils.data.ConcatDataset([Stream(1)])
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(torchjax.utils.data.ChainDataset([Stream(1), [1]]))


def test_stack_dataset_and_subset():
    def f(lib):
        d = lib.utils.data
        x, y = tensors(lib)
        tup = d.StackDataset(d.TensorDataset(x), y)
        named = d.StackDataset(a=x, b=d.Subset(y, [5, 4, 3, 2, 1, 0]))
        sub = d.Subset(d.TensorDataset(x, y), [4, 0])
        return [len(tup), tup[1], named[2], named.__getitems__([0, 5]), tup.__getitems__([3]),
                len(sub), sub[1], sub.__getitems__([1, 0]), d.Subset(x, [1, 2])[[0, 1]]]
    t, j = both(f)
    assert t == j
    same_error(lambda lib: lib.utils.data.StackDataset([1], b=[2]))
    same_error(lambda lib: lib.utils.data.StackDataset([1], [2, 3]))
    same_error(lambda lib: lib.utils.data.StackDataset())

    class Bad(torchjax.utils.data.Subset):
        def __getitem__(self, i):
            return 0
    with pytest.raises(NotImplementedError, match="overrides __getitem__ but not __getitems__"):
        Bad([1], [0])


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.3, 0.4], [0.25, 0.25, 0.5], [0.5, 0.5]])
def test_random_split_sizes(lengths):
    def f(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parts = lib.utils.data.random_split(range(10), lengths)
        return [len(p) for p in parts]
    t, j = both(f)
    assert t == j
    torchjax.manual_seed(3)
    parts = torchjax.utils.data.random_split(range(10), lengths)
    assert sorted(i for p in parts for i in p) == list(range(10))


def test_random_split_errors_warnings_and_seeds():
    same_error(lambda lib: lib.utils.data.random_split(range(10), [3, 3]))
    same_error(lambda lib: lib.utils.data.random_split(range(10), [1.5, -0.5]))
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        torchjax.utils.data.random_split(range(2), [0.9, 0.1])
    g = [torchjax.Generator().manual_seed(7) for _ in range(2)]
    a, b = (torchjax.utils.data.random_split(range(20), [5, 15], generator=x) for x in g)
    assert a[0].indices == b[0].indices and a[1].indices == b[1].indices


def test_sequential_and_batch_samplers():
    def f(lib):
        d = lib.utils.data
        seq = d.SequentialSampler(range(7))
        keep, drop = d.BatchSampler(seq, 3, False), d.BatchSampler(seq, 3, True)
        return [list(seq), len(seq), list(keep), len(keep), list(drop), len(drop),
                list(d.BatchSampler(range(6), 2, True))]
    t, j = both(f)
    assert t == j
    same_error(lambda lib: lib.utils.data.BatchSampler(range(3), 0, False))
    same_error(lambda lib: lib.utils.data.BatchSampler(range(3), True, False))
    same_error(lambda lib: lib.utils.data.BatchSampler(range(3), 2, 1))


def test_random_sampler_properties():
    d = torchjax.utils.data
    torchjax.manual_seed(0)
    s = d.RandomSampler(range(9))
    e1, e2 = list(s), list(s)
    assert sorted(e1) == sorted(e2) == list(range(9)) and e1 != e2 and len(s) == 9
    torchjax.manual_seed(0)
    assert list(s) == e1  # reproducible under manual_seed
    g1, g2 = torchjax.Generator().manual_seed(5), torchjax.Generator().manual_seed(5)
    assert list(d.RandomSampler(range(9), generator=g1)) == list(
        d.RandomSampler(range(9), generator=g2))
    longer = list(d.RandomSampler(range(9), num_samples=20))
    assert sorted(longer[:18]) == sorted(list(range(9)) * 2) and len(set(longer[18:])) == 2
    drawn = list(d.RandomSampler(range(9), replacement=True, num_samples=40))
    assert len(drawn) == 40 and set(drawn) <= set(range(9)) and len(set(drawn)) > 5
    same_error(lambda lib: lib.utils.data.RandomSampler(range(3), replacement=1))
    same_error(lambda lib: lib.utils.data.RandomSampler(range(3), num_samples=0))
    same_error(lambda lib: lib.utils.data.RandomSampler([], num_samples=None))


def test_subset_and_weighted_samplers():
    d = torchjax.utils.data
    sub = d.SubsetRandomSampler([10, 20, 30])
    assert sorted(sub) == [10, 20, 30] and len(sub) == 3
    w = d.WeightedRandomSampler([0.0, 1.0, 3.0], 200)
    got = list(w)
    assert len(w) == 200 and set(got) <= {1, 2} and got.count(2) > got.count(1)
    assert sorted(d.WeightedRandomSampler([1, 1, 1], 3, replacement=False)) == [0, 1, 2]
    same_error(lambda lib: lib.utils.data.WeightedRandomSampler([1.0], 0))
    same_error(lambda lib: lib.utils.data.WeightedRandomSampler([1.0], 2, replacement=None))
    same_error(lambda lib: lib.utils.data.WeightedRandomSampler([[1.0]], 2))


def test_distributed_sampler():
    def f(lib):
        d = lib.utils.data
        out = []
        for drop_last in (False, True):
            parts = [d.DistributedSampler(range(10), 3, r, shuffle=False, drop_last=drop_last)
                     for r in range(3)]
            out.append([(list(p), len(p)) for p in parts])
        return out
    t, j = both(f)
    assert t == j
    same_error(lambda lib: lib.utils.data.DistributedSampler(range(4), 2, 2))
    # without a process group both raise PyTorch's ValueError
    same_error(lambda lib: lib.utils.data.DistributedSampler(range(4)))
    parts = [torchjax.utils.data.DistributedSampler(range(10), 2, r, seed=1) for r in range(2)]
    first = [list(p) for p in parts]
    assert sorted(first[0] + first[1]) == list(range(10))
    for p in parts:
        p.set_epoch(1)
    assert [list(p) for p in parts] != first


@pytest.mark.parametrize("n,replicas,seed,epoch,drop_last", [
    (10, 3, 0, 0, False), (10, 3, 1, 2, True), (101, 8, 42, 5, False), (1000, 7, 3, 1, True),
    (5, 8, 0, 0, False)])
def test_distributed_sampler_shuffles_as_pytorch(n, replicas, seed, epoch, drop_last):
    def f(lib):
        out = []
        for r in range(replicas):
            s = lib.utils.data.DistributedSampler(range(n), replicas, r, seed=seed,
                                                  drop_last=drop_last)
            s.set_epoch(epoch)
            out.append((list(s), len(s)))
        return out
    t, j = both(f)
    assert t == j


def test_dataset_base_classes():
    assert issubclass(torchjax.utils.data.IterableDataset, torchjax.utils.data.Dataset)
    with pytest.raises(NotImplementedError,
                       match="Subclasses of Dataset should implement __getitem__."):
        torchjax.utils.data.Dataset()[0]
    assert torch.utils.data.Dataset[int] and torchjax.utils.data.Dataset[int]
