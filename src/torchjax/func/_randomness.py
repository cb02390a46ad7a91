"""vmap's randomness modes ('error', 'same', 'different') over torchjax's global RNG.

Every random op takes its key from `_random.key_parts`. While a vmap traces its function, that
call is routed through the active vmap levels:
- 'error' raises PyTorch's error;
- 'same' leaves the key alone: the key is not batched, so every batch element draws the same
  values (the key is a constant of the vmapped function);
- 'different' folds the vmapped index (a batched tracer) into the key, so the key, and with
  it each draw, becomes batched: one independent stream per batch element.
The generator's offset still advances once per op, so draws after the vmap are fresh.
"""

from __future__ import annotations

import contextlib
import threading

import jax

from .. import _random

RANDOMNESS_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
    "of vmap")


def check_randomness_arg(randomness) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


class _Levels(threading.local):
    def __init__(self):
        self.stack = []  # (mode, batched index tracer or None), outermost first


_LEVELS = _Levels()


def _adjust(parts):
    """_random.KEY_HOOK while a vmap level is active."""
    stack = _LEVELS.stack
    if not stack:
        return parts
    if any(mode == "error" for mode, _ in stack):
        raise RuntimeError(RANDOMNESS_ERROR)
    key, offset = parts
    for mode, index in stack:
        if mode == "different":
            key = jax.random.fold_in(key, index)
    return key, offset


@contextlib.contextmanager
def level(mode: str, index=None):
    """Mark a vmap level as active while its function is traced."""
    _LEVELS.stack.append((mode, index))
    _random.KEY_HOOK = _adjust
    try:
        yield
    finally:
        _LEVELS.stack.pop()


def needs_index(mode: str) -> bool:
    return mode == "different"


@contextlib.contextmanager
def same_across_chunks(mode: str):
    """Chunked vmap with 'same': each chunk starts from the same generator state, so every
    chunk draws what one unchunked call would (PyTorch resets the RNG state the same way)."""
    if mode != "same":
        yield lambda: None
        return
    gen = _random.default_generator
    saved = (gen._seed, gen._offset)

    def reset():
        gen._seed, gen._offset = saved
        gen._key = None
    yield reset
