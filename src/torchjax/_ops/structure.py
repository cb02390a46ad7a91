"""Op-table rows: structural ops: triangles, diagonals, flips, rolls, tiling, stacking and splitting.

Ops PyTorch itself builds from other ops (hstack is cat of atleast_1d, meshgrid is expand, ...)
are composites here too, so their grad_fn names and view relations come out as PyTorch's.
"""

from __future__ import annotations

import itertools
import math

import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _dtypes
from .._untraceable import Untraceable
from ._registry import function, op
from .shape import _dim, _fmt, _shape_arg, _star


def _scalar_name(a):
    return _dtypes.SCALAR_NAMES[_dtypes.from_jax(a.dtype).name]


def _call(name, *args, **kwargs):
    from .._dispatch import call_op
    return call_op(name, *args, **kwargs)


def _tj():
    import torchjax
    return torchjax


def _is_tensor(v):
    from .._tensor import Tensor
    return isinstance(v, Tensor)


def _concrete(t, what):
    """The values of tensor t as a NumPy array, which shape-deciding arguments need."""
    try:
        return np.asarray(t._data)
    except Exception:
        raise Untraceable(f"{what} decides the result's shape, so it must hold concrete values "
                           f"(it cannot be traced)") from None


# -- triangles and diagonals -----------------------------------------------------------------

def _tri_check(name, input):
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


@op(promote="none", needs=(), inplace=True)
def tril(input, diagonal=0):
    """The lower triangle of the last two dims (entries above `diagonal` set to 0)."""
    _tri_check("tril", input)
    return jnp.tril(input, diagonal)


@op(promote="none", needs=(), inplace=True)
def triu(input, diagonal=0):
    """The upper triangle of the last two dims (entries below `diagonal` set to 0)."""
    _tri_check("triu", input)
    return jnp.triu(input, diagonal)


def _tri_indices(name, lower, row, col, offset, dtype, device):
    d = _dtypes.to_dtype(dtype)
    if d.name not in ("int32", "int64", "int16", "int8", "uint8"):
        raise NotImplementedError(f'"{name}" not implemented for '
                                  f"'{_dtypes.SCALAR_NAMES[d.name]}'")
    if row < 0 or col < 0:
        raise RuntimeError(f"{name}: row and col must be non-negative, got {row} and {col}")
    r, c = np.indices((row, col))
    keep = (c - r <= offset) if lower else (c - r >= offset)
    out = np.stack([r[keep], c[keep]]) if row and col else np.zeros((2, 0), np.int64)
    return _tj().tensor(out, dtype=d, device=device)


@function(method=False)
def tril_indices(row, col, offset=0, *, dtype=_dtypes.int64, device=None, layout=None):
    """The (row, col) indices of the lower triangle of a row x col matrix, as a 2 x N tensor."""
    return _tri_indices("tril_indices", True, row, col, offset, dtype, device)


@function(method=False)
def triu_indices(row, col, offset=0, *, dtype=_dtypes.int64, device=None, layout=None):
    """The (row, col) indices of the upper triangle of a row x col matrix, as a 2 x N tensor."""
    return _tri_indices("triu_indices", False, row, col, offset, dtype, device)


def _diag_dims(ndim, dim1, dim2):
    d1, d2 = _dim(dim1, ndim), _dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


