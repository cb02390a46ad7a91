"""Op-table rows and composites: torch.histogram and Tensor.histogram, (hist, bin_edges) of a
floating tensor's values with `bins` equal-width bins over `range` (the data's range by
default) or over the edges of a bins tensor; torch.histogramdd, the same in D dims for the
rows of an (..., D) input.

As PyTorch's histogramdd kernel: a value's bin is the last edge not above it (upper bound
minus one) so that the counts agree with the bin_edges returned, the rightmost edge belongs to
the last bin, values outside [first edge, last edge] are not counted, and a range of one point
p becomes [p - 0.5, p + 0.5]. PyTorch has no derivative for it: the results carry a
NotImplemented grad_fn whose backward raises PyTorch's error.
"""

from __future__ import annotations

import builtins
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from ._nograd import no_derivative
from ._registry import function, op
from .sorting import _linspace
from .torch_linalg import _name

_no_derivative = no_derivative("derivative for aten::histogram is not implemented")


def _counts(x, edges, weight, density):
    """The histogram of the flat values x over sorted-or-not edges (PyTorch's rules above)."""
    n = edges.shape[0] - 1
    pos = jnp.searchsorted(edges, x, side="right") - 1
    pos = jnp.where(pos == n, n - 1, pos)  # the rightmost edge is in the last bin
    inside = (x >= edges[0]) & (x <= edges[-1])
    w = jnp.ones_like(x) if weight is None else weight.reshape(-1)
    hist = jnp.zeros(n, x.dtype).at[jnp.where(inside, pos, n)].add(w, mode="drop")
    if density:
        hist = hist / (jnp.sum(hist) * jnp.diff(edges))
    return hist


def _outer_edges(x, range):
    """PyTorch's leftmost and rightmost edges: range, else the data's min and max (0 and 1 for
    no data), widened by 0.5 each way when they are equal."""
    if range is not None:
        lo, hi = jnp.float64(range[0]), jnp.float64(range[1])
    elif x.size == 0:
        lo, hi = jnp.float64(0), jnp.float64(1)
    else:
        lo, hi = jnp.min(x).astype(jnp.float64), jnp.max(x).astype(jnp.float64)
    same = lo == hi
    return jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi)


def _finish(hist, edges, input, weight):
    # ties both results to the inputs: their backward raises PyTorch's error
    return _no_derivative(hist, input, weight), _no_derivative(edges, input, weight)


@op(tensors=("input", "weight"), promote="none", function=False, method=False, needs=(),
    saves=(), out_names=("hist", "bin_edges"), grad="NotImplemented")
def _histogram_bin_ct(input, weight, bins=100, range=None, density=False):
    """bins equal-width bins over range (the data's range when None)."""
    x = input.reshape(-1)
    lo, hi = _outer_edges(x, range)
    edges = _linspace(lo, hi, bins + 1, input.dtype)
    return _finish(_counts(x, edges, weight, density), edges, input, weight)


@op(tensors=("input", "bins", "weight"), promote="none", function=False, method=False,
    needs=(), saves=(), out_names=("hist", "bin_edges"), grad="NotImplemented")
def _histogram_bins_tensor(input, bins, weight, density=False):
    """The bins given by the edges tensor bins."""
    x = input.reshape(-1)
    edges = bins.astype(input.dtype)
    return _finish(_counts(x, edges, weight, density), edges, input, weight)


def _checks(input, weight):
    if not input.is_floating_point():
        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{_name(input._data)}'")
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError(
            f"torch.histogramdd: if weight tensor is provided it should have the same shape as "
            f"the input tensor excluding its innermost dimension, but got input with shape "
            f"[{input.numel()}, 1] and weight with shape "
            f"[{', '.join(map(str, weight.shape))}]")


def _check_finite(res):
    """PyTorch's error for a range that is not finite (a NaN or inf in the data), read only
    when the values are concrete."""
    edges = res.bin_edges._data
    if isinstance(edges, jax.core.Tracer) or edges.shape[0] == 0:
        return
    lo, hi = np.asarray(edges[0]), np.asarray(edges[-1])
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{_fmt(lo)}, {_fmt(hi)}] "
                           f"is not finite")


def _fmt(v) -> str:
    v = float(v)
    return "nan" if v != v else ("inf" if v > 0 else "-inf") if v in (np.inf, -np.inf) \
        else f"{v:g}"


@function(name="histogram")
def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """(hist, bin_edges): a histogram of input's values, bins an int or a 1-d edges tensor."""
    from .._dispatch import _return_type, call_op
    named = _return_type("histogram", ("hist", "bin_edges"))  # both rows' result, by name
    if out is not None:
        raise NotImplementedError("torch.histogram(out=...) is not supported by torchjax: use "
                                  "the returned (hist, bin_edges)")
    _checks(input, weight)
    if isinstance(bins, Tensor):
        if range is not None:
            raise TypeError("histogram() received an invalid combination of arguments - got "
                            "(Tensor, Tensor, range=tuple): range= goes with an int bins only")
        if bins.dim() != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {bins.dim()} dimensions in the bins tensor for dimension 0")
        return named(*call_op("_histogram_bins_tensor", input, bins, weight, bool(density)))
    if not isinstance(bins, numbers.Integral):
        raise TypeError(f"histogram(): argument 'bins' must be int or Tensor, not "
                        f"{type(bins).__name__}")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if range is not None:
        range = (float(range[0]), float(range[1]))
        if range[0] > range[1]:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{_fmt(range[0])} max {_fmt(range[1])} for dimension 0")
    res = call_op("_histogram_bin_ct", input, weight, int(bins), range, bool(density))
    _check_finite(res)
    return named(*res)


