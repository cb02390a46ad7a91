"""Deferred views: a single-output view op (view, transpose, permute, unsqueeze, expand, ...)
of a tensor that needs no gradient is recorded into the thread's pending sequence
(_deferred.py) instead of run, its result a pending result of that sequence.

Why: eagerly, a view op is an XLA call of its own (~30-60 us on a CPU, more on the host
tier), and a view of a pending result read that result: it ran the sequence there. A
transformer block views and transposes q, k, v and its output (minGPT: 9 views per layer),
so its forward was cut into ~3 sequence programs per layer plus ~9 single calls: a 6-layer
GPT's forward at a fixed length took 11.7 ms eagerly where one XLA program of it takes 4.1
(PyTorch eager 5.9). Recorded, the views are steps of the sequence's program.

The result is a view of its input as eagerly (_dispatch_views._make_view: base, view chain,
version counter, lazy strides); an in-place write to it or to its base reads its value first
(which runs the sequence), then goes the usual way. Only when the input is the sequence's own
pending result (a view of a concrete array costs its call either way, and recorded it would
end the sequence's replay: _deferred_replay), not an inference tensor, nothing requiring
grad, a view of a strided source only where PyTorch has one (view() raises,
reshape copies: both eagerly), and for a kind of call (row, static arguments, input dtype and
shape) already run once eagerly (which raised its errors there). `clone` (what
`contiguous()` calls) is recorded the same way, its result a tensor of its own with the
layout its memory format gives.
"""

from __future__ import annotations

import jax

from . import _deferred, _strides
from ._autograd import grad_mode
from ._dispatch_views import _key_stat, _make_view
from ._pure import _make_pure, _types
from ._tensor import Tensor
from ._x64 import EVAL as _EVAL
from ._x64 import TRACE as _TRACE

_STATE = grad_mode.STATE
ON = [True]
_KINDS: dict = {}  # (row, statics, their types, dtype, shape, weak) -> _Kind, or False: never
_MAX = 1024
STATS = {"deferred": 0}  # (for tests and benchmarks)
# kinds whose result aval their eager call is still to give (dispatch calls `seen` only then:
# an eager view pays nothing once every kind has it)
WAITING = [0]
# views whose strided source may have no view of the result (view raises, reshape copies)
_STRIDED = frozenset(("view", "reshape", "flatten", "_reshape_alias", "view_as"))


class _Kind:
    __slots__ = ("call", "pure", "token", "aval", "link")


def _kind(prep, stat):
    """The deferral data of this kind of call, its result's aval still to come from its
    first, eager, call (seen): no trace of its own (a generate's views are new kinds at
    every length, and eval_shape cost ~1 ms each)."""
    from ._dispatch import _fwd_for  # (_dispatch imports this module)
    call = _fwd_for(prep, stat, None)
    if getattr(call, "_program", None) is None:
        return None
    k = _Kind()
    k.call, k.pure = call, _make_pure(prep, stat, None, None)
    k.token = ("view", next(_deferred._kinds._TOKENS))
    k.aval = None
    k.link = ((prep.op, _key_stat(stat)),)
    WAITING[0] += 1
    return k


def _key(prep, stat, aval):
    """A kind of call's key in _KINDS (looking it up raises TypeError for a list among the
    static arguments)."""
    return (prep, stat, _types(stat), aval.dtype, aval.shape, aval.weak_type)


def seen(prep, stat, src, t):
    """The eager call of a kind (dispatch's, for rows that are `eligible`): its result's
    aval, for its later calls."""
    try:
        kind = _KINDS.get(_key(prep, stat, src._data.aval))
    except TypeError:
        return
    if kind and kind.aval is None:
        out = t._data.aval
        kind.aval = jax.core.ShapedArray(out.shape, out.dtype, weak_type=out.weak_type)
        WAITING[0] -= 1


# rows that are no view but copy with a layout of their own (`contiguous()` is a clone)
_COPIES = frozenset(("clone",))


def eligible(prep) -> bool:
    """Whether a row's calls may be deferred here (_dispatch._Prepared.views)."""
    op = prep.op
    return ((op.view and op.layout is None) or (op.name in _COPIES and not op.view)) \
        and prep.kinds == (0,) and op.out_names is None and not op.returns_list \
        and prep.out_cls is None and op.promote == "none" and not op.residuals \
        and not prep.pieces and prep.check is None


def record(prep, dyn, stat):
    """The pending view, or None when it is not deferred (then it runs as usual)."""
    if _TRACE.value is not _EVAL or not ON[0]:
        return None
    src = dyn[0]
    if not isinstance(src, Tensor) or src._inference or (
            src._requires_grad and _STATE.grad_enabled):
        return None
    seq = _deferred._LOCAL.seq
    lz = src._lazy
    # (a view of a concrete array costs its own call, eagerly or recorded; recorded, the
    # sequence would also leave its trace, the replay of a repeated step)
    if lz is None or lz[0] is not seq or seq.done:
        return None
    aval = lz[2]
    try:
        key = _key(prep, stat, aval)
        kind = _KINDS.get(key)
    except TypeError:  # a list among the static arguments
        return None
    if kind is None:  # the first call of this kind runs eagerly (and raises its errors)
        if len(_KINDS) >= _MAX:
            _KINDS.clear()
            WAITING[0] = 0
        _KINDS[key] = _kind(prep, stat) or False
        return None
    if kind is False or kind.aval is None:
        return None
    op = prep.op
    if op.name in _STRIDED and _strides.reshape_copies(src, kind.aval.shape):
        return None  # (where PyTorch raises, or copies: eagerly)
    if seq.kinds is not None or seq.exp is not None:
        _deferred.leave_trace(seq)  # (a replay follows only what record's lookup gives)
    j = len(seq.ops)
    skey = seq.key
    k0 = len(skey)
    skey.append(kind.token)
    skey.append(~lz[1])
    seq.ops.append((kind.call, kind.pure, k0 + 1, k0 + 2))
    t = _deferred._new_pending((seq, j, kind.aval))
    seq.results.append(t)
    if op.view:
        _make_view(t, src, kind.link)
    else:
        t._layout = op.layout(src, *stat)
    STATS["deferred"] += 1
    if j + 1 >= (_deferred.MAX_GRAD_OPS if seq.graph else _deferred.MAX_OPS):
        _deferred.run(seq)
    return t
