"""kl_divergence against PyTorch for every registered pair, values and gradients; the
registry's dispatch and its errors."""

import warnings

import numpy as np
import pytest
import torch

import torchjax

from .cases import (
    CONC_K,
    COV2,
    LOC2,
    LOGITS,
    LOGITS_K,
    POS,
    POS2,
    PROBS,
    PROBS_K,
    REAL,
    TRIL2,
    f32,
)
from .helpers import assert_close, numpy, tensors

W = f32([[[1.0], [0.5]], [[0.2], [-0.7]], [[1.5], [0.3]]])
DIAG = f32([[1.0, 2.0], [0.5, 0.7], [1.2, 0.3]])



def backward_finite(lib, out):
    """Backward from the finite entries of out (a cotangent of 1 there, 0 elsewhere: no extra
    ops to compile)."""
    finite = np.isfinite(numpy(out)).astype(numpy(out).dtype)
    lib.autograd.backward([out], [lib.tensor(finite)])


# (id, build(D, p) -> (p_dist, q_dist), parameters)
PAIRS = [
    ("Normal", lambda D, p: (D.Normal(p["a"], p["s"]), D.Normal(p["b"], p["t"])),
     {"a": REAL, "s": POS, "b": REAL[::-1].copy(), "t": POS2}),
    ("Categorical", lambda D, p: (D.Categorical(probs=p["p"]), D.Categorical(logits=p["q"])),
     {"p": PROBS_K, "q": LOGITS_K}),
    ("OneHotCategorical", lambda D, p: (D.OneHotCategorical(logits=p["q"]),
                                        D.OneHotCategorical(probs=p["p"])),
     {"p": PROBS_K, "q": LOGITS_K}),
    ("Bernoulli", lambda D, p: (D.Bernoulli(probs=p["p"]), D.Bernoulli(logits=p["q"])),
     {"p": PROBS, "q": LOGITS}),
    ("Beta", lambda D, p: (D.Beta(p["a"], p["b"]), D.Beta(p["b"], p["a"] + 1)),
     {"a": POS, "b": POS2}),
    ("Gamma", lambda D, p: (D.Gamma(p["a"], p["b"]), D.Gamma(p["b"], p["a"])),
     {"a": POS, "b": POS2}),
    ("Dirichlet", lambda D, p: (D.Dirichlet(p["c"]), D.Dirichlet(p["c"].flip(-1) + 0.5)),
     {"c": CONC_K}),
    ("MultivariateNormal", lambda D, p: (
        D.MultivariateNormal(p["m"], covariance_matrix=p["cov"]),
        D.MultivariateNormal(p["m"].flip(0), scale_tril=p["tril"])),
     {"m": LOC2, "cov": COV2, "tril": TRIL2}),
    ("LowRank-LowRank", lambda D, p: (
        D.LowRankMultivariateNormal(p["m"], p["w"], p["d"]),
        D.LowRankMultivariateNormal(p["m"].flip(0), p["w"].flip(0), p["d"] + 0.5)),
     {"m": LOC2, "w": W, "d": DIAG}),
    ("MultivariateNormal-LowRank", lambda D, p: (
        D.MultivariateNormal(p["m"], scale_tril=p["tril"]),
        D.LowRankMultivariateNormal(p["m"].flip(0), p["w"], p["d"])),
     {"m": LOC2, "tril": TRIL2, "w": W, "d": DIAG}),
    ("LowRank-MultivariateNormal", lambda D, p: (
        D.LowRankMultivariateNormal(p["m"], p["w"], p["d"]),
        D.MultivariateNormal(p["m"].flip(0), scale_tril=p["tril"])),
     {"m": LOC2, "tril": TRIL2, "w": W, "d": DIAG}),
    ("Uniform", lambda D, p: (D.Uniform(p["lo"], p["hi"]), D.Uniform(p["lo"] - 1, p["hi"] * 2)),
     {"lo": f32([0.0, -1.0, 2.0]), "hi": f32([1.0, 1.0, 5.0])}),
    ("Uniform-infinite", lambda D, p: (D.Uniform(p["lo"], p["hi"]),
                                       D.Uniform(p["lo"] + 0.5, p["hi"])),
     {"lo": f32([0.0, -1.0, 2.0]), "hi": f32([1.0, 1.0, 5.0])}),
    ("Exponential", lambda D, p: (D.Exponential(p["a"]), D.Exponential(p["b"])),
     {"a": POS, "b": POS2}),
    ("Laplace", lambda D, p: (D.Laplace(p["m"], p["s"]), D.Laplace(p["m"] * 2, p["t"])),
     {"m": REAL, "s": POS, "t": POS2}),
    ("Poisson", lambda D, p: (D.Poisson(p["a"]), D.Poisson(p["b"])), {"a": POS, "b": POS2}),
    ("Independent", lambda D, p: (D.Independent(D.Normal(p["a"], p["s"]), 1),
                                  D.Independent(D.Normal(p["b"], p["t"]), 1)),
     {"a": REAL, "s": POS, "b": REAL * 2, "t": POS2}),
    ("Binomial", lambda D, p: (D.Binomial(5, probs=p["p"]), D.Binomial(5, logits=p["q"])),
     {"p": PROBS, "q": LOGITS}),
    ("Geometric", lambda D, p: (D.Geometric(probs=p["p"]), D.Geometric(logits=p["q"])),
     {"p": PROBS, "q": LOGITS}),
    ("Gumbel", lambda D, p: (D.Gumbel(p["m"], p["s"]), D.Gumbel(p["m"] * 2, p["t"])),
     {"m": REAL, "s": POS, "t": POS2}),
    ("HalfNormal", lambda D, p: (D.HalfNormal(p["s"]), D.HalfNormal(p["t"])),
     {"s": POS, "t": POS2}),
    ("Pareto", lambda D, p: (D.Pareto(p["s"], p["a"]), D.Pareto(p["s"] * 0.5, p["b"])),
     {"s": POS, "a": POS2, "b": POS}),
    ("Cauchy", lambda D, p: (D.Cauchy(p["m"], p["s"]), D.Cauchy(p["m"] * 2, p["t"])),
     {"m": REAL, "s": POS, "t": POS2}),
    ("ContinuousBernoulli", lambda D, p: (D.ContinuousBernoulli(p["p"]),
                                          D.ContinuousBernoulli(logits=p["q"])),
     {"p": PROBS, "q": LOGITS}),
    ("LogNormal", lambda D, p: (D.LogNormal(p["a"], p["s"]), D.LogNormal(p["b"], p["t"])),
     {"a": REAL, "s": POS, "b": REAL * 2, "t": POS2}),
    ("Chi2", lambda D, p: (D.Chi2(p["a"]), D.Chi2(p["b"])), {"a": POS, "b": POS2}),
    ("Uniform-Normal", lambda D, p: (D.Uniform(p["lo"], p["hi"]), D.Normal(p["m"], p["s"])),
     {"lo": f32([0.0, -1.0, 2.0]), "hi": f32([1.0, 1.0, 5.0]), "m": REAL, "s": POS}),
    ("Bernoulli-Poisson", lambda D, p: (D.Bernoulli(probs=p["p"]), D.Poisson(p["a"])),
     {"p": PROBS, "a": POS}),
]


