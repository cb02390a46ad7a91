"""The collectives of torch.distributed, each one jitted program over the group's processes.

Each process's tensor becomes its piece of a global array of the group's rows (concatenated
on dim 0) sharded over a mesh of one device per process; a jitted reduction or gather whose
output is replicated makes XLA emit the collective (an all-reduce, an all-gather) across the
processes; each process then takes its part of its copy (a row, its slice) and writes it into
the tensor in place, as PyTorch's collectives do. Eagerly these are named programs
(_eager_programs.py): a warm process loads them from the program cache without tracing.
"""

from __future__ import annotations

import enum
import functools
import pickle

import jax
import jax.numpy as jnp
import numpy as np

from .._autograd import grad_mode
from .._tensor import Tensor
from . import _arg_checks as check
from . import _eager_programs, _per_rank
from ._process_group import _STATE, GroupMember, MeshGroup, _group

__all__ = ["ReduceOp", "all_reduce", "all_gather", "all_gather_into_tensor",
           "reduce_scatter_tensor", "reduce_scatter", "broadcast", "reduce", "gather", "scatter",
           "all_to_all_single", "all_to_all", "all_gather_object", "broadcast_object_list",
           "Work"]


class ReduceOp(enum.Enum):
    """The reductions a collective can apply."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"
    PREMUL_SUM = "premul_sum"


_REDUCE = {
    ReduceOp.SUM: lambda a: jnp.sum(a, axis=0, dtype=a.dtype),
    ReduceOp.AVG: lambda a: (jnp.mean(a, axis=0) if jnp.issubdtype(a.dtype, jnp.inexact)
                             else jnp.sum(a, axis=0, dtype=a.dtype) // a.shape[0]).astype(a.dtype),
    ReduceOp.PRODUCT: lambda a: jnp.prod(a, axis=0, dtype=a.dtype),
    ReduceOp.MIN: lambda a: jnp.min(a, axis=0),
    ReduceOp.MAX: lambda a: jnp.max(a, axis=0),
    ReduceOp.BAND: lambda a: functools.reduce(jnp.bitwise_and, list(a)),
    ReduceOp.BOR: lambda a: functools.reduce(jnp.bitwise_or, list(a)),
    ReduceOp.BXOR: lambda a: functools.reduce(jnp.bitwise_xor, list(a)),
}


class Work:
    """What async_op=True returns: the collective has already run."""

    def wait(self, timeout=None) -> bool:
        """Waits for the collective to finish; torchjax's collectives complete when they return, so
        this returns True at once.
        """
        return True

    def is_completed(self) -> bool:
        """Whether the collective has finished; always True in torchjax (collectives are
        synchronous).
        """
        return True


def _done(async_op):
    return Work() if async_op else None


def _process_group(g):
    g = _group(g)
    if isinstance(g, MeshGroup):
        raise NotImplementedError(
            "collectives on a DeviceMesh dimension's group are not supported by torchjax: one "
            "JAX process drives every device of the mesh; lay tensors out with DTensor "
            "placements (XLA inserts the collectives) or use a process group")
    return g


def _reduce_fn(op):
    if op not in _REDUCE:
        raise NotImplementedError(f"ReduceOp.{op.name} is not supported by torchjax")
    return _REDUCE[op]


def _run(kind, op, tensor: Tensor, g, post: tuple = ()):
    """This process's part of the collective's result over the group's rows: the
    reduction or the stacked rows, then `post`'s steps (_eager_programs.apply_post: a row,
    every row, this rank's slice, a reshape)."""
    arr = tensor._data
    traced = isinstance(arr, jax.core.Tracer)
    if g.size() == 1 and not traced:  # (eagerly: one named program, see below)
        return _eager_programs.alone(kind, op if kind == "reduce" else None,
                                     _reduce_fn(op) if kind == "reduce" else None, post)(arr)
    if g.size() == 1 or traced:
        if g.size() == 1:
            # a group of one needs no other process: plain array code, which also traces
            # (so these run inside torchjax.compile for a single-process job)
            rows = jnp.asarray(arr)[None]
        else:
            # a compiled step is traced per rank and runs as one program over every process
            # (_per_rank.py): the rows are an all-gather over its process axis
            rows = _per_rank.rows(arr, g)
        value = _reduce_fn(op)(rows) if kind == "reduce" else rows
        return _eager_programs.apply_post(value, post, lambda x, k, axis: _slice(x, g, k, axis))
    # eagerly: named programs (the program cache loads them in a warm process without
    # tracing), the collective's the same on every rank, `post` this process's own
    mesh = g.mesh()
    reduce_fn = _reduce_fn(op) if kind == "reduce" else None
    program = _eager_programs.collective(kind, op if kind == "reduce" else None, reduce_fn,
                                         mesh, g.size(), arr.ndim == 0)
    out = program(_eager_programs.stack_rows(arr, mesh, g.size()))
    return _eager_programs.post(out.addressable_data(0), post, g.rank())