@op(promote="none", needs=(), view=True)
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of dims dim1 and dim2, as a new last dim (a view)."""
    d1, d2 = _diag_dims(input.ndim, dim1, dim2)
    return jnp.diagonal(input, offset, d1, d2)


@op(promote="none", needs=(), method=False, grad="DiagonalBackward0_copy")
def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    """The diagonal of dims dim1 and dim2, as a new tensor (not a view)."""
    d1, d2 = _diag_dims(input.ndim, dim1, dim2)
    return jnp.diagonal(input, offset, d1, d2)


def _embed(input, offset, d1, d2):
    n = input.shape[-1]
    m = n + abs(offset)
    rows = jnp.arange(n) + max(-offset, 0)
    cols = jnp.arange(n) + max(offset, 0)
    out = jnp.zeros(input.shape[:-1] + (m, m), input.dtype).at[..., rows, cols].set(input)
    return jnp.moveaxis(out, (-2, -1), (d1, d2))


@op(promote="none", needs=())
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices (in dims dim1, dim2) whose `offset` diagonal holds the last dim of input."""
    d1, d2 = _diag_dims(input.ndim + 1, dim1, dim2)
    return _embed(input, offset, d1, d2)


@op(promote="none", needs=(), grad="DiagEmbedBackward0")
def diagflat(input, offset=0):
    """A 2-D matrix whose `offset` diagonal holds the flattened input."""
    return _embed(input.reshape(-1), offset, 0, 1)


@function()
def diag(input, diagonal=0):
    """1-D input: the matrix with it on the `diagonal`; 2-D input: that diagonal, as a copy."""
    if not _is_tensor(input):
        raise TypeError(f"diag(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim == 1:
        return _call("diag_embed", input, diagonal)
    if input.ndim == 2:
        return _call("diagonal_copy", input, diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


@op(promote="none", saves=())
def trace(input):
    """The sum of the main diagonal of a matrix (integers sum to int64)."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input.dtype == jnp.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    d = jnp.diagonal(input)
    if jnp.issubdtype(d.dtype, jnp.integer):
        d = d.astype(jnp.int64)
    return jnp.sum(d)


# -- flips, rolls, rotations, tiling ---------------------------------------------------------

def _dims_unique(dims, ndim):
    out = [_dim(d, ndim) for d in dims]
    for d in out:
        if out.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return tuple(out)


@op(promote="none", needs=())
@_star("dims")
def flip(input, dims):
    """Reverse the order of entries along the given dims."""
    dims = _dims_unique(_shape_arg(dims), input.ndim)
    return jnp.flip(input, dims) if input.ndim and dims else input


@op(promote="none", needs=(), grad="FlipBackward0")
def fliplr(input):
    """Flip the columns (dim 1) of an at least 2-D tensor."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return jnp.flip(input, 1)


@op(promote="none", needs=(), grad="FlipBackward0")
def flipud(input):
    """Flip the rows (dim 0) of an at least 1-D tensor."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return jnp.flip(input, 0)


@op(promote="none", needs=())
def roll(input, shifts, dims=None):
    """Shift entries cyclically along dims (over the flattened tensor when dims is None)."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = () if dims is None else (dims,) if isinstance(dims, int) else tuple(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        if input.ndim == 0:
            return input
        return jnp.roll(input.reshape(-1), shifts[0]).reshape(input.shape)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    dims = tuple(_dim(d, input.ndim) for d in dims)
    return jnp.roll(input, shifts, dims) if input.ndim else input


@op(promote="none", needs=())
def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees k times in the plane of dims, from the first towards the second."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = _dim(dims[0], input.ndim), _dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    return jnp.rot90(input, k, (d0, d1))


@op(promote="none", needs=(), grad="RepeatBackward0")
@_star("dims")
def tile(input, dims):
    """Repeat the tensor dims[i] times along dim i (dims padded with leading 1s)."""
    reps = _shape_arg(dims)
    reps = (1,) * (input.ndim - len(reps)) + reps
    if any(r < 0 for r in reps):
        shape = (1,) * (len(reps) - input.ndim) + input.shape
        sizes = [s * r for s, r in zip(shape, reps)]
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: "
                           f"{_fmt(sizes)}")
    return jnp.tile(input, reps)


@op(name="repeat_interleave", promote="none", needs=(), function=False, method=False,
    grad="ViewBackward0")
def _repeat_interleave_int(input, repeats, dim=None, output_size=None):
    """Each entry repeated `repeats` times along dim (of the flattened input when dim is None)."""
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    if dim is None:
        input, d = input.reshape(-1), 0
    else:
        d = _dim(dim, input.ndim)
        if input.ndim == 0:
            input = input.reshape(1)
    want = input.shape[d] * repeats
    if output_size is not None and output_size != want:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {want} but got "
                           f"{output_size}")
    return jnp.repeat(input, repeats, axis=d)


