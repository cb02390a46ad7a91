"""Indexing: Tensor.__getitem__ / __setitem__, gather, index_select, take, take_along_dim,
masked_fill, masked_select, index_put.

A key like x[0, 1:, None, idx] is split in Python into a static, hashable spec (one entry per
key element: an int, a (start, stop, step) slice, None, or a placeholder for an index array)
and a list of integer index arrays. The rows below are pure functions of (input, arrays, spec).
PyTorch applies ints, slices and None first (select / slice / unsqueeze: a view) and then the
tensor indices, so an int never counts as an advanced index when placing the advanced
dimensions (x[0, :, [0, 1]] has shape (3, 2) for a (2, 3, 4) x, unlike NumPy's (2, 3)).

Values the rows cannot check (index bounds, the nonzero of a mask) are checked or computed on
the concrete arrays before dispatch: JAX clamps out-of-range gathers silently, PyTorch raises.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _dtypes, _programs
from .._autograd import grad_mode
from .._tensor import _TENSOR_TYPE_NAMES, Tensor
from .._untraceable import Untraceable
from . import _host_setitem
from ._index_keys import (
    _ARR,
    _BOOL,
    _check_in_bounds,
    _is_tracer,
    _parse,
    _sizes,
    written_view,
)
from ._internal import _check_fill_value
from ._registry import OPS, function, numbered, op

# -- the rows --------------------------------------------------------------------------------

def _basic(x, spec):
    """Apply the ints, slices and Nones of spec; index-array entries keep their dim whole."""
    starts, limits, strides, shape = [], [], [], []
    trivial = True
    d = 0
    for e in spec:
        if e is None or e == _BOOL:
            shape.append(1)
            trivial = False
            continue
        n = x.shape[d]
        if e == _ARR:
            e = (0, n, 1)
        if isinstance(e, int):
            start, stop, step = e, e + 1, 1
            trivial = False
        else:
            start, stop, step = e
            shape.append(max(0, -(-(stop - start) // step)))
            trivial = trivial and e == (0, n, 1)
        starts.append(start)
        limits.append(stop)
        strides.append(step)
        d += 1
    if trivial:
        return x
    rest = x.shape[d:]
    x = lax.slice(x, [*starts, *(0,) * len(rest)], [*limits, *rest],
                  [*strides, *(1,) * len(rest)])
    return x.reshape(tuple(shape) + tuple(rest))


def _advanced(x, indices, spec):
    """x[spec] with the index arrays of spec applied after the basic part (PyTorch's order)."""
    y = _basic(x, spec)
    key = [slice(None)] * y.ndim
    d = 0
    it = iter(indices)
    for e in spec:
        if e == _ARR or e == _BOOL:
            key[d] = next(it)
        if not isinstance(e, int):
            d += 1
    # only full slices and arrays remain, where NumPy's placement rule is PyTorch's
    return y[tuple(key)]


def _basic_view(input, spec):
    return _basic(input, spec)


# PyTorch names the grad_fn of a basic index after its last non-trivial step.
for _name, _grad in (("_select", "SelectBackward0"), ("_slice", "SliceBackward0"),
                     ("_unsqueeze", "UnsqueezeBackward0"), ("_alias", "AliasBackward0")):
    op(name=_name, promote="none", needs=(), view=True, function=False, method=False,
       grad=_grad, doc="x[ints, slices, None, ...]: a view of input.")(_basic_view)


@op(tensor_list="indices", promote="none", needs=("indices",), function=False, method=False,
    grad="IndexBackward0")
def _index(input, indices, spec):
    """x[key] with index tensors in key (a copy)."""
    return _advanced(input, indices, spec)


@jax.custom_vjp
def _put(flat, pos, values):
    return flat.at[pos].set(values)


def _put_fwd(flat, pos, values):
    return _put(flat, pos, values), pos


def _put_bwd(pos, ct):
    # PyTorch gives every value its position's gradient, also when a position repeats (JAX's
    # own rule would give it only to the value that won the write)
    return ct.at[pos].set(0), None, ct[pos]


_put.defvjp(_put_fwd, _put_bwd)


def _index_put_fn(input, values, indices, spec, accumulate=False):
    iota = jnp.arange(input.size, dtype=jnp.int64 if input.size >= 2**31 else jnp.int32)
    pos = _advanced(iota.reshape(input.shape), indices, spec)
    values = jnp.asarray(values)
    # PyTorch drops leading size-1 dims of the value first: x[0] = ones(1, 3) for x of (2, 3)
    lead = 0
    while values.ndim - lead > pos.ndim and values.shape[lead] == 1:
        lead += 1
    values = values.reshape(values.shape[lead:]).astype(input.dtype)
    values = jnp.broadcast_to(values, pos.shape).reshape(-1)
    flat = input.reshape(-1)
    pos = pos.reshape(-1)
    if accumulate:
        out = flat.at[pos].add(values)
    else:
        out = _put(flat, pos, values)
    return out.reshape(input.shape)


# x[key] = v: CopySlices when the key has a basic part (PyTorch copies into a view),
# IndexPutBackward0 for tensor indices alone and for index_put / index_put_.
for _name, _grad in (("_copy_slices", "CopySlices"), ("_index_put", "IndexPutBackward0")):
    op(name=_name, tensors=("input", "values"), tensor_list="indices", promote="none",
       needs=("indices",), function=False, method=False, grad=_grad,
       doc="input with input[key] = values (accumulate: +=), for x[key] = v and index_put."
       )(_index_put_fn)


def _wrap(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


@op(name="gather", tensors=("input", "index"), promote="none", needs=("index",),
    function=False, method=False, saves=("input", "index"))
def _gather_row(input, dim, index, *, sparse_grad=False):
    """Values of input along dim at index: out[i][j] = input[index[i][j]][j] for dim 0."""
    if input.ndim == 0:
        input = input.reshape(1)
    if index.ndim == 0:
        return input[index]
    dim = _wrap(dim, input.ndim)
    # index may be smaller than input in the other dims: gather from that corner of input
    corner = tuple(slice(None) if d == dim else slice(0, index.shape[d])
                   for d in range(input.ndim))
    return jnp.take_along_axis(input[corner], index, axis=dim)


@op(name="index_select", tensors=("input", "index"), promote="none", needs=("index",),
    function=False, method=False)
def _index_select_row(input, dim, index):
    """The entries of input at the positions index along dim."""
    if input.ndim == 0:
        return input.reshape(1)[index.reshape(-1)].reshape(())
    return jnp.take(input, index.reshape(-1), axis=_wrap(dim, input.ndim))


@op(name="take", tensors=("input", "index"), promote="none", needs=("index",),
    function=False, method=False, saves=("input", "index"))
def _take_row(input, index):
    """input seen as 1-D, at index (negative indices count from the end)."""
    flat = input.reshape(-1)
    return flat[jnp.where(index < 0, index + flat.shape[0], index)]


@op(name="take_along_dim", tensors=("input", "indices"), promote="none", needs=("indices",),
    function=False, method=False, grad="GatherBackward0", saves=("input",))
def _take_along_dim_row(input, indices, dim=None):
    """Values of input at indices along dim, broadcasting the other dims (flat when dim=None)."""
    if dim is None:
        return input.reshape(-1)[indices.reshape(-1)]
    dim = _wrap(dim, input.ndim)
    shape = jnp.broadcast_shapes(
        tuple(1 if d == dim else n for d, n in enumerate(input.shape)),
        tuple(1 if d == dim else n for d, n in enumerate(indices.shape)))
    input = jnp.broadcast_to(input, shape[:dim] + (input.shape[dim],) + shape[dim + 1:])
    indices = jnp.broadcast_to(indices, shape[:dim] + (indices.shape[dim],) + shape[dim + 1:])
    indices = jnp.where(indices < 0, indices + input.shape[dim], indices)
    return jnp.take_along_axis(input, indices, axis=dim)


def _explain_broadcast(a, b):
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {max(len(a), len(b)) - i}")


def _dtype_name(dt):
    return _dtypes.from_jax(dt).name


@op(tensors=("input", "mask", "value"), promote="none", inplace=True, needs=("mask",),
    grad=numbered("MaskedFill", {"s": 0, "t": 1}, "value"))
def masked_fill(input, mask, value):
    """input with value (a number or a 0-d tensor) where mask is True."""
    if mask.dtype != jnp.bool_:
        # PyTorch names the C++ scalar type here
        kind = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                "uint8": "unsigned char", "float32": "float", "float64": "double",
                "float16": "c10::Half", "bfloat16": "c10::BFloat16"}.get(
            _dtype_name(mask.dtype), _dtype_name(mask.dtype))
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{kind}")
    value = jnp.asarray(value)
    if value.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    return jnp.where(mask, value.astype(input.dtype), input)


@op(tensors=("input", "mask"), promote="none", needs=("mask",), function=False, method=False,
    grad="MaskedSelectBackward0", saves=("input", "mask"))
def _masked_select(input, mask, count):
    """The entries of input where mask is True, as a 1-D tensor (count of them, known)."""
    shape = jnp.broadcast_shapes(input.shape, mask.shape)
    flat = jnp.broadcast_to(input, shape).reshape(-1)
    (pos,) = jnp.nonzero(jnp.broadcast_to(mask, shape).reshape(-1), size=count)
    return flat[pos]


# -- Tensor.__getitem__ / __setitem__ --------------------------------------------------------

class _Dispatch:
    """_dispatch imports the op table, so it is looked up on first use."""

    def __getattr__(self, name):
        from .. import _dispatch
        for n in ("PREPARED", "dispatch", "dispatch_inplace", "make_view", "key_stat"):
            setattr(self, n, getattr(_dispatch, n))
        return getattr(self, name)


_D = _Dispatch()


def _prepared(name):
    return _D.PREPARED[name]


@function(name="__getitem__", function=False)
def _getitem(self, key):
    """x[key]: PyTorch's basic (a view) and advanced (a copy) indexing."""
    k = _parse(self, key)
    if k.advanced:
        return _D.dispatch(_prepared("_index"), (self, k.indices), (k.spec,))
    if k.last in ("_select", "_slice") and not (
            self._requires_grad and (grad_mode.STATE.grad_enabled or _capturing())) and \
            not self.is_meta:
        if k.last == "_select" and all(type(e) is int for e in k.spec):
            return _select_ints(self, k.spec)
        if _window(k.spec):
            return _slice_starts(self, k, k.spec)
    return _D.dispatch(_prepared(k.last or "_alias"), (self,), (k.spec,))


def _capturing() -> bool:
    """Whether torchjax.utils.checkpoint is watching the tensors ops read (dispatch sees them)."""
    from .. import _dispatch
    return _dispatch.CAPTURE is not None


_SELECT_INTS: dict = {}


def _select_ints(self, spec):
    """x[i, j, ...] with Python ints and no gradient to record: the ints go to one compiled
    program per rank as values, where the row would compile once per index (a dataset's
    x[idx] over an epoch). The result is the same view of x as the row's."""
    f = _SELECT_INTS.get(len(spec))
    if f is None:
        f = _SELECT_INTS[len(spec)] = jax.jit(lambda x, idx: x[tuple(idx)])
    out = Tensor._wrap(f(self._data, np.asarray(spec, np.int32)))
    _D.make_view(out, self, ((OPS["_select"], _D.key_stat((spec,))),))
    return out


def _window(spec) -> bool:
    """Whether spec is ints and slices of step 1, one of them starting past 0 (a window that
    may move: x[i:i + n])."""
    moved = False
    for e in spec:
        if type(e) is int:
            moved = moved or e != 0
        elif type(e) is tuple and e[2] == 1:
            moved = moved or e[0] != 0
        else:
            return False
    return moved


_SLICE_STARTS: dict = {}
_SLICE_STARTS_MAX = 256


def _slice_starts(self, k, spec):
    """x[i:i + n, j, ...] (slices of step 1 and ints) with no gradient to record: the starts
    go to one compiled program per window size as values, where the row would compile once
    per start (a language model's batches source[i:i + seq_len] walk through the data). The
    result is the same view of x as the row's."""
    sizes = tuple(1 if type(e) is int else e[1] - e[0] for e in spec)
    kept = tuple(type(e) is not int for e in spec)  # an int's dim goes
    f = _SLICE_STARTS.get((sizes, kept))
    if f is None:
        def window(x, starts):  # starts: one per dim of x
            rest = x.shape[len(sizes):]
            out = lax.dynamic_slice(x, [starts[i] for i in range(x.ndim)], (*sizes, *rest))
            return out.reshape(*[n for n, keep in zip(sizes, kept) if keep], *rest)
        if len(_SLICE_STARTS) >= _SLICE_STARTS_MAX:  # ever-new window sizes
            _SLICE_STARTS.clear()
        f = _SLICE_STARTS[(sizes, kept)] = _programs.jit(window)
    starts = np.zeros(self._data.ndim, np.int32)
    starts[:len(spec)] = [e if type(e) is int else e[0] for e in spec]
    out = Tensor._wrap(f(self._data, starts))
    _D.make_view(out, self, ((OPS[k.last], _D.key_stat((spec,))),))
    return out


def _check_value_shape(value_shape, target, advanced):
    v = list(value_shape)
    while len(v) > len(target) and v[0] == 1:
        v.pop(0)
    ok = len(v) <= len(target) and all(
        a == b or a == 1 for a, b in zip(reversed(v), reversed(target)))
    if ok:
        return
    if advanced:
        raise RuntimeError(f"shape mismatch: value tensor of shape {_sizes(value_shape)} cannot "
                           f"be broadcast to indexing result of shape {_sizes(target)}")
    check_expand(v, value_shape, target, "torch.FloatTensor")


def check_expand(shape, reported, target, type_name):
    """PyTorch's errors of expand(): `shape` (leading ones dropped where PyTorch drops them)
    must broadcast to `target`; messages show `reported` and `type_name` as PyTorch does."""
    if len(shape) > len(target):
        raise RuntimeError(f"expand({type_name}{{{_sizes(reported)}}}, size={_sizes(target)}): "
                           f"the number of sizes provided ({len(target)}) must be greater or "
                           f"equal to the number of dimensions in the tensor ({len(reported)})")
    for i in range(1, len(shape) + 1):
        if shape[-i] != target[-i] and shape[-i] != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[-i]}) must match the existing size "
                f"({shape[-i]}) at non-singleton dimension {len(target) - i}.  Target sizes: "
                f"{_sizes(target)}.  Tensor sizes: {_sizes(reported)}")


