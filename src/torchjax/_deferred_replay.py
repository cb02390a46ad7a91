"""The replay: a deferred sequence checked against the thread's last repeated one as it is
recorded, instead of each op building and looking up its key (_deferred.record).

Why: a step that repeats records the same sequence every time, and its Python was spread over
~80 statements per op with none above ~0.6 us (docs/performance_eager.md, session 24): the
kind of call's key (static arguments, their types, per input its dtype and shape) built and
hashed per op, the sequence's key built and hashed per run. A trace keeps what the next
sequence is checked against, per op: its row's fast-path table, static arguments and their
types, the table's entry, per input where it comes from and the aval of an argument array or
the class of a number, its part of the key and its `ops` entry. record checks a call against
the entry at its place, identities first (the same table, the same static-argument tuple,
the same aval object); a sequence that followed its trace to the end runs the trace's program
with no key built (`replayed`, the read of its result). While a sequence follows its trace,
its `ops` and `key` are the trace's: written out only when something reads them
(`materialize`), or when it leaves the trace.

Which trace: one per program that ran twice (a sequence that never repeats makes none), per
thread; each trace remembers the one that ran after it last time (`follow`), so sequences
that take turns (an RL step's forward and sampling) each meet theirs. For a forward run with
its backward as one program the trace also holds `_deferred_backward._Backward` (`bw`): what
makes the step's graph the same one, so such a step builds no key either.

TORCHJAX_REPLAY=0 (or REPLAY[0] = False) turns it off: every op builds its key.
"""

from __future__ import annotations

import os
import sys
import threading

from . import _deferred  # (read at call time: _deferred imports this module first)
from . import _deferred_programs as _dp
from ._x64 import EVAL as _EVAL
from ._x64 import KEPT as _KEPT_X64
from ._x64 import TRACE as _TRACE
from ._x64 import X64 as _X64

try:
    from jax._src.array import ArrayImpl as _CONCRETE
except ImportError:  # pragma: no cover - moved in a newer jax: nothing is deferred
    _CONCRETE = None

REPLAY = [os.environ.get("TORCHJAX_REPLAY", "1") not in ("", "0")]
STATS = _dp.STATS  # ("replayed": runs of a sequence that followed its trace to the end)
_COMPILING = _dp._Compiling
_refs = sys.getrefcount


class _Trace:
    """A sequence that ran with its program, as the next one is checked against it: per op
    (fast-path table, static arguments, their types, the table's entry, per input its source,
    the op's part of the key, its `ops` entry, its result's aval, per input the aval of an
    argument array or the class of a number or None); the whole key, the live results and
    the program found for them."""

    __slots__ = ("entries", "flat", "live", "prog", "bw", "next")

    def __init__(self, entries, flat, live, prog, bw=None):
        self.entries, self.flat, self.live, self.prog = entries, flat, live, prog
        self.next = None  # the trace of the sequence that ran after this one (follow)
        # a sequence run with its backward as one program (_deferred_backward): what the next
        # step needs to know its graph is this one's (None: not such a sequence, or its graph
        # is not one whose key can be skipped); `live` is then None and `prog` the program
        # of both (never a program of the sequence alone)
        self.bw = bw


class _Local(threading.local):
    def __init__(self):
        self.trace = None  # the _Trace the next sequence is checked against (_Seq.exp)
        self.ran = None  # the _Trace of the last sequence run (None: it had none)
        self.traces = {}  # id(program) -> its _Trace (keep)
        self.seen = {}  # id(program) -> program, run once so far (_twice)


LOCAL = _Local()


def leave_trace(seq):
    """An op that record's lookup did not give (a list row, a split) joins `seq`: it follows
    no trace any longer, and makes none (_bake: its kinds are not kept either)."""
    materialize(seq)
    seq.exp = None
    seq.kinds = None


def materialize(seq):
    """`seq.ops` and `seq.key` for every op recorded: an op that followed the trace (record's
    replay) appends its result only, and its entries of the two lists are the trace's, made
    here when something reads them (before the sequence leaves its trace: another thread
    reading its `exp` first sees them, _deferred_threads)."""
    exp = seq.exp
    if exp is not None:
        ops = seq.ops
        n = len(seq.results)
        k = len(ops)
        if k < n:
            ents = exp.entries
            ops.extend([e[6] for e in ents[k:n]])
            key = seq.key
            key.extend(exp.flat[len(key):ents[n - 1][6][3]])


def view(seq, n):
    """(ops, key) of the first n ops of `seq`, read by another thread without writing them
    (_deferred_threads): the trace's while `seq` follows one."""
    exp = seq.exp
    if exp is not None:
        ents = exp.entries[:n]
        return [e[6] for e in ents], list(exp.flat[:ents[-1][6][3]])
    return seq.ops[:n], list(seq.key)


def keep(seq, exp, key, live, prog, ops, ext, kinds):
    """`seq` ran with `prog`, found by its key: its trace (the one it followed, with its live
    results now, or its own, made at the program's second run: a sequence that never repeats
    makes none) is what the sequence after it is checked against, once one has followed it."""
    loc = LOCAL
    if not REPLAY[0]:
        loc.trace = loc.ran = None
        return
    if exp is not None:
        tr = _Trace(exp.entries, key[0], live, prog)
        tr.next = exp.next
    else:
        tr = _found(loc, prog)
        if tr is None and _twice(loc, prog):
            tr = _bake(seq, ops, key[0], ext, kinds, live, prog)
    if tr is not None:
        _remember(loc, prog, tr)
    follow(tr)


