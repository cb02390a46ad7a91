"""Factories: tensor, zeros, ones, full, arange, linspace, eye, rand, randn, randint, normal..."""

from __future__ import annotations

import builtins
import functools
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from . import (
    _device,
    _device_dtypes,
    _dtypes,
    _host_put,
    _layout,
    _memory_format,
    _meta,
    _numpy_shared,
    _one_off,
    _programs,
    _strides,
)
from ._tensor import Tensor
from ._x64 import scope_functions


def _sizes(size, negative_msg: str | None = None) -> tuple:
    """Accept zeros(2, 3), zeros((2, 3)), zeros([2, 3]) and zeros(torch.Size([2, 3]))."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.__index__()
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"size must be a tuple of ints, but got {type(s).__name__}")
        if s < 0:
            if negative_msg:
                raise RuntimeError(negative_msg)
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
        out.append(int(s))
    return tuple(out)


def _size_of(args, size, fname, negative_msg=None) -> tuple:
    """A factory's shape, in any of PyTorch's call forms: zeros(2, 3), zeros((2, 3)),
    zeros([2, 3]), zeros(torch.Size([2, 3])) or zeros(size=(2, 3))."""
    if size is not None:
        if args:
            raise TypeError(f"{fname}() got multiple values for argument 'size'")
        args = (size,)
    elif len(args) > 1 and any(isinstance(a, (tuple, list)) for a in args):
        raise TypeError(f"{fname}() takes 1 positional argument but {len(args)} were given")
    return _sizes(args, negative_msg)


def _target(device):
    """The device a factory puts its result on: the one given, else the default device
    (torch.set_default_device, `with torch.device(...)`), else None: JAX's default."""
    return device if device is not None else _device.default_device()


def _make(shape, d, device, requires_grad, fill, out=None, fname="", layout=None) -> Tensor:
    """A factory's result: fill(d) -> array of `shape`, on `device` (already resolved), or
    only the shape and dtype on the meta device; written into `out` when given."""
    _layout.check(layout, fname)
    if out is not None:
        d = _out_dtype(d, out, fname)
    if _device.is_meta(device):
        t = _finish(_meta.array(shape, d.np), None, requires_grad)
    else:
        t = _finish(fill(d), device, requires_grad)
    return t if out is None else _into(out, t, fname)


def _out_dtype(d, out, fname):
    """out= decides the dtype when none is given; a different one given is an error."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if d is None:
        return out.dtype
    if d is not out.dtype:
        raise RuntimeError(f"dtype {_dtypes.SCALAR_NAMES[d.name]} does not match dtype of out "
                           f"parameter ({_dtypes.SCALAR_NAMES[out.dtype.name]})")
    return d


def _into(out: Tensor, t: Tensor, fname: str) -> Tensor:
    """Write a factory's result into out= (resized when its shape differs) and return out."""
    if out._data.shape != t._data.shape and out._base is None:
        out._data = t._data
        out._counter()[0] += 1
    else:
        out._write(t._data)
    return out


def _finish(arr, device, requires_grad) -> Tensor:
    if _device.is_meta(device):
        arr = _meta.like(arr)
        device = None
    if device is not None:
        dev = _device.jax_device(device)
        # An uncommitted array already on that device stays uncommitted. device_put would
        # commit it without moving it, and JAX compiles a program again for committed inputs:
        # an LSTM's `zeros(..., device=input.device)` state made every result downstream
        # committed, so step 2 recompiled the forward, backward and optimizer programs that
        # step 1 had compiled for the uncommitted parameters.
        # (a traced value, inside a compiled step, has no placement to keep)
        if (isinstance(arr, jax.core.Tracer) or getattr(arr, "committed", True)
                or arr.devices() != {dev}):
            arr = jax.device_put(arr, dev)
    t = Tensor._wrap(arr)
    if _device_dtypes.STATE.on:  # int64 / float64 on an accelerator that stores them otherwise
        t = _device_dtypes.on_create(t)
    if requires_grad:
        if not jnp.issubdtype(arr.dtype, jnp.inexact):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t._requires_grad = True
    return t


def _dtype_or_default(dtype):
    return _dtypes.get_default_dtype() if dtype is None else _dtypes.to_dtype(dtype)


