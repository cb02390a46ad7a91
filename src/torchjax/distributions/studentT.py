"""StudentT(df, loc, scale): Student's t distribution."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.scipy import special as jsp

from . import constraints
from ._jax import float_dtype, kernel, sampler, tiny
from .chi2 import Chi2
from .distribution import Distribution
from .utils import as_value, broadcast_all

__all__ = ["StudentT"]


@sampler
def _student_t(key, shape, df, loc, scale):
    dt = float_dtype(df, loc, scale)
    k1, k2 = jax.random.split(key)
    x = jax.random.normal(k1, shape, dt)
    # chi2(df) = 2 * Gamma(df / 2): differentiable in df through jax.random.gamma
    z = 2 * jax.random.gamma(k2, jnp.broadcast_to(0.5 * df, shape), shape, dt)
    z = z + jax.lax.stop_gradient(jnp.maximum(z, tiny(dt)) - z)
    return loc + scale * x * jax.lax.rsqrt(z / df)


@kernel("StudentTLogProb")
def _log_prob(value, df, loc, scale):
    y = (value - loc) / scale
    z = (jnp.log(scale) + 0.5 * jnp.log(df) + 0.5 * math.log(math.pi)
         + jsp.gammaln(0.5 * df) - jsp.gammaln(0.5 * (df + 1.0)))
    return -0.5 * (df + 1.0) * jnp.log1p(y**2 / df) - z


@kernel("StudentTEntropy")
def _entropy(df, scale):
    lbeta = jsp.gammaln(0.5 * df) + math.lgamma(0.5) - jsp.gammaln(0.5 * (df + 1))
    return (jnp.log(scale)
            + 0.5 * (df + 1) * (jsp.digamma(0.5 * (df + 1)) - jsp.digamma(0.5 * df))
            + 0.5 * jnp.log(df) + lbeta)


@kernel("StudentTMean")
def _mean(df, loc):
    return jnp.where(df <= 1, jnp.nan, loc)


@kernel("StudentTVariance")
def _variance(df, scale):
    # finite for df > 2, infinite for 1 < df <= 2, undefined below
    safe = jnp.where(df > 2, df, 3.0)
    finite = scale**2 * safe / (safe - 2)
    return jnp.where(df > 2, finite, jnp.where(df > 1, jnp.inf, jnp.nan))


class StudentT(Distribution):
    """Student's t with `df` degrees of freedom, location `loc` and scale `scale`.

    Example::

        >>> m = StudentT(torch.tensor([2.0]))
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new StudentT whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(StudentT, batch_shape, _instance,
                                               {"df": 0, "loc": 0, "scale": 0})
        new._chi2 = self._chi2.expand(batch_shape)
        return self._finish_expand(new, batch_shape)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return _mean(self.df, self.loc)

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return self.loc

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return _variance(self.df, self.scale)

    def rsample(self, sample_shape=()):
        """A reparameterised draw of shape `sample_shape + batch_shape + event_shape`: gradients
        flow from it back to the parameters. Randomness comes from torchjax's global generator.
        """
        return _student_t(self._extended_shape(sample_shape), self.df, self.loc, self.scale)

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(as_value(value, self.loc), self.df, self.loc, self.scale)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return _entropy(self.df, self.scale)
