"""Closed-form KL divergences between distributions of different families.

The pairs are PyTorch's registry's, with its conventions: KL(p || q) is inf where q has no
density on part of p's support (a Normal against anything supported on a half-line or an
interval), and where a closed form only holds for some parameters (a Pareto's mean needs
alpha > 1) the other entries are inf. Formulas that use p's entropy take it as an input, so
each pair is the entropy's node and one more.
"""

from __future__ import annotations

import math

import jax.numpy as jnp
from jax.scipy import special as jsp

import torchjax as torch

from ._jax import kernel, xlogy
from .beta import Beta
from .continuous_bernoulli import ContinuousBernoulli
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .kl import register_kl
from .laplace import Laplace
from .normal import Normal
from .pareto import Pareto
from .uniform import Uniform
from .utils import euler_constant

_G = euler_constant
_LOG_2PI = math.log(2 * math.pi)


def _infinite(param):
    return torch.full_like(param, math.inf)


# -- q has no density where p has: inf, shaped like p's parameter --------------------------------

def _register_infinite(p_type, q_types, param: str):
    def kl(p, q):
        return _infinite(getattr(p, param))
    kl.__name__ = f"_kl_{p_type.__name__.lower()}_infinity"
    for q_type in q_types:
        register_kl(p_type, q_type)(kl)


_HALF_LINE_OR_INTERVAL = (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)
_register_infinite(Beta, (Pareto,), "concentration1")
_register_infinite(ContinuousBernoulli, (Pareto,), "probs")
_register_infinite(Exponential, (Beta, ContinuousBernoulli, Pareto, Uniform), "rate")
_register_infinite(Gamma, (Beta, ContinuousBernoulli, Pareto, Uniform), "concentration")
_register_infinite(Gumbel, _HALF_LINE_OR_INTERVAL, "loc")
_register_infinite(Laplace, _HALF_LINE_OR_INTERVAL, "loc")
_register_infinite(Normal, _HALF_LINE_OR_INTERVAL, "loc")
_register_infinite(Pareto, (Beta, ContinuousBernoulli, Uniform), "scale")


# -- p = Beta ---------------------------------------------------------------------------------

def _beta_mean(c1, c0):
    return c1 / (c1 + c0)


@kernel("KLBetaContinuousBernoulli")
def _beta_cb(entropy, c1, c0, q_logits, q_probs, q_log_norm):
    return -entropy - _beta_mean(c1, c0) * q_logits - jnp.log1p(-q_probs) - q_log_norm


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return _beta_cb(p.entropy(), p.concentration1, p.concentration0, q.logits, q.probs,
                    q._cont_bern_log_norm())


@kernel("KLBetaExponential")
def _beta_exponential(entropy, c1, c0, rate):
    return -entropy - jnp.log(rate) + rate * _beta_mean(c1, c0)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return _beta_exponential(p.entropy(), p.concentration1, p.concentration0, q.rate)


@kernel("KLBetaGamma")
def _beta_gamma(entropy, c1, c0, qa, qr):
    # E[log x] under Beta(c1, c0) is digamma(c1) - digamma(c1 + c0)
    e_log = jsp.digamma(c1) - jsp.digamma(c1 + c0)
    return (-entropy + jsp.gammaln(qa) - qa * jnp.log(qr) - (qa - 1) * e_log
            + qr * _beta_mean(c1, c0))


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    return _beta_gamma(p.entropy(), p.concentration1, p.concentration0, q.concentration,
                       q.rate)


@kernel("KLBetaNormal")
def _beta_normal(entropy, c1, c0, loc, scale):
    mean = _beta_mean(c1, c0)
    second_moment = mean * (1 - mean) / (c1 + c0 + 1) + mean**2
    var = scale**2
    return (-entropy + 0.5 * jnp.log(var * 2 * math.pi)
            + (0.5 * second_moment - loc * mean + 0.5 * loc**2) / var)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    return _beta_normal(p.entropy(), p.concentration1, p.concentration0, q.loc, q.scale)


@kernel("KLBetaUniform")
def _beta_uniform(entropy, low, high):
    kl = -entropy + jnp.log(high - low)
    return jnp.where((low > 0) | (high < 1), jnp.inf, kl)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    return _beta_uniform(p.entropy(), q.low, q.high)


# -- p = ContinuousBernoulli ------------------------------------------------------------------

@kernel("KLContinuousBernoulliExponential")
def _cb_exponential(entropy, mean, rate):
    return -entropy - jnp.log(rate) + rate * mean


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return _cb_exponential(p.entropy(), p.mean, q.rate)


