"""torchjax.distributed.tensor: DTensor and its placements on JAX shardings."""

from ..device_mesh import DeviceMesh, init_device_mesh
from . import (
           _propagate,  # noqa: F401  (ops on DTensors give DTensors from now on)
           _saving,  # noqa: F401  (torch.save / torch.load of DTensors, as PyTorch's import)
)
from ._dtensor import DTensor, distribute_module, distribute_tensor
from ._factories import empty, full, ones, rand, randn, zeros
from ._placements import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "DeviceMesh", "distribute_tensor", "distribute_module",
           "init_device_mesh", "Shard", "Replicate", "Partial", "Placement", "ones", "empty",
           "full", "rand", "randn", "zeros"]
