"""Rows over sequences of samples: diff, trapezoid / cumulative_trapezoid, quantile /
nanquantile, cov and corrcoef."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _dtypes
from ._registry import op


def _type_name(dtype):
    return _dtypes.SCALAR_NAMES[_dtypes.from_jax(dtype).name]


def _wrap(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


# -- differences and integrals -----------------------------------------------------------------

@op(tensors=("input", "prepend", "append"), promote="none", grad="SubBackward0", saves=())
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along dim, after prepending / appending values."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap(dim, input.ndim)
    parts = []
    for extra in (prepend, input, append):
        if extra is None:
            continue
        extra = jnp.asarray(extra)
        if extra.ndim == 0:  # a scalar stands for a slice of size 1 along dim
            shape = list(input.shape)
            shape[d] = 1
            extra = jnp.broadcast_to(extra, shape)
        parts.append(extra)
    x = jnp.concatenate(parts, axis=d) if len(parts) > 1 else input
    for _ in range(n):
        if x.shape[d] == 0:
            break
        hi = jax.lax.slice_in_dim(x, 1, None, axis=d)
        lo = jax.lax.slice_in_dim(x, 0, -1, axis=d)
        x = jnp.logical_xor(hi, lo) if x.dtype == jnp.bool_ else hi - lo
    return x


def _spacing(y, x, dx, d):
    """The widths between samples along dim d: from x's differences, or the constant dx."""
    if x is None:
        return jnp.asarray(1.0 if dx is None else dx, y.dtype)
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[d] = -1
        x = x.reshape(shape)
        return jnp.diff(x, axis=d)
    return jnp.diff(x, axis=_wrap(d - y.ndim, x.ndim) if x.ndim < y.ndim else d)


def _trapezoid_dtype(y, x):
    dt = jnp.result_type(y, x) if x is not None else y.dtype
    if not jnp.issubdtype(dt, jnp.inexact):
        dt = _dtypes.get_default_dtype().np
    return dt


@op(tensors=("y", "x"), promote="none", aliases=("trapz",),
    grad=lambda x=None, **_: "MulBackward1" if x is None else "DivBackward1", saves=())
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of y along dim by the trapezoid rule (sample points x, or spacing dx)."""
    if x is not None and dx is not None:
        raise NotImplementedError("trapezoid: pass either x or dx, not both (as PyTorch)")
    d = _wrap(dim, y.ndim)
    dt = _trapezoid_dtype(y, x)
    y = y.astype(dt)
    if y.shape[d] == 0:
        return jnp.sum(y, axis=d)
    w = _spacing(y, None if x is None else x.astype(dt), dx, d)
    hi = jax.lax.slice_in_dim(y, 1, None, axis=d)
    lo = jax.lax.slice_in_dim(y, 0, -1, axis=d)
    if x is None:
        return jnp.sum(hi + lo, axis=d) * (w / 2)
    return jnp.sum((hi + lo) * w, axis=d) / 2


@op(tensors=("y", "x"), promote="none",
    grad=lambda x=None, **_: "CumsumBackward0" if x is None else "DivBackward1", saves=())
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid-rule integral of y along dim (one fewer element along dim)."""
    if x is not None and dx is not None:
        raise NotImplementedError("cumulative_trapezoid: pass either x or dx, not both")
    d = _wrap(dim, y.ndim)
    dt = _trapezoid_dtype(y, x)
    y = y.astype(dt)
    hi = jax.lax.slice_in_dim(y, 1, None, axis=d)
    lo = jax.lax.slice_in_dim(y, 0, -1, axis=d)
    if y.shape[d] == 0:
        return hi
    w = _spacing(y, None if x is None else x.astype(dt), dx, d)
    return jnp.cumsum((hi + lo) * w / 2, axis=d)


# -- quantiles ---------------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check_quantile(input, q, dim=None, keepdim=False, interpolation="linear", name="quantile"):
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if not input.dtype.is_floating_point or input.dtype.itemsize < 4:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if hasattr(q, "_data"):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        a = q._data
        if not isinstance(a, jax.core.Tracer) and bool(jnp.any((a < 0) | (a > 1))):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    elif not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")


def _check_nanquantile(**kw):
    _check_quantile(**kw, name="nanquantile")


