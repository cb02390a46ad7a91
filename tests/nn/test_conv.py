"""Convolution layers, Fold / Unfold and the F.conv* functions against PyTorch: outputs, input
and parameter gradients, grad_fn names, state_dict keys, repr, default initialisation and
error messages."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import torchjax

RNG = np.random.default_rng(0)


def _same_module(make):
    """The module built in both libraries, torchjax's with torch's weights."""
    tm, jm = make(torch.nn), make(torchjax.nn)
    jm.load_state_dict({k: torchjax.tensor(v.detach().numpy())
                        for k, v in tm.state_dict().items()})
    return tm, jm


def _run_both(tm, jm, shape, **kw):
    """Forward and backward with the same input and cotangent; compares everything."""
    x = RNG.uniform(-1, 1, size=shape).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    xj = torchjax.tensor(x, requires_grad=True)
    yt, yj = tm(xt, **kw), jm(xj, **kw)
    np.testing.assert_allclose(yj.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    assert yj.grad_fn.name() == yt.grad_fn.name()
    ct = RNG.uniform(-1, 1, size=tuple(yt.shape)).astype(np.float32)
    yt.backward(torch.tensor(ct))
    yj.backward(torchjax.tensor(ct))
    np.testing.assert_allclose(xj.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
    for (nt, pt), (nj, pj) in zip(tm.named_parameters(), jm.named_parameters(), strict=True):
        assert nt == nj
        np.testing.assert_allclose(pj.grad.numpy(), pt.grad.numpy(), rtol=1e-4, atol=1e-4)
    assert list(jm.state_dict()) == list(tm.state_dict())
    assert repr(jm) == repr(tm)


LAYERS = [
    (lambda nn: nn.Conv1d(3, 4, 3, stride=2, padding=1), (2, 3, 7)),
    (lambda nn: nn.Conv1d(4, 4, 2, padding="same", dilation=2, groups=2, bias=False,
                          padding_mode="reflect"), (4, 6)),
    (lambda nn: nn.Conv2d(4, 6, (2, 3), stride=(1, 2), padding=(1, 2), dilation=(2, 1),
                          groups=2, padding_mode="circular"), (2, 4, 5, 6)),
    (lambda nn: nn.Conv3d(2, 3, (2, 3, 2), stride=(1, 2, 1), padding=1), (2, 2, 3, 4, 3)),
    (lambda nn: nn.ConvTranspose1d(4, 2, 3, stride=2, output_padding=1, groups=2), (2, 4, 5)),
    (lambda nn: nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, dilation=2, bias=False),
     (3, 4, 4)),
    (lambda nn: nn.ConvTranspose3d(2, 2, 2, stride=2, padding=(0, 1, 0)), (1, 2, 2, 3, 2)),
]


@pytest.mark.parametrize("make", [
    lambda nn: nn.Conv2d(3, 4, 3), lambda nn: nn.Conv2d(3, 2, 2, padding="valid"),
    lambda nn: nn.Conv2d(3, 2, 3, padding="same", padding_mode="replicate", bias=False),
    lambda nn: nn.Conv3d(2, 4, 1, groups=2, dilation=(1, 2, 1)),
    lambda nn: nn.ConvTranspose2d(3, 2, (2, 3), stride=(2, 1), output_padding=(1, 0)),
    lambda nn: nn.Fold(4, 2), lambda nn: nn.Unfold((2, 3), padding=1),
])
def test_repr_and_state_dict_keys(make):
    tm, jm = make(torch.nn), make(torchjax.nn)
    assert repr(jm) == repr(tm)
    assert list(jm.state_dict()) == list(tm.state_dict())
    assert [tuple(p.shape) for p in jm.parameters()] == [tuple(p.shape) for p in tm.parameters()]


@pytest.mark.parametrize("make, shape", LAYERS, ids=[f"layer{i}" for i in range(len(LAYERS))])
def test_layer_matches_pytorch(make, shape):
    _run_both(*_same_module(make), shape)


@pytest.mark.parametrize("output_size", [(2, 4, 10, 10), torch.Size([10, 9])])
def test_conv_transpose_output_size(output_size):
    tm, jm = _same_module(lambda nn: nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1))
    _run_both(tm, jm, (2, 4, 5, 5), output_size=output_size)


def test_conv_transpose_output_size_errors():
    for lib in (torch, torchjax):
        m = lib.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
        with pytest.raises(ValueError, match=r"requested an output size of \[12, 9\], but valid "
                           r"sizes range from \[9, 9\] to \[10, 10\] \(for an input of "
                           r"torch.Size\(\[5, 5\]\)\)"):
            m(lib.zeros(2, 4, 5, 5), output_size=[12, 9])
        with pytest.raises(ValueError, match="ConvTranspose2D: for 4D input, output_size must "
                           r"have 2 or 4 elements \(got 3\)"):
            m(lib.zeros(2, 4, 5, 5), output_size=[2, 9, 9])


@pytest.mark.parametrize("make", [
    lambda nn: nn.Fold((4, 5), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
    lambda nn: nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
], ids=["Fold", "Unfold"])
def test_fold_unfold_modules(make):
    tm, jm = make(torch.nn), make(torchjax.nn)
    shape = (2, 12, 9) if isinstance(tm, torch.nn.Fold) else (2, 2, 4, 5)
    _run_both(tm, jm, shape)


def test_fold_inverts_unfold_counts():
    x = torchjax.ones(1, 2, 4, 4)
    cols = torchjax.nn.functional.unfold(x, 2)
    counts = torchjax.nn.functional.fold(cols, (4, 4), 2)
    expected = torch.nn.functional.fold(torch.nn.functional.unfold(torch.ones(1, 2, 4, 4), 2),
                                        (4, 4), 2)
    np.testing.assert_array_equal(counts.numpy(), expected.numpy())


@pytest.mark.parametrize("cls, args", [
    ("Conv1d", (4, 6, 5, 1, 0, 1, 2)), ("ConvTranspose2d", (6, 4, 3)),
])
def test_default_init_bounds(cls, args):
    """kaiming_uniform_(a=sqrt(5)) gives weights in +-1/sqrt(fan_in), the bias the same."""
    m = getattr(torchjax.nn, cls)(*args)
    w = m.weight.detach().numpy()
    fan_in = w.shape[1] * int(np.prod(w.shape[2:]))
    bound = 1 / math.sqrt(fan_in)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert abs(w.mean()) < 0.2 * bound and 0.4 * bound < w.std() < 0.75 * bound
    assert np.abs(m.bias.detach().numpy()).max() <= bound
    assert m.weight.requires_grad and m.bias.requires_grad


def test_functional_forms_are_the_torch_functions():
    F = torchjax.nn.functional
    for name in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                 "conv_transpose3d"):
        assert getattr(torchjax, name) is getattr(F, name)


def test_same_padding_even_kernel_warns():
    x, w = torchjax.randn(1, 2, 5), torchjax.randn(3, 2, 2)
    with pytest.warns(UserWarning, match="Using padding='same' with even kernel lengths"):
        torchjax.nn.functional.conv1d(x, w, padding="same")


# Each call must raise the same error type with the same message in both libraries.
def _conv(name, x, w, *b, **kw):
    return lambda lib: getattr(lib.nn.functional, name)(
        lib.zeros(*x), lib.zeros(*w), *(lib.zeros(*s) for s in b), **kw)


CONV_ERRORS = [
    _conv("conv2d", (2, 3), (4, 3, 3, 3)),
    _conv("conv1d", (2, 3, 4, 5), (4, 3, 3)),
    _conv("conv3d", (2, 3, 4, 5), (4, 3, 3, 3, 3)),
    _conv("conv2d", (2, 3, 5, 5), (4, 2, 3, 3)),
    _conv("conv2d", (3, 5, 5), (4, 2, 3, 3)),
    _conv("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), groups=3),
    _conv("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), groups=8),
    _conv("conv2d", (2, 3, 5, 5), (4, 3, 3)),
    _conv("conv1d", (2, 3, 5), (4, 3, 3, 3)),
    _conv("conv2d", (2, 3, 5, 5), (4, 3, 7, 7)),
    _conv("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), (3,)),
    _conv("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), stride=0),
    _conv("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), padding=-1),
    _conv("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), dilation=-1),
    _conv("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), dilation=0),
    _conv("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), groups=0),
    _conv("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), padding="same", stride=2),
    _conv("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), padding="foo"),
    _conv("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), padding=(1, 1, 1)),
    _conv("conv2d", (2, 3, 5, 5), (4, 3, 3, 3), padding=1.5),
    _conv("conv2d", (2, 3, 5, 5), (4, 3, 7), padding="same"),
    _conv("conv2d", (2, 3, 5, 5), (4, 3, 7, 7), padding="same", stride=(1, 1, 1)),
    _conv("conv_transpose2d", (2, 3), (3, 2, 3, 3)),
    _conv("conv_transpose2d", (2, 3, 5, 5), (4, 3, 3, 3)),
    _conv("conv_transpose2d", (2, 3, 5, 5), (3, 2, 3, 3), (3,)),
    _conv("conv_transpose2d", (2, 3, 5, 5), (3, 2, 3, 3), output_padding=1),
    _conv("conv_transpose1d", (2, 3, 5), (3, 2, 3), output_padding=1),
    _conv("conv_transpose3d", (1, 3, 2, 2, 2), (3, 2, 2, 2, 2), output_padding=1),
    _conv("conv_transpose2d", (2, 3, 5, 5), (3, 2, 3, 3), output_padding=-1),
    _conv("conv_transpose2d", (2, 3, 5, 5), (3, 2, 3, 3), stride=1.5),
    _conv("conv_transpose2d", (2, 3, 5, 5), (3, 2, 3, 3), padding="same"),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.zeros(2, 3, 5, 5, dtype=lib.float64),
                                                   lib.zeros(3, 2, 3, 3, dtype=lib.float64),
                                                   padding=4),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 3, 5, 5), lib.zeros(4, 3, 3, 3,
                                                                          dtype=lib.float64)),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 3, 5, 5, dtype=lib.float64),
                                         lib.zeros(4, 3, 3, 3)),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 3, 5, 5), lib.zeros(4, 3, 3, 3),
                                         lib.zeros(4, dtype=lib.float64)),
    lambda lib: lib.nn.functional.conv2d(lib.zeros(2, 3, 5, 5, dtype=lib.bool),
                                         lib.zeros(4, 3, 3, 3, dtype=lib.bool)),
    lambda lib: lib.nn.functional.unfold(lib.zeros(1, 2, 3, 5, 5), 2),
    lambda lib: lib.nn.functional.unfold(lib.zeros(2, 3, 5, 5), 2, stride=0),
    lambda lib: lib.nn.functional.unfold(lib.zeros(2, 3, 5, 5), 2, padding=-1),
    lambda lib: lib.nn.functional.unfold(lib.zeros(2, 3, 5, 5), (2, 2, 2)),
    lambda lib: lib.nn.functional.unfold(lib.zeros(2, 3, 5, 5, dtype=lib.int64), 2),
    lambda lib: lib.nn.functional.fold(lib.zeros(2, 11, 16), (5, 5), 2),
    lambda lib: lib.nn.functional.fold(lib.zeros(2, 12, 15), (5, 5), 2),
    lambda lib: lib.nn.functional.fold(lib.zeros(2, 12, 16, 1), (5, 5), 2),
    lambda lib: lib.nn.functional.fold(lib.zeros(1, 4, 1), (0, 0), 2),
]


def _error(f, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            f(lib)
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return type(e).__name__, str(e)
    raise AssertionError(f"{lib.__name__}: no error")


@pytest.mark.parametrize("f", CONV_ERRORS, ids=[f"error{i}" for i in range(len(CONV_ERRORS))])
def test_error_messages_match(f):
    assert _error(f, torchjax) == _error(f, torch)


@pytest.mark.parametrize("call, message", [
    (lambda nn: nn.Conv2d(4, 4, 3, groups=0), "groups must be a positive integer"),
    (lambda nn: nn.Conv2d(3, 4, 3, groups=2), "in_channels must be divisible by groups"),
    (lambda nn: nn.Conv2d(4, 3, 3, groups=2), "out_channels must be divisible by groups"),
    (lambda nn: nn.Conv2d(3, 4, 3, padding="full"), "Invalid padding string 'full'"),
    (lambda nn: nn.Conv2d(3, 4, 3, padding="same", stride=2),
     "padding='same' is not supported for strided convolutions"),
    (lambda nn: nn.Conv1d(3, 4, 3, padding_mode="wrap"), "padding_mode must be one of"),
    (lambda nn: nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect"),
     'Only "zeros" padding mode is supported for ConvTranspose2d'),
])
def test_constructor_errors(call, message):
    for lib in (torch, torchjax):
        with pytest.raises(ValueError, match=message):
            call(lib.nn)
