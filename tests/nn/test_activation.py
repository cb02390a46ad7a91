"""Activation layers and their functional forms against PyTorch: outputs, input and parameter
gradients, state_dict keys, repr, in-place variants, error messages and signatures."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import torchjax

RNG = np.random.default_rng(0)
X = RNG.uniform(-4, 4, size=(2, 4, 3, 3)).astype(np.float32)
# exact kinks: 0, +-1, +-3, 6 and the default thresholds
X.flat[:8] = [0.0, 1.0, -1.0, 3.0, -3.0, 6.0, 0.5, -0.5]


def _layers(nn):
    return [
        nn.ReLU(), nn.ReLU6(), nn.LeakyReLU(0.2), nn.PReLU(), nn.PReLU(4, 0.1),
        nn.RReLU(0.1, 0.3), nn.ELU(0.5), nn.SELU(), nn.CELU(2.0), nn.GELU(),
        nn.GELU("tanh"), nn.SiLU(), nn.Mish(), nn.Softplus(2, 5), nn.Softsign(),
        nn.Softshrink(0.3), nn.Hardshrink(), nn.Tanhshrink(), nn.Tanh(), nn.Sigmoid(),
        nn.Hardtanh(-2, 2.5), nn.Hardsigmoid(), nn.Hardswish(), nn.LogSigmoid(),
        nn.Softmax(1), nn.Softmax2d(), nn.LogSoftmax(-1), nn.Softmin(2),
        nn.Threshold(0.1, 20.0), nn.GLU(1),
    ]


def _names():
    return [type(m).__name__ + str(i) for i, m in enumerate(_layers(torch.nn))]


def copy_weights(src, dst):
    dst.load_state_dict({k: torchjax.tensor(v.detach().numpy())
                         for k, v in src.state_dict().items()})


def run_both(tm, jm, x=X, train=False):
    """Same module in both libraries on x: (torch out, torchjax out, torch x, torchjax x)."""
    copy_weights(tm, jm)
    tm.train(train)
    jm.train(train)
    xt = torch.tensor(x, requires_grad=True)
    xj = torchjax.tensor(x, requires_grad=True)
    return tm(xt), jm(xj), xt, xj


def backward_both(yt, yj):
    w = np.random.default_rng(1).uniform(-1, 1, size=tuple(yt.shape)).astype(np.float32)
    (yt * torch.tensor(w)).sum().backward()
    (yj * torchjax.tensor(w)).sum().backward()


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=tol,
                               atol=tol)


@pytest.mark.parametrize("i", range(len(_layers(torch.nn))), ids=_names())
def test_layer_matches_pytorch(i):
    tm, jm = _layers(torch.nn)[i], _layers(torchjax.nn)[i]
    assert repr(jm) == repr(tm)
    assert list(jm.state_dict()) == list(tm.state_dict())
    yt, yj, xt, xj = run_both(tm, jm)
    close(yj, yt)
    assert yj.grad_fn.name() == yt.grad_fn.name()
    backward_both(yt, yj)
    close(xj.grad, xt.grad)
    for (n, pt), (m, pj) in zip(tm.named_parameters(), jm.named_parameters()):
        assert n == m
        close(pj.grad, pt.grad)


def test_reprs_with_arguments():
    def mods(nn):
        return [nn.ReLU(True), nn.ReLU6(True), nn.LeakyReLU(0.2, True), nn.RReLU(inplace=True),
                nn.ELU(inplace=True), nn.SELU(True), nn.CELU(inplace=True), nn.SiLU(True),
                nn.Mish(True), nn.Hardtanh(-2, 2, True), nn.Hardsigmoid(True),
                nn.Hardswish(True), nn.Threshold(0.1, 20, True), nn.Softmax(), nn.GLU(),
                nn.Softplus(), nn.PReLU(3)]
    assert [repr(m) for m in mods(torchjax.nn)] == [repr(m) for m in mods(torch.nn)]


@pytest.mark.parametrize("make", [
    lambda nn: nn.ReLU(True), lambda nn: nn.LeakyReLU(0.1, True), lambda nn: nn.ELU(0.5, True),
    lambda nn: nn.Hardswish(True), lambda nn: nn.Threshold(0.5, -1.0, True),
    lambda nn: nn.RReLU(inplace=True),
], ids=["ReLU", "LeakyReLU", "ELU", "Hardswish", "Threshold", "RReLU"])
def test_inplace_layers_write_into_a_non_leaf(make):
    tm, jm = make(torch.nn).eval(), make(torchjax.nn).eval()
    xt, xj = torch.tensor(X, requires_grad=True), torchjax.tensor(X, requires_grad=True)
    ht, hj = xt * 1.5, xj * 1.5
    yt, yj = tm(ht), jm(hj)
    assert yj is hj and yt is ht
    close(hj, ht)
    assert yj.grad_fn.name() == yt.grad_fn.name()
    backward_both(yt, yj)
    close(xj.grad, xt.grad)


def test_rrelu_training_draws_slopes_in_range():
    torchjax.manual_seed(0)
    x = torchjax.tensor(-np.linspace(0.5, 2.0, 4000, dtype=np.float32), requires_grad=True)
    m = torchjax.nn.RReLU(0.1, 0.3)
    y = m(x)
    assert y.grad_fn.name() == "RreluWithNoiseBackward0"
    slope = (y / x).detach().numpy()
    assert slope.min() >= 0.1 and slope.max() <= 0.3
    assert abs(slope.mean() - 0.2) < 0.005 and abs(slope.std() - 0.2 / 12 ** 0.5) < 0.005
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slope, rtol=1e-6)  # the gradient is the slope
    assert not np.allclose(m(x).detach().numpy(), y.detach().numpy())  # fresh slopes per call
    m.eval()
    np.testing.assert_allclose((m(x) / x).detach().numpy(), 0.2, rtol=1e-6)


def test_rrelu_generator_and_seed_reproduce():
    x = torchjax.tensor(-np.ones(50, np.float32))
    torchjax.manual_seed(3)
    a = torchjax.rrelu(x, training=True)
    torchjax.manual_seed(3)
    b = torchjax.nn.functional.rrelu(x, training=True)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    g = torchjax.Generator().manual_seed(5)
    c = torchjax.rrelu(x, training=True, generator=g)
    g.manual_seed(5)
    np.testing.assert_array_equal(c.numpy(), torchjax.rrelu(x, training=True,
                                                            generator=g).numpy())


def test_softmax2d_and_hardtanh_errors():
    for lib in (torch, torchjax):
        with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D "
                                             "instead"):
            lib.nn.Softmax2d()(lib.zeros(2, 3))
        with pytest.raises(AssertionError, match=r"max_val \(1\) must be greater than min_val "
                                                 r"\(2\)"):
            lib.nn.Hardtanh(2, 1)
        with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
            lib.nn.functional.hardtanh(lib.zeros(2), 1.0, -1.0)
        with pytest.warns(FutureWarning, match="`min_value` is deprecated"):
            assert lib.nn.Hardtanh(min_value=-2.0).min_val == -2.0


def test_prelu_error_messages():
    for lib in (torch, torchjax):
        with pytest.raises(RuntimeError, match="Found parameter numbers = 3 and channel size = 4"):
            lib.nn.PReLU(3)(lib.zeros(2, 4))


def test_implicit_softmax_dim_warns():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for name in ("softmax", "log_softmax", "softmin"):
        with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name} has been "
                                             "deprecated"):
            got = getattr(torchjax.nn.functional, name)(torchjax.tensor(x))
        want = getattr(torch.nn.functional, name)(torch.tensor(x), 1)
        close(got, want)


def test_functional_inplace_forms():
    F, G = torch.nn.functional, torchjax.nn.functional
    cases = [("relu_", ()), ("elu_", (0.5,)), ("selu_", ()), ("celu_", (2.0,)),
             ("leaky_relu_", (0.3,)), ("hardtanh_", (-0.5, 0.5)), ("threshold_", (0.1, 9.0)),
             ("rrelu_", (0.2, 0.2))]
    for name, args in cases:
        xt, xj = torch.tensor(X), torchjax.tensor(X)
        assert getattr(G, name)(xj, *args) is xj
        getattr(F, name)(xt, *args)
        close(xj, xt)
    xt, xj = torch.tensor(X), torchjax.tensor(X)
    G.silu(xj, True)
    F.silu(xt, True)
    close(xj, xt)


@pytest.mark.parametrize("name", ["relu", "relu6", "elu", "selu", "celu", "leaky_relu",
                                  "hardtanh", "silu", "mish", "hardswish", "hardsigmoid",
                                  "threshold", "rrelu", "glu", "softmax", "softmin",
                                  "log_softmax", "normalize", "gumbel_softmax", "interpolate",
                                  "grid_sample", "affine_grid", "upsample", "upsample_nearest",
                                  "upsample_bilinear"])
def test_functional_signature(name):
    def params(f):
        return [(p.name, p.default, p.kind) for p in inspect.signature(f).parameters.values()]
    assert params(getattr(torchjax.nn.functional, name)) == \
        params(getattr(torch.nn.functional, name))
