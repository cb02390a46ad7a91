"""A compiled step in a job of several processes: traced per rank, run as one SPMD program.

PyTorch runs a step on every rank over that rank's own tensors, and the collectives (DDP's
gradient averaging among them) meet across the ranks. JAX moves data between processes only
inside one program that all of them run. So in a job of several processes torchjax.compile
traces the step as each rank sees it (its own shapes, as eagerly) with the process axis
bound (`jax.make_jaxpr(axis_env=...)`), where a collective is `lax.all_gather` over that
axis, and runs the jaxpr under `shard_map` over a mesh of every process's devices:

- an array of this process alone (its batch, its own tensors, the step's constants) goes in
  as its row of a (processes, *shape) global array, and what the step computes from it comes
  back as this process's row: each rank keeps its own values, as in PyTorch;
- an array that already spans the processes (DDP's replicated parameters) goes in whole, and
  its new value comes back as it is (replicated: DDP's averaged gradients make it the same
  on every rank);
- a step with neither a collective nor an array spanning processes stays a program of this
  process alone, so one rank may call it by itself.

Each process compiles the program it traced, and the ranks' programs may differ (gather's
dst writes its list, a rank branches on its rank), while XLA compiles each as if all ran
it. So the collectives are made to meet: a result only some ranks use is kept as a
discarded output on every rank (`keep`: XLA would drop an unused collective), a result only
rank dst keeps is a select on the process axis (`keep_on`), and each collective's operand
depends on the previous collective's result and passes a barrier (`rows`), so every rank
runs them in the order of the trace and none is folded as a constant.

A collective on a group of some of the processes (and send/recv among more than 2, in a job
that made such a group) is made to meet in every process's program by tracing the ranks
together (_coordinated.py).

The compiler's side is `compiler._trace.SPMD`, set by init_process_group.
"""

from __future__ import annotations

import contextlib
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec

from .. import _programs
from .._untraceable import Untraceable
from . import _coordinated, _eager_programs

AXIS = "torchjax_processes"  # the process axis of the per-rank trace and of the SPMD mesh
_TRACING = [False]
_KEPT: list = []  # results of collectives the trace under way must compute on every rank
_LAST: list = []  # the result of the trace's last collective (rows orders the next after it)


def tracing() -> bool:
    """True while torchjax.compile traces a step per rank (a job of several processes)."""
    return _TRACING[0]


def rows(arr, g):
    """Every rank's `arr` stacked (rank order) inside a per-rank trace: lax.all_gather over
    the process axis. Raises Untraceable (the compiler's graph break) where that is not the
    collective PyTorch's call means."""
    if not _TRACING[0]:
        raise Untraceable(
            "torch.distributed collectives across processes cannot be traced here (JAX moves "
            "data between processes only in a program that all of them run)")
    if _coordinated.on():
        return _coordinated.rows(arr, g, _gather)[0]
    if g.ranks != list(range(jax.process_count())):
        raise Untraceable(
            f"a collective on a group of some of the processes ({g.ranks}) cannot be traced "
            "into a compiled step (it is one program over every process); the step runs "
            "eagerly")
    return _gather(arr)


def _gather(arr):
    """arr of every rank stacked, an all-gather over the process axis, ordered after the
    trace's previous collective and kept from constant folding."""
    # Each rank traces its own program and XLA compiles each as if every rank ran it. So
    # the operand goes through a barrier: a value that is a constant of this rank's program
    # (zeros on scatter's non-src ranks, a tensor made from the rank inside the step) would
    # be folded through the collective as if the same on every rank. And it is made to
    # depend on the previous collective's result: XLA orders independent collectives by
    # each program's other work (a barrier alone is gone by then), so ranks whose programs
    # differ (gather's dst, code that branches on the rank) would meet the wrong peers.
    arr = jax.lax.optimization_barrier(arr)
    if _LAST:
        arr = _after(arr, _LAST[0])
    out = jax.lax.all_gather(arr, AXIS)
    _LAST[:] = [out]
    return out


def _after(arr, prev):
    """arr, unchanged, as a value XLA can compute only after prev: its first element written
    back at an index read from prev (min(prev[0], 0), which dynamic_update_slice clamps to
    0), a dependence no simplification removes."""
    if arr.size == 0 or prev.size == 0:
        return arr
    p = prev.reshape(-1)[0]
    i = jnp.minimum(jnp.real(p).astype(jnp.float32).astype(jnp.int32), 0)
    flat = arr.reshape(-1)
    return jax.lax.dynamic_update_slice(flat, flat[:1], (i,)).reshape(arr.shape)


