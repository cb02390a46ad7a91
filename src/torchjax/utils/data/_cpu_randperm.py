"""PyTorch's CPU randperm(n, generator seeded with s), bit for bit, on the host.

DistributedSampler's shuffle must give every process the same order as PyTorch's, so a job
that mixes torchjax and PyTorch processes (or resumes one from the other) reads the same
shards. PyTorch seeds an MT19937 with the seed (MT's standard init_genrand, as numpy's legacy
seeding) and runs a Fisher-Yates shuffle drawing one raw 32-bit output per position
(checked against torch 2.13 for n up to 100000).
"""

from __future__ import annotations

import numpy as np


def cpu_randperm(n: int, seed: int) -> list:
    mt = np.random.MT19937(0)
    mt._legacy_seeding(seed % 2**32 if seed >= 2**32 or seed < 0 else seed)
    draws = mt.random_raw(max(n - 1, 0)).astype(np.int64).tolist()
    r = list(range(n))
    for i in range(n - 1):
        z = draws[i] % (n - i) + i
        r[i], r[z] = r[z], r[i]
    return r
