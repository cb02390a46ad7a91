"""Ops on DTensors give DTensors: placements read from XLA's result sharding, plus Partial.

PyTorch's DTensor decides each op's output placements by a rule per op and inserts the
collectives itself. Here XLA's partitioner already ran the op sharded and chose the result's
sharding by the same kind of propagation (elementwise keeps Shard(d), a matmul with a row-
sharded left side stays row-sharded, a reduction over an unsharded dim keeps the shard), so a
result's Shard/Replicate placements are read from its array. What XLA does not keep is a
pending reduction: where PyTorch's rule gives Partial (a sum, mean, max or min over a sharded
dim; a matmul whose contracted dim is sharded on both sides; a linear op on a Partial input)
XLA has already reduced and replicated the value. That is torchjax's Partial (placements.py:
held reduced), so those mesh dims are marked Partial as PyTorch's would be.

Installed as a result hook (torchjax._result_hooks) when this module is imported. Which
inputs count: DTensors that are not parameters. Parameters laid out by fully_shard and
parallelize_module stand for PyTorch's, which those wrappers turn into plain tensors inside
forward, so activations stay plain Tensors as they are in PyTorch.

Inside torchjax.compile the values are traced and have no sharding to read yet (XLA picks
the layouts when it compiles the whole program), so the placements come from the inputs'
placements by the same propagation (_traced_base): elementwise and broadcast keep Shard(d),
a matmul keeps its left side's row and right side's column shards, a reduction over other
dims, a permute and a view keeping a leading shard move it where the shapes say, anything
else is Replicate, then the same Partial rules. The compiler constrains every DTensor the program
returns or writes back to the layout its placements say (layout(), _trace.LAYOUT), so the
arrays a compiled call gives carry exactly the reported placements.
"""

from __future__ import annotations

import jax
from jax.sharding import NamedSharding

from ... import _result_hooks
from ..._tensor import Tensor
from ...compiler import _trace
from .._reshard import place_array
from . import _dtensor
from ._dtensor import DTensor
from ._placements import Partial, Replicate, Shard, placements_of, sharding_of

# reductions whose result over a sharded dim PyTorch leaves Partial (its linear reductions)
_REDUCE = {"sum": "sum", "nansum": "sum", "mean": "avg", "amax": "max", "amin": "min",
           "max": "max", "min": "min"}
# ops that contract a dim of two tensors: sharded on both sides, the result is Partial(sum)
_CONTRACT = frozenset({"matmul", "mm", "bmm", "mv", "dot", "linear"})
# linear in each DTensor input: a Partial input stays Partial (PyTorch's pointwise rules for
# add/sub of two Partials, or scaling one)
_LINEAR = frozenset({"add", "sub", "neg", "clone", "view", "reshape", "t", "transpose",
                     "permute", "squeeze", "unsqueeze", "flatten", "contiguous", "mul", "div"})


def _flat(obj, out: list) -> list:
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _flat(o, out)
    return out


def _same_mesh(sharding, mesh) -> bool:
    return (isinstance(sharding, NamedSharding) and
            sharding.mesh.axis_names == mesh.jax_mesh.axis_names and
            sharding.mesh.devices.shape == mesh.jax_mesh.devices.shape)


def _output_placements(name: str, mesh, dts: list, others: list, out: Tensor,
                       base=None) -> tuple:
    if base is None:
        sharding = out._data.sharding
        base = (placements_of(mesh, sharding, out.ndim) if _same_mesh(sharding, mesh)
                else (Replicate(),) * mesh.ndim)
    result = []
    for m, p in enumerate(base):
        same = [d for d in dts if d._mesh.jax_mesh == mesh.jax_mesh]
        here = [d._placements[m] for d in same]
        if isinstance(p, Replicate):
            # XLA's replicated result means "reduced" only where the input's array really was
            # split (an uneven Shard is held whole: _placements._uneven)
            sharded = any(isinstance(d._placements[m], Shard) and _split(d, mesh._dims[m])
                          for d in same)
            partial = [q for q in here if isinstance(q, Partial)]
            if sharded and name in _REDUCE:
                p = Partial(_REDUCE[name])
            elif name in _CONTRACT and _contracted_shards(name, dts, m):
                p = Partial("sum")
            elif partial and name in _LINEAR and _stays_partial(name, here, others):
                p = partial[0]
        result.append(p)
    return tuple(result)