def my_slice(x, r: int, k: int, axis: int, whole: bool = True):
    """x's slice [r*k, (r+1)*k) on `axis`, r this rank; inside a per-rank trace, for a group
    of every process (`whole`), the rank is the process axis's index, so that every process
    traces the same program (in a group of some, r is this process's place in it)."""
    if _TRACING[0] and whole:
        return jax.lax.dynamic_slice_in_dim(x, jax.lax.axis_index(AXIS) * k, k, axis=axis)
    return jax.lax.slice_in_dim(x, r * k, (r + 1) * k, axis=axis)


def refuse(what: str) -> None:
    """In a per-rank trace, where each rank holds whole values, a DTensor call that reads or
    makes one process's shard (or takes rank 0's values) has no meaning: the graph breaks."""
    if _TRACING[0]:
        from ..compiler._breaks import GraphBreak
        raise GraphBreak(f"{what} inside a compiled step across processes is not supported "
                         "(the step is traced per rank, each rank holding whole values)")


def keep(value) -> None:
    """Makes the step under trace compute `value` on every rank though only some ranks use
    it (gather's rows on a rank that is not dst): XLA drops an unused collective, and each
    process's program must run the same collectives."""
    _KEPT.append(value)


def keep_on(rank: int, value, old):
    """value on process `rank` and old on the others, inside a per-rank trace: a select on
    the process axis, so that every process traces the same program (a collective whose
    result only some ranks keep, as reduce's)."""
    return jnp.where(jax.lax.axis_index(AXIS) == rank, value, old)


# -- the compiler's hook ---------------------------------------------------------------------


class Spmd:
    """compiler._trace.SPMD in a job of several processes (see the module docstring)."""

    def __init__(self):
        self.axis_env = [(AXIS, jax.process_count())]
        self.spanning = False  # the trace under way reads arrays that span processes
        self.unpaired = False  # the trace left a traced send in the mailbox (_p2p)
        self.broken = False  # another rank's trace broke (a job coordinating its traces)

    def avals(self, arrays):
        """What the step is traced over: an array spanning the processes by shape and dtype
        alone (its mesh would be baked into the jaxpr, which runs inside shard_map)."""
        spans = [isinstance(a, jax.Array) and not a.is_fully_addressable for a in arrays]
        self.spanning = any(spans)
        return [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) if s else a
                for a, s in zip(arrays, spans)]

    @contextlib.contextmanager
    def tracing(self, breaks=()):
        coordinated = _coordinated.on()
        if coordinated:  # (first: a rank alone raises here, with nothing to undo)
            _coordinated.start()
        prev, kept, last = _TRACING[0], list(_KEPT), list(_LAST)
        _TRACING[0] = True
        _KEPT.clear()
        _LAST.clear()
        self.breaks = breaks
        self.broken = False
        try:
            yield
        finally:
            if coordinated:  # a trace that raised: the other ranks' break too
                self.broken = _coordinated.finish(False, None)
            _TRACING[0] = prev
            _KEPT[:] = kept
            _LAST[:] = last
            from . import _p2p
            self.unpaired = _p2p.drop_traced()

    def end_trace(self) -> None:
        """At the end of the traced step (inside the trace): in a job coordinating its
        traces, join the collectives the other ranks still make (_coordinated.py)."""
        if _coordinated.on():
            _coordinated.finish(not self.breaks, _gather)

    def kept(self) -> list:
        return list(_KEPT)

    def check(self, traced) -> None:
        from ..compiler._breaks import GraphBreak
        if self.broken:
            raise GraphBreak("the compiled step broke the graph on another rank (a job with "
                             "groups of some of the processes traces the ranks together)")
        if self.unpaired:
            raise GraphBreak("a send inside the compiled step whose recv is outside it (both "
                             "ranks sent first) is not supported")
        # the tape node of such a forward would run JAX's vjp of the program eagerly, on
        # this process alone: neither its collectives nor DDP's averaging would happen
        if traced.differentiable_outputs and (self.spanning
                                              or _uses_axis(traced.jaxpr.jaxpr)):
            raise GraphBreak("a compiled forward across processes whose backward runs "
                             "outside it is not supported (call backward() inside the "
                             "compiled step)")

    def jit(self, fun, donate_argnums, program):
        return _Runner(fun, donate_argnums, program)


def install() -> None:
    from ..compiler import _trace
    _trace.SPMD[0] = Spmd()


def uninstall() -> None:
    from ..compiler import _trace
    _trace.SPMD[0] = None
    _mesh.cache_clear()


def _uses_axis(jaxpr) -> bool:
    """Whether a jaxpr (or one nested in it) has a collective over the process axis."""
    for eqn in jaxpr.eqns:
        for v in eqn.params.values():
            if isinstance(v, str) and v == AXIS or isinstance(v, (tuple, list)) and any(
                    isinstance(a, str) and a == AXIS for a in v):
                return True
            sub = getattr(v, "jaxpr", v)
            if hasattr(sub, "eqns") and _uses_axis(sub):
                return True
    return False


