"""Rows behind Tensor methods that are not public torch functions (dtype/device moves, clone)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .._strides import copy_layout, preserve_layout
from ._registry import function, numbered, op


@op(tensors=("input",), promote="none", function=False, method=False, grad="ToCopyBackward0",
    needs=(), layout=preserve_layout)
def _to_dtype(input, dtype):
    if jnp.issubdtype(input.dtype, jnp.complexfloating) and not (
            dtype.is_complex):
        input = jnp.real(input)
    if dtype.name == "float8_e4m3fn" and jnp.issubdtype(input.dtype, jnp.floating):
        # PyTorch's conversion saturates at the largest finite value (e4m3fn has no infinity;
        # a plain cast gives NaN beyond it)
        input = jnp.clip(input, -448, 448)
    return input.astype(dtype.np)


@op(tensors=("input",), promote="none", function=False, method=False, grad="ToCopyBackward0",
    needs=(), layout=preserve_layout)
def _to_device(input, device):
    return jax.device_put(input, device)


@op(tensors=("input",), promote="none", needs=(), layout=copy_layout)
def clone(input, *, memory_format=None):
    """A copy of input that takes part in autograd."""
    return jnp.array(input, copy=True)


# the C++ type names of c10's checked_convert message
_CONVERT_NAMES = {
    "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
    "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
    "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}


def _overflows(value, np_dtype) -> bool:
    """Whether c10's checked_convert refuses the Python number `value` in this dtype: a real
    or complex value beyond the dtype's finite range (infinities and NaN are floats' own), a
    float that is NaN, infinite or out of range for an integer dtype, an int out of range
    (for an unsigned dtype a negative int wraps if its magnitude fits, as C's conversion)."""
    if np_dtype == np.bool_ or isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, complex):
        if not jnp.issubdtype(np_dtype, jnp.complexfloating) and value.imag != 0:
            return True
        parts = (value.real, value.imag)
    else:
        parts = (value,)
    if jnp.issubdtype(np_dtype, jnp.integer):
        info = np.iinfo(np_dtype)
        v = parts[0]  # (a complex value with no imaginary part: its real part)
        if isinstance(v, (float, np.floating)):
            return not math.isfinite(v) or v < info.min or v > info.max
        v = int(v)
        if info.min == 0 and v < 0:
            return -v > info.max
        return v < info.min or v > info.max
    top = float(jnp.finfo(np_dtype).max)
    try:
        return any(math.isfinite(float(v)) and abs(float(v)) > top for v in parts)
    except OverflowError:  # an int beyond float64
        return True


def _check_fill_value(input, value, **_):
    if type(value) is int and not -(2**63) <= value < 2**64:
        # (a Python int becomes a 64-bit Scalar first, as in PyTorch's argument parser)
        raise OverflowError("int too big to convert" if value > 0
                            else "can't convert negative int to unsigned")
    if isinstance(value, (int, float, complex, np.number)):
        np_dtype = np.dtype(input.dtype.np)
        if _overflows(value, np_dtype):
            name = _CONVERT_NAMES.get(np_dtype.name, np_dtype.name)
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")


@op(tensors=("input", "value"), promote="none", method=False, inplace=True, needs=(),
    grad=numbered("Fill", {"s": 0, "t": 1}, "value"), inplace_overloads=2,
    check=_check_fill_value)
def fill(input, value):
    """A tensor shaped like input, filled with value (Tensor.fill_ writes it in place)."""
    return jnp.broadcast_to(jnp.asarray(value).astype(input.dtype), input.shape)


@op(promote="none", function=False, method=False, inplace=True, needs=(), grad="ZeroBackward0")
def zero(input):
    """Zeros shaped like input (Tensor.zero_)."""
    return jnp.zeros_like(input)


@op(tensors=("input", "src"), promote="none", function=False, method=False, inplace=True,
    needs=(), grad="CopyBackwards")
def _copy_from(input, src):
    """src's values in input's dtype and shape (behind Tensor.copy_ and inplace=True forms)."""
    return jnp.broadcast_to(src.astype(input.dtype), input.shape)


@function(name="copy_", function=False)
def copy_(self, src, non_blocking: bool = False):
    """Copy src's values into self (broadcast, cast to self's dtype), recorded for autograd."""
    from .._dispatch import PREPARED, dispatch_inplace
    return dispatch_inplace(PREPARED["_copy_from"], (self, src), ())
