"""Op-table rows: complex-number basics."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from .. import _dtypes
from ._registry import function, op


def _type_name(dtype):
    return _dtypes.SCALAR_NAMES[_dtypes.from_jax(dtype).name]


def _is_complex(x):
    return jnp.issubdtype(x.dtype, jnp.complexfloating)


# Writes through these views keep the other half of each complex element.
def _write_real(input, new):
    return jax.lax.complex(new, jnp.imag(input)) if _is_complex(input) else new


def _write_imag(input, new):
    return jax.lax.complex(jnp.real(input), new)


def _write_pairs(input, new):
    return jax.lax.complex(new[..., 0], new[..., 1])


def _write_complex(input, new):
    return jnp.stack([jnp.real(new), jnp.imag(new)], axis=-1)


# Tensor.real and Tensor.imag are properties in PyTorch, so these rows have no method form.
@op(promote="none", method=False, needs=(), grad="SelectBackward0", view=True,
    view_write=_write_real)
def real(input):
    """The real part of input (input itself for a real tensor)."""
    return jnp.real(input) if _is_complex(input) else input


@op(promote="none", method=False, needs=(), grad="SelectBackward0", view=True,
    view_write=_write_imag)
def imag(input):
    """The imaginary part of a complex input."""
    if not _is_complex(input):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return jnp.imag(input)


@op(promote="float")
def angle(input):
    """The argument of each element in radians; pi for negative reals, 0 otherwise."""
    if _is_complex(input):
        # PyTorch's gradient at 0 is 0, where jnp.angle's is NaN
        zero = input == 0
        safe = jnp.where(zero, jnp.ones((), input.dtype), input)
        return jnp.where(zero, jax.lax.stop_gradient(jnp.angle(input)), jnp.angle(safe))
    # jnp.angle(-0.0) is pi; PyTorch gives 0 there, passes NaN through, and its gradient for
    # real inputs is 0 everywhere (NaN included)
    pi = jnp.asarray(math.pi, input.dtype)
    zero = jnp.zeros((), input.dtype)
    x = jax.lax.stop_gradient(input)
    return jnp.where(jnp.isnan(x), x, jnp.where(x < 0, pi, zero))


@op(promote="none", needs=())
def conj(input):
    """The complex conjugate (input itself for a non-complex tensor)."""
    return jnp.conj(input) if _is_complex(input) else input


@op(promote="none", inplace=True, needs=(), inplace_overloads=1)
def conj_physical(input):
    """The complex conjugate, materialised (input itself for a non-complex tensor)."""
    return jnp.conj(input) if _is_complex(input) else input


@function()
def resolve_conj(input):
    """input, with any lazy conjugation applied; torchjax conjugates eagerly."""
    return input


@function()
def resolve_neg(input):
    """input, with any lazy negation applied; torchjax negates eagerly."""
    return input


@function()
def is_conj(input):
    """Whether input has PyTorch's lazy conjugate bit: never in torchjax."""
    return False


@function()
def is_neg(input):
    """Whether input has PyTorch's lazy negative bit: never in torchjax."""
    return False


@op(promote="none", method=False, needs=(), view=True, view_write=_write_pairs)
def view_as_real(input):
    """A complex tensor as a real one with a trailing dim of size 2 (real, imag)."""
    if not _is_complex(input):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return jnp.stack([jnp.real(input), jnp.imag(input)], axis=-1)


@op(promote="none", method=False, needs=(), view=True, view_write=_write_complex)
def view_as_complex(input):
    """A real tensor whose last dim has size 2 as a complex tensor."""
    if input.dtype not in (jnp.float32, jnp.float64):
        if input.dtype == jnp.float16:
            raise NotImplementedError("view_as_complex of a float16 tensor would be complex32, "
                                      "which torchjax does not support")
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {_type_name(input.dtype)}")
    if input.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return jnp.asarray(input[..., 0], jnp.result_type(input.dtype, jnp.complex64)) \
        + 1j * input[..., 1]


def _check_pair(a, b, name):
    if not (jnp.issubdtype(a.dtype, jnp.floating) and jnp.issubdtype(b.dtype, jnp.floating)) \
            or jnp.bfloat16 in (a.dtype, b.dtype):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_type_name(a.dtype)} and {_type_name(b.dtype)}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"Expected object of scalar type {_type_name(a.dtype)} but got scalar "
                           f"type {_type_name(b.dtype)} for second argument")
    if a.dtype == jnp.float16:
        raise NotImplementedError(f"{name} of float16 tensors would be complex32, which torchjax "
                                  "does not support")
    return jnp.result_type(a.dtype, jnp.complex64)


@op(tensors=("real", "imag"), promote="none", method=False, needs=(),
    saves={"real": ("real",), "imag": ("imag",)})
def complex(real, imag):
    """The complex tensor real + imag * 1j (both float32 or both float64)."""
    ct = _check_pair(real, imag, "complex")
    return jnp.asarray(real, ct) + 1j * jnp.asarray(imag, ct)


@op(tensors=("abs", "angle"), promote="none", method=False, saves=("result",))
def polar(abs, angle):
    """The complex tensor abs * (cos(angle) + sin(angle) * 1j)."""
    ct = _check_pair(abs, angle, "polar")
    # PyTorch's gradient for abs is re(conj(grad) * sgn(result)): sign(abs) times the true one
    # (so 0 at abs == 0); r has abs's value and that derivative
    mag = abs * jax.lax.stop_gradient(jnp.sign(abs))
    r = mag + jax.lax.stop_gradient(abs - mag)
    return jnp.asarray(r * jnp.cos(angle), ct) + 1j * (r * jnp.sin(angle))
