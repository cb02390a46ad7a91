"""Deferred op sequences: ops whose results nobody has read yet run later, as ONE program.

Why: per op, eager dispatch costs about one jitted XLA call plus 1-2 µs of Python, so a
chain of small ops costs one XLA call per op where PyTorch pays a few µs per op
(docs/performance.md). With this on, a fast-path op (_dispatch._fast_call's rows) whose
result will not be recorded on the tape is not run: it is appended to the calling thread's
pending sequence (its compiled row, its input sources, the inputs' arrays) and returns a
*pending* tensor, whose `_data` slot is left unset. The first read of any pending tensor's
`_data` (printing, .item(), numpy, backward, an op that is not deferred, ...) runs the whole
sequence as one cached jitted program and fills in every result that is still alive.

Why an unset slot: every read of `_data` anywhere (hundreds of places) must see a real
array. Reading an unset slot raises AttributeError, which makes Python call
Tensor.__getattr__; that hook runs the sequence (`force`). Tensors that were never pending
pay nothing, the check exists only on the deferred path itself.

What is deferred: only rows the fast path serves (no argument check, no view, no layout;
the tensor-list rows cat and stack through record_list), with tensors and Python numbers as
arguments, tensors whose arrays are not committed to a
device (JAX places those freely; arrays put on a device or a mesh are left to the usual
path, so one program never meets two devices), at the top level (not inside a JAX
transformation, autocast, result hooks or checkpoint's capture), when no input requires grad under grad mode (so no
tape node is recorded), and only for call kinds the fast path has already run once (its
table entry exists: the first call of a kind runs eagerly and raises its errors there).
Random rows and in-place forms never pass through the fast path, so they are never deferred;
an in-place write to a pending tensor reads it first, which runs the sequence.

Errors: the result's shape and dtype are known when the op is recorded (the result of the
kind of call's first, eager run: seen_result; else the eval_shape of the entry's compiled
call); a call that failed there is not deferred and takes the general path, which raises
PyTorch's error at that op, as eagerly.

Program count: a sequence's program is keyed on (per op: the kind of call, where each input
comes from; which results are still alive). When a sequence gets a program (seen twice, two
ops or more), under which name in the program cache, and on which thread it compiles:
_deferred_programs.py. A sequence is cut at MAX_OPS ops.

Threads: each thread has its own sequence, recorded and run by it without a lock; another
thread reading one of its tensors computes that tensor alone (see force).

Arrays read by a pending sequence are kept by it (a compiled step that would donate one
sees the extra reference and passes a copy instead, see compiler/_program.py).

On by default; TORCHJAX_DEFER=0 in the environment (or `torchjax._deferred.ON[0] = False`)
turns it off. The whole test suite passes with it on (docs/performance_eager.md).
GRAD (on by default since eager21; TORCHJAX_DEFER_GRAD=0 turns it off) defers ops that
record a tape node too: see _deferred_grad.py, which also says when it pauses itself.
docs/performance_eager.md has the measurements of both.
"""

from __future__ import annotations

import os
import sys
import threading
from operator import is_ as _is

import jax

from . import _deferred_grad as _grad
from . import _deferred_kinds as _kinds
from . import _deferred_programs as _dp
from . import _deferred_replay as _replay
from . import _deferred_threads, _tensor
from ._autograd import engine, grad_mode
from ._pure import _SCALARS, _types
from ._scalar_args import _ARRAYS as _KEPT
from ._scalar_args import on_device as _on_device
from ._tensor import Tensor
from ._x64 import EVAL as _EVAL
from ._x64 import TRACE as _TRACE
from ._x64 import enter as _enter
from ._x64 import leave as _leave

_describe, _describe_specs = _kinds.describe, _kinds.describe_specs
seen_result = _kinds.seen_result  # (dispatch calls it: _deferred.seen_result)
_op_by_op = _dp.op_by_op
_programs_for = _dp.program_for

