"""Dropout and its variants (feature, alpha): noise drawn from torchjax's generator, one
tape node per multiply (and add, for alpha dropout) as in PyTorch."""

from __future__ import annotations

import functools
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ... import _chunk_draws, _dtypes, _programs, _random
from ..._tensor import Tensor
from ..._x64 import scope, scoped

__all__ = ["dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d",
           "dropout3d"]


# SELU's alpha: alpha dropout keeps zero mean and unit variance for SELU activations
_ALPHA = 1.7580993408473766


def _check_p(p) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise_of(u, p, shape, np_dtype, alpha: bool):
    """The multiplier (and for alpha dropout the shift) that PyTorch builds in the input's
    dtype from uniforms u: keep ~ Bernoulli(1 - p) as u < 1 - p, then keep / (1 - p), or for
    alpha dropout keep * a and (keep - 1) * alpha * a + alpha * a * p. Each of its steps
    computes in float32 for half types and rounds to the dtype, as PyTorch's CPU kernels do."""
    dt = np.dtype(np_dtype)
    ct = _compute_dtype(dt)

    def rounded(v):
        return v.astype(dt).astype(ct)

    keep = (u.reshape(shape) < 1 - p).astype(ct)
    if not alpha:
        return (keep / (1 - p)).astype(dt)
    a = 1 / jnp.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    shift = rounded(rounded(rounded(keep - 1) * (_ALPHA * a)) + _ALPHA * a * p)
    return (keep * a).astype(dt), shift.astype(dt)


def _compute_dtype(dt):
    """The uniforms' dtype: float32 for half types, else the input's."""
    return np.dtype(np.float32) if dt.itemsize < 4 else dt


@functools.lru_cache(maxsize=256)
def _noise_kernel(shape: tuple, np_dtype, alpha: bool):
    """A jitted f(key, offset, p) giving the noise (_noise_of) of one shape: its own draw."""
    ct = _compute_dtype(np.dtype(np_dtype))

    def f(key, offset, p):
        u = jax.random.uniform(jax.random.fold_in(key, offset), shape, ct)
        return _noise_of(u, p, shape, np_dtype, alpha)

    return _programs.jit(f)


@functools.lru_cache(maxsize=256)
def _noise_from_chunks(shape: tuple, np_dtype, alpha: bool):
    """A jitted f(chunks, p): the same noise as _noise_kernel's, bit for bit, from the first
    values of the chunk program's uniforms for the same key (_chunk_draws)."""
    n = math.prod(shape)

    def f(chunks, p):
        u = chunks[0] if len(chunks) == 1 else jnp.concatenate(chunks)
        return _noise_of(u[:n], p, shape, np_dtype, alpha)

    # (a seed's dropout masks are the same at every call: the host tier may evaluate the
    # plain noise, a comparison and a division, which NumPy rounds as XLA does; alpha
    # dropout's multiply-and-add XLA fuses into one rounding, so it stays XLA's: exact)
    return _programs.jit(f, exact=alpha)


# Kinds of noise (shape, dtype, alpha) met so far. A kind's first draw compiles its kernel on
# another thread (threefry's 20 rounds: ~0.15 s of XLA compile, the largest program of a small
# model's forward) and meanwhile takes its uniforms from the chunk program that drew the
# model's parameters, which a small program turns into the noise; later draws wait for the
# kernel if it is not made yet. Both give the same bits (tests/nn/test_dropout.py).
_kinds: set = set()
_CHUNKED_MAX = 16 * _chunk_draws.CHUNK  # beyond this many values, chunk calls cost more


def _noise(shape: tuple, np_dtype, alpha: bool, key, offset, p):
    kernel = _noise_kernel(shape, np_dtype, alpha)
    kind = (shape, np_dtype, alpha)
    if kind in _kinds:
        return kernel(key, offset, p)
    if len(_kinds) >= 4096:
        _kinds.clear()
    _kinds.add(kind)
    n = math.prod(shape)
    if n <= _CHUNKED_MAX and _programs.compile_soon(kernel, (key, offset, p), "dropout noise",
                                                    scope):
        chunks = _chunk_draws.device_uniforms(n, _compute_dtype(np.dtype(np_dtype)), key,
                                              offset)
        if chunks is not None:
            return _noise_from_chunks(shape, np_dtype, alpha)(chunks, p)
    return kernel(key, offset, p)


def _noise_shape(shape, feature: bool, batched: bool) -> tuple:
    """Elementwise noise, or one draw per (sample, channel) for feature dropout; an unbatched
    input is treated as a batch of one."""
    if not feature:
        return tuple(shape)
    full = tuple(shape) if batched else (1,) + tuple(shape)
    if len(full) < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    noise = full[:2] + (1,) * (len(full) - 2)
    return noise if batched else noise[1:]


@scoped  # the noise is drawn in the input's dtype, float64 included
def _dropout_impl(input: Tensor, p, train, inplace, feature=False, alpha=False, batched=True):
    """input * noise (+ shift for alpha dropout), one tape node each as in PyTorch; the input
    itself when there is nothing to drop."""
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = Tensor._wrap(jnp.zeros((), input._data.dtype))
        return input.mul_(zero) if inplace else input * zero
    shape = _noise_shape(input.shape, feature, batched)
    if not input.is_floating_point():
        # PyTorch divides the Bernoulli draw in place, in the input's dtype
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_dtypes.SCALAR_NAMES[input.dtype.name]}")
    key, offset = _random.key_parts(None)
    noise = _noise(shape, input._data.dtype, alpha, key, offset, float(p))
    scale, shift = noise if alpha else (noise, None)
    scale = Tensor._wrap(scale)
    out = input.mul_(scale) if inplace else input * scale
    if alpha:
        shift = Tensor._wrap(shift)
        out = out.add_(shift) if inplace else out + shift
    return out


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p) (training only)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU's zero mean and unit variance (training only)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, alpha=True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """alpha_dropout of whole channels (dim 1)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=True)


def _unbatched_feature_dropout(input, p, training, inplace):
    """Feature dropout of an input without its batch dim. Out of place it runs on
    input.unsqueeze(0) as PyTorch does (so the result's grad_fn is PyTorch's); in place the
    noise is drawn for a batch of one and applied to input itself."""
    if inplace:
        return _dropout_impl(input, p, training, True, feature=True, batched=False)
    return _dropout_impl(input.unsqueeze(0), p, training, False, feature=True).squeeze(0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) input."""
    _check_p(p)
    d = input.dim()
    if d not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {d}D input. Note that dropout1d "
            "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
            "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if d == 2:
        return _unbatched_feature_dropout(input, p, training, inplace)
    return _dropout_impl(input, p, training, inplace, feature=True)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels (dim 1). A 3-d input is taken as (N, C, L), as PyTorch still does."""
    _check_p(p)
    d = input.dim()
    if d not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {d}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if d == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _dropout_impl(input, p, training, inplace, feature=True)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input."""
    _check_p(p)
    d = input.dim()
    if d not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {d}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    if d != 5:
        return _unbatched_feature_dropout(input, p, training, inplace)
    return _dropout_impl(input, p, training, inplace, feature=True)
