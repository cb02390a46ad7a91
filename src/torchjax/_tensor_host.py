"""Tensor's reads to the host and Python's protocols (item, tolist, numpy's __array__,
bool/float/int, len and iteration, hashing, pickling, deep copies, repr), a base class of
Tensor kept in its own file as _tensor_convert.py keeps its conversions."""

from __future__ import annotations

import jax
import numpy as np

from . import _device_dtypes, _meta
from ._x64 import scoped

try:
    from jax._src.array import ArrayImpl as _ArrayImpl
except ImportError:  # pragma: no cover - moved in a newer jax: item() takes its slow path
    class _ArrayImpl:
        pass


_DEVICE_DTYPES = _device_dtypes.STATE


class _HostReads:
    """The host reads and Python protocols of Tensor (which adds the data they read)."""

    __slots__ = ()

    # (the ones that reshape first run an op: in torchjax's x64 scope, an int64 stays int64)

    def item(self):
        """The value of a one-element tensor as a Python number; this waits for the computation and
        copies the value to the host.
        """
        d = self._data
        if d.__class__ is _ArrayImpl and d.size == 1:
            # the common case, outside the x64 scope: reading a buffer does not depend on
            # it (an int64 array reads as its int64 value), and a loop's loss.item() is
            # part of every step
            return np.asarray(d).item()
        return self._item_slow()

    @scoped
    def _item_slow(self):
        if _meta.is_meta(self._data):
            if self._data.size != 1:
                raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be "
                                   f"converted to Scalar")
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               f"to Scalar")
        # the array's own item(): an eager reshape first would cost a dispatch (~100 us)
        return self._data.item()

    def tolist(self):
        """The values as (nested) Python lists of numbers; this copies them to the host."""
        if _meta.is_meta(self._data):
            raise _meta.no_data_error()
        return np.asarray(self._data).tolist()

    # numpy() is _numpy_shared's: the array shares the tensor's memory

    def __array__(self, dtype=None, copy=None):
        if _meta.is_meta(self._data):
            raise _meta.no_data_error()
        a = np.asarray(self._data)
        if _DEVICE_DTYPES.on:
            a = _device_dtypes.to_host(self, a)
        return a.astype(dtype) if dtype is not None else a

    def __dlpack__(self, *args, **kwargs):
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __jax_array__(self):
        return self._data

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    @scoped
    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(_scalar_array(self))

    @scoped
    def __float__(self) -> float:
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return float(_scalar_array(self))

    @scoped
    def __int__(self) -> int:
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(_scalar_array(self))

    @scoped
    def __complex__(self) -> complex:
        return complex(_scalar_array(self))

    @scoped
    def __index__(self) -> int:
        d = self.dtype
        if d.is_floating_point or d.is_complex or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(_scalar_array(self))

    def __hash__(self) -> int:
        return id(self)

    def share_memory_(self):
        """Move the storage (a view's base's) to shared memory, which processes started by
        torch.multiprocessing map and write: a no-op once shared, and off the CPU (see
        torchjax._shared_memory)."""
        from ._shared_memory import share_memory_
        return share_memory_(self)

    def is_shared(self) -> bool:
        """Whether the storage is in shared memory (share_memory_, or received so from
        another process)."""
        from ._shared_memory import is_shared
        return is_shared(self)

    def __reduce_ex__(self, proto):
        from ._tensor import _rebuild  # (pickles name it there)
        return (_rebuild, (np.asarray(self._data), self._requires_grad))

    def __deepcopy__(self, memo):
        from ._tensor import Tensor
        t = type(self)._wrap(self._data, self._requires_grad)
        if type(self) is not Tensor:
            t.__dict__.update(self.__dict__)
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = t
        return t

    def __repr__(self, *, tensor_contents=None) -> str:
        from ._printing import tensor_repr
        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    # torch.Tensor subclasses (Parameter) print and deep-copy through these
    def __reduce_tensor_type__(self):  # pragma: no cover - reserved
        return type(self)


def _scalar_array(t):
    """The single value of t as a 0-d array, for bool(), float(), int(), complex(), index."""
    if _meta.is_meta(t._data):
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")
    a = t._data
    if a.ndim == 0:
        return a  # (a reshape to () would be a program, traced again in every process)
    if not isinstance(a, jax.core.Tracer) and getattr(a, "is_fully_addressable", False):
        # the value goes to Python anyway: reshaped on the host, without a program per
        # shape (traced again in every process)
        return np.asarray(a).reshape(())
    return a.reshape(())
