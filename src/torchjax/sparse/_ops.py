"""The computing ops of sparse COO tensors other than products (_products.py), each one
recorded node: to_dense, values(), sums, softmax, sparse + sparse.

Each is a pure function of the values, the indices (constants of the node) and dense
operands, run by _jax_node.record: one jitted call forward, JAX's vjp backward.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes
from .._jax_node import edge_of, record
from .._tensor import Tensor, _wrap_dim
from .._x64 import scoped
from ._construct import _linear, coalesce, host
from ._coo import (
    SparseCooTensor,
    autograd_values,
    bcoo,
    indices_of,
    is_sparse,
    make,
    reaches_leaf,
)


@functools.cache
def _densify(shape: tuple):
    def fn(values, idx):
        return (bcoo(values, idx, shape, False).todense(),)
    return fn


@scoped
def to_dense(s: SparseCooTensor, dtype=None) -> Tensor:
    """The dense tensor (duplicate entries add up)."""
    v = autograd_values(s)
    if dtype is not None:
        v = v.to(_dtypes.to_dtype(dtype))
    (out,) = record(_densify(tuple(s.shape)), (v._data, indices_of(s)), (edge_of(v), None),
                    "ToDenseBackward0")
    return out


def values(s: SparseCooTensor) -> Tensor:
    """The values of a coalesced tensor, differentiable (ValuesBackward0)."""
    if not s._data.coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() "
                           "first")
    v = autograd_values(s)
    if not v._requires_grad:
        return v
    from ._construct import _identity
    return record(_identity, (v._data,), (edge_of(v),), "ValuesBackward0")[0]


def add_same_pattern(a: SparseCooTensor, b: SparseCooTensor) -> SparseCooTensor:
    """a + b of two sparse gradients of one leaf (the same coalesced indices)."""
    from .._autograd.engine import _add
    return make(Tensor._wrap(_add(a._data.bcoo.data, b._data.bcoo.data)), indices_of(b),
                b.shape, False)


# -- sums --------------------------------------------------------------------------------------

@functools.cache
def _sum_all(dtype):
    def fn(values):
        return (jnp.sum(values, dtype=dtype),)
    return fn


@functools.cache
def _sum_dims(num: int | None, dense_axes: tuple, dtype):
    """Sum the stored entries into `num` segments (None: all into one, a dense result) and
    over the values' dense axes."""
    def fn(values, segments):
        if dense_axes:
            values = jnp.sum(values, axis=dense_axes)
        if num is None:
            return (jnp.sum(values, axis=0, dtype=dtype),)
        out = jax.ops.segment_sum(values, segments, num_segments=num)
        return (out.astype(dtype) if dtype is not None else out,)
    return fn


def _sum_dtype(s, dtype):
    if dtype is not None:
        return _dtypes.to_dtype(dtype)
    d = s.dtype
    return _dtypes.int64 if not (d.is_floating_point or d.is_complex) else d


@scoped
def sum(input, dim=None, dtype=None, *, dense_grad=False):
    """torch.sparse.sum: all entries (a dense 0-d tensor), or over `dim` (a sparse tensor
    while sparse dims remain, else dense). dense_grad: Tensor.sum(), whose gradient for a
    sparse leaf PyTorch makes dense."""
    if not is_sparse(input):
        return input.sum(dtype=dtype) if dim is None else input.sum(dim, dtype=dtype)
    out_dtype = _sum_dtype(input, dtype).np
    if dim is None:
        if dense_grad and input._requires_grad and reaches_leaf(input):
            if input._grad_fn is not None:
                raise NotImplementedError(
                    "Tensor.sum() of a sparse tensor computed from a sparse leaf that requires "
                    "grad: PyTorch gives that leaf a dense gradient, which torchjax does not carry "
                    "through sparse ops; use torch.sparse.sum (a sparse gradient)")
            from ._products import dense_leaf_record
            return dense_leaf_record(input, _sum_all(out_dtype), (), (), "SumBackward0")
        v = autograd_values(input)
        return record(_sum_all(out_dtype), (v._data,), (edge_of(v),), "SumBackward0")[0]
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    nd = input.ndim
    dims = sorted({_wrap_dim(d, nd) for d in dims})
    sd = input._data.bcoo.n_sparse
    keep = [d for d in range(sd) if d not in dims]
    dense_axes = tuple(d - sd + 1 for d in dims if d >= sd)
    v = autograd_values(input)
    if not keep:  # every sparse dim summed: a dense tensor
        fn = _sum_dims(None, dense_axes, out_dtype)
        return record(fn, (v._data, jnp.zeros((0,), jnp.int32)), (edge_of(v), None),
                      "SparseSumBackward0")[0]
    idx = host(indices_of(input), "torch.sparse.sum")
    kept_shape = tuple(input.shape[d] for d in keep)
    uniq, inverse = np.unique(_linear(idx[:, keep], kept_shape), return_inverse=True)
    new_idx = np.stack(np.unravel_index(uniq, kept_shape), axis=1).astype(np.int64)
    fn = _sum_dims(len(uniq), dense_axes, out_dtype)
    (vals,) = record(fn, (v._data, jnp.asarray(inverse.reshape(-1))), (edge_of(v), None),
                     "SparseSumBackward0")
    shape = kept_shape + tuple(input.shape[d] for d in range(sd, nd) if d not in dims)
    return make(vals, jnp.asarray(new_idx.reshape(-1, len(keep)), dtype=jnp.int64), shape,
                True, reaches_leaf(input))


