"""Samplers: iterables of dataset indices (or of index lists, for BatchSampler)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Generic, TypeVar

from ... import _creation, _dtypes, _random, _sampling

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]

_T_co = TypeVar("_T_co", covariant=True)

# RandomSampler with replacement draws indices in chunks of this size (the last one cut), so an
# epoch stopped early has not drawn them all, and only one draw shape ever compiles
_CHUNK = 32


def _draw_seed(generator) -> int:
    """A random non-negative 63-bit seed from `generator` (the default one if None), the way
    PyTorch seeds a sampler's or a loader's private generator."""
    t = _creation.empty((), dtype=_dtypes.int64)
    return int(t.random_(generator=generator).item())


def _private_generator(generator):
    """`generator` itself, or a fresh generator seeded from the default one: then each epoch
    gets a new order, and torchjax.manual_seed makes the sequence of epochs reproducible."""
    if generator is not None:
        return generator
    return _random.Generator().manual_seed(_draw_seed(None))


class Sampler(Generic[_T_co]):
    """Base class of samplers: subclasses define __iter__ and usually __len__."""

    def __iter__(self) -> Iterator[_T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Random indices: a fresh permutation per pass without replacement, independent uniform
    draws with it; num_samples defaults to len(data_source)."""

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        # read len(data_source) lazily: the dataset may change size after construction
        """How many indices one pass yields: `num_samples` if given, otherwise the dataset's
        current length.
        """
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        gen = _private_generator(self.generator)
        total = self.num_samples
        if self.replacement:
            for start in range(0, total, _CHUNK):
                chunk = _creation.randint(0, n, (_CHUNK,), dtype=_dtypes.int64, generator=gen)
                yield from chunk.tolist()[:total - start]
            return
        for _ in range(total // n):
            yield from _creation.randperm(n, generator=gen).tolist()
        if total % n:
            yield from _creation.randperm(n, generator=gen).tolist()[:total % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order (a new one per pass)."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        order = _creation.randperm(len(self.indices), generator=self.generator).tolist()
        for i in order:
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """num_samples indices drawn with probabilities proportional to `weights`."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator=None) -> None:
        if (not isinstance(num_samples, int) or isinstance(num_samples, bool)
                or num_samples <= 0):
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = _creation.as_tensor(weights, dtype=_dtypes.float64)
        if w.dim() != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = _sampling.multinomial(self.weights, self.num_samples, self.replacement,
                                      generator=self.generator)
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Groups the indices of `sampler` into lists of batch_size; the last, shorter list is
    kept unless drop_last."""

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int,
                 drop_last: bool) -> None:
        if (not isinstance(batch_size, int) or isinstance(batch_size, bool)
                or batch_size <= 0):
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list]:
        it = iter(self.sampler)
        while batch := list(itertools.islice(it, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        if self.drop_last:
            return n // self.batch_size
        return -(-n // self.batch_size)
