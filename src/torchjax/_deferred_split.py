"""Deferred pieces: split, chunk and unbind of a tensor are recorded into the thread's pending
sequence (_deferred.py) instead of run, their pieces pending results of it.

Why: eagerly, split(1) of a 32-row tensor is one XLA call with 32 outputs, and each output of
an XLA CPU call costs ~2 us here (the call took 66-83 us quiet, ~35 us of it this thread's
time, several hundred under load), then each piece is an argument of whatever program reads
it. The repeated tree net splits its embedded leaves every step; recorded, the pieces are
values inside the step's one program (_deferred_backward.py) and never leave it.

How: the call is one op of the sequence whose value is the tuple of pieces (the row's own
compiled call and pure function), and piece k is an op of its own that picks item k (no XLA
work). Each piece is a view of the input, as eagerly (_dispatch_views._make_view), with the
node PyTorch gives it (one SplitBackward0-like node, output k; it saves nothing). Only when
the input is a concrete array JAX places freely, with no strided layout, not an inference
tensor, and for a kind of call (row, static arguments, input dtype and shape) already run
once eagerly (which raised its errors there). A pending result of the thread's own sequence
is an input too when nothing requires grad (a transformer block splits its qkv projection,
which ran the sequence there). Reading a piece runs the sequence.
"""

from __future__ import annotations

import weakref

import jax

from . import _deferred
from . import _deferred_grad as _grad
from ._autograd import grad_mode
from ._autograd.node import accumulator_of
from ._dispatch_views import _ITEM_OPS, _key_stat, _make_view
from ._pure import _make_pure, _spec_for, _types
from ._tensor import Tensor
from ._x64 import EVAL as _EVAL
from ._x64 import TRACE as _TRACE
from ._x64 import enter as _enter
from ._x64 import leave as _leave

_STATE = grad_mode.STATE
_CONCRETE = _deferred._CONCRETE
_INEXACT = _grad._INEXACT
_weakref = weakref.ref
ON = [True]  # (off: split and the rest run eagerly; bench/bench_eager22_ab.py compares)
_KINDS: dict = {}  # (row, statics, their types, dtype, shape) -> _Kind, or False: never
_MAX = 1024
# for tests and benchmarks: calls deferred, and _Later's computed at a piece's first read
STATS = {"deferred": 0, "later": 0}


class _Item:
    """Op `k` of a piece: item k of the split's tuple. Named for the program cache as its
    own ident (_deferred_programs._ident reads `call._program.ident`)."""

    __slots__ = ("k", "ident")

    def __init__(self, k):
        self.k = k
        self.ident = f"item {k}"

    @property
    def _program(self):
        return self

    def __call__(self, pieces):
        return pieces[self.k]


_ITEMS: list = []


def _item(k):
    while len(_ITEMS) <= k:
        _ITEMS.append(_Item(len(_ITEMS)))
    return _ITEMS[k]


class _Kind:
    __slots__ = ("call", "pure", "token", "avals", "spec", "cls", "link")


class _NotAResult:
    """The results slot of the split op itself: no tensor, never computed as a result."""

    _lazy = None


_NO_RESULT = _NotAResult()


def _kind(prep, src, av, stat, key):
    """The deferral data of this kind of call (filled at its first, eager, call), or None."""
    from ._dispatch import _fwd_for, _node_cls  # (_dispatch imports this module)
    cd = None
    call = _fwd_for(prep, stat, cd)
    pure = _make_pure(prep, stat, cd, None)
    token = _enter()
    try:
        out = jax.eval_shape(pure, jax.ShapeDtypeStruct(av.shape, av.dtype,
                                                        weak_type=av.weak_type))
    except Exception:  # noqa: BLE001  (the eager call raises it)
        out = None
    finally:
        _leave(token)
    if not isinstance(out, tuple) or not out:
        return None
    k = _Kind()
    k.call, k.pure, k.token = call, pure, ("pieces", next(_deferred._kinds._TOKENS))
    k.avals = tuple(jax.core.ShapedArray(o.shape, o.dtype, weak_type=o.weak_type) for o in out)
    # the node _record makes for this row: the input unsaved (its shape and dtype kept)
    k.spec = _spec_for(prep, stat, cd, None, ((0, -1),), ((0, -1, av.shape, av.dtype),), 1)
    k.cls = _node_cls(prep, (src,), stat)
    k.link = _ITEM_OPS[prep.op.name]
    return k


_ROWS = frozenset(("split", "split_with_sizes", "chunk", "unbind"))


def eligible(prep) -> bool:
    """Whether a row's calls may be deferred here (_dispatch._Prepared.pieces)."""
    op = prep.op
    return (op.name in _ROWS and op.view and prep.kinds == (0,) and op.layout is None
            and op.out_names is None and not op.returns_list and not prep.has_saved
            and op.promote == "none" and prep.check is None and not op.residuals)


