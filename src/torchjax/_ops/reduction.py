"""Reductions over dims: sum, mean, prod, max/min, norm, logsumexp, all/any, with the dim and
dtype helpers the other reduction modules share (moments: std/var; cumulative; medians)."""

from __future__ import annotations

import builtins
import math
import numbers

import jax
import jax.numpy as jnp

from .. import _dtypes
from ._registry import by_dim, function, op


def _dims(dim, ndim):
    """PyTorch's dim argument (None, int, or a sequence; [] means all) as a tuple for jnp."""
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = (dim,)
    if len(dim) == 0:
        return None
    n = builtins.max(ndim, 1)
    out = []
    for d in dim:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
        if d % n in out:
            raise RuntimeError(f"dim {d % n} appears multiple times in the list of dims")
        out.append(d % n)
    return tuple(out) if ndim else None


def _dim1(dim, ndim, name):
    """A single int dim, wrapped; 0-d tensors accept 0 and -1."""
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _tname(dt):
    return _dtypes.SCALAR_NAMES[_dtypes.from_jax(dt).name]


def _inexact(x):
    return jnp.issubdtype(x.dtype, jnp.inexact)


def _acc_dtype(x, dtype):
    """Sums of bool and integer tensors are int64 unless a dtype is given."""
    if dtype is not None:
        return x.astype(dtype.np)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return x.astype(jnp.int64)
    return x


def _nonempty(x, axes, name):
    if x.size == 0:
        for a in range(x.ndim) if axes is None else axes:
            if x.shape[a] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")


# -- sums, means, products ------------------------------------------------------------------

@op(promote="none", needs=(), grad=by_dim("Sum"))
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over dim (all dims by default)."""
    return jnp.sum(_acc_dtype(input, dtype), axis=_dims(dim, input.ndim), keepdims=keepdim)


@op(promote="none", needs=(), grad=by_dim("Mean"))
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over dim; needs a floating or complex input (or a dtype)."""
    if dtype is not None:
        if not (dtype.is_floating_point or dtype.is_complex):
            raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be "
                               f"either a floating point or complex dtype. Got: "
                               f"{_dtypes.SCALAR_NAMES[dtype.name]}")
        input = input.astype(dtype.np)
    if not _inexact(input):
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_tname(input.dtype)}")
    return jnp.mean(input, axis=_dims(dim, input.ndim), keepdims=keepdim)


@op(promote="none", saves=("input",))
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over dim treating NaN as zero."""
    return jnp.nansum(_acc_dtype(input, dtype), axis=_dims(dim, input.ndim), keepdims=keepdim)


@op(promote="none", grad="DivBackward0")
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over dim of the non-NaN elements."""
    if not _inexact(input):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_tname(input.dtype)}")
    if dtype is not None:
        input = input.astype(dtype.np)
    axes = _dims(dim, input.ndim)
    ok = ~jnp.isnan(input)
    total = jnp.sum(jnp.where(ok, input, 0), axis=axes, keepdims=keepdim)
    return total / jnp.sum(ok, axis=axes, keepdims=keepdim).astype(total.dtype)


