"""torchjax.nn.parallel: DistributedDataParallel and DataParallel on a JAX mesh.

Both replicate the parameters over the devices and shard each batch on its batch dim;
XLA's partitioner adds the gradient all-reduce (torchjax/distributed/_data_parallel.py).
"""

from __future__ import annotations

from ...distributed._data_parallel import DataParallel, DistributedDataParallel, data_parallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
