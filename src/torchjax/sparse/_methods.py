"""The Tensor methods of sparse support: their sparse forms on SparseCooTensor, their dense
forms (PyTorch's answers and errors for a strided tensor) on Tensor, installed at import.

The core's Tensor knows nothing of sparse tensors (DESIGN.md: subsystems sit above the core),
so this package adds the methods, as _inplace_random adds the random fills.
"""

from __future__ import annotations

from .. import _layout
from .._tensor import Tensor
from .._x64 import scoped
from . import _construct, _ops
from ._coo import CooData, SparseCooTensor, indices_of


def _strided_error(fname: str, what: str = "sparse coordinate tensor"):
    def method(self, *args, **kwargs):
        raise RuntimeError(f"{fname} expected {what} layout but got Strided")
    method.__name__ = fname
    method.__doc__ = f"For a {what}; on a dense (strided) tensor it raises RuntimeError."
    return method


def _cpu_error(fname: str):
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"Could not run 'aten::{fname}' with arguments from the "
                                  f"'{self.device.type.upper()}' backend: it is for sparse "
                                  f"tensors (Tensor.to_sparse())")
    method.__name__ = fname
    return method


# -- on dense tensors --------------------------------------------------------------------------

_NO_ARG = object()


def to_sparse(self, sparseDims=_NO_ARG, *, layout=None, blocksize=None, dense_dim=None):
    """The sparse COO tensor of this tensor's nonzero entries (ToSparseBackward0/1)."""
    if layout is not None and layout is not _layout.sparse_coo:
        _unsupported_layout(layout)
    if blocksize is not None or dense_dim is not None:
        raise NotImplementedError("to_sparse(blocksize=, dense_dim=) are for compressed sparse "
                                  "layouts, which torchjax does not support")
    if sparseDims is _NO_ARG:
        return _construct.dense_to_sparse(self, None, "ToSparseBackward1")
    return _construct.dense_to_sparse(self, sparseDims, "ToSparseBackward0")


def _unsupported_layout(layout):
    raise NotImplementedError(f"layout {layout!r} is not supported by torchjax: its sparse "
                              f"tensors are COO (torch.sparse_coo) only")


def to_dense(self, dtype=None, *, masked_grad=None):
    """A strided tensor is already dense: self (or a cast copy)."""
    return self if dtype is None else self.to(dtype)


def _doc(fn, text: str):
    fn.__doc__ = text
    return fn


DENSE = {
    "to_sparse": to_sparse,
    "to_sparse_coo": _doc(lambda self: to_sparse(self),
                          "The sparse COO tensor of this tensor's nonzero entries."),
    "to_dense": to_dense,
    "is_sparse": property(lambda self: False,
                          doc="Whether the tensor has the sparse COO layout (False here)."),
    "is_sparse_csr": property(lambda self: False,
                              doc="Always False: torchjax has no compressed sparse layouts."),
    "sparse_dim": _doc(lambda self: 0,
                       "The number of sparse dimensions: 0 for a dense tensor."),
    "dense_dim": _doc(lambda self: self.ndim,
                      "The number of dense dimensions: all of them for a dense tensor."),
    "indices": _strided_error("indices"),
    "values": _strided_error("values", "sparse tensor"),
    "coalesce": _strided_error("coalesce"),
    "is_coalesced": _strided_error("is_coalesced"),
    "_indices": _cpu_error("_indices"),
    "_values": _cpu_error("_values"),
    "_nnz": _cpu_error("_nnz"),
}


# -- on sparse tensors -------------------------------------------------------------------------

def _sparse_to_sparse(self, sparseDims=_NO_ARG, *, layout=None, blocksize=None,
                      dense_dim=None):
    if layout is not None and layout is not _layout.sparse_coo:
        _unsupported_layout(layout)
    if sparseDims is not _NO_ARG and sparseDims != self.sparse_dim():
        raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim "
                           "argument !=self.sparse_dim() is not supported")
    return self


@scoped
def _indices(self) -> Tensor:
    return Tensor._wrap(indices_of(self).T)


def _coalesced_indices(self) -> Tensor:
    if not self._data.coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() "
                           "first")
    return _indices(self)


def _detach(self) -> SparseCooTensor:
    return SparseCooTensor._wrap(CooData(self._data.bcoo, self._data.coalesced))


def _deepcopy(self, memo):
    t = _detach(self)
    t._requires_grad = self._requires_grad
    memo[id(self)] = t
    return t


def _reduce(self, proto):
    raise NotImplementedError("saving or pickling a sparse COO tensor is not supported by "
                              "torchjax: save its indices() and values() (after coalesce())")


def _no_grad_view(fname: str):
    # the gradient reaching a sparse tensor is held per stored entry (its values' shape), not
    # as the sparse tensor PyTorch would show a hook or .grad
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"Tensor.{fname} on a sparse COO tensor is not supported by "
                                  f"torchjax; use it on a dense tensor (e.g. the values given to "
                                  f"torch.sparse_coo_tensor)")
    method.__name__ = fname
    return method


def _repr(self, *, tensor_contents=None) -> str:
    from ._repr import sparse_repr
    return sparse_repr(self)


SPARSE = {
    "to_sparse": _sparse_to_sparse,
    "to_sparse_coo": lambda self: self,
    "to_dense": lambda self, dtype=None, *, masked_grad=None: _ops.to_dense(self, dtype),
    "sparse_dim": lambda self: self._data.bcoo.n_sparse,
    "dense_dim": lambda self: self._data.bcoo.n_dense,
    "_nnz": lambda self: self._data.bcoo.nse,
    "is_coalesced": lambda self: self._data.coalesced,
    "coalesce": _construct.coalesce,
    "indices": _coalesced_indices,
    "_indices": _indices,
    "values": _ops.values,
    # as in PyTorch, _values() is outside autograd (no grad_fn)
    "_values": lambda self: Tensor._wrap(self._data.bcoo.data),
    "is_contiguous": lambda self, memory_format=None: False,
    "detach": _detach,
    "data": property(_detach),
    "__deepcopy__": _deepcopy,
    "__reduce_ex__": _reduce,
    "__repr__": _repr,
    "register_hook": _no_grad_view("register_hook"),
    "retain_grad": _no_grad_view("retain_grad"),
}


def install() -> None:
    for name, f in DENSE.items():
        setattr(Tensor, name, f)
    for name, f in SPARSE.items():
        setattr(SparseCooTensor, name, f)

