"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.scipy.linalg import solve_triangular

import torchjax as torch

from . import constraints
from ._jax import float_dtype, kernel, sampler
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]

_LOG_2PI = math.log(2 * math.pi)


def mahalanobis(L, x):
    """|L^-1 x|^2 over the last dim, broadcasting L's batch dims against x's (pure JAX)."""
    shape = jnp.broadcast_shapes(L.shape[:-2], x.shape[:-1])
    L = jnp.broadcast_to(L, shape + L.shape[-2:])
    x = jnp.broadcast_to(x, shape + x.shape[-1:])
    z = solve_triangular(L, x[..., None], lower=True)[..., 0]
    return (z * z).sum(-1)


def half_log_det(L):
    """log sqrt(det(L L^T)) for a lower-triangular L with a positive diagonal."""
    return jnp.log(jnp.diagonal(L, axis1=-2, axis2=-1)).sum(-1)


def mv(matrix, vector):
    return (matrix @ vector[..., None])[..., 0]


@sampler
def _mvn(key, shape, loc, scale_tril):
    eps = jax.random.normal(key, shape, float_dtype(loc, scale_tril))
    return loc + mv(scale_tril, eps)


@kernel("MultivariateNormalLogProb")
def _log_prob(value, loc, scale_tril):
    n = loc.shape[-1]
    m = mahalanobis(scale_tril, value - loc)
    return -0.5 * (n * _LOG_2PI + m) - half_log_det(scale_tril)


@kernel("MultivariateNormalEntropy")
def _entropy(scale_tril, batch_shape):
    n = scale_tril.shape[-1]
    h = 0.5 * n * (1.0 + _LOG_2PI) + half_log_det(scale_tril)
    return jnp.broadcast_to(h, batch_shape)


@kernel("PrecisionToScaleTril")
def _precision_to_scale_tril(precision):
    # Reversing rows and columns, factoring, and reversing back gives P = U U^T with U upper
    # triangular. Then the covariance P^-1 = (U^T)^-1 (U^T)^-T, so the scale_tril is the
    # inverse of the lower-triangular U^T: no matrix inverse of P is ever formed.
    flipped = jnp.linalg.cholesky(jnp.flip(precision, (-2, -1)))
    u_t = jnp.swapaxes(jnp.flip(flipped, (-2, -1)), -2, -1)
    eye = jnp.broadcast_to(jnp.eye(precision.shape[-1], dtype=precision.dtype),
                           precision.shape)
    return solve_triangular(u_t, eye, lower=True)


@kernel("CholeskyInverse")
def _cholesky_inverse(scale_tril):
    eye = jnp.broadcast_to(jnp.eye(scale_tril.shape[-1], dtype=scale_tril.dtype),
                           scale_tril.shape)
    inv_l = solve_triangular(scale_tril, eye, lower=True)
    return jnp.swapaxes(inv_l, -2, -1) @ inv_l


class MultivariateNormal(Distribution):
    """A Gaussian over vectors, given by exactly one of its covariance matrix, its precision
    matrix, or the lower Cholesky factor of its covariance (`scale_tril`).

    Example::

        >>> m = MultivariateNormal(torch.zeros(2), torch.eye(2))
        >>> m.sample()  # a vector of length 2
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        batch_shape = torch.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        # validate before factoring, so a matrix that is not positive definite gets the
        # constraint's message rather than the factorisation's
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape, _instance=None):
        """A new MultivariateNormal whose batch shape is `batch_shape`, with the parameters
        broadcast to it; `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(
            MultivariateNormal, batch_shape, _instance,
            {"loc": 1, "covariance_matrix": 2, "precision_matrix": 2, "scale_tril": 2})
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return self._finish_expand(new, batch_shape)

    def _matrix_shape(self):
        return tuple(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        """The lower-triangular Cholesky factor of the covariance, computed once."""
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        """The covariance matrix, with shape `batch_shape + (n, n)`, computed once."""
        low = self._unbroadcasted_scale_tril
        return (low @ low.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        """The precision matrix (inverse covariance), with shape `batch_shape + (n, n)`, computed
        once.
        """
        return _cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self.loc

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return self.loc

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return (self._unbroadcasted_scale_tril.pow(2).sum(-1)
                .expand(tuple(self._batch_shape + self._event_shape)))

    def rsample(self, sample_shape=()):
        """A reparameterised draw of shape `sample_shape + batch_shape + event_shape`: gradients
        flow from it back to the parameters. Randomness comes from torchjax's global generator.
        """
        return _mvn(self._extended_shape(sample_shape), self.loc,
                    self._unbroadcasted_scale_tril)

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(value, self.loc, self._unbroadcasted_scale_tril)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return _entropy(self._unbroadcasted_scale_tril, tuple(self._batch_shape))
