"""Op-table rows: sorting, selection, unique and searching.

Sorting is always stable: NaN sorts as the largest value and -0.0 ties with 0.0. PyTorch's CPU
sort is stable with stable=True, and by default only along dims of at most 16 elements; longer
ones come out of an unstable sort whose order of equal values is not reproduced here. kthvalue replays PyTorch's CPU quickselect so that among equal values it
returns the same index. Ops whose output shape depends on the values (unique, nonzero, bincount)
are composites that read the concrete values, then gather through a row.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _dtypes
from .._untraceable import Untraceable
from ._nograd import no_derivative as _no_derivative
from ._registry import function, op
from .reduction import _dim1


def _tname(dt):
    return _dtypes.SCALAR_NAMES[_dtypes.from_jax(dt).name]


def _inexact(x):
    return jnp.issubdtype(x.dtype, jnp.inexact)


def _sort_key(x):
    # one NaN and one zero, so that NaNs and -0.0/0.0 tie and keep their order
    if _inexact(x):
        x = jnp.where(x == 0, jnp.zeros_like(x), x)
        return jnp.where(jnp.isnan(x), jnp.full_like(x, jnp.nan), x)
    return x


def _order(x, axis, descending):
    """Indices that sort x stably along axis; descending keeps equal values in input order."""
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    k = _sort_key(lax.stop_gradient(x))
    if descending:
        # an ascending stable sort of the reversed input, reversed, is stable descending
        k = jnp.flip(k, axis)
    iota = lax.broadcasted_iota(jnp.int64, k.shape, axis)
    _, idx = lax.sort((k, iota), dimension=axis, is_stable=True, num_keys=1)
    if descending:
        idx = k.shape[axis] - 1 - jnp.flip(idx, axis)
    return idx


def _check_stable(stable, name):
    if stable is not None and not isinstance(stable, bool):
        raise TypeError(f"{name}(): argument 'stable' must be bool, not {type(stable).__name__}")


# passing stable (any value but the default) selects PyTorch's sort.stable overload
@op(promote="none", out_names=("values", "indices"), saves=(),
    grad=lambda stable=False, **_: "SortBackward0" if stable is False else "SortBackward1")
def sort(input, dim=-1, descending=False, *, stable=False):
    """Sort along dim (stably); returns (values, indices)."""
    _check_stable(stable, "sort")
    d = _dim1(dim, input.ndim, "sort")
    if input.ndim == 0:
        return input, jnp.zeros((), jnp.int64)
    idx = _order(input, d, descending)
    return jnp.take_along_axis(input, idx, axis=d), idx


@op(promote="none", differentiable=False)
def argsort(input, dim=-1, descending=False, *, stable=False):
    """Indices that sort input along dim (stably)."""
    _check_stable(stable, "argsort")
    d = _dim1(dim, input.ndim, "argsort")
    if input.ndim == 0:
        return jnp.zeros((), jnp.int64)
    return _order(input, d, descending)


@op(promote="none", grad="SortBackward0", saves=())
def msort(input):
    """input sorted along its first dim."""
    if input.ndim == 0:
        return input
    idx = _order(input, 0, False)
    return jnp.take_along_axis(input, idx, axis=0)


@op(promote="none", out_names=("values", "indices"), saves=())
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The k largest (or smallest) values along dim and their indices, in sorted order."""
    d = _dim1(dim, input.ndim, "topk")
    if input.dtype == jnp.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if input.ndim == 0:
        return input, jnp.zeros((), jnp.int64)
    # sorted=False leaves the order unspecified: sorted order is one valid choice
    idx = lax.slice_in_dim(_order(input, d, largest), 0, k, axis=d)
    return jnp.take_along_axis(input, idx, axis=d), idx


