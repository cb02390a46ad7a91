"""nn.functional pooling functions that are not single rows of the op table (they route between
rows, or take Python-level arguments such as `return_indices`).

The rows live in torchjax/_ops/pooling.py (max_pool*d_with_indices, avg_pool*d),
adaptive_pooling.py (adaptive_*_pool*d) and unpooling.py (PyTorch's native
max_unpool2d/3d); these functions add what
torch.nn.functional does in Python around them."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ... import _dispatch
from ..._ops.adaptive_pooling import _list_with_default
from ..._ops.pooling import _int_list, _max_pool_args, _out_size, _scalar_name
from ..._tensor import Tensor
from ..._x64 import scoped
from .. import functional as F  # partly initialised here (it imports this file): used in calls

__all__ = [
    "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "lp_pool1d", "lp_pool2d", "lp_pool3d",
    "max_pool1d", "max_pool2d", "max_pool3d",
    "max_unpool1d", "max_unpool2d", "max_unpool3d",
]


def _row(name):
    return _dispatch.FUNCTIONS[name]


# -- max pooling: values, or (values, indices) with return_indices ---------------------------

def _check_max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode):
    """The checks of PyTorch's max_pool1d without indices (its own kernel and messages)."""
    k, s, p, d = _max_pool_args("max_pool1d", kernel_size, stride, padding, dilation)
    shape = tuple(input.shape)
    if not ((len(shape) == 2 and shape[0] != 0 and shape[1] != 0)
            or (len(shape) == 3 and shape[1] != 0 and shape[2] != 0)):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
                           f"batch size for input, but got:{list(shape)}")
    if len(k) != 1:
        raise RuntimeError("max_pool1d() kernel_size must be an int, list of ints or tuple of "
                           f"ints of size 1 but got size {len(k)}")
    if len(s) > 1:
        raise RuntimeError("max_pool1d() stride must be None, an int, list of ints, or tuple of "
                           f"ints of size 1 but got size {len(s)}")
    if len(p) != 1:
        raise RuntimeError("max_pool1d() padding must be an int, list of ints, or tuple of ints "
                           f"of size 1 but got size {len(p)}")
    if len(d) != 1:
        raise RuntimeError("max_pool1d() dilation must be an int, list of ints or tuple of ints "
                           f"of size 1 but got size {len(d)}")
    (k,), (p,), (d,) = k, p, d
    s = s[0] if s else k
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError("max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    out = _out_size(shape[-1], k, p, s, d, ceil_mode)
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    if not input.is_floating_point():
        raise NotImplementedError(
            f"\"max_pool1d_impl\" not implemented for '{_scalar_name(input._data.dtype)}'")


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """1d max pooling over the last dim; (values, indices) when return_indices."""
    if return_indices:
        return _row("max_pool1d_with_indices")(input, kernel_size, stride, padding, dilation,
                                               ceil_mode)
    if not isinstance(input, Tensor):
        raise TypeError(f"max_pool1d(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    _check_max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _row("max_pool1d_with_indices")(input, kernel_size, stride, padding, dilation,
                                           ceil_mode)[0]


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """2d max pooling over the last two dims; (values, indices) when return_indices."""
    if not return_indices:  # PyTorch's TypeError for a non-int argument names max_pool2d
        _max_pool_args("max_pool2d", kernel_size, stride, padding, dilation)
    out = _row("max_pool2d_with_indices")(input, kernel_size, stride, padding, dilation,
                                          ceil_mode)
    return out if return_indices else out[0]


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """3d max pooling over the last three dims; (values, indices) when return_indices."""
    if not return_indices:  # PyTorch's TypeError for a non-int argument names max_pool3d
        _max_pool_args("max_pool3d", kernel_size, stride, padding, dilation)
    out = _row("max_pool3d_with_indices")(input, kernel_size, stride, padding, dilation,
                                          ceil_mode)
    return out if return_indices else out[0]


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """1d adaptive max pooling; (values, indices) when return_indices."""
    out = _row("adaptive_max_pool1d_with_indices")(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """2d adaptive max pooling; (values, indices) when return_indices."""
    out = _row("adaptive_max_pool2d_with_indices")(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """3d adaptive max pooling; (values, indices) when return_indices."""
    out = _row("adaptive_max_pool3d_with_indices")(input, output_size)
    return out if return_indices else out[0]


# -- adaptive average pooling: an output of all ones is a mean, as in PyTorch -----------------

def _all_ones(output_size, input, n):
    out = _list_with_default(output_size, tuple(input.shape))
    return out == 1 or (isinstance(out, (list, tuple)) and len(out) == n
                        and all(o == 1 for o in out))


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """2d adaptive average pooling (None in output_size keeps that input size)."""
    if _all_ones(output_size, input, 2):
        return input.mean((-1, -2), keepdim=True)
    return _row("adaptive_avg_pool2d")(input, output_size)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """3d adaptive average pooling (None in output_size keeps that input size)."""
    if _all_ones(output_size, input, 3):
        return input.mean((-1, -2, -3), keepdim=True)
    return _row("adaptive_avg_pool3d")(input, output_size)


# -- power-average pooling: PyTorch's own composition of avg_pool and pointwise ops -----------

def _lp_pool(n, input, norm_type, kernel_size, stride, ceil_mode, window):
    avg, mx = getattr(F, f"avg_pool{n}d"), globals()[f"max_pool{n}d"]
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return mx(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -mx(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (out.sign() * F.relu(out.abs())).mul(window).pow(1.0 / norm_type)


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


def lp_pool1d(input: Tensor, norm_type, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """(sum of x**p over each window) ** (1/p)."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode, kernel_size)


def lp_pool2d(input: Tensor, norm_type, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """(sum of x**p over each window) ** (1/p)."""
    kw, kh = _ntuple(kernel_size, 2)
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode, kw * kh)


def lp_pool3d(input: Tensor, norm_type, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """(sum of x**p over each window) ** (1/p)."""
    kd, kw, kh = _ntuple(kernel_size, 3)
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode, kd * kw * kh)


# -- max_unpool: PyTorch's Python output-size logic, then the native row -----------------------

def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """torch.nn.functional._unpool_output_size."""
    input_size = tuple(input.shape)
    n = len(kernel_size)
    default = [(input_size[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
               for d in range(n)]
    if output_size is None:
        ret = default
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for d in range(n):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < output_size[d] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                                 f"{lo} and {hi})")
        ret = output_size
    # the native op's TypeError (also keeps 5.0 from sharing the compiled op made for 5)
    _int_list(ret, f"max_unpool{max(n, 2)}d", "output_size", 3)
    for d in range(n):
        if ret[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                               f"dimensions, but got output_size[{d}]={ret[d]}")
    return ret


@jax.jit
def _last_invalid(idx, size):
    """(any index outside [0, size), the last such index: the one PyTorch's scan reports)."""
    bad = ((idx < 0) | (idx >= size)).reshape(-1)
    return jnp.any(bad), idx.reshape(-1)[bad.size - 1 - jnp.argmax(bad[::-1])]


@scoped  # int64 indices
def _check_unpool_indices(indices, out_sizes):
    """PyTorch's kernel rejects an index outside the output plane. Only concrete indices can
    be checked (inside torchjax.compile they are traced: such an index is dropped there)."""
    arr = indices._data
    if isinstance(arr, jax.core.Tracer) or arr.size == 0:
        return
    size = int(np.prod(out_sizes, dtype=np.int64))
    if size == 0:  # PyTorch's kernel has nothing to write, and checks nothing
        return
    bad, last = _last_invalid(arr, jnp.int64(size))
    if bool(bad):
        dims = "x".join(str(o) for o in out_sizes)
        raise RuntimeError(f"Found an invalid max index: {int(last)} (output volumes are of "
                           f"size {dims})")


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """Inverse of max_pool1d: each value goes back to its index, zeros elsewhere."""
    kernel_size = _ntuple(kernel_size, 1)
    stride = _ntuple(stride, 1) if stride is not None else kernel_size
    padding = _ntuple(padding, 1)
    out = list(_unpool_output_size(input, kernel_size, stride, padding, output_size)) + [1]
    x, i = input.unsqueeze(-1), indices.unsqueeze(-1)
    res = _row("max_unpool2d")(x, i, out)
    _check_unpool_indices(indices, out)
    return res.squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """Inverse of max_pool2d: each value goes back to its index, zeros elsewhere."""
    kernel_size = _ntuple(kernel_size, 2)
    stride = _ntuple(stride, 2) if stride is not None else kernel_size
    padding = _ntuple(padding, 2)
    out = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    res = _row("max_unpool2d")(input, indices, out)
    _check_unpool_indices(indices, out)
    return res


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """Inverse of max_pool3d: each value goes back to its index, zeros elsewhere."""
    kernel_size = _ntuple(kernel_size, 3)
    stride = _ntuple(stride, 3) if stride is not None else kernel_size
    padding = _ntuple(padding, 3)
    out = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    res = _row("max_unpool3d")(input, indices, out, stride, padding)
    _check_unpool_indices(indices, out)
    return res
