"""Op-table rows: scatter, index_* writes, put and take.

Every write here is turned into flat positions in the input (the same position table that
the index arguments address) and the values that go there, so one core per kind of write
(set, add, reduce) serves scatter, index_copy, index_add, index_reduce and put.

The public functions check index values on concrete arrays before dispatch (JAX clamps or
drops out-of-range writes silently, PyTorch raises); under tracing the check is skipped.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _dtypes
from .._tensor import Tensor
from ._nograd import no_derivative
from ._registry import function, op
from .indexing import _D, _prepared, _put, check_expand

# -- flat-position cores ---------------------------------------------------------------------


def _iota(shape):
    n = math.prod(shape)
    return jnp.arange(n, dtype=jnp.int64 if n >= 2**31 else jnp.int32).reshape(shape)


# a write where every value gets its position's gradient, also when a position repeats
_set = _put


def _add(flat, pos, vals):
    if flat.dtype == jnp.bool_:
        return flat.at[pos].max(vals)  # True + True stays True
    return flat.at[pos].add(vals)


def _identity(dtype, reduce):
    """The start value of a position when include_self=False."""
    if reduce in ("sum", "mean"):
        return jnp.zeros((), dtype)
    if reduce == "prod":
        return jnp.ones((), dtype)
    big = reduce in ("amin", "min")
    if dtype == jnp.bool_:
        return jnp.asarray(big)
    if jnp.issubdtype(dtype, jnp.integer):
        info = jnp.iinfo(dtype)
        return jnp.asarray(info.max if big else info.min, dtype)
    return jnp.asarray(np.inf if big else -np.inf, dtype)


def _reduce_plain(flat, pos, vals, reduce, include_self):
    hit = jnp.zeros(flat.shape, jnp.bool_).at[pos].set(True)
    base = flat if include_self else jnp.where(hit, _identity(flat.dtype, reduce), flat)
    if reduce == "sum":
        return _add(base, pos, vals)
    if reduce == "prod":
        if flat.dtype == jnp.bool_:
            return base.at[pos].min(vals)
        return base.at[pos].multiply(vals)
    if reduce in ("amax", "max"):
        return base.at[pos].max(vals)
    if reduce in ("amin", "min"):
        return base.at[pos].min(vals)
    # mean: PyTorch floors integer means
    total = base.at[pos].add(vals)
    count = jnp.zeros(flat.shape, total.dtype).at[pos].add(jnp.ones((), total.dtype))
    if include_self:
        count = count + 1
    safe = jnp.where(count == 0, jnp.ones((), count.dtype), count)
    if jnp.issubdtype(flat.dtype, jnp.integer):
        mean = jnp.floor_divide(total, safe)
    else:
        mean = total / safe
    return jnp.where(count == 0, flat, mean)


@functools.partial(jax.custom_vjp, nondiff_argnums=(3, 4))
def _reduce_select(flat, pos, vals, reduce, include_self):
    """amax/amin/prod with PyTorch's gradients (evenly split ties, exact products at zeros)."""
    return _reduce_plain(flat, pos, vals, reduce, include_self)


def _reduce_select_fwd(flat, pos, vals, reduce, include_self):
    out = _reduce_plain(flat, pos, vals, reduce, include_self)
    return out, (flat, pos, vals, out)