_CHECKED_FILLS = frozenset((_dtypes.float32, _dtypes.float64, _dtypes.uint8, _dtypes.int8,
                            _dtypes.int16, _dtypes.int32, _dtypes.int64))


@function(name="__setitem__", function=False)
def _setitem(self, key, value):
    """x[key] = value: an in-place write (through views into their base), recorded for grad."""
    # PyTorch takes Python numbers and NumPy integers here, not other NumPy scalars
    if isinstance(value, (bool, int, float, complex, np.integer)):
        if isinstance(value, complex) and not self.is_complex():
            raise RuntimeError(f"value cannot be converted to type "
                               f"{_dtypes.SCALAR_NAMES[self.dtype.name].lower()} without "
                               f"overflow")
        if self.dtype in _CHECKED_FILLS:
            # PyTorch's conversion of the number refuses what these dtypes cannot hold
            # (half, bfloat16 and bool take any number: inf, True)
            _check_fill_value(self, value)
    elif not isinstance(value, Tensor):
        cls = type(value)
        name = cls.__name__ if cls.__module__ == "builtins" else \
            f"{cls.__module__.split('.')[0]}.{cls.__name__}"
        raise TypeError(f"can't assign a {name} to a torch."
                        f"{_TENSOR_TYPE_NAMES.get(self.dtype.name, 'Tensor')}")
    if key is False:
        return  # PyTorch writes nothing for x[False] = v: no node, no new version
    k = _parse(self, key)
    if isinstance(value, Tensor):
        _check_value_shape(tuple(value.shape), k.shape, k.advanced)
        # index_put_ does not cast; PyTorch copies for x[True] = v and fills for x[mask] = v
        if k.advanced and value.dtype is not self.dtype and key is not True and not (
                k.single_mask and value.ndim == 0):
            _dtype_mismatch(self, value)
    if not k.advanced and (_host_setitem.assigns_itself(self, value, k)
                           or _host_setitem.write(self, value, k)):
        return  # no write needed, or a small one autograd does not record, on the host
    name = "_index_put" if k.advanced and k.last is None else "_copy_slices"
    if name == "_copy_slices" and self._requires_grad and self._grad_fn is None \
            and grad_mode.STATE.grad_enabled:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    try:
        _D.dispatch_inplace(_prepared(name), (self, value, k.indices), (k.spec, False))
    except RuntimeError as e:
        raise _through_view(self, k, e) from None


