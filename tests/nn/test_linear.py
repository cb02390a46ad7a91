"""The Linear-family layers against PyTorch: Identity, Linear, Bilinear and LazyLinear outputs,
gradients, state_dicts, reprs and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

from ._module_common import LIBS, copy_weights, same_error, to_jax_state


def _forward_backward(tm, jm, *shapes, seed=1, same_node=True):
    rng = np.random.default_rng(seed)
    xs = [rng.normal(size=s).astype(np.float32) for s in shapes]
    outs = []
    for lib, m in ((torch, tm), (torchjax, jm)):
        ins = [lib.tensor(x, requires_grad=True) for x in xs]
        y = m(*ins)
        (y * lib.tensor(np.linspace(-1, 1, y.numel(), dtype=np.float32).reshape(
            tuple(y.shape)))).sum().backward()
        outs.append((y.detach().numpy(), [i.grad.numpy() for i in ins],
                     [p.grad.numpy() for p in m.parameters()], y.grad_fn.name()))
    (yt, gt, pt, nt), (yj, gj, pj, nj) = outs
    np.testing.assert_allclose(yj, yt, rtol=1e-5, atol=1e-5)
    for a, b in zip(gj + pj, gt + pt):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert nj == nt or not same_node


@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_matches(bias):
    tm, jm = (lib.nn.Bilinear(3, 4, 2, bias=bias) for lib in LIBS)
    copy_weights(tm, jm)
    assert repr(jm) == repr(tm) and list(jm.state_dict()) == list(tm.state_dict())
    _forward_backward(tm, jm, *(((5, 3), (5, 4)) if bias else ((2, 3, 3), (2, 3, 4))))


@pytest.mark.parametrize("shapes", [((5, 3), (3,)), ((5, 3), (4, 4)), ((5, 2), (5, 4)),
                                    ((5, 3), (5, 3))])
def test_bilinear_errors(shapes):
    def fn(lib):
        m = lib.nn.Bilinear(3, 4, 2)
        m(lib.zeros(*shapes[0]), lib.zeros(*shapes[1]))
    same_error(fn)
    same_error(lambda lib: lib.nn.functional.bilinear(
        lib.zeros(5, 3), lib.zeros(5, 4), lib.zeros(2, 3, 4), lib.zeros(3)))
    same_error(lambda lib: lib.nn.functional.bilinear(
        lib.zeros(5, 3, dtype=lib.float64), lib.zeros(5, 4), lib.zeros(2, 3, 4), lib.zeros(2)))
    same_error(lambda lib: lib.nn.Bilinear(0, 4, 2))


def test_linear_and_identity():
    tm, jm = (lib.nn.Linear(3, 2, bias=False) for lib in LIBS)
    copy_weights(tm, jm)
    assert repr(jm) == repr(tm) == "Linear(in_features=3, out_features=2, bias=False)"
    _forward_backward(tm, jm, (4, 3))
    ident = torchjax.nn.Identity(54, unused="x")
    x = torchjax.ones(2)
    assert ident(x) is x and repr(ident) == "Identity()"
    w = torchjax.nn.Linear(3, 2, dtype=torchjax.float64).weight
    assert w.dtype == torchjax.float64 and float(w.abs().max()) <= 1 / np.sqrt(3)


def test_lazy_linear():
    tm, jm = (lib.nn.LazyLinear(2) for lib in LIBS)
    assert repr(jm) == repr(tm) and repr(jm.weight) == "<UninitializedParameter>"
    assert repr(jm.state_dict()) == repr(tm.state_dict())
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        jm.weight.shape
    x = np.ones((4, 3), np.float32)
    tm(torch.tensor(x))
    jm(torchjax.tensor(x))
    assert type(jm) is torchjax.nn.Linear and repr(jm) == repr(tm)
    assert type(jm.weight) is torchjax.nn.Parameter and jm.weight.shape == (2, 3)
    assert not jm._forward_pre_hooks and not hasattr(jm, "_initialize_hook")
    copy_weights(tm, jm)
    _forward_backward(tm, jm, (4, 3))
    # loading a checkpoint materializes the parameters; in_features follows the first input
    lazy = torchjax.nn.LazyLinear(2)
    lazy.load_state_dict(to_jax_state(tm.state_dict()))
    assert lazy.weight.shape == (2, 3) and lazy.in_features == 0
    out = lazy(torchjax.tensor(x))
    assert lazy.in_features == 3 and type(lazy) is torchjax.nn.Linear
    np.testing.assert_allclose(out.detach().numpy(), tm(torch.tensor(x)).detach().numpy(),
                               rtol=1e-6)