def _contracted_shards(name: str, dts: list, m: int) -> bool:
    """Whether both sides of a matmul shard their contracted dim over mesh dim m (each
    device then holds a partial sum: PyTorch's Partial("sum"))."""
    if len(dts) < 2:
        return False
    a, b = dts[0], dts[1]
    right = b.ndim - 1 if name == "linear" else max(b.ndim - 2, 0)
    axis = a._mesh._dims[m]
    return (a._placements[m] == Shard(a.ndim - 1) and b._placements[m] == Shard(right)
            and _split(a, axis) and _split(b, axis))


def _split(d, axis: str) -> bool:
    """Whether d's array is split over mesh axis `axis` (traced: whether its placements
    split it, as the compiled program lays it out)."""
    if isinstance(d._data, jax.core.Tracer):
        spec = sharding_of(d._mesh, d._placements, tuple(d.shape)).spec
    else:
        spec = getattr(d._data.sharding, "spec", ())
    return any(axis == e or (isinstance(e, tuple) and axis in e) for e in spec)


def _stays_partial(name: str, here: list, others: list) -> bool:
    """PyTorch's rule for a Partial through a linear op: add/sub of Partials of one kind;
    scaling (mul, div) of one Partial by replicated values; the shape ops of one Partial."""
    kinds = {q for q in here if isinstance(q, Partial)}
    if len(kinds) != 1 or next(iter(kinds)).reduce_op not in ("sum", "avg"):
        return False
    if name in ("add", "sub"):
        return all(isinstance(q, Partial) for q in here) and not others
    return sum(isinstance(q, Partial) for q in here) == 1


def _has_dtensor(dyn) -> bool:
    # every op pays this once the hook is installed: class identity, no recursion for the
    # usual flat arguments (a DParameter's class is not DTensor, so parameters never count)
    for a in dyn:
        c = a.__class__
        if c is DTensor:
            return True
        if (c is list or c is tuple) and any(b.__class__ is DTensor for b in a):
            return True
    return False


def after_op(name: str, dyn: tuple, result):
    """The result hook: an op with a DTensor input gives DTensors, as PyTorch's does."""
    if not _has_dtensor(dyn):
        return result
    ins = _flat(dyn, [])
    dts = [t for t in ins if t.__class__ is DTensor]
    others = [t for t in ins if not isinstance(t, DTensor)]
    mixed = [t for t in others if t.ndim > 0]
    if mixed:
        raise RuntimeError(f"aten.{name}: got mixed torch.Tensor and DTensor, need to convert "
                           f"all torch.Tensor to DTensor before calling distributed operators!")
    outs = _flat(result, [])
    mesh = dts[0]._mesh
    traced = any(isinstance(t._data, jax.core.Tracer) for t in outs)
    for t in outs:
        if type(t) is Tensor:
            # parameters laid out on the mesh count here: XLA's propagation reads them too
            base = (_traced_base(name, mesh, [d for d in ins if isinstance(d, DTensor)], t)
                    if traced else None)
            t.__class__ = DTensor
            t._mesh = mesh
            t._placements = _output_placements(name, mesh, dts, others, t, base)
    return result


def _traced_base(name: str, mesh, dts: list, out: Tensor) -> tuple:
    """The Shard/Replicate placements XLA's propagation gives an op's result, from its
    inputs' placements (inside torchjax.compile, where no array has a sharding yet)."""
    same = [d for d in dts if d._mesh.jax_mesh == mesh.jax_mesh]
    base = []
    for m in range(mesh.ndim):
        p = Replicate()
        for k, d in enumerate(same):
            q = d._placements[m]
            if not isinstance(q, Shard) or not _split(d, mesh._dims[m]):
                continue
            if name in _CONTRACT:
                dim = _contract_dim(name, k, d, q.dim, out)
            elif name == "t" or (name == "transpose" and d.ndim == 2 and out.shape != d.shape):
                dim = d.ndim - 1 - q.dim  # the one transpose of a matrix: shards swap
            elif name in _REDUCE or name in _OTHER_REDUCTIONS:
                dim = _reduced_dim(d, q.dim, out)
            elif name in _VIEWS:
                dim = _view_dim(d, q.dim, out, mesh.jax_mesh.shape[mesh._dims[m]])
            elif name in _PERMUTES:
                dim = _permuted_dim(d, q.dim, out)
            else:
                dim = _broadcast_dim(d, q.dim, out)
            if dim is not None:
                p = Shard(dim)
                break
        base.append(p)
    return tuple(base)