@kernel("KLContinuousBernoulliNormal")
def _cb_normal(entropy, mean, variance, loc, scale):
    return (-entropy + 0.5 * (_LOG_2PI + (loc / scale) ** 2) + jnp.log(scale)
            + (variance + mean**2 - 2.0 * loc * mean) / (2.0 * scale**2))


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    return _cb_normal(p.entropy(), p.mean, p.variance, q.loc, q.scale)


@kernel("KLContinuousBernoulliUniform")
def _cb_uniform(entropy, low, high):
    kl = -entropy + jnp.log(high - low)
    # PyTorch's test: inf as soon as q's interval starts at or above 0 or ends at or below 1
    return jnp.where((low >= 0) | (high <= 1), jnp.inf, kl)


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    return _cb_uniform(p.entropy(), q.low, q.high)


# -- p = Exponential --------------------------------------------------------------------------

@kernel("KLExponentialGamma")
def _exponential_gamma(rate, qa, qr):
    ratio = qr / rate
    return -qa * jnp.log(ratio) + ratio + jsp.gammaln(qa) + qa * _G - (1 + _G)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    return _exponential_gamma(p.rate, q.concentration, q.rate)


@kernel("KLExponentialGumbel")
def _exponential_gumbel(rate, loc, scale):
    s = rate * scale
    z = loc / scale
    return jnp.log(s) - 1 - z + jnp.exp(z) * s / (s + 1) + 1 / s


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    return _exponential_gumbel(p.rate, q.loc, q.scale)


@kernel("KLExponentialNormal")
def _exponential_normal(rate, loc, scale):
    var, r2 = scale**2, rate**2
    return (0.5 * jnp.log(r2 * var * 2 * math.pi) - 1
            + (1 / r2 - loc / rate + 0.5 * loc**2) / var)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    return _exponential_normal(p.rate, q.loc, q.scale)


# -- p = Gamma --------------------------------------------------------------------------------

@kernel("KLGammaExponential")
def _gamma_exponential(entropy, a, r, rate):
    return -entropy - jnp.log(rate) + rate * a / r


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return _gamma_exponential(p.entropy(), p.concentration, p.rate, q.rate)


@kernel("KLGammaGumbel")
def _gamma_gumbel(a, r, loc, scale):
    b = r * scale
    z = loc / scale
    neg_entropy_part = (a - 1) * jsp.digamma(a) - jsp.gammaln(a) - a
    return (neg_entropy_part + jnp.log(b) + a / b
            + jnp.exp(z) * (1 + 1 / b) ** (-a) - z)


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    return _gamma_gumbel(p.concentration, p.rate, q.loc, q.scale)


@kernel("KLGammaNormal")
def _gamma_normal(a, r, loc, scale):
    var, r2 = scale**2, r**2
    head = 0.5 * jnp.log(r2 * var * 2 * math.pi) - a - jsp.gammaln(a)
    moments = 0.5 * (a**2 + a) / r2 - loc * a / r + 0.5 * loc**2
    return head + (a - 1) * jsp.digamma(a) + moments / var


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    return _gamma_normal(p.concentration, p.rate, q.loc, q.scale)


# -- p = Gumbel, Laplace, Normal ----------------------------------------------------------------

@kernel("KLGumbelNormal")
def _gumbel_normal(pl, ps, ql, qs):
    ratio = ps / qs
    shifted = (pl + ps * _G - ql) / qs
    return (-jnp.log(ratio / math.sqrt(2 * math.pi)) + (math.pi * ratio * 0.5) ** 2 / 3
            + 0.5 * shifted**2 - (_G + 1))


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    return _gumbel_normal(p.loc, p.scale, q.loc, q.scale)


@kernel("KLLaplaceNormal")
def _laplace_normal(pl, ps, ql, qs):
    var = qs**2
    k = ps**2 / var
    return (-0.5 * jnp.log(2 * k / math.pi) + k
            + (0.5 * pl**2 - pl * ql + 0.5 * ql**2) / var - 1)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    return _laplace_normal(p.loc, p.scale, q.loc, q.scale)


@kernel("KLNormalGumbel")
def _normal_gumbel(pl, ps, ql, qs):
    m, v, z = pl / qs, (ps / qs) ** 2, ql / qs
    return -0.5 * jnp.log(v) + m - z + jnp.exp(-m + 0.5 * v + z) - 0.5 * (1 + _LOG_2PI)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    return _normal_gumbel(p.loc, p.scale, q.loc, q.scale)


@kernel("KLNormalLaplace")
def _normal_laplace(pl, ps, ql, qs):
    d = pl - ql
    z = d / ps
    # E|x - ql| for x ~ Normal(pl, ps): the mean of a folded normal
    mean_abs = math.sqrt(2 / math.pi) * ps * jnp.exp(-0.5 * z**2) + d * jsp.erf(
        math.sqrt(0.5) * z)
    return -jnp.log(ps / qs) + mean_abs / qs - 0.5 * (1 + math.log(0.5 * math.pi))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    return _normal_laplace(p.loc, p.scale, q.loc, q.scale)


