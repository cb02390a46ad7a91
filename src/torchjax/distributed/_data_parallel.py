"""Data parallelism on a mesh: parameters replicated, the batch sharded on its batch dim.

PyTorch's DDP runs a replica per process and all-reduces gradients after backward. Here one
program runs on every device of the mesh: each parameter's array is replicated over the mesh
(a NamedSharding with an empty spec), each input is sharded on `dim` over all of the mesh's
dimensions, and XLA's partitioner turns the batch reduction in the loss and the parameter
gradients into per-device work plus an all-reduce. The gradients are therefore those of the
global batch (for a mean loss: PyTorch DDP's average of the replicas' gradients), already
identical on every device.
"""

from __future__ import annotations

import contextlib

import jax
from jax.sharding import NamedSharding, PartitionSpec

from .._tensor import Tensor
from .._untraceable import Untraceable
from ..nn.modules.module import Module
from . import _per_rank
from ._global_batch import on_sharding, spans_processes, to_global, to_local
from ._reshard import reshard, reshard_


def default_mesh():
    """A 1-d DeviceMesh over every device (of every process) of the default backend."""
    from .tensor._dtensor import _default_mesh
    return _default_mesh()


def replicate_module(module: Module, jax_mesh) -> None:
    """Every parameter and buffer of `module`, replicated over the mesh, in place; parameters
    already laid out (by parallelize_module: tensor parallel inside data parallel) keep it."""
    rep = NamedSharding(jax_mesh, PartitionSpec())
    across = spans_processes(rep)
    for t in list(module.parameters()) + list(module.buffers()):
        if getattr(t, "_sharding", None) is None:
            if across:  # each process made its own: rank 0's values, as PyTorch's DDP
                _broadcast_from_rank0(t)
                t._data = on_sharding(t._data, rep)  # a device_put would be a cross-host copy
                if t._grad is not None:
                    t._grad._data = on_sharding(t._grad._data, rep)
            else:
                reshard_(t, rep)


def _broadcast_from_rank0(t) -> None:
    from . import _process_group
    from ._collectives import broadcast
    if _process_group.is_initialized():
        broadcast(t, src=0)


def batch_sharding(mesh, ndim: int, dim: int):
    """Dim `dim` split over all of the DeviceMesh's dimensions (the others of its JAX mesh,
    when it is a slice of a bigger mesh, replicate)."""
    spec = [None] * ndim
    spec[dim] = tuple(mesh._dims)
    return NamedSharding(mesh.jax_mesh, PartitionSpec(*spec))


