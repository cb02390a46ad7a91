"""The random factories: rand, randn, randint, randperm, normal and their _like forms, and
the samplers behind them and Tensor.uniform_/normal_ (_inplace_random)."""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from . import _chunk_draws, _dtypes, _one_off, _programs, _random
from ._creation import (
    _dtype_or_default,
    _formatted,
    _given,
    _like,
    _make,
    _size_of,
    _sizes,
    _target,
)
from ._tensor import Tensor
from ._x64 import scope_functions, scoped

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
    return _programs.jit(f)


# Draws of one shape from the chunks before the shape gets its own sampler (a threefry
# program: 0.15-0.2 s of compile). A model's construction draws each weight shape once per
# layer, and twice where it initializes its weights again (minGPT: a Linear's own uniform
# draw, then normal_ in _init_weights, then its c_proj weights a third time): at 8, minGPT's
# 6-layer gpt-mini compiled three samplers while it was built (0.5 s of its 1.2 s build,
# cold). A draw from the chunks costs ~0.5-1 ms more than its own program's for tens of
# thousands of values, so noise drawn in a loop waits 64 draws for its program.
CHUNKED_DRAWS = 64


@scoped  # also reached from outside the factories (Tensor.uniform_, make_tensor)
def _sample(kind, shape, d, generator, a, b):
    key, offset = _random.key_parts(generator)
    n = math.prod(shape)
    chunked = _chunk_draws.serves(d.np)
    # (chunks serve the weights of a deep model's repeated layers too: CHUNKED_DRAWS draws of
    # a shape before it gets its own program)
    if kind in ("uniform", "normal") and n > 0 and _one_off.few(
            ("sample", kind, shape, d.np), n, CHUNKED_DRAWS if chunked else _one_off.HOST_CALLS):
        # A sampler compiles for a fraction of a second, and building a model draws once per
        # parameter shape: one program per distribution and dtype draws it in chunks and the
        # host joins and cuts them (_chunk_draws: the values of the exact draw). Without it,
        # a size class is drawn and cut (a sampler per class: threefry's draws are
        # counter-based, so the first n values of a larger draw are those a draw of n gives).
        # A shape drawn again and again (noise in a loop) gets its own exact sampler.
        if chunked:
            host, like = _chunk_draws.draw(kind, n, d.np, key, offset, a, b)
            return _one_off.to_device(host.reshape(shape), like)
        flat = _sampler(kind, (_one_off.size_class(n),), d.np)(key, offset, a, b)
        return _one_off.to_device(np.asarray(flat)[:n].reshape(shape), flat)
    return _sampler(kind, shape, d.np)(key, offset, a, b)


def rand(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False) -> Tensor:
    shape = _size_of(args, size, "rand")
    d = _given(dtype) if out is not None else _dtype_or_default(dtype)
    return _make(shape, d, _target(device), requires_grad,
                 lambda d: _sample("uniform", shape, d, generator, 0.0, 1.0), out, "rand", layout)


def randn(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False) -> Tensor:
    shape = _size_of(args, size, "randn")
    d = _given(dtype) if out is not None else _dtype_or_default(dtype)
    return _make(shape, d, _target(device), requires_grad,
                 lambda d: _sample("normal", shape, d, generator, 0.0, 1.0), out, "randn",
                 layout)


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
    d = _dtypes.int64 if dtype is None and out is None else _given(dtype)
    shape = _sizes((size,))
    return _make(shape, d, _target(device), requires_grad,
                 lambda d: _sample("randint", shape, d, generator, int(low), int(high)), out,
                 "randint", layout)


def randperm(n: int, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False) -> Tensor:
    """A random permutation of 0..n-1."""
    d = _dtypes.int64 if dtype is None and out is None else _given(dtype)
    return _make((int(n),), d, _target(device), requires_grad,
                 lambda d: _sample("randperm", (int(n),), d, generator, 0, 0), out, "randperm",
                 layout)


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None) -> Tensor:
    shape, d, dev = _like(input, dtype, device)
    return _formatted(_make(shape, d, dev, requires_grad,
                 lambda d: _sample("uniform", shape, d, generator, 0.0, 1.0),
                 fname="rand_like", layout=layout), input, memory_format)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None) -> Tensor:
    shape, d, dev = _like(input, dtype, device)
    return _formatted(_make(shape, d, dev, requires_grad,
                 lambda d: _sample("normal", shape, d, generator, 0.0, 1.0),
                 fname="randn_like", layout=layout), input, memory_format)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None,
                 device=None, requires_grad=False, memory_format=None) -> Tensor:
    if high is None:
        low, high = 0, low
    shape, d, dev = _like(input, dtype, device)
    return _formatted(_make(shape, d, dev, requires_grad,
                 lambda d: _sample("randint", shape, d, generator, int(low), int(high)),
                 fname="randint_like", layout=layout), input, memory_format)


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
    d = _given(dtype) if out is not None else _dtype_or_default(dtype)
    shape = _sizes((size,))
    # PyTorch's normal() ignores the default device
    return _make(shape, d, device, requires_grad,
                 lambda d: _sample("normal", shape, d, generator, float(mean), float(std)), out,
                 "normal", layout)


scope_functions(globals())
