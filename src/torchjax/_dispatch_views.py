"""Views made by dispatch: linking a view op's result to its base (version counter, view
chain, strides), and the per-output view links of multi-output view ops (split, chunk).
Split out of _dispatch.py; re-exported from there."""

from __future__ import annotations

from . import _strides
from ._ops._registry import OPS
from ._pure import _hashable
from ._tensor import Tensor


def _key_stat(stat):
    """Static arguments as a hashable key (view chains key the read/write caches)."""
    try:
        hash(stat)
        return stat
    except TypeError:
        return _hashable(stat)


_MAY_COPY = frozenset(("reshape", "flatten"))


def _make_view(t: Tensor, src: Tensor, link):
    import weakref
    if src._layout is not None and getattr(link[0][0], "name", None) in _MAY_COPY \
            and _strides.reshape_copies(src, t._data.shape):
        return  # PyTorch copies here (no view of that layout exists): t is a tensor of its own
    _strides.after_view(t, src, link[0])
    base = src._base if src._base is not None else src
    t._base = base
    t._view_chain = (src._view_chain or ()) + link if src._base is not None else link
    t._detached = src._detached  # a view of a detach()/.data alias is outside autograd too
    # a view of a normal tensor taken under inference_mode is a normal tensor, as in PyTorch
    t._inference = src._inference
    t._vc = base._counter()
    if base._views is None:
        base._views = []
    base._views.append(weakref.ref(t))


make_view, key_stat = _make_view, _key_stat  # for views made outside dispatch (indexing)


class _ItemView:
    """A view link that picks output i of a multi-output view op (split, chunk, unbind)."""

    def __init__(self, op):
        self.op = op

    def pure_view(self, stat_i, arr):
        stat, i = stat_i
        return self.op.fn(arr, **dict(zip(self.op.statics, stat)))[i]


class _ItemOps(dict):
    def __missing__(self, name):
        v = self[name] = _ItemView(OPS[name])
        return v


_ITEM_OPS = _ItemOps()