def _repeat_counts(repeats):
    """The concrete values of a tensor of repeats, checked as PyTorch does."""
    if repeats.ndim > 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if not jnp.issubdtype(repeats._data.dtype, jnp.integer):
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                  f"'{_scalar_name(repeats._data)}'")
    r = _concrete(repeats, "repeat_interleave's tensor of repeats").reshape(-1).astype(np.int64)
    if (r < 0).any():
        raise RuntimeError("repeats can not be negative")
    return r


@function()
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each entry along dim; repeats is an int or a tensor of per-entry counts.

    repeat_interleave(repeats) alone gives the indices arange(len(repeats)) so repeated.
    """
    tj = _tj()
    if repeats is None:
        r = _repeat_counts(input)
        idx = np.repeat(np.arange(r.size, dtype=np.int64), r)
        if output_size is not None and output_size != idx.size:
            raise RuntimeError("allocated size does not match required size")
        return tj.tensor(idx, dtype=input.dtype, device=input.device)
    if not _is_tensor(repeats):
        return _call("repeat_interleave", input, int(repeats), dim, output_size)
    r = _repeat_counts(repeats)
    if dim is None:
        input, d = input.flatten(), 0
    else:
        d = _dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if r.size == 1:
        r = np.full(n, r[0])
    elif r.size != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {r.size} and input.size({d}) = {n}")
    idx = np.repeat(np.arange(n, dtype=np.int64), r)
    if output_size is not None and output_size != idx.size:
        raise RuntimeError("allocated size does not match required size")
    return tj.index_select(input, d, tj.tensor(idx, device=input.device))


# -- grids and combinations ------------------------------------------------------------------

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


# -- splitting (each piece is a view of the input) -------------------------------------------

@op(name="tensor_split", promote="none", needs=(), view=True, function=False, method=False,
    grad="SliceBackward0")
def _tensor_split(input, indices_or_sections, dim=0):
    """Split into `sections` nearly equal pieces, or at the given indices."""
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = _dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(indices_or_sections, int):
        s = indices_or_sections
        if s <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {s}")
        sizes = [n // s + (1 if i < n % s else 0) for i in range(s)]
        bounds = list(itertools.accumulate([0] + sizes))
        spans = list(zip(bounds[:-1], bounds[1:]))
    else:
        cuts = [min(max(i + n if i < 0 else i, 0), n) for i in indices_or_sections]
        starts, stops = [0] + cuts, cuts + [n]
        spans = [(a, max(a, b)) for a, b in zip(starts, stops)]
    return tuple(lax.slice_in_dim(input, a, b, axis=d) for a, b in spans)


def _split_arg(v):
    """indices_or_sections as a Python int or tuple (a tensor's values are read)."""
    if _is_tensor(v):
        if v.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {v.ndim} dims")
        if v.dtype is not _dtypes.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {_dtypes.SCALAR_NAMES[v.dtype.name]}")
        vals = _concrete(v, "tensor_split's tensor_indices_or_sections").tolist()
        return vals if isinstance(vals, int) else tuple(vals)
    if isinstance(v, (list, tuple)):
        return tuple(int(i) for i in v)
    return int(v)


@function()
def tensor_split(input, indices_or_sections, dim=0):
    """Split into `sections` pieces (sizes differ by at most one) or at the given indices."""
    return _call("tensor_split", input, _split_arg(indices_or_sections), dim)


def _dir_split(name, input, arg, need, d):
    if input.ndim < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, "
                           f"but got a tensor with {input.ndim} dimensions!")
    arg = _split_arg(arg)
    if isinstance(arg, int):
        n = input.shape[d]
        if arg == 0 or n % arg:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the "
                               f"size of the dimension {n} is not divisible by the split_size "
                               f"{arg}!")
    return _call("tensor_split", input, arg, d)