ON = [os.environ.get("TORCHJAX_DEFER", "1") not in ("", "0")]
# needs ON: ops that record a tape node are deferred too (_deferred_grad.py). On by default
# since eager21: a repeated tree net's step went from 1.50x to 1.24x PyTorch's (wall time,
# in one process), and the cool-down keeps short forwards (an MLP's) and new structures on
# the eager path (docs/performance_eager.md)
GRAD = [os.environ.get("TORCHJAX_DEFER_GRAD", "1") not in ("", "0")]
COOL = _grad._COOL  # (read by _dispatch.dispatch: grad ops skip recording while cooling)
# a sequence is checked against the thread's last repeated one as it is recorded (the replay,
# _deferred_replay.py; TORCHJAX_REPLAY=0 turns it off)
REPLAY = _replay.REPLAY
leave_trace, materialize, follow = _replay.leave_trace, _replay.materialize, _replay.follow
_RLOCAL = _replay.LOCAL
# a longer sequence is cut (run) here. (64 until session 27: a 6-layer GPT's no-grad forward,
# ~216 ops once its views were deferred too, ran as 4 programs; as one or two its generate's
# steady tokens took 7.2-7.5 ms instead of 7.8-7.9, a transformer encoder's and an MLP's
# inference the same either way)
MAX_OPS = 256
# ... and one that records tape nodes: a graph's forward is run by its backward anyway, and
# a tree net's 94-op forward is then one program rather than two (and its windows, when on,
# line up with its loop body: cut at 64 it ended in a one-op window, never a program)
MAX_GRAD_OPS = 256
# a sequence with tape nodes and no program runs window by window (_deferred_windows.py).
# Off: on new trees the windows measured no faster than the eager ops, and compiling their
# programs on the worker thread slowed the steps around (docs/performance_eager.md)
WINDOWS = [False]

_STATE = grad_mode.STATE
_SLOT = Tensor.__dict__["_data"]
_PROGRAMS = _dp.PROGRAMS
_COMPILING = _dp._Compiling
# counts for tests and benchmarks: sequence programs made, sequences run op by op
STATS = _dp.STATS
_refs = sys.getrefcount
_wrap = _new_tensor = Tensor._wrap
_new_pending = Tensor._pending
# the source of an absent optional tensor argument (None): a constant, as a kept number's
# (class, value) is (_deferred_programs.source gives its value)
_NONE = (type(None), None)

try:
    from jax._src.array import ArrayImpl as _CONCRETE
except ImportError:  # pragma: no cover - moved in a newer jax: nothing is deferred
    _CONCRETE = None
_AVAL = jax.core.ShapedArray


class _Seq:
    """One thread's pending ops, in order."""

    __slots__ = ("ops", "ext", "where", "key", "results", "nodes", "done", "finished",
                 "error", "lock", "graph", "pieces", "warm", "exp", "kinds")

    def __init__(self, exp=None):
        self.ops = []  # (compiled row, pure row, where its input sources are in `key`)
        self.ext = []  # the arrays and numbers read from outside the sequence
        # id of an array in ext -> its index: an array read by several ops (a Linear's weight
        # in a tree net) is one argument of the program, not one per read. Each argument of
        # an XLA CPU call costs ~2 µs here: 21 tanh(Linear(cat)) with the weight and bias
        # passed per op took 167 µs against 73 µs passed once (docs/performance_eager.md)
        self.where = {}
        # per op its token, then where each input comes from: i >= 0 is ext[i], i < 0 the
        # result of op ~i (flat; a token fixes the arity)
        self.key = []
        # each op's result tensor. Strong references: when the sequence runs, a result that
        # only this list still holds (sys.getrefcount) is dead and not computed at all. The
        # cycle result -> sequence -> result is cut when the sequence runs.
        self.results = []
        self.nodes = []  # tape nodes saving results of the sequence (_deferred_grad)
        self.graph = False  # whether any op recorded a tape node (_deferred_grad)
        self.pieces = False  # whether it holds a split's pieces (_deferred_split)
        # whether a program for it is being made though its key is new (its template's,
        # _deferred_template): its run op by op is then no miss for the cool-down
        self.warm = False
        self.done = False
        self.error = None
        # made by the first reader from another thread (_deferred_threads): a lock per sequence
        # cost every no-grad chain ~0.15 us for a case that is rare
        self.lock = None
        self.finished = False  # set by the owner's run when every result is written
        # the thread's last repeated sequence (a _deferred_replay._Trace), while this one has
        # matched it op for op so far (record checks each call against it instead of looking
        # its kind up); None once they differ
        self.exp = exp
        # per op recorded by record's lookup, (fast-path table, its key, its entry), or the
        # entry of the trace it followed (filled in when the sequence leaves the trace; None
        # until then, and for good once an op from elsewhere joins it); a trace is made of
        # them when the sequence repeats
        self.kinds = [] if exp is None else None


class _Local(threading.local):
    def __init__(self):
        self.seq = _Seq()


_LOCAL = _Local()


