"""fully_shard (FSDP2): parameters, gradients and optimizer state sharded on dim 0.

PyTorch's FSDP keeps 1/n of each parameter per rank, all-gathers it before a layer runs and
reduce-scatters its gradient after. Here each parameter's array is sharded on dim 0 over the
mesh (a NamedSharding), the batch is sharded on dim 0 too (FSDP is data parallel), and XLA's
partitioner gathers a weight where an op needs it whole; each gradient is constrained to its
parameter's sharding when it is accumulated (XLA makes that a reduce-scatter), and optimizer
state made "like" a parameter takes its sharding, so it is 1/n per device as well.
"""

from __future__ import annotations

from jax.sharding import NamedSharding, PartitionSpec

from ...nn.modules.module import Module
from .. import _per_rank
from .._data_parallel import default_mesh, shard_batch
from .._global_batch import on_sharding, spans_processes, to_local
from .._reshard import place_array
from ..device_mesh import DeviceMesh
from ..tensor._dtensor import DTensor, lay_out_parameter
from ..tensor._placements import Replicate, Shard, sharding_of

__all__ = ["fully_shard", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy",
           "CPUOffloadPolicy"]


class MixedPrecisionPolicy:
    """Accepted for PyTorch scripts; only the default (no casts) is supported."""

    def __init__(self, param_dtype=None, reduce_dtype=None, output_dtype=None,
                 cast_forward_inputs: bool = True):
        if param_dtype is not None or reduce_dtype is not None or output_dtype is not None:
            raise NotImplementedError("fully_shard(mp_policy=MixedPrecisionPolicy(...dtype...)) "
                                      "is not supported by torchjax yet")


class OffloadPolicy:
    """No offloading (the default)."""


class CPUOffloadPolicy(OffloadPolicy):
    """Offloading parameters to the host: not supported by torchjax (constructing one raises)."""

    def __init__(self, pin_memory: bool = True):
        raise NotImplementedError("fully_shard(offload_policy=CPUOffloadPolicy()) is not "
                                  "supported by torchjax")


class _Depth:
    calls = 0  # FSDP modules being called: only the outermost shards the inputs


_DEPTH = _Depth()
_CLASSES: dict = {}


class FSDPModule:
    """The class fully_shard mixes into a module (FSDP<Name>, as PyTorch's)."""

    def __call__(self, *args, **kwargs):
        root = _DEPTH.calls == 0
        mesh = self._fsdp_mesh
        if _per_rank.tracing() and _spans(mesh):
            # a compiled step across processes: each rank runs the module on its own batch
            # with the parameters whole, as DDP's compiled step (gradients averaged by
            # _shard_grad); the program puts each parameter back on its shards
            return super().__call__(*args, **kwargs)
        if root:
            args = shard_batch(args, mesh, 0, "fully_shard")
            kwargs = shard_batch(kwargs, mesh, 0, "fully_shard")
        _DEPTH.calls += 1
        try:
            out = super().__call__(*args, **kwargs)
        finally:
            _DEPTH.calls -= 1
        if root and _spans(mesh):  # each rank reads its own rows, as PyTorch's ranks do
            out = to_local(out, mesh, 0)
        return out

    # XLA gathers and frees the shards inside each program: these are PyTorch's controls
    # over when FSDP does that itself, and have nothing to do here
    def reshard(self) -> None:
        """Accepted for compatibility and does nothing: in torchjax the parameters stay sharded
        jax.Arrays and XLA gathers them when needed.
        """
        pass

    def unshard(self, async_op: bool = False):
        """Accepted for compatibility and does nothing (returns None): XLA gathers sharded
        parameters where they are used.
        """
        return None

    def set_requires_gradient_sync(self, requires_gradient_sync: bool, *, recurse=True):
        """Accepted for compatibility and ignored: gradient reduction is part of the sharded
        computation XLA runs.
        """
        pass

    def set_reshard_after_forward(self, reshard_after_forward: bool, recurse=True):
        """Accepted for compatibility and ignored (XLA decides when gathered parameters are freed).
        """
        pass

    def set_reshard_after_backward(self, reshard_after_backward: bool, *, recurse=True):
        """Accepted for compatibility and ignored (XLA decides when gathered parameters are freed).
        """
        pass

    def set_is_last_backward(self, is_last_backward: bool):
        """Accepted for compatibility and ignored."""
        pass

    def set_modules_to_forward_prefetch(self, modules):
        """Accepted for compatibility and ignored: XLA schedules the gathers."""
        pass

    def set_modules_to_backward_prefetch(self, modules):
        """Accepted for compatibility and ignored: XLA schedules the gathers."""
        pass


def _fsdp_class(cls):
    if issubclass(cls, FSDPModule):
        return cls
    if cls not in _CLASSES:
        _CLASSES[cls] = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
    return _CLASSES[cls]


def _param_layout(p, mesh):
    """Shard(0) over the mesh's last dimension (the first replicates: HSDP on a 2-d mesh);
    Replicate when dim 0 does not split evenly (JAX's shardings are even)."""
    shard_dim = mesh._dims[-1]
    n = mesh.jax_mesh.shape[shard_dim]
    if p.ndim == 0 or p.shape[0] % n:
        return (Replicate(),) * mesh.ndim, PartitionSpec()
    placements = (Replicate(),) * (mesh.ndim - 1) + (Shard(0),)
    return placements, PartitionSpec(shard_dim)


