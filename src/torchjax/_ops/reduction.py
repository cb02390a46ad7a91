"""Reductions over dims: sum, mean, prod, max/min, std/var, norm, logsumexp, cumulative ops."""

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


# -- variance and standard deviation --------------------------------------------------------

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


# -- cumulative ops -------------------------------------------------------------------------

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


# -- medians and mode -----------------------------------------------------------------------

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
