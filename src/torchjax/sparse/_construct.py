"""Making sparse COO tensors: torch.sparse_coo_tensor, Tensor.to_sparse, coalesce, and the
sparse .grad of a sparse leaf.

Index work (bounds checks, finding nonzeros, merging duplicates) needs the index values, so
it runs on the host with NumPy; values move only through recorded nodes, so gradients reach
them. Index arrays are int64 and kept in BCOO's order (nnz x sparse_dim).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes
from .._jax_node import edge_of, record
from .._tensor import Tensor
from .._x64 import scoped
from ._coo import CooData, SparseCooTensor, autograd_values, bcoo, indices_of, make, reaches_leaf


def host(arr, what: str) -> np.ndarray:
    """The values of an index array on the host; traced values cannot be had."""
    try:
        return np.asarray(arr)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        raise NotImplementedError(
            f"{what} needs the indices of a sparse tensor, which are not known while JAX traces "
            f"(torchjax.compile, torchjax.func, jax.jit): make sparse tensors outside the "
            f"traced function") from None


def _identity(v):
    return (v,)


def with_node(values: Tensor, name: str) -> Tensor:
    """`values` behind one recorded identity node named `name` (when it requires grad), so a
    sparse tensor made from it is a non-leaf whose gradient reaches it."""
    if not values._requires_grad:
        return values
    return record(_identity, (values._data,), (edge_of(values),), name)[0]


# -- torch.sparse_coo_tensor -----------------------------------------------------------------

@scoped
def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with `values` at `indices` (sparse_dim x nnz); gradients flow to
    `values` when it requires grad."""
    from .._creation import as_tensor
    if not isinstance(values, Tensor):
        values = as_tensor(values)
    if dtype is not None:
        values = values.to(_dtypes.to_dtype(dtype))
    if device is not None:
        values = values.to(device)
    idx = host(indices._data if isinstance(indices, Tensor) else indices, "sparse_coo_tensor")
    if idx.dtype.kind not in "iuf":
        raise RuntimeError(f"indices must be an int64 tensor, got {idx.dtype}")
    idx = idx.astype(np.int64)  # PyTorch converts other integer and float indices too
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    sparse_dim, nnz = idx.shape
    if values.ndim == 0:
        raise RuntimeError("values must have at least one dimension (nnz x dense dims)")
    if values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {values.shape[0]}")
    dense_shape = tuple(values.shape[1:])
    if size is None:
        if nnz == 0:
            raise RuntimeError("sparse_coo_tensor: cannot infer the size of a tensor with no "
                               "entries; pass size")
        size = tuple(int(m) + 1 for m in idx.max(axis=1)) + dense_shape
    size = tuple(int(d) for d in size)
    if len(size) != sparse_dim + len(dense_shape):
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) "
                           f"= {len(size)}, sparse_dim = {sparse_dim}, dense_dim = "
                           f"{len(dense_shape)}")
    if size[sparse_dim:] != dense_shape:
        raise RuntimeError(f"values has incorrect size, expected {list(size[:sparse_dim])} + "
                           f"{list(dense_shape)} = {list(size)}")
    # PyTorch checks only when asked (check_invariants); an index out of bounds would give a
    # wrong dense tensor later, so torchjax always checks (the indices are on the host anyway)
    _check_bounds(idx, size)
    if requires_grad:
        values = values.detach()
    vals = with_node(values, "SparseCooTensorWithDimsAndTensorsBackward0")
    coalesced = bool(is_coalesced) if is_coalesced is not None else nnz <= 1
    t = make(vals, jnp.asarray(idx.T, dtype=jnp.int64), size, coalesced)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _check_bounds(idx: np.ndarray, size) -> None:
    if idx.shape[1] == 0:
        return
    if idx.min() < 0:
        raise RuntimeError(f"found negative index {int(idx.min())} for dim "
                           f"{int(np.argmin(idx.min(axis=1)))}")
    for d, (m, n) in enumerate(zip(idx.max(axis=1), size)):
        if m >= n:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {n} "
                               f"but found index {int(m)}")


# -- Tensor.to_sparse ------------------------------------------------------------------------

@functools.cache
def _gather(sparse_dim: int):
    def fn(dense, idx):
        return (dense[tuple(idx[:, k] for k in range(sparse_dim))],)
    return fn


@scoped
def dense_to_sparse(t: Tensor, sparse_dim: int | None, name: str) -> SparseCooTensor:
    """The entries of a dense tensor that are not zero (rows of its first sparse_dim dims
    holding any nonzero when sparse_dim < ndim), coalesced."""
    sd = t.ndim if sparse_dim is None else int(sparse_dim)
    if not 0 < sd <= t.ndim:
        raise RuntimeError(f"sparse_dim argument must be in [0, {t.ndim}] range, but {sd} is "
                           f"given")
    arr = host(t._data, "to_sparse")
    mask = arr != 0
    if sd < t.ndim:
        mask = mask.reshape(arr.shape[:sd] + (-1,)).any(axis=-1)
    idx = np.argwhere(mask).astype(np.int64)  # row-major order: sorted, unique
    ind = jnp.asarray(idx, dtype=jnp.int64)
    (vals,) = record(_gather(sd), (t._data, ind), (edge_of(t), None), name)
    return make(vals, ind, t.shape, True)


# -- coalesce --------------------------------------------------------------------------------

def _linear(idx: np.ndarray, shape) -> np.ndarray:
    """Each index row (nnz x sparse_dim) as one number, in row-major order."""
    if idx.shape[0] == 0:
        return np.zeros((0,), np.int64)
    return np.ravel_multi_index(tuple(idx.T), tuple(shape))


@functools.cache
def _segment_sum(num: int):
    def fn(values, segments):
        return (jax.ops.segment_sum(values, segments, num_segments=num),)
    return fn


@scoped
def coalesce(s: SparseCooTensor) -> SparseCooTensor:
    """Duplicate indices merged (their values summed), indices sorted."""
    if s._data.coalesced:
        return s
    sd = s._data.bcoo.n_sparse
    idx = host(indices_of(s), "coalesce")
    uniq, inverse = np.unique(_linear(idx, s.shape[:sd]), return_inverse=True)
    new_idx = np.stack(np.unravel_index(uniq, s.shape[:sd]), axis=1).astype(np.int64)
    v = autograd_values(s)
    (vals,) = record(_segment_sum(len(uniq)), (v._data, jnp.asarray(inverse.reshape(-1))),
                     (edge_of(v), None), "CoalesceBackward0")
    return make(vals, jnp.asarray(new_idx.reshape(-1, sd), dtype=jnp.int64), s.shape, True,
                reaches_leaf(s))


# -- the .grad of a sparse leaf --------------------------------------------------------------

@scoped
def leaf_grad(s: SparseCooTensor, ct) -> SparseCooTensor:
    """A sparse leaf's gradient from its per-entry cotangent: PyTorch's gradient is the
    sparse tensor of the gradient at each stored position, once per position; every
    duplicate of a position carries that gradient, so the first one is taken."""
    idx = indices_of(s)
    if not s._data.coalesced:
        sd = s._data.bcoo.n_sparse
        hidx = host(idx, "backward")
        _, first = np.unique(_linear(hidx, s.shape[:sd]), return_index=True)
        ct = ct[first]
        idx = jnp.asarray(hidx[first].reshape(-1, sd), dtype=jnp.int64)
    # unique and sorted, but PyTorch does not mark it coalesced (values() then raises there too)
    return SparseCooTensor._wrap(CooData(bcoo(ct, idx, s.shape, True), False))
