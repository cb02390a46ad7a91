"""Op-table rows: torch.fake_quantize_per_tensor_affine and fake_quantize_per_channel_affine.

Quantization-aware training rounds values to a quantization grid and maps them back to floats
("fake" quantization: the result is a float tensor). The backward is PyTorch's straight-through
estimator: the gradient passes unchanged where the quantized value fell inside
[quant_min, quant_max] and is zero where it was clamped (PyTorch's "cachemask" kernels).

The arithmetic follows PyTorch's CPU kernels so results agree bit for bit: the scale is a
float32; x is multiplied by its float32 reciprocal (x * (1/scale), not x / scale: the two
differ at exact halves), rounded half to even, and the result is (clamped q - zero_point) *
scale in the input's dtype (see _quantized for which steps are float32).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes
from .._autograd.grad_mode import STATE
from ._registry import op

_FLAGS = dict(promote="none", method=False, needs=("input", "scale", "zero_point"))


@functools.partial(jax.custom_jvp, nondiff_argnums=(3, 4, 5, 6))
def _fake_quant(x, scale, zero_point, quant_min, quant_max, float_zero_point, per_channel):
    return _quantized(x, scale, zero_point, quant_min, quant_max, float_zero_point,
                      per_channel)[0]


def _quantized(x, scale, zero_point, quant_min, quant_max, float_zero_point, per_channel):
    """(the fake-quantized x, the mask of values that were not clamped)."""
    # x is multiplied by the float32 reciprocal of the float32 scale, in float64 for a float64
    # input (float32 otherwise); the grid value (q - zero_point) * scale is a float32 product
    # in the per-tensor kernel (a float64 input gets float32(-1.1)) and a float64 one in the
    # per-channel kernel (-11 * float32(0.1) in float64)
    ct = jnp.float64 if x.dtype == jnp.float64 else jnp.float32
    scale = scale.astype(jnp.float32)
    xs = x.astype(ct) * (jnp.float32(1) / scale).astype(ct)
    zp = zero_point.astype(ct)
    # PyTorch adds an integer zero point after rounding and a float one before it
    q = jnp.round(xs + zp) if float_zero_point else jnp.round(xs) + zp
    mask = (q >= quant_min) & (q <= quant_max)
    grid = jnp.clip(q, quant_min, quant_max) - zp
    out = grid * scale.astype(ct) if per_channel else grid.astype(jnp.float32) * scale
    return out.astype(x.dtype), mask


@_fake_quant.defjvp
def _fake_quant_jvp(quant_min, quant_max, float_zero_point, per_channel, primals, tangents):
    x, scale, zero_point = primals
    out, mask = _quantized(x, scale, zero_point, quant_min, quant_max, float_zero_point,
                           per_channel)
    # straight through where not clamped; scale and zero_point are not differentiable
    return out, jnp.where(mask, tangents[0], jnp.zeros((), tangents[0].dtype))


def _is_tensor(a) -> bool:
    return hasattr(a, "_data")


def _no_grad_for(fname, arg, t):
    if _is_tensor(t) and t.requires_grad and STATE.grad_enabled:
        raise RuntimeError(f"The function '{fname}' is not differentiable with respect to "
                           f"argument '{arg}'. This input cannot have requires_grad True.")


def _check_input(input, kernel):
    if not (input.is_floating_point()):
        name = _dtypes.SCALAR_NAMES[input.dtype.name]
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


def _check_range(quant_min, quant_max):
    # PyTorch's message keeps the spaces of a C++ line continuation
    if quant_min > quant_max:
        raise RuntimeError("`quant_min` should be less than or         equal to `quant_max`.")


def _values(t):
    """t's values on the host, or None while tracing (the checks then cannot read them)."""
    a = t._data
    return None if isinstance(a, jax.core.Tracer) else np.asarray(a)


# ------------------------------------------------------------------ per tensor

_PER_TENSOR = "FakeQuantizePerTensorAffineCachemask"


def _per_tensor_grad(scale=None, **_):
    tensor_qparams = _is_tensor(scale)
    return f"{_PER_TENSOR}{'TensorQparams' if tensor_qparams else ''}Backward0"


