"""The public scatter, scatter_add and scatter_reduce (functions and in-place methods): PyTorch's
argument checks, on concrete index values, then dispatch to the rows of scatter.py (JAX clamps
or drops out-of-range writes silently, PyTorch raises); under tracing the value checks are
skipped. The checks shared with the index_* writes (index_writes.py) live here too."""

from __future__ import annotations

import numbers
import warnings

import jax
import numpy as np

from .. import _dtypes
from .._tensor import Tensor
from ._registry import function
from .indexing import _D, _prepared
from .scatter import _sizes, _wrap

_MISSING = object()


def _is_tracer(a):
    return isinstance(a, jax.core.Tracer)


def _tname(t):
    return _dtypes.SCALAR_NAMES[t.dtype.name]


def _require_tensor(fname, name, pos, v):
    if not isinstance(v, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(v).__name__}")


def _first_bad(t, lo, hi):
    """The first entry of a concrete integer tensor outside [lo, hi), or None."""
    arr = t._data
    if _is_tracer(arr) or arr.size == 0:
        return None
    a = np.asarray(arr)
    bad = (a < lo) | (a >= hi)
    return int(a[bad][0]) if bad.any() else None


def _check_number(fname, name, input, v):
    if not isinstance(v, (numbers.Number, np.bool_)):
        raise TypeError(f"{fname}(): argument '{name}' must be Number, not {type(v).__name__}")
    if isinstance(v, complex) and not input.is_complex():
        raise RuntimeError(f"value cannot be converted to type {_tname(input).lower()} without "
                           f"overflow")


def _scatter_checks(input, dim, index, src):
    """PyTorch's checks for scatter, scatter_add and scatter_reduce; the wrapped dim."""
    d = _wrap(dim, input.ndim)
    has_src = isinstance(src, Tensor)
    if index.numel() == 0:
        if has_src and src.dtype is not input.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        return d
    if index.dtype.name not in ("int32", "int64"):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if has_src and src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    nd = max(input.ndim, 1)
    if max(index.ndim, 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if has_src and 0 < src.ndim < nd:
        # PyTorch reads src's sizes along every dim of index first
        _wrap(src.ndim, src.ndim)
    if has_src and max(src.ndim, 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    ishape = tuple(index.shape) or (1,)
    xshape = tuple(input.shape) or (1,)
    sshape = (tuple(src.shape) or (1,)) if has_src else None
    bad = any(i != d and ishape[i] > xshape[i] for i in range(nd))
    if has_src:
        bad = bad or any(ishape[i] > sshape[i] for i in range(nd))
    if bad:
        msg = (f"Expected index {_sizes(ishape)} to be no larger than self {_sizes(xshape)} "
               f"apart from dimension {d}")
        if has_src:
            msg += f" and to be no larger size than src {_sizes(sshape)}"
        raise RuntimeError(msg)
    v = _first_bad(index, 0, xshape[d])
    if v is not None:
        raise RuntimeError(f"index {v} is out of bounds for dimension {d} with size {xshape[d]}")
    return d


def _run(name, inplace, dyn, stat):
    prep = _prepared(name)
    if inplace:
        return _D.dispatch_inplace(prep, dyn, stat)
    return _D.dispatch(prep, dyn, stat)


def _scatter(fname, inplace, input, dim, index, src, value, reduce):
    _require_tensor(fname, "input", 1, input)
    _require_tensor(fname, "index", 3, index)
    if (src is _MISSING) == (value is _MISSING) or not isinstance(dim, int):
        raise TypeError(f"{fname}() received an invalid combination of arguments: expected "
                        f"(Tensor input, int dim, Tensor index, Tensor src, *, str reduce) or "
                        f"(Tensor input, int dim, Tensor index, Number value, *, str reduce)")
    if src is _MISSING:
        src = value
    is_value = not isinstance(src, Tensor)
    if is_value:
        _check_number(fname, "value", input, src)
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if not is_value:
            warnings.warn(
                "The reduce argument of torch.scatter with Tensor src is deprecated and will be "
                "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
                "reduction options.", UserWarning, stacklevel=4)  # 4: + the x64-scope wrapper
    d = _scatter_checks(input, dim, index, None if is_value else src)
    if reduce is not None:
        return _run("_scatter_legacy_reduce", inplace, (input, index, src),
                    (d, reduce, is_value))
    if is_value:
        return _run("_scatter_value", inplace, (input, index, src), (d,))
    return _run("scatter", inplace, (input, index, src), (d,))


@function()
def scatter(input, dim, index, src=_MISSING, *, value=_MISSING, reduce=None):
    """input with src (a tensor) or value (a number) written at index along dim."""
    return _scatter("scatter", False, input, dim, index, src, value, reduce)


@function(function=False)
def scatter_(self, dim, index, src=_MISSING, *, value=_MISSING, reduce=None):
    """In place: self with src (a tensor) or value (a number) written at index along dim."""
    return _scatter("scatter_", True, self, dim, index, src, value, reduce)


def _scatter_add(fname, inplace, input, dim, index, src):
    _require_tensor(fname, "input", 1, input)
    _require_tensor(fname, "index", 3, index)
    _require_tensor(fname, "src", 4, src)
    d = _scatter_checks(input, dim, index, src)
    return _run("scatter_add", inplace, (input, index, src), (d,))


@function()
def scatter_add(input, dim, index, src):
    """input plus src summed into index along dim (repeated indices accumulate)."""
    return _scatter_add("scatter_add", False, input, dim, index, src)


@function(function=False)
def scatter_add_(self, dim, index, src):
    """In place: src summed into self at index along dim (repeated indices accumulate)."""
    return _scatter_add("scatter_add_", True, self, dim, index, src)


_SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin", "max", "min")


def _scatter_reduce(fname, inplace, input, dim, index, src, reduce, include_self):
    _require_tensor(fname, "input", 1, input)
    _require_tensor(fname, "index", 3, index)
    _require_tensor(fname, "src", 4, src)
    if reduce not in _SCATTER_REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if reduce == "mean" and input.dtype.name == "bool":
        raise NotImplementedError('"scatter_gather_tensor_cpu_reduce_mean" not implemented for '
                                  "'Bool'")
    d = _scatter_checks(input, dim, index, src)
    return _run("scatter_reduce", inplace, (input, index, src), (d, reduce, bool(include_self)))


@function()
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """input with src reduced into index along dim: sum, prod, mean, amax or amin."""
    return _scatter_reduce("scatter_reduce", False, input, dim, index, src, reduce,
                           include_self)


@function(function=False)
def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    """In place: src reduced into self at index along dim: sum, prod, mean, amax or amin."""
    return _scatter_reduce("scatter_reduce_", True, self, dim, index, src, reduce,
                           include_self)


