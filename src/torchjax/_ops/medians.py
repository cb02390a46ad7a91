"""Op-table rows: median, nanmedian (all elements or along a dim) and mode, with the
composites that route between the two forms."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _dtypes
from ._registry import function, op
from .reduction import _dim1, _inexact, _nonempty


def _spread(x, v):
    """v (no gradient of its own) whose gradient is spread evenly over the elements equal to
    it: PyTorch's backward of the full median."""
    v = jax.lax.stop_gradient(v)
    if not _inexact(x):
        return v
    hit = (x == v) | (jnp.isnan(x) & jnp.isnan(v))
    count = jnp.sum(hit).astype(x.dtype)
    return v + jnp.sum(jnp.where(hit, x - v, 0)) / count


def _lower_median_flat(x, skip_nan):
    """The lower middle of the sorted elements (NaN if any, or all with skip_nan, are NaN)."""
    flat = x.reshape(-1)
    if flat.size == 0:
        return jnp.full((), jnp.nan, x.dtype if _inexact(x) else jnp.float32).astype(x.dtype)
    s = jnp.sort(flat)  # NaN sorts last
    if not _inexact(x):
        return s[(flat.size - 1) // 2]
    nan = jnp.isnan(flat)
    if skip_nan:
        n = flat.size - jnp.sum(nan)
        return s[jnp.maximum(n - 1, 0) // 2]
    return jnp.where(jnp.any(nan), jnp.nan, s[(flat.size - 1) // 2])


def _median_dim(x, dim, keepdim, name, skip_nan):
    d = _dim1(dim, x.ndim, name)
    if x.ndim == 0:
        return x, jnp.zeros((), jnp.int64)
    _nonempty(x, (d,), name)
    # a stable sort picks among equal values the one PyTorch's selection returns
    order = jnp.argsort(x, axis=d, stable=True)
    n = x.shape[d]
    if _inexact(x):
        nan = jnp.isnan(x)
        n_nan = jnp.sum(nan, axis=d, keepdims=True)
        if skip_nan:
            k = jnp.maximum(n - n_nan - 1, 0) // 2
            idx = jnp.take_along_axis(order, k, axis=d)
        else:
            idx = jnp.take_along_axis(order, jnp.full(n_nan.shape, (n - 1) // 2), axis=d)
            idx = jnp.where(n_nan > 0, jnp.argmax(nan, axis=d, keepdims=True), idx)
    else:
        idx = jax.lax.slice_in_dim(order, (n - 1) // 2, (n - 1) // 2 + 1, axis=d)
    idx = idx.astype(jnp.int64)
    vals = jnp.take_along_axis(x, idx, axis=d)
    if not keepdim:
        vals, idx = jnp.squeeze(vals, d), jnp.squeeze(idx, d)
    return vals, idx


@op(promote="none", function=False, method=False, grad="MedianBackward0",
    saves=("input", "result"))
def _median_all(input):
    return _spread(input, _lower_median_flat(input, False))


@op(promote="none", function=False, method=False, grad="NanmedianBackward0",
    saves=("input", "result"))
def _nanmedian_all(input):
    return _spread(input, _lower_median_flat(input, True))


@op(name="median", promote="none", function=False, method=False,
    out_names=("values", "indices"), grad="MedianBackward1", saves=())
def _median_dim_row(input, dim=-1, keepdim=False):
    """Lower median along dim and its index; the gradient goes to that index."""
    if input.dtype == jnp.bool_:
        raise NotImplementedError("\"median_cpu\" not implemented for 'Bool'")
    return _median_dim(input, dim, keepdim, "median", False)


@op(name="nanmedian", promote="none", function=False, method=False,
    out_names=("values", "indices"), grad="NanmedianBackward1", saves=())
def _nanmedian_dim_row(input, dim=-1, keepdim=False):
    """Lower median of the non-NaN values along dim and its index."""
    if input.dtype == jnp.bool_:
        raise NotImplementedError("\"nanmedian_cpu\" not implemented for 'Bool'")
    return _median_dim(input, dim, keepdim, "nanmedian", True)


def _route_median(name, input, dim, keepdim):
    from .._dispatch import PREPARED, dispatch
    if dim is None:
        if keepdim is not False:
            raise TypeError(f"{name}() missing 1 required positional arguments: \"dim\"")
        if input.dtype == _dtypes.bool:
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for 'Bool'")
        return dispatch(PREPARED[f"_{name}_all"], (input,), ())
    return dispatch(PREPARED[name], (input,), (dim, keepdim))


@function(name="median")
def _median(input, dim=None, keepdim=False):
    """median(input) -> the lower middle value (ties share the gradient);
    median(input, dim, keepdim=False) -> (values, indices)."""
    return _route_median("median", input, dim, keepdim)


@function(name="nanmedian")
def _nanmedian(input, dim=None, keepdim=False):
    """median ignoring NaN: nanmedian(input) or nanmedian(input, dim, keepdim=False)."""
    return _route_median("nanmedian", input, dim, keepdim)


@op(promote="none", out_names=("values", "indices"), saves=())
def mode(input, dim=-1, keepdim=False):
    """Most frequent value along dim (the smallest on ties) and its last index."""
    d = _dim1(dim, input.ndim, "mode")
    if input.ndim == 0:
        return input, jnp.zeros((), jnp.int64)
    _nonempty(input, (d,), "mode")
    x = jnp.moveaxis(jax.lax.stop_gradient(input), d, -1)
    n = x.shape[-1]
    s = jnp.sort(x, axis=-1)
    counts = jnp.sum(s[..., :, None] == s[..., None, :], axis=-1)
    # the first sorted element with the highest count is the smallest most frequent value
    best = jnp.take_along_axis(s, jnp.argmax(counts, axis=-1, keepdims=True), axis=-1)
    last = n - 1 - jnp.argmax(jnp.flip(x == best, axis=-1), axis=-1, keepdims=True)
    idx = jnp.moveaxis(last.astype(jnp.int64), -1, d)
    vals = jnp.take_along_axis(input, idx, axis=d)
    if not keepdim:
        vals, idx = jnp.squeeze(vals, d), jnp.squeeze(idx, d)
    return vals, idx