def _input(v, seq, ext):
    """(source, aval) of tensor v as an input of seq's next op: ~i for the result of its op i,
    else the index of v's array in ext (appended); None when v cannot be one."""
    # (whatever writes a pending tensor's `_data` without reading it first clears `_lazy`:
    # Tensor.data's setter)
    lz = v._lazy
    if lz is not None:
        if lz[0] is not seq:
            # pending in another thread's sequence: the usual path runs that one, outside
            # this sequence's lock (two threads each waiting for the other's lock would
            # never finish)
            return None
        return ~lz[1], lz[2]
    a = v._data
    if a.__class__ is not _CONCRETE or a._committed:
        # only arrays JAX may place freely: arrays put on a device (another GPU, a mesh)
        # could meet arrays of another one in the sequence's program
        return None
    where = seq.where
    i = where.get(id(a))  # (ext holds every array it maps, so their ids stay theirs)
    if i is None:
        i = where[id(a)] = len(ext)
        ext.append(a)
    return i, a.aval


def _forget(seq, n_ext):
    """Undo what a call that is not deferred after all added to seq's inputs."""
    ext, where = seq.ext, seq.where
    for x in ext[n_ext:]:
        if where.get(id(x), -1) >= n_ext:
            del where[id(x)]
    del ext[n_ext:]


def _pending_result(seq, i, aval):
    """The pending tensor of seq's op i: no `_data` until a read runs the sequence."""
    t = _new_pending((seq, i, aval))
    seq.results.append(t)
    return t


