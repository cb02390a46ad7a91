"""Datasets: the map-style and iterable base classes, the wrappers that combine datasets, and
random_split."""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Generic, TypeVar

from ... import _creation, _random

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "StackDataset",
    "ConcatDataset",
    "ChainDataset",
    "Subset",
    "random_split",
]

_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)


class Dataset(Generic[_T_co]):
    """A map from keys (usually indices) to samples. Subclasses define __getitem__, usually
    __len__, and optionally __getitems__(indices) to fetch a whole batch at once."""

    def __getitem__(self, index) -> _T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[_T_co]) -> ConcatDataset[_T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[_T_co], Iterable[_T_co]):
    """A stream of samples: subclasses define __iter__. With worker processes every worker
    iterates its own copy (see get_worker_info to split the stream)."""

    def __add__(self, other: Dataset[_T_co]):
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple]):
    """Sample i is the tuple (t[i] for t in tensors); all tensors share their first size."""

    def __init__(self, *tensors) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Zips datasets of equal length: positional datasets give tuple samples, keyword
    datasets give dict samples."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            # PyTorch's message (its two literals are joined without a space)
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = args or tuple(kwargs.values())
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args or kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list):
        named = isinstance(self.datasets, dict)
        parts = self.datasets.items() if named else enumerate(self.datasets)
        columns = {k: _fetch_many(d, indices) for k, d in parts}
        if named:
            return [{k: col[i] for k, col in columns.items()} for i in range(len(indices))]
        return [tuple(col[i] for col in columns.values()) for i in range(len(indices))]

    def __len__(self) -> int:
        return self._length


def _fetch_many(dataset, indices: list) -> list:
    """dataset's samples at indices, through its __getitems__ when it has one."""
    if not callable(getattr(dataset, "__getitems__", None)):
        return [dataset[i] for i in indices]
    items = dataset.__getitems__(indices)
    if len(items) != len(indices):
        raise ValueError("Nested dataset's output size mismatch. "
                         f"Expected {len(indices)}, got {len(items)}")
    return items


class ConcatDataset(Dataset[_T_co]):
    """The samples of several map-style datasets, one after another."""

    @staticmethod
    def cumsum(sequence) -> list:
        """The running totals of the lengths of the datasets in `sequence`."""
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]

    @property
    def cummulative_sizes(self):
        """Deprecated spelling of `cumulative_sizes` (warns)."""
        warnings.warn("`cummulative_sizes` attribute is renamed to `cumulative_sizes`",
                      FutureWarning, stacklevel=2)
        return self.cumulative_sizes


def _require_iterable(d) -> None:
    if not isinstance(d, IterableDataset):
        raise AssertionError("ChainDataset only supports IterableDataset")


class ChainDataset(IterableDataset):
    """Iterable datasets chained into one stream (each is checked when it is reached)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            _require_iterable(d)
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            _require_iterable(d)
            total += len(d)
        return total


class Subset(Dataset[_T_co]):
    """The samples of `dataset` at `indices`."""

    def __init__(self, dataset: Dataset[_T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices
        cls = type(self)
        # The DataLoader fetches batches through __getitems__, which would bypass an
        # overridden __getitem__, so PyTorch refuses that combination.
        if cls.__getitem__ is not Subset.__getitem__ and cls.__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{cls.__name__} overrides __getitem__ but not __getitems__. When subclassing "
                "Subset and overriding __getitem__, you must also override __getitems__ to "
                "ensure DataLoader works correctly with your custom logic. A simple "
                "implementation:\n\ndef __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list) -> list:
        mapped = [self.indices[i] for i in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(mapped)
        return [self.dataset[i] for i in mapped]

    def __len__(self) -> int:
        return len(self.indices)


def _lengths_from_fractions(fractions, n: int) -> list:
    """floor(f * n) items per split, then the remainder handed out one by one from the
    first split on (PyTorch's round robin)."""
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(n * frac))
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty "
                          "dataset.", stacklevel=3)
    return lengths


def random_split(dataset: Dataset[_T], lengths: Sequence[int | float],
                 generator=_random.default_generator) -> list[Subset[_T]]:
    """Split `dataset` into non-overlapping random Subsets of the given lengths, or of the
    given fractions of its length when they sum to 1."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _lengths_from_fractions(lengths, len(dataset))
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = _creation.randperm(sum(lengths), generator=generator).tolist()
    ends = itertools.accumulate(lengths)
    return [Subset(dataset, order[end - n:end]) for end, n in zip(ends, lengths)]