def _lerp(a, b, w):
    # PyTorch's lerp formula (its quantile interpolates with at::lerp)
    return jnp.where(w < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    x = input.reshape(-1) if dim is None else jnp.moveaxis(input, _wrap(dim, input.ndim), -1)
    if x.ndim == 0:
        x = x.reshape(1)
    n = x.shape[-1]
    s = jnp.sort(x, axis=-1)  # NaNs sort last
    qv = jnp.asarray(q, x.dtype)
    scalar_q = qv.ndim == 0
    qv = qv.reshape(-1)
    nan = jnp.isnan(x)
    if ignore_nan:
        count = jnp.sum(~nan, axis=-1, keepdims=True).astype(x.dtype)
        # an all-NaN slice takes rank 0 (a NaN), as PyTorch
        rank = jnp.maximum(qv * (count - 1), 0)
    else:
        rank = jnp.broadcast_to(qv * (n - 1), x.shape[:-1] + qv.shape)
        rank = jnp.where(jnp.any(nan, axis=-1, keepdims=True), n - 1, rank)
    if interpolation == "lower":
        rank = jnp.floor(rank)
    elif interpolation == "higher":
        rank = jnp.ceil(rank)
    elif interpolation == "nearest":
        rank = jnp.round(rank)  # half to even, as PyTorch's round
    lo = jnp.floor(rank).astype(jnp.int32)
    hi = jnp.ceil(rank).astype(jnp.int32)
    below = jnp.take_along_axis(s, lo, axis=-1)
    above = jnp.take_along_axis(s, hi, axis=-1)
    w = jnp.full_like(rank, 0.5) if interpolation == "midpoint" else rank - lo
    out = jnp.moveaxis(_lerp(below, above, w), -1, 0)
    if keepdim:
        if dim is None:
            out = out.reshape(out.shape[:1] + (1,) * input.ndim)
        else:
            out = jnp.expand_dims(out, 1 + _wrap(dim, input.ndim))
    return out[0] if scalar_q else out


@op(tensors=("input", "q"), promote="none", check=_check_quantile, grad="SqueezeBackward4",
    saves=())
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles of input along dim (of all elements when dim is None); NaN where a
    slice holds a NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, False)


@op(tensors=("input", "q"), promote="none", check=_check_nanquantile, grad="SqueezeBackward4",
    saves=())
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile ignoring NaNs (NaN only where a slice is all NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, True)


# -- covariance --------------------------------------------------------------------------------

def _cov(input, correction, fweights, aweights):
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        x = x.astype(_dtypes.get_default_dtype().np)
    n_obs = x.shape[1]
    w = None
    for name, v in (("fweights", fweights), ("aweights", aweights)):
        if v is None:
            continue
        if v.ndim > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but "
                               f"got {name} with {v.ndim} dimensions")
        if v.shape[0] != n_obs:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                               f"observations in the input but got {v.shape[0]} != {n_obs}")
        w = v if w is None else w * v
    if w is None:
        avg = jnp.mean(x, axis=1)
        norm = jnp.asarray(n_obs - correction, x.dtype)
    else:
        w = w.astype(x.real.dtype)
        w_sum = jnp.sum(w)
        avg = jnp.sum(x * w, axis=1) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * jnp.sum(w * aweights) / w_sum
    norm = jnp.maximum(norm, 0)  # PyTorch warns and divides by zero here
    xm = x - avg[:, None]
    xw = xm if w is None else xm * w
    c = jnp.matmul(xw, jnp.conj(xm).T) / norm
    return c if input.ndim == 2 else c.reshape(())


@op(tensors=("input", "fweights", "aweights"), promote="none", grad="SqueezeBackward0",
    saves={"input": ("aweights",), "aweights": ("input", "aweights")})
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in input's rows (observations in columns)."""
    return _cov(input, correction, fweights, aweights)


@op(promote="none", grad=lambda input: "DivBackward0" if input.ndim < 2 else "ClampBackward1",
    saves=())
def corrcoef(input):
    """Pearson correlation coefficients of the variables in input's rows."""
    c = _cov(input, 1, None, None)
    if c.ndim == 0:
        return c / c
    std = jnp.sqrt(jnp.real(jnp.diagonal(c)))
    c = c / std[:, None] / std[None, :]
    if jnp.iscomplexobj(c):
        return jax.lax.complex(jnp.clip(c.real, -1, 1), jnp.clip(c.imag, -1, 1))
    return jnp.clip(c, -1, 1)
