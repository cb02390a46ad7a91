"""max_unpool rows: the partial inverse of max pooling, scattering values back to their indices."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ._registry import op
from .pooling import _NN, _int_list, _need_dtype, _scalar_name


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _unpool(x, idx, size):
    """Scatter each row of x (B, Q) to positions idx (B, Q) of a zero (B, size) array."""
    rows = jnp.arange(x.shape[0])[:, None]
    return jnp.zeros((x.shape[0], size), x.dtype).at[rows, idx].set(x, mode="drop")


def _unpool_fwd(x, idx, size):
    return _unpool(x, idx, size), idx


def _unpool_bwd(size, idx, ct):
    # PyTorch's gradient reads the output gradient at every index, so elements sent to the
    # same position all receive it (a plain scatter's gradient reaches only the one written)
    return jnp.take_along_axis(ct, idx, axis=1, mode="fill", fill_value=0), None


_unpool.defvjp(_unpool_fwd, _unpool_bwd)


def _max_unpool_native(n, x, indices, out, stride=None):
    """PyTorch's max_unpool{2,3}d on an output_size from torch.nn.functional."""
    kind = f"max_unpooling{n}d"
    if np.dtype(indices.dtype) != np.int64:
        got = f" but got: {_scalar_name(indices.dtype)}" if n == 2 else ""
        raise RuntimeError(f"elements in indices should be type int64{got}")
    if len(out) != n:
        what = "two elements (height, width)" if n == 2 else "three elements (depth, height, width)"
        raise RuntimeError(f"There should be exactly {what} in output_size, but got {len(out)} "
                           "elements.")
    if x.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Input to {kind} should be a {n + 1}d or {n + 2}d Tensor, but got a "
                           f"tensor with {x.ndim} dimensions.")
    if stride is not None and min(stride) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")
    if x.shape != indices.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(x.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    for i in range(1, x.ndim):
        if x.shape[i] == 0:
            raise RuntimeError(f"{kind}_forward_out_cpu(): Expected input to have non-zero size "
                               f"for non-batch dimensions, but got {list(x.shape)} with "
                               f"dimension {i} being empty.")
    _need_dtype(x, f"max_unpool{n}d")
    lead = x.shape[:-n]
    size = int(np.prod(out, dtype=np.int64))
    rows = int(np.prod(lead, dtype=np.int64))
    y = _unpool(x.reshape(rows, -1), indices.reshape(rows, -1), size)
    return y.reshape(lead + tuple(out))


@op(tensors=("input", "indices"), grad="MaxUnpool2DBackward0", needs=("indices",), **_NN)
def max_unpool2d(input, indices, output_size):
    """PyTorch's native max_unpool2d: torchjax.nn.functional.max_unpool2d computes
    output_size from the pooling arguments and checks the indices' range first."""
    out = _int_list(output_size, "max_unpool2d", "output_size", 3)
    return _max_unpool_native(2, input, indices, out)


@op(tensors=("input", "indices"), grad="MaxUnpool3DBackward0", needs=("indices",), **_NN)
def max_unpool3d(input, indices, output_size, stride, padding):
    """PyTorch's native max_unpool3d (see max_unpool2d)."""
    out = _int_list(output_size, "max_unpool3d", "output_size", 3)
    stride = _int_list(stride, "max_unpool3d", "stride", 4)
    return _max_unpool_native(3, input, indices, out, stride)