def record(prep, fast, dyn, stat):
    """A pending tensor for the call, or None when it is not deferred (the caller then runs
    it as usual; reading a pending argument's `_data` there runs the sequence first).

    Called by dispatch before it enters the x64 scope: recording makes no array, except
    in the rare steps below that enter the scope themselves. (Every deferred op passes here:
    _input is written out inline, and the grad pattern is counted in the same walk.)"""
    if _TRACE.value is not _EVAL:
        return None
    rg = False
    if _STATE.grad_enabled:  # an op recorded on the tape runs now, unless GRAD says
        for v in dyn:
            if isinstance(v, Tensor) and v._requires_grad:
                if not GRAD[0] or not _grad.usable(prep):
                    return None
                rg = True
                break
    seq = _LOCAL.seq
    if seq.done:
        seq = _LOCAL.seq = _Seq(_RLOCAL.trace)
    ext = seq.ext
    n_ext = len(ext)
    where = seq.where
    exp = seq.exp
    if exp is not None:
        # The replay: the same call as the one at this place of the thread's last repeated
        # sequence (same row, static arguments, dtypes and shapes, inputs from the same
        # places) is that call's kind again: checked here, with no key built or looked up
        i = len(seq.results)
        try:
            e = exp.entries[i]
        except IndexError:  # (longer than the trace)
            e = None
        # (static arguments equal and each the same object have the same types: True and 1
        # are equal but different calls; a tuple among them is checked by its types)
        if e is not None and e[0] is fast and (stat is e[1] or (stat == e[1] and (
                all(map(_is, stat, e[1])) or _types(stat) == e[2]))):
            pattern = 0
            for v, s, x in zip(dyn, e[4], e[8]):
                if isinstance(v, Tensor):
                    lz = v._lazy
                    if lz is not None:
                        if lz[0] is not seq or ~lz[1] != s:
                            break
                    else:
                        a = v._data
                        if a.__class__ is not _CONCRETE or a._committed:
                            break
                        av = a.aval
                        if av is not x and (x.__class__ is not _AVAL or av.shape != x.shape
                                            or av.dtype != x.dtype):
                            break
                        j = where.get(id(a))
                        if j is None:
                            j = where[id(a)] = len(ext)
                            ext.append(a)
                        if j != s:
                            break
                    if rg:
                        pattern = pattern * 3 + (2 if v._requires_grad else 1)
                elif v is None:  # (an absent optional tensor: linear's bias=False)
                    if s is not _NONE or rg:
                        break
                    pattern *= 3
                elif v.__class__ is x:
                    if s.__class__ is tuple:  # a number kept as a constant of the program
                        if s[1] != v or s not in _KEPT:
                            break
                    elif len(ext) != s or (x, v) in _KEPT:
                        break
                    else:
                        _number(v)
                        ext.append(v)
                    pattern *= 3
                else:
                    break
            else:
                aval = e[7]
                if i or not _ALONE or not _alone(e[5][0]):
                    t = _new_pending((seq, i, aval))
                    if not rg or _grad.attach(t, prep, e[3], dyn, seq, i, pattern, aval):
                        seq.results.append(t)  # (its `ops` and `key`: materialize)
                        if rg:
                            seq.graph = True
                        if i + 1 >= (MAX_GRAD_OPS if seq.graph else MAX_OPS):
                            run(seq)
                        return t
                _forget(seq, n_ext)
                return None
            _forget(seq, n_ext)
        materialize(seq)
        seq.exp = None
        # (the ops that followed the trace: its entries, for this sequence's own trace)
        seq.kinds = list(exp.entries[:i])
    skey = seq.key
    k0 = len(skey)
    skey.append(None)  # the op's token, known after the lookup
    if stat:  # (_types' common case inline: no tuple among the static arguments)
        types = tuple(map(type, stat))
        keys = [stat, types if tuple not in types else _types(stat)]
    else:
        keys = [stat, ()]
    pattern = 0  # per argument: 2 a tensor requiring grad, 1 another tensor, 0 a number
    for v in dyn:
        if isinstance(v, Tensor):
            # (as _input)
            lz = v._lazy
            if lz is not None:
                if lz[0] is not seq:
                    break
                skey.append(~lz[1])
                av = lz[2]
            else:
                a = v._data
                if a.__class__ is not _CONCRETE or a._committed:
                    break
                i = where.get(id(a))
                if i is None:
                    i = where[id(a)] = len(ext)
                    ext.append(a)
                skey.append(i)
                av = a.aval
            keys.append(av.dtype)
            keys.append(av.shape)
            pattern = pattern * 3 + (2 if v._requires_grad else 1)
        elif v.__class__ in _SCALARS:
            cls = v.__class__
            const = (cls, v)
            if const in _KEPT:
                # a number seen often enough to be kept on device (_scalar_args: never 0.0,
                # -0.0 or NaN, whose keys would be ambiguous) is a constant of the program:
                # one argument less per call (~0.3 µs each). A value that changes every
                # step is never kept, so it stays an argument and compiles nothing new
                skey.append(const)
            else:
                skey.append(len(ext))
                # counted towards keeping it (then it is a constant), but passed as the
                # number: the array made at the count that keeps it would give the
                # sequence's program a second signature for that one call, compiled in a
                # warm process and not in a cold one whose program was still compiling
                # on the worker thread then (_deferred_programs.BACKGROUND)
                _number(v)
                ext.append(v)
            keys.append(cls)
            pattern *= 3
        elif v is None and not rg:  # (a constant of the program, as a kept number)
            skey.append(_NONE)
            keys.append(None)
            pattern *= 3
        else:
            break
    else:
        kt = tuple(keys)
        try:
            hit = fast.get(kt)
        except TypeError:  # a list among the static arguments
            hit = None
        if hit is not None:
            meta = hit[3]
            if not meta:
                _describe(meta, prep, stat, hit, dyn)
            aval = meta[1]
            i = len(seq.ops)
            if i == 0 and _ALONE and _alone(meta[0]):
                aval = None  # (not deferred: see _alone)
            if aval is not None:
                # the pending result (as _pending_result)
                t = _new_pending((seq, i, aval))
                if not rg or _grad.attach(t, prep, hit, dyn, seq, i, pattern, aval):
                    skey[k0] = meta[0]
                    seq.ops.append((hit[0], meta[2], k0 + 1, len(skey)))
                    seq.results.append(t)
                    kinds = seq.kinds
                    if kinds is not None:  # (None: it can make no trace, leave_trace)
                        kinds.append((fast, kt, hit))
                    if rg:
                        seq.graph = True
                    if i + 1 >= (MAX_GRAD_OPS if seq.graph else MAX_OPS):
                        run(seq)
                    return t
    # not deferred: forget what this call added
    _forget(seq, n_ext)
    del skey[k0:]
    if not seq.results and seq.exp is None:  # (nothing recorded yet: the next call may
        seq.exp = _RLOCAL.trace                # still follow the trace)
    return None


# Kinds of call (fast-path tokens) whose sequences ran with that op alone: a view or a read
# right after it ran it at once (the tree net's embedding, split into rows at every step).
# Deferred, such an op costs its recording and a run; eager, neither. token -> [such runs in
# a row, then also the calls left eager since; the calls to leave eager before deferral is
# tried again]. A retry costs more than its own op: the step's next sequence differs (the
# tree's split of a pending embedding is not deferred), so it is new, runs op by op and
# gets a program of its own. So a retry that ran alone again marks the kind at once, and
# the wait before the next one doubles, from ALONE_RETRY up to ALONE_RETRY_MAX calls (the
# tree net retried every 66 steps: two slow steps and a sequence program each time).
_ALONE: dict = {}
ALONE_AFTER = 2
ALONE_RETRY = 64
ALONE_RETRY_MAX = 4096


