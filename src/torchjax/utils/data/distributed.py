"""DistributedSampler: each of num_replicas processes reads its own share of a dataset."""

from __future__ import annotations

import math
from collections.abc import Iterator

from ._cpu_randperm import cpu_randperm
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Replica `rank` of `num_replicas` takes every num_replicas-th index of the (shuffled,
    seed + epoch) order, padded by repetition to an even share unless drop_last."""

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            # from the default process group, as PyTorch's (ValueError when there is none)
            from ... import distributed
            if num_replicas is None:
                num_replicas = distributed.get_world_size()
            if rank is None:
                rank = distributed.get_rank()
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
            # PyTorch's randperm from torch.Generator().manual_seed(seed + epoch), exactly
            indices = cpu_randperm(n, self.seed + self.epoch)
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
