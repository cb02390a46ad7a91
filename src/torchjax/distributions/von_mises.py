"""VonMises(loc, concentration): the circular normal distribution on [-pi, pi)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.scipy import special as jsp

import torchjax as torch

from . import constraints
from ._jax import kernel, sampler
from .distribution import Distribution
from .utils import as_value, broadcast_all

__all__ = ["VonMises"]


def _log_i0(x):
    # log I0(x) from the exponentially scaled Bessel function: no overflow for large x
    return jnp.log(jsp.i0e(x)) + x


@sampler
def _von_mises(key, shape, loc, concentration):
    """Best and Fisher's (1979) rejection sampler, run in float64 as PyTorch does, until
    every element has accepted a proposal."""
    out_dtype = jnp.result_type(loc, concentration)
    mu = jnp.broadcast_to(loc, shape).astype(jnp.float64)
    kappa = jnp.broadcast_to(concentration, shape).astype(jnp.float64)
    tau = 1 + jnp.sqrt(1 + 4 * kappa**2)
    rho = (tau - jnp.sqrt(2 * tau)) / (2 * kappa)
    # for tiny kappa the proposal is nearly uniform and its parameter 1 / kappa + kappa
    r = jnp.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho**2) / (2 * rho))

    def propose(state):
        i, done, x = state
        u1, u2, u3 = jax.random.uniform(jax.random.fold_in(key, i), (3,) + shape, jnp.float64)
        z = jnp.cos(math.pi * u1)
        f = (1 + r * z) / (r + z)
        c = kappa * (r - f)
        accept = (c * (2 - c) - u2 > 0) | (jnp.log(c / u2) + 1 - c >= 0)
        take = accept & ~done
        x = jnp.where(take, jnp.sign(u3 - 0.5) * jnp.arccos(f), x)
        return i + 1, done | accept, x

    init = (0, jnp.zeros(shape, bool), jnp.zeros(shape, jnp.float64))
    _, _, x = jax.lax.while_loop(lambda s: ~s[1].all(), propose, init)
    return ((x + math.pi + mu) % (2 * math.pi) - math.pi).astype(out_dtype)


@kernel("VonMisesLogProb")
def _log_prob(value, loc, concentration):
    return concentration * jnp.cos(value - loc) - math.log(2 * math.pi) - _log_i0(concentration)


@kernel("VonMisesVariance")
def _variance(concentration):
    return 1 - jsp.i1e(concentration) / jsp.i0e(concentration)


class VonMises(Distribution):
    """The von Mises distribution: density exp(kappa cos(x - loc)) / (2 pi I0(kappa)) on the
    circle. Sampling has no reparameterisation (PyTorch's neither).

    Example::

        >>> m = VonMises(torch.tensor([1.0]), torch.tensor([1.0]))
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new VonMises whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(VonMises, batch_shape, _instance,
                                               {"loc": 0, "concentration": 0})
        return self._finish_expand(new, batch_shape)

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(as_value(value, self.loc), self.loc, self.concentration)

    def sample(self, sample_shape=()):
        """A draw of shape `sample_shape + batch_shape + event_shape`, without gradient; the
        randomness comes from torchjax's global generator (`torchjax.manual_seed`).
        """
        with torch.no_grad():
            return _von_mises(self._extended_shape(sample_shape), self.loc.detach(),
                              self.concentration.detach())

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
        """The circular variance 1 - I1(kappa) / I0(kappa)."""
        return _variance(self.concentration)
