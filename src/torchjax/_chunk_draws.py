"""Random draws of one-off sizes from one program per dtype.

Building a model draws once per parameter: every draw of a new size would compile a sampler
(threefry's 20 rounds make it ~0.2-0.3 s of XLA compile, the largest program of a model's
construction). So a one-off draw of n values is made in chunks of CHUNK values by ONE
program per dtype (both distributions) that takes the chunk's start as an input, and the chunks
are joined and cut on the host.

The values are those of the exact draw `jax.random.uniform(key, (n,), ...)`, bit for bit:
with `jax_threefry_partitionable` (JAX's default) the bits of element i are threefry2x32 of
the key and the counter i, and uniform and normal map bits to values element by element. A
PRNG implementation of our own (`jax.extend.random.define_prng_impl`) whose key carries the
chunk's start gives the chunk's bits, and JAX's own `uniform`/`normal` turn them into values,
so no transform is written twice. tests/test_random_chunks.py compares with the exact draws.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from . import _programs

CHUNK = 1 << 16
_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}

try:
    from jax.extend.random import define_prng_impl, threefry2x32_p
except ImportError:  # pragma: no cover - a JAX without them: the exact samplers serve
    define_prng_impl = threefry2x32_p = None


def _bits(key, bit_width, shape):
    """The random bits of counters start .. start + n of the threefry key (k1, k2), as
    JAX's partitionable threefry computes them (key data: k1, k2, start)."""
    (n,) = shape
    lo = key[2] + lax.iota(np.uint32, n)
    b1, b2 = threefry2x32_p.bind(key[0], key[1], jnp.zeros(n, np.uint32), lo)
    if bit_width == 64:
        hi = lax.convert_element_type(b1, np.uint64)
        return lax.shift_left(hi, np.uint64(32)) | lax.convert_element_type(b2, np.uint64)
    bits = b1 ^ b2
    return bits if bit_width == 32 else lax.convert_element_type(bits, _UINT[bit_width])


def _never(*args):
    raise NotImplementedError("a chunk key only draws bits")


@functools.lru_cache(maxsize=1)
def _impl():
    return define_prng_impl(key_shape=(3,), seed=_never, split=_never, random_bits=_bits,
                            fold_in=_never, name="torchjax_chunk", tag="tjc")


def serves(np_dtype) -> bool:
    """Whether draws of this dtype come from here: real floating dtypes (a complex normal
    splits its key), with JAX's partitionable threefry."""
    # (not in a forked DataLoader worker: its guard evaluates programs with NumPy, and the
    # chunk key's bits would reach XLA there, which hangs after a fork)
    return (threefry2x32_p is not None and jnp.issubdtype(np_dtype, jnp.floating)
            and bool(jax.config.jax_threefry_partitionable) and not _programs.in_forked_worker())


@functools.lru_cache(maxsize=64)
def _program(np_dtype):
    # Both distributions from one program: a model's init draws uniform (Linear, Conv) and
    # normal (Embedding) values, and a second program cost a second ~0.3 s compile, where
    # computing both per chunk costs well under a millisecond. (The closure holds only the
    # dtype, a value the program cache can name it by.)
    def chunk(key, offset, start, a, b):
        words = jax.random.key_data(jax.random.fold_in(key, offset))
        k = jax.random.wrap_key_data(jnp.concatenate([words, start[None]]), impl=_impl())
        return (jax.random.uniform(k, (CHUNK,), np_dtype, a, b),
                (a + b * jax.random.normal(k, (CHUNK,), np_dtype)).astype(np_dtype))
    return _programs.jit(chunk)


def draw(kind: str, n: int, np_dtype, key, offset, a, b):
    """(host values, a device chunk): the first n values of the draw
    `_creation._sampler(kind, (n,), np_dtype)` gives for (key, offset, a, b), and one chunk
    as the program left it (where the values belong: its sharding)."""
    run = _program(np_dtype)
    which = 0 if kind == "uniform" else 1
    chunks = [run(key, offset, np.uint32(s), a, b)[which] for s in range(0, n, CHUNK)]
    parts = [np.asarray(c) for c in chunks]
    return (parts[0] if len(parts) == 1 else np.concatenate(parts))[:n], chunks[0]


def device_uniforms(n: int, np_dtype, key, offset):
    """The first n values of `uniform(fold_in(key, offset), ..., np_dtype)` as device chunks
    (a tuple, CHUNK values each, the last one cut later), when this process has made the chunk
    program for these arguments already (a model's parameters were drawn); else None: the
    caller's own program is as quick to make then."""
    if not serves(np_dtype):
        return None
    run = _program(np_dtype)
    if not _programs.made(run, (key, offset, np.uint32(0), 0.0, 1.0)):
        return None
    return tuple(run(key, offset, np.uint32(s), 0.0, 1.0)[0] for s in range(0, n, CHUNK))
