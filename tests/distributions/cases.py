"""The distributions under test: one row per (distribution, parametrisation), read by the
value, gradient, shape and sampling tests.

A row gives the constructor (called with torch.distributions or torchjax.distributions and
the parameters as that library's tensors), the parameters as numpy arrays (batch shape (3,)
throughout, so compiled programs are shared between rows), a value to score and, where the
distribution has them, points for cdf and icdf.
"""

from dataclasses import dataclass

import numpy as np


def f32(x):
    return np.array(x, dtype=np.float32)


def f64(x):
    return np.array(x, dtype=np.float64)


@dataclass
class Case:
    id: str
    build: object  # build(D, p) -> distribution, D = torch(jax).distributions
    params: dict
    value: np.ndarray | None = None  # for log_prob: sample dims + batch + event
    cdf: np.ndarray | None = None
    icdf: np.ndarray | None = None
    rtol: float = 2e-5
    atol: float = 2e-6
    # quantities PyTorch cannot differentiate (or only through a path we do not share)
    no_grad: tuple = ()
    # quantities where PyTorch's value is wrong, and torchjax's is checked another way
    # (test_values.py)
    torch_wrong: tuple = ()
    # how test_sampling checks the statistics of the draws: "moments" (mean and variance
    # against PyTorch's), "base" (those of the draws mapped back through PyTorch's transforms,
    # against its base distribution: for heavy-tailed transformed distributions, whose own
    # sample variance is too noisy to test), "cdf" (PyTorch's cdf of the draws is uniform:
    # for distributions without moments), "relaxed" (the relaxed Bernoulli's draws lie above
    # 1/2, and the relaxed one-hot's argmax is each category, with the probabilities of the
    # underlying discrete distribution), a function (PyTorch's distribution, draws) ->
    # (mapped draws, a PyTorch distribution whose moments they have), or None (checked apart)
    stats: str | None = "moments"
    # how rsample's gradients are checked against PyTorch (test_sampling.py): "cdf" (the
    # implicit gradient -dF/dtheta / density, from PyTorch's cdf), "gamma" or "normal" (PyTorch's
    # own rsample run on the base noise of torchjax's draws, which `recover` computes from a
    # draw and PyTorch's distribution), "lr" (in expectation, against the likelihood-ratio
    # estimator built on PyTorch's log_prob)
    noise: str | None = None
    recover: object = None


def _student_t_as_beta(t, x):
    """StudentT has no variance for df <= 2 and no cdf in PyTorch, but z = (x - loc) / scale
    gives z^2 / (df + z^2) ~ Beta(1/2, df/2), whose bounded draws have every moment."""
    import torch
    z2 = ((x - t.loc) / t.scale) ** 2
    return z2 / (t.df + z2), torch.distributions.Beta(0.5, t.df / 2)