# -- from data ---------------------------------------------------------------------------------

def _check_ragged(data, dim=0):
    if isinstance(data, (list, tuple)):
        lengths = None
        for item in data:
            if isinstance(item, (list, tuple)):
                if lengths is None:
                    lengths = len(item)
                elif len(item) != lengths:
                    raise ValueError(f"expected sequence of length {lengths} at dim {dim + 1} "
                                     f"(got {len(item)})")
                _check_ragged(item, dim + 1)


def _unwrap_nested(data):
    if isinstance(data, Tensor):
        return np.asarray(data._data)
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(x) for x in data]
    return data


def _infer(data):
    """numpy array and torch dtype for Python data, following PyTorch's inference."""
    if isinstance(data, Tensor):
        return np.asarray(data._data), data.dtype
    if isinstance(data, np.ndarray):
        return data, _dtypes.from_jax(data.dtype)
    if isinstance(data, np.generic):
        return np.asarray(data), _dtypes.from_jax(data.dtype)
    if hasattr(data, "__jax_array__") or isinstance(data, jax.Array):
        arr = jnp.asarray(data)
        return arr, _dtypes.from_jax(arr.dtype)
    _check_ragged(data)
    arr = np.asarray(_unwrap_nested(data))
    if arr.dtype == object:
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    kind = arr.dtype.kind
    if kind == "b":
        return arr, _dtypes.bool
    if kind in "iu":
        return arr, _dtypes.int64
    if kind == "f":
        return arr, _dtypes.get_default_dtype()
    if kind == "c":
        return arr, _dtypes.get_default_dtype().to_complex()
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """A new tensor holding a copy of `data` (numbers, nested lists, arrays or tensors)."""
    device = _target(device)
    arr, inferred = _infer(data)
    d = inferred if dtype is None else _dtypes.to_dtype(dtype)
    if (not d.is_floating_point and not d.is_complex and np.issubdtype(np.asarray(arr).dtype,
                                                                       np.floating)):
        arr = np.trunc(np.asarray(arr))  # float data into an integer dtype truncates
    if isinstance(arr, np.ndarray):
        # JAX may alias a NumPy buffer on CPU; copy so later writes to `data` are not seen
        arr = np.array(arr, dtype=d.np, copy=True)
        if _one_off.top_level():
            # device_put, not jnp.asarray (a `stage` program compiled per shape in jax 0.10):
            # the same strongly typed array of dtype d
            return _finish(_host_put.put(arr), device, requires_grad)
    return _finish(jnp.asarray(arr, dtype=d.np), device, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like tensor(), but returns `data` itself when it is already a matching tensor, and
    shares the memory of an ndarray of a matching dtype (as from_numpy)."""
    if isinstance(data, Tensor):
        t = data if dtype is None else data.to(_dtypes.to_dtype(dtype))
        return t if device is None else t.to(device)
    device = _target(device)
    if _numpy_shared.shares_with(data, dtype, device):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False) -> Tensor:
    """obj as a tensor: a tensor itself when no conversion or copy is asked, else as
    as_tensor() makes it."""
    if isinstance(obj, Tensor):
        t = obj.to(dtype=dtype, device=device)
        if copy and t is obj:
            t = obj.clone()
    elif copy:
        t = tensor(obj, dtype=dtype, device=device)
    elif copy is False and isinstance(obj, np.ndarray) and not _numpy_shared.shares_with(
            obj, dtype, _target(device)):
        src = _dtypes.SCALAR_NAMES.get(str(obj.dtype), str(obj.dtype))
        dst = _dtypes.SCALAR_NAMES[_dtypes.to_dtype(dtype).name] if dtype is not None else src
        raise ValueError(f"can't alias tensor with dtype '{src}' into dtype '{dst}'.")
    else:
        t = as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False) -> Tensor:
    """A 0-d tensor holding the number s, of the default float dtype unless dtype is given."""
    if isinstance(s, Tensor):
        s = s.item()
    d = _dtype_or_default(dtype)
    return _make((), d, _target(device), requires_grad, lambda d: _full_array((), s, d),
                 fname="scalar_tensor", layout=layout)


from_numpy = _numpy_shared.from_numpy


def legacy_new(*args, dtype=None, device=None) -> Tensor:
    """torch.Tensor(...): sizes give an uninitialised float tensor, data gives a float copy."""
    # PyTorch's legacy constructor ignores the default device
    d = _dtype_or_default(dtype)
    if not args:
        return _finish(jnp.zeros((0,), d.np), device, False)
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)) and not (
            isinstance(args[0], (tuple, list)) and type(args[0]).__name__ == "Size"):
        arr, _ = _infer(args[0])
        return _finish(jnp.asarray(np.asarray(arr), dtype=d.np), device, False)
    return _make(_sizes(args), d, device, False, lambda d: _full_array(_sizes(args), 0, d))


# -- filled ------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=512)
def _filled(shape, value, np_dtype):
    return _programs.jit(lambda: jnp.full(shape, value, np_dtype))


def _full_array(shape, value, d):
    # zeros and ones only: they are exact in every dtype, where NumPy and JAX could convert
    # another fill value differently (an out-of-range integer, a NaN into an integer dtype)
    if (value == 0 or value == 1) and type(value) in (int, float, bool) and _one_off.few(
            ("full", shape, value, d.np), math.prod(shape), _one_off.FILL_CALLS):
        return _one_off.to_device(np.full(shape, value, d.np))
    return _filled(shape, value, d.np)()


def _given(dtype):
    return None if dtype is None else _dtypes.to_dtype(dtype)


def zeros(*args, size=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False) -> Tensor:
    shape = _size_of(args, size, "zeros", "zeros: Dimension size must be non-negative.")
    d = _given(dtype) if out is not None else _dtype_or_default(dtype)
    return _make(shape, d, _target(device), requires_grad,
                 lambda d: _full_array(shape, 0, d), out, "zeros", layout)


def ones(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False) -> Tensor:
    shape = _size_of(args, size, "ones")
    d = _given(dtype) if out is not None else _dtype_or_default(dtype)
    return _make(shape, d, _target(device), requires_grad,
                 lambda d: _full_array(shape, 1, d), out, "ones", layout)


def empty(*args, size=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False, memory_format=None) -> Tensor:
    """Uninitialised in PyTorch; zeros here (JAX has no uninitialised memory)."""
    shape = _size_of(args, size, "empty")
    d = _given(dtype) if out is not None else _dtype_or_default(dtype)
    t = _make(shape, d, _target(device), requires_grad,
              lambda d: _full_array(shape, 0, d), out, "empty", layout)
    record = _strides.new_layout(shape, _memory_format.check(memory_format, "empty"))
    if record is not None:
        t._layout = record
    return t


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False) -> Tensor:
    """A tensor of `size` whose strides read `stride` (metadata: the array is XLA's)."""
    shape, stride = _sizes((size,)), tuple(int(s) for s in stride)
    if len(shape) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    t = _make(shape, _dtype_or_default(dtype), _target(device), requires_grad,
              lambda d: _full_array(shape, 0, d), None, "empty_strided", layout)
    if stride != _strides.contiguous_strides(shape):
        t._layout = (stride, 0)
    return t


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False) -> Tensor:
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    shape = _sizes((size,))
    d = _given(dtype)
    if d is None and out is None:
        d = _dtypes._scalar_dtype(fill_value)
    return _make(shape, d, _target(device), requires_grad,
                 lambda d: _full_array(shape, fill_value, d), out, "full", layout)


def _formatted(t: Tensor, input: Tensor, memory_format) -> Tensor:
    """t laid out (as metadata) as a copy of input in memory_format is (_strides.py)."""
    record = _strides.copy_layout(input, _memory_format.check(memory_format, "empty_like"))
    if record is not None:
        t._layout = record
    return t


def _like(input: Tensor, dtype, device):
    d = input.dtype if dtype is None else _dtypes.to_dtype(dtype)
    dev = device if device is not None else (None if input.device.type == "cpu" and
                                             _device._default_accelerator() == "cpu"
                                             else input.device)
    return tuple(input._data.shape), d, dev


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None) -> Tensor:
    shape, d, dev = _like(input, dtype, device)
    return _formatted(_make(shape, d, dev, requires_grad, lambda d: _full_array(shape, 0, d),
                 fname="zeros_like", layout=layout), input, memory_format)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None) -> Tensor:
    shape, d, dev = _like(input, dtype, device)
    return _formatted(_make(shape, d, dev, requires_grad, lambda d: _full_array(shape, 1, d),
                 fname="ones_like", layout=layout), input, memory_format)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None) -> Tensor:
    return zeros_like(input, dtype=dtype, layout=layout, device=device,
                      requires_grad=requires_grad, memory_format=memory_format)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None) -> Tensor:
    shape, d, dev = _like(input, dtype, device)
    return _formatted(_make(shape, d, dev, requires_grad, lambda d: _full_array(shape, fill_value, d),
                 fname="full_like", layout=layout), input, memory_format)


