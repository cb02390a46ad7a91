"""Pooling rows: max/avg/adaptive pooling in 1d/2d/3d and max_unpool (torch.nn.functional).

PyTorch's rules, checked against torch 2.13:
- output length: floor((I + 2p - d(k-1) - 1 [+ s-1 in ceil_mode]) / s) + 1, and in ceil_mode the
  last window must start inside the input or the left padding;
- max pooling scans each window in row-major order and keeps the first maximum, except that a
  NaN always replaces the current one (so the last NaN wins); a window holding only -inf keeps
  its first element inside the input. The gradient goes to that one element. Indices are flat
  positions within each spatial plane (H*W, or T*H*W);
- the 1d ops run the 2d ones on input.unsqueeze(-2), hence their 2d error messages and their
  grad_fn (SqueezeBackward1).
Every check uses shapes and Python arguments only, so it runs while the row is traced.
"""

from __future__ import annotations

import functools
import numbers

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _dtypes
from ._registry import op

_NN = dict(function=False, method=False, namespace="torch.nn.functional", promote="none")
_WORDS = {2: "two", 3: "three"}
_FLOATS = frozenset(("float16", "bfloat16", "float32", "float64"))
_HALF = frozenset(("float16", "bfloat16"))


# -- arguments and PyTorch's checks ----------------------------------------------------------

def _int_list(v, fn, name, pos):
    """An int or a sequence of ints (PyTorch's IntArrayRef) as a tuple, or its TypeError."""
    if v is None and name == "stride":
        return ()
    if isinstance(v, numbers.Integral):
        return (int(v),)
    if isinstance(v, (tuple, list)):
        for i, e in enumerate(v):
            if not isinstance(e, numbers.Integral):
                raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be tuple of ints,"
                                f" but found element of type {type(e).__name__} at pos {i}")
        return tuple(int(e) for e in v)
    raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be tuple of ints, not "
                    f"{type(v).__name__}")


def _expand(vals, n):
    """A single value applies to every spatial dim."""
    return vals * n if len(vals) == 1 else vals


def _scalar_name(dtype):
    return _dtypes.SCALAR_NAMES[np.dtype(dtype).name]


_INTS = frozenset(("uint8", "int8", "int16", "int32", "int64"))


def _need_dtype(x, kernel, also=frozenset()):
    """PyTorch's CPU kernels take floating inputs, and some of them the integer dtypes `also`."""
    name = np.dtype(x.dtype).name
    if name not in _FLOATS and name not in also:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_scalar_name(x.dtype)}\'')


def _dim_range(x, fn, lo, hi):
    """checkDimRange: lo <= x.ndim < hi."""
    if not lo <= x.ndim < hi:
        raise RuntimeError(f"Expected {lo} to {hi - 1} dimensions, but got {x.ndim}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for {fn})")


def _check1d(fn, name, vals):
    if len(vals) != 1:
        raise RuntimeError(f"{fn}() argument '{name}' should contain one int (got {len(vals)})")


def _size_at(x, dim):
    """x.shape[dim] with PyTorch's IndexError for a missing dim."""
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -x.ndim <= dim < x.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-x.ndim}, "
                         f"{x.ndim - 1}], but got {dim})")
    return x.shape[dim]


def _trunc_half(v):
    """C++ integer division by 2 (rounds toward zero)."""
    return -((-v) // 2) if v < 0 else v // 2


def _out_size(size, k, pad, stride, dilation, ceil_mode):
    """PyTorch's pooling_output_shape, with its checks."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > _trunc_half((k - 1) * dilation + 1):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad="
                           f"{pad}, kernel_size={k} and dilation={dilation}")
    out = (size + 2 * pad - dilation * (k - 1) - 1 + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1  # the last window must start inside the input or the left padding
    return out


def _shape_check2d(x, k, s, p, d, out):
    """PyTorch's pool2d_shape_check."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = k, s, p, d
    if kw <= 0 or kh <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
    if sw <= 0 or sh <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {sh} dW: {sw}")
    if dh <= 0 or dw <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dh} "
                           f"dilationW: {dw}")
    shape = x.shape
    nonempty = shape[1] != 0 and shape[2] != 0
    if not ((x.ndim == 3 and shape[0] != 0 and nonempty)
            or (x.ndim == 4 and nonempty and shape[3] != 0)):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got:{list(shape)}")
    if kw // 2 < pw or kh // 2 < ph:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"padW = {pw}, padH = {ph}, kW = {kw}, kH = {kh}")
    if out[0] < 1 or out[1] < 1:
        c, h, w = shape[-3:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{out[0]}x{out[1]}). Output size is too small")


