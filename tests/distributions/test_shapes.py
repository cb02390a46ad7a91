"""Shapes: sample_shape handling, batch/event shapes after expand, enumerate_support, and
the repr, for every row of cases.py against PyTorch."""

import pytest
import torch

import torchjax

from .cases import CASES
from .helpers import assert_close, tensors


def build(lib, case, grad=False):
    return case.build(lib.distributions, tensors(lib, case.params, grad=grad))


GENERIC_EXPAND = ("Normal", "Normal-f64", "Gamma-f64", "Beta", "Uniform", "Exponential", "Laplace",
                  "Poisson", "Cauchy", "Geometric-probs", "Geometric-logits", "VonMises",
                  "Chi2")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_expand_matches_torch(case):
    t, j = build(torch, case), build(torchjax, case)
    batch = (2,) + tuple(t.batch_shape)
    te, je = t.expand(batch), j.expand(batch)
    assert type(je) is type(j)
    assert tuple(je.batch_shape) == tuple(te.batch_shape) == batch
    assert tuple(je.event_shape) == tuple(te.event_shape)
    # (drawing from an expanded distribution is test_sampling's: it draws from one)
    assert je._validate_args == j._validate_args
    # scoring after expand, where expand is more than Distribution._expand_params (those
    # rows' expanded parameters are checked by test_sampling's draws)
    if case.value is not None and case.id not in GENERIC_EXPAND:
        assert_close(je.log_prob(torchjax.tensor(case.value)),
                     te.log_prob(torch.tensor(case.value)), case.rtol, case.atol)


@pytest.mark.parametrize("case", [c for c in CASES if c.id in (
    "Normal", "Categorical-logits-f64", "Bernoulli-probs", "Poisson", "Gamma-f64", "Dirichlet-f64",
    "MultivariateNormal-cov", "Uniform", "Independent-Normal", "LogNormal")],
    ids=lambda c: c.id)
def test_repr_matches_torch(case):
    assert repr(build(torchjax, case)) == repr(build(torch, case))


@pytest.mark.parametrize("name,params", [
    ("Bernoulli", {"probs": [0.2, 0.5, 0.9]}),
    ("Categorical", {"probs": [[0.2, 0.8], [0.5, 0.5], [0.9, 0.1]]}),
    ("OneHotCategorical", {"probs": [[0.2, 0.8], [0.5, 0.5], [0.9, 0.1]]}),
    ("Binomial", {"total_count": 3, "probs": [0.2, 0.5, 0.9]}),
])
def test_enumerate_support_matches_torch(name, params):
    def make(lib):
        kw = {k: lib.tensor(v) if isinstance(v, list) else v for k, v in params.items()}
        return getattr(lib.distributions, name)(**kw)
    t, j = make(torch), make(torchjax)
    assert j.has_enumerate_support
    for expand in (True, False):
        assert_close(j.enumerate_support(expand), t.enumerate_support(expand))


def test_scalar_parameters_give_empty_batch_shape():
    D = torchjax.distributions
    for d in (D.Normal(0.0, 1.0), D.Exponential(3.0), D.Bernoulli(0.3), D.Uniform(0.0, 2.0)):
        assert d.batch_shape == torchjax.Size([]) and d.event_shape == torchjax.Size([])
        x = d.sample()
        assert x.shape == torchjax.Size([]) and x.dtype == torchjax.float32


def test_independent_and_transformed_shapes():
    D = torchjax.distributions
    base = D.Normal(torchjax.zeros(2, 3), torchjax.ones(2, 3))
    ind = D.Independent(base, 1)
    assert ind.batch_shape == torchjax.Size([2]) and ind.event_shape == torchjax.Size([3])
    assert ind.log_prob(torchjax.zeros(4, 2, 3)).shape == torchjax.Size([4, 2])
    with pytest.raises(ValueError, match="reinterpreted_batch_ndims"):
        D.Independent(base, 3)
    # an affine map with batched parameters widens the base distribution's batch
    td = D.TransformedDistribution(D.Normal(0.0, 1.0),
                                   [D.AffineTransform(torchjax.zeros(3), torchjax.ones(3))])
    assert td.batch_shape == torchjax.Size([3])
    sb = D.TransformedDistribution(D.Normal(torchjax.zeros(3), torchjax.ones(3)),
                                   D.StickBreakingTransform())
    assert sb.event_shape == torchjax.Size([4]) and sb.batch_shape == torchjax.Size([])
    assert sb.sample((5,)).shape == torchjax.Size([5, 4])