# -- ranges ------------------------------------------------------------------------------------

# the dtypes arange's float64 / int64 values are cast to on the host (others by XLA)
_HOST_CASTS = (np.dtype(np.float32), np.dtype(np.int32))


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False) -> Tensor:
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None and out is None:
        is_float = any(isinstance(v, float) for v in vals)
        d = _dtypes.get_default_dtype() if is_float else _dtypes.int64
    else:
        d = _given(dtype)
    n = math.ceil((end - start) / step)

    def fill(d):
        arr = start + np.arange(n, dtype=np.float64 if d.is_floating_point else np.int64) * step
        if np.dtype(d.np) in _HOST_CASTS and arr.dtype != d.np and _one_off.top_level():
            # cast on the host, as XLA would (round to nearest even, integers wrapped): no
            # program per length for the conversion (traced again in every process)
            return _one_off.to_device(arr.astype(d.np))
        return jnp.asarray(arr, dtype=d.np)
    return _make((n,), d, _target(device), requires_grad, fill, out, "arange", layout)


def range(start, end, step=1, *, out=None, dtype=None, layout=None, device=None,
          requires_grad=False) -> Tensor:
    """Deprecated in PyTorch: start to end *inclusive* by step, default float dtype."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=3)  # 3: past the x64 scope's wrapper (scope_functions below)
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    d = _given(dtype) if out is not None else _dtype_or_default(dtype)
    n = int(builtins.max(0, math.floor((end - start) / step) + 1))

    def fill(d):
        arr = start + np.arange(n, dtype=np.float64) * step
        return jnp.asarray(arr, dtype=d.np)
    return _make((n,), d, _target(device), requires_grad, fill, out, "range", layout)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False) -> Tensor:
    d = _given(dtype) if out is not None else _dtype_or_default(dtype)
    if out is not None:
        d = _out_dtype(d, out, "linspace")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    i = np.arange(steps, dtype=np.float64)
    if steps > 1:
        # PyTorch fills the first half from start and the second half back from end
        step = (end - start) / (steps - 1)
        half = steps // 2
        arr = np.where(i < half, start + step * i, end - step * (steps - 1 - i))
    else:
        arr = np.full((steps,), start, dtype=np.float64)
    if not (d.is_floating_point or d.is_complex):
        arr = np.trunc(arr)
    return _make((steps,), d, _target(device), requires_grad,
                 lambda d: jnp.asarray(arr, dtype=d.np), out, "linspace", layout)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    d = _given(dtype) if out is not None else _dtype_or_default(dtype)

    def fill(d):
        lin = linspace(start, end, steps, dtype=_dtypes.float64, device=device)
        return jnp.power(base, lin._data).astype(d.np)
    return _make((steps,), d, _target(device), requires_grad, fill, out, "logspace", layout)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    d = _given(dtype) if out is not None else _dtype_or_default(dtype)
    m = n if m is None else m
    return _make((n, m), d, _target(device), requires_grad,
                 lambda d: jnp.eye(n, m, dtype=d.np), out, "eye", layout)


_ = builtins

# every factory makes arrays of PyTorch's dtypes (int64, float64): run them in the x64 scope
scope_functions(globals())

# the random factories live in their own module, which builds on the helpers above; they are
# names of this module too (callers reach them as _creation.rand, ...)
from ._creation_random import (  # noqa: E402,F401
    _sample,
    _sampler,
    normal,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
)