def record(prep, dyn, stat):
    """The pending pieces of the call, or None when it is not deferred (then it runs as
    usual)."""
    if _TRACE.value is not _EVAL or not ON[0]:
        return None
    src = dyn[0]
    if not isinstance(src, Tensor) or src._layout is not None or src._inference:
        return None
    rg = _STATE.grad_enabled and src._requires_grad
    lz = src._lazy
    if lz is not None:
        # (a pending result of the thread's sequence: minGPT's q, k, v = qkv.split(...),
        # with no gradient to record, as _deferred_views; otherwise it runs)
        if rg or lz[0] is not _deferred._LOCAL.seq or lz[0].done:
            return None
        a, av = None, lz[2]
    else:
        a = src._data
        if a.__class__ is not _CONCRETE or a._committed:
            return None
        av = a.aval
    if rg and (not _deferred.GRAD[0] or not _grad.usable(prep)):
        return None
    try:
        key = (prep, stat, _types(stat), av.dtype, av.shape)
        kind = _KINDS.get(key)
    except TypeError:  # a list among the static arguments
        return None
    if kind is None:  # the first call of this kind runs eagerly (and raises its errors)
        if len(_KINDS) >= _MAX:
            _KINDS.clear()
        _KINDS[key] = _kind(prep, src, av, stat, key) or False
        return None
    if kind is False:
        return None
    seq = _deferred._LOCAL.seq
    if seq.done:
        seq = _deferred._LOCAL.seq = _deferred._Seq()
    elif seq.exp is not None:
        _deferred.materialize(seq)
    n = len(kind.avals)
    j = len(seq.ops)
    if j + n + 1 >= (_deferred.MAX_GRAD_OPS if seq.graph or rg else _deferred.MAX_OPS):
        return None  # (the sequence would be cut inside the pieces)
    where, ext, skey = seq.where, seq.ext, seq.key
    if a is None:
        i = ~lz[1]
    else:
        i = where.get(id(a))
        if i is None:
            i = where[id(a)] = len(ext)
            ext.append(a)
    k0 = len(skey)
    skey.append(kind.token)
    skey.append(i)
    seq.ops.append((kind.call, kind.pure, k0 + 1, k0 + 2))
    seq.results.append(_NO_RESULT)
    seq.pieces = True
    if seq.kinds is not None or seq.exp is not None:
        _deferred.leave_trace(seq)  # (no replay through pieces: _deferred_replay._bake)
    node = None
    if rg:
        fn = src._grad_fn
        edge = (fn, src._output_nr) if fn is not None else (accumulator_of(src), 0)
        node = kind.cls(kind.spec, (None,), (edge,), (), n, False)
        seq.graph = True
    stat_k = _key_stat(stat)
    link = kind.link
    pieces = []
    for k in range(n):
        item = _item(k)
        k0 = len(skey)
        skey.append(item.ident)
        skey.append(~j)
        seq.ops.append((item, item, k0 + 1, k0 + 2))
        aval = kind.avals[k]
        t = _deferred._new_pending((seq, j + 1 + k, aval))
        seq.results.append(t)
        if node is not None and aval.dtype in _INEXACT:
            t._requires_grad = True
            t._grad_fn = node
            t._output_nr = k
        _make_view(t, src, ((link, (stat_k, k)),))
        pieces.append(t)
    STATS["deferred"] += 1
    return tuple(pieces)


class _Later:
    """Pieces the sequence did not compute: alive when it ran but unread (the tree net holds
    its list of leaves through the backward), computed from the split's input array at their
    first read, all at once, as eagerly. As outputs of the step's program they cost ~2 us
    each (an output of an XLA CPU call), most of them never read. Holds weak references to
    the pieces: no cycle for the GC to collect when they die unread."""

    __slots__ = ("call", "src", "refs")

    def __init__(self, call, src):
        self.call, self.src, self.refs = call, src, {}

    def get(self, t):
        """t's array (_deferred.force): computes every piece still waiting for it."""
        STATS["later"] += 1
        token = _enter()
        try:
            if _TRACE.value is not _EVAL:  # (read inside a JAX trace: concrete, as _run)
                with jax.ensure_compile_time_eval():
                    pieces = self.call(self.src)
            else:
                pieces = self.call(self.src)
        finally:
            _leave(token)
        for k, ref in self.refs.items():
            p = ref()
            if p is not None:
                lz = p.__dict__.get("_lazy")
                if lz is not None and lz[0] is self:
                    p._data = pieces[k]
                    del p.__dict__["_lazy"]  # (see _deferred._run)
        return _deferred._SLOT.__get__(t)


def later(ops, flat, ext, results, live):
    """`live` (indices of results to compute) less the pieces of splits whose input is an
    input of the sequence: those become _Later's, computed at their first read."""
    keep = []
    groups = {}
    for i in live:
        op = ops[i]
        item = op[0]
        if item.__class__ is _Item:
            j = ~flat[op[2]]
            split = ops[j]
            s = flat[split[2]]
            if s.__class__ is int and s >= 0:
                g = groups.get(j)
                if g is None:
                    g = groups[j] = _Later(split[0], ext[s])
                t = results[i]
                t._lazy = (g, item.k, t._lazy[2])
                g.refs[item.k] = _weakref(t)
                continue
        keep.append(i)
    return keep
