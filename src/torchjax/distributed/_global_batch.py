"""A mesh that spans processes: each rank's batch in, each rank's outputs out.

PyTorch's DDP runs one replica per rank: each rank feeds its own batch, reads its own outputs
and its own loss, and gets gradients averaged over the ranks. On a JAX mesh over every
process's devices the same step is one SPMD program over a global batch:

- in: each process's local batch becomes its rows of one global array
  (`jax.make_array_from_process_local_data`, no communication);
- out: the module's batch-sharded outputs become each process's rows again (its addressable
  shards), so the loss a rank computes is its own, as in PyTorch;
- backward: each rank's cotangent becomes its rows of the global cotangent, divided by the
  number of processes, so the parameters' gradients (reduced by XLA inside the program) are
  PyTorch DDP's average of the ranks' gradients.
"""

from __future__ import annotations

import jax
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import NamedSharding, PartitionSpec

from .. import _programs
from .._tensor import Tensor
from ..autograd import Function


def spans_processes(sharding) -> bool:
    return jax.process_count() > 1 and not sharding.is_fully_addressable


def _processes(mesh) -> int:
    return len({d.process_index for d in mesh.devices.flat})


def local_devices(mesh) -> int:
    """How many of the mesh's devices this process drives."""
    return sum(d.process_index == jax.process_index() for d in mesh.devices.flat)


def on_sharding(arr, sharding):
    """arr (the same whole value on every process) as one array on `sharding`, each process
    placing only its own pieces (a device_put would be a cross-host copy)."""
    host = np.asarray(arr)
    return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])


def to_global(t: Tensor, sharding, dim: int, what: str) -> Tensor:
    """This process's batch `t` as its rows (along dim) of the global batch on `sharding`."""
    if t._requires_grad:
        raise NotImplementedError(f"{what}: an input that requires grad on a mesh that spans "
                                  "processes is not supported by torchjax")
    n = local_devices(sharding.mesh)
    if t.shape[dim] % n:
        raise ValueError(f"{what}: this process's batch of {t.shape[dim]} (dim {dim} of an "
                         f"input of shape {tuple(t.shape)}) does not split evenly over its {n} "
                         f"devices of the mesh; use a per-process batch size divisible by {n}")
    glob = jax.make_array_from_process_local_data(sharding, np.asarray(t._data))
    return Tensor._wrap(glob)


def _divided(a, n: int):
    return a / n


_divide = _programs.lazy_jit(_divided)  # (named: a warm process loads it untraced)


class _Local(Function):
    """A global batch-sharded output -> this process's rows; backward: the reverse, scaled
    by 1 / (number of processes) as DDP averages."""

    @staticmethod
    def forward(ctx, t, spec):
        arr = t._data
        ctx.mesh, ctx.spec = arr.sharding.mesh, spec
        return Tensor._wrap(multihost_utils.global_array_to_host_local_array(
            arr, ctx.mesh, spec))

    @staticmethod
    def backward(ctx, g):
        local = _divide(g._data, _processes(ctx.mesh))
        return Tensor._wrap(multihost_utils.host_local_array_to_global_array(
            local, ctx.mesh, ctx.spec)), None


def to_local(obj, mesh, dim: int):
    """Every batch-sharded global Tensor in obj (lists, tuples, dicts too) as this process's
    rows (mesh: the DeviceMesh the batch is split over); values without the batch dim are
    left as they are (replicated, readable on every process)."""
    from ._reshard import reshard
    if isinstance(obj, Tensor):
        if obj.ndim <= dim or not spans_processes(obj._data.sharding):
            return obj
        spec = [None] * obj.ndim
        spec[dim] = tuple(mesh._dims)
        rows = NamedSharding(mesh.jax_mesh, PartitionSpec(*spec))
        return _Local.apply(reshard(obj, rows), rows.spec)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(to_local(o, mesh, dim) for o in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_local(o, mesh, dim) for o in obj)
    if isinstance(obj, dict):
        return {k: to_local(v, mesh, dim) for k, v in obj.items()}
    return obj
