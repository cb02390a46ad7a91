"""Placements (Shard, Replicate, Partial) and their translation to a JAX PartitionSpec."""

from __future__ import annotations

import warnings

from jax.sharding import NamedSharding, PartitionSpec

__all__ = ["Placement", "Shard", "Replicate", "Partial", "sharding_of", "placements_of"]


class Placement:
    """How a tensor lies along one dimension of a DeviceMesh."""

    def is_shard(self, dim: int | None = None) -> bool:
        """Whether this is a Shard placement (on dimension `dim`, if given)."""
        return isinstance(self, Shard) and (dim is None or self.dim == dim)

    def is_replicate(self) -> bool:
        """Whether this is a Replicate placement."""
        return isinstance(self, Replicate)

    def is_partial(self, reduce_op: str | None = None) -> bool:
        """Whether this is a Partial placement (with reduction `reduce_op`, if given)."""
        return isinstance(self, Partial) and (reduce_op is None or self.reduce_op == reduce_op)

    def _program_name(self) -> str:
        # what names a program built from this placement (_program_names.describe): the
        # repr says all of a placement's state (its dim, its reduction)
        return repr(self)


class Shard(Placement):
    """Split along tensor dimension `dim` over the mesh dimension."""

    def __init__(self, dim: int):
        self.dim = dim

    def __eq__(self, other):
        return isinstance(other, Shard) and other.dim == self.dim

    def __hash__(self):
        return hash(("Shard", self.dim))

    def __repr__(self):
        return f"Shard(dim={self.dim})"

    def __str__(self):
        return f"S({self.dim})"


class Replicate(Placement):
    """A full copy on every device of the mesh dimension."""

    def __eq__(self, other):
        return isinstance(other, Replicate)

    def __hash__(self):
        return hash("Replicate")

    def __repr__(self):
        return "Replicate()"

    def __str__(self):
        return "R"


class Partial(Placement):
    """Each device holds a term of a pending reduction (sum, avg, max, min).

    XLA keeps no user-visible pending reductions, so the array of a Partial DTensor is the
    reduced value; the placement is remembered, and to_local() gives the term a device holds
    when every device holds the same share (value / n for "sum", value for the others)."""

    _OPS = ("sum", "avg", "max", "min")

    def __init__(self, reduce_op: str = "sum"):
        if reduce_op not in self._OPS:
            raise NotImplementedError(f"Partial({reduce_op!r}) is not supported by torchjax; "
                                      f"use one of {self._OPS}")
        self.reduce_op = reduce_op

    def __eq__(self, other):
        return isinstance(other, Partial) and other.reduce_op == self.reduce_op

    def __hash__(self):
        return hash(("Partial", self.reduce_op))

    def __repr__(self):
        return f"Partial({self.reduce_op})"

    def __str__(self):
        return f"P({self.reduce_op})"


def normalize(placements, mesh, ndim: int) -> tuple:
    """Placements as a tuple, one per mesh dimension, Shard dims made non-negative."""
    if placements is None:
        placements = [Replicate()] * mesh.ndim
    placements = tuple(placements)
    if len(placements) != mesh.ndim:
        raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! Found "
                         f"placements length: {len(placements)}, and device_mesh.ndim: "
                         f"{mesh.ndim}.")
    out = []
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"placements must be Shard, Replicate or Partial, got {p!r}")
        if isinstance(p, Shard):
            if not -ndim <= p.dim < max(ndim, 1):
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {p.dim})")
            p = Shard(p.dim % ndim) if p.dim < 0 else p
        out.append(p)
    return tuple(out)


def sharding_of(mesh, placements, shape) -> NamedSharding:
    """The NamedSharding that lays a tensor of `shape` out as `placements` on `mesh`.

    Mesh dimensions of the JAX mesh that `mesh` does not stand for (the other dimensions of a
    sliced mesh) replicate, as they do for the ranks of a PyTorch sub-mesh. A Shard(d) whose
    dim d does not split evenly is kept whole over that mesh dimension (see _uneven)."""
    entries: list = [[] for _ in shape]
    for name, p in zip(mesh._dims, placements):
        if isinstance(p, Shard):
            entries[p.dim].append(name)
    for d, names in enumerate(entries):
        parts = 1
        for i, n in enumerate(names):
            parts *= mesh.jax_mesh.shape[n]
            if shape[d] % parts:
                _uneven(shape, d, names[i:], mesh)
                entries[d] = names[:i]
                break
    spec = [None if not n else n[0] if len(n) == 1 else tuple(n) for n in entries]
    while spec and spec[-1] is None:  # P("dp") rather than P("dp", None): they compare unequal
        spec.pop()
    spec = PartitionSpec(*spec)
    return NamedSharding(mesh.jax_mesh, spec)


_WARNED: set = set()


def _uneven(shape, d: int, names, mesh) -> None:
    """JAX's shardings are even (device_put and jit refuse a dim that does not divide), while
    PyTorch's Shard(d) gives torch.chunk's pieces. torchjax keeps the placement (to_local()
    gives PyTorch's piece, full_tensor() the whole) and holds dim d whole on each device of
    those mesh dimensions: right values, without the memory saving. Said once per case."""
    key = (tuple(shape), d, tuple(names))
    if key in _WARNED:
        return
    _WARNED.add(key)
    n = 1
    for name in names:
        n *= mesh.jax_mesh.shape[name]
    warnings.warn(f"Shard({d}) of a tensor of shape {tuple(shape)}: dim {d} does not split "
                  f"evenly over {n} devices, and JAX's shardings are even; torchjax keeps that "
                  f"dim whole on each device of mesh dimension(s) {list(names)} (the values and "
                  f"to_local() are PyTorch's; the memory is not split). Use a size divisible by "
                  f"{n} to shard it", stacklevel=3)


def placements_of(mesh, sharding, ndim: int, partial=()) -> tuple:
    """The placements a NamedSharding on mesh's JAX mesh means (Replicate where the mesh
    dimension shards nothing); `partial` maps mesh dimension names to their Partial."""
    where = {}
    spec = getattr(sharding, "spec", None)
    if spec is not None:
        for d, entry in enumerate(spec):
            for n in (entry if isinstance(entry, tuple) else (entry,)):
                if n is not None:
                    where[n] = d
    partial = dict(partial)
    return tuple(Shard(where[n]) if n in where else partial.get(n, Replicate())
                 for n in mesh._dims)
