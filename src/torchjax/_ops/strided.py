"""as_strided: a view that reads its base's storage by explicit strides.

torchjax's arrays have no storage of their own; a tensor's storage is its root base's values
in the order its layout metadata gives (_strides.py), so as_strided gathers from that.
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from .. import _strides
from ._registry import function, op


@op(promote="none", needs=(), view=True, function=False, method=False,
    grad="AsStridedBackward0")
def _as_strided(input, size, stride, storage_offset, order):
    """The storage of input (a root tensor, laid out in `order`, outermost dim first) read at
    storage_offset + sum(i_k * stride_k)."""
    flat = jnp.transpose(input, order).reshape(-1)
    return flat[_strides.positions(size, stride, storage_offset)]


@function()
def as_strided(input, size, stride, storage_offset=None):
    """A view of input's storage with the given size, stride and storage offset."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    root = input._base if input._base is not None else input
    if input._detached and root is not input:
        root = root.detach()  # a .data / detach() alias: the view stays outside autograd
    shape = tuple(root._data.shape)
    rstrides = root.stride() if root._layout is not None else _strides.contiguous_strides(shape)
    if not _strides.non_overlapping_and_dense(shape, rstrides):
        raise NotImplementedError("as_strided of a tensor whose storage is not dense (made by "
                                  "empty_strided with gaps) is not supported by torchjax")
    order = tuple(sorted(range(len(shape)), key=lambda d: (-rstrides[d], d)))
    numel = math.prod(shape)
    need = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1 if 0 not in size else 0
    if need > numel:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {input.element_size()} requiring a storage size of "
            f"{need * input.element_size()} are out of bounds for storage of size "
            f"{numel * input.element_size()}")
    from .. import _dispatch as _D  # it imports the op table
    return _D.dispatch(_D.PREPARED["_as_strided"], (root,), (size, stride, offset, order))

