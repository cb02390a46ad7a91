"""NumPy rules (_numpy_eval) for the primitives of convolutions, pooling and scatters.

Kept apart from the elementwise and layout rules: these build windows over arrays
(numpy's sliding_window_view) and contract them with one matmul, an im2col, which is how a
convolution is fast in NumPy. Forms these rules do not handle (a window dilation in pooling,
batch groups in a convolution) raise NoRule, and the program is compiled instead.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ._numpy_eval import NoRule, _clamped_starts, rule, window_start


def _dilate(x, axes, factors):
    """Zeros inserted between elements along `axes` (factor d: d - 1 zeros)."""
    if all(d == 1 for d in factors):
        return x
    shape = list(x.shape)
    index = [slice(None)] * x.ndim
    for a, d in zip(axes, factors):
        shape[a] = (x.shape[a] - 1) * d + 1 if x.shape[a] else 0
        index[a] = slice(None, None, d)
    out = np.zeros(shape, x.dtype)
    out[tuple(index)] = x
    return out


def _pad(x, axes, pads, value):
    """Padding (lo, hi) along `axes`; negative amounts crop."""
    widths = [(0, 0)] * x.ndim
    crop = [slice(None)] * x.ndim
    for a, (lo, hi) in zip(axes, pads):
        widths[a] = (max(lo, 0), max(hi, 0))
        n = x.shape[a] + max(lo, 0) + max(hi, 0)
        crop[a] = slice(-min(lo, 0), n + min(hi, 0))
    if any(w != (0, 0) for w in widths):
        x = np.pad(x, widths, constant_values=value)
    return x[tuple(crop)]


def _windows(x, axes, sizes, strides):
    """x's windows: the dims of `axes` become output positions, with the window's own
    dims appended at the end."""
    w = sliding_window_view(x, sizes, axis=axes)
    index = [slice(None)] * w.ndim
    for a, s in zip(axes, strides):
        index[a] = slice(None, None, s)
    return w[tuple(index)]


@rule("conv_general_dilated")
def _conv(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
          feature_group_count, batch_group_count, preferred_element_type=None, **_):
    if batch_group_count != 1:
        raise NoRule("conv_general_dilated with batch groups")
    ls, rs, os_ = dimension_numbers
    x = np.transpose(lhs, ls)  # N, C, spatial
    k = np.transpose(rhs, rs)  # O, I, window
    nsp = x.ndim - 2
    sp = list(range(2, 2 + nsp))
    x = _pad(_dilate(x, sp, lhs_dilation), sp, padding, 0)
    k = _dilate(k, sp, rhs_dilation)
    w = _windows(x, sp, k.shape[2:], window_strides)  # N, C, P..., K...
    n, c = w.shape[:2]
    pos = w.shape[2:2 + nsp]
    g = feature_group_count
    o = k.shape[0]
    ksize = math.prod(k.shape[2:])
    # (N, P, G, C/G * K) @ (G, C/G * K, O/G) -> N, P, G, O/G
    cols = np.moveaxis(w, 1, 1 + nsp).reshape(n, math.prod(pos), g, (c // g) * ksize)
    kern = k.reshape(g, o // g, (c // g) * ksize).transpose(0, 2, 1)
    if preferred_element_type is not None:
        cols = cols.astype(preferred_element_type, copy=False)
        kern = kern.astype(preferred_element_type, copy=False)
    out = np.einsum("npgk,gko->npgo", cols, kern, optimize=True)
    out = out.reshape(n, *pos, o)
    out = np.moveaxis(out, -1, 1)  # N, O, P...
    return np.transpose(out, np.argsort(os_))


def _reduce_window(fn, identity):
    def evaluate(x, *, window_dimensions, window_strides, padding, base_dilation,
                 window_dilation, **_):
        if any(d != 1 for d in window_dilation) or any(d != 1 for d in base_dilation):
            raise NoRule("reduce_window with dilation")
        axes = list(range(x.ndim))
        x = _pad(x, axes, padding, identity(x.dtype))
        w = _windows(x, axes, window_dimensions, window_strides)
        return fn(w, axis=tuple(range(x.ndim, w.ndim)))
    return evaluate


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min if dtype.kind in "iu" else False


def _highest(dtype):
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max if dtype.kind in "iu" else True


rule("reduce_window_max")(_reduce_window(np.max, _lowest))
rule("reduce_window_min")(_reduce_window(np.min, _highest))
rule("reduce_window_sum")(_reduce_window(np.sum, lambda dtype: 0))


@rule("select_and_scatter_add")
def _select_and_scatter_add(source, operand, *, select_prim, window_dimensions, window_strides,
                            padding, **_):
    """Max pooling's backward: each window's source value added at the window's selected
    element (its first maximum for `ge`, minimum for `le`, as XLA scans a window)."""
    name = select_prim.name
    if name not in ("ge", "le"):
        raise NoRule(f"select_and_scatter_add selecting with {name}")
    axes = list(range(operand.ndim))
    fill = _lowest(operand.dtype) if name == "ge" else _highest(operand.dtype)
    padded = _pad(operand, axes, padding, fill)
    w = _windows(padded, axes, window_dimensions, window_strides)
    flat = w.reshape(*w.shape[:operand.ndim], -1)
    pick = (np.argmax if name == "ge" else np.argmin)(flat, axis=-1)  # the first, as XLA
    within = np.unravel_index(pick, window_dimensions)
    grid = np.indices(pick.shape)
    target = tuple(g * s + i for g, s, i in zip(grid, window_strides, within))
    out = np.zeros(padded.shape, source.dtype)
    np.add.at(out, target, source)
    lo = [p[0] for p in padding]
    return out[tuple(slice(a, a + n) for a, n in zip(lo, operand.shape))]


def _scatter(combine):
    def evaluate(operand, indices, updates, *, dimension_numbers, mode=None, **_):
        dn = dimension_numbers
        out = np.array(operand)
        scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
        batch_shape = tuple(updates.shape[d] for d in scatter_dims)
        window_shape = [updates.shape[d] for d in dn.update_window_dims]
        upd = np.moveaxis(updates, scatter_dims, list(range(len(scatter_dims))))
        op_batch = tuple(getattr(dn, "operand_batching_dims", ()))
        idx_batch = tuple(getattr(dn, "scatter_indices_batching_dims", ()))
        dropped = set(dn.inserted_window_dims) | set(op_batch)
        full = [d for d in range(operand.ndim) if d not in dropped]
        # XLA skips an update whose window falls outside; JAX's "clip" mode clamps it
        clip = "clip" in str(mode).lower()
        sizes = [1] * operand.ndim
        for d, n in zip(full, window_shape):
            sizes[d] = n
        for b in np.ndindex(*batch_shape):
            start = window_start(operand.ndim, indices, b, dn.scatter_dims_to_operand_dims,
                                 op_batch, idx_batch)
            if any(s < 0 or s + n > m for s, n, m in zip(start, sizes, operand.shape)):
                if not clip:
                    continue
                start = _clamped_starts(operand.shape, start, sizes)
            where = tuple(slice(s, s + n) for s, n in zip(start, sizes))
            piece = upd[b].reshape(sizes)
            out[where] = piece if combine is None else combine(out[where], piece)
        return out
    return evaluate


rule("scatter")(_scatter(None))
rule("scatter-add", "scatter_add")(_scatter(np.add))
rule("scatter-mul", "scatter_mul")(_scatter(np.multiply))
rule("scatter-min", "scatter_min")(_scatter(np.minimum))
rule("scatter-max", "scatter_max")(_scatter(np.maximum))
