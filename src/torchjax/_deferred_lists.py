"""record() for the fast path's list rows (cat, stack): their one dynamic argument is a list
of tensors. Split out of _deferred.py, which says what a deferred sequence is."""

from __future__ import annotations

import jax

from . import _deferred as _d
from . import _deferred_grad as _grad
from ._autograd import grad_mode
from ._pure import _types
from ._tensor import Tensor
from ._x64 import EVAL as _EVAL
from ._x64 import TRACE as _TRACE

_STATE = grad_mode.STATE


def record_list(prep, fast, dyn, stat):
    """record() for rows whose one dynamic argument is a list of tensors (cat, stack)."""
    if _TRACE.value is not _EVAL:
        return None
    tensors = dyn[0]
    if tensors.__class__ is not list and tensors.__class__ is not tuple:
        return None
    rg = False
    if _STATE.grad_enabled:
        for v in tensors:
            if isinstance(v, Tensor) and v._requires_grad:
                if not _d.GRAD[0] or not _grad.usable(prep):
                    return None
                rg = True
                break
    seq = _d._LOCAL.seq
    if seq.done:
        seq = _d._LOCAL.seq = _d._Seq()
    elif seq.exp is not None:
        _d.materialize(seq)
    ext = seq.ext
    n_ext = len(ext)
    srcs = []
    keys = [stat, _types(stat) if stat else ()]
    specs = []
    for v in tensors:
        got = _d._input(v, seq, ext) if isinstance(v, Tensor) else None
        if got is None:
            break
        src, av = got
        srcs.append(src)
        keys.append(av.dtype)
        keys.append(av.shape)
        specs.append(av)
    else:
        try:
            hit = fast.get(tuple(keys))
        except TypeError:
            hit = None
        if hit is not None and len(hit) > 3:
            meta = hit[3]
            if not meta:
                _d._describe_specs(meta, prep, stat, hit, [tuple(
                    jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                    for a in specs)])
            aval = meta[1]
            node = _grad.list_node(prep, hit, tensors) if rg and aval is not None else None
            if aval is not None and (node is not None or not rg):
                i = len(seq.ops)
                skey = seq.key
                k0 = len(skey)
                skey.append(meta[0])
                skey.append((None, tuple(srcs)))
                seq.ops.append((hit[0], meta[2], k0 + 1, k0 + 2))
                if seq.kinds is not None or seq.exp is not None:
                    _d.leave_trace(seq)  # (no replay through a list row: _deferred_replay._bake)
                t = _d._pending_result(seq, i, aval)
                if node is not None:
                    _grad.give(t, node, aval)
                    seq.graph = True
                if i + 1 >= (_d.MAX_GRAD_OPS if seq.graph else _d.MAX_OPS):
                    _d.run(seq)
                return t
    _d._forget(seq, n_ext)
    return None
