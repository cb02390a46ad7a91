"""Rows behind Tensor methods that are not public torch functions (dtype/device moves, clone)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._strides import copy_layout, preserve_layout
from ._registry import function, numbered, op


@op(tensors=("input",), promote="none", function=False, method=False, grad="ToCopyBackward0",
    needs=(), layout=preserve_layout)
def _to_dtype(input, dtype):
    if jnp.issubdtype(input.dtype, jnp.complexfloating) and not (
            dtype.is_complex):
        input = jnp.real(input)
    return input.astype(dtype.np)


@op(tensors=("input",), promote="none", function=False, method=False, grad="ToCopyBackward0",
    needs=(), layout=preserve_layout)
def _to_device(input, device):
    return jax.device_put(input, device)


@op(tensors=("input",), promote="none", needs=(), layout=copy_layout)
def clone(input, *, memory_format=None):
    """A copy of input that takes part in autograd."""
    return jnp.array(input, copy=True)


@op(tensors=("input", "value"), promote="none", method=False, inplace=True, needs=(),
    grad=numbered("Fill", {"s": 0, "t": 1}, "value"), inplace_overloads=2)
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
