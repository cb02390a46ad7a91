"""LowRankMultivariateNormal(loc, cov_factor, cov_diag): covariance W W^T + diag(D)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.scipy.linalg import solve_triangular

import torchjax as torch

from . import constraints
from ._jax import float_dtype, kernel, sampler
from .distribution import Distribution
from .multivariate_normal import mahalanobis, mv
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]

_LOG_2PI = math.log(2 * math.pi)


def capacitance_tril(W, D):
    """Cholesky factor of the m x m capacitance matrix I + W^T D^-1 W (pure JAX)."""
    m = W.shape[-1]
    K = (jnp.swapaxes(W, -1, -2) / D[..., None, :]) @ W + jnp.eye(m, dtype=W.dtype)
    return jnp.linalg.cholesky(K)


def lowrank_logdet(D, C):
    """log det(W W^T + D) by the matrix determinant lemma, from the capacitance factor C."""
    return 2 * jnp.log(jnp.diagonal(C, axis1=-2, axis2=-1)).sum(-1) + jnp.log(D).sum(-1)


def lowrank_mahalanobis(W, D, x, C):
    """x^T (W W^T + D)^-1 x by the Woodbury identity."""
    wt_dinv = jnp.swapaxes(W, -1, -2) / D[..., None, :]
    return (x * x / D).sum(-1) - mahalanobis(C, mv(wt_dinv, x))


_capacitance = kernel("CapacitanceTril")(capacitance_tril)


@sampler
def _lowrank(key, shape, loc, W, D):
    dt = float_dtype(loc, W, D)
    k1, k2 = jax.random.split(key)
    eps_w = jax.random.normal(k1, tuple(shape[:-1]) + (W.shape[-1],), dt)
    eps_d = jax.random.normal(k2, shape, dt)
    return loc + mv(W, eps_w) + jnp.sqrt(D) * eps_d


@kernel("LowRankMultivariateNormalLogProb")
def _log_prob(value, loc, W, D, C):
    n = loc.shape[-1]
    m = lowrank_mahalanobis(W, D, value - loc, C)
    return -0.5 * (n * _LOG_2PI + lowrank_logdet(D, C) + m)


@kernel("LowRankMultivariateNormalEntropy")
def _entropy(D, C, batch_shape):
    n = D.shape[-1]
    h = 0.5 * (n * (1.0 + _LOG_2PI) + lowrank_logdet(D, C))
    return jnp.broadcast_to(h, batch_shape)


@kernel("LowRankScaleTril")
def _scale_tril(W, D):
    n = D.shape[-1]
    root_d = jnp.sqrt(D)[..., None]
    scaled = W / root_d
    K = scaled @ jnp.swapaxes(scaled, -1, -2) + jnp.eye(n, dtype=W.dtype)
    return root_d * jnp.linalg.cholesky(K)


@kernel("LowRankCovariance")
def _covariance(W, D):
    return W @ jnp.swapaxes(W, -1, -2) + D[..., None] * jnp.eye(D.shape[-1], dtype=D.dtype)


@kernel("LowRankPrecision")
def _precision(W, D, C):
    wt_dinv = jnp.swapaxes(W, -1, -2) / D[..., None, :]
    A = solve_triangular(C, wt_dinv, lower=True)
    eye = jnp.eye(D.shape[-1], dtype=D.dtype)
    return eye / D[..., None] - jnp.swapaxes(A, -1, -2) @ A


class LowRankMultivariateNormal(Distribution):
    """A Gaussian over vectors whose covariance is low-rank plus diagonal, W W^T + diag(D):
    log_prob and entropy cost O(n m^2) instead of O(n^3).

    Example::

        >>> m = LowRankMultivariateNormal(torch.zeros(2), torch.tensor([[1.0], [0.0]]),
        ...                               torch.ones(2))
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError("cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, diag_ = torch.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except (RuntimeError, ValueError) as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new LowRankMultivariateNormal whose batch shape is `batch_shape`, with the parameters
        broadcast to it; `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(
            LowRankMultivariateNormal, batch_shape, _instance,
            {"loc": 1, "cov_diag": 1, "cov_factor": 2})
        for name in ("_unbroadcasted_cov_factor", "_unbroadcasted_cov_diag",
                     "_capacitance_tril"):
            setattr(new, name, getattr(self, name))
        return self._finish_expand(new, batch_shape)

    def _matrix_shape(self):
        return tuple(self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self.loc

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return self.loc

    @lazy_property
    def variance(self):
        """The variance of each coordinate (the covariance diagonal), computed once."""
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(tuple(self._batch_shape + self._event_shape))

    @lazy_property
    def scale_tril(self):
        """The lower-triangular Cholesky factor of the covariance, computed once."""
        return _scale_tril(self._unbroadcasted_cov_factor,
                           self._unbroadcasted_cov_diag).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        """The covariance matrix, with shape `batch_shape + (n, n)`, computed once. It equals
        `cov_factor @ cov_factor.mT + diag(cov_diag)`.
        """
        return _covariance(self._unbroadcasted_cov_factor,
                           self._unbroadcasted_cov_diag).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        """The precision matrix (inverse covariance), with shape `batch_shape + (n, n)`, computed
        once.
        """
        return _precision(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                          self._capacitance_tril).expand(self._matrix_shape())

    def rsample(self, sample_shape=()):
        """A reparameterised draw of shape `sample_shape + batch_shape + event_shape`: gradients
        flow from it back to the parameters. Randomness comes from torchjax's global generator.
        """
        return _lowrank(self._extended_shape(sample_shape), self.loc,
                        self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag)

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(value, self.loc, self._unbroadcasted_cov_factor,
                         self._unbroadcasted_cov_diag, self._capacitance_tril)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return _entropy(self._unbroadcasted_cov_diag, self._capacitance_tril,
                        tuple(self._batch_shape))
