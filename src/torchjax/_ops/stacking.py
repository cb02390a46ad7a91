"""Op-table composites that combine tensors: grids and combinations (meshgrid, cartesian_prod),
broadcasting (broadcast_shapes, broadcast_to, broadcast_tensors, atleast_nd) and stacking
(hstack, vstack, dstack, column_stack, block_diag), each built from the ops PyTorch builds it
from, so grad_fn names and view relations come out as PyTorch's."""

from __future__ import annotations

import itertools

import jax.numpy as jnp
import numpy as np
from jax import lax

from ._registry import function, op
from .shape import _fmt, _star
from .structure import _is_tensor, _tj


def _tensor_args(args):
    """f(a, b), f([a, b]) and f((a, b)) all mean the tensors (a, b)."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return tuple(args[0])
    return tuple(args)


@function(method=False)
def meshgrid(*tensors, indexing=None):
    """Grids (views of expanded inputs) over the 0-D or 1-D inputs; 'ij' indexing by default."""
    ts = _tensor_args(tensors)
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    indexing = "ij" if indexing is None else indexing
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f"received: {indexing}")
    for t in ts:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got a tensor of shape {_fmt(t.shape)}")
        if t.dtype is not ts[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    sizes = [t.numel() for t in ts]
    order = list(range(len(ts)))
    if indexing == "xy" and len(ts) >= 2:
        order[0], order[1] = 1, 0
    shape = tuple(sizes[i] for i in order)
    out = []
    for i, t in enumerate(ts):
        pos = order.index(i)
        view = [1] * len(ts)
        view[pos] = -1
        out.append(t.reshape(tuple(view)).expand(shape))
    return tuple(out)


def _need_1d(ts):
    for t in ts:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {_fmt(t.shape)}")


@function(method=False)
def cartesian_prod(*tensors):
    """The Cartesian product of 1-D tensors, one row per combination."""
    ts = _tensor_args(tensors)
    _need_1d(ts)
    if len(ts) == 1:
        return ts[0]
    grids = meshgrid(*ts, indexing="ij")
    return _tj().stack([g.flatten() for g in grids], dim=1)


@function(method=False)
def combinations(input, r=2, with_replacement=False):
    """The length-r combinations of a 1-D tensor's entries, one per row."""
    _need_1d((input,))
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    tj = _tj()
    if r == 0:
        return tj.empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    cols = [tj.index_select(input, 0, tj.tensor(idx[:, j].copy(), device=input.device))
            for j in range(r)]
    return tj.stack(cols, dim=1)


# -- broadcasting ----------------------------------------------------------------------------

@function(method=False)
def broadcast_shapes(*shapes):
    """The shape that tensors of the given shapes broadcast to (a torch.Size)."""
    from .._tensor import Size
    norm = []
    for s in shapes:
        if isinstance(s, (int, np.integer)):
            s = (int(s),)
        elif not isinstance(s, (tuple, list)):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a "
                               f"list of ints, got {s}")
        norm.append(tuple(int(d) for d in s))
    out = [1] * max((len(s) for s in norm), default=0)
    for k, s in enumerate(norm):
        for i in range(-1, -len(s) - 1, -1):
            if s[i] < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if s[i] == 1 or s[i] == out[i]:
                continue
            if out[i] != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {s[i]} at {i}! Mismatching "
                    f"argument at index {k} had {s}; but expected shape should be broadcastable "
                    f"to {_fmt(out)}")
            out[i] = s[i]
    return Size(out)


def _infer_size(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")
    return tuple(y if x == 1 else x for x, y in zip(a, b))


@function()
def broadcast_to(input, size):
    """input broadcast to `size` (a view; -1 keeps a dim's size)."""
    return input.expand(tuple(size))


@function(method=False)
def broadcast_tensors(*tensors):
    """The tensors broadcast to their common shape (views; already matching ones as given)."""
    ts = _tensor_args(tensors)
    shape = ()
    for t in ts:
        shape = _infer_size(shape, tuple(t.shape))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in ts)


def _atleast(fn, tensors):
    if len(tensors) == 1 and _is_tensor(tensors[0]):
        return fn(tensors[0])
    return tuple(fn(t) for t in _tensor_args(tensors))


def _at1(t):
    return t.reshape(1) if t.ndim == 0 else t


def _at2(t):
    if t.ndim == 0:
        return t.reshape(1, 1)
    return t.unsqueeze(0) if t.ndim == 1 else t


def _at3(t):
    if t.ndim == 0:
        return t.reshape(1, 1, 1)
    if t.ndim == 1:
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1) if t.ndim == 2 else t


@function(method=False)
def atleast_1d(*tensors):
    """Each tensor with at least 1 dim (0-D becomes shape (1,)); a tuple for several."""
    return _atleast(_at1, tensors)


@function(method=False)
def atleast_2d(*tensors):
    """Each tensor with at least 2 dims (new leading dims); a tuple for several."""
    return _atleast(_at2, tensors)


@function(method=False)
def atleast_3d(*tensors):
    """Each tensor with at least 3 dims (1-D (n,) becomes (1, n, 1)); a tuple for several."""
    return _atleast(_at3, tensors)


# -- stacking --------------------------------------------------------------------------------

def _nonempty(name, tensors):
    ts = tuple(tensors)
    if not ts:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return ts


@function(method=False)
def hstack(tensors):
    """Join along dim 1 (dim 0 for 1-D tensors)."""
    ts = [_at1(t) for t in _nonempty("hstack", tensors)]
    return _tj().cat(ts, 0 if ts[0].ndim == 1 else 1)


@function(method=False, aliases=("row_stack",))
def vstack(tensors):
    """Join along dim 0, after making each tensor at least 2-D."""
    return _tj().cat([_at2(t) for t in _nonempty("vstack", tensors)], 0)


@function(method=False)
def dstack(tensors):
    """Join along dim 2, after making each tensor at least 3-D."""
    return _tj().cat([_at3(t) for t in _nonempty("dstack", tensors)], 2)


@function(method=False)
def column_stack(tensors):
    """Join as columns: 0-D and 1-D tensors become columns, others are joined along dim 1."""
    ts = _nonempty("column_stack", tensors)
    return _tj().cat([t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in ts], 1)


@op(tensors=(), tensor_list="tensors", needs=(), method=False)
@_star("tensors")
def block_diag(tensors):
    """A block diagonal matrix of the given 0-D, 1-D or 2-D tensors (dtypes promoted)."""
    mats = []
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions")
        mats.append(t.reshape((1,) * (2 - t.ndim) + t.shape))
    rows = sum(m.shape[0] for m in mats)
    cols = sum(m.shape[1] for m in mats)
    dtype = mats[0].dtype if mats else jnp.float32
    out = jnp.zeros((rows, cols) if mats else (1, 0), dtype)
    r = c = 0
    for m in mats:
        out = lax.dynamic_update_slice(out, m, (r, c))
        r, c = r + m.shape[0], c + m.shape[1]
    return out