def _shape_check3d(x, k, s, p, d, out, fn, check_input_size=False):
    """PyTorch's pool3d_shape_check."""
    (kt, kh, kw), (st, sh, sw), (pt, ph, pw), (dt, dh, dw) = k, s, p, d
    if kt <= 0 or kw <= 0 or kh <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {kt} kH: {kh} "
                           f"kW: {kw}")
    if st <= 0 or sw <= 0 or sh <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dT: {st} dH: {sh} "
                           f"dW: {sw}")
    if dt <= 0 or dw <= 0 or dh <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {dt} "
                           f"dilationH: {dh} dilationW: {dw}")
    for i, n in enumerate(x.shape):
        if n <= 0 and not (x.ndim == 5 and i == 0):
            # PyTorch prints the length (always 0) where the dimension is announced
            raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive "
                               f"length, but input has a shape of {list(x.shape)} and non-batch "
                               f"dimension {n} has length zero!")
    it, ih, iw = x.shape[-3:]
    if check_input_size and not (it >= kt and ih >= kh and iw >= kw):
        raise RuntimeError(f"input image (T: {it} H: {ih} W: {iw}) smaller than kernel size "
                           f"(kT: {kt} kH: {kh} kW: {kw})")
    if kt // 2 < pt or kw // 2 < pw or kh // 2 < ph:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"kT: {kt} kW: {kw} kH: {kh} padT: {pt} padW: {pw} padH: {ph}")
    if min(out) < 1:
        c = x.shape[-4]
        raise RuntimeError(f"Given input size: ({c}x{it}x{ih}x{iw}). Calculated output size: "
                           f"({c}x{out[0]}x{out[1]}x{out[2]}). Output size is too small")


def _pool_lists(fn, n, either, k, s, p, d=None):
    """The length checks of the native max/avg pooling ops; values expanded to n dims."""
    must, omit = ("must either be", "must either be omitted") if either else \
        ("must be", "must be omitted")
    w = _WORDS[n]
    if len(k) not in (1, n):
        raise RuntimeError(f"{fn}: kernel_size {must} a single int, or a tuple of {w} ints")
    if len(s) not in (0, 1, n):
        raise RuntimeError(f"{fn}: stride {omit}, a single int, or a tuple of {w} ints")
    if len(p) not in (1, n):
        raise RuntimeError(f"{fn}: padding {must} a single int, or a tuple of {w} ints")
    if d is not None and len(d) not in (1, n):
        raise RuntimeError(f"{fn}: dilation must be either a single int, or a tuple of {w} ints")
    k = _expand(k, n)
    s = _expand(s, n) if s else k
    return k, s, _expand(p, n), (_expand(d, n) if d is not None else (1,) * n)


# -- max pooling -----------------------------------------------------------------------------

def _max_pool(x, k, s, p, d, out):
    """Values and flat plane indices of max pooling over the last len(k) dims of x.

    The gradient is PyTorch's: each output's gradient is added at its index (a scatter-add,
    whose program stays small whatever the kernel size)."""
    n = len(k)
    lead = x.ndim - n
    rows = int(np.prod(x.shape[:lead], dtype=np.int64))
    plane = int(np.prod(x.shape[lead:], dtype=np.int64))
    outs = int(np.prod(out, dtype=np.int64))

    @jax.custom_vjp
    def pool(x):
        return _max_pool_forward(x, k, s, p, d, out)

    def pool_fwd(x):
        values, flat = _max_pool_forward(x, k, s, p, d, out)
        return (values, flat), flat

    def pool_bwd(flat, cts):
        ct = cts[0].reshape(rows, outs)
        grad = jnp.zeros((rows, plane), ct.dtype).at[
            jnp.arange(rows)[:, None], flat.reshape(rows, outs)].add(ct, mode="drop")
        return (grad.reshape(x.shape),)

    pool.defvjp(pool_fwd, pool_bwd)
    return pool(x)