def _check_per_tensor(input, scale, zero_point, quant_min, quant_max):
    tensor_qparams = _is_tensor(scale) and _is_tensor(zero_point)
    if _is_tensor(scale) != _is_tensor(zero_point) or (
            not tensor_qparams and not isinstance(zero_point, (int, np.integer))):
        kinds = ", ".join(type(a).__name__ if not _is_tensor(a) else "Tensor"
                          for a in (input, scale, zero_point, quant_min, quant_max))
        raise TypeError(
            f"fake_quantize_per_tensor_affine() received an invalid combination of arguments - "
            f"got ({kinds}), but expected one of:\n"
            " * (Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max)\n"
            " * (Tensor input, float scale, int zero_point, int quant_min, int quant_max)")
    fname = ("_fake_quantize_per_tensor_affine_cachemask_tensor_qparams" if tensor_qparams
             else "fake_quantize_per_tensor_affine_cachemask")
    _no_grad_for(fname, "scale", scale)
    _no_grad_for(fname, "zero_point", zero_point)
    _check_range(quant_min, quant_max)
    if tensor_qparams:
        for t in (scale, zero_point):
            if t.numel() != 1:
                raise RuntimeError(f"a Tensor with {t.numel()} elements cannot be converted "
                                   f"to Scalar")
    elif not quant_min <= zero_point <= quant_max:
        # only the scalar overload checks the zero point (the tensor one is used by observers
        # whose zero point is known to be in range)
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    _check_input(input, "fake_quantize_tensor_cachemask_kernel_type_handling")


@op(tensors=("input", "scale", "zero_point"), grad=_per_tensor_grad, check=_check_per_tensor,
    **_FLAGS)
def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """Round input to the grid scale * (q - zero_point), q in [quant_min, quant_max], as floats."""
    scale = jnp.reshape(jnp.asarray(scale), ())
    # a tensor zero point is read as an integer (a float one truncated), as PyTorch does
    zero_point = jnp.trunc(jnp.reshape(jnp.asarray(zero_point), ()))
    return _fake_quant(input, scale, zero_point, quant_min, quant_max, False, False)


# ------------------------------------------------------------------ per channel

def _check_per_channel(input, scale, zero_point, axis, quant_min, quant_max):
    fname = "fake_quantize_per_channel_affine_cachemask"
    for name, t in (("input", input), ("scale", scale), ("zero_point", zero_point)):
        if not _is_tensor(t):
            raise TypeError(f"fake_quantize_per_channel_affine(): argument '{name}' (position "
                            f"{('input', 'scale', 'zero_point').index(name) + 1}) must be "
                            f"Tensor, not {type(t).__name__}")
    _no_grad_for(fname, "scale", scale)
    _no_grad_for(fname, "zero_point", zero_point)
    if scale.dtype.name not in ("float32", "bfloat16"):
        raise RuntimeError(f"Scale must be Float or BFloat16, found "
                           f"{_dtypes.SCALAR_NAMES[scale.dtype.name]}")
    if zero_point.dtype.name not in ("int32", "float32", "float16"):
        raise RuntimeError(f"Zero-point must be Int32, Float or Half, found "
                           f"{_dtypes.SCALAR_NAMES[zero_point.dtype.name]}")
    if scale.dim() != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.dim() != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zero_point.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    if scale.numel() != input.size(axis):
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input "
                           "tensor")
    _check_range(quant_min, quant_max)
    if not zero_point.is_floating_point():
        zp = _values(zero_point)
        if zp is not None and zp.size and (zp.min() < quant_min or zp.max() > quant_max):
            raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    if not 0 <= axis <= input.dim():
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    _check_input(input, "fake_quantize_channel_cachemask_cpu_type_handling")


@op(tensors=("input", "scale", "zero_point"), grad="FakeQuantizePerChannelAffineCachemaskBackward0",
    check=_check_per_channel, **_FLAGS)
def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """fake_quantize_per_tensor_affine with one scale and zero point per index along axis."""
    shape = [1] * input.ndim
    shape[axis] = -1
    float_zero_point = jnp.issubdtype(zero_point.dtype, jnp.floating)
    return _fake_quant(input, scale.reshape(shape), zero_point.reshape(shape), quant_min,
                       quant_max, bool(float_zero_point), True)