def _alone(token):
    """Whether a call of this kind should start no sequence (it would run alone)."""
    e = _ALONE.get(token)
    if e is None or e[0] < ALONE_AFTER:
        return False
    if e[0] >= ALONE_AFTER + e[1]:  # retry, and if it runs alone again, wait twice as long
        e[0] = ALONE_AFTER - 1
        e[1] = min(2 * e[1], ALONE_RETRY_MAX)
        return False
    e[0] += 1
    return True


def _ran_alone(ops, flat):
    """Count a run for the first op's kind: alone, or with others (forgotten)."""
    token = flat[ops[0][2] - 1]
    if len(ops) == 1:
        e = _ALONE.get(token)
        if e is None:
            if len(_ALONE) >= 4096:
                _ALONE.clear()
            _ALONE[token] = [1, ALONE_RETRY]
        else:
            e[0] += 1
    elif _ALONE:
        _ALONE.pop(token, None)


def _number(v):
    """_scalar_args.on_device(v) inside the x64 scope (the array it may make is x64's)."""
    token = _enter()
    try:
        return _on_device(v)
    finally:
        _leave(token)


def force(t):
    """t's array (Tensor.__getattr__ of `_data`): runs t's sequence if it has not run yet.

    Only the thread that owns a sequence records into it and runs it, without a lock on
    recording (a lock per op cost ~0.3 µs). Another thread reading one of its tensors
    computes that tensor alone from what was recorded up to it (the owner only appends, so
    that prefix is complete), under the sequence's lock, which the owner's run also takes."""
    seq = t.__dict__["_lazy"][0]
    if seq.__class__ is not _Seq:  # a piece left for its first read (_deferred_split)
        return seq.get(t)
    # (a thread's unfinished sequence is its current one: it is replaced only once done)
    if seq is _LOCAL.seq:
        if not seq.done:
            _run(seq)
    elif not seq.finished:  # (another thread's, maybe being run by it right now)
        _deferred_threads.force_other(seq, t)
    if seq.error is not None:
        raise RuntimeError("the deferred sequence that computes this tensor failed") \
            from seq.error
    lz = t.__dict__.get("_lazy")
    if lz is not None:  # a piece the run left for its first read: this one
        return lz[0].get(t)
    return _SLOT.__get__(t)


_tensor._FORCE[0] = force
_grad.DEFERRED[0] = sys.modules[__name__]


def _getattr(self, name):
    """Tensor.__getattr__ (only called when normal lookup failed: an unset `_data` slot is a
    pending result), with force's common case inline: the owner thread reading a result its
    sequence's run writes. One Python frame less on every read of a pending result: the
    no-grad chain's step is ~12 us, its XLA call ~3.5 (docs/performance_eager.md)."""
    if name == "_data":
        lz = self.__dict__.get("_lazy")
        if lz is not None:
            seq = lz[0]
            # (the thread's own pending sequence: only the thread that owns an unfinished
            # sequence has it as its current one)
            if seq is _LOCAL.seq and not seq.done:
                exp = seq.exp
                if exp is not None and exp.live is not None and not seq.graph:
                    got = _replay.replayed(seq, exp, self)
                    if got is not None:
                        return got
                _run(seq)
                if seq.error is None and "_lazy" not in self.__dict__:
                    return _SLOT.__get__(self)
            return force(self)
    return _missing(self, name)


_missing = Tensor.__getattr__  # (its AttributeError for any other name)
Tensor.__getattr__ = _getattr
engine.BEFORE_BACKWARD.append(lambda: flush())  # a backward needs every saved value


def flush():
    """Run the calling thread's pending sequence now (every backward does)."""
    _grad.step_ended()
    seq = _LOCAL.seq
    if not seq.done and seq.results:
        run(seq)


def run(seq):
    """Run a sequence (by its owner thread; see force)."""
    if not seq.done:
        _run(seq)


# deferred pieces of split/chunk/unbind, and a backward that finds the thread's forward
# pending running both as one program (it registers itself with the engine); imported
# last: they read this module
from . import _deferred_backward, _deferred_split  # noqa: E402, F401
from ._deferred_lists import record_list  # noqa: E402, F401
from ._deferred_run import run_now as _run  # noqa: E402
