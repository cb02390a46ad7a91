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
        seed = int(seed)
        self._seed = seed & 0xFFFF_FFFF_FFFF_FFFF
        self._offset = 0
        self._key = None
        return self

    def seed(self) -> int:
        s = int(time.time_ns()) & 0xFFFF_FFFF_FFFF
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        from ._tensor import Tensor
        raw = np.array([self._seed, self._offset], dtype=np.uint64).view(np.uint8)
        return Tensor._wrap(jax.numpy.asarray(raw))

    def set_state(self, state) -> Generator:
        raw = np.asarray(state.numpy() if hasattr(state, "numpy") else state, dtype=np.uint8)
        if raw.size != 16:
            raise RuntimeError("RNG state must be a torch.ByteTensor of 16 bytes")
        seed, offset = raw.view(np.uint64)
        self._seed, self._offset, self._key = int(seed), int(offset), None
        return self

    def _base_key(self):
        if self._key is None:
            # fold the 64-bit seed in as two 32-bit halves so every seed bit matters; made
            # concretely even inside a trace (torchjax.compile, func), since it is cached, and
            # in torchjax's x64 scope wherever it is first needed (the key stays the same)
            with jax.ensure_compile_time_eval(), scope():
                k = jax.random.key(self._seed & 0xFFFFFFFF)
                self._key = jax.random.fold_in(k, self._seed >> 32)
        return self._key

    def next_key(self):
        """A fresh key for one random op (advances the offset)."""
        k = jax.random.fold_in(self._base_key(), self._offset)
        self._offset += 1
        return k

    def _next_key_parts(self):
        """(base key, offset) for ops that fold inside their own jitted call."""
        off = self._offset
        self._offset += 1
        return self._base_key(), np.uint32(off & 0xFFFFFFFF)


default_generator = Generator()


def manual_seed(seed) -> Generator:
    """Seed the default generator (as torch.manual_seed)."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state) -> None:
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