def _write(t: Tensor, value) -> None:
    if not isinstance(value, jax.core.Tracer) and not isinstance(t._data, jax.core.Tracer):
        value = jax.device_put(value, next(iter(t._data.devices())))
    with grad_mode.no_grad():
        t.copy_(Tensor._wrap(value))


def _member(g) -> bool:
    return g.rank() >= 0


def _across(tensor: Tensor, g) -> bool:
    """Whether this call is traced into a compiled step that runs across processes."""
    return isinstance(tensor._data, jax.core.Tracer) and g.size() > 1


def _slice(x, g, k: int, axis: int):
    """This rank's k-long slice of x on `axis` (a traced rank inside a per-rank trace)."""
    if g.size() == 1:
        return x
    return _per_rank.my_slice(x, g.rank(), k, axis, g.size() == jax.process_count())


def _mine(rows, g):
    """This rank's row of `rows`."""
    return _slice(rows, g, 1, 0)[0]


def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """tensor <- the reduction of every process's tensor, in place."""
    check.tensor(tensor)
    g = _process_group(group)
    check.reduction(tensor, op, _STATE.backend)
    if _member(g):
        _write(tensor, _run("reduce", op, tensor, g))
    return _done(async_op)


def reduce(tensor: Tensor, dst: int = 0, op=ReduceOp.SUM, group=None, async_op: bool = False,
           group_dst=None):
    """Like all_reduce, but only rank dst keeps the result (the others' tensors are left)."""
    check.tensor(tensor)
    g = _process_group(group)
    dst = dst if group_dst is None else g.ranks[group_dst]
    check.root("reduce", dst, g, GroupMember.WORLD)
    check.reduction(tensor, op, _STATE.backend)
    if _member(g):
        value = _run("reduce", op, tensor, g)
        if _across(tensor, g):  # every rank traces the same program: a select by rank
            _write(tensor, _per_rank.keep_on(dst, value, tensor._data))
        elif jax.process_index() == dst:
            _write(tensor, value)
    return _done(async_op)


def all_gather(tensor_list: list, tensor: Tensor, group=None, async_op: bool = False):
    """tensor_list[r] <- rank r's tensor, in place."""
    check.tensor_list(tensor_list, "tensor_list")
    check.tensor(tensor)
    g = _process_group(group)
    check.gathered(tensor_list, tensor, g.size())
    if _member(g):
        rows = _run("gather", None, tensor, g, (("rows",),))
        for r, t in enumerate(tensor_list):
            _write(t, rows[r])
    return _done(async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group=None,
                           async_op: bool = False):
    """output_tensor <- every rank's input, concatenated on dim 0 (or stacked)."""
    check.tensor(output_tensor, "output_tensor")
    check.tensor(input_tensor, "input_tensor")
    g = _process_group(group)
    check.gathered_into(output_tensor, input_tensor, g.size())
    if _member(g):
        _write(output_tensor, _run("gather", None, input_tensor, g,
                                   (("reshape", tuple(output_tensor.shape)),)))
    return _done(async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op=ReduceOp.SUM, group=None,
                          async_op: bool = False):
    """output <- this rank's dim-0 chunk of the reduction of every rank's input."""
    check.tensor(output, "output")
    check.tensor(input, "input")
    g = _process_group(group)
    check.scattered_from(output, input, g.size())
    check.reduction(input, op, _STATE.backend)
    if _member(g):
        k = input.shape[0] // g.size()
        _write(output, _run("reduce", op, input, g,
                            (("mine", k, 0), ("reshape", tuple(output.shape)))))
    return _done(async_op)


def reduce_scatter(output: Tensor, input_list: list, op=ReduceOp.SUM, group=None,
                   async_op: bool = False):
    """output <- the reduction over ranks of their input_list[this rank]."""
    import torchjax
    check.tensor(output, "output")
    check.tensor_list(input_list, "input_list")
    g = _process_group(group)
    check.reduce_scatter_list(input_list, g.size())
    check.reduction(output, op, _STATE.backend)
    if _member(g):
        _write(output, _run("reduce", op, torchjax.stack(list(input_list)), g,
                            (("mine", 1, 0), ("row", 0))))
    return _done(async_op)


def broadcast(tensor: Tensor, src: int = 0, group=None, async_op: bool = False, group_src=None):
    """tensor <- rank src's tensor, in place on every rank."""
    check.tensor(tensor)
    g = _process_group(group)
    src = src if group_src is None else g.ranks[group_src]
    check.root("broadcast", src, g, GroupMember.WORLD)
    if _member(g):
        i = g.ranks.index(src)
        _write(tensor, _run("gather", None, tensor, g, (("row", i),)))
    return _done(async_op)


