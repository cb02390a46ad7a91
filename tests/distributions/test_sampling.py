"""Sampling against PyTorch: for every row of cases.py, draws from the expanded distribution
lie in PyTorch's support with PyTorch's shape and dtype and match its mean and variance; and
rsample's gradients equal PyTorch's for the same draws (the same base noise), or, where the
two libraries reparameterise differently, agree in expectation.

One draw serves every check of a row, so each sampler compiles once per row.
"""

import math

import numpy as np
import pytest
import torch

import torchjax

from .cases import CASES
from .helpers import numpy, tensors

N2 = 2500  # draws of the distribution expanded to (2,) + batch_shape: 5000 per element
GROUPS = 10  # expectation-level checks: the spread of 10 group estimates gives the error


def torch64(case):
    """The case's parameters as float64 PyTorch leaves (the references are computed in
    float64, so their own rounding does not count against torchjax)."""
    return {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
            if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v
            for k, v in case.params.items()}


def leaves(p):
    names = [k for k, v in p.items() if isinstance(v, (torch.Tensor, torchjax.Tensor))
             and v.requires_grad]
    return names, [p[k] for k in names]


def as_numpy_grads(grads, like):
    return [np.zeros(tuple(t.shape)) if g is None else numpy(g).astype(np.float64)
            for g, t in zip(grads, like)]


def _within(sample_stat, expected, se, what):
    ok = np.isfinite(expected)
    bad = ok & (np.abs(sample_stat - expected) > 5 * se + 1e-4)
    assert not bad.any(), f"{what}: {sample_stat[bad]} vs {expected[bad]} (se {se[bad]})"


def _check_moments(xs, mean, var, what=""):
    """Mean and variance of draws xs (one leading sample dim) against mean and var."""
    n = xs.shape[0]
    mean, var = mean.astype(np.float64), var.astype(np.float64)
    m = xs.mean(0)
    centred = xs - m
    s2 = (centred**2).mean(0)
    _within(m, mean, np.sqrt(s2 / n), what + "mean")
    # the standard error of a variance estimate comes from the fourth central moment
    _within(s2, var, np.sqrt(np.maximum((centred**4).mean(0) - s2**2, 0) / n),
            what + "variance")


def _check_frequencies(hits, probs, what):
    """The frequency of boolean events hits (one leading sample dim) against probs: a
    binomial proportion, whose standard error is known exactly."""
    n = hits.shape[0]
    probs = probs.astype(np.float64)
    _within(hits.mean(0), probs, np.sqrt(probs * (1 - probs) / n), what)


def check_statistics(case, t, xs):
    """The statistics of draws xs (two leading sample dims) against PyTorch's distribution t
    (cases.py's `stats` says which)."""
    xs = xs.reshape((-1,) + xs.shape[2:]).astype(np.float64)
    n = xs.shape[0]
    if isinstance(t, torch.distributions.Categorical):
        # a Categorical has no mean: compare the frequency of each category instead
        _check_frequencies(np.eye(t._num_events)[xs.astype(np.int64)], numpy(t.probs),
                           "category frequencies")
    elif case.stats == "moments":
        _check_moments(xs, numpy(t.mean), numpy(t.variance))
    elif case.stats == "base":
        y = torch.tensor(xs)
        for transform in reversed(t.transforms):
            y = transform.inv(y)
        base = t.base_dist
        _check_moments(numpy(y), numpy(base.mean), numpy(base.variance),
                       f"draws mapped back to {type(base).__name__}: ")
    elif case.stats == "cdf":
        # the probability integral transform: F(x) ~ Uniform(0, 1). Its mean 1/2 tests the
        # location, its mean distance from 1/2 (1/4) the spread (a wrong scale moves it: 9
        # standard errors for a Cauchy 20% too wide); both standard errors are exact (the
        # variances 1/12 and 1/48)
        u = numpy(t.cdf(torch.tensor(xs)))
        ones = np.ones(u.shape[1:])
        _within(u.mean(0), ones / 2, ones * (1 / 12 / n) ** 0.5, "mean of cdf(draws)")
        _within(np.abs(u - 0.5).mean(0), ones / 4, ones * (1 / 48 / n) ** 0.5,
                "mean of |cdf(draws) - 1/2|")
    elif case.stats == "relaxed":
        # a relaxed Bernoulli draw lies above 1/2 exactly when its logistic noise exceeds
        # -logits; a Gumbel-softmax draw's argmax is a draw of the Categorical
        if isinstance(t, torch.distributions.RelaxedBernoulli):
            _check_frequencies(xs > 0.5, numpy(t.probs), "frequency above 1/2")
        else:
            k = xs.shape[-1]
            _check_frequencies(np.eye(k)[xs.argmax(-1)], numpy(t.probs), "argmax frequencies")
    else:
        y, reference = case.stats(t, torch.tensor(xs))
        _check_moments(numpy(y), numpy(reference.mean), numpy(reference.variance),
                       f"draws mapped to {type(reference).__name__}: ")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_draws_match_torch(case, monkeypatch):
    jp = tensors(torchjax, case.params)
    j = case.build(torchjax.distributions, jp)
    t = case.build(torch.distributions, tensors(torch, case.params, grad=False))
    assert j.has_rsample == t.has_rsample
    batch = (2,) + tuple(t.batch_shape)
    e = j.expand(batch)
    torchjax.manual_seed(0)
    x = e.rsample((N2,)) if j.has_rsample else e.sample((N2,))
    assert tuple(x.shape) == (N2,) + batch + tuple(t.event_shape)
    assert str(x.dtype) == str(t.sample().dtype)  # torchjax prints dtypes as torch does
    assert x.requires_grad == j.has_rsample
    xs = numpy(x)
    assert bool(t.support.check(torch.tensor(xs)).all()), "a draw outside PyTorch's support"
    if case.stats is not None:
        check_statistics(case, t, xs)
    if j.has_rsample:
        CHECKS[case.noise](case, jp, x, xs, batch, monkeypatch)


