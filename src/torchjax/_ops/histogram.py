"""Op-table rows and composite: torch.histogram and Tensor.histogram, (hist, bin_edges) of a
floating tensor's values with `bins` equal-width bins over `range` (the data's range by
default) or over the edges of a bins tensor.

As PyTorch's histogramdd kernel: a value's bin is the last edge not above it (upper bound
minus one) so that the counts agree with the bin_edges returned, the rightmost edge belongs to
the last bin, values outside [first edge, last edge] are not counted, and a range of one point
p becomes [p - 0.5, p + 0.5]. PyTorch has no derivative for it: the results carry a
NotImplemented grad_fn whose backward raises PyTorch's error.
"""

from __future__ import annotations

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
