"""NumPy rules (_numpy_eval) for JAX's random bits: Threefry-2x32 and its counters, and the
structural primitives applied to arrays of typed PRNG keys. All of it is integer arithmetic,
so a forked DataLoader worker draws the same bits XLA would."""

from __future__ import annotations

import math

import numpy as np

from ._numpy_eval import (
    _broadcast_in_dim,
    _concatenate,
    _dynamic_slice,
    _expand_dims,
    _reshape,
    _rev,
    _select_n,
    _slice,
    _squeeze,
    rule,
)


@rule("iota_2x32_shape")
def _iota_2x32_shape(*, shape, **_):
    """A row-major uint64 iota of `shape`, as its high and low 32-bit words."""
    count = np.arange(math.prod(shape), dtype=np.uint64).reshape(shape)
    return [(count >> np.uint64(32)).astype(np.uint32), count.astype(np.uint32)]


_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


@rule("threefry2x32")
def _threefry2x32(k1, k2, x1, x2, **_):
    """The Threefry-2x32 block cipher (20 rounds), as JAX's random bits use it."""
    k1, k2, x1, x2 = (np.asarray(a, np.uint32) for a in np.broadcast_arrays(k1, k2, x1, x2))
    ks = (k1, k2, k1 ^ k2 ^ np.uint32(0x1BD11BDA))
    with np.errstate(over="ignore"):
        # fresh arrays from here on, updated in place: a new array per operation made a
        # million values' bits (a model's init draws, _chunk_draws) take 20-30 ms, in place 11
        x1, x2 = np.asarray(x1 + ks[0]), np.asarray(x2 + ks[1])
        t = np.empty_like(x2)
        for i in range(5):
            for r in _ROTATIONS[i % 2]:
                x1 += x2
                np.left_shift(x2, np.uint32(r), out=t)
                x2 >>= np.uint32(32 - r)
                x2 |= t
                x2 ^= x1
            x1 += ks[(i + 1) % 3]
            x2 += ks[(i + 2) % 3] + np.uint32(i + 1)
    return [x1, x2]


# -- arrays of PRNG keys ------------------------------------------------------------------------
# Structural primitives applied to typed keys (splitting, indexing a key array) run on the
# keys' uint32 data, whose trailing dimensions (the key's own shape) they leave alone.

def _key_slice(x, *, start_indices, limit_indices, strides=None, tail, **_):
    strides = strides or (1,) * len(start_indices)
    return _slice(x, start_indices=(*start_indices, *(0,) * len(tail)),
                  limit_indices=(*limit_indices, *tail), strides=(*strides, *(1,) * len(tail)))


def _key_dynamic_slice(x, *starts, slice_sizes, tail, **_):
    return _dynamic_slice(x, *starts, *(0,) * len(tail), slice_sizes=(*slice_sizes, *tail))


def _key_reshape(x, *dyn, new_sizes, dimensions=None, tail, **_):
    return _reshape(x, *dyn, new_sizes=(*new_sizes, *tail), dimensions=None if dimensions
                    is None else (*dimensions, *range(len(dimensions), x.ndim)))


def _key_broadcast_in_dim(x, *dyn, shape, broadcast_dimensions, tail, **_):
    n = len(shape)
    return _broadcast_in_dim(x, *dyn, shape=(*shape, *tail), broadcast_dimensions=(
        *broadcast_dimensions, *range(n, n + len(tail))))


def _key_transpose(x, *, permutation, tail, **_):
    n = len(permutation)
    return np.transpose(x, (*permutation, *range(n, n + len(tail))))


def _key_select_n(which, *cases, tail, **_):
    return _select_n(np.reshape(which, which.shape + (1,) * len(tail)), *cases)


def _key_same(rule_fn):
    return lambda *xs, tail, **params: rule_fn(*xs, **params)


_KEY_RULES = {
    "slice": _key_slice, "dynamic_slice": _key_dynamic_slice, "reshape": _key_reshape,
    "broadcast_in_dim": _key_broadcast_in_dim, "transpose": _key_transpose,
    "select_n": _key_select_n, "squeeze": _key_same(_squeeze),
    "expand_dims": _key_same(_expand_dims), "concatenate": _key_same(_concatenate),
    "rev": _key_same(_rev), "copy": _key_same(np.array), "copy_p": _key_same(np.array),
}


def _on_keys(name, invals, params):
    """`name` applied to arrays of typed keys, or None when no input is one."""
    keys = [v for v in invals if hasattr(v, "_base_array")]
    if not keys or name not in _KEY_RULES:  # random_* primitives evaluate themselves
        return None
    from jax._src.random import prng
    impl = keys[0]._impl
    data = [np.asarray(v._base_array) if hasattr(v, "_base_array") else v for v in invals]
    out = _KEY_RULES[name](*data, tail=tuple(impl.key_shape), **params)
    return prng.PRNGKeyArray(impl, np.asarray(out))