def _through_view(self, k, error):
    """The error of a write into an output of split, chunk or unbind as PyTorch words it for
    x[key] = v: it writes through the view the key makes (x[1]: "Output 0 of Select is a
    view ..."), which inherits that output's ban; dispatch, which sees x itself, names x."""
    from .._dispatch_views import creation_kind
    msg = str(error)
    view = written_view(tuple(self._data.shape), k.spec)
    if view is None or creation_kind(self) != "multi" or not msg.startswith(
            f"Output {self._output_nr} of "):
        return error
    return RuntimeError(f"Output 0 of {view}" + msg[msg.index(" is a view"):])


# -- public functions that check index values before dispatch -------------------------------

def _dtype_mismatch(input, values):
    raise RuntimeError(
        "Index put requires the source and destination dtypes match, got "
        f"{_dtypes.SCALAR_NAMES[input.dtype.name]} for the destination and "
        f"{_dtypes.SCALAR_NAMES[values.dtype.name]} for the source.")


def _index_put_parse(input, indices, values, fname):
    if isinstance(indices, Tensor) or not isinstance(indices, (list, tuple)):
        raise TypeError(f"{fname}(): argument 'indices' (position 2) must be tuple of Tensors, "
                        f"not {type(indices).__name__}")
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type(t).__name__}")
    if not isinstance(values, Tensor):
        raise TypeError(f"{fname}(): argument 'values' (position 3) must be Tensor, not "
                        f"{type(values).__name__}")
    if values.dtype is not input.dtype:
        _dtype_mismatch(input, values)
    k = _parse(input, tuple(indices), index_put=True)
    _check_value_shape(tuple(values.shape), k.shape, True)
    return k


