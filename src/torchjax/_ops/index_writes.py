"""The public index_add, index_reduce, index_copy, index_fill, put and masked_scatter (functions
and in-place methods): PyTorch's argument checks on concrete values, then dispatch to the rows of
scatter.py."""

from __future__ import annotations

import warnings

import numpy as np

from .. import _autocast
from .._tensor import Tensor
from ._registry import function
from .indexing import check_expand
from .scatter import _AUTOCAST, _sizes, _wrap
from .scatter_functions import (
    _check_number,
    _first_bad,
    _is_tracer,
    _require_tensor,
    _run,
    _tname,
)


def _index_vector_checks(fname, input, dim, index, source):
    """Shared checks of index_add and index_reduce; the wrapped dim."""
    d = _wrap(dim, input.ndim)
    if index.dtype.name not in ("int32", "int64"):
        raise RuntimeError(f"{fname}(): Expected dtype int32/int64 for index but got: "
                           f"{_tname(index)}")
    if index.ndim > 1:
        raise IndexError(f"{fname}(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {_tname(index)} and size: "
                         f"{_sizes(index.shape)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{fname}(): self ({_tname(input)}) and source ({_tname(source)}) "
                           f"must have the same scalar type")
    if source.ndim == 0 and input.ndim > 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    sshape = tuple(source.shape) or (1,)
    xshape = tuple(input.shape) or (1,)
    if len(sshape) > d and index.numel() != sshape[d]:
        raise RuntimeError(f"{fname}(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({sshape[d]}), for dim: {d}")
    if len(sshape) != len(xshape) or any(
            a != b for i, (a, b) in enumerate(zip(sshape, xshape)) if i != d):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {_sizes(input.shape)} "
                           f"source.shape = {_sizes(source.shape)}")
    return d


def _index_add(fname, inplace, input, dim, index, source, alpha):
    _require_tensor(fname, "input", 1, input)
    _require_tensor(fname, "index", 3, index)
    _require_tensor(fname, "source", 4, source)
    _check_number(fname, "alpha", input, alpha)
    d = _index_vector_checks("index_add_", input, dim, index, source)
    n = (tuple(input.shape) or (1,))[d]
    v = _first_bad(index, 0, n)
    if v is not None:
        raise RuntimeError(f"index {v} is out of bounds for dimension {d} with size {n}")
    return _run("index_add", inplace, (input, index, source), (d, alpha))


@function()
def index_add(input, dim, index, source, *, alpha=1):
    """input with alpha * source added at the positions index along dim (duplicates add)."""
    return _index_add("index_add", False, input, dim, index, source, alpha)


@function(function=False)
def index_add_(self, dim, index, source, *, alpha=1):
    """In place: alpha * source added to self at the positions index along dim."""
    return _index_add("index_add_", True, self, dim, index, source, alpha)


_INDEX_REDUCES = ("prod", "mean", "amax", "amin")


def _index_reduce(fname, inplace, input, dim, index, source, reduce, include_self):
    _require_tensor(fname, "input", 1, input)
    _require_tensor(fname, "index", 3, index)
    _require_tensor(fname, "source", 4, source)
    warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning,
                  stacklevel=4)  # 4: + the composite's x64-scope wrapper
    if reduce not in _INDEX_REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = _index_vector_checks("index_reduce_", input, dim, index, source)
    if input.dtype.name == "bool":
        raise NotImplementedError("\"index_func_\" not implemented for 'Bool'")
    n = (tuple(input.shape) or (1,))[d]
    if _first_bad(index, 0, n) is not None:
        raise IndexError("index out of range in self")
    return _run("index_reduce", inplace, (input, index, source), (d, reduce, bool(include_self)))


@function()
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """input with source reduced into the positions index along dim: prod, mean, amax, amin."""
    return _index_reduce("index_reduce", False, input, dim, index, source, reduce,
                         include_self)


@function(function=False)
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    """In place: source reduced into self at index along dim: prod, mean, amax, amin."""
    return _index_reduce("index_reduce_", True, self, dim, index, source, reduce,
                         include_self)


