"""Padding rows, one per mode, since PyTorch names each mode's node differently:
constant_pad_nd (ConstantPadNdBackward0), reflection_pad{1,2,3}d (ReflectionPad1DBackward0...),
replication_pad{1,2,3}d (ReplicationPad1DBackward0...) and _pad_circular (CopySlices).
F.pad (nn/_functional/conv.py) routes between them.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _dtypes
from ._registry import op

# rows that PyTorch keeps in torch._C._nn: reached through F.pad only
_C_NN = dict(function=False, method=False, namespace="torch._C._nn")


def _pad_pairs(pad, ndim):
    """(before, after) for each dim; pad lists the last dim first, as in PyTorch."""
    pairs = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        pairs[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return pairs


_FILL_TYPES = {"int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t",
               "uint8": "uint8_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
               "float32": "float", "float64": "double"}


def _fill_value(value, dtype):
    """value in dtype; PyTorch's error when it does not fit (integers truncate)."""
    name = _dtypes.from_jax(dtype).name
    if name == "bool" or name.startswith("complex"):
        return np.asarray(value).astype(dtype)
    v = complex(value)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        fits = v.imag == 0 and math.isfinite(v.real) and info.min <= math.trunc(v.real) <= info.max
        result = math.trunc(v.real) if fits else None
    else:
        big = float(jnp.finfo(dtype).max)
        fits = v.imag == 0 and (not math.isfinite(v.real) or abs(v.real) <= big)
        result = v.real
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_FILL_TYPES[name]} without "
                           "overflow")
    return np.asarray(result).astype(dtype)