# -- p = Pareto: its moments exist only for large enough alpha --------------------------------

@kernel("KLParetoExponential")
def _pareto_exponential(scale, alpha, rate):
    s = scale * rate
    kl = jnp.log(alpha / s) - 1 / alpha + alpha * s / (alpha - 1) - 1
    return jnp.where(alpha <= 1, jnp.inf, kl)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    return _pareto_exponential(p.scale, p.alpha, q.rate)


@kernel("KLParetoGamma")
def _pareto_gamma(scale, alpha, qa, qr):
    e_log = jnp.log(scale) + 1 / alpha  # E[log x] under the Pareto
    kl = (jnp.log(alpha) - e_log + jsp.gammaln(qa) - qa * jnp.log(qr) + (1 - qa) * e_log
          + qr * alpha * scale / (alpha - 1) - 1)
    return jnp.where(alpha <= 1, jnp.inf, kl)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    return _pareto_gamma(p.scale, p.alpha, q.concentration, q.rate)


@kernel("KLParetoNormal")
def _pareto_normal(scale, alpha, loc, qs):
    c = scale / (alpha - 1)
    kl = (jnp.log(math.sqrt(2 * math.pi) * qs * alpha / scale) - 1 / alpha
          + (alpha * c**2 / (alpha - 2) + (alpha * c - loc) ** 2) / (2 * qs**2) - 1)
    return jnp.where(alpha <= 2, jnp.inf, kl)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    return _pareto_normal(p.scale, p.alpha, q.loc, q.scale)


# -- p = Uniform --------------------------------------------------------------------------------

def _xlogx(x):
    return xlogy(x, x)


@kernel("KLUniformBeta")
def _uniform_beta(low, high, c1, c0):
    width = high - low
    e_log = (_xlogx(high) - _xlogx(low) - width) / width  # E[log x] under the Uniform
    e_log1m = (_xlogx(1 - low) - _xlogx(1 - high) - width) / width  # E[log(1 - x)]
    log_beta = jsp.gammaln(c1) + jsp.gammaln(c0) - jsp.gammaln(c1 + c0)
    kl = log_beta - jnp.log(width) - (c1 - 1) * e_log - (c0 - 1) * e_log1m
    return jnp.where((high > 1) | (low < 0), jnp.inf, kl)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    return _uniform_beta(p.low, p.high, q.concentration1, q.concentration0)


@kernel("KLUniformContinuousBernoulli")
def _uniform_cb(entropy, low, high, q_logits, q_probs, q_log_norm):
    kl = -entropy - 0.5 * (low + high) * q_logits - jnp.log1p(-q_probs) - q_log_norm
    # PyTorch's test: inf when p's interval reaches 1 or 0, its own boundary included
    return jnp.where((high >= 1) | (low <= 0), jnp.inf, kl)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    return _uniform_cb(p.entropy(), p.low, p.high, q.logits, q.probs,
                       q._cont_bern_log_norm())


@kernel("KLUniformExponential")
def _uniform_exponential(low, high, rate):
    kl = rate * (high + low) / 2 - jnp.log((high - low) * rate)
    return jnp.where(low < 0, jnp.inf, kl)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    return _uniform_exponential(p.low, p.high, q.rate)


@kernel("KLUniformGamma")
def _uniform_gamma(low, high, qa, qr):
    width = high - low
    e_log = (_xlogx(high) - _xlogx(low) - width) / width
    kl = (-jnp.log(width) + jsp.gammaln(qa) - qa * jnp.log(qr) + (1 - qa) * e_log
          + qr * (high + low) / 2)
    return jnp.where(low < 0, jnp.inf, kl)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    return _uniform_gamma(p.low, p.high, q.concentration, q.rate)


@kernel("KLUniformGumbel")
def _uniform_gumbel(low, high, loc, scale):
    c = scale / (high - low)
    zh, zl = (high - loc) / scale, (low - loc) / scale
    return jnp.log(c) + 0.5 * (zh + zl) - c * (jnp.exp(-zh) - jnp.exp(-zl))


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    return _uniform_gumbel(p.low, p.high, q.loc, q.scale)


@kernel("KLUniformPareto")
def _uniform_pareto(low, high, scale, alpha):
    width = high - low
    e_log = (_xlogx(high) - _xlogx(low) - width) / width
    kl = e_log * (alpha + 1) - jnp.log(alpha * scale**alpha * width)
    return jnp.where(low < scale, jnp.inf, kl)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    return _uniform_pareto(p.low, p.high, q.scale, q.alpha)
