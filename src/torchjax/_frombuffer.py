"""torch.frombuffer: a 1-d tensor over an object's buffer (bytes, bytearray, array.array,
mmap, ...), sharing its memory as PyTorch's does.

The sharing is torch.from_numpy's (_numpy_shared.py): writes to the buffer are seen by the
tensor's next read and writes to the tensor land in the buffer. A read-only buffer (bytes)
gives PyTorch's warning; writing such a tensor then raises NumPy's "assignment destination is
read-only" where PyTorch would write into the immutable object.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import _dtypes, _numpy_shared, _settings
from ._x64 import scoped

__all__ = ["frombuffer"]

_WARNED = [False]


def _checked_count(nbytes: int, elsize: int, count: int, offset: int) -> int:
    """The element count PyTorch takes from the buffer, with its checks and messages."""
    if nbytes <= 0 or count == 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if offset < 0 or offset >= nbytes:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({nbytes} bytes) minus 1")
    if count < 0:
        if (nbytes - offset) % elsize:
            raise ValueError(f"buffer length ({nbytes - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({elsize})")
        return (nbytes - offset) // elsize
    if offset + count * elsize > nbytes:
        raise ValueError(f"requested buffer length ({count} * {elsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({nbytes} bytes)")
    return count


@scoped
def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """The `count` elements of `dtype` (all of them for -1) from byte `offset` of buffer."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    d = _dtypes.to_dtype(dtype)
    np_dtype = np.dtype(d.np)
    if np_dtype not in _numpy_shared._SUPPORTED:
        raise NotImplementedError(
            f"torch.frombuffer(dtype={d}) is not supported by torchjax: a tensor shares memory "
            f"only in NumPy's dtypes (read the buffer as torch.int16 and call .view({d}) on a "
            f"clone to copy it instead)")
    n = _checked_count(view.nbytes, np_dtype.itemsize, int(count), int(offset))
    array = np.frombuffer(view, dtype=np_dtype, count=n, offset=int(offset))
    if view.readonly:
        if not _WARNED[0] or _settings.is_warn_always_enabled():  # TORCH_WARN_ONCE
            _WARNED[0] = True
            warnings.warn(
                "The given buffer is not writable, and PyTorch does not support non-writable "
                "tensors. This means you can write to the underlying (supposedly non-writable) "
                "buffer using the tensor. You may want to copy the buffer to protect its data or "
                "make it writable before converting it to a tensor. This type of warning will be "
                "suppressed for the rest of this program.", UserWarning, stacklevel=3)
        # the warning is frombuffer's, not from_numpy's (PyTorch gives one)
        warned, _numpy_shared._READONLY_WARNED[0] = _numpy_shared._READONLY_WARNED[0], True
        try:
            t = _numpy_shared.from_numpy(array)
        finally:
            _numpy_shared._READONLY_WARNED[0] = warned
    else:
        t = _numpy_shared.from_numpy(array)
    return t.requires_grad_(True) if requires_grad else t
