"""Random sampling: distributions (moments on ~1e5 samples), supports, dtypes and shapes equal to
PyTorch's, reproducibility under manual_seed and Generators, autograd nodes, and errors.

The bits cannot equal PyTorch's; statistical bounds are 6 standard errors of the estimator,
with fixed seeds, so the tests are deterministic and still catch a wrong parameterisation.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import torchjax

N = 100_000
Z = 6.0


@pytest.fixture(autouse=True)
def _seed():
    torchjax.manual_seed(1234)
    torch.manual_seed(1234)


def _np(t):
    return np.asarray(t.double().numpy() if t.dtype is not torchjax.bool else t.numpy())


def _check_mean(x, mean, var):
    se = math.sqrt(var / x.size)
    assert abs(x.mean() - mean) < Z * se, (x.mean(), mean)


def _check_var(x, var, fourth_central):
    # standard error of the sample variance: sqrt((mu4 - var^2) / n)
    se = math.sqrt((fourth_central - var ** 2) / x.size)
    assert abs(x.var() - var) < Z * se, (x.var(), var)


# -- distributions -----------------------------------------------------------------------------

@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_bernoulli_tensor_probabilities(p):
    x = _np(torchjax.bernoulli(torchjax.full((N,), p)))
    assert set(np.unique(x)) <= {0.0, 1.0}
    if p in (0.0, 1.0):
        assert (x == p).all()
    else:
        _check_mean(x, p, p * (1 - p))


def test_bernoulli_per_element_probability():
    base = np.tile(np.array([0.05, 0.5, 0.95], np.float32), (N // 3, 1))
    probs = torchjax.tensor(base)
    x = _np(torchjax.bernoulli(probs))
    for j, p in enumerate([0.05, 0.5, 0.95]):
        _check_mean(x[:, j], p, p * (1 - p))


@pytest.mark.parametrize("p", [0.2, 0.7])
def test_bernoulli_scalar_p(p):
    x = _np(torchjax.bernoulli(torchjax.zeros(N), p))
    _check_mean(x, p, p * (1 - p))
    y = _np(torchjax.zeros(N).bernoulli_(p))
    _check_mean(y, p, p * (1 - p))
    z = _np(torchjax.zeros(N).bernoulli(p))
    _check_mean(z, p, p * (1 - p))


def test_bernoulli_inplace_tensor_p():
    p = torchjax.tensor([0.25, 0.75])
    x = _np(torchjax.zeros(N // 2, 2).bernoulli_(p))
    _check_mean(x[:, 0], 0.25, 0.25 * 0.75)
    _check_mean(x[:, 1], 0.75, 0.25 * 0.75)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_bernoulli_dtypes_and_shapes(dtype):
    for shape in [(), (3,), (2, 0, 4), (4, 5)]:
        a = torchjax.bernoulli(torchjax.full(shape, 0.5, dtype=getattr(torchjax, dtype)))
        b = torch.bernoulli(torch.full(shape, 0.5, dtype=getattr(torch, dtype)))
        assert a.dtype.name == str(b.dtype)[6:] and tuple(a.shape) == tuple(b.shape)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float16", "float64"])
def test_bernoulli_p_keeps_input_dtype(dtype):
    a = torchjax.bernoulli(torchjax.zeros(5, dtype=getattr(torchjax, dtype)), 0.5)
    b = torch.bernoulli(torch.zeros(5, dtype=getattr(torch, dtype)), 0.5)
    assert str(a.dtype) == str(b.dtype)
    a = torchjax.zeros(5, dtype=getattr(torchjax, dtype)).bernoulli_(0.5)
    b = torch.zeros(5, dtype=getattr(torch, dtype)).bernoulli_(0.5)
    assert str(a.dtype) == str(b.dtype)


def test_multinomial_with_replacement_frequencies():
    w = np.array([1.0, 0.0, 3.0, 6.0])
    s = torchjax.multinomial(torchjax.tensor(w), N, replacement=True)
    assert s.dtype is torchjax.int64 and tuple(s.shape) == (N,)
    x = s.numpy()
    assert not (x == 1).any()  # zero probability is never drawn
    p = w / w.sum()
    for k in range(4):
        _check_mean((x == k).astype(float), p[k], p[k] * (1 - p[k]) + 1e-12)


def test_multinomial_2d_rows_independent():
    w = torchjax.tensor([[1.0, 1.0, 0.0], [0.0, 0.0, 5.0]])
    s = torchjax.multinomial(w, 1000, True).numpy()
    assert s.shape == (2, 1000)
    assert set(np.unique(s[0])) == {0, 1} and (s[1] == 2).all()
    _check_mean((s[0] == 0).astype(float), 0.5, 0.25)


def test_multinomial_without_replacement():
    w = torchjax.tensor([0.1, 0.2, 0.3, 0.4, 0.0])
    rows = torchjax.multinomial(torchjax.tensor(np.tile(w.numpy(), (20000, 1))), 4)
    r = rows.numpy()
    assert r.shape == (20000, 4)
    assert all(len(set(row)) == 4 for row in r[:2000])  # distinct indices
    assert not (r == 4).any()  # the zero-probability category comes last
    # the first draw is proportional to the weights
    for k, p in enumerate([0.1, 0.2, 0.3, 0.4]):
        _check_mean((r[:, 0] == k).astype(float), p, p * (1 - p))
    # all categories: a permutation, zero-probability ones at the end
    full = torchjax.multinomial(torchjax.tensor([0.0, 1.0, 0.0, 2.0]), 4).numpy()
    assert sorted(full) == [0, 1, 2, 3] and set(full[2:]) == {0, 2}


def test_multinomial_shapes_match_torch():
    for shape, n, rep in [((3,), 2, False), ((2, 3), 3, False), ((2, 3), 5, True),
                          ((0, 3), 2, False), ((4,), 1, True)]:
        a = torchjax.multinomial(torchjax.ones(shape), n, rep)
        b = torch.multinomial(torch.ones(shape), n, rep)
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
    m = torchjax.ones(2, 3).multinomial(num_samples=2, replacement=True)
    assert tuple(m.shape) == (2, 2)


@pytest.mark.parametrize("lam", [0.0, 0.5, 4.0, 50.0])
def test_poisson(lam):
    x = _np(torchjax.poisson(torchjax.full((N,), lam)))
    assert (x >= 0).all() and (x == np.round(x)).all()
    if lam == 0:
        assert (x == 0).all()
        return
    _check_mean(x, lam, lam)
    _check_var(x, lam, lam * (1 + 3 * lam))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_poisson_dtype(dtype):
    a = torchjax.poisson(torchjax.full((2, 3), 2.0, dtype=getattr(torchjax, dtype)))
    b = torch.poisson(torch.full((2, 3), 2.0, dtype=getattr(torch, dtype)))
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)


@pytest.mark.parametrize("lambd", [1.0, 0.25, 3.0])
def test_exponential(lambd):
    x = _np(torchjax.empty(N).exponential_(lambd))
    assert (x >= 0).all()
    _check_mean(x, 1 / lambd, 1 / lambd ** 2)
    _check_var(x, 1 / lambd ** 2, 9 / lambd ** 4)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("p", [0.2, 0.7])
def test_geometric(p, dtype):
    x = _np(torchjax.empty(N, dtype=getattr(torchjax, dtype)).geometric_(p))
    assert x.min() >= 1 and (x == np.round(x)).all()
    mean, var = 1 / p, (1 - p) / p ** 2
    _check_mean(x, mean, var)
    _check_mean((x == 1).astype(float), p, p * (1 - p))  # P(X = 1) = p


@pytest.mark.parametrize("mean,std", [(1.0, 2.0), (0.0, 0.5), (-1.0, 1.0)])
def test_log_normal(mean, std):
    x = _np(torchjax.empty(N, dtype=torchjax.float64).log_normal_(mean, std))
    assert (x > 0).all()
    lx = np.log(x)
    _check_mean(lx, mean, std ** 2)
    _check_var(lx, std ** 2, 3 * std ** 4)
    d = _np(torchjax.empty(N).log_normal_())  # defaults mean=1, std=2
    _check_mean(np.log(d), 1.0, 4.0)


@pytest.mark.parametrize("median,sigma", [(0.0, 1.0), (2.0, 0.5)])
def test_cauchy(median, sigma):
    x = _np(torchjax.empty(N).cauchy_(median, sigma))
    q1, q2, q3 = np.quantile(x, [0.25, 0.5, 0.75])
    # quartiles of Cauchy(median, sigma) are median -+ sigma; the sample quantile at q has
    # standard error sqrt(q(1-q)/n) / density(quantile)
    dens_mid, dens_q = 1 / (math.pi * sigma), 1 / (2 * math.pi * sigma)
    assert abs(q2 - median) < Z * math.sqrt(0.25 / N) / dens_mid
    assert abs(q1 - (median - sigma)) < Z * math.sqrt(0.1875 / N) / dens_q
    assert abs(q3 - (median + sigma)) < Z * math.sqrt(0.1875 / N) / dens_q


@pytest.mark.parametrize("a,b", [(0.0, 1.0), (-2.0, 5.0)])
def test_uniform(a, b):
    x = _np(torchjax.empty(N).uniform_(a, b))
    assert x.min() >= a and x.max() < b
    _check_mean(x, (a + b) / 2, (b - a) ** 2 / 12)
    _check_var(x, (b - a) ** 2 / 12, (b - a) ** 4 / 80)


@pytest.mark.parametrize("m,s", [(0.0, 1.0), (3.0, 0.5)])
def test_normal(m, s):
    x = _np(torchjax.empty(N).normal_(m, s))
    _check_mean(x, m, s ** 2)
    _check_var(x, s ** 2, 3 * s ** 4)


# -- random_ -----------------------------------------------------------------------------------

RANDOM_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
                 "uint8", "bool"]


def _random_case(lib, dtype, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.empty(20000, dtype=getattr(lib, dtype)).random_(*args)


@pytest.mark.parametrize("dtype", RANDOM_DTYPES)
@pytest.mark.parametrize("args", [(5,), (2, 7), (0, 2), (1, None)],
                         ids=["to", "from-to", "0-2", "from-None"])
def test_random_small_ranges_same_support_as_torch(dtype, args):
    err = _err(lambda: _random_case(torch, dtype, args))
    if err is not None:  # e.g. bool with to > 2
        assert _err(lambda: _random_case(torchjax, dtype, args)) == err
        return
    a, b = _random_case(torchjax, dtype, args), _random_case(torch, dtype, args)
    assert str(a.dtype) == str(b.dtype)
    assert set(np.unique(_np(a)).tolist()) == set(np.unique(b.double().numpy()).tolist()) or \
        args[1:] == (None,)
    if args[1:] == (None,):
        # [from, dtype's largest value]: the same bounds when the range is small enough to hit
        lo = _np(a).min()
        assert lo >= 1 and b.double().min().item() >= 1
        if dtype in ("bool", "int8", "uint8", "bfloat16"):
            assert _np(a).max() == b.double().max().item()


@pytest.mark.parametrize("dtype", RANDOM_DTYPES)
def test_random_default_range(dtype):
    a = _np(_random_case(torchjax, dtype, ()))
    b = _random_case(torch, dtype, ()).double().numpy()
    assert a.min() >= 0
    lib_max = {"float32": 2 ** 24, "float64": 2 ** 53, "float16": 2 ** 11, "bfloat16": 2 ** 8,
               "int64": 2 ** 63 - 1, "int32": 2 ** 31 - 1, "int16": 2 ** 15 - 1,
               "int8": 127, "uint8": 255, "bool": 1}[dtype]
    assert a.max() <= lib_max and b.max() <= lib_max
    if lib_max <= 256:
        assert a.max() == b.max() == lib_max and a.min() == b.min() == 0
    else:
        # uniform over [0, max]: the mean is near max/2
        _check_mean(a / lib_max, 0.5, 1 / 12)


def test_random_uniform_counts():
    x = torchjax.empty(N, dtype=torchjax.int64).random_(-3, 7).numpy()
    assert x.min() == -3 and x.max() == 6
    for k in range(-3, 7):
        _check_mean((x == k).astype(float), 0.1, 0.09)


def test_random_full_int64_range():
    x = torchjax.empty(N, dtype=torchjax.int64).random_(-2 ** 63, None).numpy()
    assert (x < 0).any() and (x > 0).any()
    _check_mean(x / 2.0 ** 63, 0.0, 1 / 3)


def test_random_keywords():
    x = torchjax.empty(1000).random_(to=3)
    assert set(np.unique(x.numpy())) == {0.0, 1.0, 2.0}
    x = torchjax.empty(1000).random_(**{"from": 2, "to": 4})
    assert set(np.unique(x.numpy())) == {2.0, 3.0}


def test_random_precision_warning_like_torch():
    for lib in (torch, torchjax):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.empty(3).random_(0, 2 ** 25)
        msgs = [str(m.message).split(" (Triggered")[0] for m in w]
        assert len(msgs) == 1
        if lib is torch:
            expected = msgs[0]
        else:
            assert msgs[0] == expected


# -- reproducibility ---------------------------------------------------------------------------

SAMPLERS = {
    "bernoulli": lambda g=None: torchjax.bernoulli(torchjax.full((50,), 0.5), generator=g),
    "bernoulli_p": lambda g=None: torchjax.bernoulli(torchjax.zeros(50), 0.5, generator=g),
    "multinomial": lambda g=None: torchjax.multinomial(torchjax.ones(50), 10, generator=g),
    "multinomial_rep": lambda g=None: torchjax.multinomial(torchjax.ones(5), 50, True,
                                                           generator=g),
    "poisson": lambda g=None: torchjax.poisson(torchjax.full((50,), 3.0), generator=g),
    "exponential_": lambda g=None: torchjax.empty(50).exponential_(generator=g),
    "geometric_": lambda g=None: torchjax.empty(50).geometric_(0.3, generator=g),
    "log_normal_": lambda g=None: torchjax.empty(50).log_normal_(generator=g),
    "cauchy_": lambda g=None: torchjax.empty(50).cauchy_(generator=g),
    "bernoulli_": lambda g=None: torchjax.empty(50).bernoulli_(generator=g),
    "random_": lambda g=None: torchjax.empty(50).random_(generator=g),
    "random_to": lambda g=None: torchjax.empty(50, dtype=torchjax.int64).random_(100,
                                                                                 generator=g),
    "uniform_": lambda g=None: torchjax.empty(50).uniform_(generator=g),
    "normal_": lambda g=None: torchjax.empty(50).normal_(generator=g),
}


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_manual_seed_reproducible(name):
    f = SAMPLERS[name]
    torchjax.manual_seed(7)
    a1, a2 = f().numpy(), f().numpy()
    torchjax.manual_seed(7)
    b1, b2 = f().numpy(), f().numpy()
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)
    assert not np.array_equal(a1, a2)  # a fresh draw after each call
    torchjax.manual_seed(8)
    assert not np.array_equal(f().numpy(), a1)


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_generator_independent_of_global_state(name):
    f = SAMPLERS[name]
    g = torchjax.Generator().manual_seed(3)
    torchjax.manual_seed(100)
    a = f(g).numpy()
    state = torchjax.get_rng_state()
    g2 = torchjax.Generator().manual_seed(3)
    torchjax.manual_seed(999)
    f()  # global draws do not disturb the generator
    b = f(g2).numpy()
    np.testing.assert_array_equal(a, b)
    # drawing from a generator leaves the global state alone
    torchjax.set_rng_state(state)
    f(torchjax.Generator().manual_seed(5))
    assert np.array_equal(torchjax.get_rng_state().numpy(), state.numpy())


# -- autograd ----------------------------------------------------------------------------------

INPLACE = [("uniform_", ()), ("normal_", ()), ("exponential_", ()), ("random_", ()),
           ("random_", (3,)), ("random_", (1, 3)), ("bernoulli_", ()),
           ("bernoulli_", ("tensor",)), ("geometric_", (0.5,)), ("log_normal_", ()),
           ("cauchy_", ())]


@pytest.mark.parametrize("name,args", INPLACE, ids=[f"{n}{len(a)}" for n, a in INPLACE])
def test_inplace_on_graph_has_torch_node_and_zero_grad(name, args):
    names = []
    for lib in (torch, torchjax):
        a = [lib.full((3,), 0.5) if x == "tensor" else x for x in args]
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        r = getattr(y, name)(*a)
        assert r is y
        names.append(type(y.grad_fn).__name__)
        (y * x).sum().backward()
        np.testing.assert_array_equal(np.asarray(x.grad.detach().numpy()),
                                      y.detach().numpy())  # only the product's own term
    assert names[0] == names[1]


@pytest.mark.parametrize("name,args", INPLACE, ids=[f"{n}{len(a)}" for n, a in INPLACE])
def test_inplace_on_leaf_requiring_grad_raises(name, args):
    errs = []
    for lib in (torch, torchjax):
        a = [lib.full((3,), 0.5) if x == "tensor" else x for x in args]
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            getattr(x, name)(*a)
        errs.append(str(e.value))
        with lib.no_grad():
            getattr(x, name)(*a)  # allowed without grad mode
        v = lib.ones(3, requires_grad=True)[1:]
        with pytest.raises(RuntimeError) as e:
            getattr(v, name)(*a)
        errs.append(str(e.value))
    assert errs[:2] == errs[2:]


def test_inplace_on_view_writes_base():
    base = torchjax.zeros(4, 5)
    base[1].exponential_()
    b = base.numpy()
    assert (b[1] > 0).all() and (b[0] == 0).all() and (b[2:] == 0).all()
    v0 = base._version
    base.uniform_()
    assert base._version == v0 + 1


def test_out_of_place_grad_fns():
    for lib in (torch, torchjax):
        x = lib.full((3,), 0.5, requires_grad=True)
        y = lib.bernoulli(x)
        z = lib.poisson(x)
        assert type(y.grad_fn).__name__ == "BernoulliBackward0"
        assert type(z.grad_fn).__name__ == "PoissonBackward0"
        (y + z).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0]
        w = lib.bernoulli(x, 0.3)
        assert type(w.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::bernoulli is not"):
            w.sum().backward()
        assert not lib.multinomial(x, 2).requires_grad


# -- errors ------------------------------------------------------------------------------------

def _err(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001 - compared below
        return type(e).__name__, str(e).split("\n")[0]
    return None


ERRORS = {
    "bernoulli-int": lambda L: L.bernoulli(L.tensor([1, 0])),
    "bernoulli-bool": lambda L: L.bernoulli(L.tensor([True, False])),
    "bernoulli-range": lambda L: L.bernoulli(L.tensor([1.5, 0.0])),
    "bernoulli-nan": lambda L: L.bernoulli(L.tensor([math.nan, 0.0])),
    "bernoulli-p": lambda L: L.bernoulli(L.tensor([1.0, 0.0]), 1.5),
    "bernoulli_-p": lambda L: L.zeros(3).bernoulli_(-0.1),
    "bernoulli_-tensor-int": lambda L: L.zeros(3).bernoulli_(L.tensor([1, 0, 0])),
    "bernoulli_-tensor-range": lambda L: L.zeros(3).bernoulli_(L.tensor([2.0, 0, 0])),
    "bernoulli_-expand": lambda L: L.zeros(2, 3).bernoulli_(L.full((4,), 0.5)),
    "bernoulli_-expand-dims": lambda L: L.zeros(2, 3).bernoulli_(L.full((2, 1, 3), 0.5)),
    "multinomial-too-many": lambda L: L.multinomial(L.tensor([0.1, 0.2, 0.7]), 4),
    "multinomial-zero-sum": lambda L: L.multinomial(L.tensor([0.0, 0, 0]), 1),
    "multinomial-zero-row": lambda L: L.multinomial(L.tensor([[1.0, 0], [0, 0]]), 1),
    "multinomial-negative": lambda L: L.multinomial(L.tensor([-1.0, 0, 1]), 1),
    "multinomial-nan": lambda L: L.multinomial(L.tensor([math.nan, 0, 1]), 1),
    "multinomial-inf": lambda L: L.multinomial(L.tensor([math.inf, 0, 1]), 1),
    "multinomial-rep-negative": lambda L: L.multinomial(L.tensor([-1.0, 0, 1]), 2, True),
    "multinomial-rep-nan": lambda L: L.multinomial(L.tensor([math.nan, 0, 1]), 2, True),
    "multinomial-rep-inf": lambda L: L.multinomial(L.tensor([math.inf, 0, 1]), 2, True),
    "multinomial-rep-zero": lambda L: L.multinomial(L.tensor([0.0, 0, 0]), 2, True),
    "multinomial-int": lambda L: L.multinomial(L.tensor([1, 2, 3]), 1),
    "multinomial-0d": lambda L: L.multinomial(L.tensor(1.0), 1),
    "multinomial-3d": lambda L: L.multinomial(L.ones(2, 2, 2), 1),
    "multinomial-n0": lambda L: L.multinomial(L.ones(2, 3), 0),
    "multinomial-float-n": lambda L: L.multinomial(L.ones(3), 2.0),
    "multinomial-empty-cats": lambda L: L.multinomial(L.ones(2, 0), 2, True),
    "poisson-int": lambda L: L.poisson(L.tensor([1, 2])),
    "poisson-negative": lambda L: L.poisson(L.tensor([-1.0, 2])),
    "poisson-nan": lambda L: L.poisson(L.tensor([math.nan, 2])),
    "exponential-lambda": lambda L: L.zeros(3).exponential_(0.0),
    "exponential-int": lambda L: L.zeros(3, dtype=L.int64).exponential_(),
    "geometric-p0": lambda L: L.zeros(3).geometric_(0.0),
    "geometric-p1": lambda L: L.zeros(3).geometric_(1.0),
    "geometric-bool": lambda L: L.zeros(3, dtype=L.bool).geometric_(0.5),
    "log_normal-std": lambda L: L.zeros(3).log_normal_(1.0, 0.0),
    "log_normal-int": lambda L: L.zeros(3, dtype=L.int64).log_normal_(),
    "cauchy-sigma": lambda L: L.zeros(3).cauchy_(0.0, -1.0),
    "cauchy-int": lambda L: L.zeros(3, dtype=L.int64).cauchy_(),
    "cauchy-bool": lambda L: L.zeros(3, dtype=L.bool).cauchy_(),
    "uniform-range": lambda L: L.zeros(3).uniform_(2.0, 1.0),
    "uniform-int": lambda L: L.zeros(3, dtype=L.int64).uniform_(),
    "normal-std": lambda L: L.zeros(3).normal_(0.0, -1.0),
    "normal-int": lambda L: L.zeros(3, dtype=L.int64).normal_(),
    "random-from-to": lambda L: L.zeros(3).random_(5, 3),
    "random-to-0": lambda L: L.zeros(3).random_(0),
    "random-uint8-from": lambda L: L.zeros(3, dtype=L.uint8).random_(-3, 5),
    "random-int8-to": lambda L: L.zeros(3, dtype=L.int8).random_(0, 200),
    "random-int8-to-only": lambda L: L.zeros(3, dtype=L.int8).random_(200),
    "random-int8-from-none": lambda L: L.zeros(3, dtype=L.int8).random_(200, None),
    "random-int16": lambda L: L.zeros(3, dtype=L.int16).random_(-2 ** 40, 2),
    "random-int32": lambda L: L.zeros(3, dtype=L.int32).random_(-2 ** 40, 2),
    "random-bool-to": lambda L: L.zeros(3, dtype=L.bool).random_(5),
    "random-half-from": lambda L: L.zeros(3, dtype=L.float16).random_(-70000, 2),
    "random-half-to-inc": lambda L: L.zeros(3, dtype=L.float16).random_(4000, None),
    "random-float-arg": lambda L: L.zeros(3).random_(1.5),
    "random-from-only-kw": lambda L: L.zeros(3).random_(**{"from": 3}),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    fn = ERRORS[name]
    expected = _err(lambda: fn(torch))
    assert expected is not None
    assert _err(lambda: fn(torchjax)) == expected
