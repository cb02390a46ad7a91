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

Within a budget of values per process (HOST_VALUES), float32 draws on a CPU device skip that
program, whose threefry is most of its compile: NumPy computes the bits (threefry is integer
arithmetic, exact), then uniform values too (`_host_uniform`: a bit pattern and one rounding
XLA's way) and normal values through a small program that runs JAX's own `normal` on the given
bits (`_host_normal`: erf_inv's rounding stays XLA's).
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
    """(host values, a device array): the first n values of the draw
    `_creation._sampler(kind, (n,), np_dtype)` gives for (key, offset, a, b), and a device
    array where the values belong (its sharding: a chunk as the program left it, or the
    key)."""
    run = _program(np_dtype)
    # NumPy's uniform values where the program is not at hand, and for small draws: once
    # made (a normal draw made it) or on disk for this script (its last run's manifest lists
    # it), XLA draws a million values in a few milliseconds where NumPy takes ~0.1 s, bit for
    # bit the same; but a bias's few hundred values cost NumPy ~20 us against a whole chunk's
    # run and copy (1-8 ms measured in a warm GPT's build, where the loaders share the cores)
    # (the same rule for normal values: their bits are NumPy's, their transform a small
    # program's, see _host_normal)
    if n <= HOST_SMALL or not _programs.made(run, (key, offset, np.uint32(0), a, b),
                                             listed=True):
        host = (_host_uniform if kind == "uniform" else _host_normal)(
            n, np_dtype, key, offset, a, b)
        if host is not None:
            return host, key
    which = 0 if kind == "uniform" else 1
    chunks = [run(key, offset, np.uint32(s), a, b)[which] for s in range(0, n, CHUNK)]
    return _joined(chunks, n), chunks[0]


def _joined(chunks, n):
    """The first n values of these device chunks, on the host."""
    parts = [np.asarray(c) for c in chunks]
    return (parts[0] if len(parts) == 1 else np.concatenate(parts))[:n]


def _whole_chunks(values):
    """`values` followed by zeros to a whole number of chunks."""
    n = len(values)
    whole = np.zeros(-(-n // CHUNK) * CHUNK, values.dtype)
    whole[:n] = values
    return whole


def device_uniforms(n: int, np_dtype, key, offset):
    """The first n values of `uniform(fold_in(key, offset), ..., np_dtype)` as device chunks
    (a tuple, CHUNK values each, the last one cut later), when NumPy draws them
    (_host_uniform) or this process has made the chunk program for these arguments already (a
    model's parameters were drawn); else None: the caller's own program is as quick to make
    then."""
    if not serves(np_dtype):
        return None
    host = _host_uniform(n, np_dtype, key, offset, 0.0, 1.0)
    if host is not None:  # (NumPy's values, the chunks' bits: no program either way)
        from ._one_off import to_device
        # (the n values drawn, then zeros to whole chunks: the caller cuts the first n)
        whole = _whole_chunks(host)
        return tuple(to_device(whole[s:s + CHUNK], key) for s in range(0, len(whole), CHUNK))
    run = _program(np_dtype)
    if not _programs.made(run, (key, offset, np.uint32(0), 0.0, 1.0)):
        return None
    return tuple(run(key, offset, np.uint32(s), 0.0, 1.0)[0] for s in range(0, n, CHUNK))


# -- uniform draws with NumPy ---------------------------------------------------------------
# The chunk program is the largest compile of a model's construction (~0.25 s, quiet, for a
# few microseconds of work per parameter), and a CNN or an MLP draws only uniform values
# (kaiming_uniform_). A float32 uniform draw is integer arithmetic (threefry2x32 of the key
# and the counter) and then correctly rounded float operations (a bit pattern's mantissa, a
# subtraction, `x * (b - a) + a`, a maximum), so NumPy gives XLA's values bit for bit
# (tests/test_random_chunks.py compares them) once it rounds `x * (b - a) + a` as XLA does:
# XLA:CPU contracts it into one fused multiply-add with its default emitters and not with
# others, so a probe program of one multiply-add says which (`_multiply_add`). Normal draws
# go through erf_inv, whose polynomial NumPy would round differently, and float64 draws
# (whose fused multiply-add NumPy has no exact form for) stay the chunk program's. NumPy's
# threefry costs ~1.5 ms per 65536 values against XLA's few microseconds, so only draws of at
# most HOST_MAX values, and HOST_VALUES values per process (counted, not timed: which path
# a draw takes never depends on the machine's speed), on a CPU device.
HOST_MAX = 1 << 20
HOST_SMALL = 1 << 13  # a draw NumPy makes even where the chunk program is at hand
HOST_VALUES = 1 << 22
_host_drawn = [0]


def _host_eligible(n, np_dtype, key, offset, a, b) -> bool:
    """Whether NumPy may draw the bits of these n values (then counted in its budget)."""
    from . import _host_tier
    from ._host_put import _single_process

    return not (n > HOST_MAX or _host_drawn[0] + n > HOST_VALUES or not _host_tier.ON[0]
                or np.dtype(np_dtype) != np.float32
                or not isinstance(offset, (int, np.integer))
                or not isinstance(key, jax.Array) or isinstance(key, jax.core.Tracer)
                or str(key.dtype) != "key<fry>" or key.shape != ()
                or any(d.platform != "cpu" for d in key.devices())
                or not isinstance(a, (int, float)) or not isinstance(b, (int, float))
                or not _single_process())  # (as the host tier: a job's ranks stay XLA's)


def _host_bits(n, key, offset):
    """The 32 random bits of each of the draw's first n values (the chunk key's `_bits`)."""
    from . import _numpy_random, _random

    _host_drawn[0] += n
    words = _random.fold_in(tuple(int(w) for w in np.asarray(jax.random.key_data(key))),
                            int(offset))
    with np.errstate(over="ignore"):
        b1, b2 = _numpy_random._threefry2x32(np.uint32(words[0]), np.uint32(words[1]),
                                             np.zeros(n, np.uint32), np.arange(n, dtype=np.uint32))
    return b1 ^ b2


def _host_uniform(n, np_dtype, key, offset, a, b):
    """The draw's n values computed with NumPy, or None (the chunk program makes them)."""
    if not _host_eligible(n, np_dtype, key, offset, a, b):
        return None
    multiply_add = _multiply_add(repr(sorted((_programs.compiler_options or {}).items())))
    if multiply_add is None:
        return None
    bits = _host_bits(n, key, offset)
    floats = ((bits >> np.uint32(9)) | np.uint32(0x3F800000)).view(np.float32)
    floats = floats - np.float32(1.0)
    lo, hi = np.float32(a), np.float32(b)
    return np.maximum(lo, multiply_add(floats, hi - lo, lo))


# -- float32 normal draws: NumPy's bits, XLA's transform ---------------------------------------
# A normal value goes through erf_inv (a log1p and two polynomials), which NumPy would round
# otherwise than XLA does. So NumPy draws only the bits (integer arithmetic, exact), and a
# small program runs JAX's own `normal` on them: a PRNG implementation whose key IS a chunk's
# bits hands them to jax.random.normal unchanged, so the values are those of the chunk program
# bit for bit, with nothing of normal's transform written here. That program has no threefry
# in it: measured, 35 ms of lowering and 45-60 of compile against 45 and 160-200 for the chunk
# program (an Embedding's first draw, on the cold step's path); loaded from the program cache
# it is a 155-line module against 570.
# Within the NumPy draws' budget (HOST_VALUES a process, HOST_MAX a draw), as uniform ones:
# NumPy's bits cost ~11 ns a value and the program's run ~5 ns, so a model of 4 million
# normal values (minGPT's chargpt draws 2.7 million) saves the chunk program's compile cold
# (~0.2 s) and spends ~20 ms more than its load and runs warm.


def _given_bits(key, bit_width, shape):
    if bit_width != 32 or tuple(shape) != (CHUNK,):
        raise NotImplementedError("a bits key gives one chunk of 32-bit words")
    return key


@functools.lru_cache(maxsize=1)
def _bits_impl():
    return define_prng_impl(key_shape=(CHUNK,), seed=_never, split=_never,
                            random_bits=_given_bits, fold_in=_never, name="torchjax_bits",
                            tag="tjb")


@functools.lru_cache(maxsize=8)
def _normal_program(np_dtype):
    def normal_of_bits(bits, a, b):  # (as the chunk program's normal, from given bits)
        k = jax.random.wrap_key_data(bits, impl=_bits_impl())
        return (a + b * jax.random.normal(k, (CHUNK,), np_dtype)).astype(np_dtype)
    return _programs.jit(normal_of_bits)


def _host_normal(n, np_dtype, key, offset, a, b):
    """The draw's n normal values from NumPy's bits and the small transform program, or None
    (the chunk program makes them)."""
    if not _host_eligible(n, np_dtype, key, offset, a, b):
        return None
    whole = _whole_chunks(_host_bits(n, key, offset))
    run = _normal_program(np.dtype(np_dtype))
    return _joined([run(whole[s:s + CHUNK], a, b) for s in range(0, len(whole), CHUNK)], n)


def _fma32(x, y, z):
    """x * y + z rounded once to float32, as a fused multiply-add rounds it (float32 arrays
    x, scalars y and z). The product is exact in float64 (2 x 24 bits) and the float64 sum
    rounds to float32 as the exact value does, except where it is itself a float32 tie (a
    float32 midpoint is a float64 number, and rounding to float64 keeps each value on its
    side of it or puts it on it): only those values, and those below float32's normal range
    (where that test does not hold), take `_fma32_ties`. (All of them took it before: 115 ms
    for a million values against ~10.)"""
    s = x.astype(np.float64) * np.float64(y) + np.float64(z)
    r = s.astype(np.float32)
    odd = ((s.view(np.uint64) & np.uint64(0x1FFFFFFF)) == np.uint64(0x10000000)) | (
        np.abs(s) < np.float64(2.0 ** -125))
    if odd.any():
        at = np.nonzero(odd)
        r[at] = _fma32_ties(x[at], y, z)
    return r


def _fma32_ties(x, y, z):
    """_fma32 of every value: where the float64 sum made an exact float32 tie, the error the
    float64 sum dropped (TwoSum) decides the side."""
    p = x.astype(np.float64) * np.float64(y)
    z = np.float64(z)
    s = p + z
    v = s - p
    err = (p - (s - v)) + (z - v)
    r = s.astype(np.float32)
    d = s - r.astype(np.float64)
    other = np.nextafter(r, np.where(d > 0, np.float32(np.inf), np.float32(-np.inf)))
    tie = (d != 0) & (s == (r.astype(np.float64) + other.astype(np.float64)) / 2)
    return np.where(tie & (err != 0) & (np.sign(err) == np.sign(d)), other, r)


def _mul_add32(x, y, z):
    """x * y + z with the product and the sum each rounded to float32."""
    return x * np.float32(y) + np.float32(z)


# the probe: x * y is 2**-24 * (1 - 2**-46), so z + x * y lies just under a float32 tie:
# rounded once it is 1 + 2**-23, rounded twice (product, then sum) 1 + 2**-22
_PROBE = (np.array([2 ** -24 * (1 + 2 ** -23), 0.3], np.float32), np.float32(1 - 2 ** -23),
          np.float32(1 + 2 ** -23))


def _probe(x, y, z):
    return x * y + z


@functools.lru_cache(maxsize=8)
def _multiply_add(options_key):
    """How XLA:CPU rounds `x * y + z` under these compile options (`_fma32` or `_mul_add32`),
    from one small program; None when it matches neither."""
    with jax.default_device(jax.local_devices(backend="cpu")[0]):
        got = np.asarray(_programs.jit(_probe)(*_PROBE))
    for fn in (_fma32, _mul_add32):
        if np.array_equal(fn(*_PROBE).view(np.uint32), got.view(np.uint32)):
            return fn
    return None
