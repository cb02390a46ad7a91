"""Sampling: support and statistics of many draws, seeding, and reparameterised gradients."""

import math

import numpy as np
import pytest
import torch

import torchjax

from .cases import CASES
from .helpers import numpy, tensors

N = 20000


def build(lib, case, grad=False):
    return case.build(lib.distributions, tensors(lib, case.params, grad=grad))


def _within(sample_stat, expected, se, what):
    ok = np.isfinite(expected)
    bad = ok & (np.abs(sample_stat - expected) > 5 * se + 1e-4)
    assert not bad.any(), f"{what}: {sample_stat[bad]} vs {expected[bad]} (se {se[bad]})"


@pytest.mark.parametrize("case", [c for c in CASES if c.stats], ids=lambda c: c.id)
def test_draws_lie_in_the_support_and_match_mean_and_variance(case):
    j, t = build(torchjax, case), build(torch, case)
    x = j.sample((N,))
    assert tuple(x.shape) == (N,) + tuple(t.batch_shape) + tuple(t.event_shape)
    assert bool(j.support.check(x).all())
    xs = numpy(x).astype(np.float64)
    if isinstance(t, torch.distributions.Categorical):
        # a Categorical has no mean: compare the frequency of each category instead
        xs = np.eye(t._num_events)[xs.astype(np.int64)]
        mean, var = numpy(t.probs), numpy(t.probs * (1 - t.probs))
    else:
        mean, var = numpy(t.mean).astype(np.float64), numpy(t.variance).astype(np.float64)
    m = xs.mean(0)
    centred = xs - m
    s2 = (centred**2).mean(0)
    _within(m, mean, np.sqrt(s2 / N), "mean")
    # the standard error of a variance estimate comes from the fourth central moment
    se_var = np.sqrt(np.maximum((centred**4).mean(0) - s2**2, 0) / N)
    _within(s2, var, se_var, "variance")


def test_manual_seed_reproduces_draws_and_consecutive_draws_differ():
    d = torchjax.distributions.Gamma(torchjax.tensor([0.5, 2.0, 3.0]), 1.0)
    torchjax.manual_seed(7)
    a, b = d.sample((4,)), d.sample((4,))
    torchjax.manual_seed(7)
    c = d.sample((4,))
    assert np.array_equal(numpy(a), numpy(c))
    assert not np.array_equal(numpy(a), numpy(b))
    g = torchjax.Generator().manual_seed(3)
    # an explicit generator is a separate stream (samplers take the global one; this checks
    # the global stream is untouched by draws from another generator)
    torchjax.manual_seed(7)
    torchjax.randn(1, generator=g)
    assert np.array_equal(numpy(d.sample((4,))), numpy(a))


def test_normal_rsample_gradient_is_the_base_noise():
    loc = torchjax.tensor([0.3, -1.2, 2.0], requires_grad=True)
    scale = torchjax.tensor([0.6, 1.7, 3.2], requires_grad=True)
    d = torchjax.distributions.Normal(loc, scale)
    torchjax.manual_seed(11)
    x = d.rsample((5,))
    x.sum().backward()
    eps = (numpy(x) - numpy(loc)) / numpy(scale)  # the standard normal noise of the draw
    np.testing.assert_allclose(numpy(loc.grad), np.full(3, 5.0))
    np.testing.assert_allclose(numpy(scale.grad), eps.sum(0), rtol=1e-5, atol=1e-5)
    assert not d.sample().requires_grad


M = 2000  # draws for reparameterised-gradient estimates


def _per_draw(values):
    """Parameters repeated M times as leaves, so each draw's gradient lands in its own row."""
    return torchjax.tensor(np.tile(np.asarray(values, np.float32), (M, 1)), requires_grad=True)


def _assert_mean_gradient(grad, expected, what):
    """The mean of M per-draw gradients estimates d E[x] / d parameter: within 5 standard
    errors of the analytic derivative."""
    g = numpy(grad).astype(np.float64)
    se = g.std(0) / np.sqrt(M)
    assert (np.abs(g.mean(0) - expected) <= 5 * se + 1e-3).all(), (what, g.mean(0), expected)


