"""Transforms onto structured sets: the simplex (softmax, stick-breaking), lower Cholesky
factors, positive-definite matrices and Cholesky factors of correlation matrices.

Each map is a pure JAX function run as one op (`_jax.kernel`), so a transform costs one
compiled program per shape rather than one per tensor operation.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

import torchjax as torch

from .. import constraints
from .._jax import clamp, kernel
from ._base import Transform


def _need_dims(shape, n: int):
    if len(shape) < n:
        raise ValueError("Too few dimensions on input")
    return shape


def _pad_last(x, before: int, after: int, value=1.0):
    return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(before, after)], constant_values=value)


def _clipped_sigmoid(x):
    info = jnp.finfo(x.dtype)
    return clamp(jax.nn.sigmoid(x), info.tiny, 1.0 - info.eps)


@kernel("SoftmaxTransform")
def _softmax(x):
    e = jnp.exp(x - jax.lax.stop_gradient(x.max(-1, keepdims=True)))
    return e / e.sum(-1, keepdims=True)


def _stick_offset(k: int, dtype):
    """log(k, k-1, ..., 1): centres the stick-breaking fractions so x = 0 maps to the
    uniform point of the simplex."""
    return jnp.log(k - jnp.arange(k, dtype=dtype))


@kernel("StickBreakingTransform")
def _stick_forward(x):
    z = _clipped_sigmoid(x - _stick_offset(x.shape[-1], x.dtype))
    left = jnp.cumprod(1 - z, -1)
    return _pad_last(z, 0, 1) * _pad_last(left, 1, 0)


@kernel("StickBreakingTransformInverse")
def _stick_inverse(y):
    head = y[..., :-1]
    rest = jnp.maximum(1 - jnp.cumsum(head, -1), jnp.finfo(y.dtype).tiny)
    return jnp.log(head) - jnp.log(rest) + _stick_offset(head.shape[-1], y.dtype)


@kernel("StickBreakingLogAbsDetJacobian")
def _stick_ladj(x, y):
    x = x - _stick_offset(x.shape[-1], x.dtype)
    return (-x + jax.nn.log_sigmoid(x) + jnp.log(y[..., :-1])).sum(-1)


@kernel("LowerCholeskyTransform")
def _lower_cholesky(x):
    n = x.shape[-1]
    return jnp.tril(x, -1) + jnp.exp(jnp.diagonal(x, 0, -2, -1))[..., None] * jnp.eye(n, dtype=x.dtype)


@kernel("LowerCholeskyTransformInverse")
def _lower_cholesky_inverse(y):
    n = y.shape[-1]
    return jnp.tril(y, -1) + jnp.log(jnp.diagonal(y, 0, -2, -1))[..., None] * jnp.eye(n, dtype=y.dtype)


@kernel("PositiveDefiniteTransform")
def _positive_definite(x):
    n = x.shape[-1]
    low = jnp.tril(x, -1) + jnp.exp(jnp.diagonal(x, 0, -2, -1))[..., None] * jnp.eye(n, dtype=x.dtype)
    return low @ jnp.swapaxes(low, -1, -2)


@kernel("PositiveDefiniteTransformInverse")
def _positive_definite_inverse(y):
    n = y.shape[-1]
    low = jnp.linalg.cholesky(y)
    return jnp.tril(low, -1) + jnp.log(jnp.diagonal(low, 0, -2, -1))[..., None] * jnp.eye(n, dtype=y.dtype)


def _tril_index(n: int, diag: int):
    return np.tril_indices(n, k=diag)


def _vec_to_tril(vec, n: int, diag: int):
    rows, cols = _tril_index(n, diag)
    mat = jnp.zeros(vec.shape[:-1] + (n, n), vec.dtype)
    return mat.at[..., rows, cols].set(vec)


def _tril_to_vec(mat, diag: int):
    rows, cols = _tril_index(mat.shape[-1], diag)
    return mat[..., rows, cols]


def _corr_size(m: int) -> int:
    """D with D (D - 1) / 2 == m."""
    d = round((0.25 + 2 * m) ** 0.5 + 0.5)
    if d * (d - 1) // 2 != m:
        raise ValueError("Input is not a flattened lower-diagonal number")
    return d


@kernel("CorrCholeskyTransform")
def _corr_forward(x):
    eps = jnp.finfo(x.dtype).eps
    n = _corr_size(x.shape[-1])
    r = _vec_to_tril(clamp(jnp.tanh(x), -1 + eps, 1 - eps), n, -1)
    # row i keeps sqrt(1 - sum of the squares before it) of the unit norm for each entry
    left = jnp.cumprod(jnp.sqrt(1 - r**2), -1)
    return (r + jnp.eye(n, dtype=x.dtype)) * _pad_last(left[..., :-1], 1, 0)


@kernel("CorrCholeskyTransformInverse")
def _corr_inverse(y):
    used = _pad_last((1 - jnp.cumsum(y * y, -1))[..., :-1], 1, 0)
    t = _tril_to_vec(y, -1) / jnp.sqrt(_tril_to_vec(used, -1))
    return (jnp.log1p(t) - jnp.log1p(-t)) / 2


@kernel("CorrCholeskyLogAbsDetJacobian")
def _corr_ladj(x, y):
    left = _tril_to_vec(1 - jnp.cumsum(y * y, -1), -2)
    stick = 0.5 * jnp.log(left).sum(-1)
    tanh = -2 * (x + jax.nn.softplus(-2 * x) - math.log(2.0)).sum(-1)
    return stick + tanh


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last dim. Not bijective (adding a constant to x gives the same
    y): its inverse returns log(y), one of the preimages."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return _softmax(x)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        """The shape of the output for an input of shape `shape`."""
        return _need_dims(shape, 1)

    def inverse_shape(self, shape):
        """The shape of the input that gives an output of shape `shape`."""
        return _need_dims(shape, 1)


class StickBreakingTransform(Transform):
    """A bijection from R^k onto the interior of the (k+1)-simplex: each coordinate, through
    a sigmoid, takes a fraction of the stick that is left."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return _stick_forward(x)

    def _inverse(self, y):
        return _stick_inverse(y)

    def log_abs_det_jacobian(self, x, y):
        """log |det J| of the transform at input `x` with output `y`, with the event dimensions
        summed out.
        """
        return _stick_ladj(x, y)

    def forward_shape(self, shape):
        """The shape of the output for an input of shape `shape`."""
        _need_dims(shape, 1)
        return torch.Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        """The shape of the input that gives an output of shape `shape`."""
        _need_dims(shape, 1)
        return torch.Size(tuple(shape[:-1]) + (shape[-1] - 1,))


