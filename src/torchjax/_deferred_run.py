"""Running a deferred sequence: its program (or its ops one by one, or its windows), the
results written into the tensors still alive. Split out of _deferred.py, which says what a
sequence is; module settings (WINDOWS, _PROGRAMS, _ALONE) are read from there at each run,
so tests and benchmarks may replace them."""

from __future__ import annotations

import sys

import jax

from . import _deferred as _d
from . import _deferred_grad as _grad
from . import _deferred_programs as _dp
from . import _deferred_replay as _replay
from . import _deferred_split
from . import _deferred_windows as _windows
from ._x64 import EVAL as _EVAL
from ._x64 import KEPT as _KEPT_X64
from ._x64 import TRACE as _TRACE
from ._x64 import X64 as _X64
from ._x64 import enter as _enter
from ._x64 import leave as _leave

STATS = _dp.STATS
_COMPILING = _dp._Compiling
_refs = sys.getrefcount
materialize, follow = _replay.materialize, _replay.follow


def run_now(seq):
    """Run a sequence: its program (or its ops one by one), results into the live tensors."""
    seq.done = True
    results = seq.results
    exp = seq.exp
    live = []
    i = 0
    for t in results:
        # alive: held by more than `results`, this loop and getrefcount's argument
        if _refs(t) > 3 and t._lazy is not None:
            live.append(i)
        i += 1
    if exp is not None:
        materialize(seq)
    ops, ext, flat, nodes, kinds = seq.ops, seq.ext, seq.key, seq.nodes, seq.kinds
    seq.ops = seq.ext = seq.results = seq.key = seq.nodes = seq.where = seq.kinds = None
    if seq.pieces and live:  # pieces nobody read yet are computed at their first read
        live = _deferred_split.later(ops, flat, ext, results, live)
    if ops and (_d._ALONE or len(ops) == 1):  # (_ran_alone has nothing to do otherwise)
        _d._ran_alone(ops, flat)
    tlive = live
    misses = -1
    seen = False
    if seq.graph:  # (counted for the cool-down: _deferred_grad.ran)
        misses = _missed()
    if nodes:  # results that tape nodes saved are outputs too
        need, nodes = _grad.needed(nodes)
        if need:
            live = sorted(need.union(live))
    if not live:  # nobody can read any result: nothing to run
        seq.finished = True
        return
    live = tuple(live)
    exp = seq.exp
    prog = None
    if exp is not None and len(ops) == len(exp.entries):
        # the thread's last repeated sequence again, op for op (record checked each): its key,
        # and its program when the same results are alive
        key = (exp.flat, live)
        if live == exp.live:
            prog = exp.prog
            if prog.__class__ is _COMPILING:  # (done: the program itself from now on)
                if prog.done:
                    exp.prog = prog.fn
                prog = None
            else:
                STATS["replayed"] += 1
                follow(exp)
    else:
        key = (tuple(flat), live)
        exp = None
    top = _TRACE.value is _EVAL
    # the x64 scope, its common case inline (see _x64.py)
    token = _KEPT_X64 if _X64.value else _X64.swap_local(True) if top else _enter()
    try:
        if not top:
            # read inside a JAX transformation (a compiled step reading a pending tensor
            # made outside it): the values are concrete, computed now, not traced
            with jax.ensure_compile_time_eval():
                outs = _outputs(key, ops, ext, flat, live)
        else:
            if prog is None:
                prog = _d._PROGRAMS.get(key)
                if prog is not None:
                    _replay.keep(seq, exp, key, live, prog, ops, ext, kinds)
            if prog is not None:
                outs = prog(*ext)
            else:
                # (a sequence with tape nodes seen before is warming up, not missing: _grad.ran)
                seen = misses >= 0 and (seq.warm or key in _dp.SEEN)
                outs = _outputs(key, ops, ext, flat, live, True, misses >= 0)
    except BaseException as e:
        seq.error = e
        seq.finished = True
        raise
    finally:
        if token is not _KEPT_X64:
            _X64.set_local(token) if top else _leave(token)
    if misses >= 0:
        # (a sequence run by windows counts as a miss too: on a new tree they measured about
        # as fast as the eager ops, so the recording did not pay; docs/performance_eager.md)
        _grad.ran(_missed() == misses, len(ops), seen)
    if nodes:
        value_of = dict(zip(live, outs))
        _grad.patch(nodes, value_of)
        outs = [value_of[i] for i in tlive]
        live = tlive
    for i, o in zip(live, outs):
        t = results[i]
        t._data = o
        # out of __dict__, not set to None there: a tensor's __dict__ is its Python state,
        # which torch.save writes and torch.load refuses for the tensor's own attributes
        t.__dict__.pop("_lazy", None)
    seq.finished = True


def _missed():
    """A count that grows when a sequence runs without its program: op by op or by windows,
    but not while its program compiles on the worker thread (it will have one: counting that
    as a miss paused a repeated tree net's deferral before its program was ready)."""
    return STATS["op_by_op"] + STATS["windows"] - STATS["waiting"]


def _outputs(key, ops, ext, flat, live, top=False, graph=False):
    """The live results: the sequence's program, or (graph: it records tape nodes) its
    windows' programs (_deferred_windows.py), or its ops one by one."""
    prog = _d._PROGRAMS.get(key)
    # (a short sequence with tape nodes gets no program, nor windows: it counts as a miss
    # for the cool-down whatever runs it, so their compiles would only be wasted)
    short = graph and len(ops) < _grad.MIN_OPS
    if prog is None and not short:
        prog = _dp.program_for(key, ops, live, ext, top)
    if prog is not None:
        return prog(*ext)
    if graph and top and _d.WINDOWS[0] and not short:
        return _windows.run(ops, flat, ext, live)
    return _dp.op_by_op(ops, flat, ext, live)