def keep_backward(seq, prog, backward):
    """keep() for a sequence about to run with its backward as one program, `prog`
    (_deferred_backward.run, which found it by its key); backward() makes the trace's `bw`.
    Returns the `bw` of the trace the thread keeps for this sequence (or None)."""
    loc = LOCAL
    if not REPLAY[0]:
        loc.trace = loc.ran = None
        return None
    exp = seq.exp
    if exp is not None and len(seq.results) == len(exp.entries):
        if exp.prog is prog and exp.live is None:
            tr = exp
        else:
            tr = _Trace(exp.entries, exp.flat, None, prog, backward())
            tr.next = exp.next
            _remember(loc, prog, tr)
    else:
        tr = _found(loc, prog)
        if tr is None and _twice(loc, prog):
            tr = _bake(seq, seq.ops, seq.key, seq.ext, seq.kinds, None, prog)
            if tr is not None:
                tr.bw = backward()
                _remember(loc, prog, tr)
    follow(tr)
    return None if tr is None else tr.bw


def follow(tr):
    """A sequence that followed (or made) the trace `tr` ran (None: one without a trace):
    the trace the last one came before is linked to it, and the next sequence is checked
    against the trace that came after it last time (itself, when none did)."""
    loc = LOCAL
    prev = loc.ran
    loc.ran = tr
    if tr is not None:
        if prev is not None and prev.next is not tr:
            prev.next = tr
        loc.trace = tr.next or tr


def _found(loc, prog):
    tr = loc.traces.get(id(prog))
    return tr if tr is not None and tr.prog is prog else None


def _twice(loc, prog) -> bool:
    """Whether `prog` ran before (the second run of a sequence makes its trace)."""
    seen = loc.seen
    if seen.get(id(prog)) is prog:
        return True
    if len(seen) >= 64:
        seen.clear()
    seen[id(prog)] = prog
    return False


def _remember(loc, prog, tr):
    traces = loc.traces
    if len(traces) >= 64:
        traces.clear()
    traces[id(prog)] = tr


def _bake(seq, ops, flat, ext, kinds, live, prog):
    """The thread's _Trace of a sequence that ran with `prog` (None when an op of it came
    from elsewhere than record's lookup: a list row, a split)."""
    if seq.exp is not None:  # (it followed a longer trace to its end: that trace's start)
        kinds = seq.exp.entries[:len(ops)]
    if kinds is None or len(kinds) != len(ops) or seq.pieces:
        return None
    flat = tuple(flat)
    entries = []
    for kind, op in zip(kinds, ops):
        if kind is None:
            return None
        if len(kind) != 3:  # an entry of the trace this sequence followed
            entries.append(kind)
            continue
        fast, kt, hit = kind
        a, b = op[2], op[3]
        checks = []
        p = 2  # where the next argument's part starts in the fast-path key
        for s in flat[a:b]:
            if s.__class__ is tuple:  # a kept number
                checks.append((s, kt[p]))
                p += 1
            elif s < 0:
                checks.append((s, None))
                p += 2
            else:
                x = ext[s]
                if x.__class__ is _CONCRETE:
                    checks.append((s, x.aval))
                    p += 2
                else:  # a number passed as an argument
                    checks.append((s, kt[p]))
                    p += 1
        entries.append((fast, kt[0], kt[1], hit, tuple(c[0] for c in checks),
                        tuple(flat[a - 1:b]), op, hit[3][1], tuple(c[1] for c in checks)))
    return _Trace(entries, flat, live, prog)


def replayed(seq, exp, want):
    """_run's common case written out, for the read of `want`: a sequence with no tape node
    that followed the trace `exp` to its end, run by the trace's program (compiled) when the
    same results are alive, at the top level. Returns want's array; None when it is not that
    case (nothing is done: _run runs the sequence)."""
    results = seq.results
    if len(results) != len(exp.entries) or seq.pieces or _TRACE.value is not _EVAL:
        return None
    live = []
    i = 0
    for t in results:  # (alive: as in _run; `want` is, whatever its count)
        if _refs(t) > 3 and t._lazy is not None:
            live.append(i)
        i += 1
    prog = exp.prog
    if tuple(live) != exp.live or prog.__class__ is _COMPILING:
        return None
    seq.done = True
    alone = _deferred._ALONE
    if alone:  # (as _ran_alone: its first op's kind ran with others)
        alone.pop(exp.entries[0][5][0], None)
    ext = seq.ext
    seq.ext = seq.results = None  # (ops, key and kinds hold no array)
    token = _KEPT_X64 if _X64.value else _X64.swap_local(True)
    try:
        outs = prog(*ext)
    except BaseException as e:
        seq.error = e
        seq.finished = True
        raise
    finally:
        if token is not _KEPT_X64:
            _X64.set_local(token)
    if len(live) == 1:
        got = outs[0]
        want._data = got  # (the only live result is the one read)
        del want.__dict__["_lazy"]
    else:
        got = None
        for i, o in zip(live, outs):
            t = results[i]
            t._data = o
            t.__dict__.pop("_lazy", None)  # (see _deferred._run)
            if t is want:
                got = o
    seq.finished = True
    STATS["replayed"] += 1
    loc = LOCAL
    if loc.ran is not exp or loc.trace is not (exp.next or exp):
        follow(exp)
    return got
