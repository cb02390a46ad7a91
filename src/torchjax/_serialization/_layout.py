"""Where a view's elements sit in its base, for files that store PyTorch's strided layout."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._strides import contiguous_strides, positions
from .._tensor import Tensor
from .._views import read_through
from .._x64 import scoped


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
    ok = np.array_equal(positions(shape, strides, offset), pos)
    return (offset, tuple(strides)) if ok else None

