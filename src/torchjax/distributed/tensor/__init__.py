"""torchjax.distributed.tensor: DTensor and its placements on JAX shardings."""

from ..device_mesh import DeviceMesh, init_device_mesh

# from now on ops on DTensors give DTensors (_propagate), and torch.load reads them
# (_saving), as importing PyTorch's torch.distributed.tensor allowlists its classes
from . import _propagate, _saving  # noqa: F401
from ._dtensor import DTensor, distribute_module, distribute_tensor
from ._factories import empty, full, ones, rand, randn, zeros
from ._placements import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "DeviceMesh", "distribute_tensor", "distribute_module",
           "init_device_mesh", "Shard", "Replicate", "Partial", "Placement", "ones", "empty",
           "full", "rand", "randn", "zeros"]