def _index_copy(fname, inplace, input, dim, index, source):
    _require_tensor(fname, "input", 1, input)
    _require_tensor(fname, "index", 3, index)
    _require_tensor(fname, "source", 4, source)
    d = _wrap(dim, input.ndim)
    if index.dtype.name != "int64":
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{_tname(index)}")
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got "
                         f"{index.ndim})")
    if source.ndim and input.ndim and source.ndim != input.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({input.ndim})")
    sshape = tuple(source.shape) or (1,)
    xshape = tuple(input.shape) or (1,)
    if index.numel() != sshape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal "
                         f"to source.size(dim) ({sshape[d]})")
    if sshape[:d] + sshape[d + 1:] != xshape[:d] + xshape[d + 1:]:
        def sl(s):
            return " ".join(map(str, s[:d] + s[d + 1:]))
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {sl(xshape)} at dimension {d} and "
                           f"source slice shape: {sl(sshape)} at dimension 0.")
    if not inplace and _AUTOCAST.on:  # autocast promotes the two before PyTorch checks
        input, source = _autocast.cast_tensors("index_copy", input, source)
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {_tname(input)} and (source) {_tname(source)}")
    v = _first_bad(index, 0, xshape[d])
    if v is not None:
        raise IndexError(f"index_copy_(): index {v} is out of bounds for dimension {d} with "
                         f"size {xshape[d]}")
    return _run("index_copy", inplace, (input, index, source), (d,))


@function()
def index_copy(input, dim, index, source):
    """input with source copied to the positions index along dim."""
    return _index_copy("index_copy", False, input, dim, index, source)


@function(function=False)
def index_copy_(self, dim, index, source):
    """In place: source copied into self at the positions index along dim."""
    return _index_copy("index_copy_", True, self, dim, index, source)


def _index_fill(fname, inplace, input, dim, index, value):
    _require_tensor(fname, "input", 1, input)
    _require_tensor(fname, "index", 3, index)
    d = _wrap(dim, input.ndim)
    if index.dtype.name != "int64":
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        name = "_index_fill_tensor"
    else:
        _check_number(fname, "value", input, value)
        name = "index_fill"
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    n = (tuple(input.shape) or (1,))[d]
    v = _first_bad(index, -n, n)
    if v is not None:
        raise IndexError(f"index {v} is out of bounds for dimension {d} with size {n}")
    return _run(name, inplace, (input, index, value), (d,))


@function()
def index_fill(input, dim, index, value):
    """input with value (a number or 0-d tensor) at the positions index along dim."""
    return _index_fill("index_fill", False, input, dim, index, value)


@function(function=False)
def index_fill_(self, dim, index, value):
    """In place: self filled with value (a number or 0-d tensor) at index along dim."""
    return _index_fill("index_fill_", True, self, dim, index, value)


def _put(fname, inplace, input, index, source, accumulate):
    _require_tensor(fname, "input", 1, input)
    _require_tensor(fname, "index", 2, index)
    _require_tensor(fname, "source", 3, source)
    if index.dtype.name != "int64":
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{_tname(index)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_tname(input)} and source.dtype = {_tname(source)}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, index.numel() "
                         f"= {index.numel()}")
    n = input.numel()
    v = _first_bad(index, -n, n)
    if v is not None:
        raise IndexError(f"out of range: tried to access index {v} on a tensor of {n} "
                         f"elements.")
    return _run("put", inplace, (input, index, source), (bool(accumulate),))


@function()
def put(input, index, source, accumulate=False):
    """input seen as 1-D with source written (accumulate: added) at index."""
    return _put("put", False, input, index, source, accumulate)


@function(function=False)
def put_(self, index, source, accumulate=False):
    """In place: self seen as 1-D with source written (accumulate: added) at index."""
    return _put("put_", True, self, index, source, accumulate)


def _masked_scatter(fname, inplace, input, mask, source):
    _require_tensor(fname, "input", 1, input)
    _require_tensor(fname, "mask", 2, mask)
    _require_tensor(fname, "source", 3, source)
    if mask.dtype.name != "bool":
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_tname(mask)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{_tname(input)} and {_tname(source)}")
    xs, ms = tuple(input.shape), tuple(mask.shape)
    if inplace:
        check_expand(ms, ms, xs, "CPUBoolType")
        shape = xs
    else:
        for i in range(1, max(len(xs), len(ms)) + 1):
            a = ms[-i] if i <= len(ms) else 1
            b = xs[-i] if i <= len(xs) else 1
            if a != b and a != 1 and b != 1:
                raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b "
                                   f"({b}) at non-singleton dimension "
                                   f"{max(len(xs), len(ms)) - i}")
        shape = np.broadcast_shapes(xs, ms)
    if not _is_tracer(mask._data):
        m = np.broadcast_to(np.asarray(mask._data), shape)
        if int(np.count_nonzero(m)) > source.numel():
            raise RuntimeError("Number of elements of source < number of ones in mask")
    return _run("masked_scatter", inplace, (input, mask, source), ())


@function()
def masked_scatter(input, mask, source):
    """input with the leading values of source, in order, where mask is True."""
    return _masked_scatter("masked_scatter", False, input, mask, source)


@function(function=False)
def masked_scatter_(self, mask, source):
    """In place: the leading values of source, in order, written where mask is True."""
    return _masked_scatter("masked_scatter_", True, self, mask, source)