def _reduce_select_bwd(reduce, include_self, res, ct):
    flat, pos, vals, out = res
    if reduce in ("max", "min"):
        raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                           f"'amin' but got {reduce}.")
    zero = jnp.zeros((), ct.dtype)
    one = jnp.ones((), ct.dtype)
    if reduce == "prod":
        masked_self = jnp.where(flat == 0, one, flat)
        g_self = ct * _reduce_plain(masked_self, pos, vals, reduce, include_self) / masked_self
        src_zero = vals == 0
        zeros_at = jnp.zeros(flat.shape, jnp.int32).at[pos].add(src_zero.astype(jnp.int32))
        single = src_zero & (zeros_at[pos] == 1)
        masked_src_out = _reduce_plain(flat, pos, jnp.where(single, one, vals), reduce,
                                       include_self)
        g_src = jnp.where(single, (ct * masked_src_out)[pos],
                          (ct * out)[pos] / jnp.where(src_zero, one, vals))
    else:
        self_is = flat == out
        src_is = vals == out[pos]
        n = self_is.astype(ct.dtype).at[pos].add(src_is.astype(ct.dtype))
        spread = ct / n
        g_self = jnp.where(self_is, spread, zero)
        g_src = jnp.where(src_is, spread[pos], zero)
    if not include_self:
        hit = jnp.zeros(flat.shape, jnp.bool_).at[pos].set(True)
        g_self = jnp.where(hit, zero, g_self)
    return g_self, None, g_src


_reduce_select.defvjp(_reduce_select_fwd, _reduce_select_bwd)


def _reduce(flat, pos, vals, reduce, include_self):
    if reduce in ("sum", "mean") or not jnp.issubdtype(flat.dtype, jnp.inexact):
        return _reduce_plain(flat, pos, vals, reduce, include_self)
    return _reduce_select(flat, pos, vals, reduce, include_self)


# PyTorch records the op with a grad_fn that raises only when backward reaches it
_no_derivative = no_derivative("derivative for aten::scatter is not implemented")


# -- position tables -------------------------------------------------------------------------

def _nd(a):
    """PyTorch's scatter/index ops read a 0-d tensor as 1-d of one element."""
    return a.reshape(a.shape or (1,))


def _scatter_pos(shape, dim, index):
    """Flat positions in an array of `shape` for scatter along dim with `index`."""
    dt = jnp.int64 if math.prod(shape) >= 2**31 else jnp.int32
    pos = jnp.zeros(index.shape, dt)
    stride = 1
    for d in reversed(range(len(shape))):
        c = index.astype(dt) if d == dim else lax.broadcasted_iota(dt, index.shape, d)
        pos = pos + c * stride
        stride *= shape[d]
    return pos.reshape(-1)


def _corner(src, shape):
    return src[tuple(slice(0, n) for n in shape)].reshape(-1)


def _index_pos(shape, dim, index):
    """Flat positions of input[..., index, ...] (index along dim), in source's layout."""
    return jnp.take(_iota(shape), index.reshape(-1), axis=dim).reshape(-1)


# -- the rows --------------------------------------------------------------------------------

_ROW = dict(promote="none", function=False, method=False)


@op(name="scatter", tensors=("input", "index", "src"), needs=("index",), **_ROW)
def _scatter_row(input, dim, index, src):
    """input with src written at index along dim."""
    x, index, src = _nd(input), _nd(index), _nd(src)
    out = _set(x.reshape(-1), _scatter_pos(x.shape, dim, index), _corner(src, index.shape))
    return out.reshape(input.shape)


@op(name="_scatter_value", tensors=("input", "index", "value"), needs=("index",),
    grad="ScatterBackward1", **_ROW)
def _scatter_value_row(input, dim, index, value):
    """input with value written at index along dim."""
    x, index = _nd(input), _nd(index)
    pos = _scatter_pos(x.shape, dim, index)
    vals = jnp.broadcast_to(jnp.asarray(value).astype(x.dtype), pos.shape)
    return _set(x.reshape(-1), pos, vals).reshape(input.shape)


@op(name="_scatter_legacy_reduce", tensors=("input", "index", "src"), needs=(), saves=(),
    grad="NotImplemented", **_ROW)
