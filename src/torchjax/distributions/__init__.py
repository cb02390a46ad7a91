"""torchjax.distributions: PyTorch's torch.distributions on torchjax tensors.

Distributions are written on torchjax ops, so gradients flow from log_prob, entropy, cdf, KL
and rsample back to the parameters. Their longer formulas are pure JAX functions of arrays
run through `interop.from_jax` (one tape node each, its backward JAX's vjp), and their
samplers are jax.random's, keyed by torchjax's generator (`manual_seed` reproduces draws;
the values cannot equal PyTorch's bits). Parameter and support validation follows PyTorch's
rules and messages.

Example::

    import torchjax as torch
    from torchjax.distributions import Normal, kl_divergence

    loc = torch.zeros(3, requires_grad=True)
    d = Normal(loc, 1.0)
    x = d.rsample((10,))            # differentiable draws
    d.log_prob(x).sum().backward()  # gradients reach loc
"""

from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "CatTransform",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "ContinuousBernoulli",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "Dirichlet",
    "Distribution",
    "ExpTransform",
    "Exponential",
    "ExponentialFamily",
    "Gamma",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "IndependentTransform",
    "InverseGamma",
    "Kumaraswamy",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "LowRankMultivariateNormal",
    "LowerCholeskyTransform",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Pareto",
    "Poisson",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "StudentT",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "VonMises",
    "Weibull",
    "biject_to",
    "constraints",
    "identity_transform",
    "kl_divergence",
    "register_kl",
    "transform_to",
    "transforms",
]

# PyTorch distributions torchjax does not have yet. Each is a name that imports (scripts
# import them at module level, and `hasattr` checks must not raise) and whose constructor
# raises NotImplementedError naming it.
_NOT_YET = ("FisherSnedecor", "GeneralizedPareto", "LKJCholesky", "Wishart")


def _not_yet(name: str) -> type:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            f"torchjax.distributions.{name} is not implemented yet (it is "
            f"torch.distributions.{name} in PyTorch); the implemented distributions are "
            "listed in torchjax.distributions.__all__")

    return type(name, (Distribution,), {"__init__": __init__, "__module__": __name__,
                                        "__doc__": f"Not implemented: torch.distributions.{name}."})


for _name in _NOT_YET:
    globals()[_name] = _not_yet(_name)
del _name
