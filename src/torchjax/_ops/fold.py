"""im2col / col2im rows: the sliding blocks behind F.unfold and F.fold (nn/_functional/conv.py)."""

from __future__ import annotations

import jax.numpy as jnp

from ._registry import op
from .conv import _not_implemented

# rows that PyTorch keeps in torch._C._nn: reached through F.unfold / F.fold only
_C_NN = dict(function=False, method=False, namespace="torch._C._nn")


def _pair_arg(values, name):
    vals = [int(v) for v in values]
    if len(vals) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(vals)}")
    return vals


def _check_window(kernel, dilation, padding, stride):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel, dilation, padding, stride
    if kh <= 0 or kw <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{kh} kernel_width: {kw}")
    if sh <= 0 or sw <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {sh} "
                           f"stride_width: {sw}")
    if dh <= 0 or dw <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{dh} dilation_width: {dw}")
    if ph < 0 or pw < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {ph} "
                           f"pad_width: {pw}")


def _blocks(size, kernel, dilation, padding, stride):
    """The number of sliding-window positions along each spatial dim."""
    return [(s + 2 * p - (d * (k - 1) + 1)) // st + 1
            for s, k, d, p, st in zip(size, kernel, dilation, padding, stride)]


def _window_slices(kernel, dilation, stride, blocks):
    """For each kernel offset (row-major), the strided slices of the padded image it sees."""
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            yield tuple(slice(o * d, o * d + s * (b - 1) + 1, s)
                        for o, d, s, b in zip((i, j), dilation, stride, blocks))


def _tup(v):
    return f"({v[0]}, {v[1]})"


@op(promote="none", grad="Im2ColBackward0", **_C_NN, saves=())
def im2col(input, kernel_size, dilation, padding, stride):
    """Sliding blocks of a (N, C, H, W) or (C, H, W) input as columns: (N, C*kH*kW, L)."""
    kernel, dilation, padding, stride = (
        _pair_arg(v, n) for v, n in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                     (padding, "padding"), (stride, "stride")))
    _check_window(kernel, dilation, padding, stride)
    if input.ndim < 3:
        n = max(input.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         "but got 2)")
    shape = list(input.shape)
    if input.ndim not in (3, 4) or 0 in shape[-3:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {shape}")
    blocks = _blocks(shape[-2:], kernel, dilation, padding, stride)
    if min(blocks) < 1:
        raise RuntimeError(
            f"Given input with spatial size {_tup(shape[-2:])}, kernel_size={_tup(kernel)}, "
            f"dilation={_tup(dilation)}, padding={_tup(padding)}, calculated shape of the array "
            f"of sliding blocks as {_tup(blocks)}, but its components must be at least one.")
    if jnp.issubdtype(input.dtype, jnp.integer):
        _not_implemented("im2col_out_cpu", input)
    x = input if input.ndim == 4 else input[None]
    x = jnp.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    cols = jnp.stack([x[(..., *s)] for s in _window_slices(kernel, dilation, stride, blocks)],
                     axis=2)
    out = cols.reshape(x.shape[0], -1, blocks[0] * blocks[1])
    return out if input.ndim == 4 else out[0]


@op(promote="none", grad="Col2ImBackward0", **_C_NN, saves=())
def col2im(input, output_size, kernel_size, dilation, padding, stride):
    """The adjoint of im2col: sums columns (N, C*kH*kW, L) back into (N, C, H, W) images."""
    size = _pair_arg(output_size, "output_size")
    kernel, dilation, padding, stride = (
        _pair_arg(v, n) for v, n in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                     (padding, "padding"), (stride, "stride")))
    _check_window(kernel, dilation, padding, stride)
    shape = list(input.shape)
    if input.ndim not in (2, 3) or 0 in shape[-2:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
                           f"size and non-zero dimensions for input, but got: {shape}")
    c_k = shape[-2]
    if c_k % (kernel[0] * kernel[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={c_k} and "
                           f"kernel_size={_tup(kernel)}.")
    blocks = _blocks(size, kernel, dilation, padding, stride)
    given = (f"Given output_size={_tup(size)}, kernel_size={_tup(kernel)}, "
             f"dilation={_tup(dilation)}, padding={_tup(padding)}, stride={_tup(stride)}, ")
    if shape[-1] != blocks[0] * blocks[1]:
        raise RuntimeError(
            f"{given}expected size of input's dimension 2 to match the calculated number of "
            f"sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={shape[-1]}.")
    if min(blocks) < 1:
        raise RuntimeError(f"{given}calculated shape of the array of sliding blocks as "
                           f"{_tup(blocks)}, which is too small (non-positive)")
    if jnp.issubdtype(input.dtype, jnp.integer):
        _not_implemented("col2im_out_cpu", input)
    x = input if input.ndim == 3 else input[None]
    n, c = x.shape[0], c_k // (kernel[0] * kernel[1])
    cols = x.reshape(n, c, kernel[0] * kernel[1], blocks[0], blocks[1])
    out = jnp.zeros((n, c) + tuple(s + 2 * p for s, p in zip(size, padding)), input.dtype)
    for k, s in enumerate(_window_slices(kernel, dilation, stride, blocks)):
        out = out.at[(..., *s)].add(cols[:, :, k])
    out = out[..., padding[0]:padding[0] + size[0], padding[1]:padding[1] + size[1]]
    return out if input.ndim == 3 else out[0]