def _scatter_legacy_reduce_row(input, dim, index, src, reduce, is_value):
    """scatter(..., reduce='add' | 'multiply'): accumulate src or a value at index."""
    x, index = _nd(input), _nd(index)
    pos = _scatter_pos(x.shape, dim, index)
    if is_value:
        vals = jnp.broadcast_to(jnp.asarray(src).astype(x.dtype), pos.shape)
    else:
        vals = _corner(_nd(src), index.shape)
    out = _reduce_plain(x.reshape(-1), pos, vals, "sum" if reduce == "add" else "prod", True)
    if jnp.issubdtype(out.dtype, jnp.inexact):
        out = _no_derivative(out)
    return out.reshape(input.shape)


@op(name="scatter_add", tensors=("input", "index", "src"), needs=("index",), **_ROW,
    saves={"src": ("index",)})
def _scatter_add_row(input, dim, index, src):
    """input plus src summed into index along dim."""
    x, index, src = _nd(input), _nd(index), _nd(src)
    out = _add(x.reshape(-1), _scatter_pos(x.shape, dim, index), _corner(src, index.shape))
    return out.reshape(input.shape)


@op(name="scatter_reduce", tensors=("input", "index", "src"), **_ROW,
    saves=("input", "index", "src", "result"))
def _scatter_reduce_row(input, dim, index, src, reduce, *, include_self=True):
    """input with src reduced into index along dim (sum, prod, mean, amax, amin)."""
    x, index, src = _nd(input), _nd(index), _nd(src)
    out = _reduce(x.reshape(-1), _scatter_pos(x.shape, dim, index),
                  _corner(src, index.shape), reduce, include_self)
    return out.reshape(input.shape)


@op(name="index_add", tensors=("input", "index", "source"), needs=("index",), **_ROW,
    saves={"source": ("index", "source")})
def _index_add_row(input, dim, index, source, *, alpha=1):
    """input with alpha * source added at the positions index along dim."""
    x = _nd(input)
    vals = _nd(source).reshape(-1)
    if x.dtype == jnp.bool_:
        vals = vals & bool(alpha)
    elif jnp.issubdtype(x.dtype, jnp.integer):
        if int(alpha) != 1:
            vals = vals * jnp.asarray(int(alpha), x.dtype)
    elif alpha != 1:
        vals = vals * jnp.asarray(alpha, x.dtype)
    return _add(x.reshape(-1), _index_pos(x.shape, dim, index), vals).reshape(input.shape)


@op(name="index_copy", tensors=("input", "index", "source"), needs=("index",), **_ROW,
    saves={"input": ("index",), "source": ("index", "source")})
def _index_copy_row(input, dim, index, source):
    """input with source copied to the positions index along dim."""
    x = _nd(input)
    pos = _index_pos(x.shape, dim, index)
    return _set(x.reshape(-1), pos, _nd(source).reshape(-1)).reshape(input.shape)


@op(name="index_reduce", tensors=("input", "index", "source"), **_ROW,
    saves=("input", "index", "source", "result"))
def _index_reduce_row(input, dim, index, source, reduce, *, include_self=True):
    """input with source reduced into the positions index along dim."""
    x = _nd(input)
    out = _reduce(x.reshape(-1), _index_pos(x.shape, dim, index), _nd(source).reshape(-1),
                  reduce, include_self)
    return out.reshape(input.shape)


def _index_fill_fn(input, dim, index, value):
    x = _nd(input)
    n = x.shape[dim]
    hit = jnp.zeros((n,), jnp.bool_).at[jnp.where(index < 0, index + n, index)].set(True)
    hit = hit.reshape((n,) + (1,) * (x.ndim - dim - 1))
    return jnp.where(hit, jnp.asarray(value).astype(x.dtype), x).reshape(input.shape)


op(name="index_fill", tensors=("input", "index", "value"), needs=("index",),
   doc="input with value at the positions index along dim.", **_ROW)(_index_fill_fn)
op(name="_index_fill_tensor", tensors=("input", "index", "value"), needs=("index",),
   grad="IndexFillBackward1", doc="input with value (a 0-d tensor) at index along dim.",
   **_ROW)(_index_fill_fn)


