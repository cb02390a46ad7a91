"""Padding layers and F.pad against PyTorch: outputs, input gradients, grad_fn names, repr and
error messages."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

RNG = np.random.default_rng(0)


def _run_both(make, shape, dtype="float32"):
    tm, jm = make(torch.nn), make(torchjax.nn)
    assert repr(jm) == repr(tm)
    assert list(jm.state_dict()) == list(tm.state_dict()) == []
    x = RNG.uniform(-2, 2, size=shape).astype(dtype)
    grad = dtype == "float32"
    xt, xj = torch.tensor(x, requires_grad=grad), torchjax.tensor(x, requires_grad=grad)
    yt, yj = tm(xt), jm(xj)
    assert yj.dtype.name == str(yt.dtype)[6:]
    np.testing.assert_array_equal(yj.detach().numpy(), yt.detach().numpy())
    if not grad:
        return
    assert yj.grad_fn.name() == yt.grad_fn.name()
    ct = RNG.uniform(-1, 1, size=tuple(yt.shape)).astype(np.float32)
    yt.backward(torch.tensor(ct))
    yj.backward(torchjax.tensor(ct))
    np.testing.assert_allclose(xj.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-6)


LAYERS = [
    (lambda nn: nn.ZeroPad1d(2), (2, 3, 4)),
    (lambda nn: nn.ZeroPad2d((1, 0, 2, -1)), (3, 4, 4)),
    (lambda nn: nn.ConstantPad1d((3, 1), 2.5), (3, 4)),
    (lambda nn: nn.ConstantPad3d((1, 0, 0, 1, 2, 0), 0.5), (2, 2, 3, 3)),
    (lambda nn: nn.ReflectionPad1d((2, 3)), (2, 3, 4)),
    (lambda nn: nn.ReflectionPad2d((1, -1, 3, 0)), (2, 2, 4, 5)),
    (lambda nn: nn.ReflectionPad3d((1, 2, 0, 1, 2, 1)), (1, 2, 3, 3, 3)),
    (lambda nn: nn.ReplicationPad1d((4, 0)), (3, 4)),
    (lambda nn: nn.ReplicationPad2d((1, 5, -1, 2)), (2, 2, 4, 4)),
    (lambda nn: nn.ReplicationPad3d(2), (2, 2, 2, 2)),
    (lambda nn: nn.CircularPad2d((1, 2, -1, 3)), (3, 4, 4)),
    (lambda nn: nn.CircularPad3d(1), (1, 2, 2, 3, 3)),
]


@pytest.mark.parametrize("make, shape", LAYERS, ids=[f"layer{i}" for i in range(len(LAYERS))])
def test_layer_matches_pytorch(make, shape):
    _run_both(make, shape)


@pytest.mark.parametrize("make", [
    lambda nn: nn.ZeroPad3d((1, 2, 3, 4, 5, 6)), lambda nn: nn.ConstantPad2d((1, 2), -1),
    lambda nn: nn.ReflectionPad2d(2), lambda nn: nn.ReplicationPad1d([1, 2]),
    lambda nn: nn.CircularPad1d((4, 2)), lambda nn: nn.CircularPad2d(1),
])
def test_repr(make):
    assert repr(make(torchjax.nn)) == repr(make(torch.nn))


@pytest.mark.parametrize("make", [
    lambda nn: nn.ConstantPad2d(1, 3.7), lambda nn: nn.ReflectionPad1d(2),
    lambda nn: nn.ReplicationPad2d(1), lambda nn: nn.CircularPad1d(1),
], ids=["constant", "reflect", "replicate", "circular"])
def test_integer_input(make):
    _run_both(make, (2, 3, 4), dtype="int64")


def test_zero_pad_is_constant_pad():
    m = torchjax.nn.ZeroPad2d(1)
    assert isinstance(m, torchjax.nn.ConstantPad2d) and m.value == 0.0


@pytest.mark.parametrize("cls, dim", [("CircularPad1d", 4), ("CircularPad2d", 2),
                                      ("CircularPad3d", 3)])
def test_circular_pad_checks_input_dim(cls, dim):
    for lib in (torch, torchjax):
        with pytest.raises(ValueError, match=rf"input \(got {dim}D input\)"):
            getattr(lib.nn, cls)(1)(lib.zeros(*([2] * dim)))


def _pad(shape, pad, *args, **kw):
    return lambda lib: lib.nn.functional.pad(lib.zeros(*shape), pad, *args, **kw)


PAD_ERRORS = [
    _pad((2, 3, 4), (1, 2, 3)),
    _pad((2, 3), (1, 1, 1, 1, 1, 1)),
    _pad((2, 3, 4), (-3, -2)),
    _pad((2, 3, 4), (1, 1), mode="foo"),
    _pad((2, 3, 4), (1, 1), mode="reflect", value=1),
    _pad((2, 3, 4, 4), (1, 1), mode="reflect"),
    _pad((3,), (1, 1), mode="circular"),
    _pad((2, 3, 4), (4, 0), mode="reflect"),
    _pad((2, 3, 4, 4), (1, 1, 4, 0), mode="reflect"),
    _pad((2, 3, 4, 4, 4), (1, 5, 1, 1, 1, 1), mode="reflect"),
    _pad((2, 0, 4), (1, 1), mode="replicate"),
    _pad((2, 1, 4), (1, -5), mode="replicate"),
    _pad((2, 3, 4, 4), (-5, -5, -5, -5), mode="reflect"),
    _pad((2, 3, 4, 4), (-5, -5, -5, -5), mode="replicate"),
    _pad((2, 3, 4, 4, 4), (-2, -2, -2, -2, -2, -2), mode="reflect"),
    _pad((2, 3, 4), (5, 1), mode="circular"),
    _pad((2, 3, 4), (-3, -2), mode="circular"),
    _pad((2, 3, 4), (1.5, 1)),
    _pad((2, 3, 4), (1, 1), None),
    _pad((2, 3, 4), (1, 1), "constant", 1 + 2j),
    lambda lib: lib.nn.functional.pad(lib.zeros(2, 3, dtype=lib.int64), (1, 1),
                                      value=float("nan")),
    lambda lib: lib.nn.functional.pad(lib.zeros(2, 3, dtype=lib.float16), (1, 1), value=1e10),
    lambda lib: lib.constant_pad_nd(lib.zeros(2, 3), (1, 1, 1, 1, 1, 1)),
]


def _error(f, lib):
    try:
        f(lib)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e)
    raise AssertionError(f"{lib.__name__}: no error")


@pytest.mark.parametrize("f", PAD_ERRORS, ids=[f"error{i}" for i in range(len(PAD_ERRORS))])
def test_pad_error_messages_match(f):
    assert _error(f, torchjax) == _error(f, torch)
