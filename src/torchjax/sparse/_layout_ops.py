"""Dense rows that meet a sparse COO tensor (the dispatcher's LAYOUTS hook): the few that
have a sparse form run it, every other one raises PyTorch's "Could not run 'aten::<op>' with
arguments from the 'SparseCPU' backend", saying what to do instead. Nothing is densified
behind the user's back.
"""

from __future__ import annotations

import numbers

from .. import _dispatch, _layout
from .._tensor import Tensor
from . import _ops, _products
from ._coo import autograd_values, indices_of, is_sparse, make, reaches_leaf

SUPPORTED = ("to_dense, coalesce, indices/values, torch.sparse.mm / torch.mm / torch.spmm / "
             "matmul / mv / addmm with one dense operand, torch.sparse.sum, Tensor.sum(), add, "
             "torch.sparse.softmax, t/transpose, clone, neg, mul/div by a number and dtype or "
             "device conversions")


def layout_error(name: str, t: Tensor) -> NotImplementedError:
    backend = "Sparse" + t.device.type.upper()
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the '{backend}' backend: torchjax's "
        f"sparse COO tensors support {SUPPORTED}; call .to_dense() first")


def _product(fname):
    def handler(prep, dyn, stat):
        name = "MvBackward0" if dyn[1].ndim == 1 else "MmBackward0"
        return _products.product(dyn[0], dyn[1], name, fname, True)
    return handler


def _addmm(prep, dyn, stat):
    input, mat1, mat2 = dyn
    if not is_sparse(mat1) or is_sparse(mat2):
        raise RuntimeError(f"addmm_sparse_dense: expected either 'mat1' to have sparse layout "
                           f"and 'mat2' to have strided layout, got 'mat1' with layout "
                           f"{_layout_name(mat1)} and 'mat2' with layout {_layout_name(mat2)}")
    kw = dict(zip(prep.op.statics, stat))
    return _products.product(mat1, mat2, "AddmmBackward0", "torch.addmm", True,
                        (input, kw.get("beta", 1), kw.get("alpha", 1)))


def _layout_name(t) -> str:
    return "Sparse" if is_sparse(t) else "Strided"


def _sum(prep, dyn, stat):
    kw = dict(zip(prep.op.statics, stat))
    if kw.get("dim") is not None:
        raise NotImplementedError("Tensor.sum(dim) of a sparse COO tensor is not supported by "
                                  "torchjax; use torch.sparse.sum(input, dim)")
    return _ops.sum(dyn[0], None, kw.get("dtype"), dense_grad=True)


def _add(prep, dyn, stat):
    """dense + sparse is dense; sparse + sparse is their entries side by side, coalesced (as
    PyTorch returns it); sparse + dense raises PyTorch's error."""
    input, other = dyn[0], dyn[1]
    alpha = dict(zip(prep.op.statics, stat)).get("alpha", 1)
    if not is_sparse(input):
        return _dispatch.dispatch(prep, (input, _ops.to_dense(other)) + tuple(dyn[2:]), stat)
    if not is_sparse(other):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if input.shape != other.shape:
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(input.shape)} while other has size {list(other.shape)}")
    return _ops.add_sparse(input, other, alpha)


def _on_values(prep, dyn, stat):
    """A row that acts on each stored value alone and keeps zeros zero: run it on the values
    (its own node, e.g. MulBackward0) and keep the indices."""
    pos = [i for i, v in enumerate(dyn) if isinstance(v, Tensor)]
    if len(pos) != 1 or not is_sparse(dyn[pos[0]]):
        s = next(v for v in dyn if is_sparse(v))
        raise layout_error(prep.op.name, s) from None
    s = dyn[pos[0]]
    if prep.op.name in ("mul", "div"):
        other = dyn[1 - pos[0]]
        if not isinstance(other, numbers.Number) or (prep.op.name == "div" and pos[0] != 0):
            raise layout_error(prep.op.name, s)
    args = list(dyn)
    args[pos[0]] = autograd_values(s)
    out = _dispatch.dispatch(prep, tuple(args), stat)
    return make(out, indices_of(s), s.shape, s._data.coalesced, reaches_leaf(s))


def _permute(prep, dyn, stat):
    """t / transpose of sparse dims: the index columns swap, the values stay (their own node,
    TBackward0 / TransposeBackward0, whose gradient passes through)."""
    s = dyn[0]
    kw = dict(zip(prep.op.statics, stat))
    sd = s._data.bcoo.n_sparse
    if prep.op.name == "t":
        if s.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but "
                               f"self is {sd} sparse and {s.ndim - sd} dense dimensions")
        d0, d1 = 0, s.ndim - 1
    else:
        from .._tensor import _wrap_dim
        d0, d1 = _wrap_dim(kw["dim0"], s.ndim), _wrap_dim(kw["dim1"], s.ndim)
        if max(d0, d1) >= sd and d0 != d1:
            raise NotImplementedError("transpose of a dense dimension of a hybrid sparse tensor "
                                      "is not supported by torchjax")
    perm = list(range(sd))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    shape = list(s.shape)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    from .._jax_node import edge_of, record
    from ._construct import _identity
    v = autograd_values(s)
    name = "TBackward0" if prep.op.name == "t" else "TransposeBackward0"
    vals = record(_identity, (v._data,), (edge_of(v),), name)[0] if v._requires_grad else v
    return make(vals, indices_of(s)[:, perm], tuple(shape), s._data.coalesced and d0 == d1,
                reaches_leaf(s))


HANDLERS = {
    "mm": _product("torch.mm"),
    "matmul": _product("torch.matmul"),
    "mv": _product("torch.mv"),
    "addmm": _addmm,
    "sum": _sum,
    "add": _add,
    "t": _permute,
    "transpose": _permute,
    **{name: _on_values for name in ("_to_dtype", "_to_device", "clone", "neg", "mul", "div")},
}


def install() -> None:
    _dispatch.LAYOUTS[_layout.sparse_coo] = (HANDLERS, layout_error)
