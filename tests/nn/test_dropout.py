"""Dropout functions and layers: the random masks are compared by their statistics (fraction
dropped, 1/(1-p) scaling, whole channels, alpha dropout's mean and variance), plus seeding, eval
mode, gradients, in-place forms, warnings and errors against PyTorch."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import torchjax

F = torchjax.nn.functional


def _np(t):
    return t.detach().numpy()


def test_dropout_fraction_scaling_and_gradient():
    x = torchjax.ones(4000, requires_grad=True)
    y = F.dropout(x, 0.3)
    out = _np(y)
    assert abs((out == 0).mean() - 0.3) < 0.03
    np.testing.assert_allclose(np.unique(out[out != 0]), [1 / 0.7], rtol=1e-6)
    assert type(y.grad_fn).__name__ == "MulBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(_np(x.grad), out)  # d(x * mask)/dx is the mask


def test_masks_follow_manual_seed_and_differ_between_calls():
    x = torchjax.ones(64)
    torchjax.manual_seed(7)
    a, b = _np(F.dropout(x)), _np(F.dropout(x))
    torchjax.manual_seed(7)
    assert np.array_equal(_np(F.dropout(x)), a)
    assert not np.array_equal(a, b)
    g = torchjax.Generator().manual_seed(7)
    assert g.initial_seed() == 7


@pytest.mark.parametrize("name", ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
                                  "AlphaDropout", "FeatureAlphaDropout"])
def test_layers_repr_and_eval_identity(name):
    jm, tm = getattr(torchjax.nn, name)(0.2, inplace=True), getattr(torch.nn, name)(0.2, True)
    assert repr(jm) == repr(tm) and not jm.state_dict()
    x = torchjax.randn(2, 3, 4) if name == "Dropout1d" else torchjax.randn(2, 3, 4, 4)
    assert jm.eval()(x) is x


def test_p_bounds_training_flag_and_edge_probabilities():
    msg = "dropout probability has to be between 0 and 1, but got 1.5"
    with pytest.raises(ValueError, match=msg):
        torchjax.nn.Dropout(1.5)
    with pytest.raises(ValueError, match=msg):
        F.dropout2d(torchjax.ones(2, 3, 4), 1.5)
    x = torchjax.randn(3, 4, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x and F.dropout(x, 0.0) is x
    assert F.alpha_dropout(x, 0.5) is x  # alpha dropout's training defaults to False
    y = F.dropout(x, 1.0)
    assert not _np(y).any() and type(y.grad_fn).__name__ == "MulBackward0"
    y.sum().backward()
    assert not _np(x.grad).any()


def test_integer_input_is_rejected_like_pytorch():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        F.dropout(torchjax.arange(4), 0.5)


def _channels_all_or_nothing(out, p, channel_dims):
    """Every channel slice is all zero or all 1/(1-p); returns the fraction dropped."""
    flat = out.reshape(out.shape[:channel_dims] + (-1,))
    dropped = (flat == 0).all(-1)
    kept = np.isclose(flat, 1 / (1 - p)).all(-1)
    assert (dropped | kept).all()
    return dropped.mean()


@pytest.mark.parametrize("fn, shape, channel_dims", [
    ("dropout1d", (20, 25, 3), 2),
    ("dropout1d", (500, 3), 1),
    ("dropout2d", (20, 25, 2, 2), 2),
    ("dropout3d", (20, 25, 2, 1, 2), 2),
    ("dropout3d", (500, 2, 1, 2), 1),
])
def test_feature_dropout_drops_whole_channels(fn, shape, channel_dims):
    out = _np(getattr(F, fn)(torchjax.ones(*shape), 0.4))
    assert abs(_channels_all_or_nothing(out, 0.4, channel_dims) - 0.4) < 0.08


def test_unbatched_feature_dropout_grad_fn_and_inplace():
    x = torchjax.ones(4, 3, requires_grad=True)
    assert type(F.dropout1d(x, 0.5).grad_fn).__name__ == "SqueezeBackward1"
    y = torchjax.ones(6, 2)
    assert F.dropout1d(y, 0.5, inplace=True) is y
    _channels_all_or_nothing(_np(y), 0.5, 1)


def test_dropout2d_warnings():
    with pytest.warns(UserWarning, match="assuming that channel-wise 1D dropout"):
        F.dropout2d(torchjax.ones(2, 3, 4))
    with pytest.warns(UserWarning, match=re.escape("Received a 2-D input to dropout2d")):
        F.dropout2d(torchjax.ones(2, 3))


def test_feature_dropout_errors():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a "
                                           "4D input"):
        F.dropout1d(torchjax.ones(2, 3, 4, 5))
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions"):
        F.feature_alpha_dropout(torchjax.ones(4), 0.5, training=True)


def _alpha_values(p):
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * p + 1) * (1 - p))
    return a, 1.7580993408473766 * a * p, -1.7580993408473766 * a * (1 - p)


def test_alpha_dropout_keeps_mean_and_variance():
    torchjax.manual_seed(0)
    x = torchjax.randn(20000, requires_grad=True)
    y = F.alpha_dropout(x, 0.2, training=True)
    out = _np(y)
    assert abs(out.mean()) < 0.03 and abs(out.std() - 1) < 0.03
    assert type(y.grad_fn).__name__ == "AddBackward0"
    a, shift_kept, dropped = _alpha_values(0.2)
    is_dropped = np.isclose(out, dropped, atol=1e-6)
    assert abs(is_dropped.mean() - 0.2) < 0.02
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), np.where(is_dropped, 0, a), rtol=1e-6)
    # for a zero input, the same two values as PyTorch
    got = np.unique(_np(F.alpha_dropout(torchjax.zeros(20000), 0.2, True)))
    want = np.unique(torch.nn.functional.alpha_dropout(torch.zeros(20000), 0.2, True).numpy())
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, sorted([shift_kept, dropped]), rtol=1e-6)


def test_feature_alpha_dropout_is_constant_per_channel():
    out = _np(F.feature_alpha_dropout(torchjax.zeros(30, 20, 4), 0.3, training=True))
    assert (out == out[..., :1]).all()
    _, kept, dropped = _alpha_values(0.3)
    np.testing.assert_allclose(np.unique(out), sorted([kept, dropped]), rtol=1e-6)


def test_inplace_forms_write_into_the_input():
    x = torchjax.ones(100)
    version = x._version
    assert F.dropout(x, 0.5, inplace=True) is x and x._version > version
    assert set(np.unique(_np(x))) <= {0.0, 2.0}
    leaf = torchjax.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation."):
        F.dropout(leaf, 0.5, inplace=True)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_kept_and_dropped_values_equal_pytorch_bit_for_bit(dtype):
    """The scale 1/(1-p) and alpha dropout's two values, rounded as PyTorch rounds them."""
    def values(lib, fn, x):
        out = fn(getattr(lib, x)(300).to(getattr(lib, dtype)), 0.3, True)
        return np.unique(out.float().numpy())

    for fn, x in (("dropout", "ones"), ("alpha_dropout", "ones"), ("alpha_dropout", "zeros")):
        got = values(torchjax, getattr(F, fn), x)
        want = values(torch, getattr(torch.nn.functional, fn), x)
        np.testing.assert_array_equal(got, want, err_msg=f"{fn} of {x}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("fn", ["dropout", "alpha_dropout", "dropout2d"])
def test_a_shapes_first_noise_is_its_kernels_bit_for_bit(dtype, fn, monkeypatch):
    """A kind of noise's first draw comes from the chunk program (its kernel compiles on
    another thread meanwhile); the second, with the same seed, from the kernel: equal bits."""
    from torchjax.nn._functional import dropout as impl

    dt = getattr(torchjax, dtype)
    ct = torchjax.float64 if dtype == "float64" else torchjax.float32
    torchjax.rand(3, dtype=ct)  # the chunk program of these uniforms exists (parameters)
    # a kind of noise no test (nor an earlier run, whose kernels a warm cache holds) has met
    k = int(np.random.default_rng().integers(1000, 10**5))
    shape = (k // 10, 3, 2, 2) if fn == "dropout2d" else (2, 3, k)  # (2d: noise (k // 10, 3))
    x = torchjax.randn(*shape, dtype=torchjax.float64).to(dt)
    from_chunks = []
    real = impl._noise_from_chunks

    def spy(*key):
        from_chunks.append(key)
        return real(*key)

    monkeypatch.setattr(impl, "_noise_from_chunks", spy)
    out = []
    for _ in range(2):
        torchjax.manual_seed(11)
        out.append(getattr(F, fn)(x, 0.4, training=True).to(torchjax.float64).numpy())
    assert len(from_chunks) == 1
    np.testing.assert_array_equal(out[0], out[1])
    if fn != "alpha_dropout":
        assert 0.3 < (out[0] != 0).mean() < 0.9


def test_noise_kernel_after_a_first_chunked_draw_inside_compile():
    """Inside torchjax.compile the kernel is traced into the step: no chunk path there."""
    lin = torchjax.nn.Linear(4, 6)
    drop = torchjax.nn.Dropout(0.5)

    @torchjax.compile
    def step(x):
        return drop(lin(x)).sum()

    x = torchjax.ones(7, 4)
    torchjax.manual_seed(3)
    a = float(step(x))
    torchjax.manual_seed(3)
    b = float(step(x))
    assert a == b
