"""torchjax.distributed: PyTorch's distributed API on JAX's sharding engine.

- One process, many devices: `init_device_mesh` gives a DeviceMesh (a jax.sharding.Mesh);
  DTensor, DistributedDataParallel, fully_shard and parallelize_module lay tensors out with
  NamedShardings, and XLA's SPMD partitioner inserts the collectives.
- Many processes (one per host, or as torchrun starts them): `init_process_group` reads
  torchrun's variables and calls `jax.distributed.initialize`; the collectives below run as
  jitted programs over one device of each process (send/recv over a pair of them); DDP and
  fully_shard train on one mesh over every process's devices, each rank's batch its rows of
  a global batch (_global_batch.py). A torchjax.compile'd step is traced per rank and runs
  as one SPMD program over every process (_per_rank.py).

Without init_process_group a script sees PyTorch's single-process behaviour: is_initialized()
is False and get_rank()/get_world_size()/the collectives raise ValueError. See
docs/distributed.md.
"""

from __future__ import annotations

import os

from ._collectives import (
    ReduceOp,
    Work,
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    all_to_all,
    all_to_all_single,
    broadcast,
    broadcast_object_list,
    gather,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
)
from ._p2p import P2POp, batch_isend_irecv, irecv, isend, recv, send
from ._process_group import (
    GroupMember,
    ProcessGroup,
    barrier,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_initialized,
    new_group,
)
from .device_mesh import DeviceMesh, init_device_mesh

__all__ = ["is_available", "is_initialized", "is_nccl_available", "is_gloo_available",
           "is_mpi_available", "is_torchelastic_launched", "init_process_group",
           "destroy_process_group", "get_rank", "get_world_size", "get_backend", "barrier",
           "all_reduce", "all_gather", "all_gather_into_tensor", "all_gather_object",
           "broadcast", "broadcast_object_list", "reduce", "gather", "scatter",
           "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single",
           "new_group", "send", "recv", "isend", "irecv", "P2POp", "batch_isend_irecv",
           "ReduceOp", "Backend", "group", "GroupMember", "ProcessGroup", "Work", "DeviceMesh", "init_device_mesh"]


def is_available() -> bool:
    """True: process groups run on jax.distributed."""
    return True


def is_nccl_available() -> bool:
    """Always False: torchjax has no NCCL backend; on GPUs, XLA runs the collectives itself."""
    return False


def is_gloo_available() -> bool:
    """True: on CPU, JAX's cross-process collectives use gloo."""
    return True


def is_mpi_available() -> bool:
    """Always False: torchjax has no MPI backend (JAX's own runtime connects the processes)."""
    return False


def is_torchelastic_launched() -> bool:
    """Whether torchrun (or torchjax.distributed.run) started this process."""
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


class Backend(str):
    """A backend name, lower-cased ("gloo", "nccl", ...), as PyTorch's Backend."""

    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    UCC = "ucc"

    def __new__(cls, name: str):
        return super().__new__(cls, name.lower())