def _broadcast_dim(d, dim: int, out: Tensor):
    """Where d's dim lands in out when out is d broadcast (elementwise ops, in-place-like
    copies): the same size, aligned from the right. None when the op changed the shape
    there (a reduction, a view): the result is then taken as replicated."""
    at = dim + out.ndim - d.ndim
    if out.ndim >= d.ndim and tuple(out.shape[out.ndim - d.ndim:]) == tuple(d.shape):
        return at
    return None


# what a traced op's result shape tells of where an input's shard went (the ops' dims are
# not passed to the result hook): reductions, shape changes, permutations
_OTHER_REDUCTIONS = frozenset({"prod", "var", "std", "logsumexp", "argmax", "argmin",
                               "all", "any", "norm", "count_nonzero"})
_VIEWS = frozenset({"view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze",
                    "view_as", "reshape_as"})
_PERMUTES = frozenset({"permute", "transpose", "movedim", "swapaxes", "swapdims"})


def _reduced_dim(d, dim: int, out: Tensor):
    """Where d's sharded dim lands in a reduction's result, when the shapes say so for every
    set of reduced dims that gives out's shape (else None: reduced or unknown)."""
    shape, got = tuple(d.shape), tuple(out.shape)
    if len(got) == len(shape):  # keepdim: the reduced dims have size 1
        return dim if got[dim] == shape[dim] and shape[dim] > 1 else None
    landed = set()
    for kept in _subsequences(len(shape), len(got)):
        if tuple(shape[i] for i in kept) == got:
            landed.add(kept.index(dim) if dim in kept else None)
    return landed.pop() if len(landed) == 1 else None


def _subsequences(n: int, k: int):
    from itertools import combinations
    return (list(c) for c in combinations(range(n), k))


def _view_dim(d, dim: int, out: Tensor, parts: int):
    """Where a view keeps d's sharded dim: the first of the result's dims that start at the
    same offset (the elements before it match), as long as each of the `parts` shards is a
    whole number of that result dim's slices (a merge with the dims after it, or a split
    whose leading size still divides)."""
    shape, got = tuple(d.shape), tuple(out.shape)
    before = 1
    for s in shape[:dim]:
        before *= s
    at, acc = 0, 1
    while at < len(got) and acc < before:
        acc *= got[at]
        at += 1
    while at < len(got) and got[at] == 1 and shape[dim] != 1:
        at += 1  # an unsqueezed dim in front of it
    if acc != before or at >= len(got):
        return None
    if shape[dim] % parts or got[at] % parts:
        return None
    return at


def _permuted_dim(d, dim: int, out: Tensor):
    """Where a permutation puts d's sharded dim: the one result dim of its size (None when
    the size is not unique: the shapes cannot tell)."""
    size = d.shape[dim]
    if sorted(d.shape) != sorted(out.shape) or list(d.shape).count(size) != 1:
        return None
    return list(out.shape).index(size)


def _contract_dim(name: str, k: int, d, dim: int, out: Tensor):
    """Where a matmul keeps its operand's shard: the left side's rows (and batch dims), the
    right side's columns (a linear's weight rows); a contracted dim gives none."""
    if k == 0:
        if d.ndim >= 2 and dim < d.ndim - 1:
            return dim + out.ndim - d.ndim
        return None
    if k != 1:
        return None
    cols = 0 if name == "linear" else d.ndim - 1
    if d.ndim >= 2 and dim == cols:
        return out.ndim - 1
    if name != "linear" and d.ndim > 2 and dim < d.ndim - 2:
        return dim + out.ndim - d.ndim  # a batch dim of bmm/matmul
    return None


class _Tag:
    """What makes a compiled program's result array the DTensor the trace returned."""

    __slots__ = ("mesh", "placements")

    def __init__(self, mesh, placements):
        self.mesh, self.placements = mesh, placements

    def apply(self, t: Tensor) -> Tensor:
        t.__class__ = DTensor
        t._mesh, t._placements = self.mesh, self.placements
        return t


def layout(t: Tensor):
    """(t's array, None), or for a DTensor (its array constrained to the layout its
    placements say, its _Tag): the compiler's hook for every tensor a program returns or
    writes back (_trace.LAYOUT), so the arrays carry the placements the tensors report."""
    if not isinstance(t, DTensor):
        return t._data, None
    # a parameter laid out by fully_shard / parallelize_module keeps its own sharding
    sharding = getattr(t, "_sharding", None) or sharding_of(t._mesh, t._placements,
                                                            tuple(t.shape))
    return place_array(t._data, sharding), _Tag(t._mesh, t._placements)


_dtensor._ON_FIRST.append(lambda: _result_hooks.install(after_op))
_trace.LAYOUT[0] = layout
