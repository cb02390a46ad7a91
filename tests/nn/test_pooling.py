"""Pooling layers and the pooling functions of nn.functional against PyTorch 2.13: outputs,
indices, input gradients (ties included), repr, and error messages.

The rows themselves (max_pool*d_with_indices, avg_pool*d, adaptive_*, max_unpool2d/3d) are
also compared sample by sample in tests/ops/samples_pooling.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

_RNG = np.random.default_rng(0)


def _data(*shape, ties=False):
    x = _RNG.uniform(-2, 2, size=shape).astype(np.float32)
    return np.round(x) if ties else x


def _outputs(out):
    return list(out) if isinstance(out, tuple) else [out]


def _compare_call(f, x, extra=()):
    """f(lib, input, *extra) in both libraries: outputs, dtypes, grad_fn and input gradients."""
    xt = torch.tensor(x, requires_grad=True)
    xj = torchjax.tensor(x, requires_grad=True)
    ot, oj = _outputs(f(torch, xt, *extra)), _outputs(f(torchjax, xj, *extra))
    assert len(ot) == len(oj)
    for a, b in zip(oj, ot):
        assert str(a.dtype).replace("torchjax", "torch") == str(b.dtype)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert type(oj[0].grad_fn).__name__ == type(ot[0].grad_fn).__name__
    w = _RNG.uniform(-1, 1, size=tuple(ot[0].shape)).astype(np.float32)
    ot[0].backward(torch.tensor(w))
    oj[0].backward(torchjax.tensor(w))
    np.testing.assert_allclose(xj.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-5)


REPRS = [
    ("MaxPool1d", (3,), {}), ("MaxPool2d", ((2, 3), 1, (1, 0)), dict(ceil_mode=True)),
    ("MaxPool3d", (2,), dict(dilation=2, return_indices=True)),
    ("MaxUnpool1d", (2,), {}), ("MaxUnpool2d", ((2, 3),), dict(padding=1)),
    ("MaxUnpool3d", (2, 1), {}), ("AvgPool1d", (3, 2, 1), {}), ("AvgPool2d", ((3, 2),), {}),
    ("AvgPool3d", (2,), dict(divisor_override=3)), ("LPPool1d", (2, 3), {}),
    ("LPPool2d", (1.5, (2, 3)), dict(stride=1)), ("LPPool3d", (3, 2), dict(ceil_mode=True)),
    ("AdaptiveAvgPool1d", (4,), {}), ("AdaptiveAvgPool2d", ((3, None),), {}),
    ("AdaptiveAvgPool3d", (1,), {}), ("AdaptiveMaxPool1d", (3,), dict(return_indices=True)),
    ("AdaptiveMaxPool2d", ((None, 2),), {}), ("AdaptiveMaxPool3d", (2,), {}),
]


@pytest.mark.parametrize("name, args, kwargs", REPRS, ids=[r[0] for r in REPRS])
def test_layer_repr_and_state(name, args, kwargs):
    mt, mj = getattr(torch.nn, name)(*args, **kwargs), getattr(torchjax.nn, name)(*args, **kwargs)
    assert repr(mj) == repr(mt)
    assert list(mj.state_dict()) == list(mt.state_dict()) == []


# Layers run against PyTorch (the rows behind the others are compared in samples_pooling.py):
# (layer, constructor args, constructor kwargs, input shape, integer-valued input for ties)
LAYERS = [
    ("MaxPool1d", (3,), dict(stride=2, padding=1), (2, 3, 9), True),
    ("MaxPool2d", (3, 2, 1), dict(ceil_mode=True, return_indices=True), (2, 3, 6, 5), True),
    ("MaxPool3d", ((2, 1, 2),), dict(dilation=(1, 2, 1)), (2, 4, 5, 4), False),
    ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 5, 4), False),
    ("AdaptiveMaxPool2d", ((3, 2),), dict(return_indices=True), (2, 3, 5, 7), True),
    ("LPPool1d", (2, 3), dict(stride=2, ceil_mode=True), (2, 3, 8), False),
    ("LPPool2d", (1.5, (2, 3)), {}, (2, 3, 4, 6), False),
    ("LPPool3d", (float("inf"), 2), {}, (1, 2, 4, 4, 4), False),
]


@pytest.mark.parametrize("name, args, kwargs, shape, ties", LAYERS,
                         ids=[c[0] for c in LAYERS])
def test_layer_matches_torch(name, args, kwargs, shape, ties):
    mt, mj = getattr(torch.nn, name)(*args, **kwargs), getattr(torchjax.nn, name)(*args, **kwargs)
    x = _data(*shape, ties=ties)
    if name.startswith("LP"):
        x = np.abs(x) + 0.1  # a fractional power of a negative sum is NaN in both
    _compare_call(lambda lib, t: (mj if lib is torchjax else mt)(t), x)


@pytest.mark.parametrize("n", [1, 3])
def test_max_unpool_layer_inverts_max_pool(n):
    shape = (2, 3) + (5, 4, 5)[:n]
    pool = {lib: getattr(lib.nn, f"MaxPool{n}d")(2, stride=1, return_indices=True)
            for lib in (torch, torchjax)}
    unpool = {lib: getattr(lib.nn, f"MaxUnpool{n}d")(2, stride=1) for lib in (torch, torchjax)}

    def f(lib, x):  # overlapping windows: an element can be sent twice (with the same value)
        values, indices = pool[lib](x)
        return unpool[lib](values, indices, output_size=x.shape)

    _compare_call(f, _data(*shape, ties=True))


def test_max_pool1d_without_indices_and_return_types():
    F, TF = torchjax.nn.functional, torch.nn.functional
    x = _data(2, 3, 9, ties=True)
    _compare_call(lambda lib, t: lib.nn.functional.max_pool1d(t, 3, 2, 1, ceil_mode=True), x)
    out = F.max_pool2d(torchjax.tensor(_data(1, 2, 4, 4)), 2, return_indices=True)
    ref = TF.max_pool2d(torch.tensor(_data(1, 2, 4, 4)), 2, return_indices=True)
    assert type(out) is type(ref) is tuple
    assert out[1].dtype == torchjax.int64 and not out[1].requires_grad


def test_nan_and_infinity_choice():
    # a NaN always wins (the last one); a window of -inf keeps its first element in the input
    nan, inf = float("nan"), float("inf")
    x = np.array([[[1, nan, 3, nan, 2, 2, -inf, -inf, -inf, 0.5]]], np.float32)
    for f in (lambda lib, t: lib.nn.functional.max_pool1d(t, 3, 1, 1, return_indices=True),
              lambda lib, t: lib.nn.functional.adaptive_max_pool1d(t, 4, return_indices=True),
              # dilation leaves windows with every tap in the padding: -inf, a position past it
              lambda lib, t: lib.nn.functional.max_pool2d(t[..., None], (3, 2), 1, (1, 1),
                                                          (2, 2), return_indices=True)):
        rt, rj = f(torch, torch.tensor(x)), f(torchjax, torchjax.tensor(x))
        np.testing.assert_array_equal(rj[1].numpy(), rt[1].numpy())
        np.testing.assert_array_equal(rj[0].numpy(), rt[0].numpy())


def test_integer_inputs():
    x = _RNG.integers(-9, 9, size=(2, 3, 5, 5))
    for f in (lambda lib, t: lib.nn.functional.max_pool2d(t, 3, 2, 1, return_indices=True),
              lambda lib, t: lib.nn.functional.avg_pool2d(t, 3, 2, 1)):  # truncating division
        rt, rj = _outputs(f(torch, torch.tensor(x))), _outputs(f(torchjax, torchjax.tensor(x)))
        for a, b in zip(rj, rt):
            assert str(a.dtype).replace("torchjax", "torch") == str(b.dtype)
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def _error(f, lib):
    try:
        f(lib, lib.nn.functional)
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return type(e).__name__, str(e)
    return "no error", ""


def _t(lib, *shape, dtype=None):
    t = lib.tensor(_data(*shape)) if shape else lib.tensor(1.0)
    return t.to(getattr(lib, dtype)) if dtype else t


def _idx(lib, *vals):
    return lib.tensor(np.array(vals, np.int64).reshape(1, 1, 2, 2))


ERRORS = [
    # rank, padding, output size and argument checks, in PyTorch's order and words
    (lambda L, F: F.max_pool2d(_t(L, 5, 5), 2), "non-empty 3D or 4D"),
    (lambda L, F: F.max_pool1d(_t(L, 5), 2), "max_pool1d: Expected 2D or 3D"),
    (lambda L, F: F.max_pool1d(_t(L, 5), 2, return_indices=True), "Expected 2 to 3 dimensions"),
    (lambda L, F: F.max_pool3d(_t(L, 3, 5, 5), 2), "non-empty 4D or 5D"),
    (lambda L, F: F.max_pool2d(_t(L, 2, 3, 5, 5), 2, padding=2), "at most half of effective"),
    (lambda L, F: F.max_pool2d(_t(L, 2, 3, 5, 5), 2, 1, 2, 3), "smaller than or equal to half"),
    (lambda L, F: F.max_pool3d(_t(L, 1, 2, 4, 4, 4), 2, 1, 2, 3), "padT: 2"),
    (lambda L, F: F.max_pool1d(_t(L, 2, 3, 5), 2, padding=2), "padding should be at most half"),
    (lambda L, F: F.max_pool2d(_t(L, 1, 1, 2, 2), 3), "Output size is too small"),
    (lambda L, F: F.max_pool1d(_t(L, 1, 1, 2), 3), "Invalid computed output size: 0"),
    (lambda L, F: F.max_pool3d(_t(L, 1, 1, 2, 2, 2), 3), "Output size is too small"),
    (lambda L, F: F.max_pool2d(_t(L, 2, 3, 5, 5), 0), "stride should not be zero"),
    (lambda L, F: F.max_pool2d(_t(L, 2, 3, 5, 5), -1), "kernel size should be greater"),
    (lambda L, F: F.max_pool2d(_t(L, 2, 3, 5, 5), 2, dilation=0), "dilation should be greater"),
    (lambda L, F: F.max_pool2d(_t(L, 2, 3, 5, 5), (2, 2, 2)), "a tuple of two ints"),
    (lambda L, F: F.max_pool2d(_t(L, 2, 3, 5, 5), 2, 2, -1), "pad must be non-negative"),
    (lambda L, F: F.max_pool1d(_t(L, 2, 3, 5), (2, 2)), "of size 1 but got size 2"),
    (lambda L, F: F.max_pool2d(_t(L, 2, 3, 5, 5), 2.0), "must be tuple of ints, not float"),
    (lambda L, F: F.max_pool2d(_t(L, 2, 0, 5, 5), 2), "optional 0 dim batch size"),
    (lambda L, F: F.max_pool3d(_t(L, 1, 0, 4, 4, 4), 2), "non-batch dimensions to have pos"),
    (lambda L, F: F.max_pool2d(_t(L, 2, 3, 5, 5) > 0, 2), "not implemented for 'Bool'"),
    (lambda L, F: F.max_pool1d(_t(L, 2, 3, 5).long(), 2), "\"max_pool1d_impl\" not impl"),
    (lambda L, F: F.avg_pool2d(_t(L, 5, 5), 2), "Dimension out of range"),
    (lambda L, F: F.avg_pool2d(_t(L, 2, 3, 5, 5), 2, padding=2), "at most half of effective"),
    (lambda L, F: F.avg_pool1d(_t(L, 2, 3, 5), (2, 2)), "should contain one int (got 2)"),
    (lambda L, F: F.avg_pool3d(_t(L, 1, 1, 2, 2, 2), 3, padding=1), "smaller than kernel size"),
    (lambda L, F: F.avg_pool2d(_t(L, 2, 3, 5, 5), 2, divisor_override=0), "divisor must be not"),
    (lambda L, F: F.avg_pool3d(_t(L, 1, 2, 4, 4, 4), (2, 2)), "a tuple of three ints"),
    (lambda L, F: F.avg_pool2d(_t(L, 2, 3, 4, 4).int(), 2), "\"avg_pool2d\" not implemented"),
    (lambda L, F: F.adaptive_avg_pool2d(_t(L, 5, 5), 2), "Expected 3D or 4D tensor"),
    (lambda L, F: F.adaptive_avg_pool2d(_t(L, 2, 3, 5, 5), (2, 2, 2)), "output_size must be 2"),
    (lambda L, F: F.adaptive_avg_pool2d(_t(L, 2, 3, 5, 5), -1), "received {-1, -1}"),
    (lambda L, F: F.adaptive_avg_pool2d(_t(L, 5), (None, 2)), "dimension should be at least 3"),
    (lambda L, F: F.adaptive_avg_pool2d(_t(L, 2, 3, 0, 5), 2), "dimension 2 being empty"),
    (lambda L, F: F.adaptive_avg_pool1d(_t(L, 2, 3, 5), None), "must be tuple of ints, not None"),
    (lambda L, F: F.adaptive_max_pool2d(_t(L, 5, 5), 2), "Expected 3D or 4D tensor, but got:"),
    (lambda L, F: F.adaptive_max_pool1d(_t(L, 2, 3, 5), -1), "negative dimension -1"),
    (lambda L, F: F.adaptive_max_pool3d(_t(L, 1, 0, 3, 3, 3), 2), "dimension 1 being empty"),
    (lambda L, F: F.adaptive_max_pool2d(_t(L, 2, 3, 5, 5).long(), 2), "not implemented for"),
    (lambda L, F: F.lp_pool2d(_t(L, 5, 5), 2, 2), "Dimension out of range"),
    (lambda L, F: F.max_unpool2d(_t(L, 1, 1, 2, 2), _idx(L, 0, -5, 15, 3), 2),
     "Found an invalid max index: -5 (output volumes are of size 4x4)"),
    (lambda L, F: F.max_unpool2d(_t(L, 1, 1, 2, 2), _idx(L, 0, 5, 15, 3).int(), 2),
     "should be type int64"),
    (lambda L, F: F.max_unpool2d(_t(L, 2, 2), _idx(L, 0, 5, 15, 3)[0, 0], 2),
     "should be a 3d or 4d Tensor"),
    (lambda L, F: F.max_unpool2d(_t(L, 1, 1, 2, 2), _idx(L, 0, 5, 15, 3)[..., :1], 2),
     "Expected shape of indices to be same"),
    (lambda L, F: F.max_unpool2d(_t(L, 1, 1, 2, 2), _idx(L, 0, 5, 15, 3), 2, output_size=(9, 9)),
     "dim 0 must be between 2 and 6"),
    (lambda L, F: F.max_unpool3d(_t(L, 1, 1, 1, 2, 2), _idx(L, 0, 5, 15, 3)[None], 2, 0),
     "strides should be greater than zero"),
]


@pytest.mark.parametrize("f, phrase", ERRORS, ids=[e[1][:30] for e in ERRORS])
def test_error_messages_match_torch(f, phrase):
    (kind_t, msg_t), (kind_j, msg_j) = _error(f, torch), _error(f, torchjax)
    assert phrase in msg_t, msg_t  # the case still is the mistake it means to test
    assert (kind_j, msg_j) == (kind_t, msg_t)
