"""Tensor.untyped_storage(), Tensor.storage() and Tensor.storage_type(): descriptions of the storage under a tensor.

A torchjax tensor's values live in a JAX array, and a view shares its base's array; the
storage objects describe that base as PyTorch's storages would (its address stand-in, its size
in bytes, its device), which is what real code reads them for: safetensors and transformers
tell shared or tied tensors apart by `untyped_storage().data_ptr()` and `nbytes()`.
"""

from __future__ import annotations

import warnings

from . import storage as _storage
from ._ops.tensor_memory import _address
from ._tensor import Tensor

_TYPED_STORAGE_WARNING = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
    "the only storage class. This should only matter to you if you are using storages "
    "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
    "tensor.storage()")


def untyped_storage(self) -> _storage.UntypedStorage:
    """The storage under this tensor (its base's, for a view)."""
    base = self._base if self._base is not None else self
    nbytes = base.numel() * base.element_size()
    got = object.__new__(_storage.UntypedStorage)
    got._ptr = _address(base) if nbytes else 0  # PyTorch's empty storage is a null pointer
    got._nbytes = nbytes
    got._device = base.device
    return got


def storage(self) -> _storage.TypedStorage:
    """untyped_storage() with this tensor's dtype (PyTorch's deprecated TypedStorage)."""
    warnings.warn(_TYPED_STORAGE_WARNING, UserWarning, stacklevel=2)
    got = object.__new__(_storage.TypedStorage)
    got._untyped_storage = untyped_storage(self)
    got.dtype = self.dtype
    return got


def storage_type(self) -> type | None:
    """The legacy storage class of this tensor's dtype (torch.FloatStorage, ...), or None for a
    dtype that has none (uint16, the float8 types), as PyTorch."""
    warnings.warn(_TYPED_STORAGE_WARNING, UserWarning, stacklevel=2)
    return _BY_DTYPE.get(self.dtype)


_BY_DTYPE = {cls.dtype: cls for cls in _storage.LEGACY.values()}

Tensor.untyped_storage = untyped_storage
Tensor.storage = storage
Tensor.storage_type = storage_type
