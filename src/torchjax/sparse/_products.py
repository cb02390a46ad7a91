"""Products of a sparse COO matrix and a dense operand, each one recorded node: torch.mm /
spmm / matmul / mv / addmm with a sparse operand, torch.sparse.mm and torch.sparse.addmm.

The sparse operand's gradient is per stored entry (see _coo.py), so the product's is the
sampled product of the output gradient and the dense operand, which BCOO's own vjp computes.
Where PyTorch gives a sparse *leaf* a dense gradient (torch.mm and friends), the node
differentiates the leaf's dense form instead (DenseGradOf).
"""

from __future__ import annotations

import functools

from .. import _dtypes
from .._jax_node import edge_of, record
from .._tensor import Tensor
from .._x64 import scoped
from ._coo import DenseGradOf, autograd_values, bcoo, indices_of, is_sparse, reaches_leaf
from ._ops import to_dense


@functools.cache
def _product(shape: tuple, sparse_left: bool, added: bool):
    """(values, indices, dense[, input, beta, alpha]) -> the product (beta * input + alpha *
    product with `added`, addmm's form)."""
    def fn(values, idx, dense, *addmm):
        a = bcoo(values, idx, shape, False)
        out = a @ dense if sparse_left else dense @ a
        if added:
            input, beta, alpha = addmm
            out = beta * input + alpha * out
        return (out,)
    return fn


def _check_product(fname, mat1, mat2):
    s = mat1 if is_sparse(mat1) else mat2
    if s.ndim != 2:
        raise RuntimeError(f"{fname}: the sparse operand must be a matrix, got {s.ndim}-D tensor")
    d = mat2 if s is mat1 else mat1
    if d.ndim != 2 and not (d.ndim == 1 and s is mat1):
        raise RuntimeError(f"{fname}: mat2 must be a matrix, got {d.ndim}-D tensor")
    if s._data.bcoo.n_dense:
        raise NotImplementedError(f"{fname}: a sparse operand with dense dimensions (hybrid COO) "
                                  f"is not supported by torchjax")
    if mat1.shape[1] != mat2.shape[0]:
        if is_sparse(mat1):
            raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size "
                               f"{mat1.shape[1]}, got {mat2.shape[0]}")
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(mat1.dtype)} but found "
                           f"{_scalar_name(mat2.dtype)}")


def _scalar_name(d) -> str:
    return _dtypes.SCALAR_NAMES[d.name]


@scoped
def product(mat1, mat2, name: str, fname: str, dense_grad: bool, addmm=None) -> Tensor:
    """mat1 @ mat2 with one sparse COO operand and one dense one (a matrix, or a vector on
    the right), as one node `name`; addmm=(input, beta, alpha) adds beta * input.

    dense_grad: the op is torch.mm/spmm/matmul, whose gradient for a sparse leaf PyTorch makes
    dense (every position, not only the stored ones); torchjax's sparse gradients hold stored
    positions only, so that case raises rather than give a different .grad."""
    if is_sparse(mat1) and is_sparse(mat2):
        raise NotImplementedError(f"{fname}: the product of two sparse tensors is not supported "
                                  f"by torchjax; convert one with .to_dense()")
    if not isinstance(mat1, Tensor) or not isinstance(mat2, Tensor):
        raise TypeError(f"{fname}(): expected Tensor arguments")
    _check_product(fname, mat1, mat2)
    s, d = (mat1, mat2) if is_sparse(mat1) else (mat2, mat1)
    if dense_grad and s._requires_grad and reaches_leaf(s):
        if s._grad_fn is not None:
            raise NotImplementedError(
                f"{fname} of a sparse tensor computed from a sparse leaf that requires grad: "
                f"PyTorch gives that leaf a dense gradient, which torchjax does not carry "
                f"through sparse ops; use torch.sparse.mm (a sparse gradient), or apply "
                f"{fname} to the leaf itself")
        if addmm is not None:
            raise NotImplementedError(f"{fname} with a sparse leaf that requires grad is not "
                                      f"supported by torchjax; use torch.sparse.mm and add")
        return _dense_grad_product(s, d, s is mat1, name)
    v = autograd_values(s)
    leaves, edges = [v._data, indices_of(s), d._data], [edge_of(v), None, edge_of(d)]
    if addmm is not None:
        input, beta, alpha = addmm
        if is_sparse(input):
            raise NotImplementedError(f"{fname} with a sparse input is not supported by "
                                      f"torchjax; use torch.sparse.mm and add")
        leaves += [input._data, beta, alpha]
        edges += [edge_of(input), None, None]
    (out,) = record(_product(tuple(s.shape), s is mat1, addmm is not None), tuple(leaves),
                    tuple(edges), name)
    return out


@functools.cache
def _dense_product(sparse_left: bool):
    def fn(a, dense):
        return (a @ dense if sparse_left else dense @ a,)
    return fn


def dense_leaf_record(s, fn, rest: tuple, rest_edges: tuple, name: str) -> Tensor:
    """fn(dense form of s, *rest) as one node, for ops through which PyTorch gives a sparse
    leaf a dense gradient (every position: torch.mm, Tensor.sum()); see DenseGradOf."""
    dense = to_dense(s.detach())._data
    proxy = DenseGradOf.of(s, dense)
    return record(fn, (dense, *rest), (edge_of(proxy), *rest_edges), name)[0]


def _dense_grad_product(s, d, sparse_left: bool, name: str) -> Tensor:
    return dense_leaf_record(s, _dense_product(sparse_left), (d._data,), (edge_of(d),), name)


def mm(mat1, mat2, reduce: str = "sum") -> Tensor:
    """torch.sparse.mm: a sparse COO matrix times a dense one (or dense times sparse); the
    sparse operand's gradient is sparse, at its stored entries."""
    if reduce != "sum":
        raise NotImplementedError("torch.sparse.mm(reduce=...) is for sparse CSR tensors, which "
                                  "torchjax does not support")
    if not (is_sparse(mat1) or is_sparse(mat2)):
        from .. import mm as dense_mm
        return dense_mm(mat1, mat2)
    # PyTorch computes dense @ sparse as (sparse.t() @ dense.t()).t(): its last node names it
    name = "SparseAddmmBackward0" if is_sparse(mat1) else "TransposeBackward0"
    return product(mat1, mat2, name, "torch.sparse.mm", False)


def addmm(input, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
    """torch.sparse.addmm: beta * input + alpha * (mat1 @ mat2), mat1 sparse COO."""
    if not is_sparse(mat1):
        raise RuntimeError("addmm: mat1 must be a sparse COO tensor")
    if not isinstance(input, Tensor):
        raise TypeError("torch.sparse.addmm(): argument 'input' must be Tensor")
    return product(mat1, mat2, "SparseAddmmBackward0", "torch.sparse.addmm", False,
                   (input, beta, alpha))


def spmm(input, mat2) -> Tensor:
    """torch.spmm: torch.mm with a sparse left side."""
    if not is_sparse(input):
        from .. import mm as dense_mm
        return dense_mm(input, mat2)
    return product(input, mat2, "MmBackward0", "torch.spmm", True)
