"""Constraints, transforms and biject_to/transform_to against PyTorch."""

import numpy as np
import pytest
import torch

import torchjax

from .helpers import assert_close, message, numpy

X = np.array([[0.3, -1.2, 2.0], [1.1, 0.4, -0.7]], dtype=np.float32)
POS = np.array([[0.3, 1.2, 2.0], [1.1, 0.4, 0.7]], dtype=np.float32)
SQUARE = np.array([[[1.0, 0.2, 0.0], [0.4, 2.0, 0.0], [-0.3, 0.5, 1.5]],
                   [[0.5, -1.0, 0.3], [0.1, 0.3, 0.2], [1.0, 0.2, -0.4]]], dtype=np.float32)

# (id, make(D, t) -> transform, input, whether PyTorch defines log_abs_det_jacobian)
TRANSFORMS = [
    ("Exp", lambda D, t: D.ExpTransform(), X, True),
    ("Power", lambda D, t: D.PowerTransform(t.tensor([0.5, 2.0, -1.5])), POS, True),
    ("Sigmoid", lambda D, t: D.SigmoidTransform(), X, True),
    ("Tanh", lambda D, t: D.TanhTransform(), X, True),
    ("Softplus", lambda D, t: D.SoftplusTransform(), X, True),
    ("Abs", lambda D, t: D.AbsTransform(), X, False),
    ("Affine", lambda D, t: D.AffineTransform(t.tensor([1.0, -2.0, 0.5]),
                                              t.tensor([2.0, -0.5, 3.0])), X, True),
    ("Affine-scalar", lambda D, t: D.AffineTransform(1.5, -2.0), X, True),
    ("Affine-event", lambda D, t: D.AffineTransform(0.5, t.tensor([2.0, 0.5, 3.0]),
                                                    event_dim=1), X, True),
    ("Compose", lambda D, t: D.ComposeTransform([D.ExpTransform(),
                                                 D.AffineTransform(1.0, 2.0)]), X, True),
    ("Compose-inverse", lambda D, t: D.ComposeTransform([D.ExpTransform().inv,
                                                         D.SigmoidTransform()]), POS, True),
    ("Softmax", lambda D, t: D.SoftmaxTransform(), X, False),
    ("StickBreaking", lambda D, t: D.StickBreakingTransform(), X, True),
    ("LowerCholesky", lambda D, t: D.LowerCholeskyTransform(), SQUARE, False),
    ("PositiveDefinite", lambda D, t: D.PositiveDefiniteTransform(), SQUARE, False),
    ("CorrCholesky", lambda D, t: D.CorrCholeskyTransform(), X, True),
    ("Reshape", lambda D, t: D.ReshapeTransform((3,), (3, 1)), X, True),
    ("Independent", lambda D, t: D.IndependentTransform(D.ExpTransform(), 1), X, True),
    ("Cat", lambda D, t: D.CatTransform([D.ExpTransform(), D.SigmoidTransform()], 1, [1, 2]),
     X, True),
    ("Stack", lambda D, t: D.StackTransform([D.ExpTransform(), D.TanhTransform()], 0), X,
     True),
    ("CumulativeDistribution", lambda D, t: D.CumulativeDistributionTransform(
        D.Normal(t.tensor([0.0, 1.0, -1.0]), t.tensor([1.0, 2.0, 0.5]))), X, True),
]


