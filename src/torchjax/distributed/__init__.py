"""torchjax.distributed: the process-group API, for scripts that check it and run alone.

torchjax has no multi-process backend yet, so is_available() is False and
init_process_group raises NotImplementedError: a script that asks `dist.is_available()` /
`dist.is_initialized()` takes its single-process path. The collectives, get_rank and
get_world_size raise ValueError (no default process group), as PyTorch does until
init_process_group has been called. (Multi-device training in one process: torchjax.compile
with JAX sharding.)
"""

from __future__ import annotations

import enum

__all__ = ["is_available", "is_initialized", "is_nccl_available", "is_gloo_available",
           "is_mpi_available", "is_torchelastic_launched", "init_process_group",
           "destroy_process_group", "get_rank", "get_world_size", "get_backend", "barrier",
           "all_reduce", "all_gather", "all_gather_object", "broadcast",
           "broadcast_object_list", "reduce", "gather", "scatter", "reduce_scatter",
           "all_to_all", "new_group", "send", "recv", "ReduceOp", "Backend", "group",
           "GroupMember"]


def is_available() -> bool:
    """False: torchjax has no process-group backend (gloo, nccl, mpi) yet."""
    return False


def is_initialized() -> bool:
    return False


def is_nccl_available() -> bool:
    return False


def is_gloo_available() -> bool:
    return False


def is_mpi_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    """Whether torchrun started this process (it sets TORCHELASTIC_RUN_ID)."""
    import os
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def init_process_group(*args, **kwargs):
    raise NotImplementedError(
        "torch.distributed.init_process_group is not supported by torchjax: multi-process "
        "training is not available yet; run one process (for several devices in one process, "
        "use torchjax.compile with JAX sharding)")


def _no_group(*args, **kwargs):
    raise ValueError("torch.distributed: the default process group has not been initialized "
                     "(init_process_group was not called; torchjax does not support it yet)")


# Every call below needs a process group, and none can exist without init_process_group.
destroy_process_group = get_rank = get_world_size = get_backend = barrier = _no_group
all_reduce = all_gather = all_gather_object = broadcast = broadcast_object_list = _no_group
reduce = gather = scatter = reduce_scatter = all_to_all = new_group = send = recv = _no_group


class ReduceOp(enum.Enum):
    """The reductions a collective can apply (names only, for scripts that refer to them)."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"
    PREMUL_SUM = "premul_sum"


class Backend(str):
    """A backend name, lower-cased ("gloo", "nccl", ...), as PyTorch's Backend."""

    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    UCC = "ucc"

    def __new__(cls, name: str):
        return super().__new__(cls, name.lower())


class group:
    """group.WORLD: the default group, None until init_process_group (never, here)."""

    WORLD = None


GroupMember = group