def _with_tensor_parallel(p, mesh):
    """FSDP's Shard(0) over `mesh` (a 1-d slice, "dp") composed with the placement tensor
    parallel gave p over another slice ("tp") of the same mesh, as PyTorch's FSDP2 + TP: the
    parameter's DeviceMesh becomes the 2-d one, placements (FSDP's, TP's) in its order."""
    tp = p._mesh
    if tp.jax_mesh != mesh.jax_mesh:
        raise ValueError("fully_shard: a parameter laid out by tensor parallel on another "
                         "DeviceMesh; use two slices of one mesh (mesh['dp'], mesh['tp'])")
    if mesh.ndim != 1 or set(tp._dims) & set(mesh._dims):
        raise NotImplementedError(
            f"fully_shard over mesh dims {list(mesh._dims)} of a parameter tensor parallel "
            f"laid out over {list(tp._dims)} is not supported by torchjax: FSDP + TP takes a "
            f"1-d FSDP slice disjoint from the TP one")
    names = tuple(n for n in mesh.jax_mesh.axis_names if n in mesh._dims or n in tp._dims)
    both = DeviceMesh._view(mesh, names)
    mine = dict(zip(tp._dims, p._placements))
    parts = mesh.size()
    for name, q in mine.items():
        if q == Shard(0):
            parts *= mesh.jax_mesh.shape[name]
    # dim 0 that does not split is left replicated over the FSDP dim (as for plain FSDP)
    fsdp = Shard(0) if p.ndim and p.shape[0] % parts == 0 else Replicate()
    return both, tuple(fsdp if n in mesh._dims else mine[n] for n in names)


def _shard_grad(p):
    if p._grad is None:
        return
    if _per_rank.tracing() and spans_processes(p._sharding):
        # each rank's gradient of its own loss: averaged over the processes, as FSDP's
        # reduce-scatter averages (eagerly XLA's reduction over the global batch does it)
        from .._collectives import ReduceOp, all_reduce
        all_reduce(p._grad, op=ReduceOp.AVG)
        return
    p._grad._data = place_array(p._grad._data, p._sharding)


def fully_shard(module, *, mesh=None, reshard_after_forward=None, shard_placement_fn=None,
                mp_policy=None, offload_policy=None, ignored_params=None):
    """Shards `module`'s parameters on dim 0 over `mesh` (default: every device), in place,
    and returns the module, now also an FSDPModule.

    Example::

        for layer in model.layers:
            fully_shard(layer)
        fully_shard(model)
        opt = torch.optim.AdamW(model.parameters())   # state sharded like the parameters
    """
    if isinstance(module, (list, tuple)):
        for m in module:
            fully_shard(m, mesh=mesh, reshard_after_forward=reshard_after_forward,
                        mp_policy=mp_policy, offload_policy=offload_policy,
                        ignored_params=ignored_params)
        return module
    if not isinstance(module, Module):
        raise TypeError(f"fully_shard expects an nn.Module, got {type(module).__name__}")
    if isinstance(module, FSDPModule):  # (PyTorch's composable APIs: once per module)
        raise AssertionError(f"Each distinct composable distributed API can only be applied to "
                             f"a module once. fully_shard has already been applied to the "
                             f"following module:\n{module}")
    if shard_placement_fn is not None:
        raise NotImplementedError("fully_shard(shard_placement_fn=) is not supported by "
                                  "torchjax: parameters shard on dim 0")
    if offload_policy is not None and type(offload_policy) is not OffloadPolicy:
        raise NotImplementedError("fully_shard(offload_policy=) is not supported by torchjax")
    mesh = mesh if mesh is not None else default_mesh()
    if mesh.ndim > 2:
        raise ValueError(f"fully_shard expects a 1D or 2D DeviceMesh but got {mesh!r}")
    ignored = set(map(id, ignored_params or ()))
    for p in module.parameters():
        if id(p) in ignored or getattr(p, "_fsdp", False):
            continue  # an inner fully_shard already laid it out
        if isinstance(p, DTensor):  # tensor parallel laid it out: FSDP on top, a 2-d layout
            p_mesh, placements = _with_tensor_parallel(p, mesh)
            sharding = sharding_of(p_mesh, placements, tuple(p.shape))
        else:
            p_mesh = mesh
            placements, spec = _param_layout(p, mesh)
            sharding = NamedSharding(mesh.jax_mesh, spec)
        if spans_processes(sharding):
            _to_global(p, sharding)
        lay_out_parameter(p, p_mesh, placements, sharding)
        p._fsdp = True
        p.register_post_accumulate_grad_hook(_shard_grad)
    for b in module.buffers():
        rep = NamedSharding(mesh.jax_mesh, PartitionSpec())
        if spans_processes(rep):
            _to_global(b, rep)
        b._data = place_array(b._data, rep)
    module._fsdp_mesh = mesh
    module.__class__ = _fsdp_class(type(module))
    module.register_load_state_dict_post_hook(_reshard_after_load)
    return module


def _spans(mesh) -> bool:
    return spans_processes(NamedSharding(mesh.jax_mesh, PartitionSpec()))


def _to_global(t, sharding) -> None:
    """t (each process made its own) as one array over every process's devices: rank 0's
    values, as PyTorch's FSDP broadcasts them, each process keeping only its shards."""
    from .. import _process_group
    from .._collectives import broadcast
    if _process_group.is_initialized():
        broadcast(t, src=0)
    t._data = on_sharding(t._data, sharding)
    if t._grad is not None:
        t._grad._data = on_sharding(t._grad._data, sharding)


def _reshard_after_load(module, incompatible_keys):
    """load_state_dict copies values in: put every parameter back on its sharding."""
    for p in module.parameters():
        sharding = getattr(p, "_sharding", None)
        if sharding is not None:
            p._data = place_array(p._data, sharding)