def test_gamma_rsample_gradient_matches_the_derivative_of_the_mean():
    a, rate = _per_draw([0.5, 2.0, 7.0]), _per_draw([1.5, 0.8, 2.0])
    torchjax.distributions.Gamma(a, rate).rsample().sum().backward()
    a_, r_ = np.array([0.5, 2.0, 7.0]), np.array([1.5, 0.8, 2.0])
    _assert_mean_gradient(a.grad, 1 / r_, "d/da")  # E[x] = a / rate
    _assert_mean_gradient(rate.grad, -a_ / r_**2, "d/drate")


def test_beta_and_dirichlet_rsample_gradients_match_the_derivative_of_the_mean():
    a, b = _per_draw([0.5, 2.0, 4.0]), _per_draw([1.5, 0.7, 3.0])
    torchjax.distributions.Beta(a, b).rsample().sum().backward()
    a_, b_ = np.array([0.5, 2.0, 4.0]), np.array([1.5, 0.7, 3.0])
    _assert_mean_gradient(a.grad, b_ / (a_ + b_) ** 2, "d/da")  # E[x] = a / (a + b)
    _assert_mean_gradient(b.grad, -a_ / (a_ + b_) ** 2, "d/db")
    c = _per_draw([0.8, 2.0, 3.0])
    torchjax.distributions.Dirichlet(c).rsample()[:, 0].sum().backward()
    c_ = np.array([0.8, 2.0, 3.0])
    _assert_mean_gradient(c.grad, np.array([1.0, 0, 0]) / c_.sum() - c_[0] / c_.sum() ** 2,
                          "d/dc")


@pytest.mark.parametrize("case", [c for c in CASES if c.id in (
    "Laplace", "Exponential", "Uniform", "StudentT", "LogNormal", "MultivariateNormal-tril",
    "LowRankMultivariateNormal", "Gumbel", "Weibull", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "ContinuousBernoulli")], ids=lambda c: c.id)
def test_rsample_gradients_reach_every_parameter(case):
    p = tensors(torchjax, case.params)
    d = case.build(torchjax.distributions, p)
    assert d.has_rsample
    x = d.rsample((2,))
    assert x.requires_grad
    grads = torchjax.autograd.grad(x.sum(), [v for v in p.values() if v.requires_grad],
                                   allow_unused=True)
    for g in grads:
        assert g is not None and bool(torchjax.isfinite(g).all())


def test_distributions_without_rsample_say_so():
    D = torchjax.distributions
    for d in (D.Poisson(torchjax.tensor([1.0])), D.Categorical(torchjax.tensor([0.5, 0.5])),
              D.VonMises(torchjax.tensor([0.0]), torchjax.tensor([1.0]))):
        assert not d.has_rsample
        with pytest.raises(NotImplementedError, match="rsample"):
            d.rsample()


def test_straight_through_one_hot_passes_gradients_to_probs():
    probs = torchjax.tensor([0.2, 0.3, 0.5], requires_grad=True)
    d = torchjax.distributions.OneHotCategoricalStraightThrough(probs=probs)
    x = d.rsample((4,))
    assert bool(((x == 0) | (x == 1)).all()) and x.sum(-1).tolist() == [1.0] * 4
    (x * torchjax.tensor([1.0, 2.0, 3.0])).sum().backward()
    # d/dprobs of 4 * (1, 2, 3) . probs / sum(probs): the Categorical normalises probs
    g = 4 * np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(numpy(probs.grad), g - g @ numpy(probs), rtol=1e-5)


def test_von_mises_draws_wrap_to_the_circle():
    d = torchjax.distributions.VonMises(torchjax.tensor([3.0, -3.0]),
                                        torchjax.tensor([1e-6, 50.0]))
    x = numpy(d.sample((5000,)))
    assert (x >= -math.pi).all() and (x < math.pi).all()
    # concentration 50 around 3.0: the draws cluster there; 1e-6: nearly uniform
    assert abs(np.angle(np.exp(1j * x[:, 1]).mean()) + 3.0) < 0.05
    assert abs(np.exp(1j * x[:, 0]).mean()) < 0.05
