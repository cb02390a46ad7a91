"""torchjax.special: the names that are torch.* functions under another name (aliases, not
rows of their own) against torch.special, and behaviour the op table does not cover."""

import numpy as np
import pytest
import torch

import torchjax
import torchjax.special

from .ops import harness

_X = np.array([[0.3, 1.7, 2.2], [0.9, 1.1, 3.5]], dtype=np.float32)
_P = np.array([0.1, 0.45, 0.8], dtype=np.float32)

# (name, call(mod, x), input): mod is torch.special or torchjax.special
ALIASES = [
    ("expit", lambda m, x: m.expit(x), _X),
    ("logit", lambda m, x: m.logit(x), _P),
    ("logit eps", lambda m, x: m.logit(x, eps=0.2), _P),
    ("xlogy", lambda m, x: m.xlogy(x, x + 1), _X),
    ("sinc", lambda m, x: m.sinc(x), _X),
    ("i0", lambda m, x: m.i0(x), _X),
    ("gammaln", lambda m, x: m.gammaln(x), _X),
    ("digamma", lambda m, x: m.digamma(x), _X),
    ("psi", lambda m, x: m.psi(x), _X),
    ("polygamma", lambda m, x: m.polygamma(2, x), _X),
    ("multigammaln", lambda m, x: m.multigammaln(x + 1, 2), _X),
    ("log1p", lambda m, x: m.log1p(x), _X),
    ("expm1", lambda m, x: m.expm1(x), _X),
    ("exp2", lambda m, x: m.exp2(x), _X),
    ("erf", lambda m, x: m.erf(x), _X),
    ("erfc", lambda m, x: m.erfc(x), _X),
    ("erfinv", lambda m, x: m.erfinv(x), _P),
    ("logsumexp", lambda m, x: m.logsumexp(x, 1), _X),
    ("logsumexp keepdim", lambda m, x: m.logsumexp(x, -1, keepdim=True), _X),
    ("softmax", lambda m, x: m.softmax(x, 0), _X),
    ("softmax dtype", lambda m, x: m.softmax(x, 1, dtype=m_dtype(m)), _X),
    ("log_softmax", lambda m, x: m.log_softmax(x, -1), _X),
    ("log_softmax dtype", lambda m, x: m.log_softmax(x, 0, dtype=m_dtype(m)), _X),
]


def m_dtype(m):
    return torch.float64 if m is torch.special else torchjax.float64


@pytest.mark.parametrize("name,call,x", ALIASES, ids=[a[0] for a in ALIASES])
def test_alias_matches_torch_special(name, call, x):
    outs = []
    grads = []
    for lib, mod in ((torch, torch.special), (torchjax, torchjax.special)):
        t = lib.tensor(x.copy(), requires_grad=True)
        out = call(mod, t)
        out.backward(lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))
                     .to(out.dtype))
        outs.append(out)
        grads.append(t.grad)
    harness.assert_same(outs[1], outs[0], 1e-5, 1.3e-6, name)
    harness.assert_same(grads[1], grads[0], 1e-4, 1e-5, name + " grad")
    assert type(outs[1].grad_fn).__name__ == type(outs[0].grad_fn).__name__


@pytest.mark.parametrize("name", ["expit", "gammaln", "psi", "erfc", "exp2", "i0"])
def test_alias_int_input_gives_float32(name):
    x = np.array([1, 2, 3])
    a = getattr(torchjax.special, name)(torchjax.tensor(x))
    b = getattr(torch.special, name)(torch.tensor(x))
    harness.assert_same(a, b, 1e-6, 1e-6, name)


def test_special_softmax_takes_dtype_positionally_like_torch():
    a = torchjax.special.softmax(torchjax.tensor(_X), 0, torchjax.float64)
    b = torch.special.softmax(torch.tensor(_X), 0, torch.float64)
    harness.assert_same(a, b, 1e-6, 1e-6, "softmax dtype")


def test_public_names_of_torch_special_exist():
    names = ["expit", "logit", "xlogy", "xlog1py", "erfcx", "ndtr", "ndtri", "log_ndtr", "i0",
             "i0e", "i1", "i1e", "entr", "sinc", "multigammaln", "gammaln", "psi", "digamma",
             "polygamma", "zeta", "log1p", "expm1", "exp2", "erf", "erfc", "erfinv", "round",
             "softmax", "log_softmax", "logsumexp"]
    missing = [n for n in names if not callable(getattr(torchjax.special, n, None))]
    assert not missing


def test_shift_operators_and_in_place():
    a = torchjax.tensor([1, -8, 3])
    b = a
    a <<= 2
    assert a is b and a.tolist() == [4, -32, 12]
    a >>= torchjax.tensor([1, 2, 3])
    assert a is b and a.tolist() == [2, -8, 1]
    assert (3 << torchjax.tensor([1, 2])).tolist() == [6, 12]
    assert (64 >> torchjax.tensor([1, 2])).tolist() == [32, 16]


def test_float_power_in_place_needs_double():
    x = torchjax.tensor([2.0])
    with pytest.raises(RuntimeError, match="has dtype Float but the operation's result requires "
                                           "dtype Double"):
        x.float_power_(2)
    y = torchjax.tensor([2.0], dtype=torchjax.float64)
    assert y.float_power_(3) is y and y.tolist() == [8.0]


def test_polygamma_method_forms():
    x = np.array([0.5, 1.5, 3.0], dtype=np.float32)
    a = torchjax.tensor(x)
    b = torch.tensor(x)
    harness.assert_same(a.polygamma(1), b.polygamma(1), 1e-5, 1.3e-6, "polygamma method")
    ai = a.clone()
    assert ai.polygamma_(2) is ai
    harness.assert_same(ai, b.clone().polygamma_(2), 1e-5, 1e-5, "polygamma_")
