"""PyTorch's tensor-parallel styles as layouts of weights, inputs and outputs.

A style says how a module's weights lie over the tensor-parallel mesh dimension and which
layouts its inputs and outputs take; here each becomes a NamedSharding (weights, once) or a
sharding constraint (inputs and outputs, through forward hooks), and XLA's partitioner
inserts the all-gathers and all-reduces PyTorch's styles run by hand.
"""

from __future__ import annotations

import jax
from jax.sharding import PartitionSpec

from ....nn.modules.module import Module
from ..._reshard import reshard
from .._dtensor import lay_out_parameter
from .._placements import Partial, Replicate, Shard, sharding_of

__all__ = ["ParallelStyle", "ColwiseParallel", "RowwiseParallel", "SequenceParallel",
           "PrepareModuleInput", "PrepareModuleOutput"]


def _layout(t, placement, mesh):
    """t (a Tensor; anything else passes) constrained to `placement` on the 1-d mesh."""
    from ...._tensor import Tensor
    if not isinstance(t, Tensor) or placement is None:
        return t
    if isinstance(placement, Partial):
        return t  # the value is already reduced (see Partial): nothing to lay out
    if isinstance(placement, Shard) and placement.dim < 0:
        placement = Shard(placement.dim % t.ndim)
    target = sharding_of(mesh, (placement,), tuple(t.shape))
    return reshard(t, target.update(spec=_keep_other_axes(t, target.spec, mesh)))


def _keep_other_axes(t, spec, mesh):
    """spec (over the TP mesh dim only), plus how t is already split over the mesh's other
    dims: a batch sharded over "dp" (DDP, FSDP) stays sharded through the TP layers instead
    of being gathered. Traced (no sharding to read), those dims are left to XLA."""
    entries = list(spec) + [None] * (t.ndim - len(spec))
    here = getattr(t._data, "sharding", None) if not isinstance(t._data, jax.core.Tracer) \
        else None
    old = getattr(here, "spec", None)
    if here is not None and (old is None or here.mesh.axis_names != mesh.jax_mesh.axis_names):
        return PartitionSpec(*entries)
    out = []
    for d, entry in enumerate(entries):
        mine = () if entry is None else entry if isinstance(entry, tuple) else (entry,)
        if old is None:  # traced: the TP dim's layout, the rest XLA's choice
            out.append(entry if mine else PartitionSpec.UNCONSTRAINED)
            continue
        was = old[d] if d < len(old) else None
        was = () if was is None else was if isinstance(was, tuple) else (was,)
        names = tuple(n for n in was if n not in mesh._dims) + mine
        out.append(None if not names else names[0] if len(names) == 1 else names)
    return PartitionSpec(*out)


def _map_args(args, layouts, mesh):
    if layouts is None:
        return args
    layouts = layouts if isinstance(layouts, (tuple, list)) else (layouts,)
    return tuple(_layout(a, p, mesh) if i < len(layouts) else a
                 for i, (a, p) in enumerate(zip(args, list(layouts) + [None] * len(args))))


def _one_d(mesh):
    if mesh.ndim != 1:
        raise ValueError(f"tensor parallel styles need a 1-d DeviceMesh (a mesh['tp'] slice), "
                         f"got a {mesh.ndim}-d mesh")
    return mesh


def _place(module: Module, name: str, placement, mesh) -> None:
    p = module._parameters.get(name)
    if p is None:
        return
    placements = (placement,)
    lay_out_parameter(p, mesh, placements, sharding_of(mesh, placements, tuple(p.shape)))


class ParallelStyle:
    """How one module is parallelized (applied by parallelize_module)."""

    def _apply(self, module: Module, mesh) -> Module:
        raise NotImplementedError