def _quickselect(row, k):
    """The input index of the k-th smallest (0-based) of a 1-D row, found the way PyTorch's
    CPU kthvalue does (median-of-three pivot, Hoare partition, NaN largest), so that among
    equal values it picks the same one."""
    if _inexact(row):
        def gt(a, b):
            return (jnp.isnan(a) & ~jnp.isnan(b)) | (a > b)
    else:
        def gt(a, b):
            return a > b

    pos = jnp.arange(row.shape[0])

    def swap(v, ix, i, j, do=True):
        # as whole-row selects, not scatters: XLA compiles these loops several times faster
        vi, vj, ii, ij = v[i], v[j], ix[i], ix[j]
        at_i, at_j = (pos == i) & do, (pos == j) & do
        return (jnp.where(at_i, vj, jnp.where(at_j, vi, v)),
                jnp.where(at_i, ij, jnp.where(at_j, ii, ix)))

    def finish(s):
        v, ix, lo, hi, _ = s
        v, ix = swap(v, ix, lo, hi, (hi == lo + 1) & gt(v[lo], v[hi]))
        return v, ix, lo, hi, jnp.bool_(True)

    def partition(s):
        v, ix, lo, hi, _ = s
        v, ix = swap(v, ix, lo + (hi - lo) // 2, lo + 1)
        v, ix = swap(v, ix, lo + 1, hi, gt(v[lo + 1], v[hi]))
        v, ix = swap(v, ix, lo, hi, gt(v[lo], v[hi]))
        v, ix = swap(v, ix, lo + 1, lo, gt(v[lo + 1], v[lo]))
        piv = v[lo]

        def step(t):
            v, ix, i, j, _ = t
            # the bounds never bind on a real partition (v[hi] >= piv and v[lo] == piv stop
            # the scans); they stop the scans of rows vmap carries along after they finished
            i = lax.while_loop(lambda i: (i < hi) & gt(piv, v[i]), lambda i: i + 1, i + 1)
            j = lax.while_loop(lambda j: (j > lo) & gt(v[j], piv), lambda j: j - 1, j - 1)
            crossed = j < i
            v, ix = swap(v, ix, i, j, ~crossed)
            return v, ix, i, j, crossed

        v, ix, i, j, _ = lax.while_loop(lambda t: ~t[4], step, (v, ix, lo + 1, hi, jnp.bool_(False)))
        v, ix = swap(v, ix, lo, j)
        lo2 = jnp.where(j <= k, i, lo)
        hi2 = jnp.where(j >= k, j - 1, hi)
        return v, ix, lo2, hi2, jnp.bool_(False)

    def body(s):
        return lax.cond(s[3] <= s[2] + 1, finish, partition, s)

    n = row.shape[0]
    start = (row, jnp.arange(n, dtype=jnp.int64), jnp.int64(0), jnp.int64(n - 1), jnp.bool_(False))
    _, ix, _, _, _ = lax.while_loop(lambda s: ~s[4], body, start)
    return ix[k]


@op(promote="none", out_names=("values", "indices"), saves=())
def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest value along dim and its index."""
    d = _dim1(dim, input.ndim, "kthvalue")
    if input.dtype == jnp.bool_:
        raise NotImplementedError("\"kthvalue_cpu\" not implemented for 'Bool'")
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input.ndim == 0:
        return input, jnp.zeros((), jnp.int64)
    x = jnp.moveaxis(lax.stop_gradient(input), d, -1)
    rows = x.reshape(-1, n)
    # a sort finds the value; only when it is tied does the index depend on PyTorch's
    # quickselect, which is slow to replay, so it runs only then; row by row (lax.map): under
    # vmap every loop's predicate is batched, which took ~4x longer to lower
    key = _sort_key(rows)
    cand = lax.slice_in_dim(_order(rows, 1, False), k - 1, k, axis=1)
    kv = jnp.take_along_axis(key, cand, axis=1)
    same = (key == kv) | (jnp.isnan(key) & jnp.isnan(kv)) if _inexact(rows) else key == kv
    idx = lax.cond(jnp.any(jnp.sum(same, axis=1) > 1),
                   lambda: lax.map(lambda r: _quickselect(r, k - 1), rows)[:, None],
                   lambda: cand)
    idx = jnp.moveaxis(idx.reshape(x.shape[:-1] + (1,)), -1, d)
    vals = jnp.take_along_axis(input, idx, axis=d)
    if not keepdim:
        vals, idx = jnp.squeeze(vals, d), jnp.squeeze(idx, d)
    return vals, idx


# -- searching -------------------------------------------------------------------------------

def _bisect(seq, vals, right):
    """PyTorch's binary search with plain comparisons: per row of seq (..., n), the first
    position whose element is >= (right: >) each of vals (..., m)."""
    n = seq.shape[-1]
    lo = jnp.zeros(vals.shape, jnp.int64)
    hi = jnp.full(vals.shape, n, jnp.int64)
    for _ in range(max(n, 1).bit_length() + 1):
        active = lo < hi
        mid = lo + (hi - lo) // 2
        m = jnp.take_along_axis(seq, jnp.minimum(mid, n - 1), axis=-1)
        # NaN compares false, so a NaN value goes past every element, as in PyTorch
        go_right = ~(m > vals) if right else ~(m >= vals)
        lo = jnp.where(active & go_right, mid + 1, lo)
        hi = jnp.where(active & ~go_right, mid, hi)
    return lo


def _search(seq, values, right, out_int32, sorter, name):
    if seq.ndim == 0:
        raise RuntimeError(f"{name}(): boundaries tensor should have positive dimension, but "
                           "got 0 dimension")
    if seq.dtype == jnp.bool_:
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    values = jnp.asarray(values)
    if seq.ndim > 1 and (values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(
            f"{name}(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
            "boundaries tensor and input value tensor must match, but we got boundaries tensor "
            f"{list(seq.shape)} and input value tensor {list(values.shape)}")
    if sorter is not None:
        if sorter.dtype != jnp.int64:
            raise RuntimeError(f"{name}(): sorter must be a tensor of long dtype but got dtype "
                               f"{_tname(sorter.dtype)}")
        if sorter.shape != seq.shape:
            raise RuntimeError(f"{name}(): boundary and sorter must have the same size, but "
                               f"got boundary tensor {list(seq.shape)} and got sorter tensor "
                               f"{list(sorter.shape)}")
        seq = jnp.take_along_axis(seq, sorter, axis=-1)
    if seq.ndim == 1:
        flat = values.reshape(1, -1)
        out = _bisect(seq[None], flat, right).reshape(values.shape)
    else:
        out = _bisect(seq, values, right)
    return out.astype(jnp.int32 if out_int32 else jnp.int64)


@op(tensors=("sorted_sequence", "input", "sorter"), promote_args=("sorted_sequence", "input"),
    method=False, differentiable=False)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """Positions where input would be inserted into the innermost dim of sorted_sequence."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError("torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    return _search(sorted_sequence, input, right, out_int32, sorter, "torch.searchsorted")


@op(tensors=("input", "boundaries"), method=False, differentiable=False)
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The index of the bucket of boundaries each element of input falls in."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim"
                           f"({boundaries.ndim})")
    return _search(boundaries, input, right, out_int32, None, "torch.bucketize")