@function()
def hsplit(input, indices_or_sections):
    """Split along dim 1 (dim 0 for 1-D tensors) into equal sections or at indices."""
    d = 0 if input.ndim == 1 else 1
    return _dir_split("hsplit", input, indices_or_sections, 1, d)


@function()
def vsplit(input, indices_or_sections):
    """Split along dim 0 into equal sections or at indices (at least 2-D)."""
    return _dir_split("vsplit", input, indices_or_sections, 2, 0)


@function()
def dsplit(input, indices_or_sections):
    """Split along dim 2 into equal sections or at indices (at least 3-D)."""
    return _dir_split("dsplit", input, indices_or_sections, 3, 2)


@op(promote="none", needs=(), view=True, function=False)
def unfold(input, dimension, size, step):
    """All windows of `size` entries along `dimension`, `step` apart, as a new last dim."""
    d = _dim(dimension, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if input.ndim == 0:
        return input.reshape(1)
    count = (n - size) // step + 1
    idx = np.arange(count)[:, None] * step + np.arange(size)[None, :]
    return jnp.moveaxis(jnp.take(input, idx, axis=d), d + 1, -1)


@function(name="view_as", function=False)
def _view_as(self, other):
    """self viewed with other's shape."""
    return self.view(tuple(other.shape))


# -- products and distances ------------------------------------------------------------------

@op(tensors=("input", "other"), grad="UnsafeViewBackward0", saves=())
def kron(input, other):
    """The Kronecker product (the smaller-rank input gets leading dims of size 1)."""
    if input.dtype == jnp.bool_:
        return jnp.kron(input.astype(jnp.int8), other.astype(jnp.int8)).astype(jnp.bool_)
    return jnp.kron(input, other)


def _same_dtype(a, b, msg=None):
    if a.dtype != b.dtype:
        raise RuntimeError(msg or f"expected scalar type {_scalar_name(a)} but found "
                           f"{_scalar_name(b)}")


@op(name="tensordot", tensors=("a", "b"), promote="none", function=False, method=False,
    grad="ViewBackward0", saves={"a": ("b",), "b": ("a",)})
def _tensordot(a, b, dims=2):
    """Sum of products over the last `dims` dims of a and the first of b (or listed dims)."""
    _same_dtype(a, b, "both inputs should have same dtype")
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = tuple(range(a.ndim - dims, a.ndim)), tuple(range(dims))
    else:
        da, db = dims
        da = (da,) if isinstance(da, int) else tuple(da)
        db = (db,) if isinstance(db, int) else tuple(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
        da = tuple(_dim(d, a.ndim) for d in da)
        db = tuple(_dim(d, b.ndim) for d in db)
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[x]} in dim {x} and second has size {b.shape[y]} in "
                               f"dim {y}")
    return jnp.tensordot(a, b, (da, db), precision=lax.Precision.HIGHEST)


@function(method=False)
def tensordot(a, b, dims=2):
    """Sum of products over the last `dims` dims of a and the first of b (or listed dims)."""
    if _is_tensor(dims):
        v = _concrete(dims, "tensordot's dims").tolist()
        dims = v if isinstance(v, int) else tuple(tuple(x) for x in v)
    elif isinstance(dims, (list, tuple)):
        dims = tuple(tuple(x) if isinstance(x, (list, tuple)) else x for x in dims)
    return _call("tensordot", a, b, dims)


@op(tensors=("input", "other"), promote="none", grad="LinalgCrossBackward0",
    saves={"input": ("other",), "other": ("input",)})
