"""Tensor.grad_dtype: the dtype a leaf's .grad is kept in (PyTorch 2.13).

By default it is the tensor's dtype, and gradients already arrive in it. A leaf may ask for
another dtype (gradients are cast to it as they are accumulated) or for None (any dtype is
accepted as it comes). The cast runs as the leaf's first post-accumulate step, so every path
that stores a gradient through Tensor._store_grad casts; a gradient that torchjax.compile's
program writes straight into .grad keeps the tensor's dtype.
"""

from __future__ import annotations

from . import _dtypes
from ._hooks import add_hook
from ._tensor import Tensor

_KEY = "_grad_dtype"  # in the tensor's __dict__: (dtype or None, the cast's hook handle)


def _leaf_only(t: Tensor, verb: str) -> None:
    if t._grad_fn is not None:
        raise RuntimeError(f"grad_dtype can only be {verb} on leaf tensors.")


def _get(self: Tensor):
    _leaf_only(self, "accessed")
    got = self.__dict__.get(_KEY)
    return self.dtype if got is None else got[0]


def _cast(t: Tensor) -> None:
    want = t.__dict__.get(_KEY, (None,))[0]
    g = t._grad
    if want is not None and g is not None and g.dtype != want:
        t._grad = g.to(want)


def _set(self: Tensor, value) -> None:
    _leaf_only(self, "set")
    if value is not None and not isinstance(value, _dtypes.dtype):
        raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got "
                           f"{type(value).__name__}")
    old = self.__dict__.pop(_KEY, None)
    if old is not None:
        old[1].remove()
    if value is None or value != self.dtype:
        self._post_acc_hooks, handle = add_hook(self._post_acc_hooks, _cast)
        self._post_acc_hooks.move_to_end(handle.id, last=False)  # before the user's hooks
        self.__dict__[_KEY] = (value, handle)


Tensor.grad_dtype = property(_get, _set, doc="The dtype of this leaf's .grad (default: its "
                                             "dtype; None accepts any).")
