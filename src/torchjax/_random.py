"""Random state: torchjax.Generator and the global default generator, backed by JAX keys.

Like PyTorch's Philox generators, a Generator is a (seed, offset) pair. Each random op takes
the key `fold_in(key(seed), offset)` and advances the offset, so the state is two integers,
cheap to save, restore and thread through a compiled program.
"""

from __future__ import annotations

import time

import jax
import numpy as np

from . import _device
from ._x64 import scope

_DEFAULT_SEED = 67280421310721  # PyTorch's default seed


class Generator:
    """A source of random numbers: `manual_seed`, `seed`, `initial_seed`, `get_state`."""

    def __init__(self, device="cpu"):
        self.device = _device.device(device)
        self._seed = _DEFAULT_SEED
        self._offset = 0
        self._key = None

    def manual_seed(self, seed) -> Generator:
        """Seeds the generator with `seed` (kept modulo `2**64`) and restarts its stream; returns the
        generator.
        """
        seed = int(seed)
        self._seed = seed & 0xFFFF_FFFF_FFFF_FFFF
        self._offset = 0
        self._key = None
        return self

    def seed(self) -> int:
        """Seeds the generator from the clock and returns the seed used."""
        s = int(time.time_ns()) & 0xFFFF_FFFF_FFFF
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed the generator was last seeded with."""
        return self._seed

    def get_state(self):
        """The generator's state (seed and position in the stream) as a uint8 tensor of 16 bytes,
        for `set_state`.
        """
        from ._tensor import Tensor
        raw = np.array([self._seed, self._offset], dtype=np.uint64).view(np.uint8)
        return Tensor._wrap(jax.numpy.asarray(raw))

    def set_state(self, state) -> Generator:
        """Restores a state returned by `get_state`; returns the generator."""
        raw = np.asarray(state.numpy() if hasattr(state, "numpy") else state, dtype=np.uint8)
        if raw.size != 16:
            raise RuntimeError("RNG state must be a torch.ByteTensor of 16 bytes")
        seed, offset = raw.view(np.uint64)
        self._seed, self._offset, self._key = int(seed), int(offset), None
        return self

    def _base_key(self):
        if self._key is None:
            # fold the 64-bit seed in as two 32-bit halves so every seed bit matters; made
            # concretely even inside a trace (torchjax.compile, func), since it is cached
            if _host_keys():
                self._key = _wrap(self._words())
            else:  # another PRNG implementation: JAX's own key programs
                with jax.ensure_compile_time_eval(), scope():
                    k = jax.random.key(self._seed & 0xFFFFFFFF)
                    self._key = jax.random.fold_in(k, self._seed >> 32)
        return self._key

    def _words(self) -> tuple[int, int]:
        """The base key's two words, computed on the host (see threefry2x32 below)."""
        return fold_in(seed_key(self._seed & 0xFFFFFFFF), self._seed >> 32)

    def next_key(self):
        """A fresh key for one random op (advances the offset)."""
        base = self._base_key()
        if _host_keys():
            k = _wrap(fold_in(self._words(), self._offset))
        else:
            k = jax.random.fold_in(base, self._offset)
        self._offset += 1
        return k

    def _next_key_parts(self):
        """(base key, offset) for ops that fold inside their own jitted call."""
        off = self._offset
        self._offset += 1
        return self._base_key(), np.uint32(off & 0xFFFFFFFF)


# -- threefry's key arithmetic on the host ------------------------------------------------------
# jax.random.key and fold_in are four small XLA programs (stage, _threefry_seed,
# convert_element_type, _threefry_fold_in) compiled when the first random number is drawn,
# for a few integer operations on two 32-bit words. The same arithmetic in Python integers,
# bit for bit (tests/test_random_keys.py checks it against jax.random for many seeds): JAX's
# threefry2x32 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", 2011) with its
# 20 rounds, and its seeding (threefry_seed) of a 64-bit integer as (high word, low word).

_M32 = 0xFFFFFFFF
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _rotl(v: int, d: int) -> int:
    return ((v << d) | (v >> (32 - d))) & _M32


def threefry2x32(key: tuple[int, int], x: tuple[int, int]) -> tuple[int, int]:
    """Threefry-2x32 of one pair of words (what jax's threefry_2x32 does per pair)."""
    ks = (key[0], key[1], key[0] ^ key[1] ^ 0x1BD11BDA)
    x0, x1 = (x[0] + ks[0]) & _M32, (x[1] + ks[1]) & _M32
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = (x0 + x1) & _M32
            x1 = _rotl(x1, r) ^ x0
        x0 = (x0 + ks[(i + 1) % 3]) & _M32
        x1 = (x1 + ks[(i + 2) % 3] + i + 1) & _M32
    return x0, x1


def seed_key(seed: int) -> tuple[int, int]:
    """jax.random.key(seed)'s words for a 64-bit seed (under x64)."""
    seed &= 0xFFFF_FFFF_FFFF_FFFF
    return seed >> 32, seed & _M32


def fold_in(key: tuple[int, int], data: int) -> tuple[int, int]:
    """jax.random.fold_in(key, data)'s words (data taken as uint32, as jax does)."""
    return threefry2x32(key, seed_key(data & _M32))


def _host_keys() -> bool:
    impl = jax.config.jax_default_prng_impl
    return impl == "threefry2x32"


def _wrap(words: tuple[int, int]):
    # wrap_key_data puts two words on the device without compiling a program; a concrete
    # key even inside a trace (torchjax.compile), where the generator keeps it for later
    with jax.ensure_compile_time_eval():
        return jax.random.wrap_key_data(np.array(words, dtype=np.uint32), impl="threefry2x32")


default_generator = Generator()


def manual_seed(seed) -> Generator:
    """Seed the default generator (as torch.manual_seed)."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seeds the default generator from a non-deterministic source and returns the seed.

    See https://pytorch.org/docs/stable/random.html#torch.random.seed.
    """
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with.

    See https://pytorch.org/docs/stable/random.html#torch.random.initial_seed.
    """
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state, as a uint8 tensor (JAX's key and counter, not PyTorch's Mersenne Twister state).

    See https://pytorch.org/docs/stable/random.html#torch.random.get_rng_state.
    """
    return default_generator.get_state()


def set_rng_state(state) -> None:
    """Restores a state returned by `get_rng_state`.

    See https://pytorch.org/docs/stable/random.html#torch.random.set_rng_state.
    """
    default_generator.set_state(state)


# While torchjax.func.vmap traces a function, it routes every draw's (key, offset) through
# its randomness mode ('error' raises, 'different' folds the batch index into the key).
KEY_HOOK = None
# While torchjax.compile traces a step, DRAW_HOOK(generator, parts) turns the draw's key and
# offset into values the compiled program takes as inputs, so each call draws anew instead of
# replaying the mask the trace saw.
DRAW_HOOK = None


def key_parts(generator: Generator | None):
    gen = generator or default_generator
    parts = gen._next_key_parts()
    if DRAW_HOOK is not None:
        parts = DRAW_HOOK(gen, parts)
    return parts if KEY_HOOK is None else KEY_HOOK(parts)