@op(name="put", tensors=("input", "index", "source"), needs=("index",), **_ROW,
    saves=("index", "source"))
def _put_row(input, index, source, accumulate=False):
    """input seen as 1-D with source written (accumulate: added) at index."""
    flat = input.reshape(-1)
    pos = index.reshape(-1)
    pos = jnp.where(pos < 0, pos + flat.shape[0], pos)
    vals = source.reshape(-1)
    out = _add(flat, pos, vals) if accumulate else _set(flat, pos, vals)
    return out.reshape(input.shape)


@op(name="masked_scatter", tensors=("input", "mask", "source"), needs=("mask",), **_ROW)
def _masked_scatter_row(input, mask, source):
    """input with the leading values of source, in order, where mask is True."""
    shape = jnp.broadcast_shapes(input.shape, mask.shape)
    m = jnp.broadcast_to(mask, shape).reshape(-1)
    src = source.reshape(-1)
    if src.size == 0:
        return jnp.broadcast_to(input, shape)
    take = jnp.clip(jnp.cumsum(m.astype(jnp.int64)) - 1, 0, src.size - 1)
    out = jnp.where(m, src[take], jnp.broadcast_to(input, shape).reshape(-1))
    return out.reshape(shape)


# -- rows that need no value checks (static positions) ---------------------------------------

