"""Watching the tensors eager code reads, for torchjax.utils.checkpoint.

Every op passes its arguments through _dispatch.CAPTURE when it is set. Checkpoint uses that
twice: in the forward, to learn which tensors requiring grad a region reads (its arguments,
module parameters, closure tensors: under no_grad nothing created inside requires grad, so
these are exactly the region's differentiable inputs); in the backward, to put back every
tensor the recomputation writes (BatchNorm's running statistics), which would otherwise keep
the recomputation's tracers or count a batch twice.
"""

from __future__ import annotations

import threading
from threading import get_ident

from jax.core import Tracer

from .. import _dispatch
from .._tensor import Tensor


class watching:
    """Call `see(arguments)` for every op this thread runs inside the block (after any outer
    watcher): the hook is global, grad mode and the watched code are per thread."""

    __slots__ = ("_see", "_prev")

    def __init__(self, see):
        self._see = see
        self._prev = None

    def __enter__(self):
        prev = self._prev = _dispatch.CAPTURE
        see = self._see
        owner = threading.get_ident()

        def hook(dyn):
            if prev is not None:
                prev(dyn)
            if get_ident() == owner:
                see(dyn)
        _dispatch.CAPTURE = hook
        return self

    def __exit__(self, *exc):
        _dispatch.CAPTURE = self._prev


def _tensors(dyn):
    for v in dyn:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            for x in v:
                if isinstance(x, Tensor):
                    yield x


class Reads:
    """The tensors requiring grad that ops read, in first-read order, with their values and
    version stamps at that first read (what the backward differentiates at)."""

    __slots__ = ("tensors", "arrays", "versions", "_index")

    def __init__(self):
        self.tensors: list = []
        self.arrays: list = []
        self.versions: list = []
        self._index: set = set()  # ids of self.tensors (held, so the ids stay unique)

    def __call__(self, dyn):
        for t in _tensors(dyn):
            if t._requires_grad:
                self.add(t)

    def add(self, t: Tensor):
        if id(t) in self._index:
            return
        self._index.add(id(t))
        self.tensors.append(t)
        self.arrays.append(t._data)
        self.versions.append((t._counter(), t._version, t._data.aval))

    def __contains__(self, t) -> bool:
        return id(t) in self._index


class Restorer:
    """Remembers each tensor an op touches (with its base and the base's views) the first
    time, and restore() puts back their values and version counters.

    Tensors already holding a tracer are skipped: they were made inside the recomputation, or
    are inputs an enclosing recomputation swapped in and puts back itself."""

    __slots__ = ("_seen", "_kept", "strays")

    def __init__(self):
        self._seen: set = set()
        self._kept: list = []  # (tensor, array, counter list or None, counter value)
        self.strays: list = []  # tensors requiring grad read that were not expected

    def __call__(self, dyn):
        for t in _tensors(dyn):
            if id(t) not in self._seen and not isinstance(t._data, Tracer):
                self.keep(t)
                if t._requires_grad:
                    self.strays.append(t)

    def keep(self, t: Tensor):
        base = t._base if t._base is not None else t
        family = [t, base]
        if base._views:
            family.extend(r() for r in base._views)
        for m in family:
            if m is None or id(m) in self._seen:
                continue
            self._seen.add(id(m))
            vc = m._vc
            self._kept.append((m, m._data, vc, vc[0] if vc is not None else 0))

    def restore(self):
        for m, data, vc, version in reversed(self._kept):
            m._data = data
            if vc is not None:
                vc[0] = version
                m._vc = vc
            elif m._vc is not None:
                m._vc[0] = 0
