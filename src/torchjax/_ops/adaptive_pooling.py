"""Adaptive pooling rows: average and max pooling to a given output size, in 1d/2d/3d
(PyTorch's windows: start floor(i * I / O), end ceil((i + 1) * I / O))."""

from __future__ import annotations

import functools
import numbers

import jax.numpy as jnp
import numpy as np
from jax import lax

from ._registry import op
from .pooling import (
    _FLOATS,
    _HALF,
    _NN,
    _check1d,
    _dim_range,
    _int_list,
    _need_dtype,
    _size_at,
)


def _ranges(size, out):
    """PyTorch's adaptive windows: [floor(o*I/O), ceil((o+1)*I/O)) for each output o."""
    o = np.arange(out)
    return (o * size) // out, ((o + 1) * size + out - 1) // out


def _adaptive_avg(x, out):
    """Each spatial axis in turn: window sums as a 0/1 matrix product; then the division."""
    n = len(out)
    lead = x.ndim - n
    acc = jnp.float32 if np.dtype(x.dtype).name in _HALF else x.dtype
    y = x.astype(acc)
    counts = []
    for a, (size, o) in enumerate(zip(x.shape[lead:], out)):
        start, end = _ranges(size, o)
        counts.append(end - start)
        if o and size % o == 0:  # equal windows that tile the axis: a reshape
            y = y.reshape(y.shape[:lead + a] + (o, size // o) + y.shape[lead + a + 1:])
            y = y.sum(axis=lead + a + 1)
            continue
        w = (np.arange(size) >= start[:, None]) & (np.arange(size) < end[:, None])
        y = jnp.moveaxis(jnp.tensordot(y, jnp.asarray(w, acc), axes=([lead + a], [1]),
                                       precision=lax.Precision.HIGHEST), -1, lead + a)
    return (y / jnp.asarray(functools.reduce(np.multiply.outer, counts), acc)).astype(x.dtype)


def _adaptive_max(x, out):
    """Values and flat plane indices of adaptive max pooling over the last len(out) dims.

    The windows are gathered into a trailing axis (padded to the longest window; the padding is
    masked statically), then PyTorch's choice is made with argmax: the last NaN if the window
    has one, else the first maximum."""
    n = len(out)
    lead = x.ndim - n
    sizes = x.shape[lead:]
    if 0 in out:
        shape = x.shape[:lead] + tuple(out)
        return jnp.zeros(shape, x.dtype), jnp.zeros(shape, jnp.int64)
    lengths, valids = [], []
    y = x
    for a, (size, o) in enumerate(zip(sizes, out)):
        start, end = _ranges(size, o)
        length = int((end - start).max())
        pos = start[:, None] + np.arange(length)
        valids.append(pos < end[:, None])
        if size % o:  # equal windows that tile the axis need no gather, only the reshape below
            y = jnp.take(y, np.minimum(pos, size - 1).reshape(-1), axis=lead + a, mode="clip")
        lengths.append(length)
    # (..., O1*L1, O2*L2, ...) -> (..., O1, O2, ..., L1*L2*...): the slots in scan order
    y = y.reshape(x.shape[:lead] + tuple(v for o, ln in zip(out, lengths) for v in (o, ln)))
    perm = tuple(range(lead)) + tuple(lead + 2 * a for a in range(n)) + \
        tuple(lead + 2 * a + 1 for a in range(n))
    w = y.transpose(perm).reshape(x.shape[:lead] + tuple(out) + (int(np.prod(lengths)),))
    valid = functools.reduce(np.multiply.outer, valids)  # axes (O1, L1, O2, L2, ...)
    valid = valid.transpose([q - lead for q in perm[lead:]]).reshape(tuple(out) + (-1,))
    if np.dtype(x.dtype).name in _FLOATS:
        isnan = jnp.isnan(w) & valid
        last_nan = w.shape[-1] - 1 - jnp.argmax(isnan[..., ::-1], axis=-1)
        masked = jnp.where(valid & ~isnan, w, -jnp.inf)
        slot = jnp.where(jnp.any(isnan, axis=-1), last_nan, jnp.argmax(masked, axis=-1))
    else:
        slot = jnp.argmax(jnp.where(valid, w, jnp.iinfo(x.dtype).min), axis=-1)
    values = jnp.take_along_axis(w, slot[..., None], axis=-1)[..., 0]
    flat = jnp.zeros(slot.shape, jnp.int64)
    step, inner = 1, 1
    for a in reversed(range(n)):
        j = (slot // inner) % lengths[a]
        o = lax.broadcasted_iota(jnp.int64, slot.shape, lead + a)
        flat = flat + ((o * sizes[a]) // out[a] + j) * step  # window start + slot
        step *= sizes[a]
        inner *= lengths[a]
    return values, flat


def _output_size(v, fn, n):
    """An adaptive op's output_size: an int applies to every spatial dim, a sequence is kept."""
    vals = _int_list(v, fn, "output_size", 2)
    return vals * n if isinstance(v, numbers.Integral) else vals


def _list_with_default(out_size, shape):
    """torch.nn.functional's _list_with_default: None takes the input's size."""
    if isinstance(out_size, numbers.Integral):
        return out_size
    if len(shape) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [d if v is None else v for v, d in zip(out_size, shape[-len(out_size):])]


def _braces(vals):
    """How PyTorch prints an output_size in adaptive_avg_pool's messages."""
    if len(vals) == 2:
        return f"{{{vals[0]}, {vals[1]}}}"
    return f"{{{vals[0]}, {vals[1]},{vals[2]}}}"


def _adaptive_avg_native(n, x, out):
    """PyTorch's adaptive_avg_pool{2,3}d on an int tuple."""
    fn = f"adaptive_avg_pool{n}d"
    if len(out) != n:
        raise RuntimeError(f"{fn}: output_size must be {n}")
    if min(out) < 0:
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 "
                           f"but received {_braces(out)}")
    if any(o != 1 for o in out):  # all ones is a mean over the last n dims in PyTorch
        if x.ndim not in (n + 1, n + 2):
            raise RuntimeError(f"{fn}(): Expected {n + 1}D or {n + 2}D tensor, but got "
                               f"{list(x.shape)}")
        for i in range(x.ndim - n, x.ndim):
            if x.shape[i] == 0:
                raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch "
                                   f"dimensions, but input has sizes {list(x.shape)} with "
                                   f"dimension {i} being empty")
    else:
        _size_at(x, -n)  # PyTorch takes the mean over the last n dims
    _need_dtype(x, fn if n == 2 else "adaptive_avg_pool3d_cpu")
    return _adaptive_avg(x, out)


@op(grad="SqueezeBackward1", needs=(), saves=("input",), **_NN)
def adaptive_avg_pool1d(input, output_size):
    """1d adaptive average pooling: the 2d op on input.unsqueeze(-2), as in PyTorch."""
    out = _int_list(output_size, "adaptive_avg_pool1d", "output_size", 2)
    _dim_range(input, "adaptive_avg_pool1d", 2, 4)
    _check1d("adaptive_avg_pool1d", "output_size", out)
    return _adaptive_avg_native(2, input[..., None, :], (1, out[0]))[..., 0, :]


@op(grad="AdaptiveAvgPool2DBackward0", needs=(), saves=("input",), **_NN)
def adaptive_avg_pool2d(input, output_size):
    """2d adaptive average pooling (None in output_size keeps that input size)."""
    out = _list_with_default(output_size, input.shape)
    out = _output_size(out, "adaptive_avg_pool2d", 2)
    return _adaptive_avg_native(2, input, out)


@op(grad="AdaptiveAvgPool3DBackward0", needs=(), saves=("input",), **_NN)
def adaptive_avg_pool3d(input, output_size):
    """3d adaptive average pooling (None in output_size keeps that input size)."""
    out = _list_with_default(output_size, input.shape)
    out = _output_size(out, "adaptive_avg_pool3d", 3)
    return _adaptive_avg_native(3, input, out)


def _adaptive_max_native(n, x, out):
    """PyTorch's adaptive_max_pool{2,3}d on an int tuple."""
    fn = f"adaptive_max_pool{n}d"
    if x.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{fn}(): Expected {n + 1}D or {n + 2}D tensor, but got: "
                           f"{list(x.shape)}")
    for i in range(1, x.ndim):
        if x.shape[i] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(x.shape)} with dimension "
                               f"{i} being empty")
    if len(out) != n:
        raise RuntimeError(f"{fn}(): internal error: output_size.size() must be {n}")
    if min(out) < 0:
        shape = list(x.shape[:-n]) + list(out)
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {shape}")
    _need_dtype(x, fn if n == 2 else "adaptive_max_pool3d_cpu")
    return _adaptive_max(x, out)


@op(grad="SqueezeBackward1", **_NN)
def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """1d adaptive max pooling: (values, indices); the 2d op on input.unsqueeze(-2)."""
    out = _int_list(output_size, "adaptive_max_pool1d", "output_size", 2)
    _dim_range(input, "adaptive_max_pool1d", 2, 4)
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError("adaptive_max_pool1d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {list(input.shape)} "
                               f"with dimension {i} being empty")
    _check1d("adaptive_max_pool1d", "output_size", out)
    v, i = _adaptive_max_native(2, input[..., None, :], (1, out[0]))
    return v[..., 0, :], i[..., 0, :]


@op(grad="AdaptiveMaxPool2DBackward0", **_NN)
def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """2d adaptive max pooling: (values, flat indices within each H*W plane)."""
    out = _list_with_default(output_size, input.shape)
    out = _output_size(out, "adaptive_max_pool2d", 2)
    return _adaptive_max_native(2, input, out)


@op(grad="AdaptiveMaxPool3DBackward0", **_NN)
def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """3d adaptive max pooling: (values, flat indices within each T*H*W volume)."""
    out = _list_with_default(output_size, input.shape)
    out = _output_size(out, "adaptive_max_pool3d", 3)
    return _adaptive_max_native(3, input, out)
