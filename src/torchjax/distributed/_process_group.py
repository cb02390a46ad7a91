"""Process groups on jax.distributed: torchrun's variables in, JAX's multi-process runtime out.

One process per host (or per device, as torchrun starts them) joins through
`jax.distributed.initialize`; from then on `jax.devices()` lists every process's devices and
a jitted program over a mesh of them runs on all processes together. A group is a set of
processes; collectives on it are jitted programs over a mesh holding one device of each.
"""

from __future__ import annotations

import datetime
import os

import jax
import numpy as np
from jax.sharding import AxisType, Mesh

from . import _coordinated

__all__ = ["init_process_group", "destroy_process_group", "is_initialized", "get_rank",
           "get_world_size", "get_backend", "barrier", "new_group", "ProcessGroup",
           "MeshGroup", "group", "GroupMember"]


class _State:
    initialized = False
    backend = None
    timeout = None  # init_process_group's (a datetime.timedelta), None: PyTorch's default
    started_jax = False  # we called jax.distributed.initialize (and shut it down on destroy)


_STATE = _State()


def _no_group():
    raise ValueError("Default process group has not been initialized, please make sure to "
                     "call init_process_group.")


def _env_int(name: str, given):
    if given is not None and given != -1:
        return int(given)
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: "
                         f"environment variable {name} expected, but not set (torchrun and "
                         f"`python -m torchjax.distributed.run` set it)")
    return int(value)


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: datetime.timedelta | None = None, world_size: int = -1,
                       rank: int = -1, store=None, group_name: str = "", pg_options=None,
                       device_id=None) -> None:
    """Joins this process to the job: reads RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT (or the
    arguments) and calls `jax.distributed.initialize` when there is more than one process."""
    if _STATE.initialized:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        raise NotImplementedError("init_process_group(store=) is not supported by torchjax: "
                                  "JAX's coordinator service is the rendezvous; use env://")
    if init_method not in (None, "env://") and not str(init_method).startswith("tcp://"):
        raise NotImplementedError(f"init_process_group(init_method={init_method!r}) is not "
                                  "supported by torchjax; use env:// or tcp://host:port")
    me = _env_int("RANK", rank)  # (read first, so a missing one is named as PyTorch names it)
    world = _env_int("WORLD_SIZE", world_size)
    if not 0 <= me < world:
        raise ValueError(f"init_process_group: rank {me} is not in [0, {world})")
    if world > 1 and not jax.distributed.is_initialized():
        if init_method and init_method.startswith("tcp://"):
            address = init_method[len("tcp://"):]
        else:
            address = f"{os.environ.get('MASTER_ADDR', '127.0.0.1')}:" \
                      f"{_env_int('MASTER_PORT', None)}"
        # CPU devices of different processes talk through gloo (JAX's default on CPU is no
        # cross-process collectives at all); it changes nothing for GPU and TPU devices. Not
        # asked of jax.default_backend(): that would start the runtime too early
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        kwargs = {}
        if timeout is not None:
            kwargs["initialization_timeout"] = int(timeout.total_seconds())
        local = _local_device()
        if local is not None:
            kwargs["local_device_ids"] = [local]
        try:
            jax.distributed.initialize(address, num_processes=world, process_id=me, **kwargs)
        except RuntimeError as e:
            if "must be called before" not in str(e):
                raise
            raise RuntimeError(
                "init_process_group must run before torchjax makes its first tensor: JAX "
                "joins a multi-process job only before its runtime starts. Call it first "
                "thing in the script") from None
        _STATE.started_jax = True
    if jax.process_count() != world:
        raise RuntimeError(f"init_process_group: WORLD_SIZE is {world} but JAX runs "
                           f"{jax.process_count()} processes")
    if world > 1:  # compiled steps: traced per rank, one program over every process
        from . import _exit, _per_rank, _sync_batchnorm
        _per_rank.install()
        _sync_batchnorm.install()
        _exit.install()  # a failing rank exits without JAX's exit barrier (see there)
    _STATE.initialized = True
    _STATE.timeout = timeout
    _STATE.backend = backend or ("gloo" if jax.default_backend() == "cpu" else "nccl")
    GroupMember.WORLD = ProcessGroup(list(range(world)))


# what already says which GPU a process drives: JAX's own variable, or the platform's mask
# (under which LOCAL_RANK would not be the device's index)
_VISIBLE = ("JAX_LOCAL_DEVICE_IDS", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
            "HIP_VISIBLE_DEVICES")