@pytest.mark.parametrize("name,make,x,has_ladj", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_transform_matches_torch(name, make, x, has_ladj):
    out = {}
    for lib in (torch, torchjax):
        tr = make(lib.distributions, lib)
        xt = lib.tensor(x, requires_grad=True)
        y = tr(xt)
        res = {"y": y, "x_back": tr.inv(y.detach())}
        total = y.sum()
        if has_ladj:
            res["ladj"] = tr.log_abs_det_jacobian(xt, y)
            total = total + res["ladj"].sum()
        total.backward()
        res["grad"] = xt.grad
        res["shape"] = (tuple(tr.forward_shape(lib.Size(x.shape))),
                        tuple(tr.inverse_shape(lib.Size(y.shape))))
        res["meta"] = (repr(tr.domain), repr(tr.codomain), tr.bijective)
        out[lib] = res
    t, j = out[torch], out[torchjax]
    assert j["shape"] == t["shape"]
    assert j["meta"] == t["meta"]
    for k in ("y", "x_back", "ladj", "grad"):
        if k in t:
            assert_close(j[k], t[k], 2e-5, 2e-6, what=k)


def test_transform_algebra():
    D = torchjax.distributions
    e = D.ExpTransform()
    assert e.inv.inv is e and e.inv == D.ExpTransform().inv and e == D.ExpTransform()
    assert e.sign == 1 and D.AffineTransform(0.0, -2.0).sign == -1
    c = D.ComposeTransform([D.ExpTransform(), D.AffineTransform(0.0, -1.0)])
    assert c.sign == -1 and c.inv.inv is c and c.bijective
    assert repr(c) == "ComposeTransform(\n    ExpTransform(),\n    AffineTransform()\n)"
    assert repr(e.inv) == "_InverseTransform(ExpTransform())"
    assert D.identity_transform(torchjax.tensor([1.0])).tolist() == [1.0]
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.ExpTransform(cache_size=2)
    with pytest.raises(NotImplementedError):
        D.SoftmaxTransform().log_abs_det_jacobian(torchjax.zeros(2), torchjax.zeros(2))
    # a cached transform returns the very input for the output it just made (the inverse of
    # a saturated tanh is otherwise inf)
    t = D.TanhTransform(cache_size=1)
    x = torchjax.tensor([30.0])
    y = t(x)
    assert t.inv(y) is x and t(x) is y
    assert D.SigmoidTransform().with_cache(1)._cache_size == 1


CONSTRAINTS = [
    ("real", lambda C: C.real, [1.0, float("nan"), float("inf")]),
    ("boolean", lambda C: C.boolean, [0.0, 1.0, 0.5]),
    ("one_hot", lambda C: C.one_hot, [[0.0, 1.0], [1.0, 1.0], [0.5, 0.5]]),
    ("integer_interval", lambda C: C.integer_interval(0, 3), [0.0, 2.0, 3.5, 4.0]),
    ("nonnegative_integer", lambda C: C.nonnegative_integer, [0.0, 3.0, -1.0, 1.5]),
    ("positive_integer", lambda C: C.positive_integer, [0.0, 3.0, 1.0]),
    ("positive", lambda C: C.positive, [0.0, 1.0, -1.0]),
    ("nonnegative", lambda C: C.nonnegative, [0.0, 1.0, -1.0]),
    ("greater_than", lambda C: C.greater_than(2.0), [2.0, 3.0]),
    ("greater_than_eq", lambda C: C.greater_than_eq(2.0), [2.0, 1.0]),
    ("less_than", lambda C: C.less_than(2.0), [2.0, 1.0]),
    ("unit_interval", lambda C: C.unit_interval, [0.0, 1.0, 1.5]),
    ("interval", lambda C: C.interval(-1.0, 1.0), [-1.0, 1.0, 1.5]),
    ("half_open_interval", lambda C: C.half_open_interval(-1.0, 1.0), [-1.0, 1.0, 0.5]),
    ("simplex", lambda C: C.simplex, [[0.5, 0.5], [0.2, 0.3], [1.2, -0.2]]),
    ("multinomial", lambda C: C.multinomial(3), [[1.0, 2.0], [2.0, 2.0], [-1.0, 1.0]]),
    ("real_vector", lambda C: C.real_vector, [[1.0, 2.0], [float("nan"), 1.0]]),
    ("independent", lambda C: C.independent(C.positive, 1), [[1.0, 2.0], [0.0, 1.0]]),
    ("lower_triangular", lambda C: C.lower_triangular, [[[1.0, 0.0], [2.0, 1.0]],
                                                        [[1.0, 1.0], [0.0, 1.0]]]),
    ("lower_cholesky", lambda C: C.lower_cholesky, [[[1.0, 0.0], [2.0, 1.0]],
                                                    [[-1.0, 0.0], [0.0, 1.0]]]),
    ("corr_cholesky", lambda C: C.corr_cholesky, [[[1.0, 0.0], [0.6, 0.8]],
                                                  [[1.0, 0.0], [0.5, 0.5]]]),
    ("square", lambda C: C.square, [[[1.0, 0.0], [2.0, 1.0]]]),
    ("symmetric", lambda C: C.symmetric, [[[1.0, 2.0], [2.0, 1.0]], [[1.0, 0.0], [2.0, 1.0]]]),
    ("positive_semidefinite", lambda C: C.positive_semidefinite,
     [[[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]]),
    ("positive_definite", lambda C: C.positive_definite,
     [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 1.0], [1.0, 1.0]]]),
    ("cat", lambda C: C.cat([C.positive, C.real], 0, [1, 2]), [1.0, -1.0, -2.0]),
    ("stack", lambda C: C.stack([C.positive, C.unit_interval], 0), [[1.0, -1.0], [0.5, 2.0]]),
]


