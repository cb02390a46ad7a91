"""Op-table rows: splitting a tensor into views (tensor_split, hsplit, vsplit, dsplit), unfold
and view_as."""

from __future__ import annotations

import itertools

import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _dtypes
from ._registry import function, op
from .shape import _dim
from .structure import _call, _concrete, _is_tensor


@op(name="tensor_split", promote="none", needs=(), view=True, function=False, method=False,
    grad="SliceBackward0")
def _tensor_split(input, indices_or_sections, dim=0):
    """Split into `sections` nearly equal pieces, or at the given indices."""
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = _dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(indices_or_sections, int):
        s = indices_or_sections
        if s <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {s}")
        sizes = [n // s + (1 if i < n % s else 0) for i in range(s)]
        bounds = list(itertools.accumulate([0] + sizes))
        spans = list(zip(bounds[:-1], bounds[1:]))
    else:
        cuts = [min(max(i + n if i < 0 else i, 0), n) for i in indices_or_sections]
        starts, stops = [0] + cuts, cuts + [n]
        spans = [(a, max(a, b)) for a, b in zip(starts, stops)]
    return tuple(lax.slice_in_dim(input, a, b, axis=d) for a, b in spans)


def _split_arg(v):
    """indices_or_sections as a Python int or tuple (a tensor's values are read)."""
    if _is_tensor(v):
        if v.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {v.ndim} dims")
        if v.dtype is not _dtypes.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {_dtypes.SCALAR_NAMES[v.dtype.name]}")
        vals = _concrete(v, "tensor_split's tensor_indices_or_sections").tolist()
        return vals if isinstance(vals, int) else tuple(vals)
    if isinstance(v, (list, tuple)):
        return tuple(int(i) for i in v)
    return int(v)


@function()
def tensor_split(input, indices_or_sections, dim=0):
    """Split into `sections` pieces (sizes differ by at most one) or at the given indices."""
    return _call("tensor_split", input, _split_arg(indices_or_sections), dim)


def _dir_split(name, input, arg, need, d):
    if input.ndim < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, "
                           f"but got a tensor with {input.ndim} dimensions!")
    arg = _split_arg(arg)
    if isinstance(arg, int):
        n = input.shape[d]
        if arg == 0 or n % arg:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the "
                               f"size of the dimension {n} is not divisible by the split_size "
                               f"{arg}!")
    return _call("tensor_split", input, arg, d)


@function()
def hsplit(input, indices_or_sections):
    """Split along dim 1 (dim 0 for 1-D tensors) into equal sections or at indices."""
    d = 0 if input.ndim == 1 else 1
    return _dir_split("hsplit", input, indices_or_sections, 1, d)


@function()
def vsplit(input, indices_or_sections):
    """Split along dim 0 into equal sections or at indices (at least 2-D)."""
    return _dir_split("vsplit", input, indices_or_sections, 2, 0)


@function()
def dsplit(input, indices_or_sections):
    """Split along dim 2 into equal sections or at indices (at least 3-D)."""
    return _dir_split("dsplit", input, indices_or_sections, 3, 2)


@op(promote="none", needs=(), view=True, function=False)
def unfold(input, dimension, size, step):
    """All windows of `size` entries along `dimension`, `step` apart, as a new last dim."""
    d = _dim(dimension, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if input.ndim == 0:
        return input.reshape(1)
    count = (n - size) // step + 1
    idx = np.arange(count)[:, None] * step + np.arange(size)[None, :]
    return jnp.moveaxis(jnp.take(input, idx, axis=d), d + 1, -1)


@function(name="view_as", function=False)
def _view_as(self, other):
    """self viewed with other's shape."""
    return self.view(tuple(other.shape))