@op(promote="none", saves=("input", "result"), grad=by_dim("Prod"))
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product over one dim (all elements by default); exact gradients with zeros."""
    if dim is not None:
        dim = _dim1(dim, input.ndim, "prod")
    return jnp.prod(_acc_dtype(input, dtype), axis=dim if input.ndim else None,
                    keepdims=keepdim)


# -- max, min and friends -------------------------------------------------------------------

def _full_extreme(input, name, f):
    if input.size == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    return f(input)


@op(promote="none", function=False, method=False, grad="MaxBackward1", saves=("input", "result"))
def _max_all(input):
    # ties split the gradient evenly (jnp.max's rule, and PyTorch's)
    return _full_extreme(input, "max", jnp.max)


@op(promote="none", function=False, method=False, grad="MinBackward1", saves=("input", "result"))
def _min_all(input):
    return _full_extreme(input, "min", jnp.min)


def _select(input, dim, keepdim, name, pick):
    """(values, indices) of the element `pick` chooses along dim; the gradient goes to it."""
    d = _dim1(dim, input.ndim, name)
    if input.ndim == 0:
        return input, jnp.zeros((), jnp.int64)
    _nonempty(input, (d,), name)
    idx = pick(input, d).astype(jnp.int64)
    vals = jnp.take_along_axis(input, idx, axis=d)
    if not keepdim:
        vals, idx = jnp.squeeze(vals, d), jnp.squeeze(idx, d)
    return vals, idx


def _first_max(x, d):
    return jnp.argmax(x, axis=d, keepdims=True)


def _first_min(x, d):
    return jnp.argmin(x, axis=d, keepdims=True)


# max(dim)/min(dim) rows: named "max"/"min" so the result prints as torch.return_types.max;
# torchjax.max and Tensor.max are the routing composites below.
@op(name="max", promote="none", function=False, method=False, out_names=("values", "indices"),
    grad="MaxBackward0", saves=())
def _max_dim(input, dim, keepdim=False):
    """Largest value along dim and its first index; the gradient goes to that index."""
    return _select(input, dim, keepdim, "max", _first_max)


@op(name="min", promote="none", function=False, method=False, out_names=("values", "indices"),
    grad="MinBackward0", saves=())
def _min_dim(input, dim, keepdim=False):
    """Smallest value along dim and its first index; the gradient goes to that index."""
    return _select(input, dim, keepdim, "min", _first_min)


def _bad_extreme_args(name, got):
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({got}), but expected one "
        "of:\n * (Tensor input, *, Tensor out = None)\n * (Tensor input, Tensor other, *, "
        "Tensor out = None)\n * (Tensor input, int dim, bool keepdim = False, *, tuple of "
        "Tensors out = None)\n")


def _route_extreme(name, input, dim, keepdim, other, out):
    from .._dispatch import PREPARED, dispatch, dispatch_out
    from .._tensor import Tensor
    if other is None and isinstance(dim, Tensor):
        dim, other = None, dim
    if other is not None:
        if dim is not None or keepdim is not False:
            raise _bad_extreme_args(name, "Tensor, Tensor, bool")
        prep = PREPARED[name + "imum"]
        if out is not None:
            return dispatch_out(prep, (input, other), (), out)
        return dispatch(prep, (input, other), ())
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if dim is None:
        if keepdim is not False:
            raise _bad_extreme_args(name, f"Tensor, keepdim={type(keepdim).__name__}")
        prep = PREPARED[f"_{name}_all"]
        if out is not None:
            return dispatch_out(prep, (input,), (), out)
        return dispatch(prep, (input,), ())
    if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
        raise _bad_extreme_args(name, f"Tensor, {type(dim).__name__}")
    if out is not None:
        raise NotImplementedError(f"{name}(input, dim, out=...) is not supported yet")
    return dispatch(PREPARED[name], (input,), (int(dim), keepdim))


@function(name="max")
def _max(input, dim=None, keepdim=False, *, other=None, out=None):
    """max(input) -> the largest element; max(input, dim, keepdim=False) -> (values, indices);
    max(input, other) -> maximum(input, other)."""
    return _route_extreme("max", input, dim, keepdim, other, out)


@function(name="min")
def _min(input, dim=None, keepdim=False, *, other=None, out=None):
    """min(input) -> the smallest element; min(input, dim, keepdim=False) -> (values, indices);
    min(input, other) -> minimum(input, other)."""
    return _route_extreme("min", input, dim, keepdim, other, out)


@op(name="amax", promote="none", saves=("input", "result"))
def _amax(input, dim=(), keepdim=False):
    """Largest values over dim (all dims by default); ties split the gradient evenly."""
    axes = _dims(dim, input.ndim)
    _nonempty(input, axes, "amax")
    return jnp.max(input, axis=axes, keepdims=keepdim)


@op(name="amin", promote="none", saves=("input", "result"))
def _amin(input, dim=(), keepdim=False):
    """Smallest values over dim (all dims by default); ties split the gradient evenly."""
    axes = _dims(dim, input.ndim)
    _nonempty(input, axes, "amin")
    return jnp.min(input, axis=axes, keepdims=keepdim)


@op(promote="none", out_names=("min", "max"), saves=("input", "result"))
def aminmax(input, *, dim=None, keepdim=False):
    """(amin, amax) over dim (all dims by default)."""
    axes = None if dim is None else (_dim1(dim, input.ndim, "aminmax"),)
    if input.ndim == 0:
        axes = None
    _nonempty(input, axes, "aminmax")
    return (jnp.min(input, axis=axes, keepdims=keepdim),
            jnp.max(input, axis=axes, keepdims=keepdim))


def _arg_extreme(input, dim, keepdim, name, f):
    if input.dtype == jnp.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        if input.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
        r = f(input.reshape(-1)).astype(jnp.int64)
        return jnp.reshape(r, (1,) * input.ndim) if keepdim else r
    d = _dim1(dim, input.ndim, name)
    if input.ndim == 0:
        return jnp.zeros((), jnp.int64)
    _nonempty(input, (d,), name)
    return f(input, axis=d, keepdims=keepdim).astype(jnp.int64)


@op(promote="none", differentiable=False)
def argmax(input, dim=None, keepdim=False):
    """Index of the largest value (the first on ties; flat index when dim is None)."""
    return _arg_extreme(input, dim, keepdim, "argmax", jnp.argmax)


@op(promote="none", differentiable=False)
def argmin(input, dim=None, keepdim=False):
    """Index of the smallest value (the first on ties; flat index when dim is None)."""
    return _arg_extreme(input, dim, keepdim, "argmin", jnp.argmin)


# -- norms, logsumexp -----------------------------------------------------------------------

def _abs(x):
    # |x| whose gradient is sgn(x) (0 at 0), as in PyTorch's norm backward
    return jnp.abs(x) if jnp.iscomplexobj(x) else x * jax.lax.stop_gradient(jnp.sign(x))


def _safe_pow(a, p):
    """a ** p for a >= 0 with a zero gradient where a == 0."""
    zero = a == 0
    return jnp.where(zero, 0, jnp.where(zero, 1, a) ** p)


def _vector_norm(x, p, axes, keepdim):
    a = _abs(x)
    if p == math.inf:
        return jnp.max(a, axis=axes, keepdims=keepdim)
    if p == -math.inf:
        return jnp.min(a, axis=axes, keepdims=keepdim)
    if p == 0:
        return jnp.sum(a != 0, axis=axes, keepdims=keepdim).astype(a.dtype)
    if p == 1:
        return jnp.sum(a, axis=axes, keepdims=keepdim)
    s = jnp.sum(a * a if p == 2 else _safe_pow(a, p), axis=axes, keepdims=keepdim)
    return _safe_pow(s, 1 / p)


def _nuclear_norm(x, dim, keepdim):
    dim = (-2, -1) if dim is None else tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    d0, d1 = _dims(dim, x.ndim)
    m = jnp.moveaxis(x, (d0, d1), (-2, -1))
    r = jnp.sum(jnp.linalg.svd(m, compute_uv=False), axis=-1)
    if keepdim:
        r = jnp.expand_dims(r, tuple(sorted((d0, d1))))
    return r


@op(promote="none", function=False, grad="LinalgVectorNormBackward0", saves=("input", "result"))
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """Vector p-norm over dim (all dims by default); 'fro' is the 2-norm, 'nuc' the nuclear."""
    if not _inexact(input):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_tname(input.dtype)}")
    if dtype is not None:
        input = input.astype(dtype.np)
    if isinstance(dim, int):
        dim = (dim,)
    if p == "nuc":
        return _nuclear_norm(input, dim, keepdim)
    if p is None or p == "fro":
        if dim is not None and len(dim) > 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                               f"{' '.join(map(str, dim))}")
        p = 2
    elif isinstance(p, str):
        raise RuntimeError(f"linalg.vector_norm: p must be a number, got {p!r}")
    return _vector_norm(input, p, _dims(dim, input.ndim), keepdim)


@function(name="norm", method=False)
def _norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm(input, p='fro', dim=None, keepdim=False, out=None, dtype=None)."""
    from .._dispatch import PREPARED, dispatch, dispatch_out
    prep = PREPARED["norm"]
    if out is not None:
        return dispatch_out(prep, (input,), (p, dim, keepdim, dtype), out)
    return dispatch(prep, (input,), (p, dim, keepdim, dtype))