@op(tensors=("elements", "test_elements"), promote="none", method=False, differentiable=False)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each of elements is in test_elements (elementwise, bool)."""
    for a in (elements, test_elements):
        if jnp.asarray(a).dtype == jnp.bool_:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    dt = jnp.result_type(elements, test_elements)
    elements, test_elements = jnp.asarray(elements, dt), jnp.asarray(test_elements, dt)
    t = test_elements.reshape(-1)
    if t.size == 0:
        found = jnp.zeros(elements.shape, jnp.bool_)
    else:
        s = jnp.sort(t)
        pos = jnp.clip(jnp.searchsorted(s, elements), 0, t.size - 1)
        found = s[pos] == elements
    return ~found if invert else found


# -- histograms ------------------------------------------------------------------------------

def _linspace(start, end, steps, dt):
    """torch.linspace's values: from start for the first half, from end for the second."""
    start, end = jnp.asarray(start, dt), jnp.asarray(end, dt)
    step = (end - start) / jnp.asarray(steps - 1, dt)
    i = jnp.arange(steps)
    return jnp.where(i < steps // 2, start + step * i.astype(dt),
                     end - step * (steps - 1 - i).astype(dt))


@op(promote="none", function=False, method=False, differentiable=False)
def histc(input, bins=100, min=0, max=0):
    """Histogram of input in bins equal-width bins over [min, max] (the data's range if equal)."""
    dt = input.dtype
    x = input.reshape(-1)
    if min == max and x.size:
        lo, hi = jnp.min(x).astype(jnp.float64), jnp.max(x).astype(jnp.float64)
    else:
        lo, hi = jnp.float64(min), jnp.float64(max)
    same = lo == hi
    lo, hi = jnp.where(same, lo - 1, lo), jnp.where(same, hi + 1, hi)
    edges = _linspace(lo, hi, bins + 1, dt)
    left, right = edges[0], edges[-1]
    pos = ((x - left) * jnp.asarray(bins, dt) / (right - left)).astype(jnp.int64)
    pos = jnp.where(pos == bins, bins - 1, pos)
    inside = (x >= left) & (x <= right)
    counts = jnp.zeros(bins, dt).at[jnp.where(inside, pos, bins)].add(
        jnp.ones_like(x), mode="drop")
    return counts