@pytest.mark.parametrize("name,build,params", PAIRS, ids=[p[0] for p in PAIRS])
def test_kl_divergence_matches_torch(name, build, params):
    results, grads = [], []
    for lib in (torch, torchjax):
        p = tensors(lib, params)
        kl = lib.distributions.kl_divergence(*build(lib.distributions, p))
        results.append(kl)
        # only finite entries are differentiated (inf entries have no useful gradient)
        backward_finite(lib, kl)
        grads.append({k: v.grad for k, v in p.items()})
    assert_close(results[1], results[0], 1e-4, 1e-5, what=name)
    for k in params:
        if grads[0][k] is None:
            continue
        assert_close(grads[1][k], grads[0][k], 5e-4, 5e-5, what=f"grad of {k}")


def test_unregistered_pairs_raise_not_implemented():
    D = torchjax.distributions
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p "
                                                  "type Normal and q type Categorical"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(torchjax.ones(2)))
    # two different exponential families reach the generic Bregman rule, which refuses them
    with pytest.raises(NotImplementedError, match="different exponential families"):
        D.kl_divergence(D.Gamma(1.0, 1.0), D.Bernoulli(0.5))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Independent(D.Normal(torchjax.zeros(2), 1.0), 1),
                        D.Independent(D.Normal(torchjax.zeros(2, 2), 1.0), 2))


def test_exponential_family_bregman_fallback_matches_closed_form():
    D = torchjax.distributions
    p, q = D.Poisson(torchjax.tensor([1.5, 3.0])), D.Poisson(torchjax.tensor([2.0, 0.5]))
    bregman = D.kl._kl_pairs._kl_expfamily_expfamily(p, q)
    assert_close(bregman, D.kl_divergence(p, q), 1e-5, 1e-6)
    # and ExponentialFamily.entropy, from the same log normaliser
    n = D.Normal(torchjax.tensor([0.0, 1.0]), torchjax.tensor([0.5, 2.0]))
    assert_close(D.ExponentialFamily.entropy(n), n.entropy(), 1e-5, 1e-6)


def test_register_kl_picks_the_most_specific_pair():
    D = torchjax.distributions

    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)
    assert np.isclose(D.kl_divergence(p, q).item(),
                      D.kl_divergence(D.Normal(0.0, 1.0), q).item())
    calls = []

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p, q):
        calls.append((type(p), type(q)))
        return torchjax.tensor(0.0)

    try:
        assert D.kl_divergence(p, q).item() == 0.0 and calls == [(MyNormal, D.Normal)]
        # ambiguous: (MyNormal, Normal) and (Normal, MyNormal) both match two MyNormals

        @D.register_kl(D.Normal, MyNormal)
        def _other(p, q):
            return torchjax.tensor(1.0)

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            D.kl_divergence(MyNormal(0.0, 1.0), MyNormal(0.0, 1.0))
        assert any("Ambiguous kl_divergence(MyNormal, MyNormal)" in str(x.message) for x in w)
    finally:
        D.kl._KL_REGISTRY.pop((MyNormal, D.Normal), None)
        D.kl._KL_REGISTRY.pop((D.Normal, MyNormal), None)
        D.kl._KL_MEMOIZE.clear()
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