def cross(input, other, dim=None):
    """The 3-D cross product along dim (the first dim of size 3 when dim is None)."""
    _same_dtype(input, other)
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if dim is None:
        if 3 not in input.shape:
            raise RuntimeError("no dimension of size 3 in input")
        d = input.shape.index(3)
    else:
        d = _dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    a = [lax.index_in_dim(input, i, d) for i in range(3)]
    b = [lax.index_in_dim(other, i, d) for i in range(3)]
    return jnp.concatenate([a[1] * b[2] - a[2] * b[1],
                            a[2] * b[0] - a[0] * b[2],
                            a[0] * b[1] - a[1] * b[0]], axis=d)


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


def _cdist_norm(diff, p):
    """The p-norm over the last dim, with PyTorch's cdist gradient: 0 wherever a difference
    (and so also a whole distance) is 0, and for p=inf the full gradient to every tie."""
    a = jnp.abs(diff)
    if p == 0:
        return jnp.sum(a != 0, axis=-1).astype(diff.dtype)
    sg = lax.stop_gradient
    if p == math.inf:
        m = sg(jnp.max(a, axis=-1, keepdims=True))
        lin = diff * sg(jnp.sign(diff)) - sg(a)  # value 0, gradient sign(diff)
        return (m + jnp.sum(jnp.where(sg(a) == m, lin, 0), axis=-1, keepdims=True))[..., 0]
    if p == 1:
        return jnp.sum(diff * sg(jnp.sign(diff)), axis=-1)
    zero = a == 0
    if p == 2:
        s = jnp.sum(diff * diff, axis=-1)
    else:
        s = jnp.sum(jnp.where(zero, 0, jnp.where(zero, 1, a) ** p), axis=-1)
    z = s == 0
    return jnp.where(z, 0, jnp.where(z, 1, s) ** (1 / p))


@op(tensors=("x1", "x2"), promote="none", function=True, method=False,
    saves=("x1", "x2", "result"))
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distances between each row of x1 and each row of x2 (batch dims broadcast)."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if not jnp.issubdtype(x1.dtype, jnp.floating):
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: "
                           f"{_scalar_name(x1)}")
    _same_dtype(x1, x2)
    if x1.dtype in (jnp.float16, jnp.bfloat16):
        raise NotImplementedError(f"\"cdist\" not implemented for '{_scalar_name(x1)}'")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    return _cdist_norm(diff, float(p))


# -- Vandermonde matrices --------------------------------------------------------------------

def _vander(x, N, increasing):
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        x = x.astype(jnp.int64)
    # a running product (as PyTorch computes it) keeps the derivative at x = 0 exact
    cols = jnp.broadcast_to(x[:, None], (x.shape[0], max(n - 1, 0)))
    ones = jnp.ones((x.shape[0], min(n, 1)), x.dtype)
    out = jnp.concatenate([ones, jnp.cumprod(cols, axis=1)], axis=1)
    return out if increasing else jnp.flip(out, 1)


# PyTorch names the grad_fn after its last step: a flip, or for increasing=True the write of
# the powers into the result (CopySlices)
@op(name="vander", tensors=("x",), promote="none", function=False, method=False,
    grad="FlipBackward0")
def _vander_decreasing(x, N=None):
    """Columns x^(N-1), ..., x, 1."""
    return _vander(x, N, False)


@op(promote="none", function=False, method=False, grad="CopySlices", tensors=("x",))
def _vander_increasing(x, N=None):
    """Columns 1, x, ..., x^(N-1)."""
    return _vander(x, N, True)


@function(method=False)
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D tensor: powers of x in columns (decreasing by default)."""
    row = "_vander_increasing" if increasing else "vander"
    if (x.shape[0] if N is None and x.ndim == 1 else N) in (0, 1):
        with _tj().no_grad():  # only ones or nothing: PyTorch's result does not require grad
            return _call(row, x, N)
    return _call(row, x, N)
