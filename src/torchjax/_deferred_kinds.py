"""The deferral data of a kind of call (a fast-path entry of _dispatch): its sequence token,
its result's aval (None: never deferred) and its pure row, filled once per entry.

Split from _deferred.py, which reads them on every deferred op (`hit[3]`).
"""

from __future__ import annotations

import functools
import itertools

import jax

from ._pure import _make_pure
from ._tensor import Tensor
from ._x64 import enter as _enter
from ._x64 import leave as _leave

try:
    from jax._src.array import ArrayImpl as _CONCRETE
except ImportError:  # pragma: no cover - moved in a newer jax: nothing is deferred
    _CONCRETE = None

_TOKENS = itertools.count()


def describe(meta, prep, stat, hit, dyn):
    """Fill a fast-path entry's deferral data: [token, result aval or None, pure row]."""
    specs = []
    for v in dyn:
        if isinstance(v, Tensor):
            lz = v._lazy
            av = lz[2] if lz is not None else v._data.aval
            specs.append(jax.ShapeDtypeStruct(av.shape, av.dtype, weak_type=av.weak_type))
        else:
            specs.append(v)
    describe_specs(meta, prep, stat, hit, specs)


def seen_result(prep, stat, hit, out):
    """Fill a new fast-path entry's deferral data from its first (eager) call's result
    (dispatch calls this once per entry, while deferral is on): the result's shape and dtype
    then cost no trace. describe's eval_shape would trace the row again in a process that
    loaded the entry's program from the program cache (no trace kept): ~0.1-2 ms a kind,
    ~150 ms over a transformer's first deferred call, and traces in a warm process."""
    if out.__class__ is _CONCRETE and not hit[3]:
        av = out.aval
        hit[3][:] = [next(_TOKENS), jax.core.ShapedArray(av.shape, av.dtype,
                                                         weak_type=av.weak_type),
                     _make_pure(prep, stat, hit[1], None)]


def describe_specs(meta, prep, stat, hit, specs):
    pure = _make_pure(prep, stat, hit[1], None)
    token = _enter()
    try:
        # the entry's compiled call has traced this kind of call already: its eval_shape
        # reuses that trace (~0.02 ms against ~0.1-2 ms for tracing the row again)
        shape_of = getattr(hit[0], "eval_shape", None)
        out = (shape_of or functools.partial(jax.eval_shape, pure))(*specs)
    except Exception:  # the call fails: it is never deferred, and raises on the usual path
        out = None
    finally:
        _leave(token)
    if out.__class__ is not jax.ShapeDtypeStruct:
        out = None
    else:
        out = jax.core.ShapedArray(out.shape, out.dtype, weak_type=out.weak_type)
    meta[:] = [next(_TOKENS), out, pure]
