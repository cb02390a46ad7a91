"""Op-table rows: structural ops: triangles, diagonals, flips, rolls and tiling, with the helpers
the other structural modules share (stacking, splitting, tensor_products).

Ops PyTorch itself builds from other ops (hstack is cat of atleast_1d, meshgrid is expand, ...)
are composites here too, so their grad_fn names and view relations come out as PyTorch's.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

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
