"""Op-table rows: scatter, index_* writes, put and take.

Every write here is turned into flat positions in the input (the same position table that
the index arguments address) and the values that go there, so one core per kind of write
(set, add, reduce) serves scatter, index_copy, index_add, index_reduce and put.

The public functions (scatter_functions.py, index_writes.py) check index values on concrete
arrays before dispatch to these rows (JAX clamps or drops out-of-range writes silently,
PyTorch raises); under tracing the check is skipped.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _autocast
from ._nograd import no_derivative
from ._registry import op
from .indexing import _put

_AUTOCAST = _autocast.STATE

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