@functools.cache
def _mesh() -> Mesh:
    """Every device, one row per process (in rank order)."""
    n = jax.process_count()
    devices = sorted(jax.devices(), key=lambda d: (d.process_index, d.id))
    if len(devices) % n:
        raise NotImplementedError(
            "torchjax.compile across processes with different device counts per process is "
            "not supported")
    return Mesh(np.array(devices).reshape(n, -1), (AXIS, "torchjax_local"),
                axis_types=(AxisType.Auto, AxisType.Auto))


def _as_row(x):
    """This process's array as its row of a (processes, *shape) array over the mesh."""
    x = jnp.asarray(x)
    return jax.make_array_from_process_local_data(
        NamedSharding(_mesh(), PartitionSpec(AXIS)), _eager_programs.add_axis(x),
        (jax.process_count(),) + x.shape)


# (named programs, not jax.device_put's and `x[0]`'s: a warm process loads them untraced)
_on = _eager_programs.reshard


class _Runner:
    """A program's `jitted`: the local program, or the SPMD one (built per layout of the
    inputs: which of them span the processes)."""

    def __init__(self, fun, donate_argnums, program):
        self.fun = fun
        self.donate = donate_argnums
        self.collective = _uses_axis(program.traced.jaxpr.jaxpr)
        # for each output, the input position whose array it is the new value of (a write of
        # a known tensor, or of its gradient), else None: the step's own results
        n_consts = program.n_consts
        self.source = [None] * program.traced.n_outputs
        jaxpr = program.traced.jaxpr.jaxpr
        shape_of, k = {}, program.traced.n_outputs  # each write's value's shape
        for w, has_value in program.traced.writes:
            if has_value:
                shape_of[id(w)] = jaxpr.outvars[k].aval.shape
                k += 1
        for w, has_value in program.writes:
            if has_value:
                i = getattr(w, "t", None)
                if i is None:  # optimizer state of a parameter (Adam's moments): its layout
                    i = getattr(w, "p", None)
                    if isinstance(i, int) and shape_of[id(w)] != jaxpr.invars[
                            program.array_of[i]].aval.shape:
                        i = None  # (a step count)
                self.source.append(n_consts + program.array_of[i] if isinstance(i, int)
                                   else None)
        self.local = None
        self.spmd: dict = {}
        self.ident = program.ident  # (its jaxpr's name for the program cache, or None)

    def made(self) -> bool:
        """Whether one of the programs holds an executable (see _program._trace_once)."""
        return any(_programs.holds_any(p) for p in
                   [self.local, *(got[0] for got in self.spmd.values())])

    def __call__(self, *inputs):
        spans = tuple(isinstance(x, jax.Array) and not x.is_fully_addressable for x in inputs)
        if not self.collective and not any(spans):
            if self.local is None:
                self.local = _programs.program(
                    self.fun, _programs.ident_of("per_rank local", self.ident)
                    if self.ident else None, donate_argnums=self.donate)
            return self.local(*inputs)
        got = self.spmd.get(spans)
        if got is None:
            got = self.spmd[spans] = self._build(spans)
        program, replicated = got
        whole = NamedSharding(_mesh(), PartitionSpec())
        # arrays that span the processes go in whole on this program's mesh (an array's
        # mesh is part of its type, and one program has one) and their new values come back
        # on the array's own sharding
        outs = program(*(_on(x, whole) if s else _as_row(x) for x, s in zip(inputs, spans)))
        return [_eager_programs.first(o.addressable_data(0)) if not r
                else _on(o, inputs[j].sharding)
                for o, r, j in zip(outs, replicated, self.source)]

    def _build(self, spans):
        replicated = tuple(j is not None and spans[j] for j in self.source)
        fun = self.fun

        def per_rank(*xs):
            outs = fun(*(x if s else x[0] for x, s in zip(xs, spans)))
            return tuple(o if r else o[None] for o, r in zip(outs, replicated))
        mapped = jax.shard_map(
            per_rank, mesh=_mesh(), check_vma=False,
            in_specs=tuple(PartitionSpec() if s else PartitionSpec(AXIS) for s in spans),
            out_specs=tuple(PartitionSpec() if r else PartitionSpec(AXIS) for r in replicated))
        # named by the jaxpr, which inputs span the processes and the mesh (the process
        # index is in every key: each rank has its own entry of its own trace)
        ident = self.ident and _programs.ident_of("per_rank", self.ident, spans, replicated,
                                                  _mesh())
        return _programs.program(mapped, ident, donate_argnums=self.donate), replicated
