"""The sparse COO tensor: a Tensor whose data is a BCOO (jax.experimental.sparse).

PyTorch's COO tensor is an index matrix (sparse_dim x nnz, int64) and a values tensor
(nnz x dense dims). Here the data is a `CooData`: a BCOO holding the same two arrays (BCOO
keeps the indices transposed, nnz x sparse_dim) and whether they are coalesced.

Autograd treats a sparse tensor as its values: the cotangent that flows into a sparse
tensor's node is an array shaped like its values, one gradient per stored entry (duplicates
of an uncoalesced tensor each get the gradient of their position). `autograd_values` gives a
plain Tensor holding the values with the sparse tensor's autograd identity, so sparse ops are
recorded as ordinary nodes (one per op) over it, and a sparse leaf turns the cotangent into
the sparse `.grad` PyTorch gives it (values at its coalesced positions).

A CooData is neither an array nor a pytree, so JAX refuses it: a dense row that meets a
sparse tensor fails in its compiled call, and the dispatcher hands it to this package
(_dispatch.LAYOUTS, see _layout_ops.py), which runs the rows it implements and names the others.
"""

from __future__ import annotations

import weakref

import jax
import numpy as np

from .. import _layout
from .._autograd.node import accumulator_of
from .._tensor import Tensor


class CooData:
    """The data of a sparse COO tensor: its BCOO, whether it is coalesced, and whether its
    history reaches a sparse leaf that requires grad (PyTorch gives such a leaf a dense
    gradient from torch.mm, which torchjax does not: see _ops.mm)."""

    __slots__ = ("bcoo", "coalesced", "from_leaf")

    def __init__(self, bcoo, coalesced: bool, from_leaf: bool = False):
        self.bcoo = bcoo
        self.coalesced = coalesced
        self.from_leaf = from_leaf

    # the metadata Tensor reads from its data (shape, dtype, device, the dispatcher's aval)
    @property
    def shape(self) -> tuple:
        return tuple(self.bcoo.shape)

    @property
    def dtype(self):
        return self.bcoo.dtype

    @property
    def ndim(self) -> int:
        return len(self.bcoo.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.bcoo.shape, dtype=np.int64))

    @property
    def aval(self):
        return jax.ShapeDtypeStruct(self.shape, self.dtype)

    def devices(self):
        return self.bcoo.data.devices()

    def __jax_array__(self):
        # Having shape and dtype, a CooData would pass for an array in JAX's tracing (a dense
        # row would compile, then fail when it runs); this method makes JAX refuse it at once
        raise TypeError("a sparse COO tensor is not a dense array: call .to_dense() first")

    def __array__(self, dtype=None, copy=None):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")


def bcoo(values, indices, shape, coalesced: bool):
    """A BCOO of PyTorch-ordered values and BCOO-ordered indices (nnz x sparse_dim)."""
    # imported on first use: jax.experimental.sparse costs ~0.3 s, a tenth of torchjax's import
    from jax.experimental import sparse as jsparse
    return jsparse.BCOO((values, indices), shape=tuple(shape), indices_sorted=coalesced,
                        unique_indices=coalesced)


class SparseCooTensor(Tensor):
    """A sparse COO tensor (layout torch.sparse_coo); made by torch.sparse_coo_tensor or
    Tensor.to_sparse(). Its methods are in _methods.py."""

    __slots__ = ()

    @property
    def layout(self):
        return _layout.sparse_coo

    @property
    def is_sparse(self) -> bool:
        return True

    def _store_grad(self, ct) -> None:
        """A leaf's gradient: the per-entry cotangent as the sparse tensor PyTorch gives,
        coalesced, holding the gradient at each stored position."""
        from ._construct import leaf_grad
        g = leaf_grad(self, ct)
        old = self._grad
        if old is None:
            self._grad = g
        elif isinstance(old, SparseCooTensor):
            from ._ops import add_same_pattern
            self._grad = add_same_pattern(old, g)
        else:  # a dense gradient already there (DenseGradOf): the sum is dense
            from .._autograd.engine import _add
            self._grad = Tensor._wrap(_add(old._data, g.to_dense()._data))
        self._post_accumulate()


def make(values: Tensor, indices, shape, coalesced: bool, from_leaf: bool = False):
    """A sparse tensor over `values` (a Tensor: its grad_fn becomes the sparse tensor's) and
    `indices` (an int array, nnz x sparse_dim)."""
    if values._requires_grad and values._grad_fn is None:
        raise AssertionError("sparse values that require grad need a node of their own")
    t = SparseCooTensor._wrap(CooData(bcoo(values._data, indices, shape, coalesced),
                                      coalesced, from_leaf), values._requires_grad)
    t._grad_fn = values._grad_fn
    t._output_nr = values._output_nr
    return t


def autograd_values(s: SparseCooTensor) -> Tensor:
    """s's values as a plain Tensor with s's autograd identity (a gradient reaching it is
    s's gradient)."""
    v = Tensor._wrap(s._data.bcoo.data, s._requires_grad)
    v._grad_fn = s._grad_fn
    v._output_nr = s._output_nr
    if s._requires_grad and s._grad_fn is None:
        acc = accumulator_of(s)
        v._acc = weakref.ref(acc)
        v._sparse_acc = acc  # s._acc and v._acc are weak: v keeps the node alive
    return v


def reaches_leaf(s: SparseCooTensor) -> bool:
    """Whether s is, or was computed from, a sparse leaf that requires grad."""
    return s._data.from_leaf or (s._requires_grad and s._grad_fn is None)


def indices_of(s: SparseCooTensor):
    """The BCOO-ordered index array (nnz x sparse_dim)."""
    return s._data.bcoo.indices


def is_sparse(t) -> bool:
    return isinstance(t, SparseCooTensor)


class DenseGradOf(Tensor):
    """Stands for a sparse leaf where PyTorch's gradient for it is dense (torch.mm(sparse,
    dense) gives the gradient at every position): its AccumulateGrad adds that gradient into
    the leaf's .grad as a dense tensor (densifying a sparse .grad already there, as PyTorch's
    sparse + dense accumulation does)."""

    __slots__ = ()

    @classmethod
    def of(cls, leaf: SparseCooTensor, dense) -> DenseGradOf:
        t = cls._wrap(dense, True)
        t.leaf = leaf
        return t

    def _store_grad(self, ct) -> None:
        from .._autograd.engine import _add
        leaf = self.leaf
        old = leaf._grad
        if old is not None:
            base = old.to_dense()._data if isinstance(old, SparseCooTensor) else old._data
            ct = _add(base, ct)
        leaf._grad = Tensor._wrap(ct)
        leaf._post_accumulate()
