"""Op-table rows: variance and standard deviation (std, var, std_mean, var_mean), with the
composites that turn the legacy std(input, unbiased) form into the rows' arguments."""

from __future__ import annotations

import builtins
import math

import jax.numpy as jnp

from ._registry import function, op
from .reduction import _dims, _inexact


def _moments(input, dim, unbiased, keepdim, correction, name):
    """(variance, mean) over dim; correction 1 unless given or unbiased=False."""
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both "
                        "unbiased and correction")
    if not _inexact(input):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if correction is None:
        correction = 0 if unbiased is False else 1
    axes = _dims(dim, input.ndim)
    n = input.size if axes is None else math.prod(input.shape[a] for a in axes)
    m = jnp.mean(input, axis=axes, keepdims=True)
    d = input - m
    sq = jnp.real(d * jnp.conj(d)) if jnp.iscomplexobj(d) else d * d
    total = jnp.sum(sq, axis=axes, keepdims=keepdim)
    var = total / jnp.asarray(builtins.max(n - correction, 0), total.dtype)
    return var, (m if keepdim else jnp.squeeze(m, axes))


# The rows take normalised arguments; torchjax.std/Tensor.std etc. are composites that turn the
# legacy std(input, unbiased) form into unbiased=, which also keeps a bool `dim` from sharing a
# compiled function with the equal int (True == 1 in the dispatcher's cache key).
@op(name="std", promote="none", function=False, method=False, saves=("input", "result"))
def _std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation over dim with correction (default 1; unbiased=False means 0)."""
    return jnp.sqrt(_moments(input, dim, unbiased, keepdim, correction, "std")[0])


@op(name="var", promote="none", function=False, method=False, saves=("input",))
def _var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over dim with correction (default 1; unbiased=False means 0)."""
    return _moments(input, dim, unbiased, keepdim, correction, "var")[0]


@op(name="std_mean", promote="none", function=False, method=False, saves=("input", "result"))
def _std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) over dim."""
    v, m = _moments(input, dim, unbiased, keepdim, correction, "std_mean")
    return jnp.sqrt(v), m


@op(name="var_mean", promote="none", function=False, method=False, saves=("input",))
def _var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) over dim."""
    return _moments(input, dim, unbiased, keepdim, correction, "var_mean")


def _call_moments(name, input, dim, unbiased, keepdim, correction, out):
    from .._dispatch import PREPARED, dispatch, dispatch_out
    if isinstance(dim, bool):  # the legacy std(input, unbiased) form
        if unbiased is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments")
        dim, unbiased = None, dim
    if isinstance(dim, list):
        dim = tuple(dim)
    stat = (dim, unbiased, bool(keepdim), correction)
    if out is not None:
        return dispatch_out(PREPARED[name], (input,), stat, out)
    return dispatch(PREPARED[name], (input,), stat)


@function(name="std")
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """std(input, dim=None, *, correction=1, keepdim=False); also the legacy
    std(input, dim, unbiased, keepdim=False) and std(input, unbiased)."""
    return _call_moments("std", input, dim, unbiased, keepdim, correction, out)


@function(name="var")
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """var(input, dim=None, *, correction=1, keepdim=False); also the legacy
    var(input, dim, unbiased, keepdim=False) and var(input, unbiased)."""
    return _call_moments("var", input, dim, unbiased, keepdim, correction, out)


@function(name="std_mean", method=False)
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(std, mean) with std's arguments."""
    return _call_moments("std_mean", input, dim, unbiased, keepdim, correction, None)


@function(name="var_mean", method=False)
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) with var's arguments."""
    return _call_moments("var_mean", input, dim, unbiased, keepdim, correction, None)