# -- pairs of different families -----------------------------------------------------------------

# one parametrisation per family (batch (3,)); Pareto's alpha crosses 1 and 2 and the Uniforms
# cross [0, 1] and the half-lines, where PyTorch's closed forms turn to inf
FAMILY = {
    "Beta": (lambda D, p: D.Beta(p["a"], p["b"]), {"a": f32([0.5, 2.0, 3.0]),
                                                   "b": f32([1.5, 0.7, 2.0])}),
    "ContinuousBernoulli": (lambda D, p: D.ContinuousBernoulli(p["p"]),
                            {"p": f32([0.2, 0.5, 0.8])}),
    "Exponential": (lambda D, p: D.Exponential(p["r"]), {"r": f32([0.5, 1.5, 3.0])}),
    "Gamma": (lambda D, p: D.Gamma(p["a"], p["r"]), {"a": f32([0.5, 2.0, 1.0]),
                                                     "r": f32([1.5, 0.7, 1.0])}),
    "Gumbel": (lambda D, p: D.Gumbel(p["l"], p["s"]), {"l": f32([0.5, -1.0, 2.0]),
                                                       "s": f32([1.5, 0.7, 2.0])}),
    "Laplace": (lambda D, p: D.Laplace(p["l"], p["s"]), {"l": f32([0.5, -1.0, 2.0]),
                                                         "s": f32([1.5, 0.7, 2.0])}),
    "Normal": (lambda D, p: D.Normal(p["l"], p["s"]), {"l": f32([0.5, -1.0, 2.0]),
                                                       "s": f32([1.5, 0.7, 2.0])}),
    "Pareto": (lambda D, p: D.Pareto(p["s"], p["a"]), {"s": f32([0.5, 1.0, 0.1]),
                                                       "a": f32([0.8, 1.5, 3.0])}),
    "Uniform": (lambda D, p: D.Uniform(p["lo"], p["hi"]), {"lo": f32([0.1, -1.0, 2.0]),
                                                           "hi": f32([0.9, 1.0, 5.0])}),
}


def _cross_pairs():
    pairs = sorted((p.__name__, q.__name__) for p, q in torch.distributions.kl._KL_REGISTRY
                   if p is not q and p.__name__ in FAMILY and q.__name__ in FAMILY)
    finite, infinite = [], []
    for p, q in pairs:
        fn = torch.distributions.kl._KL_REGISTRY[getattr(torch.distributions, p),
                                                  getattr(torch.distributions, q)]
        (infinite if fn.__name__.endswith("_infinity") else finite).append((p, q))
    return finite, infinite


CROSS, CROSS_INFINITE = _cross_pairs()


def _cross(lib, p_name, q_name, grad):
    (bp, pp), (bq, pq) = FAMILY[p_name], FAMILY[q_name]
    tp, tq = tensors(lib, pp, grad), tensors(lib, pq, grad)
    kl = lib.distributions.kl_divergence(bp(lib.distributions, tp), bq(lib.distributions, tq))
    return kl, {**{"p." + k: v for k, v in tp.items()}, **{"q." + k: v for k, v in tq.items()}}


def test_cross_family_registry_is_pytorchs():
    registered = {(p.__name__, q.__name__) for p, q in torchjax.distributions.kl._KL_REGISTRY}
    assert registered == {(p.__name__, q.__name__)
                          for p, q in torch.distributions.kl._KL_REGISTRY}
    assert len(CROSS) > 25 and len(CROSS_INFINITE) > 25


@pytest.mark.parametrize("p_name,q_name", CROSS, ids=[f"{p}-{q}" for p, q in CROSS])
def test_cross_family_kl_matches_torch(p_name, q_name):
    out = {}
    for lib in (torch, torchjax):
        kl, params = _cross(lib, p_name, q_name, grad=True)
        backward_finite(lib, kl)
        out[lib] = kl, params
    (tk, tparams), (jk, jparams) = out[torch], out[torchjax]
    assert_close(jk, tk, 1e-4, 1e-5, what="kl")
    for k, t in tparams.items():
        if t.grad is not None:
            assert_close(jparams[k].grad, t.grad, 5e-4, 5e-5, what=f"grad of {k}")


def test_cross_family_kl_without_common_support_is_infinite():
    for p_name, q_name in CROSS_INFINITE:
        t, _ = _cross(torch, p_name, q_name, grad=False)
        j, _ = _cross(torchjax, p_name, q_name, grad=False)
        assert_close(j, t, what=f"{p_name}-{q_name}")
