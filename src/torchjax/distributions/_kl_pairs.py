"""Closed-form KL divergences, registered with kl.register_kl.

Each formula is a pure JAX function of the two distributions' parameters (one tape node, its
backward JAX's vjp). Where KL is infinite (q has no mass where p has some) the result is
set to inf, and where p has no mass the term is 0, as PyTorch does.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.scipy import special as jsp
from jax.scipy.linalg import solve_triangular

import torchjax as torch

from ._jax import abs0, kernel
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    lowrank_logdet,
    lowrank_mahalanobis,
)
from .multivariate_normal import MultivariateNormal, half_log_det, mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import euler_constant, sum_rightmost

_INF = jnp.inf


@kernel("KLBernoulliBernoulli")
def _bernoulli(pp, pl, qp, ql):
    heads = pp * (jax.nn.softplus(-ql) - jax.nn.softplus(-pl))
    heads = jnp.where(pp == 0, 0.0, jnp.where(qp == 0, _INF, heads))
    tails = (1 - pp) * (jax.nn.softplus(ql) - jax.nn.softplus(pl))
    tails = jnp.where(pp == 1, 0.0, jnp.where(qp == 1, _INF, tails))
    return heads + tails


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    return _bernoulli(p.probs, p.logits, q.probs, q.logits)


@kernel("KLBetaBeta")
def _beta(pa, pb, qa, qb):
    ps, qs = pa + pb, qa + qb
    lg, dg = jsp.gammaln, jsp.digamma
    return (lg(qa) + lg(qb) + lg(ps) - lg(pa) - lg(pb) - lg(qs)
            + (pa - qa) * dg(pa) + (pb - qb) * dg(pb) + (qs - ps) * dg(ps))


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    return _beta(p.concentration1, p.concentration0, q.concentration1, q.concentration0)


@kernel("KLBinomialBinomial")
def _binomial(pn, pp, pl, qn, qp, ql):
    kl = pn * (pp * (pl - ql) + jnp.log1p(-pp) - jnp.log1p(-qp))
    return jnp.where(pn > qn, _INF, kl)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > "
                                  "p.total_count is not implemented")
    return _binomial(p.total_count, p.probs, p.logits, q.total_count, q.probs, q.logits)


@kernel("KLCategoricalCategorical")
def _categorical(pp, pl, qp, ql):
    t = pp * (pl - ql)
    t = jnp.where(jnp.broadcast_to(pp == 0, t.shape), 0.0,
                  jnp.where(jnp.broadcast_to(qp == 0, t.shape), _INF, t))
    return t.sum(-1)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    return _categorical(p.probs, p.logits, q.probs, q.logits)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + torch.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - torch.log1p(-q.probs)
    return t1 + t2 + t3


@kernel("KLDirichletDirichlet")
def _dirichlet(pc, qc):
    ps, qs = pc.sum(-1), qc.sum(-1)
    t1 = jsp.gammaln(ps) - jsp.gammaln(qs)
    t2 = (jsp.gammaln(pc) - jsp.gammaln(qc)).sum(-1)
    t4 = jsp.digamma(pc) - jsp.digamma(ps)[..., None]
    return t1 - t2 + ((pc - qc) * t4).sum(-1)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    return _dirichlet(p.concentration, q.concentration)


@kernel("KLExponentialExponential")
def _exponential(pr, qr):
    ratio = qr / pr
    return -jnp.log(ratio) + ratio - 1


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    return _exponential(p.rate, q.rate)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    # the Bregman divergence of the log normaliser between the natural parameters
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    p_params = [t.detach().requires_grad_() for t in p._natural_params]
    q_params = q._natural_params
    with torch.enable_grad():
        f = p._log_normalizer(*p_params)
        grads = torch.autograd.grad(f.sum(), p_params, create_graph=True)
    result = q._log_normalizer(*q_params) - f
    for pt, qt, g in zip(p_params, q_params, grads):
        result = result - sum_rightmost((qt - pt) * g, len(q.event_shape))
    return result


@kernel("KLGammaGamma")
def _gamma(pa, pr, qa, qr):
    return (qa * jnp.log(pr / qr) + jsp.gammaln(qa) - jsp.gammaln(pa)
            + (pa - qa) * jsp.digamma(pa) + (qr - pr) * (pa / pr))


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    return _gamma(p.concentration, p.rate, q.concentration, q.rate)


@kernel("KLGumbelGumbel")
def _gumbel(pl, ps, ql, qs):
    c1, c2, c3 = ps / qs, ql / qs, pl / qs
    t1 = -jnp.log(c1) - c2 + c3
    t3 = jnp.exp(c2 + jsp.gammaln(1 + c1) - c3)
    return t1 + c1 * euler_constant + t3 - (1 + euler_constant)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    return _gumbel(p.loc, p.scale, q.loc, q.scale)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - torch.log1p(-q.probs) / p.probs - q.logits


@kernel("KLLaplaceLaplace")
def _laplace(pl, ps, ql, qs):
    ratio = ps / qs
    gap = abs0(pl - ql)
    return -jnp.log(ratio) + gap / qs + ratio * jnp.exp(-gap / ps) - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    return _laplace(p.loc, p.scale, q.loc, q.scale)


@kernel("KLNormalNormal")
def _normal(pl, ps, ql, qs):
    var_ratio = (ps / qs) ** 2
    t1 = ((pl - ql) / qs) ** 2
    return 0.5 * (var_ratio + t1 - 1 - jnp.log(var_ratio))


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    return _normal(p.loc, p.scale, q.loc, q.scale)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


def _trace_xxt(x):
    """trace(X X^T) for a batch of matrices: the sum of squares."""
    return (x * x).sum((-2, -1))


def _same_events(p, q, what):
    if p.event_shape != q.event_shape:
        # PyTorch's message carries a run of 26 spaces (a line continuation inside its
        # string literal); kept so that code matching the text sees the same string
        raise ValueError(f"KL-divergence between two {what} with{' ' * 26}different event "
                         "shapes cannot be computed")


@kernel("KLMultivariateNormal")
def _mvn(p_loc, p_tril, q_loc, q_tril):
    n = p_loc.shape[-1]
    shape = jnp.broadcast_shapes(p_tril.shape, q_tril.shape)
    # trace(Sq^-1 Sp) = |Lq^-1 Lp|_F^2
    term2 = _trace_xxt(solve_triangular(jnp.broadcast_to(q_tril, shape),
                                        jnp.broadcast_to(p_tril, shape), lower=True))
    term3 = mahalanobis(q_tril, q_loc - p_loc)
    return half_log_det(q_tril) - half_log_det(p_tril) + 0.5 * (term2 + term3 - n)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    _same_events(p, q, "Multivariate Normals")
    return _mvn(p.loc, p._unbroadcasted_scale_tril, q.loc, q._unbroadcasted_scale_tril)


def _woodbury_factor(qW, qD, qC):
    """A with Sq^-1 = Dq^-1 - A^T A (pure JAX)."""
    return solve_triangular(qC, jnp.swapaxes(qW, -1, -2) / qD[..., None, :], lower=True)


@kernel("KLLowRankLowRank")
def _lowrank_lowrank(p_loc, pW, pD, pC, q_loc, qW, qD, qC):
    n = p_loc.shape[-1]
    term1 = lowrank_logdet(qD, qC) - lowrank_logdet(pD, pC)
    term3 = lowrank_mahalanobis(qW, qD, q_loc - p_loc, qC)
    A = _woodbury_factor(qW, qD, qC)
    term2 = ((pD / qD).sum(-1) + _trace_xxt(pW * jax.lax.rsqrt(qD)[..., None])
             - _trace_xxt(A * jnp.sqrt(pD)[..., None, :]) - _trace_xxt(A @ pW))
    return 0.5 * (term1 + term2 + term3 - n)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    _same_events(p, q, "Low Rank Multivariate Normals")
    return _lowrank_lowrank(p.loc, p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag,
                            p._capacitance_tril, q.loc, q._unbroadcasted_cov_factor,
                            q._unbroadcasted_cov_diag, q._capacitance_tril)


@kernel("KLMultivariateNormalLowRank")
def _mvn_lowrank(p_loc, p_tril, q_loc, qW, qD, qC):
    n = p_loc.shape[-1]
    term1 = lowrank_logdet(qD, qC) - 2 * half_log_det(p_tril)
    term3 = lowrank_mahalanobis(qW, qD, q_loc - p_loc, qC)
    A = _woodbury_factor(qW, qD, qC)
    term2 = _trace_xxt(p_tril * jax.lax.rsqrt(qD)[..., None]) - _trace_xxt(A @ p_tril)
    return 0.5 * (term1 + term2 + term3 - n)


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p, q):
    _same_events(p, q, "(Low Rank) Multivariate Normals")
    return _mvn_lowrank(p.loc, p._unbroadcasted_scale_tril, q.loc,
                        q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                        q._capacitance_tril)


@kernel("KLLowRankMultivariateNormal")
def _lowrank_mvn(p_loc, pW, pD, pC, q_loc, q_tril):
    n = p_loc.shape[-1]
    term1 = 2 * half_log_det(q_tril) - lowrank_logdet(pD, pC)
    term3 = mahalanobis(q_tril, q_loc - p_loc)
    batch = jnp.broadcast_shapes(q_tril.shape[:-2], pW.shape[:-2])
    L = jnp.broadcast_to(q_tril, batch + (n, n))
    W = jnp.broadcast_to(pW, batch + pW.shape[-2:])
    root_d = jnp.broadcast_to(jnp.sqrt(pD)[..., None] * jnp.eye(n, dtype=pD.dtype),
                              batch + (n, n))
    term2 = (_trace_xxt(solve_triangular(L, W, lower=True))
             + _trace_xxt(solve_triangular(L, root_d, lower=True)))
    return 0.5 * (term1 + term2 + term3 - n)


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p, q):
    _same_events(p, q, "(Low Rank) Multivariate Normals")
    return _lowrank_mvn(p.loc, p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag,
                        p._capacitance_tril, q.loc, q._unbroadcasted_scale_tril)


@kernel("KLParetoPareto")
def _pareto(ps, pa, qs, qa):
    alpha_ratio = qa / pa
    kl = qa * jnp.log(ps / qs) - jnp.log(alpha_ratio) + alpha_ratio - 1
    return jnp.where(ps < qs, _INF, kl)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    return _pareto(p.scale, p.alpha, q.scale, q.alpha)


@kernel("KLPoissonPoisson")
def _poisson(pr, qr):
    return pr * (jnp.log(pr) - jnp.log(qr)) - (pr - qr)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return _poisson(p.rate, q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError("KL between TransformedDistributions with different "
                                  "transforms is not implemented")
    if p.event_shape != q.event_shape:
        raise NotImplementedError("KL between TransformedDistributions with different "
                                  "event shapes is not implemented")
    return kl_divergence(p.base_dist, q.base_dist)


@kernel("KLUniformUniform")
def _uniform(pl, ph, ql, qh):
    kl = jnp.log((qh - ql) / (ph - pl))
    return jnp.where((ql > pl) | (qh < ph), _INF, kl)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    return _uniform(p.low, p.high, q.low, q.high)


@kernel("KLUniformNormal")
def _uniform_normal(pl, ph, ql, qs):
    width = ph - pl
    t1 = jnp.log(math.sqrt(2 * math.pi) * qs / width)
    return t1 + 0.5 * (width**2 / 12 + ((ph + pl - 2 * ql) / 2) ** 2) / qs**2


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    return _uniform_normal(p.low, p.high, q.loc, q.scale)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    # a Poisson puts mass on counts a Bernoulli or Binomial cannot reach
    return torch.full_like(p.rate, math.inf)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independent distributions with different "
                                  "reinterpreted_batch_ndims is not implemented")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@kernel("KLCauchyCauchy")
def _cauchy(pl, ps, ql, qs):
    return jnp.log((ps + qs) ** 2 + (pl - ql) ** 2) - jnp.log(4 * ps * qs)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    return _cauchy(p.loc, p.scale, q.loc, q.scale)


from . import _kl_cross  # noqa: E402,F401  (pairs of different families)
