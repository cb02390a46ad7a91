"""Views made by dispatch: linking a view op's result to its base (version counter, view
chain, strides), and the per-output view links of multi-output view ops (split, chunk).
Split out of _dispatch.py; re-exported from there."""

from __future__ import annotations

import re
import weakref

from . import _strides
from ._autograd.grad_mode import STATE as _GRAD
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


# PyTorch's creation meta (torch/csrc/autograd/variable.h) of the views it forbids to modify
# in place when autograd records the write: an output of a multi-output view op (its view
# chain says so: a link picking output i of split/chunk/unbind/split_with_sizes), and a view
# of a tensor requiring grad made with grad mode off (a view of such a view inherits it),
# kept aside by id: such views are few, and a split's 32 outputs per step (a tree net's
# leaves) pay nothing.
_MULTI_OUTPUT = frozenset(("split", "split_with_sizes", "chunk", "unbind"))  # (not tensor_split)
_CREATION: dict = {}  # id(view) -> weak reference to it, for views made under no_grad


def _note_no_grad(t: Tensor) -> None:
    _CREATION[id(t)] = weakref.ref(t, lambda _, k=id(t): _CREATION.pop(k, None))


def _made_under_no_grad(t: Tensor) -> bool:
    ref = _CREATION.get(id(t))
    return ref is not None and ref() is t


def creation_kind(t: Tensor):
    """"no_grad", "multi" or None (PyTorch's DEFAULT) for a view."""
    if _CREATION and _made_under_no_grad(t):
        return "no_grad"
    for obj, _ in t._view_chain or ():
        if obj.__class__ is _ItemView and obj.op.name in _MULTI_OUTPUT:
            return "multi"
    return None


def check_inplace_on_view(t: Tensor) -> None:
    """PyTorch's error for an in-place write, recorded by autograd, to a view whose creation
    forbids it (handle_view_on_rebase)."""
    kind = creation_kind(t)
    if kind is None:
        return
    if t._grad_fn is not None:
        name = re.sub(r"Backward\d*$", "", type(t._grad_fn).__name__)
        msg = f"Output {t._output_nr} of {name} is a view and is being modified inplace."
    else:
        msg = ("A view was created in no_grad mode and is being modified inplace with grad "
               "mode enabled.")
    if kind == "multi":
        msg += (" This view is the output of a function that returns multiple views. Such "
                "functions do not allow the output views to be modified inplace. You should "
                "replace the inplace operation by an out-of-place one.")
    else:
        msg += (" Given that this use case is ambiguous and error-prone, it is forbidden. You "
                "can clarify your code by moving both the view and the inplace either both "
                "inside the no_grad block (if you don't want the inplace to be tracked) or both "
                "outside (if you want the inplace to be tracked).")
    raise RuntimeError(msg)


def _make_view(t: Tensor, src: Tensor, link):
    if src._layout is not None and getattr(link[0][0], "name", None) in _MAY_COPY \
            and _strides.reshape_copies(src, _strides.shape_of(t)):
        return  # PyTorch copies here (no view of that layout exists): t is a tensor of its own
    if not src._inference and (src._requires_grad if not _GRAD.grad_enabled
                               else _CREATION and _made_under_no_grad(src)):
        _note_no_grad(t)
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
