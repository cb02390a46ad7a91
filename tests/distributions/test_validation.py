"""validate_args: parameter and value checks raise PyTorch's errors, word for word."""

import pytest
import torch

import torchjax

from .helpers import message


def both(fn):
    """fn(lib, D) run with PyTorch and torchjax: (type, message) of each."""
    return (message(lambda: fn(torch, torch.distributions)),
            message(lambda: fn(torchjax, torchjax.distributions)))


ERRORS = [
    ("normal scale", lambda t, D: D.Normal(t.tensor([0.0, 1.0]), t.tensor([-1.0, 1.0]))),
    ("normal scalar scale", lambda t, D: D.Normal(0.0, -1.0)),
    ("normal nan loc", lambda t, D: D.Normal(t.tensor([float("nan")]), t.tensor([1.0]))),
    ("bernoulli probs", lambda t, D: D.Bernoulli(probs=t.tensor([0.5, 1.5]))),
    ("categorical probs", lambda t, D: D.Categorical(probs=t.tensor([-0.1, 0.6, 0.5]))),
    ("gamma rate", lambda t, D: D.Gamma(t.tensor([1.0]), t.tensor([0.0]))),
    ("dirichlet", lambda t, D: D.Dirichlet(t.tensor([1.0, -2.0]))),
    ("uniform", lambda t, D: D.Uniform(t.tensor([1.0]), t.tensor([0.0]))),
    ("mvn covariance", lambda t, D: D.MultivariateNormal(
        t.zeros(2), covariance_matrix=t.tensor([[1.0, 2.0], [2.0, 1.0]]))),
    ("mvn scale_tril", lambda t, D: D.MultivariateNormal(
        t.zeros(2), scale_tril=t.tensor([[1.0, 0.5], [0.0, 1.0]]))),
    ("geometric zero", lambda t, D: D.Geometric(probs=t.tensor([0.0, 0.5]))),
    ("binomial count", lambda t, D: D.Binomial(t.tensor([2.5]), probs=t.tensor([0.5]))),
    ("normal log_prob nan", lambda t, D: D.Normal(0.0, 1.0).log_prob(t.tensor(float("nan")))),
    ("bernoulli value", lambda t, D: D.Bernoulli(probs=0.3).log_prob(t.tensor(0.5))),
    ("poisson value", lambda t, D: D.Poisson(t.tensor([2.0])).log_prob(t.tensor([1.5]))),
    ("gamma value", lambda t, D: D.Gamma(t.tensor([1.0]), 1.0).log_prob(t.tensor([-1.0]))),
    ("categorical value", lambda t, D: D.Categorical(t.tensor([0.5, 0.5])).log_prob(
        t.tensor(2))),
    ("uniform value", lambda t, D: D.Uniform(0.0, 1.0).log_prob(t.tensor(2.0))),
    ("beta value", lambda t, D: D.Beta(t.tensor([2.0]), t.tensor([2.0])).log_prob(
        t.tensor([1.5]))),
    ("dirichlet value", lambda t, D: D.Dirichlet(t.tensor([1.0, 1.0])).log_prob(
        t.tensor([0.3, 0.3]))),
    ("event shape", lambda t, D: D.MultivariateNormal(t.zeros(2), t.eye(2)).log_prob(
        t.zeros(3))),
    ("broadcast", lambda t, D: D.Normal(t.zeros(3), 1.0).log_prob(t.zeros(2))),
    ("not a tensor", lambda t, D: D.Normal(0.0, 1.0).log_prob(0.5)),
    ("probs and logits", lambda t, D: D.Bernoulli(probs=t.tensor(0.5), logits=t.tensor(0.0))),
    ("neither", lambda t, D: D.Categorical()),
    ("scalar probs", lambda t, D: D.Categorical(probs=t.tensor(0.5))),
    ("mvn two matrices", lambda t, D: D.MultivariateNormal(t.zeros(2), t.eye(2),
                                                           scale_tril=t.eye(2))),
    ("mvn loc", lambda t, D: D.MultivariateNormal(t.tensor(0.0), t.eye(2))),
    ("lowrank factor", lambda t, D: D.LowRankMultivariateNormal(t.zeros(2), t.ones(3, 1),
                                                                t.ones(2))),
    ("mixture type", lambda t, D: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(0.0, 1.0))),
    ("mixture size", lambda t, D: D.MixtureSameFamily(D.Categorical(t.ones(3)),
                                                      D.Normal(t.zeros(2), 1.0))),
    ("independent ndims", lambda t, D: D.Independent(D.Normal(t.zeros(2), 1.0), 2)),
    ("multinomial count", lambda t, D: D.Multinomial(t.tensor(3), t.ones(2))),
    ("binomial entropy", lambda t, D: D.Binomial(t.tensor([2.0, 3.0]), t.tensor([0.5, 0.5]))
     .entropy()),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    (t_type, t_msg), (j_type, j_msg) = both(fn)
    assert t_type is not None, "PyTorch accepted it"
    assert j_type is t_type
    assert j_msg == t_msg


def test_validate_args_false_skips_the_checks():
    D = torchjax.distributions
    d = D.Normal(torchjax.tensor([0.0]), torchjax.tensor([-1.0]), validate_args=False)
    assert d.log_prob(torchjax.tensor([0.0])).isnan().all()
    p = D.Bernoulli(probs=torchjax.tensor(0.3), validate_args=False)
    p.log_prob(torchjax.tensor(0.5))  # no error
    assert D.Normal(0.0, 1.0, validate_args=False).log_prob(0.5).dtype == torchjax.float32


def test_set_default_validate_args():
    D = torchjax.distributions
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(0.0, -1.0)
        with pytest.raises(ValueError):
            D.Normal(0.0, -1.0, validate_args=True)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="to satisfy the constraint"):
        D.Normal(0.0, -1.0)


def test_lazy_parameters_are_not_validated_and_expand_does_not_revalidate():
    D = torchjax.distributions
    d = D.Bernoulli(logits=torchjax.tensor([100.0, -100.0]))
    assert d.probs.tolist() == [1.0, 0.0]
    e = D.Normal(torchjax.zeros(2), 1.0).expand((3, 2))
    assert e._validate_args and e.batch_shape == torchjax.Size([3, 2])


def test_missing_pytorch_distributions_say_so():
    D = torchjax.distributions
    # they import (scripts import them at module level) and refuse to be built
    from torchjax.distributions import LKJCholesky
    assert hasattr(D, "Wishart") and issubclass(LKJCholesky, D.Distribution)
    with pytest.raises(NotImplementedError, match="Wishart is not implemented"):
        D.Wishart(torchjax.tensor(3.0), torchjax.eye(2))
    with pytest.raises(NotImplementedError, match="LKJCholesky is not implemented"):
        LKJCholesky(2, 1.0)
    assert not hasattr(D, "NoSuchDistribution")
    with pytest.raises(NotImplementedError, match="does not implement cdf"):
        D.Poisson(torchjax.tensor([1.0])).cdf(torchjax.tensor([1.0]))
    with pytest.raises(NotImplementedError, match="does not implement mode"):
        D.Multinomial(3, torchjax.ones(2)).mode  # noqa: B018