def _max_pool_forward(x, k, s, p, d, out):
    """Max pooling one spatial axis at a time, last axis first: along each axis one strided
    slice of the padded input per kernel tap, scanned in order with a running (max, tap).

    Keeping the first maximum, except that a NaN replaces it, is taking the maximum of a total
    order on (value, position); a maximum over a box is the maximum of the maxima of its rows,
    so the axis-by-axis scan finds PyTorch's element with sum(k) slices instead of prod(k).
    Which outputs read a real input element at each tap is known statically; padding is
    masked with those constants."""
    n = len(k)
    lead = x.ndim - n
    sizes = x.shape[lead:]
    floating = np.dtype(x.dtype).name in _FLOATS
    high = [(o - 1) * st + (kk - 1) * dd + 1 - pp - i
            for o, st, kk, dd, pp, i in zip(out, s, k, d, p, sizes)]
    y = lax.pad(x, np.zeros((), x.dtype), [(0, 0, 0)] * lead
                + [(pp, h, 0) for pp, h in zip(p, high)])
    taps = []  # the winning tap along each axis already reduced, carried along with y
    empty = np.zeros(out, bool)
    for a in reversed(range(n)):
        ax, o = lead + a, out[a]
        pos = np.arange(o) * s[a] - p[a]
        seen = np.zeros(o, bool)
        best = None
        for j in range(k[a]):
            start, limit, strides = [0] * y.ndim, list(y.shape), [1] * y.ndim
            start[ax], limit[ax], strides[ax] = j * d[a], j * d[a] + (o - 1) * s[a] + 1, s[a]
            v = lax.slice(y, start, limit, strides)
            carried = [lax.slice(t, start, limit, strides) for t in taps]
            valid = (0 <= pos + j * d[a]) & (pos + j * d[a] < sizes[a])
            first = valid & ~seen  # outputs whose first real element this is: always taken
            seen |= valid
            if best is None:
                best, arg, kept = v, jnp.zeros(v.shape, jnp.int32), carried
                continue
            shape = (o,) + (1,) * (n - 1 - a)  # the masks along axis a
            take = v > best
            if floating:
                take = take | jnp.isnan(v)
            if not valid.all():
                take = take & valid.reshape(shape)
            if first.any():
                take = take | first.reshape(shape)
            best = jnp.where(take, v, best)
            arg = jnp.where(take, jnp.int32(j), arg)
            kept = [jnp.where(take, c, t) for c, t in zip(carried, kept)]
        y, taps = best, [arg] + kept
        empty = empty | (~seen).reshape((o,) + (1,) * (n - 1 - a))
    # the winning taps -> the flat position in the input plane
    flat = jnp.zeros(y.shape, jnp.int64)
    for a in range(n):
        o = lax.broadcasted_iota(jnp.int64, y.shape, lead + a)
        flat = flat * sizes[a] + o * s[a] - p[a] + taps[a].astype(jnp.int64) * d[a]
    if empty.any():
        y, flat = _empty_windows(y, flat, empty, s, p, d, sizes, floating)
    return y, flat


