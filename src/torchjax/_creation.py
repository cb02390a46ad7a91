"""Factories: tensor, zeros, ones, full, arange, linspace, eye, rand, randn, randint, normal..."""

from __future__ import annotations

import builtins
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from . import _device, _dtypes, _one_off, _random
from ._tensor import Tensor
from ._x64 import scope_functions, scoped


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


def _finish(arr, device, requires_grad) -> Tensor:
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
    arr, inferred = _infer(data)
    d = inferred if dtype is None else _dtypes.to_dtype(dtype)
    if (not d.is_floating_point and not d.is_complex and np.issubdtype(np.asarray(arr).dtype,
                                                                       np.floating)):
        arr = np.trunc(np.asarray(arr))  # float data into an integer dtype truncates
    if isinstance(arr, np.ndarray):
        # JAX may alias a NumPy buffer on CPU; copy so later writes to `data` are not seen
        arr = np.array(arr, dtype=d.np, copy=True)
    return _finish(jnp.asarray(arr, dtype=d.np), device, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like tensor(), but returns `data` itself when it is already a matching tensor."""
    if isinstance(data, Tensor):
        t = data if dtype is None else data.to(_dtypes.to_dtype(dtype))
        return t if device is None else t.to(device)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    # A copy: JAX arrays are immutable, so memory cannot be shared with a writable ndarray.
    # device_put, not jnp.asarray: jax 0.10's asarray of an ndarray runs a `stage` program,
    # compiled once per shape; device_put compiles nothing
    return Tensor._wrap(jax.device_put(np.array(ndarray, copy=True)))


def legacy_new(*args, dtype=None, device=None) -> Tensor:
    """torch.Tensor(...): sizes give an uninitialised float tensor, data gives a float copy."""
    d = _dtype_or_default(dtype)
    if not args:
        return _finish(jnp.zeros((0,), d.np), device, False)
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)) and not (
            isinstance(args[0], (tuple, list)) and type(args[0]).__name__ == "Size"):
        return tensor(args[0], dtype=d, device=device)
    return zeros(*args, dtype=d, device=device)


# -- filled ------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=512)
def _filled(shape, value, np_dtype):
    return jax.jit(lambda: jnp.full(shape, value, np_dtype))


def _full_array(shape, value, d):
    # zeros and ones only: they are exact in every dtype, where NumPy and JAX could convert
    # another fill value differently (an out-of-range integer, a NaN into an integer dtype)
    if (value == 0 or value == 1) and type(value) in (int, float, bool) and _one_off.few(
            ("full", shape, value, d.np), math.prod(shape)):
        return _one_off.to_device(np.full(shape, value, d.np))
    return _filled(shape, value, d.np)()


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False) -> Tensor:
    d = _dtype_or_default(dtype)
    shape = _sizes(size, "zeros: Dimension size must be non-negative.")
    return _finish(_full_array(shape, 0, d), device, requires_grad)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False) -> Tensor:
    d = _dtype_or_default(dtype)
    return _finish(_full_array(_sizes(size), 1, d), device, requires_grad)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None) -> Tensor:
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False) -> Tensor:
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    d = _dtypes.to_dtype(dtype) if dtype is not None else _dtypes._scalar_dtype(fill_value)
    return _finish(_full_array(_sizes((size,)), fill_value, d), device, requires_grad)


def _like(input: Tensor, dtype, device):
    d = input.dtype if dtype is None else _dtypes.to_dtype(dtype)
    dev = device if device is not None else (None if input.device.type == "cpu" and
                                             _device._default_accelerator() == "cpu"
                                             else input.device)
    return tuple(input._data.shape), d, dev


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None) -> Tensor:
    shape, d, dev = _like(input, dtype, device)
    return _finish(_full_array(shape, 0, d), dev, requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None) -> Tensor:
    shape, d, dev = _like(input, dtype, device)
    return _finish(_full_array(shape, 1, d), dev, requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None) -> Tensor:
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None) -> Tensor:
    shape, d, dev = _like(input, dtype, device)
    return _finish(_full_array(shape, fill_value, d), dev, requires_grad)


# -- ranges ------------------------------------------------------------------------------------

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
    if dtype is None:
        is_float = any(isinstance(v, float) for v in vals)
        d = _dtypes.get_default_dtype() if is_float else _dtypes.int64
    else:
        d = _dtypes.to_dtype(dtype)
    n = math.ceil((end - start) / step)
    arr = start + np.arange(n, dtype=np.float64 if d.is_floating_point else np.int64) * step
    return _finish(jnp.asarray(arr, dtype=d.np), device, requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False) -> Tensor:
    d = _dtype_or_default(dtype)
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
    return _finish(jnp.asarray(arr, dtype=d.np), device, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    lin = linspace(start, end, steps, dtype=_dtypes.float64)
    d = _dtype_or_default(dtype)
    return _finish(jnp.power(base, lin._data).astype(d.np), device, requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    d = _dtype_or_default(dtype)
    return _finish(jnp.eye(n, n if m is None else m, dtype=d.np), device, requires_grad)


# -- random ------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=512)
def _sampler(kind, shape, np_dtype):
    def f(key, offset, a, b):
        k = jax.random.fold_in(key, offset)
        if kind == "uniform":
            return jax.random.uniform(k, shape, np_dtype, a, b)
        if kind == "normal":
            return (a + b * jax.random.normal(k, shape, np_dtype)).astype(np_dtype)
        if kind == "randperm":
            return jax.random.permutation(k, shape[0]).astype(np_dtype)
        if kind == "randint":
            return jax.random.randint(k, shape, a, b, dtype=jnp.int64).astype(np_dtype)
        raise ValueError(kind)
    return jax.jit(f)


@scoped  # also reached from outside the factories (Tensor.uniform_, make_tensor)
def _sample(kind, shape, d, generator, a, b):
    key, offset = _random.key_parts(generator)
    n = math.prod(shape)
    if kind in ("uniform", "normal") and n > 0 and _one_off.few(("sample", kind, shape, d.np), n):
        # A sampler compiles for about a second, and building a model draws once per
        # parameter shape: draw a size class and cut it to shape on the host, so a model
        # compiles a sampler per size class (two or three), not one per shape. Threefry's
        # draws are counter-based (jax_threefry_partitionable, JAX's default), so the first
        # n values of a larger draw are those a draw of n gives: the cut changes no value.
        # A shape drawn again and again (noise in a loop) gets its own exact sampler.
        flat = _sampler(kind, (_one_off.size_class(n),), d.np)(key, offset, a, b)
        return _one_off.to_device(np.asarray(flat)[:n].reshape(shape), flat)
    return _sampler(kind, shape, d.np)(key, offset, a, b)


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False) -> Tensor:
    d = _dtype_or_default(dtype)
    return _finish(_sample("uniform", _sizes(size), d, generator, 0.0, 1.0), device,
                   requires_grad)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False) -> Tensor:
    d = _dtype_or_default(dtype)
    return _finish(_sample("normal", _sizes(size), d, generator, 0.0, 1.0), device,
                   requires_grad)


def randint(*args, generator=None, out=None, dtype=None, layout=None, device=None,
            requires_grad=False, **kwargs) -> Tensor:
    """randint(high, size) or randint(low, high, size)."""
    low = kwargs.pop("low", None)
    high = kwargs.pop("high", None)
    size = kwargs.pop("size", None)
    if kwargs:
        raise TypeError(f"randint() got unexpected keyword arguments {sorted(kwargs)}")
    pos = list(args)
    if size is None:
        size = pos.pop()
    if high is None:
        high = pos.pop()
    if low is None:
        low = pos.pop() if pos else 0
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    d = _dtypes.int64 if dtype is None else _dtypes.to_dtype(dtype)
    return _finish(_sample("randint", _sizes((size,)), d, generator, int(low), int(high)),
                   device, requires_grad)


def randperm(n: int, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False) -> Tensor:
    """A random permutation of 0..n-1."""
    d = _dtypes.int64 if dtype is None else _dtypes.to_dtype(dtype)
    return _finish(_sample("randperm", (int(n),), d, generator, 0, 0), device, requires_grad)


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None) -> Tensor:
    shape, d, dev = _like(input, dtype, device)
    return _finish(_sample("uniform", shape, d, generator, 0.0, 1.0), dev, requires_grad)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None) -> Tensor:
    shape, d, dev = _like(input, dtype, device)
    return _finish(_sample("normal", shape, d, generator, 0.0, 1.0), dev, requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,
                 requires_grad=False) -> Tensor:
    if high is None:
        low, high = 0, low
    shape, d, dev = _like(input, dtype, device)
    return _finish(_sample("randint", shape, d, generator, int(low), int(high)), dev,
                   requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None,
           layout=None, device=None, requires_grad=False) -> Tensor:
    """normal(mean, std, size) with numbers, or elementwise with tensor mean and/or std."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        ref = mean if isinstance(mean, Tensor) else std
        shape = jnp.broadcast_shapes(
            *(tuple(v._data.shape) for v in (mean, std) if isinstance(v, Tensor)))
        d = ref.dtype
        z = Tensor._wrap(_sample("normal", shape, d, generator, 0.0, 1.0))
        return mean + std * z  # through the op table, so gradients reach mean and std
    if size is None:
        raise TypeError("normal() missing required argument 'size' when mean and std are "
                        "numbers")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    d = _dtype_or_default(dtype)
    return _finish(_sample("normal", _sizes((size,)), d, generator, float(mean), float(std)),
                   device, requires_grad)


_ = builtins

# every factory makes arrays of PyTorch's dtypes (int64, float64): run them in the x64 scope
scope_functions(globals())
