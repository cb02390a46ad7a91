"""Fetchers: turn one sampler item (an index, a list of indices, or None for an iterable
dataset) into one collated batch. The same fetchers run in the main process and in workers."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ..._tensor import Tensor
from ..._x64 import scoped
from . import _collate
from .dataset import Subset, TensorDataset


class _TensorGather:
    """default_collate of samples of a TensorDataset (or a plain Subset chain of one) equals
    one gather per tensor with the whole batch index: one cached XLA call (or a numpy take,
    in a worker) instead of batch_size indexing ops and a stack. Only for tensors that do
    not require grad, whose batches have no autograd history to reproduce."""

    def __init__(self, tensors, index_maps, ship: bool):
        self.n = tensors[0].shape[0]
        self.maps = index_maps  # outermost Subset first
        self.ship = ship
        self.arrays = [np.asarray(t._data) if ship else t._data for t in tensors]

    @classmethod
    def create(cls, dataset, collate_fn):
        ship = _collate.shipping_mode(collate_fn)
        if ship is None:
            return None
        maps = []
        while type(dataset) is Subset:
            maps.append(np.asarray(dataset.indices))
            dataset = dataset.dataset
        if type(dataset) is not TensorDataset:
            return None
        tensors = dataset.tensors
        if not all(isinstance(t, Tensor) and not t.requires_grad for t in tensors):
            return None
        if not all(m.ndim == 1 and m.dtype.kind in "iu" for m in maps):
            return None
        return cls(tensors, maps, ship)

    @scoped
    def gather(self, index):
        """The batch, or None when `index` is anything but in-range integers (the ordinary
        path then raises PyTorch's error for it)."""
        idx = np.asarray(index)
        for m in [*self.maps, None]:
            size = self.n if m is None else len(m)
            if idx.ndim != 1 or idx.dtype.kind not in "iu" or not idx.size:
                return None
            if idx.min() < -size or idx.max() >= size:
                return None
            idx = idx % size if m is None else m[idx]
        if self.ship:
            return [_collate._Shipped(a[idx]) for a in self.arrays]
        return [Tensor._wrap(jnp.take(a, idx, axis=0)) for a in self.arrays]


class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self._gather = _TensorGather.create(dataset, collate_fn) if auto_collation else None

    def fetch(self, possibly_batched_index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        if self._gather is not None:
            batch = self._gather.gather(possibly_batched_index)
            if batch is not None:
                return batch
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems:
            data = getitems(possibly_batched_index)
        else:
            data = [self.dataset[i] for i in possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    """Reads the next sample, or the next len(batch index) samples, from the dataset's
    iterator; raises StopIteration once it is exhausted (or on a short last batch with
    drop_last)."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool):
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)