# -- histogramdd: one dim per column of the input's last dim -----------------------------------

def _counts_dd(x, edges, weight, density):
    """The D-dimensional histogram of the rows of x (N, D) over each dim's edges."""
    sizes = [e.shape[0] - 1 for e in edges]
    flat = jnp.zeros((), jnp.int64)
    inside = jnp.ones(x.shape[0], bool)
    for d, e in enumerate(edges):
        n = sizes[d]
        pos = jnp.searchsorted(e, x[:, d], side="right") - 1
        pos = jnp.where(pos == n, n - 1, pos)
        inside = inside & (x[:, d] >= e[0]) & (x[:, d] <= e[-1])
        flat = flat * n + pos
    total = int(np.prod(sizes))
    w = jnp.ones(x.shape[0], x.dtype) if weight is None else weight.reshape(-1)
    hist = jnp.zeros(total, x.dtype).at[jnp.where(inside, flat, total)].add(w, mode="drop")
    hist = hist.reshape(sizes)
    if density:
        volume = jnp.ones((), x.dtype)
        for d, e in enumerate(edges):
            shape = [1] * len(edges)
            shape[d] = -1
            volume = volume * jnp.diff(e).reshape(shape)
        hist = hist / (jnp.sum(hist) * volume)
    return hist


@op(tensors=("input", "weight"), promote="none", function=False, method=False, needs=(),
    saves=(), grad="NotImplemented")
def _histogramdd_bin_ct(input, weight, bins=(), range=None, density=False):
    """bins[d] equal-width bins along dim d over range[2d:2d+2] (the data's range)."""
    x = input.reshape(-1, input.shape[-1])
    edges = []
    for d, n in enumerate(bins):
        lo, hi = _outer_edges(x[:, d], None if range is None else range[2 * d:2 * d + 2])
        edges.append(_linspace(lo, hi, n + 1, input.dtype))
    hist = _counts_dd(x, edges, weight, density)
    return tuple(_no_derivative(t, input, weight) for t in (hist, *edges))


@op(tensors=("input", "weight"), tensor_list="bins", promote="none", function=False,
    method=False, needs=(), saves=(), grad="NotImplemented")
def _histogramdd_bins_tensors(input, bins, weight, density=False):
    """The bins given by one edges tensor per dim."""
    x = input.reshape(-1, input.shape[-1])
    edges = [b.astype(input.dtype) for b in bins]
    hist = _counts_dd(x, edges, weight, density)
    return tuple(_no_derivative(t, input, weight) for t in (hist, *edges))


@function(name="histogramdd", method=False)
def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """(hist, bin_edges): the histogram of the rows of input (..., D) in D dims, bins an
    int, D ints, or D edge tensors; bin_edges a tuple of D tensors."""
    from .._dispatch import _return_type, call_op
    named = _return_type("histogramdd", ("hist", "bin_edges"))
    if not input.is_floating_point():
        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{_name(input._data)}'")
    dims = input.shape[-1] if input.dim() else 1
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(
            f"torch.histogramdd: if weight tensor is provided it should have the same shape as "
            f"the input tensor excluding its innermost dimension, but got input with shape "
            f"[{', '.join(map(str, input.shape))}] and weight with shape "
            f"[{', '.join(map(str, weight.shape))}]")
    if isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor):
        if len(bins) != dims:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                               "dimension of the input.")
        out = call_op("_histogramdd_bins_tensors", input, list(bins), weight, bool(density))
        return named(out[0], tuple(out[1:]))
    counts = [int(bins)] * dims if isinstance(bins, numbers.Integral) else [int(b) for b in bins]
    if len(counts) != dims:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    for d, n in enumerate(counts):
        if n <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {n} for "
                               f"dimension {d}")  # (PyTorch names histogram here)
    if range is not None:
        range = tuple(float(v) for v in range)
        if len(range) != 2 * dims:
            raise RuntimeError(f"torch.histogramdd: for a {dims}-dimensional histogram range "
                               f"should have {2 * dims} elements, but got {len(range)}")
        for d in builtins.range(dims):
            if range[2 * d] > range[2 * d + 1]:
                raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                                   f"{_fmt(range[2 * d])} max {_fmt(range[2 * d + 1])} for "
                                   f"dimension {d}")
    out = call_op("_histogramdd_bin_ct", input, weight, tuple(counts), range, bool(density))
    for d, e in enumerate(out[1:]):
        if not isinstance(e._data, jax.core.Tracer) and e.shape[0]:
            lo, hi = np.asarray(e._data[0]), np.asarray(e._data[-1])
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_fmt(lo)}, "
                                   f"{_fmt(hi)}] is not finite")
    return named(out[0], tuple(out[1:]))