@op(promote="none", method=False, grad="ConstantPadNdBackward0", saves=())
def constant_pad_nd(input, pad, value=0):
    """input padded with value; pad lists (before, after) from the last dim backwards, and a
    negative amount crops."""
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)}while the input has "
                           f"{input.ndim}dimensions.")
    pairs = _pad_pairs(pad, input.ndim)
    for size, (lo, hi) in zip(input.shape, pairs):
        if size + min(lo, 0) + min(hi, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    fill = _fill_value(value, input.dtype)
    return lax.pad(input, fill, [(lo, hi, 0) for lo, hi in pairs])


def _take_padded(x, pad, index):
    """Pad the trailing dims by gathering: index(positions, size) maps each output position
    (counted from the input's first element) to the input element it copies."""
    for axis, (lo, hi) in enumerate(_pad_pairs(pad, x.ndim)):
        if (lo, hi) != (0, 0):
            size = x.shape[axis]
            x = jnp.take(x, index(np.arange(size + lo + hi) - lo, size), axis=axis)
    return x


def _reflect_index(i, n):
    return (n - 1) - np.abs((n - 1) - np.abs(i))


def _replicate_index(i, n):
    return np.clip(i, 0, n - 1)


_TOO_SMALL = {
    ("reflect", 1): "input (W: {W}) is too small. Calculated output W: {oW}",
    ("replicate", 1): "input (W: {W}) is too small. Calculated output W: {oW}",
    ("reflect", 2): "input (H: {H}, W: {W}) is too small. Calculated output H: {oH} W: {oW}",
    ("replicate", 2): "input (H: {H}, W: {W} ) is too small. Calculated output H: {oH} W: {oW}",
    ("reflect", 3): "input (D: {D} H: {H}, W: {W}) is too small. Calculated output D: {oD} "
                    "H: {oH} W: {oW}",
    ("replicate", 3): "input (D: {D} H: {H}, W: {W}) is too small. Calculated output D: {oD} "
                      "H: {oH} W: {oW}",
}


def _check_pad_input(x, pad, dim, mode):
    """The checks of PyTorch's reflection_pad / replication_pad kernels."""
    shape = list(x.shape)
    batched = x.ndim == dim + 2
    if x.ndim not in (dim + 1, dim + 2) or 0 in shape[int(batched):]:
        raise RuntimeError(f"Expected {dim + 1}D or {dim + 2}D (batch mode) tensor with possibly 0 "
                           "batch size and other non-zero dimensions for input, but got: "
                           f"{shape}")
    if len(pad) != 2 * dim:
        raise RuntimeError(f"padding size is expected to be {2 * dim}, but got: {len(pad)}")
    sizes = shape[-dim:]
    if mode == "reflect":
        for i in range(dim):  # PyTorch checks the width first, then height and depth
            lo, hi, size = pad[2 * i], pad[2 * i + 1], sizes[dim - 1 - i]
            if lo >= size or hi >= size:
                raise RuntimeError(
                    f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                    f"input dimension, but got: padding ({lo}, {hi}) at dimension "
                    f"{x.ndim - 1 - i} of input {shape}")
    out = [s + pad[2 * (dim - 1 - i)] + pad[2 * (dim - 1 - i) + 1] for i, s in enumerate(sizes)]
    if all(o < 1 for o in out):
        names = "DHW"[3 - dim:]
        fields = dict(zip(names, sizes)) | {"o" + n: o for n, o in zip(names, out)}
        raise RuntimeError(_TOO_SMALL[mode, dim].format(**fields))
    if any(o < 0 for o in out):
        bad = next(o for o in out if o < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: "
                           f"{shape[:x.ndim - dim] + out}")


def _reflection_pad(input, padding, dim):
    pad = [int(p) for p in padding]
    _check_pad_input(input, pad, dim, "reflect")
    return _take_padded(input, pad, _reflect_index)


def _replication_pad(input, padding, dim):
    pad = [int(p) for p in padding]
    _check_pad_input(input, pad, dim, "replicate")
    return _take_padded(input, pad, _replicate_index)


@op(promote="none", grad="ReflectionPad1DBackward0", **_C_NN)
def reflection_pad1d(input, padding):
    """Pad the last dim by reflecting about its edges (the edge itself is not repeated)."""
    return _reflection_pad(input, padding, 1)


@op(promote="none", grad="ReflectionPad2DBackward0", **_C_NN)
def reflection_pad2d(input, padding):
    """Pad the last 2 dims by reflecting about their edges."""
    return _reflection_pad(input, padding, 2)


@op(promote="none", grad="ReflectionPad3DBackward0", **_C_NN)
def reflection_pad3d(input, padding):
    """Pad the last 3 dims by reflecting about their edges."""
    return _reflection_pad(input, padding, 3)


@op(promote="none", grad="ReplicationPad1DBackward0", **_C_NN)
def replication_pad1d(input, padding):
    """Pad the last dim by repeating its edge values."""
    return _replication_pad(input, padding, 1)


@op(promote="none", grad="ReplicationPad2DBackward0", **_C_NN)
def replication_pad2d(input, padding):
    """Pad the last 2 dims by repeating their edge values."""
    return _replication_pad(input, padding, 2)


@op(promote="none", grad="ReplicationPad3DBackward0", **_C_NN)
def replication_pad3d(input, padding):
    """Pad the last 3 dims by repeating their edge values."""
    return _replication_pad(input, padding, 3)


@op(promote="none", function=False, method=False, grad="CopySlices", saves=())
def _pad_circular(input, padding):
    """Pad the last len(padding) / 2 dims by wrapping around; negative amounts crop first, and
    the wrap then repeats the cropped tensor."""
    pad = [int(p) for p in padding]
    pairs = _pad_pairs(pad, input.ndim)
    for size, (lo, hi) in zip(input.shape, pairs):
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + lo + hi < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        if size + min(lo, 0) + min(hi, 0) == 0 and max(lo, hi) > 0:
            # nothing is left to wrap (PyTorch would copy uninitialised memory)
            raise RuntimeError("Padding value causes wrapping around more than once.")
    x = lax.pad(input, jnp.zeros((), input.dtype), [(min(lo, 0), min(hi, 0), 0)
                                                     for lo, hi in pairs])
    return _take_padded(x, [max(p, 0) for p in pad], lambda i, n: np.mod(i, n))