POS = f32([0.6, 1.7, 3.2])
POS2 = f32([1.4, 0.8, 2.5])
REAL = f32([0.3, -1.2, 2.0])
PROBS = f32([0.2, 0.55, 0.9])
LOGITS = f32([-1.5, 0.3, 2.0])
REAL_V = f32([[0.1, -0.5, 2.2], [1.3, 0.0, -1.0]])
POS_V = f32([[0.4, 1.2, 2.7], [1.9, 0.2, 5.0]])
UNIT_V = f32([[0.1, 0.45, 0.8], [0.6, 0.05, 0.95]])
COUNT_V = f32([[0.0, 2.0, 5.0], [3.0, 1.0, 0.0]])
BOOL_V = f32([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
Q = f32([[0.1, 0.5, 0.9], [0.3, 0.7, 0.25]])
PROBS_K = f32([[0.1, 0.2, 0.3, 0.4], [0.5, 0.1, 0.2, 0.2], [0.7, 0.1, 0.1, 0.1]])
LOGITS_K = f32([[0.5, -1.0, 2.0, 0.0], [1.5, 0.2, -0.3, 0.1], [0.0, 0.0, 1.0, -2.0]])
INDEX_V = np.array([[0, 3, 1], [2, 0, 3]], dtype=np.int64)
ONE_HOT_V = np.eye(4, dtype=np.float32)[INDEX_V]
COUNTS_K = f32([[[1, 2, 0, 3], [0, 0, 6, 0], [2, 2, 1, 1]],
                [[6, 0, 0, 0], [1, 1, 2, 2], [0, 3, 3, 0]]])
SIMPLEX_V = f32([[[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25], [0.7, 0.1, 0.1, 0.1]],
                 [[0.4, 0.3, 0.2, 0.1], [0.05, 0.05, 0.8, 0.1], [0.3, 0.3, 0.2, 0.2]]])
CONC_K = f32([[0.5, 1.5, 2.0, 3.0], [2.0, 2.0, 2.0, 2.0], [0.7, 0.8, 0.9, 0.6]])
LOC2 = f32([[0.0, 1.0], [-1.0, 0.5], [2.0, -2.0]])
COV2 = f32([[[2.0, 0.5], [0.5, 1.0]], [[1.0, -0.3], [-0.3, 0.5]], [[3.0, 1.0], [1.0, 2.0]]])
TRIL2 = f32([[[1.2, 0.0], [0.4, 0.9]], [[0.7, 0.0], [-0.2, 1.5]], [[2.0, 0.0], [0.3, 0.5]]])
VEC2_V = f32([[[0.3, 0.7], [-1.0, 1.0], [2.5, -1.5]], [[0.0, 0.0], [1.0, 2.0], [-0.5, 0.5]]])
ANGLE_V = f32([[0.1, -2.0, 3.0], [1.0, 0.5, -0.5]])

CASES = [
    Case("Normal", lambda D, p: D.Normal(p["loc"], p["scale"]), {"loc": REAL, "scale": POS},
         REAL_V, REAL_V, Q),
    Case("Normal-f64", lambda D, p: D.Normal(p["loc"], p["scale"]),
         {"loc": f64(REAL), "scale": f64(POS)}, f64(REAL_V), f64(REAL_V), f64(Q),
         rtol=1e-10, atol=1e-12),
    Case("Categorical-probs", lambda D, p: D.Categorical(probs=p["probs"]),
         {"probs": PROBS_K * 3}, INDEX_V),
    Case("Categorical-logits", lambda D, p: D.Categorical(logits=p["logits"]),
         {"logits": LOGITS_K}, INDEX_V),
    Case("Bernoulli-probs", lambda D, p: D.Bernoulli(probs=p["probs"]), {"probs": PROBS},
         BOOL_V),
    Case("Bernoulli-logits", lambda D, p: D.Bernoulli(logits=p["logits"]),
         {"logits": LOGITS}, BOOL_V),
    Case("Beta", lambda D, p: D.Beta(p["a"], p["b"]), {"a": POS, "b": POS2}, UNIT_V,
         rtol=1e-4, atol=1e-5),
    Case("Gamma", lambda D, p: D.Gamma(p["a"], p["rate"]), {"a": POS, "rate": POS2}, POS_V,
         POS_V, rtol=1e-4, atol=1e-5, no_grad=("cdf",)),
    Case("Dirichlet", lambda D, p: D.Dirichlet(p["c"]), {"c": CONC_K}, SIMPLEX_V,
         rtol=1e-4, atol=1e-5),
    Case("MultivariateNormal-cov",
         lambda D, p: D.MultivariateNormal(p["loc"], covariance_matrix=p["cov"]),
         {"loc": LOC2, "cov": COV2}, VEC2_V, rtol=1e-4, atol=1e-5),
    Case("MultivariateNormal-tril",
         lambda D, p: D.MultivariateNormal(p["loc"], scale_tril=p["tril"]),
         {"loc": LOC2, "tril": TRIL2}, VEC2_V, rtol=1e-4, atol=1e-5),
    Case("MultivariateNormal-precision-f64",
         lambda D, p: D.MultivariateNormal(p["loc"], precision_matrix=p["prec"]),
         {"loc": f64(LOC2), "prec": f64(COV2)}, f64(VEC2_V), rtol=1e-9, atol=1e-11),
    Case("LowRankMultivariateNormal",
         lambda D, p: D.LowRankMultivariateNormal(p["loc"], p["w"], p["d"]),
         {"loc": LOC2, "w": f32([[[1.0], [0.5]], [[0.2], [-0.7]], [[1.5], [0.3]]]),
          "d": f32([[1.0, 2.0], [0.5, 0.7], [1.2, 0.3]])}, VEC2_V, rtol=1e-4, atol=1e-5),
    Case("Uniform", lambda D, p: D.Uniform(p["low"], p["high"]),
         {"low": f32([0.0, -1.0, 2.0]), "high": f32([1.0, 1.0, 5.0])},
         f32([[0.5, 0.0, 2.2], [0.1, -0.9, 4.9]]), f32([[0.5, 0.0, 2.2], [0.1, -0.9, 4.9]]), Q),
    Case("Exponential", lambda D, p: D.Exponential(p["rate"]), {"rate": POS}, POS_V, POS_V, Q),
    Case("Laplace", lambda D, p: D.Laplace(p["loc"], p["scale"]),
         {"loc": REAL, "scale": POS}, REAL_V, REAL_V, Q),
    Case("Poisson", lambda D, p: D.Poisson(p["rate"]), {"rate": POS}, COUNT_V),
    Case("Binomial-probs", lambda D, p: D.Binomial(10, probs=p["probs"]), {"probs": PROBS},
         COUNT_V, rtol=1e-4, atol=1e-5),
    Case("Binomial-logits", lambda D, p: D.Binomial(p["n"], logits=p["logits"]),
         {"n": f32([5.0, 8.0, 6.0]), "logits": LOGITS}, COUNT_V, rtol=1e-4, atol=1e-5),
    Case("Multinomial", lambda D, p: D.Multinomial(6, probs=p["probs"]),
         {"probs": PROBS_K}, COUNTS_K, rtol=1e-4, atol=1e-5),
    Case("OneHotCategorical", lambda D, p: D.OneHotCategorical(logits=p["logits"]),
         {"logits": LOGITS_K}, ONE_HOT_V),
    Case("LogNormal", lambda D, p: D.LogNormal(p["loc"], p["scale"]),
         {"loc": REAL * 0.3, "scale": POS * 0.5}, POS_V, POS_V, Q, rtol=1e-4, atol=1e-5,
         stats="base"),
    Case("StudentT", lambda D, p: D.StudentT(p["df"], p["loc"], p["scale"]),
         {"df": f32([1.5, 3.0, 0.8]), "loc": REAL, "scale": POS}, REAL_V,
         rtol=1e-4, atol=1e-5, stats=_student_t_as_beta),
    Case("Cauchy", lambda D, p: D.Cauchy(p["loc"], p["scale"]), {"loc": REAL, "scale": POS},
         REAL_V, REAL_V, Q, stats="cdf"),
    Case("Gumbel", lambda D, p: D.Gumbel(p["loc"], p["scale"]), {"loc": REAL, "scale": POS},
         REAL_V, REAL_V, Q, rtol=1e-4, atol=1e-5),
    Case("Geometric-probs", lambda D, p: D.Geometric(probs=p["probs"]), {"probs": PROBS},
         COUNT_V),
    Case("Geometric-logits", lambda D, p: D.Geometric(logits=p["logits"]),
         {"logits": LOGITS}, COUNT_V),
    Case("HalfNormal", lambda D, p: D.HalfNormal(p["scale"]), {"scale": POS}, POS_V, POS_V, Q),
    Case("HalfCauchy", lambda D, p: D.HalfCauchy(p["scale"]), {"scale": POS}, POS_V, POS_V, Q,
         stats="cdf"),
    Case("Chi2", lambda D, p: D.Chi2(p["df"]), {"df": POS * 2}, POS_V, POS_V,
         rtol=1e-4, atol=1e-5, no_grad=("cdf",)),
    Case("Pareto", lambda D, p: D.Pareto(p["scale"], p["alpha"]),
         {"scale": f32([0.3, 0.15, 0.1]), "alpha": f32([0.8, 2.5, 3.5])}, POS_V, POS_V, Q,
         rtol=1e-4, atol=1e-5, stats="base"),  # alpha 0.8: no mean
    Case("Weibull", lambda D, p: D.Weibull(p["scale"], p["k"]), {"scale": POS, "k": POS2},
         POS_V, POS_V, Q, rtol=1e-4, atol=1e-5),
    Case("VonMises", lambda D, p: D.VonMises(p["loc"], p["k"]),
         {"loc": REAL, "k": f32([0.5, 4.0, 12.0])}, ANGLE_V, rtol=1e-4, atol=1e-5,
         stats=None),  # its mean is a circular mean: test_sampling checks it apart
    Case("MixtureSameFamily",
         lambda D, p: D.MixtureSameFamily(D.Categorical(probs=p["mix"]),
                                          D.Normal(p["loc"], p["scale"])),
         {"mix": PROBS_K, "loc": LOGITS_K, "scale": CONC_K}, REAL_V, REAL_V,
         rtol=1e-4, atol=1e-5),
    Case("RelaxedBernoulli", lambda D, p: D.RelaxedBernoulli(p["t"], probs=p["probs"]),
         {"t": f32(0.7), "probs": PROBS}, UNIT_V, rtol=1e-4, atol=1e-5, stats="relaxed"),
    Case("RelaxedOneHotCategorical",
         lambda D, p: D.RelaxedOneHotCategorical(p["t"], logits=p["logits"]),
         {"t": f32(0.7), "logits": LOGITS_K}, SIMPLEX_V, rtol=1e-4, atol=1e-5,
         stats="relaxed"),
    Case("ContinuousBernoulli", lambda D, p: D.ContinuousBernoulli(p["probs"]),
         {"probs": f32([0.2, 0.5, 0.8])}, UNIT_V, UNIT_V, Q, rtol=1e-4, atol=1e-5),
    Case("NegativeBinomial", lambda D, p: D.NegativeBinomial(p["n"], probs=p["probs"]),
         {"n": POS * 3, "probs": PROBS * 0.9}, COUNT_V, rtol=1e-4, atol=1e-5),
    Case("InverseGamma", lambda D, p: D.InverseGamma(p["a"], p["rate"]),
         {"a": f32([0.6, 1.7, 3.2]), "rate": POS2}, POS_V, POS_V, rtol=1e-4, atol=1e-5,
         no_grad=("cdf",), stats="base"),  # heavy tails: its variance is often infinite
    Case("LogisticNormal", lambda D, p: D.LogisticNormal(p["loc"], p["scale"]),
         {"loc": REAL, "scale": POS * 0.5}, f32([[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]]),
         rtol=1e-4, atol=1e-5, stats="base"),  # PyTorch gives it no mean to compare with
    Case("Kumaraswamy", lambda D, p: D.Kumaraswamy(p["a"], p["b"]), {"a": POS, "b": POS2},
         UNIT_V, UNIT_V, Q, rtol=1e-4, atol=1e-5, torch_wrong=("mode",)),
    Case("Independent-Normal", lambda D, p: D.Independent(D.Normal(p["loc"], p["scale"]), 1),
         {"loc": REAL, "scale": POS}, REAL_V),
]


def _gamma_noise(t, x):
    """The standard gamma draw behind a Gamma (or Chi2) draw x."""
    return x * t.rate


def _inverse_gamma_noise(t, x):
    return t.rate / x


def _normal_noise(t, x):
    return (x - t.loc) / t.scale


def _independent_normal_noise(t, x):
    return _normal_noise(t.base_dist, x)


def _mvn_noise(t, x):
    import torch
    low = t._unbroadcasted_scale_tril
    return torch.linalg.solve_triangular(low, (x - t.loc).unsqueeze(-1), upper=False)[..., 0]


def _logistic_normal_noise(t, x):
    import torch
    y = torch.distributions.StickBreakingTransform().inv(x)
    return (y - t.loc) / t.scale


_NOISE = {
    "cdf": ("Normal", "Normal-f64", "Uniform", "Exponential", "Laplace", "LogNormal", "Cauchy",
            "Gumbel", "HalfNormal", "HalfCauchy", "Pareto", "Weibull", "ContinuousBernoulli",
            "Kumaraswamy"),
    "gamma": ("Gamma", "Chi2", "InverseGamma"),
    "normal": ("MultivariateNormal-cov", "MultivariateNormal-tril",
               "MultivariateNormal-precision-f64", "LogisticNormal", "Independent-Normal"),
    "lr": ("Beta", "Dirichlet", "StudentT", "LowRankMultivariateNormal", "RelaxedBernoulli",
           "RelaxedOneHotCategorical"),
}
# (the torch.distributions module whose noise source is replaced, noise from (dist, draw))
_RECOVER = {
    "Gamma": ("gamma", _gamma_noise),
    "Chi2": ("gamma", _gamma_noise), "InverseGamma": ("gamma", _inverse_gamma_noise),
    "MultivariateNormal-cov": ("multivariate_normal", _mvn_noise),
    "MultivariateNormal-tril": ("multivariate_normal", _mvn_noise),
    "MultivariateNormal-precision-f64": ("multivariate_normal", _mvn_noise),
    "LogisticNormal": ("normal", _logistic_normal_noise),
    "Independent-Normal": ("normal", _independent_normal_noise),
}
for _case in CASES:
    _case.noise = next((k for k, ids in _NOISE.items() if _case.id in ids), None)
    _case.recover = _RECOVER.get(_case.id)


def _in_float64(case):
    """The row with its float32 arrays in float64, held to float64's precision (a float32
    step anywhere in a path shows as an error near 1e-7), its id marked -f64."""
    def widen(v):
        return v.astype(np.float64) if isinstance(v, np.ndarray) and v.dtype == np.float32 else v
    case.id += "-f64"
    case.params = {k: widen(v) for k, v in case.params.items()}
    case.value, case.cdf, case.icdf = widen(case.value), widen(case.cdf), widen(case.icdf)
    case.rtol, case.atol = 1e-9, 1e-11


# These rows run in float64 instead (the others, and Normal-f64 beside Normal, in float32):
# torchjax turns on JAX's x64 mode only inside its own scope, so each float64 path is checked
# to keep float64 from parameters to log_prob, entropy, moments, cdf/icdf, gradients and draws.
# One row per mechanism that handles dtypes itself: counts made floating (Binomial,
# NegativeBinomial), integer draws from floating parameters (Categorical), jax.random's gamma
# (Gamma, Dirichlet), lazily computed probs/logits (Bernoulli), the Woodbury linear algebra,
# the Taylor branches (ContinuousBernoulli), transforms (LogisticNormal, Pareto), mixtures.
# VonMises and Multinomial stay in float32: PyTorch's own float64 results carry float32
# roundings there (docs/coverage.md, distributions' known differences).
FLOAT64 = ("Binomial-logits", "NegativeBinomial", "Categorical-logits", "Gamma", "Dirichlet",
           "Bernoulli-logits", "LowRankMultivariateNormal", "ContinuousBernoulli",
           "LogisticNormal", "Pareto", "MixtureSameFamily")
for _case in CASES:
    if _case.id in FLOAT64:
        _in_float64(_case)
