"""Tensor.set_, Tensor.as_strided_ and Tensor.is_set_to: a tensor that takes new storage or a
new geometry on its storage in place.

In PyTorch `a.set_(b)` points a at b's storage (writes through either are seen by the other)
with b's size, strides and offset; `a.as_strided_(size, stride)` keeps a's storage and reads it
by new strides. torchjax keeps a storage as its root tensor's values (_views.py): here the
tensor becomes an alias (a view outside autograd, as detach() makes) of the root that holds the
storage. When the tensor was itself a root, its old storage moves to a hidden root first, so
the views it had keep seeing it, as in PyTorch.

PyTorch records no derivative for set_ (its backward raises), and as_strided_ on a tensor that
requires grad rewrites its history in place: both raise NotImplementedError here when autograd
would be involved; on tensors that do not require grad (or under no_grad) they are PyTorch's.
"""

from __future__ import annotations

import weakref

from ._autograd.grad_mode import STATE
from ._dtypes import CPP_NAMES
from ._tensor import Tensor, _alias
from ._x64 import scoped

__all__ = ["as_strided_"]


def _root(t: Tensor) -> Tensor:
    return t if t._base is None else t._base


def _check_rebind(self: Tensor, fname: str, *sources: Tensor) -> None:
    from ._numpy_shared import _link_of
    if STATE.grad_enabled and self._requires_grad:
        if self._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        raise NotImplementedError(f"Tensor.{fname} of a tensor that requires grad is not "
                                  f"supported by torchjax: work on a detached tensor")
    if STATE.grad_enabled and any(s._requires_grad for s in sources):
        raise NotImplementedError(
            f"Tensor.{fname} with a source that requires grad is not supported by torchjax "
            f"(PyTorch records no derivative for it: its backward raises 'derivative for set_ "
            f"is not implemented'); pass source.detach() or call it under torch.no_grad()")
    if _link_of(self)[1] is not None:
        raise NotImplementedError(f"Tensor.{fname} of a tensor sharing memory with a NumPy "
                                  f"array is not supported by torchjax: use a clone")


def _leave_storage(self: Tensor, keep: bool) -> Tensor | None:
    """Detach self from the storage it reads. A root's storage moves to a hidden root that its
    views keep (always when `keep`: as_strided_ reads it on); returns the root now holding
    self's old storage, or None."""
    from ._resize import _TAIL
    self.__dict__.pop(_TAIL, None)
    if self._base is not None:
        root = self._base
        root._views = [r for r in root._views or () if r() is not self]
        return root
    if not (keep or self._views):
        return None
    hidden = Tensor._wrap(self._data)
    hidden._layout, hidden._vc, hidden._views = self._layout, self._counter(), self._views
    hidden._inference = self._inference
    for ref in hidden._views or ():
        v = ref()
        if v is not None:
            v._base = hidden
    self._views = None
    self._vc = [self._counter()[0]]  # PyTorch keeps the version counter with the tensor
    return hidden


def _become(self: Tensor, alias: Tensor) -> Tensor:
    """self takes the values, root, view chain and layout of `alias` (a fresh alias view)."""
    root = alias._base
    if self._lazy is not None:  # a pending result (_deferred) whose value is being replaced
        del self._lazy
    self._data = alias._data
    self._base, self._view_chain, self._layout = root, alias._view_chain, alias._layout
    self._detached = True  # like detach()'s alias: writes to self are not autograd writes
    root._views = [r for r in root._views if r() is not alias] + [weakref.ref(self)]
    self._counter()[0] += 1
    return self


def _set_dtype(self: Tensor, source: Tensor) -> None:
    if source.dtype != self.dtype:
        raise RuntimeError(f"Could not set tensor of type {CPP_NAMES.get(source.dtype.name)} "
                           f"to a tensor of type {CPP_NAMES.get(self.dtype.name)}")


@scoped
def set_(self: Tensor, source=None, storage_offset=None, size=None, stride=None) -> Tensor:
    """Point self at source's storage with source's size, strides and offset (or, with
    storage_offset, size and stride, at that window of it); set_() empties self."""
    from . import storage as _storage
    if isinstance(source, (_storage.UntypedStorage, _storage.TypedStorage)):
        raise NotImplementedError("Tensor.set_ of a storage is not supported by torchjax (a "
                                  "storage holds no values here): pass the tensor that owns it")
    if source is None:  # fresh empty storage, on self's device
        source = Tensor._wrap(self._data.reshape(-1)[:0])
    if not isinstance(source, Tensor):
        raise TypeError(f"set_(): argument 'source' (position 1) must be Tensor, not "
                        f"{type(source).__name__}")
    _set_dtype(self, source)
    _check_rebind(self, "set_", source)
    _leave_storage(self, keep=False)
    _become(self, _alias(source, share_version=False))
    if size is not None:
        # PyTorch's set_(source, offset, size, stride): a window on source's storage
        self._counter()[0] -= 1  # one version for the whole call
        as_strided_(self, size, stride if stride is not None else (), storage_offset or 0)
    return self


@scoped
def as_strided_(self: Tensor, size, stride, storage_offset=None) -> Tensor:
    """Read self's storage by the given size, strides and storage offset, in place."""
    from ._ops.strided import _storage_layout, as_strided
    _check_rebind(self, "as_strided_")
    size, stride, offset, *_ = _storage_layout(self, size, stride, storage_offset,
                                               "as_strided_")  # raises before any change
    root = _leave_storage(self, keep=True)
    return _become(self, as_strided(root.detach(), size, stride, offset))


def is_set_to(self: Tensor, tensor) -> bool:
    """Whether self and tensor share storage with the same size, strides and offset."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    return (_root(self) is _root(tensor) and self.shape == tensor.shape
            and self.stride() == tensor.stride()
            and self.storage_offset() == tensor.storage_offset())


Tensor.set_ = set_
Tensor.as_strided_ = as_strided_
Tensor.is_set_to = is_set_to