# -- softmax -----------------------------------------------------------------------------------

@functools.cache
def _segment_softmax(num: int, log: bool):
    def fn(values, segments):
        peak = jax.ops.segment_max(values, segments, num_segments=num)
        shifted = values - jax.lax.stop_gradient(peak)[segments]
        total = jax.ops.segment_sum(jnp.exp(shifted), segments, num_segments=num)[segments]
        return (shifted - jnp.log(total) if log else jnp.exp(shifted) / total,)
    return fn


@scoped
def _softmax(input, dim: int, dtype, log: bool) -> SparseCooTensor:
    if not is_sparse(input):
        from ..nn import functional as F
        f = F.log_softmax if log else F.softmax
        return f(input, dim, dtype=dtype)
    dim = _wrap_dim(dim, input.ndim)
    sd = input._data.bcoo.n_sparse
    if dim >= sd:
        raise NotImplementedError("torch.sparse.softmax over a dense dimension of a hybrid "
                                  "tensor is not supported by torchjax")
    s = coalesce(input)
    if dtype is not None:
        s = _astype(s, dtype)
    if not (s.dtype.is_floating_point or s.dtype.is_complex):
        raise RuntimeError("softmax_lastdim_kernel_impl not implemented for 'Long'")
    idx = host(indices_of(s), "torch.sparse.softmax")
    others = [d for d in range(sd) if d != dim]
    _, groups = np.unique(_linear(idx[:, others], tuple(s.shape[d] for d in others)),
                          return_inverse=True)
    v = autograd_values(s)
    num = int(groups.max()) + 1 if groups.size else 0
    name = "SparseLogSoftmaxBackward0" if log else "SparseSoftmaxBackward0"
    (vals,) = record(_segment_softmax(num, log), (v._data, jnp.asarray(groups.reshape(-1))),
                     (edge_of(v), None), name)
    return make(vals, indices_of(s), s.shape, True, reaches_leaf(s))


def _astype(s: SparseCooTensor, dtype) -> SparseCooTensor:
    v = autograd_values(s).to(_dtypes.to_dtype(dtype))
    return make(v, indices_of(s), s.shape, s._data.coalesced, reaches_leaf(s))


def softmax(input, dim: int, dtype=None) -> Tensor:
    """torch.sparse.softmax: softmax over the stored entries along `dim` (missing entries
    count as -inf, so they stay missing)."""
    return _softmax(input, dim, dtype, False)


def log_softmax(input, dim: int, dtype=None) -> Tensor:
    """torch.sparse.log_softmax over the stored entries along `dim`."""
    return _softmax(input, dim, dtype, True)


@functools.cache
def _add_entries(dtype, num: int):
    def fn(a, b, alpha, segments):
        both = jnp.concatenate([a.astype(dtype), (b * alpha).astype(dtype)])
        return (jax.ops.segment_sum(both, segments, num_segments=num),)
    return fn


@scoped
def add_sparse(a: SparseCooTensor, b: SparseCooTensor, alpha=1) -> SparseCooTensor:
    """a + alpha * b of two sparse tensors of one shape: both entry lists, coalesced, as one
    node (AddBackward0)."""
    dtype = _dtypes.result_type_of((a, b))
    sd = a._data.bcoo.n_sparse
    idx = np.concatenate([host(indices_of(a), "add"), host(indices_of(b), "add")])
    uniq, inverse = np.unique(_linear(idx, a.shape[:sd]), return_inverse=True)
    new_idx = np.stack(np.unravel_index(uniq, a.shape[:sd]), axis=1).astype(np.int64)
    va, vb = autograd_values(a), autograd_values(b)
    (vals,) = record(_add_entries(dtype.np, len(uniq)),
                     (va._data, vb._data, alpha, jnp.asarray(inverse.reshape(-1))),
                     (edge_of(va), edge_of(vb), None, None), "AddBackward0")
    return make(vals, jnp.asarray(new_idx.reshape(-1, sd), dtype=jnp.int64), a.shape, True,
                reaches_leaf(a) or reaches_leaf(b))
