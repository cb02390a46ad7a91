"""DistributedSampler: each of num_replicas processes reads its own share of a dataset."""

from __future__ import annotations

import math
from collections.abc import Iterator

from ... import _creation, _random
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Replica `rank` of `num_replicas` takes every num_replicas-th index of the (shuffled,
    seed + epoch) order, padded by repetition to an even share unless drop_last."""

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            # PyTorch reads them from the process group; torchjax has no torch.distributed
            # yet, so this is PyTorch's error for a build without one
            raise RuntimeError("Requires distributed package to be available")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator:
        n = len(self.dataset)
        if self.shuffle:
            g = _random.Generator().manual_seed(self.seed + self.epoch)
            indices = _creation.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            pad = self.total_size - len(indices)
            indices += (indices * math.ceil(pad / len(indices)))[:pad] if pad else []
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Makes the next pass use seed + epoch, so every replica shuffles alike."""
        self.epoch = epoch
