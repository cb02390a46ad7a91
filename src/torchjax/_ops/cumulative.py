"""Op-table rows: cumulative ops along a dim: cumsum, cumprod, logcumsumexp, cummax, cummin."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._registry import op
from .reduction import _acc_dtype, _dim1, _inexact, _tname


@op(promote="none", inplace=True, needs=())
def cumsum(input, dim, *, dtype=None):
    """Running sum along dim; bool and integer inputs give int64."""
    d = _dim1(dim, input.ndim, "cumsum")
    x = _acc_dtype(input, dtype)
    return x if x.ndim == 0 else jnp.cumsum(x, axis=d)


@op(promote="none", inplace=True, saves=("input", "result"))
def cumprod(input, dim, *, dtype=None):
    """Running product along dim; exact gradients with zeros."""
    d = _dim1(dim, input.ndim, "cumprod")
    x = _acc_dtype(input, dtype)
    return x if x.ndim == 0 else jnp.cumprod(x, axis=d)


@op(promote="none", saves=("input", "result"))
def logcumsumexp(input, dim):
    """Running logsumexp along dim."""
    d = _dim1(dim, input.ndim, "logcumsumexp")
    if not _inexact(input):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{_tname(input.dtype)}'")
    return input if input.ndim == 0 else jax.lax.cumlogsumexp(input, axis=d)


def _cum_extreme(input, dim, name, better):
    """Running (values, indices); NaN beats numbers and a later tie (NaN too) wins, as in
    PyTorch."""
    d = _dim1(dim, input.ndim, name)
    if input.ndim == 0:
        return input, jnp.zeros((), jnp.int64)
    shape = [1] * input.ndim
    shape[d] = input.shape[d]
    pos = jnp.broadcast_to(jnp.arange(input.shape[d], dtype=jnp.int64).reshape(shape),
                           input.shape)

    def combine(a, b):
        (va, ia), (vb, ib) = a, b
        if jnp.issubdtype(va.dtype, jnp.inexact):
            take_b = jnp.isnan(vb) | (~jnp.isnan(va) & better(vb, va))
        else:
            take_b = better(vb, va)
        return jnp.where(take_b, vb, va), jnp.where(take_b, ib, ia)

    _, idx = jax.lax.associative_scan(combine, (jax.lax.stop_gradient(input), pos), axis=d)
    return jnp.take_along_axis(input, idx, axis=d), idx


@op(promote="none", out_names=("values", "indices"), saves=("input",))
def cummax(input, dim):
    """Running maximum along dim and where it was found; the gradient goes to that index."""
    return _cum_extreme(input, dim, "cummax", jnp.greater_equal)


@op(promote="none", out_names=("values", "indices"), saves=("input",))
def cummin(input, dim):
    """Running minimum along dim and where it was found; the gradient goes to that index."""
    return _cum_extreme(input, dim, "cummin", jnp.less_equal)