def _wrap(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _sizes(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _check_slice(src, want):
    if tuple(src.shape) != tuple(want):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_sizes(src.shape)}, slice size = {_sizes(want)}")


@op(tensors=("input", "src"), promote="none", saves=())
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """input with its diagonal (offset, dim1, dim2) replaced by src."""
    d1, d2 = _wrap(dim1, input.ndim), _wrap(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    pos = jnp.diagonal(_iota(input.shape), offset, d1, d2)
    _check_slice(src, pos.shape)
    out = input.reshape(-1).at[pos.reshape(-1)].set(src.reshape(-1).astype(input.dtype))
    return out.reshape(input.shape)


@op(tensors=("input", "src"), promote="none", saves=())
def select_scatter(input, src, dim, index):
    """input with input.select(dim, index) replaced by src."""
    d = _wrap(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{_sizes(input.shape)} at dimension {dim}")
    _check_slice(src, input.shape[:d] + input.shape[d + 1:])
    key = (slice(None),) * d + (index % n,)
    return input.at[key].set(src.astype(input.dtype))


@op(tensors=("input", "src"), promote="none", saves=())
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """input with input[..., start:end:step, ...] (along dim) replaced by src."""
    d = _wrap(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    n = input.shape[d]
    lo, hi, _ = slice(start, end, step).indices(n)
    hi = max(hi, lo)
    want = input.shape[:d] + (-(-(hi - lo) // step),) + input.shape[d + 1:]
    _check_slice(src, want)
    key = (slice(None),) * d + (slice(lo, hi, step),)
    return input.at[key].set(src.astype(input.dtype))


# -- public functions: argument checks on concrete values, then dispatch ---------------------

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


def _index_vector_checks(fname, input, dim, index, source):
    """Shared checks of index_add and index_reduce; the wrapped dim."""
    d = _wrap(dim, input.ndim)
    if index.dtype.name not in ("int32", "int64"):
        raise RuntimeError(f"{fname}(): Expected dtype int32/int64 for index but got: "
                           f"{_tname(index)}")
    if index.ndim > 1:
        raise IndexError(f"{fname}(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {_tname(index)} and size: "
                         f"{_sizes(index.shape)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{fname}(): self ({_tname(input)}) and source ({_tname(source)}) "
                           f"must have the same scalar type")
    if source.ndim == 0 and input.ndim > 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    sshape = tuple(source.shape) or (1,)
    xshape = tuple(input.shape) or (1,)
    if len(sshape) > d and index.numel() != sshape[d]:
        raise RuntimeError(f"{fname}(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({sshape[d]}), for dim: {d}")
    if len(sshape) != len(xshape) or any(
            a != b for i, (a, b) in enumerate(zip(sshape, xshape)) if i != d):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {_sizes(input.shape)} "
                           f"source.shape = {_sizes(source.shape)}")
    return d


def _index_add(fname, inplace, input, dim, index, source, alpha):
    _require_tensor(fname, "input", 1, input)
    _require_tensor(fname, "index", 3, index)
    _require_tensor(fname, "source", 4, source)
    _check_number(fname, "alpha", input, alpha)
    d = _index_vector_checks("index_add_", input, dim, index, source)
    n = (tuple(input.shape) or (1,))[d]
    v = _first_bad(index, 0, n)
    if v is not None:
        raise RuntimeError(f"index {v} is out of bounds for dimension {d} with size {n}")
    return _run("index_add", inplace, (input, index, source), (d, alpha))


@function()
def index_add(input, dim, index, source, *, alpha=1):
    """input with alpha * source added at the positions index along dim (duplicates add)."""
    return _index_add("index_add", False, input, dim, index, source, alpha)


@function(function=False)
def index_add_(self, dim, index, source, *, alpha=1):
    """In place: alpha * source added to self at the positions index along dim."""
    return _index_add("index_add_", True, self, dim, index, source, alpha)


_INDEX_REDUCES = ("prod", "mean", "amax", "amin")


def _index_reduce(fname, inplace, input, dim, index, source, reduce, include_self):
    _require_tensor(fname, "input", 1, input)
    _require_tensor(fname, "index", 3, index)
    _require_tensor(fname, "source", 4, source)
    warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning,
                  stacklevel=4)  # 4: + the composite's x64-scope wrapper
    if reduce not in _INDEX_REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = _index_vector_checks("index_reduce_", input, dim, index, source)
    if input.dtype.name == "bool":
        raise NotImplementedError("\"index_func_\" not implemented for 'Bool'")
    n = (tuple(input.shape) or (1,))[d]
    if _first_bad(index, 0, n) is not None:
        raise IndexError("index out of range in self")
    return _run("index_reduce", inplace, (input, index, source), (d, reduce, bool(include_self)))


@function()
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """input with source reduced into the positions index along dim: prod, mean, amax, amin."""
    return _index_reduce("index_reduce", False, input, dim, index, source, reduce,
                         include_self)


@function(function=False)
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """In place: source reduced into self at index along dim: prod, mean, amax, amin."""
    return _index_reduce("index_reduce_", True, self, dim, index, source, reduce,
                         include_self)


def _index_copy(fname, inplace, input, dim, index, source):
    _require_tensor(fname, "input", 1, input)
    _require_tensor(fname, "index", 3, index)
    _require_tensor(fname, "source", 4, source)
    d = _wrap(dim, input.ndim)
    if index.dtype.name != "int64":
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{_tname(index)}")
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got "
                         f"{index.ndim})")
    if source.ndim and input.ndim and source.ndim != input.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({input.ndim})")
    sshape = tuple(source.shape) or (1,)
    xshape = tuple(input.shape) or (1,)
    if index.numel() != sshape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal "
                         f"to source.size(dim) ({sshape[d]})")
    if sshape[:d] + sshape[d + 1:] != xshape[:d] + xshape[d + 1:]:
        def sl(s):
            return " ".join(map(str, s[:d] + s[d + 1:]))
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {sl(xshape)} at dimension {d} and "
                           f"source slice shape: {sl(sshape)} at dimension 0.")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {_tname(input)} and (source) {_tname(source)}")
    v = _first_bad(index, 0, xshape[d])
    if v is not None:
        raise IndexError(f"index_copy_(): index {v} is out of bounds for dimension {d} with "
                         f"size {xshape[d]}")
    return _run("index_copy", inplace, (input, index, source), (d,))


@function()
def index_copy(input, dim, index, source):
    """input with source copied to the positions index along dim."""
    return _index_copy("index_copy", False, input, dim, index, source)


@function(function=False)
def index_copy_(self, dim, index, source):
    """In place: source copied into self at the positions index along dim."""
    return _index_copy("index_copy_", True, self, dim, index, source)


def _index_fill(fname, inplace, input, dim, index, value):
    _require_tensor(fname, "input", 1, input)
    _require_tensor(fname, "index", 3, index)
    d = _wrap(dim, input.ndim)
    if index.dtype.name != "int64":
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        name = "_index_fill_tensor"
    else:
        _check_number(fname, "value", input, value)
        name = "index_fill"
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    n = (tuple(input.shape) or (1,))[d]
    v = _first_bad(index, -n, n)
    if v is not None:
        raise IndexError(f"index {v} is out of bounds for dimension {d} with size {n}")
    return _run(name, inplace, (input, index, value), (d,))


@function()
def index_fill(input, dim, index, value):
    """input with value (a number or 0-d tensor) at the positions index along dim."""
    return _index_fill("index_fill", False, input, dim, index, value)


@function(function=False)
def index_fill_(self, dim, index, value):
    """In place: self filled with value (a number or 0-d tensor) at index along dim."""
    return _index_fill("index_fill_", True, self, dim, index, value)


def _put(fname, inplace, input, index, source, accumulate):
    _require_tensor(fname, "input", 1, input)
    _require_tensor(fname, "index", 2, index)
    _require_tensor(fname, "source", 3, source)
    if index.dtype.name != "int64":
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{_tname(index)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_tname(input)} and source.dtype = {_tname(source)}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, index.numel() "
                         f"= {index.numel()}")
    n = input.numel()
    v = _first_bad(index, -n, n)
    if v is not None:
        raise IndexError(f"out of range: tried to access index {v} on a tensor of {n} "
                         f"elements.")
    return _run("put", inplace, (input, index, source), (bool(accumulate),))


