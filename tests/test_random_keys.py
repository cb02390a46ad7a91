"""The generator's key arithmetic done on the host (_random.threefry2x32, seed_key, fold_in)
must be jax.random's, bit for bit: every random number torchjax draws depends on it."""

import random

import jax
import numpy as np

import torchjax
from torchjax import _random
from torchjax._x64 import scope

_SEEDS = [0, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63, 2**64 - 1, 67280421310721]


def _jax_words(key):
    return tuple(int(v) for v in jax.random.key_data(key))


def test_host_keys_match_jax_random_for_many_seeds():
    rng = random.Random(12)
    seeds = _SEEDS + [rng.getrandbits(64) for _ in range(100)]
    with scope():  # the generator makes its keys under torchjax's x64 scope
        for s in seeds:
            base = jax.random.fold_in(jax.random.key(s & 0xFFFFFFFF), s >> 32)
            words = _random.fold_in(_random.seed_key(s & 0xFFFFFFFF), s >> 32)
            assert words == _jax_words(base), s
            for off in (0, 1, rng.getrandbits(32)):
                assert _random.fold_in(words, off) == _jax_words(jax.random.fold_in(base, off))


def test_generator_draws_match_the_jax_key_path(monkeypatch):
    def draws():
        g = torchjax.Generator().manual_seed(2**40 + 7)
        keys = [g.next_key() for _ in range(3)]
        return [_jax_words(k) for k in keys], torchjax.randn(5, generator=g).numpy()

    host = draws()
    monkeypatch.setattr(_random, "_host_keys", lambda: False)
    assert draws()[0] == host[0]
    np.testing.assert_array_equal(draws()[1], host[1])


def test_first_draw_compiles_no_key_program():
    g = torchjax.Generator().manual_seed(123)
    before = torchjax.compile_stats()
    g._base_key()
    g.next_key()
    after = torchjax.compile_stats()
    assert after.traced == before.traced and after.compiled == before.compiled
