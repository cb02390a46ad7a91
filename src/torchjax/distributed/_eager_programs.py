"""The small programs torchjax.distributed runs eagerly, named for the program cache.

A jax.numpy call on a concrete array (`a[None]`, `rows[i]`) and `jax.device_put` onto a new
layout each run a program that JAX makes by tracing and lowering, in every process, on every
run, to find it in JAX's persistent cache. Here each is a function of torchjax's own, named
by what picks it (_programs.py: the name and code of the function, the plain values it is
built from, and the arguments' dtypes, shapes and layouts), so that a warm process loads its
executable without tracing. A program is named only by values that fully determine it:

- the collective's program: which collective (a reduction with its ReduceOp, or a gather),
  over the group's mesh (its devices in rank order, so another group is another program);
  the same on every rank of the group, as XLA's collective needs;
- what a rank does with the result afterwards (`post`): a row, this rank's slice (the rank
  is part of the name), a reshape; a program of this process alone;
- a move onto a layout (`reshard`): the target sharding (mesh and spec); the source's is in
  the argument's signature;
- adding or dropping a leading axis of one (`add_axis`, `first`).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec

from .. import _program_place, _programs


def _add_axis(a):
    return a[None]


def _first(a):
    return a[0]


add_axis = _programs.lazy_jit(_add_axis)
first = _programs.lazy_jit(_first)


# -- a collective ------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1024)
def collective(kind: str, op, reduce_fn, mesh, n: int, scalar: bool = False):
    """The program of a collective over `mesh` (one device per process of the group, axis
    "ranks"): takes the group's rows concatenated on dim 0 (each process's shard is its
    tensor as it is, so no program makes the row; a 0-d tensor's, `scalar`, with an axis
    added), gives the reduction (kind "reduce", by `reduce_fn`, the ReduceOp `op`'s) or the
    stacked rows ("gather"), replicated: XLA's all-reduce / all-gather between the
    processes."""
    whole = NamedSharding(mesh, PartitionSpec())

    def run(cat):
        per_rank = () if scalar else (cat.shape[0] // n,) + cat.shape[1:]
        rows = cat.reshape((n,) + per_rank)
        out = reduce_fn(rows) if kind == "reduce" else rows
        return jax.lax.with_sharding_constraint(out, whole)

    # op by its value ("sum", ...): reduce_fn is the table's lambda for it, one per ReduceOp
    ident = _programs.ident_of("distributed.collective", kind,
                               None if op is None else op.value, mesh, n, scalar)
    return _programs.program(run, ident)


def stack_rows(arr, mesh, size: int):
    """This process's array as its row of the group's rows, concatenated on dim 0 (a 0-d
    array first gets an axis); the same layout on every process."""
    mine = [d for d in mesh.devices.flat if d.process_index == jax.process_index()][0]
    if arr.ndim == 0:
        arr = add_axis(arr)
    arr = jax.device_put(arr, mine)  # (a copy only when it is on another local device)
    return jax.make_array_from_single_device_arrays(
        (size * arr.shape[0],) + arr.shape[1:], NamedSharding(mesh, PartitionSpec("ranks")),
        [arr])


@functools.lru_cache(maxsize=1024)
def alone(kind: str, op, reduce_fn, post: tuple):
    """A collective over a group of one process (a job of one), with `post`'s steps: plain
    array code on this process's tensor, one program."""
    def run(a):
        rows = a[None]
        out = reduce_fn(rows) if kind == "reduce" else rows
        return apply_post(out, post, lambda x, k, axis: x)  # (the only rank's slice: all)

    return _programs.program(run, _programs.ident_of(
        "distributed.alone", kind, None if op is None else op.value, post))


# -- after a collective: this rank's part of the result ----------------------------------------

def apply_post(x, post: tuple, mine):
    """`post`'s steps on x: ("row", i): x[i]; ("rows",): every row, a tuple; ("mine", k,
    axis): this rank's k-long slice on axis, by `mine(x, k, axis)`; ("reshape", shape)."""
    for step in post:
        if step[0] == "row":
            x = x[step[1]]
        elif step[0] == "rows":
            x = tuple(x[i] for i in range(x.shape[0]))
        elif step[0] == "mine":
            x = mine(x, step[1], step[2])
        elif step[0] == "reshape":
            x = jnp.reshape(x, step[1])
        else:  # pragma: no cover
            raise ValueError(step)
    return x


@functools.lru_cache(maxsize=1024)
def _post_program(post: tuple, rank: int):
    def mine(x, k, axis):
        return jax.lax.slice_in_dim(x, rank * k, (rank + 1) * k, axis=axis)

    def run(x):
        return apply_post(x, post, mine)

    return _programs.program(run, _programs.ident_of("distributed.post", post, rank))


def post(x, steps: tuple, rank: int):
    """apply_post on a concrete array of this process, as one named program."""
    return _post_program(steps, rank)(x) if steps else x


# -- a move onto a layout ----------------------------------------------------------------------

@functools.lru_cache(maxsize=1024)
def _resharder(target):
    def move(a):
        return jax.lax.with_sharding_constraint(a, target)

    return _programs.program(move, _programs.ident_of("distributed.reshard", target))


def reshard(x, target):
    """x (a concrete array) on the NamedSharding `target`: jax.device_put's result, by a
    named program where device_put would compile one (both layouts over the same devices in
    the same order; otherwise device_put, which reorders the shards first)."""
    s = x.sharding
    if s == target:
        return x
    if (isinstance(s, NamedSharding) and isinstance(target, NamedSharding)
            and s._internal_device_list == target._internal_device_list):
        out = _resharder(target)(x)
        if out.sharding == target:
            return out
        # the program's output says the same layout in its own words (P("dp", None) for
        # P("dp")), and callers compare shardings: its shards, under `target` itself
        return jax.make_array_from_single_device_arrays(
            x.shape, target, [piece.data for piece in out.addressable_shards])
    return jax.device_put(x, target)


# -- one device's array laid out over several ------------------------------------------------

@functools.lru_cache(maxsize=1024)
def _cutter(bounds: tuple):
    def cut(a):
        return tuple(jax.lax.slice(a, starts, stops) for starts, stops in bounds)

    return _programs.program(cut, _programs.ident_of("distributed.pieces", bounds))


def spread(x, target):
    """x, an array on one device, laid out on `target` (a sharding over devices of this
    process: a NamedSharding, or the GSPMDSharding a loaded executable states its layout
    in): jax.device_put's result. device_put cuts the pieces on x's device with a
    program of JAX's own (traced in every process); here the cut is named by the pieces'
    bounds, and each piece is then copied to its device. None where device_put does not cut
    (a replicated target) or this does not apply: then the caller uses device_put."""
    if (not isinstance(target, jax.sharding.Sharding) or not target.is_fully_addressable
            or target.is_fully_replicated or len(x.sharding.device_set) != 1
            or jax.dtypes.issubdtype(x.dtype, jax.dtypes.extended)):
        return None
    bounds, which, devices = _pieces(target, x.shape)
    pieces = _cutter(bounds)(x)
    pieces = [pieces[k] for k in which]
    if _batched_device_put is not None:  # (JAX's own last step: each piece to its device at
        return _batched_device_put(x.aval, target, pieces, devices)  # once, ~3x faster)
    shards = [jax.device_put(p, d) for p, d in zip(pieces, devices)]
    return jax.make_array_from_single_device_arrays(x.shape, target, shards)


@functools.lru_cache(maxsize=1024)
def _pieces(target, shape):
    """(each distinct piece's (starts, stops), which piece each device takes, the devices):
    what spread cuts, once per layout and shape (a step's labels are cut every call)."""
    where = target.addressable_devices_indices_map(shape)
    bounds, which = [], []
    for index in where.values():
        b = (tuple(0 if s.start is None else s.start for s in index),
             tuple(n if s.stop is None else s.stop for s, n in zip(index, shape)))
        if b not in bounds:
            bounds.append(b)
        which.append(bounds.index(b))
    return tuple(bounds), tuple(which), tuple(where)


try:
    from jax._src.interpreters.pxla import batched_device_put as _batched_device_put
except ImportError:  # pragma: no cover - another jax
    _batched_device_put = None


# an uncommitted one-device argument of a sharded program (a batch's labels, which DDP does
# not lay out) is cut the same way, rather than by JAX's `_multi_slice` (traced in every
# process, a loaded program's call too): see _program_place.py
_program_place.spread = spread
