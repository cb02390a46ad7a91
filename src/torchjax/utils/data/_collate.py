"""default_collate and default_convert: lists of samples -> batched tensors, recursively
through dicts, named tuples, tuples and lists.

Numbers and numpy data are batched with numpy first and become tensors with one transfer.
Inside a worker process the same functions run in "shipping" mode: instead of tensors they
produce `_Shipped` numpy arrays that unpickle as torchjax Tensors in the main process, so a
worker needs no XLA computation (and no compilation) to batch numbers and arrays.
"""

from __future__ import annotations

import collections.abc
import copy
import functools
import re

import numpy as np

from ... import _creation, _dtypes
from ..._dispatch import call_op
from ..._host_put import put
from ..._tensor import Tensor
from ..._x64 import scoped

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

# numpy dtype kinds default_collate refuses: bytes, strings and objects
_STR_OBJ_DTYPE = re.compile(r"[SaUO]")

_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")

_SUPPORTED_NP = ("float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
                 "uint64, uint32, uint16, uint8, and bool")


# -- the last step: a numpy array becomes a tensor (main process) or a _Shipped (worker) ------

@scoped  # also pickle's reconstructor of a worker's batch: int64 batches stay int64
def _wrap(arr: np.ndarray) -> Tensor:
    # device_put, not jnp.asarray: jax 0.10's asarray of an ndarray runs a `stage` program,
    # compiled once per batch shape; device_put compiles nothing. `arr` is always a fresh
    # array no one else holds (device_put may use its buffer as it is).
    return Tensor._wrap(put(arr))


class _Shipped:
    """A batch array made in a worker; pickling it yields a torchjax Tensor on the other side."""

    __slots__ = ("arr",)

    def __init__(self, arr: np.ndarray):
        self.arr = arr

    def __reduce__(self):
        return (_wrap, (self.arr,))


def _finish(arr: np.ndarray, ship: bool):
    return _Shipped(arr) if ship else _wrap(arr)


def _tensor_to_host(t: Tensor, ship: bool):
    """A tensor made by torchjax inside a worker travels as its values."""
    return _Shipped(np.asarray(t._data)) if ship else t


# -- numpy checks that reproduce torch.as_tensor's and torch.stack's errors --------------------

def _checked_dtype(arr: np.ndarray) -> _dtypes.dtype:
    if not arr.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")
    try:
        return _dtypes.from_jax(arr.dtype)
    except TypeError:
        raise TypeError(f"can't convert np.ndarray of type numpy.{arr.dtype.type.__name__}. "
                        f"The only supported types are: {_SUPPORTED_NP}.") from None


def _stack_np(arrays: list, dtypes: list) -> np.ndarray:
    """np.stack with torch.stack's size check and type promotion."""
    first = arrays[0].shape
    for i, a in enumerate(arrays):
        if a.shape != first:
            raise RuntimeError("stack expects each tensor to be equal size, but got "
                               f"{list(first)} at entry 0 and {list(a.shape)} at entry {i}")
    out = functools.reduce(_dtypes.promote_types, dtypes)
    return np.stack([a.astype(out.np, copy=False) for a in arrays])


# -- leaf collate functions ----------------------------------------------------------------------

def _tensors(batch, ship: bool):
    if ship and all(isinstance(t, Tensor) for t in batch):
        arrays = [np.asarray(t._data) for t in batch]
        return _Shipped(_stack_np(arrays, [t.dtype for t in batch]))
    # torch.stack itself: autograd in the main process, its errors for foreign elements
    return _tensor_to_host(call_op("stack", batch, 0), ship)


def _numpy_arrays(batch, ship: bool):
    elem = batch[0]
    if _STR_OBJ_DTYPE.search(elem.dtype.str) is not None:
        raise TypeError(_ERR.format(elem.dtype))
    if not all(isinstance(b, np.ndarray) for b in batch):
        # PyTorch converts each with as_tensor and stacks: let torchjax report what fails
        return _tensors([_creation.as_tensor(b) for b in batch], ship)
    return _finish(_stack_np(batch, [_checked_dtype(b) for b in batch]), ship)


def _numpy_scalars(batch, ship: bool):
    if not all(isinstance(x, np.generic) for x in batch):
        return _tensor_to_host(_creation.as_tensor(batch), ship)
    arrays = [np.asarray(x) for x in batch]
    # a list of numpy scalars takes the promoted type of their dtypes (as torch.as_tensor)
    out = functools.reduce(_dtypes.promote_types, [_checked_dtype(a) for a in arrays])
    return _finish(np.array(arrays, dtype=out.np), ship)


def _floats(batch, ship: bool):
    if all(type(x) is float for x in batch):
        return _finish(np.array(batch, dtype=np.float64), ship)
    return _tensor_to_host(_creation.tensor(batch, dtype=_dtypes.float64), ship)