@function()
def index_put(input, indices, values, accumulate=False):
    """A copy of input with input[indices] = values (accumulate=True adds, duplicates too)."""
    k = _index_put_parse(input, indices, values, "index_put")
    return _D.dispatch(_prepared("_index_put"), (input, values, k.indices), (k.spec, accumulate))


@function(function=False)
def index_put_(self, indices, values, accumulate=False):
    """In place: self[indices] = values (accumulate=True adds, duplicates too)."""
    k = _index_put_parse(self, indices, values, "index_put_")
    return _D.dispatch_inplace(_prepared("_index_put"), (self, values, k.indices),
                            (k.spec, accumulate))


def _require_tensor(fname, name, pos, v):
    if not isinstance(v, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(v).__name__}")


@function()
def gather(input, dim, index, *, sparse_grad=False):
    """Values of input along dim at index: out[i][j] = input[index[i][j]][j] for dim 0."""
    _require_tensor("gather", "input", 1, input)
    _require_tensor("gather", "index", 3, index)
    if _dtype_name(index._data.dtype) not in ("int32", "int64"):
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    nd = max(input.ndim, 1)
    d = _wrap(dim, input.ndim)
    if max(index.ndim, 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    ishape = tuple(input.shape) or (1,)
    xshape = tuple(index.shape) or (1,)
    for i in range(nd):
        if i != d and xshape[i] > ishape[i]:
            raise RuntimeError(f"Size does not match at dimension {i} expected index "
                               f"{_sizes(xshape)} to be no larger than self {_sizes(ishape)} "
                               f"apart from dimension {d}")
    _check_nonneg_bounds(index, ishape[d], lambda v: RuntimeError(
        f"index {v} is out of bounds for dimension {d} with size {ishape[d]}"))
    return _D.dispatch(_prepared("gather"), (input, index), (dim, sparse_grad))


def _check_nonneg_bounds(index, size, what):
    arr = index._data
    if _is_tracer(arr) or arr.size == 0:
        return
    a = np.asarray(arr)
    bad = (a < 0) | (a >= size)
    if bad.any():
        raise what(int(a[bad][0]))


@function()
def index_select(input, dim, index):
    """The entries of input at the positions index along dim."""
    _require_tensor("index_select", "input", 1, input)
    _require_tensor("index_select", "index", 3, index)
    if _dtype_name(index._data.dtype) not in ("int32", "int64"):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    d = _wrap(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    _check_nonneg_bounds(index, n, lambda v: RuntimeError(
        f"INDICES element is out of DATA bounds, id={v} axis_dim={n}"))
    return _D.dispatch(_prepared("index_select"), (input, index), (dim,))


def _long_name(index):
    return _dtypes.SCALAR_NAMES[_dtype_name(index._data.dtype)]


@function()
def take(input, index):
    """input seen as 1-D, at index (negative indices count from the end)."""
    _require_tensor("take", "input", 1, input)
    _require_tensor("take", "index", 2, index)
    if _dtype_name(index._data.dtype) != "int64":
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_long_name(index)}")
    n = input.numel()
    _check_in_bounds(index._data, n, lambda v: IndexError(
        f"out of range: tried to access index {v} on a tensor of {n} elements."))
    return _D.dispatch(_prepared("take"), (input, index), ())


@function()
def take_along_dim(input, indices, dim=None):
    """Values of input at indices along dim, broadcasting the other dims (flat when dim=None)."""
    _require_tensor("take_along_dim", "input", 1, input)
    _require_tensor("take_along_dim", "indices", 2, indices)
    if _dtype_name(indices._data.dtype) != "int64":
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_long_name(indices)}")
    if dim is None:
        n = input.numel()
        _check_nonneg_bounds(indices, n, lambda v: RuntimeError(
            f"index {v} is out of bounds for dimension 0 with size {n}"))
        return _D.dispatch(_prepared("take_along_dim"), (input, indices), (None,))
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    d = _wrap(dim, input.ndim)
    for i, (a, b) in enumerate(zip(input.shape, indices.shape)):
        if i != d and a != b and a != 1 and b != 1:
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b "
                               f"({b}) at non-singleton dimension {i}")
    n = input.shape[d] if input.ndim else 1
    _check_in_bounds(indices._data, n, lambda v: RuntimeError(
        f"index {v} is out of bounds for dimension {d} with size {n}"))
    return _D.dispatch(_prepared("take_along_dim"), (input, indices), (dim,))


@function()
def masked_select(input, mask):
    """The entries of input where mask is True, as a new 1-D tensor."""
    _require_tensor("masked_select", "input", 1, input)
    _require_tensor("masked_select", "mask", 2, mask)
    if mask._data.dtype != jnp.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    try:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    except ValueError:
        _explain_broadcast(tuple(mask.shape), tuple(input.shape))
        raise
    if _is_tracer(mask._data):
        raise Untraceable("masked_select gives a shape that depends on the mask's values, "
                           "which cannot be traced: use torch.where(mask, input, 0) instead")
    count = int(np.count_nonzero(np.asarray(mask._data)))
    count *= int(np.prod(shape, dtype=np.int64)) // max(int(np.prod(mask.shape,
                                                                     dtype=np.int64)), 1)
    return _D.dispatch(_prepared("_masked_select"), (input, mask), (count,))