def _empty_windows(best, flat, empty, s, p, d, sizes, floating):
    """Dilation can leave a window with no element of the input (every tap in the padding).
    PyTorch then returns the lowest value and the flat position of the window's first tap past
    the left padding (outside the input), and its backward adds the gradient at that position:
    so does torchjax's while it lies inside the plane (beyond it, PyTorch writes past the
    gradient's memory; torchjax drops it)."""
    starts = []
    for o, st, pp, dd in zip(empty.shape, s, p, d):
        start = np.arange(o) * st - pp
        starts.append(np.where(start < 0, start + (-start + dd - 1) // dd * dd, start))
    index = np.zeros((), np.int64)
    for start, size in zip(starts, sizes):
        index = index[..., None] * size + start
    low = -np.inf if floating else np.iinfo(best.dtype).min
    return (jnp.where(empty, jnp.asarray(low, best.dtype), best),
            jnp.where(empty, jnp.asarray(index, jnp.int64), flat))


def _max_pool_native(n, x, k, s, p, d, ceil_mode):
    """PyTorch's max_pool{2,3}d_with_indices on int tuples."""
    fn = f"max_pool{n}d"
    k, s, p, d = _pool_lists(fn, n, True, k, s, p, d)
    if x.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected for input")
    out = tuple(_out_size(i, *a, ceil_mode) for i, *a in zip(x.shape[-n:], k, p, s, d))
    if n == 2:
        _shape_check2d(x, k, s, p, d, out)
    else:
        _shape_check3d(x, k, s, p, d, out, "max_pool3d_with_indices_out_cpu_template()")
    _need_dtype(x, fn, also=_INTS)
    return _max_pool(x, k, s, p, d, out)


def _max_pool_args(fn, kernel_size, stride, padding, dilation):
    return (_int_list(kernel_size, fn, "kernel_size", 2), _int_list(stride, fn, "stride", 3),
            _int_list(padding, fn, "padding", 4), _int_list(dilation, fn, "dilation", 5))


@op(grad="SqueezeBackward1", **_NN)
def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """1d max pooling: (values, indices); the 2d op on input.unsqueeze(-2), as in PyTorch."""
    k, s, p, d = _max_pool_args("max_pool1d_with_indices", kernel_size, stride, padding, dilation)
    s = s or k
    _dim_range(input, "max_pool1d", 2, 4)
    for name, v in (("kernel_size", k), ("stride", s), ("padding", p), ("dilation", d)):
        _check1d("max_pool1d", name, v)
    v, i = _max_pool_native(2, input[..., None, :], (1, k[0]), (1, s[0]), (0, p[0]), (1, d[0]),
                            ceil_mode)
    return v[..., 0, :], i[..., 0, :]


@op(grad="MaxPool2DWithIndicesBackward0", **_NN)
def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """2d max pooling: (values, flat indices within each H*W plane)."""
    args = _max_pool_args("max_pool2d_with_indices", kernel_size, stride, padding, dilation)
    return _max_pool_native(2, input, *args, ceil_mode)


@op(grad="MaxPool3DWithIndicesBackward0", **_NN)
def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """3d max pooling: (values, flat indices within each T*H*W volume)."""
    args = _max_pool_args("max_pool3d_with_indices", kernel_size, stride, padding, dilation)
    return _max_pool_native(3, input, *args, ceil_mode)


# -- average pooling -------------------------------------------------------------------------

def _window_sum(x, kernel, stride):
    """Sums over the windows of the last len(kernel) dims of x, one dim at a time: along each,
    a strided slice per kernel tap, added. On XLA's CPU backend this measured ~2-8x faster than
    lax.reduce_window forward and backward together (64x64x24x24, 2x2 windows: 4 ms against
    22 ms; docs/performance.md, "CPU convolutions"); the sum of a box is the sum of the sums of
    its rows, so sum(kernel) slices do it instead of prod(kernel)."""
    lead = x.ndim - len(kernel)
    for a, (k, s) in enumerate(zip(kernel, stride)):
        axis = lead + a
        out = (x.shape[axis] - k) // s + 1
        total = None
        for j in range(k):
            v = lax.slice_in_dim(x, j, j + (out - 1) * s + 1, s, axis)
            total = v if total is None else total + v
        x = total
    return x


def _avg_pool(x, k, s, p, out, count_include_pad, divisor_override):
    """Window sums (lax.reduce_window) divided by PyTorch's divisor per output."""
    n = len(k)
    lead = x.ndim - n
    sizes = x.shape[lead:]
    name = np.dtype(x.dtype).name
    acc = jnp.float32 if name in _HALF else x.dtype  # PyTorch sums half precision in float
    high = [(o - 1) * st + kk - pp - i for o, st, kk, pp, i in zip(out, s, k, p, sizes)]
    xp = lax.pad(x.astype(acc), np.zeros((), acc), [(0, 0, 0)] * lead
                 + [(pp, h, 0) for pp, h in zip(p, high)])
    window = functools.partial(_window_sum, kernel=tuple(k), stride=tuple(s))
    total = lax.platform_dependent(xp, cpu=window, default=functools.partial(
        lax.reduce_window, init_value=np.zeros((), acc), computation=lax.add,
        window_dimensions=(1,) * lead + tuple(k), window_strides=(1,) * lead + tuple(s),
        padding="VALID"))
    if divisor_override is not None:
        div = np.asarray(divisor_override)
    else:
        factors = []
        for o, st, kk, pp, i in zip(out, s, k, p, sizes):
            start = np.arange(o) * st - pp
            end = np.minimum(start + kk, i + pp)  # windows end at the right padding
            if count_include_pad:
                factors.append(end - start)
            else:
                factors.append(np.minimum(end, i) - np.maximum(start, 0))
        div = functools.reduce(np.multiply.outer, factors)
    if name == "int64":  # C++ integer division: rounds toward zero
        return lax.div(total, jnp.broadcast_to(jnp.asarray(div, total.dtype), total.shape))
    return (total / jnp.asarray(div, acc)).astype(x.dtype)


def _avg_pool2d_native(x, k, s, p, ceil_mode, count_include_pad, divisor_override):
    k, s, p, _ = _pool_lists("avg_pool2d", 2, True, k, s, p)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _size_at(x, -3)
    out = tuple(_out_size(i, kk, pp, st, 1, ceil_mode) for i, kk, pp, st in
                zip(x.shape[-2:], k, p, s))
    _shape_check2d(x, k, s, p, (1, 1), out)
    _need_dtype(x, "avg_pool2d", also={"int64"})
    return _avg_pool(x, k, s, p, out, count_include_pad, divisor_override)


def _avg_pool_args(fn, kernel_size, stride, padding):
    return (_int_list(kernel_size, fn, "kernel_size", 2), _int_list(stride, fn, "stride", 3),
            _int_list(padding, fn, "padding", 4))


@op(grad="SqueezeBackward1", needs=(), saves=("input",), **_NN)
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1d average pooling: the 2d op on input.unsqueeze(-2), as in PyTorch."""
    k, s, p = _avg_pool_args("avg_pool1d", kernel_size, stride, padding)
    s = s or k
    _dim_range(input, "avg_pool1d", 2, 4)
    for name, v in (("kernel_size", k), ("stride", s), ("padding", p)):
        _check1d("avg_pool1d", name, v)
    out = _avg_pool2d_native(input[..., None, :], (1, k[0]), (1, s[0]), (0, p[0]), ceil_mode,
                             count_include_pad, None)
    return out[..., 0, :]


@op(grad="AvgPool2DBackward0", needs=(), saves=("input",), **_NN)
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2d average pooling; padding counts in the divisor unless count_include_pad=False."""
    args = _avg_pool_args("avg_pool2d", kernel_size, stride, padding)
    return _avg_pool2d_native(input, *args, ceil_mode, count_include_pad, divisor_override)


@op(grad="AvgPool3DBackward0", needs=(), saves=("input",), **_NN)
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """3d average pooling."""
    k, s, p = _avg_pool_args("avg_pool3d", kernel_size, stride, padding)
    k, s, p, _ = _pool_lists("avg_pool3d", 3, False, k, s, p)
    if input.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    out = tuple(_out_size(i, kk, pp, st, 1, ceil_mode) for i, kk, pp, st in
                zip(input.shape[-3:], k, p, s))
    _shape_check3d(input, k, s, p, (1, 1, 1), out, "avg_pool3d()", check_input_size=True)
    # PyTorch's CPU build also rejects half precision here; its CUDA build and torchjax do not
    _need_dtype(input, "avg_pool3d_out_frame", also={"int64"})
    return _avg_pool(input, k, s, p, out, count_include_pad, divisor_override)