def _ints(batch, ship: bool):
    kinds = {type(x) for x in batch}
    if kinds == {bool}:
        return _finish(np.array(batch, dtype=np.bool_), ship)
    if kinds == {int} and all(-2 ** 63 <= x < 2 ** 63 for x in batch):
        return _finish(np.array(batch, dtype=np.int64), ship)
    # mixed numbers, huge ints: torch.tensor's inference and errors
    return _tensor_to_host(_creation.tensor(batch), ship)


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return _tensors(batch, False)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    return _numpy_arrays(batch, False)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return _numpy_scalars(batch, False)


def collate_float_fn(batch, *, collate_fn_map=None):
    return _floats(batch, False)


def collate_int_fn(batch, *, collate_fn_map=None):
    return _ints(batch, False)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


# Element type -> collate function. The order matters: numpy scalars (np.float64 is a float)
# must be found before float, and bool is found as int.
default_collate_fn_map: dict = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def _shipping(fn):
    return lambda batch, *, collate_fn_map=None: fn(batch, True)


_shipping_collate_fn_map: dict = {
    Tensor: _shipping(_tensors),
    np.ndarray: _shipping(_numpy_arrays),
    (np.bool_, np.number, np.object_): _shipping(_numpy_scalars),
    float: _shipping(_floats),
    int: _shipping(_ints),
    str: collate_str_fn,
    bytes: collate_str_fn,
}


# -- the recursion ---------------------------------------------------------------------------

def _rebuild_mapping(elem, values: dict):
    """A mapping like `elem` holding `values`: a copy of a mutable mapping (keeps its class
    and extra attributes), else the class built from a dict, else a plain dict."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            out = copy.copy(elem)
            out.update(values)
            return out
        return type(elem)(values)
    except TypeError:
        return values


def _rebuild_sequence(elem, values: list):
    try:
        if isinstance(elem, collections.abc.MutableSequence):
            out = copy.copy(elem)
            for i, v in enumerate(values):
                out[i] = v
            return out
        return type(elem)(values)
    except TypeError:
        return values


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _lookup(elem, collate_fn_map):
    if collate_fn_map is None:
        return None
    fn = collate_fn_map.get(type(elem))
    if fn is not None:
        return fn
    for kind, fn in collate_fn_map.items():
        if isinstance(elem, kind):
            return fn
    return None


def collate(batch, *, collate_fn_map=None):
    """Collate a list of samples: element types found in collate_fn_map use their function;
    mappings, named tuples and sequences are collated field by field."""
    elem = batch[0]
    fn = _lookup(elem, collate_fn_map)
    if fn is not None:
        return fn(batch, collate_fn_map=collate_fn_map)

    def sub(samples):
        return collate(samples, collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {k: sub([d[k] for d in batch]) for k in elem})
    if _is_namedtuple(elem):
        return type(elem)(*(sub(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [sub(s) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # PyTorch returns tuples as lists (backwards compatibility)
        return _rebuild_sequence(elem, columns)
    raise TypeError(_ERR.format(type(elem)))


def default_collate(batch):
    """Stack a list of samples into a batch: tensors are stacked; numpy arrays and numbers
    become tensors (Python floats float64, ints int64, bools bool); strings and bytes stay
    lists; dicts, named tuples, tuples (as lists) and lists are collated field by field."""
    return collate(batch, collate_fn_map=default_collate_fn_map)


def _convert(data, ship: bool):
    kind = type(data)
    if isinstance(data, Tensor):
        return data
    if kind.__module__ == "numpy" and kind.__name__ not in ("str_", "string_"):
        if kind is np.ndarray and _STR_OBJ_DTYPE.search(data.dtype.str) is not None:
            return data
        arr = np.asarray(data)
        _checked_dtype(arr)
        # a copy: device_put may keep using the caller's buffer on CPU, which they may change
        return _finish(np.array(arr, copy=True), ship)

    def sub(x):
        return _convert(x, ship)

    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: sub(data[k]) for k in data})
    if _is_namedtuple(data):
        return kind(*(sub(d) for d in data))
    if isinstance(data, tuple):
        return [sub(d) for d in data]  # as PyTorch: tuples become lists
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [sub(d) for d in data])
    return data


def default_convert(data):
    """Convert numpy arrays and scalars in `data` to tensors, recursively; everything else is
    kept (the collate function of a DataLoader with batch_size=None)."""
    return _convert(data, False)


def _shipping_collate(batch):
    return collate(batch, collate_fn_map=_shipping_collate_fn_map)


def _shipping_convert(data):
    return _convert(data, True)


def shipping_mode(collate_fn) -> bool | None:
    """True for the worker twin of default_collate, False for default_collate, else None."""
    if collate_fn is _shipping_collate:
        return True
    return False if collate_fn is default_collate else None


def for_worker(collate_fn):
    """The function a worker runs instead of `collate_fn`: the shipping twin of
    default_collate / default_convert, or collate_fn itself."""
    if collate_fn is default_collate:
        return _shipping_collate
    if collate_fn is default_convert:
        return _shipping_convert
    return collate_fn