class LowerCholeskyTransform(Transform):
    """Any square matrix to a lower-triangular one with a positive diagonal: keep the
    strictly lower part, exponentiate the diagonal."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return _lower_cholesky(x)

    def _inverse(self, y):
        return _lower_cholesky_inverse(y)


class PositiveDefiniteTransform(Transform):
    """Any square matrix to a positive-definite one: L L^T of its lower Cholesky transform."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return _positive_definite(x)

    def _inverse(self, y):
        return _positive_definite_inverse(y)


class CorrCholeskyTransform(Transform):
    """A vector of D(D-1)/2 reals to the Cholesky factor of a D x D correlation matrix:
    tanh maps each to (-1, 1), then stick-breaking fills each row to unit norm."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        return _corr_forward(x)

    def _inverse(self, y):
        return _corr_inverse(y)

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        """log |det J| of the transform at input `x` with output `y`, with the event dimensions
        summed out.
        """
        return _corr_ladj(x, y)

    def forward_shape(self, shape):
        """The shape of the output for an input of shape `shape`."""
        _need_dims(shape, 1)
        d = _corr_size(shape[-1])
        return torch.Size(tuple(shape[:-1]) + (d, d))

    def inverse_shape(self, shape):
        """The shape of the input that gives an output of shape `shape`."""
        _need_dims(shape, 2)
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return torch.Size(tuple(shape[:-2]) + (d * (d - 1) // 2,))
