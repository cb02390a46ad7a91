"""as_strided: a view that reads its base's storage by explicit strides (and slice_inverse,
which reads it as another tensor is laid out); as_strided_scatter, its out-of-place write.

torchjax's arrays have no storage of their own; a tensor's storage is its root base's values
in the order its layout metadata gives (_strides.py), so as_strided gathers from that.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from .. import _strides
from ._registry import function, op


@op(promote="none", needs=(), view=True, function=False, method=False,
    grad="AsStridedBackward0")
def _as_strided(input, size, stride, storage_offset, order):
    """The storage of input (a root tensor, laid out in `order`, outermost dim first) read at
    storage_offset + sum(i_k * stride_k)."""
    flat = jnp.transpose(input, order).reshape(-1)
    return flat[_strides.positions(size, stride, storage_offset)]


# slice_inverse reads the storage as _as_strided does, under PyTorch's own node name
op(name="_slice_inverse", promote="none", needs=(), view=True, function=False, method=False,
   grad="SliceInverseBackward0")(_as_strided)


def _storage_layout(input, size, stride, storage_offset, fname):
    """Checked (size, stride, offset) of a strided window on input's storage, with the root
    tensor that holds the storage, its layout order (outermost dim first) and its size."""
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
        raise NotImplementedError(f"{fname} of a tensor whose storage is not dense (made by "
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
    return size, stride, offset, root, order, numel


def _strided_view(row, input, size, stride, storage_offset, fname):
    size, stride, offset, root, order, _ = _storage_layout(input, size, stride, storage_offset,
                                                           fname)
    from .. import _dispatch as _D  # it imports the op table
    return _D.dispatch(_D.PREPARED[row], (root,), (size, stride, offset, order))


@function()
def as_strided(input, size, stride, storage_offset=None):
    """A view of input's storage with the given size, stride and storage offset."""
    return _strided_view("_as_strided", input, size, stride, storage_offset, "as_strided")


@function()
def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """The inverse of input = src[start:end:step] along dim (functionalization's op): src's
    size, strides and offset read from input's storage, a view of it."""
    return _strided_view("_slice_inverse", input, tuple(src.shape), src.stride(),
                         src.storage_offset(), "slice_inverse")


@op(tensors=("input", "src"), promote="none", function=False, method=False,
    grad="AsStridedScatterBackward0")
def _as_strided_scatter(input, src, size, stride, storage_offset, layout):
    """input with src written where input.as_strided(size, stride, storage_offset) lies; layout
    (input's strides, its storage offset, the storage's size) says which storage positions
    are input's elements: writes elsewhere in the storage do not show in the result."""
    in_stride, in_offset, storage = layout
    element = np.full(storage, -1, np.int64)  # storage position -> input's flat index
    element[_strides.positions(input.shape, in_stride, in_offset).reshape(-1)] = \
        np.arange(input.size)
    target = element[_strides.positions(size, stride, storage_offset).reshape(-1)]
    kept = np.flatnonzero(target >= 0)
    values = src.reshape(-1)[kept].astype(input.dtype)
    return input.reshape(-1).at[target[kept]].set(values).reshape(input.shape)


@function()
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of input with src embedded where input.as_strided(size, stride, storage_offset)
    lies (in fresh storage, as PyTorch's)."""
    size, stride, offset, _, _, numel = _storage_layout(input, size, stride, storage_offset,
                                                        "as_strided_scatter")
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"[{', '.join(map(str, src.shape))}], slice size = "
                           f"[{', '.join(map(str, size))}]")
    from .. import _dispatch as _D  # it imports the op table
    layout = (tuple(input.stride()), input.storage_offset(), numel)
    return _D.dispatch(_D.PREPARED["_as_strided_scatter"], (input, src),
                       (size, stride, offset, layout))