# -- rsample gradients ---------------------------------------------------------------------------

def _weights(xs):
    return np.random.default_rng(1).uniform(0.5, 1.5, xs.shape)


def _torchjax_grads(jp, x, w):
    names, params = leaves(jp)
    grads = torchjax.autograd.grad(x, params, torchjax.tensor(w.astype(xs_dtype(x))),
                                   allow_unused=True, retain_graph=True)
    return names, as_numpy_grads(grads, params)


def xs_dtype(x):
    return np.dtype(str(x.dtype).split(".")[-1])


def _assert_grads(names, actual, expected, what):
    for name, a, e in zip(names, actual, expected):
        scale = np.abs(e).max() + 1e-12
        np.testing.assert_allclose(a, e, rtol=2e-3, atol=2e-5 * scale,
                                   err_msg=f"{what}: gradient of {name}")


def check_by_cdf(case, jp, x, xs, batch, monkeypatch):
    """x = F^-1(u; theta) with u fixed: dx/dtheta = -(dF/dtheta)(x) / density(x), with F
    and the density PyTorch's, at torchjax's draws."""
    w = _weights(xs)
    names, actual = _torchjax_grads(jp, x, w)
    tp = torch64(case)
    td = case.build(torch.distributions, tp)
    x64 = torch.tensor(xs, dtype=torch.float64)
    density = td.log_prob(x64).exp().detach()
    total = -(torch.tensor(w) * td.cdf(x64) / density).sum()
    expected = torch.autograd.grad(total, [tp[k] for k in names], allow_unused=True)
    _assert_grads(names, actual, as_numpy_grads(expected, [tp[k] for k in names]), "cdf")


class _FixedStandardGamma(torch.autograd.Function):
    """torch._standard_gamma that returns a given draw, with PyTorch's own derivative."""

    @staticmethod
    def forward(ctx, concentration, draw):
        ctx.save_for_backward(concentration, draw)
        return draw.clone()

    @staticmethod
    def backward(ctx, grad):
        concentration, draw = ctx.saved_tensors
        return grad * torch._standard_gamma_grad(concentration, draw), None


def check_by_noise(case, jp, x, xs, batch, monkeypatch):
    """PyTorch's rsample, its random source replaced by the base noise of torchjax's draws,
    gives the same draws and the same gradients."""
    w = _weights(xs)
    names, actual = _torchjax_grads(jp, x, w)
    tp = torch64(case)
    td = case.build(torch.distributions, tp)
    module_name, recover = case.recover
    with torch.no_grad():
        noise = recover(td, torch.tensor(xs, dtype=torch.float64))
    module = getattr(torch.distributions, module_name)
    if module_name == "gamma":
        monkeypatch.setattr(module, "_standard_gamma",
                            lambda c: _FixedStandardGamma.apply(c, noise))
    else:
        def standard_normal(shape, dtype, device):
            assert tuple(shape) == tuple(noise.shape)
            return noise
        monkeypatch.setattr(module, "_standard_normal", standard_normal)
    tx = td.expand(batch).rsample((N2,))
    np.testing.assert_allclose(numpy(tx), xs, rtol=1e-4, atol=1e-5, err_msg="draws")
    expected = torch.autograd.grad(tx, [tp[k] for k in names], torch.tensor(w),
                                   allow_unused=True)
    _assert_grads(names, actual, as_numpy_grads(expected, [tp[k] for k in names]),
                  f"PyTorch's rsample on the same noise ({module_name})")