class _Linearish(ParallelStyle):
    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        self.input_layouts = input_layouts if input_layouts is not None else self._IN
        self.output_layouts = output_layouts if output_layouts is not None else self._OUT
        self.use_local_output = use_local_output

    def _apply(self, module, mesh):
        from ....nn import Embedding, Linear
        mesh = _one_d(mesh)
        if isinstance(module, Linear):
            self._linear(module, mesh)
            desired_in = self._LINEAR_IN
        elif isinstance(module, Embedding):
            self._embedding(module, mesh)
            desired_in = Replicate()
        else:
            raise NotImplementedError(f"{type(self).__name__} currently only support "
                                      f"nn.Linear and nn.Embedding!")
        module.register_forward_pre_hook(
            lambda m, args: _map_args(args, (desired_in,), mesh))
        out = self.output_layouts
        module.register_forward_hook(lambda m, args, o: _layout(o, out, mesh))
        return module

    def __repr__(self):
        return (f"{type(self).__name__}(input_layouts={self.input_layouts}, "
                f"output_layouts={self.output_layouts}, use_local_output={self.use_local_output})")


class ColwiseParallel(_Linearish):
    """Linear: weight rows (output features) sharded, input replicated, output sharded on
    its last dim. Embedding: embedding dims sharded."""

    _IN, _OUT, _LINEAR_IN = Replicate(), Shard(-1), Replicate()

    def _linear(self, m, mesh):
        _place(m, "weight", Shard(0), mesh)
        _place(m, "bias", Shard(0), mesh)

    def _embedding(self, m, mesh):
        _place(m, "weight", Shard(1), mesh)


class RowwiseParallel(_Linearish):
    """Linear: weight columns (input features) sharded, input sharded on its last dim,
    output replicated (XLA's all-reduce of the partial products). Embedding: rows sharded."""

    _IN, _OUT, _LINEAR_IN = Shard(-1), Replicate(), Shard(-1)

    def _linear(self, m, mesh):
        _place(m, "weight", Shard(1), mesh)
        _place(m, "bias", Replicate(), mesh)

    def _embedding(self, m, mesh):
        _place(m, "weight", Shard(0), mesh)


class SequenceParallel(ParallelStyle):
    """Norms and dropout on activations sharded along the sequence dim; parameters
    replicated."""

    def __init__(self, *, sequence_dim: int = 1, use_local_output: bool = False):
        self.sequence_dim = sequence_dim
        self.use_local_output = use_local_output

    def _apply(self, module, mesh):
        mesh = _one_d(mesh)
        for name in list(module._parameters):
            _place(module, name, Replicate(), mesh)
        seq = Shard(self.sequence_dim)
        module.register_forward_pre_hook(lambda m, args: _map_args(args, (seq,), mesh))
        module.register_forward_hook(lambda m, args, o: _layout(o, seq, mesh))
        return module


class PrepareModuleInput(ParallelStyle):
    """Lays the module's positional inputs out as desired_input_layouts."""

    def __init__(self, *, input_layouts=None, desired_input_layouts=None, input_kwarg_layouts=None,
                 desired_input_kwarg_layouts=None, use_local_output: bool = False):
        if input_kwarg_layouts or desired_input_kwarg_layouts:
            raise NotImplementedError("PrepareModuleInput(input_kwarg_layouts=) is not "
                                      "supported by torchjax")
        self.desired_input_layouts = desired_input_layouts

    def _apply(self, module, mesh):
        mesh = _one_d(mesh)
        desired = self.desired_input_layouts
        module.register_forward_pre_hook(lambda m, args: _map_args(args, desired, mesh))
        return module


class PrepareModuleOutput(ParallelStyle):
    """Lays the module's output(s) out as desired_output_layouts."""

    def __init__(self, *, output_layouts=None, desired_output_layouts=None,
                 use_local_output: bool = True):
        self.desired_output_layouts = desired_output_layouts

    def _apply(self, module, mesh):
        mesh = _one_d(mesh)
        desired = self.desired_output_layouts

        def hook(m, args, out):
            if isinstance(out, tuple):
                return _map_args(out, desired, mesh)
            return _layout(out, desired[0] if isinstance(desired, (tuple, list)) else desired,
                           mesh)
        module.register_forward_hook(hook)
        return module