def gather(tensor: Tensor, gather_list=None, dst: int = 0, group=None, async_op: bool = False,
           group_dst=None):
    """Collects `tensor` from every rank into `gather_list` on rank `dst`.

    See https://pytorch.org/docs/stable/distributed.html#torch.distributed.gather.
    """
    check.tensor(tensor)
    g = _process_group(group)
    dst = dst if group_dst is None else g.ranks[group_dst]
    check.root("gather", dst, g, GroupMember.WORLD)
    if _member(g):
        check.rooted_list(gather_list, "gather", jax.process_index() == dst, g.size())
        across = _across(tensor, g)
        rows = _run("gather", None, tensor, g, () if across else (("rows",),))
        if across:
            _per_rank.keep(rows)
        if jax.process_index() == dst:
            for r, t in enumerate(gather_list):
                _write(t, rows[r])
    return _done(async_op)


def scatter(tensor: Tensor, scatter_list=None, src: int = 0, group=None, async_op: bool = False,
            group_src=None):
    """Writes `scatter_list[r]` of rank `src` into `tensor` on each rank r.

    See https://pytorch.org/docs/stable/distributed.html#torch.distributed.scatter.
    """
    import torchjax
    check.tensor(tensor)
    g = _process_group(group)
    source = src if group_src is None else g.ranks[group_src]
    check.root("scatter", source, g, GroupMember.WORLD)
    if _member(g):
        check.rooted_list(scatter_list, "scatter", jax.process_index() == source, g.size())
        mine = torchjax.stack(list(scatter_list)) if jax.process_index() == source else \
            torchjax.zeros((g.size(),) + tuple(tensor.shape), dtype=tensor.dtype)
        i = g.ranks.index(source)
        if _across(mine, g):
            rows = _run("gather", None, mine, g)
            _per_rank.keep(rows)
            _write(tensor, _mine(rows[i], g))
        else:
            _write(tensor, _run("gather", None, mine, g, (("row", i), ("mine", 1, 0),
                                                          ("row", 0))))
    return _done(async_op)


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes=None,
                      input_split_sizes=None, group=None, async_op: bool = False):
    """output's chunk r <- rank r's input chunk for this rank (equal splits on dim 0)."""
    if output_split_sizes is not None or input_split_sizes is not None:
        raise NotImplementedError("all_to_all_single with split sizes is not supported by "
                                  "torchjax: JAX needs equal splits")
    check.tensor(output, "output")
    check.tensor(input, "input")
    g = _process_group(group)
    check.exchanged(output, input, g.size())
    if _member(g):
        k = input.shape[0] // g.size()
        _write(output, _run("gather", None, input, g,
                            (("mine", k, 1), ("reshape", tuple(output.shape)))))
    return _done(async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    """Each rank sends `input_tensor_list[j]` to rank j and receives rank j's into `output_tensor_list[j]`.

    See https://pytorch.org/docs/stable/distributed.html#torch.distributed.all_to_all.
    """
    import torchjax
    check.tensor_list(output_tensor_list, "output_tensor_list")
    check.tensor_list(input_tensor_list, "input_tensor_list")
    g = _process_group(group)
    check.all_to_all_lists(output_tensor_list, input_tensor_list, g.size())
    if _member(g):
        shape = (g.size(),) + tuple(input_tensor_list[0].shape)
        # rank r's input_tensor_list[this rank], for every r
        got = _run("gather", None, torchjax.stack(list(input_tensor_list)), g,
                   (("mine", 1, 1), ("reshape", shape), ("rows",)))
        for r, t in enumerate(output_tensor_list):
            _write(t, got[r])
    return _done(async_op)


def _object_rows(obj, g):
    import torchjax
    data = np.frombuffer(pickle.dumps(obj), dtype=np.uint8)
    n = torchjax.tensor([len(data)])
    sizes = np.asarray(_run("gather", None, n, g))  # (read on the host: no program)
    longest = int(np.max(np.asarray(sizes)))
    padded = np.zeros(longest, np.uint8)
    padded[:len(data)] = data
    rows = np.asarray(_run("gather", None, torchjax.from_numpy(padded), g))
    return [pickle.loads(rows[r, :int(sizes[r, 0])].tobytes()) for r in range(g.size())]


def all_gather_object(object_list: list, obj, group=None) -> None:
    """object_list[r] <- rank r's picklable obj."""
    g = _process_group(group)
    if _member(g):
        object_list[:] = _object_rows(obj, g)


def broadcast_object_list(object_list: list, src: int = 0, group=None, device=None,
                          group_src=None) -> None:
    """Replaces `object_list` on every rank with the pickled objects of rank `src`.

    See https://pytorch.org/docs/stable/distributed.html#torch.distributed.broadcast_object_list.
    """
    g = _process_group(group)
    src = src if group_src is None else g.ranks[group_src]
    check.root("broadcast", src, g, GroupMember.WORLD)
    if _member(g):
        rows = _object_rows(list(object_list), g)
        object_list[:] = rows[g.ranks.index(src)]

