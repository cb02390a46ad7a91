"""Where a torchjax tensor's elements sit in PyTorch's strided layout."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .._views import read_through
from .._x64 import scoped


def contiguous_strides(shape) -> tuple:
    """PyTorch's strides of a contiguous tensor (a size-0 dimension counts as 1)."""
    strides = []
    acc = 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


@scoped  # int64 positions
def strided_window(base: Tensor, view: Tensor):
    """(offset, strides) with view[i] == base.flatten()[offset + sum(i_k * stride_k)], or None
    when the view is not such a window (a dtype-changing link, a gather, an empty view)."""
    shape = view._data.shape
    chain = view._view_chain
    if not chain:
        return (0, contiguous_strides(shape)) if shape == base._data.shape else None
    if view._data.size == 0 or any(getattr(link[0], "view_write", None) for link in chain):
        return None
    # where each element of the view lives in the base: the chain applied to positions
    iota = jnp.arange(base._data.size, dtype=jnp.int64).reshape(base._data.shape)
    pos = np.asarray(read_through(chain, iota))
    if pos.shape != shape:
        return None
    offset = int(pos.flat[0])
    strides = list(contiguous_strides(shape))
    for k, n in enumerate(shape):
        if n > 1:
            strides[k] = int(pos[(0,) * k + (1,) + (0,) * (len(shape) - k - 1)]) - offset
    if min(strides, default=0) < 0:
        return None
    expect = np.full(shape, offset, dtype=np.int64)
    for k, (n, s) in enumerate(zip(shape, strides)):
        expect += (np.arange(n, dtype=np.int64) * s).reshape((n,) + (1,) * (len(shape) - k - 1))
    return (offset, tuple(strides)) if np.array_equal(expect, pos) else None


def is_contiguous(shape, strides) -> bool:
    """PyTorch's is_contiguous: strides of dimensions of size 1 do not matter."""
    if 0 in shape:
        return True
    expect = contiguous_strides(shape)
    return all(n == 1 or s == e for n, s, e in zip(shape, strides, expect))