@pytest.mark.parametrize("name,make,value", CONSTRAINTS, ids=[c[0] for c in CONSTRAINTS])
def test_constraint_matches_torch(name, make, value):
    tc, jc = make(torch.distributions.constraints), make(torchjax.distributions.constraints)
    assert repr(jc) == repr(tc)
    assert (jc.is_discrete, jc.event_dim) == (tc.is_discrete, tc.event_dim)
    assert_close(jc.check(torchjax.tensor(value)), tc.check(torch.tensor(value)))


def test_dependent_constraints():
    C = torchjax.distributions.constraints
    D = torchjax.distributions
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    assert C.is_dependent(D.Uniform.support)
    assert repr(D.Uniform(0.0, 2.0).support) == "Interval(lower_bound=0.0, upper_bound=2.0)"
    assert message(lambda: C.dependent.check(torchjax.zeros(1))) == message(
        lambda: torch.distributions.constraints.dependent.check(torch.zeros(1)))
    d = C.dependent(is_discrete=True, event_dim=1)
    assert d.is_discrete and d.event_dim == 1
    with pytest.raises(NotImplementedError):
        C.dependent.event_dim  # noqa: B018


REGISTRY = ["real", "positive", "nonnegative", "unit_interval", "interval", "less_than",
            "greater_than", "simplex", "real_vector", "independent", "lower_cholesky",
            "positive_definite", "corr_cholesky", "cat", "stack"]


@pytest.mark.parametrize("name", REGISTRY)
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_biject_to_and_transform_to_match_torch(registry, name):
    make = dict((c[0], c[1]) for c in CONSTRAINTS)[name] if name != "interval" else (
        lambda C: C.interval(-1.0, 3.0))
    value = {"lower_cholesky": SQUARE[:, :2, :2], "positive_definite": SQUARE[:, :2, :2],
             "corr_cholesky": X[:, :1], "cat": X[0], "stack": X[:, :2]}.get(name, X)
    out = []
    for lib in (torch, torchjax):
        reg = getattr(lib.distributions, registry)
        constraint = make(lib.distributions.constraints)
        r = message(lambda reg=reg, constraint=constraint: reg(constraint))
        if r[0] is not None:
            out.append(r)
            continue
        tr = reg(constraint)
        y = tr(lib.tensor(value))
        assert bool(constraint.check(y).all())
        out.append((type(tr).__name__, y))
    if out[0][0] is not None and isinstance(out[0][0], type):
        assert out[1] == out[0]  # the same NotImplementedError
        return
    assert out[1][0] == out[0][0]
    assert_close(out[1][1], out[0][1], 1e-5, 1e-6)


def test_transformed_distribution_matches_torch():
    def make(lib):
        D = lib.distributions
        base = D.Normal(lib.tensor([0.0, 1.0, -0.5]), lib.tensor([1.0, 0.5, 2.0]))
        return D.TransformedDistribution(
            base, [D.AffineTransform(1.0, -2.0), D.SigmoidTransform()])
    t, j = make(torch), make(torchjax)
    v = np.array([[0.2, 0.5, 0.9], [0.7, 0.1, 0.4]], np.float32)
    assert_close(j.log_prob(torchjax.tensor(v)), t.log_prob(torch.tensor(v)), 1e-4, 1e-5)
    # the chain is decreasing (scale -2): cdf flips the base cdf
    assert_close(j.cdf(torchjax.tensor(v)), t.cdf(torch.tensor(v)), 1e-4, 1e-5)
    assert_close(j.icdf(torchjax.tensor(v)), t.icdf(torch.tensor(v)), 1e-4, 1e-5)
    assert repr(j.support) == repr(t.support)
    x = numpy(j.sample((100,)))
    assert ((x > 0) & (x < 1)).all()
