"""A pending result read by a thread other than the one whose sequence holds it
(_deferred.py: each thread records and runs its own sequence without a lock)."""

from __future__ import annotations

import threading
import time

import jax

from . import _deferred_programs as _dp
from ._deferred_replay import view as _view
from ._x64 import enter as _enter
from ._x64 import leave as _leave

_MAKING = threading.Lock()  # (a sequence's own lock is made under it)


def force_other(seq, t):
    """Compute t, a pending result of `seq` that another thread owns, alone from what was
    recorded up to it (the owner only appends, so that prefix is complete), under the
    sequence's lock, which the owner's run also takes (_deferred.force)."""
    lock = seq.lock
    if lock is None:
        with _MAKING:
            lock = seq.lock
            if lock is None:
                lock = seq.lock = threading.Lock()
    with lock:  # one reader from another thread at a time
        if t._lazy is None:  # computed by another reader
            return
        i = t._lazy[1]
        ops, ext, flat = seq.ops, seq.ext, seq.key
        if seq.done or ops is None or ext is None or flat is None:
            # the owner is running it (its results are written before `finished`)
            while not seq.finished:
                time.sleep(1e-5)
            return
        # (the owner only appends; while its sequence follows a trace, the ops and key of
        # the ops recorded so far are the trace's: _deferred_replay.view)
        ops, flat = _view(seq, i + 1)
        ext = list(ext)
        token = _enter()
        try:
            with jax.ensure_compile_time_eval():
                vals = []
                for call, _, a, b in ops:
                    vals.append(call(*[_dp.source(s, ext, vals) for s in flat[a:b]]))
        finally:
            _leave(token)
        t._data = vals[i]
        t.__dict__.pop("_lazy", None)  # (see _run)