@function()
def put(input, index, source, accumulate=False):
    """input seen as 1-D with source written (accumulate: added) at index."""
    return _put("put", False, input, index, source, accumulate)


@function(function=False)
def put_(self, index, source, accumulate=False):
    """In place: self seen as 1-D with source written (accumulate: added) at index."""
    return _put("put_", True, self, index, source, accumulate)


def _masked_scatter(fname, inplace, input, mask, source):
    _require_tensor(fname, "input", 1, input)
    _require_tensor(fname, "mask", 2, mask)
    _require_tensor(fname, "source", 3, source)
    if mask.dtype.name != "bool":
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_tname(mask)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{_tname(input)} and {_tname(source)}")
    xs, ms = tuple(input.shape), tuple(mask.shape)
    if inplace:
        check_expand(ms, ms, xs, "CPUBoolType")
        shape = xs
    else:
        for i in range(1, max(len(xs), len(ms)) + 1):
            a = ms[-i] if i <= len(ms) else 1
            b = xs[-i] if i <= len(xs) else 1
            if a != b and a != 1 and b != 1:
                raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b "
                                   f"({b}) at non-singleton dimension "
                                   f"{max(len(xs), len(ms)) - i}")
        shape = np.broadcast_shapes(xs, ms)
    if not _is_tracer(mask._data):
        m = np.broadcast_to(np.asarray(mask._data), shape)
        if int(np.count_nonzero(m)) > source.numel():
            raise RuntimeError("Number of elements of source < number of ones in mask")
    return _run("masked_scatter", inplace, (input, mask, source), ())


@function()
def masked_scatter(input, mask, source):
    """input with the leading values of source, in order, where mask is True."""
    return _masked_scatter("masked_scatter", False, input, mask, source)


@function(function=False)
def masked_scatter_(self, mask, source):
    """In place: the leading values of source, in order, written where mask is True."""
    return _masked_scatter("masked_scatter_", True, self, mask, source)
