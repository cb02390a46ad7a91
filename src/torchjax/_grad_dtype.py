"""Tensor.grad_dtype: the dtype a leaf's .grad is kept in (PyTorch 2.13).

By default it is the tensor's dtype, and gradients already arrive in it. A leaf may ask for
another dtype (gradients are cast to it as they are accumulated) or for None (any dtype is
accepted as it comes). The setting lives in the cast itself, the leaf's first post-accumulate
step, so every path that stores a gradient through Tensor._store_grad casts, and, as in
PyTorch, a copy or a saved and loaded tensor starts from the default again (nothing is in the
tensor's __dict__). A gradient that torchjax.compile's program writes straight into .grad keeps
the tensor's dtype.
"""

from __future__ import annotations

from . import _dtypes
from ._hooks import add_hook
from ._tensor import Tensor, _grad_dtype_message


class _Cast:
    """The post-accumulate step that casts .grad to `dtype` (None: leaves it as it is)."""

    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def __call__(self, t: Tensor) -> None:
        g = t._grad
        if self.dtype is not None and g is not None and g.dtype != self.dtype:
            t._grad = g.to(self.dtype)


def _leaf_only(t: Tensor, verb: str) -> None:
    if t._grad_fn is not None:
        raise RuntimeError(f"grad_dtype can only be {verb} on leaf tensors.")


def _casts(t: Tensor) -> list:
    return [k for k, h in (t._post_acc_hooks or {}).items() if isinstance(h, _Cast)]


def _get(self: Tensor):
    _leaf_only(self, "accessed")
    keys = _casts(self)
    return self._post_acc_hooks[keys[0]].dtype if keys else self.dtype


def _set(self: Tensor, value) -> None:
    _leaf_only(self, "set")
    if value is not None and not isinstance(value, _dtypes.dtype):
        raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got "
                           f"{type(value).__name__}")
    g = self._grad
    if value is not None and g is not None and g.dtype != value:
        raise RuntimeError(
            f"Cannot set grad_dtype to '{_dtypes.SCALAR_NAMES.get(value.name)}' because there is "
            f"already a gradient with dtype '{_dtypes.CPP_NAMES.get(g.dtype.name)}'. Please "
            f"clear the gradient (.grad = None) before changing grad_dtype, or ensure the new "
            f"grad_dtype matches the existing gradient's dtype.")
    for k in _casts(self):
        del self._post_acc_hooks[k]
    if value is None or value != self.dtype:
        self._post_acc_hooks, handle = add_hook(self._post_acc_hooks, _Cast(value))
        self._post_acc_hooks.move_to_end(handle.id, last=False)  # before the user's hooks


_GRAD = Tensor.grad


def _set_grad(self: Tensor, value) -> None:
    """Tensor.grad's setter, with the dtype the leaf's grad_dtype allows."""
    keys = _casts(self) if isinstance(value, Tensor) else ()
    if not keys:
        return _GRAD.fset(self, value)
    allowed = self._post_acc_hooks[keys[0]].dtype
    if allowed is not None and value.dtype != allowed:
        raise RuntimeError(_grad_dtype_message(value.dtype, allowed))
    if value.shape != self.shape:
        raise RuntimeError("assigned grad has data of a different size")
    self._grad = value


Tensor.grad = property(_GRAD.fget, _set_grad, _GRAD.fdel, _GRAD.__doc__)
Tensor.grad_dtype = property(_get, _set, doc="The dtype of this leaf's .grad (default: its "
                                             "dtype; None accepts any).")