def _is_tracer(a):
    return isinstance(a, jax.core.Tracer)


def _data(t):
    return t._data


def _traced_error(name):
    return Untraceable(f"{name} gives a shape that depends on the input's values, which cannot "
                        "be traced")


def _fmt(v):
    v = float(v)
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return f"{v:g}"


@function(name="histc")
def _histc(input, bins=100, min=0, max=0):
    """Histogram of input in bins equal-width bins over [min, max] (the data's range if equal)."""
    from .._dispatch import PREPARED, dispatch
    from .._tensor import Tensor
    if not isinstance(input, Tensor):
        raise TypeError(f"histc(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    a = _data(input)
    if not jnp.issubdtype(a.dtype, jnp.floating):
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_tname(a.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = min, max
    if lo == hi and a.size and not _is_tracer(a):
        lo, hi = float(jnp.min(a)), float(jnp.max(a))
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_fmt(lo)}, {_fmt(hi)}] is not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    return dispatch(PREPARED["histc"], (input,), (bins, min, max))


# -- value-dependent shapes ------------------------------------------------------------------

_UNIQUE2 = _no_derivative("the derivative for '_unique2' is not implemented.", NotImplementedError)
_UNIQUE_DIM = _no_derivative("the derivative for 'unique_dim' is not implemented.",
                             NotImplementedError)
_UNIQUE_CONSEC = _no_derivative("the derivative for 'unique_consecutive' is not implemented.",
                                NotImplementedError)
_BINCOUNT = _no_derivative("derivative for aten::bincount is not implemented", RuntimeError)


def _pick(input, index, dim):
    if dim is None:
        return input.reshape(-1)[index]
    return jnp.take(input, index, axis=dim)


@op(tensors=("input", "index"), promote="none", function=False, method=False,
    grad="Unique2Backward0", saves=())
def _unique2(input, index):
    """The unique elements of input, picked at index (they have no derivative)."""
    return _UNIQUE2(_pick(input, index, None))


@op(tensors=("input", "index"), promote="none", function=False, method=False,
    grad="UniqueDimBackward0", saves=())
def _unique_dim(input, index, dim):
    """The unique slices of input along dim, picked at index (they have no derivative)."""
    return _UNIQUE_DIM(_pick(input, index, dim))


@op(tensors=("input", "index"), promote="none", function=False, method=False,
    grad="UniqueConsecutiveBackward0", saves=())
def _unique_consecutive(input, index, dim):
    """The first of each run of equal elements (or slices along dim), picked at index."""
    return _UNIQUE_CONSEC(_pick(input, index, dim))


def _host(t):
    """The concrete values as NumPy (half floats widened exactly, for sorting)."""
    a = np.asarray(_data(t))
    if a.dtype.kind == "f" and a.dtype.itemsize < 4 or str(a.dtype) == "bfloat16":
        a = a.astype(np.float32)
    return a


def _runs(rows, n, sort):
    """(first index of each group, inverse, counts) of the n rows of a 2-D array; sort groups
    equal rows anywhere, else only consecutive ones."""
    if n == 0:
        e = np.zeros(0, np.int64)
        return e, e, e
    if sort:
        order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(n)
        s = rows[order]
    else:
        order, s = np.arange(n), rows
    new = np.ones(n, bool)
    # NaN != NaN: each NaN starts its own group, as in PyTorch
    new[1:] = np.any(s[1:] != s[:-1], axis=1)
    starts = np.flatnonzero(new)
    group = np.cumsum(new) - 1
    inverse = np.empty(n, np.int64)
    inverse[order] = group
    counts = np.diff(np.append(starts, n)).astype(np.int64)
    return order[starts].astype(np.int64), inverse, counts