def shard_batch(obj, mesh, dim: int, what: str):
    """Tensors in obj (also inside lists, tuples and dicts) sharded on `dim` over the
    DeviceMesh."""
    if isinstance(obj, Tensor):
        if obj.ndim <= dim:
            return obj
        n = mesh.size()
        if obj.shape[dim] % n and not spans_processes(batch_sharding(mesh, obj.ndim, dim)):
            raise ValueError(
                f"{what}: a batch of {obj.shape[dim]} (dim {dim} of an input of shape "
                f"{tuple(obj.shape)}) does not split evenly over {n} devices; use a global "
                f"batch size divisible by {n} (DataLoader(..., drop_last=True))")
        sharding = batch_sharding(mesh, obj.ndim, dim)
        if spans_processes(sharding):
            if isinstance(obj._data, jax.core.Tracer):
                # the compiler's graph break (see _collectives._run): the step runs eagerly
                raise Untraceable(
                    f"{what} on a mesh that spans processes cannot be traced into a compiled "
                    "step (each process's batch must become its rows of the global batch "
                    "before the program runs); the step runs eagerly")
            # each process holds only its own batch: it becomes its rows of the global one
            return to_global(obj, sharding, dim, what)
        return reshard(obj, sharding)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(shard_batch(o, mesh, dim, what) for o in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(shard_batch(o, mesh, dim, what) for o in obj)
    if isinstance(obj, dict):
        return {k: shard_batch(v, mesh, dim, what) for k, v in obj.items()}
    return obj


class DistributedDataParallel(Module):
    """Trains `module` data-parallel over a DeviceMesh (default: every device).

    Example::

        model = DistributedDataParallel(Net())      # parameters replicated on all devices
        loss = F.cross_entropy(model(x), y)         # x: the global batch, split on dim 0
        loss.backward()                             # gradients of the global batch
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                 init_sync: bool = True):
        super().__init__()
        if mixed_precision is not None:
            raise NotImplementedError("DistributedDataParallel(mixed_precision=) is not "
                                      "supported by torchjax")
        if process_group is not None and device_mesh is not None:
            raise RuntimeError("Cannot specify both process_group and device_mesh arguments.")
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        from ._process_group import MeshGroup
        if isinstance(process_group, MeshGroup):  # mesh.get_group("dp"): that mesh dimension
            device_mesh = process_group.device_mesh[process_group.dim_name]
            process_group = None
        self.module = module
        self.dim = dim
        self.device_ids = device_ids
        self.output_device = output_device
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        # several processes: by default one mesh over every process's devices, one SPMD
        # program over the global batch (_global_batch.py); given a process_group, PyTorch's
        # own scheme: a replica per process, gradients all-reduced over the group
        self._across_processes = process_group is not None and jax.process_count() > 1
        if self._across_processes:
            self._init_across_processes(module, process_group)
            return
        mesh = device_mesh if device_mesh is not None else default_mesh()
        self.device_mesh = mesh
        self._spans_processes = spans_processes(NamedSharding(mesh.jax_mesh, PartitionSpec()))
        replicate_module(module, mesh.jax_mesh)
        if self._spans_processes:
            self._average_in_compiled_steps(module)

    def _average_in_compiled_steps(self, module):
        """Inside a compiled step (traced per rank, _per_rank.py) each rank runs the module
        on its own batch, so its gradients are averaged over the processes as PyTorch's DDP
        does (an all-reduce in the step's program); eagerly XLA has already done it."""
        from ._collectives import ReduceOp, all_reduce

        def average(p):
            if _per_rank.tracing() and self.require_backward_grad_sync and p.grad is not None:
                all_reduce(p.grad, op=ReduceOp.AVG)
        for p in module.parameters():
            if p.requires_grad:
                p.register_post_accumulate_grad_hook(average)

    def _init_across_processes(self, module, group):
        """One replica per process, as PyTorch's DDP: parameters broadcast from rank 0, each
        gradient averaged over the processes when it is accumulated (an all-reduce that JAX
        runs across the processes, _collectives.py). Each process keeps its own batch."""
        from ._collectives import ReduceOp, all_reduce, broadcast
        self.device_mesh = None
        for t in list(module.parameters()) + list(module.buffers()):
            broadcast(t, src=group.ranks[0], group=group)

        def average(p):
            if self.require_backward_grad_sync and p.grad is not None:
                all_reduce(p.grad, op=ReduceOp.AVG, group=group)
        for p in module.parameters():
            if p.requires_grad:
                p.register_post_accumulate_grad_hook(average)

    def forward(self, *inputs, **kwargs):
        if self._across_processes:
            return self.module(*inputs, **kwargs)
        if self._spans_processes and _per_rank.tracing():
            return self.module(*inputs, **kwargs)  # this rank's batch, as PyTorch's replicas
        mesh = self.device_mesh
        inputs = shard_batch(inputs, mesh, self.dim, "DistributedDataParallel")
        kwargs = shard_batch(kwargs, mesh, self.dim, "DistributedDataParallel")
        out = self.module(*inputs, **kwargs)
        # a mesh over several processes: each rank reads its own rows, as PyTorch's replicas
        return to_local(out, mesh, self.dim) if self._spans_processes else out

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate across the backward passes inside it, as PyTorch's.

        There is no separate all-reduce to skip: XLA reduces inside each backward, so the
        accumulated gradients equal those PyTorch has after its next synchronised backward."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def join(self, *args, **kwargs):
        """Uneven inputs across ranks cannot happen in one program: a no-op context."""
        return contextlib.nullcontext()

    def register_comm_hook(self, state, hook):
        raise NotImplementedError("DistributedDataParallel.register_comm_hook is not supported "
                                  "by torchjax: XLA inserts and schedules the all-reduce")

    def _set_static_graph(self):
        self.static_graph = True


class DataParallel(Module):
    """Splits each batch over this process's devices (device_ids: indices into them); on one
    device the module is called as it is."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        from .device_mesh import DeviceMesh, _devices
        self.module = module
        self.dim = dim
        local = [i for i, d in enumerate(_devices(_kind())) if d.process_index ==
                 jax.process_index()]
        if device_ids is not None:
            bad = [d for d in device_ids if not 0 <= _index(d) < len(local)]
            if bad:
                raise ValueError(f"DataParallel: device_ids {bad} are not devices of this "
                                 f"process (it has {len(local)} {_kind()} devices)")
        ids = local if device_ids is None else [local[_index(d)] for d in device_ids]
        self.device_ids = list(range(len(ids))) if device_ids is None else list(device_ids)
        self.output_device = output_device if output_device is not None else (
            self.device_ids[0] if self.device_ids else None)
        self.device_mesh = DeviceMesh(_kind(), ids, mesh_dim_names=("dp",)) \
            if len(ids) > 1 else None
        if self.device_mesh is not None:
            replicate_module(module, self.device_mesh.jax_mesh)

    def forward(self, *inputs, **kwargs):
        """Runs the wrapped module on the inputs; with a device mesh, the batch dimension `dim` of
        the inputs is sharded across the mesh's devices first (torchjax splits with JAX
        sharding, not per-device replicas).
        """
        if self.device_mesh is None:
            return self.module(*inputs, **kwargs)
        mesh = self.device_mesh
        inputs = shard_batch(inputs, mesh, self.dim, "DataParallel")
        kwargs = shard_batch(kwargs, mesh, self.dim, "DataParallel")
        return self.module(*inputs, **kwargs)


def _kind() -> str:
    return {"cpu": "cpu", "gpu": "cuda"}.get(jax.default_backend(), "tpu")


def _index(d) -> int:
    """A device id as DataParallel accepts them: an int, "cuda:1", or a torch.device."""
    if isinstance(d, int):
        return d
    index = getattr(d, "index", None)
    if index is None and isinstance(d, str):
        index = int(d.split(":")[1]) if ":" in d else 0
    return int(index or 0)


def data_parallel(module: Module, inputs, device_ids=None, output_device=None, dim: int = 0,
                  module_kwargs=None):
    """DataParallel(module, device_ids)(*inputs, **module_kwargs) for one call."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return DataParallel(module, device_ids, output_device, dim)(*inputs,
                                                               **(module_kwargs or {}))
