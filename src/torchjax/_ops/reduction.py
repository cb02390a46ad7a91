"""Reductions over dims: sum, mean, prod, max/min, std/var, norm, logsumexp, cumulative ops."""

from __future__ import annotations

import jax.numpy as jnp

from ._registry import op


def _dims(dim, ndim):
    """PyTorch's dim argument (None, int, or a sequence; [] means all) as a tuple for jnp."""
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = (dim,)
    if len(dim) == 0:
        return None
    n = max(ndim, 1)
    out = []
    for d in dim:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
        out.append(d % n)
    return tuple(out) if ndim else None


def _acc_dtype(x, dtype):
    """Sums of bool and integer tensors are int64 unless a dtype is given."""
    if dtype is not None:
        return x.astype(dtype.np)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return x.astype(jnp.int64)
    return x


@op(promote="none", needs=())
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over dim (all dims by default)."""
    return jnp.sum(_acc_dtype(input, dtype), axis=_dims(dim, input.ndim), keepdims=keepdim)


@op(promote="none", needs=())
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over dim; needs a floating or complex input (or a dtype)."""
    if dtype is not None:
        input = input.astype(dtype.np)
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        from .. import _dtypes
        name = _dtypes.SCALAR_NAMES[_dtypes.from_jax(input.dtype).name]
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {name}")
    return jnp.mean(input, axis=_dims(dim, input.ndim), keepdims=keepdim)