@op(promote="float", saves=("input", "result"))
def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(input))) over dim, computed stably; integer inputs give floats."""
    axes = _dims(dim, input.ndim)
    m = jax.lax.stop_gradient(jnp.max(input, axis=axes, keepdims=True))
    m = jnp.where(jnp.isfinite(m), m, 0)
    r = jnp.log(jnp.sum(jnp.exp(input - m), axis=axes, keepdims=True)) + m
    if keepdim:
        return r
    return jnp.squeeze(r, axes if axes is not None else tuple(range(input.ndim)))


# -- logical reductions, counting -----------------------------------------------------------

@op(name="all", promote="none", differentiable=False)
def _all(input, dim=None, keepdim=False):
    """Whether every element over dim is nonzero (uint8 in, uint8 out; else bool)."""
    r = jnp.all(input, axis=_dims(dim, input.ndim), keepdims=keepdim)
    return r.astype(jnp.uint8) if input.dtype == jnp.uint8 else r


@op(name="any", promote="none", differentiable=False)
def _any(input, dim=None, keepdim=False):
    """Whether any element over dim is nonzero (uint8 in, uint8 out; else bool)."""
    r = jnp.any(input, axis=_dims(dim, input.ndim), keepdims=keepdim)
    return r.astype(jnp.uint8) if input.dtype == jnp.uint8 else r


@op(promote="none", differentiable=False)
def count_nonzero(input, dim=None):
    """Number of nonzero elements over dim (int64)."""
    return jnp.sum(input != 0, axis=_dims(dim, input.ndim), dtype=jnp.int64)