def _local_device() -> int | None:
    """The one local GPU this process drives when torchrun (or torchjax's launcher) starts
    several processes per host: LOCAL_RANK, as PyTorch's scripts pick theirs with
    `torch.cuda.set_device(local_rank)`. JAX must be told when it joins the job
    (`jax.distributed.initialize(local_device_ids=)`, which sets the CUDA and ROCm visible
    devices and nothing else), or every process would take every GPU of the host. None with
    one process per host (it drives all of its devices) or when the environment already
    chose the devices (_VISIBLE)."""
    try:
        per_host = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
        local = int(os.environ["LOCAL_RANK"])
    except (KeyError, ValueError):
        return None
    if per_host <= 1 or any(os.environ.get(v) for v in _VISIBLE):
        return None
    return local


def is_initialized() -> bool:
    """Whether `init_process_group` has run in this process.

    See https://pytorch.org/docs/stable/distributed.html#torch.distributed.is_initialized.
    """
    return _STATE.initialized


def destroy_process_group(group=None) -> None:
    """Ends the process group (and the JAX multi-process runtime torchjax started).

    See https://pytorch.org/docs/stable/distributed.html#torch.distributed.destroy_process_group.
    """
    if not _STATE.initialized:
        _no_group()
    if group is not None and group is not GroupMember.WORLD:
        return
    from . import _exit, _per_rank, _sync_batchnorm
    _per_rank.uninstall()
    _sync_batchnorm.uninstall()
    _exit.uninstall()
    if _STATE.started_jax:
        jax.distributed.shutdown()
        _STATE.started_jax = False
    _STATE.initialized = False
    _STATE.backend = None
    GroupMember.WORLD = None


def _group(g):
    if not _STATE.initialized:
        _no_group()
    return GroupMember.WORLD if g is None else g


def get_rank(group=None) -> int:
    """This process's rank in the group.

    See https://pytorch.org/docs/stable/distributed.html#torch.distributed.get_rank.
    """
    g = _group(group)
    return g.rank()


def get_world_size(group=None) -> int:
    """The number of processes in the group.

    See https://pytorch.org/docs/stable/distributed.html#torch.distributed.get_world_size.
    """
    return _group(group).size()


def get_backend(group=None) -> str:
    """The backend name of the group (gloo on CPUs).

    See https://pytorch.org/docs/stable/distributed.html#torch.distributed.get_backend.
    """
    _group(group)
    return _STATE.backend


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Waits until every process of the group reaches it (a tiny all-reduce)."""
    g = _group(group)
    if g.size() > 1:
        from .._creation import zeros
        from ._collectives import all_reduce
        all_reduce(zeros(1), group=g)
    return None


# PyTorch's default_pg_timeout: how long an operation on a process group waits for the others
_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)


def timeout_seconds() -> float:
    """The process group's timeout (init_process_group(timeout=), else PyTorch's default)."""
    return (_STATE.timeout or _DEFAULT_TIMEOUT).total_seconds()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A group of some of the processes (every process must call it, as in PyTorch)."""
    from . import _arg_checks
    world = _group(None).size()
    ranks = sorted(range(world) if ranks is None else ranks)
    _arg_checks.group_ranks(ranks, world)
    if len(ranks) < world:  # every rank calls new_group: all agree to coordinate traces
        _coordinated.SUBGROUPS[0] = True
    return ProcessGroup(ranks)


class ProcessGroup:
    """The processes `ranks` (global ranks); collectives on it run on one device of each."""

    def __init__(self, ranks):
        self.ranks = list(ranks)

    def size(self) -> int:
        """The number of processes in the group."""
        return len(self.ranks)

    def rank(self) -> int:
        """This process's rank within the group (-1 if it is not a member)."""
        me = jax.process_index()
        return self.ranks.index(me) if me in self.ranks else -1

    def mesh(self) -> Mesh:
        """A one-dimensional mesh of the first device of each process in the group."""
        first = {}
        for d in sorted(jax.devices(), key=lambda d: d.id):
            first.setdefault(d.process_index, d)
        return Mesh(np.array([first[r] for r in self.ranks]), ("ranks",),
                    axis_types=(AxisType.Auto,))

    def __repr__(self):
        return f"ProcessGroup(ranks={self.ranks})"


class MeshGroup:
    """DeviceMesh.get_group(dim): one dimension of a mesh, seen as a group."""

    def __init__(self, mesh, dim_name: str):
        self.device_mesh = mesh
        self.dim_name = dim_name

    def size(self) -> int:
        return self.device_mesh.jax_mesh.shape[self.dim_name]

    def rank(self) -> int:
        coord = self.device_mesh.get_coordinate_full()
        return -1 if coord is None else coord[self.device_mesh.jax_mesh.axis_names.index(
            self.dim_name)]

    def __repr__(self):
        return f"MeshGroup({self.dim_name!r}, size={self.size()})"


class group:
    """group.WORLD: the default group (None until init_process_group)."""

    WORLD = None


GroupMember = group