def _unique_impl(name, input, sort, return_inverse, return_counts, dim):
    from .._dispatch import PREPARED, dispatch
    from .._tensor import Tensor
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if dim is not None:
        # a bad dim is an error of the shape alone: raised before the values are needed, so
        # a compiled function gets the error, not a graph break
        ndim = _data(input).ndim
        if ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = _dim1(dim, ndim, name)
    if _is_tracer(_data(input)):
        raise _traced_error(name)
    a = _host(input)
    if dim is None:
        flat = a.reshape(-1)
        first, inverse, counts = _runs(flat[:, None], flat.size, sort)
        inverse = inverse.reshape(a.shape)
        row = "_unique2" if sort else "_unique_consecutive"
        stat = () if sort else (None,)
    else:
        m = np.moveaxis(a, d, 0)
        rows = m.reshape(m.shape[0], int(np.prod(m.shape[1:], dtype=np.int64)))
        first, inverse, counts = _runs(rows, m.shape[0], sort)
        row = "_unique_dim" if sort else "_unique_consecutive"
        stat = (d,)
    dev = next(iter(_data(input).devices()))

    def wrap(x):
        return Tensor._wrap(jax.device_put(jnp.asarray(x), dev))

    out = dispatch(PREPARED[row], (input, wrap(first)), stat)
    res = (out,)
    if return_inverse:
        res += (wrap(inverse),)
    if return_counts:
        res += (wrap(counts),)
    return res[0] if len(res) == 1 else res


@function()
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The unique elements (or slices along dim) of input, in ascending order; optionally the
    inverse indices and the counts."""
    # PyTorch's CPU unique sorts also when sorted=False
    return _unique_impl("unique", input, True, return_inverse, return_counts, dim)


@function()
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The first element (or slice along dim) of every run of equal ones; optionally the
    inverse indices and the run lengths."""
    return _unique_impl("unique_consecutive", input, False, return_inverse, return_counts, dim)


@op(promote="none", function=False, method=False, differentiable=False)
def _nonzero(input, count):
    """The indices of the count nonzero elements of input, one row each (count, ndim)."""
    if input.ndim == 0:
        return jnp.zeros((count, 0), jnp.int64)
    idx = jnp.nonzero(input, size=count)
    return jnp.stack(idx, axis=1).astype(jnp.int64)


def _nonzero_impl(name, input, as_tuple):
    from .._dispatch import PREPARED, dispatch
    from .._tensor import Tensor
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    a = _data(input)
    if _is_tracer(a):
        raise _traced_error(name)
    count = int(np.count_nonzero(np.asarray(a)))
    out = dispatch(PREPARED["_nonzero"], (input,), (count,))
    if not as_tuple:
        return out
    if input.ndim == 0:
        # a 0-d input reads as one element
        return (dispatch(PREPARED["_nonzero"], (input.reshape(1),), (count,))[:, 0],)
    return tuple(out[:, i] for i in range(input.ndim))


@function()
def nonzero(input, *, as_tuple=False):
    """The indices of the nonzero elements: a (count, ndim) tensor, or one tensor per dim."""
    return _nonzero_impl("nonzero", input, as_tuple)


@function()
def argwhere(input):
    """The indices of the nonzero elements as a (count, ndim) tensor."""
    return _nonzero_impl("argwhere", input, False)


@op(tensors=("input", "weights"), promote="none", function=False, method=False,
    grad="NotImplemented", saves=())
def _bincount(input, weights, length):
    """Counts (or weight sums) of each value 0..length-1 of the 1-D integer input."""
    if weights is None:
        return jnp.zeros(length, jnp.int64).at[input].add(1)
    dt = jnp.float32 if weights.dtype == jnp.float32 else jnp.float64
    return _BINCOUNT(jnp.zeros(length, dt).at[input].add(weights.astype(dt)))


@function()
def bincount(input, weights=None, minlength=0):
    """The number of occurrences (or summed weights) of each value in a 1-D non-negative
    integer tensor; at least minlength bins."""
    from .._dispatch import PREPARED, dispatch
    from .._tensor import Tensor
    if not isinstance(input, Tensor):
        raise TypeError(f"bincount(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    a = _data(input)
    if not jnp.issubdtype(a.dtype, jnp.integer):
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_tname(a.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if a.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != a.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if _is_tracer(a):
        raise _traced_error("bincount")
    h = np.asarray(a)
    if h.size and h.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    length = max(int(h.max()) + 1 if h.size else 0, int(minlength))
    return dispatch(PREPARED["_bincount"], (input, weights), (length,))