def check_in_expectation(case, jp, x, xs, batch, monkeypatch):
    """d/dtheta E[h(x)] two ways: torchjax's pathwise gradient (the mean of h'(x) dx/dtheta)
    and the likelihood-ratio estimator, the mean of (h(x) - mean h) d log p(x) / dtheta with
    PyTorch's log_prob, at the same draws. For distributions whose two libraries
    reparameterise differently (PyTorch's Beta and Dirichlet differentiate through the
    marginal Beta cdf, JAX's through the gamma draws) or whose base noise cannot be read back
    from a draw. The likelihood-ratio estimator is much the noisier: the spread of its
    estimates over groups of draws sets the tolerance (one backward pass for the pathwise
    side, which for gamma-based samplers costs as much as the draw)."""
    names, params = leaves(jp)
    tp = torch64(case)
    td = case.build(torch.distributions, tp)
    simplex = isinstance(td.support, type(torch.distributions.constraints.simplex))
    v = np.linspace(0.5, 1.5, int(np.prod(xs.shape[1:]))).reshape(xs.shape[1:])
    x64 = xs.astype(np.float64)
    if simplex:  # h = v . x, and draws renormalised in float64 for PyTorch's simplex check
        x64 = x64 / x64.sum(-1, keepdims=True)
        h, dh = (v * x64).sum(tuple(range(1, x64.ndim))), np.broadcast_to(v, xs.shape)
    else:  # h = v . sigmoid(x): bounded, so both estimators have a finite variance
        s = np.exp(-np.logaddexp(0.0, -x64))  # sigmoid, without overflow for x << 0
        h, dh = (v * s).sum(tuple(range(1, x64.ndim))), v * s * (1 - s)
    grads = torchjax.autograd.grad(x, params, torchjax.tensor((dh / N2).astype(xs_dtype(x))),
                                   allow_unused=True)
    path = np.concatenate([a.ravel() for a in as_numpy_grads(grads, params)])
    log_p = td.expand(batch).log_prob(torch.tensor(x64)).reshape(N2, -1).sum(-1)
    centred = h - h.mean()
    lr = []
    for idx in np.array_split(np.arange(N2), GROUPS):
        score = (torch.tensor(centred[idx]) * log_p[idx]).mean()
        ref = torch.autograd.grad(score, [tp[k] for k in names], retain_graph=True,
                                  allow_unused=True)
        lr.append(np.concatenate([a.ravel() for a in as_numpy_grads(
            ref, [tp[k] for k in names])]))
    lr = np.array(lr)
    se = lr.std(0) / np.sqrt(GROUPS)
    gap = np.abs(path - lr.mean(0))
    assert (gap <= 6 * se + 1e-3).all(), (case.id, path, lr.mean(0), se)


CHECKS = {"cdf": check_by_cdf, "gamma": check_by_noise, "normal": check_by_noise,
          "lr": check_in_expectation}


def test_every_reparameterised_case_has_a_gradient_check():
    for case in CASES:
        t = case.build(torch.distributions, tensors(torch, case.params, grad=False))
        assert (case.noise is not None) == t.has_rsample, case.id


# -- the rest of sampling ------------------------------------------------------------------------

def test_manual_seed_reproduces_draws_and_consecutive_draws_differ():
    d = torchjax.distributions.Exponential(torchjax.tensor([0.5, 2.0, 3.0]))
    torchjax.manual_seed(7)
    a, b = d.sample((4,)), d.sample((4,))
    torchjax.manual_seed(7)
    c = d.sample((4,))
    assert np.array_equal(numpy(a), numpy(c))
    assert not np.array_equal(numpy(a), numpy(b))
    g = torchjax.Generator().manual_seed(3)
    # draws from another generator leave the global stream untouched
    torchjax.manual_seed(7)
    torchjax.randn(1, generator=g)
    assert np.array_equal(numpy(d.sample((4,))), numpy(a))


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
    # PyTorch's: the draw plus probs - probs.detach(), so d/dprobs is that of 4 (1, 2, 3) .
    # probs / sum(probs) (the Categorical normalises probs)
    tprobs = torch.tensor([0.2, 0.3, 0.5], requires_grad=True)
    tx = torch.distributions.OneHotCategoricalStraightThrough(probs=tprobs).rsample((4,))
    (tx * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_allclose(numpy(probs.grad), numpy(tprobs.grad), rtol=1e-5)


def test_von_mises_draws_wrap_to_the_circle():
    d = torchjax.distributions.VonMises(torchjax.tensor([3.0, -3.0, 0.5]),
                                        torchjax.tensor([1e-6, 50.0, 2.0]))
    x = numpy(d.sample((5000,)))
    assert (x >= -math.pi).all() and (x < math.pi).all()
    # concentration 50 around -3.0: the draws cluster there; 1e-6: nearly uniform; 2.0: the
    # mean resultant length is I1(2) / I0(2) (PyTorch's variance is one minus it)
    z = np.exp(1j * x)
    assert abs(np.angle(z[:, 1].mean()) + 3.0) < 0.05
    assert abs(z[:, 0].mean()) < 0.05
    t = torch.distributions.VonMises(torch.tensor(0.5), torch.tensor(2.0))
    assert abs(abs(z[:, 2].mean()) - (1 - t.variance.item())) < 0.03
    assert abs(np.angle(z[:, 2].mean()) - 0.5) < 0.05
