"""Where a view's values lie in a storage shared with NumPy (Tensor.numpy() of a view):
pure functions of ndarrays, used by _numpy_shared."""

from __future__ import annotations

import numpy as np


def _byte_view(dt: np.dtype, root: np.dtype) -> bool:
    """Whether a view of dtype dt can be read from a storage of dtype root byte for byte: the
    same dtype or size (view(dtype)), or the complex/real pair view_as_complex/_real make."""
    if dt.itemsize == root.itemsize:
        return True
    if dt.kind == "c" and root.kind == "f":
        return dt.itemsize == 2 * root.itemsize
    if dt.kind == "f" and root.kind == "c":
        return 2 * dt.itemsize == root.itemsize
    return False


def _view_array(host, where, root_offset):
    """The ndarray over the host memory at a view's strides and offset."""
    shape, dt, strides, offset = where
    if root_offset:
        raise NotImplementedError("numpy() of a view of a tensor whose storage offset is not 0: "
                                  "call .clone() first")
    risz = host.array.dtype.itemsize
    # from the storage's first byte (the host array's first element), the view's bytes
    start = offset * dt.itemsize
    size = int(np.prod(shape, dtype=np.int64))
    end = start if size == 0 else start + dt.itemsize * (1 + sum(
        (n - 1) * s for n, s in zip(shape, strides)))
    span = -(-max(end, 1) // risz)
    flat = np.lib.stride_tricks.as_strided(host.array, shape=(span,), strides=(risz,))
    mem = flat.view(np.uint8)[start:end]
    typed = mem.view(dt) if mem.size else np.empty(0, dt)
    return np.lib.stride_tricks.as_strided(
        typed, shape=shape, strides=tuple(s * dt.itemsize for s in strides), writeable=True)
