"""Views, clones and splits of pending results are recorded into the sequence
(_deferred_views.py, _deferred_split.py), and pow of a float tensor by a number is deferred
too (its integer check cannot fail there): values, strides, view links and in-place writes
are PyTorch's, and a transformer block's forward is no longer cut at each view."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax
from tests.test_deferred import deferred_on  # noqa: F401 (autouse: deferral on)
from torchjax import _deferred_split, _deferred_views

RNG = np.random.default_rng(2711)
X = RNG.standard_normal((2, 6, 12)).astype(np.float32)
W = RNG.standard_normal((36, 12)).astype(np.float32) / 4
BIAS = RNG.standard_normal(36).astype(np.float32) / 4


def _pending(t):
    return t._lazy is not None


def _attention(lib, x, w, b):
    """minGPT's attention core: a projection split in three, views, transposes, a GELU."""
    B, T, C = x.shape
    q, k, v = lib.nn.functional.linear(x * 1.0, w, b).split(C, dim=2)
    q = q.view(B, T, 3, C // 3).transpose(1, 2)
    k = k.view(B, T, 3, C // 3).transpose(1, 2)
    v = v.view(B, T, 3, C // 3).transpose(1, 2)
    att = (q @ k.transpose(-2, -1)).softmax(-1)
    y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
    return 0.5 * y * (1.0 + lib.tanh(0.8 * (y + 0.044715 * lib.pow(y, 3.0))))


def test_a_transformer_block_runs_as_one_sequence_with_pytorch_s_values():
    w_t, b_t = torchjax.tensor(W), torchjax.tensor(BIAS)
    want = _attention(torch, torch.tensor(X), torch.tensor(W), torch.tensor(BIAS))
    for i in range(6):  # (each kind's first call is eager, as its inputs become pending)
        views, pieces = _deferred_views.STATS["deferred"], _deferred_split.STATS["deferred"]
        with torchjax.no_grad():
            got = _attention(torchjax, torchjax.tensor(X), w_t, b_t)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
        assert got.stride() == want.stride() and got.shape == want.shape
    # the last pass recorded its 9 views, contiguous()'s clone and the split
    assert _deferred_views.STATS["deferred"] - views == 10
    assert _deferred_split.STATS["deferred"] - pieces == 1


@pytest.mark.parametrize("make", [
    lambda t: t.transpose(1, 2),
    lambda t: t.permute(2, 0, 1),
    lambda t: t.view(12, 12).t(),
    lambda t: t.unsqueeze(1).transpose(0, 1),
    lambda t: t.transpose(0, 1).contiguous(),
    lambda t: t.transpose(0, 1).reshape(6, 24),  # (a copy in PyTorch: no view exists)
    lambda t: t[:, 1:4].squeeze(0) if t.shape[0] == 1 else t.narrow(1, 1, 3),
], ids=["transpose", "permute", "view-t", "unsqueeze", "contiguous", "reshape-copy",
        "narrow"])
def test_views_of_a_pending_result_keep_pytorch_s_links(make):
    """The view's value, strides, offset, base and version counter are PyTorch's; a write
    through it reaches its base (and the other way)."""
    for _ in range(3):
        with torchjax.no_grad():
            base = torchjax.tensor(X) * 2.0
            v = make(base)
        tb = torch.tensor(X) * 2.0
        tv = make(tb)
        assert v.stride() == tv.stride() and v.storage_offset() == tv.storage_offset()
        assert v.is_contiguous() == tv.is_contiguous()
        assert (v._base is base) == (tv._base is tb)
        np.testing.assert_allclose(v.numpy(), tv.numpy(), rtol=1e-6)
        v.add_(1.0)
        tv.add_(1.0)
        np.testing.assert_allclose(base.numpy(), tb.numpy(), rtol=1e-6)
        assert base._version == tb._version and v._version == tv._version


def test_a_view_pytorch_refuses_still_raises_its_error():
    for _ in range(3):
        with torchjax.no_grad():
            t = (torchjax.tensor(X) * 2.0).transpose(1, 2)
            with pytest.raises(RuntimeError, match="view size is not compatible"):
                t.view(2, 72)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        (torch.tensor(X) * 2.0).transpose(1, 2).view(2, 72)


def test_pow_of_a_float_tensor_is_deferred_and_an_integer_one_still_checked():
    for i in range(3):
        with torchjax.no_grad():
            y = torchjax.pow(torchjax.tensor(X) * 1.5, 3.0) + 1.0
            assert _pending(y) or i == 0  # (the kind's first call may be eager)
        np.testing.assert_allclose(y.numpy(), (torch.tensor(X) * 1.5).pow(3.0).numpy() + 1,
                                   rtol=1e-5)
    n = torchjax.tensor([1, 2, 3])
    for _ in range(3):
        assert n.pow(2).tolist() == [1, 4, 9]
        with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
            n.pow(-1)


def test_a_linear_without_bias_is_deferred_and_a_graph_through_it_still_trains():
    """linear(x, w) passes None for its bias: an argument the deferred sequence keeps as a
    constant (nanoGPT's bias=False layers, a GPT's lm_head); with grad it runs as before."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 12)).astype(np.float32)
    w = rng.standard_normal((5, 12)).astype(np.float32)
    F, tF = torchjax.nn.functional, torch.nn.functional
    want = (tF.linear(torch.tensor(x) * 2, torch.tensor(w)).relu() + 1).numpy()
    for i in range(4):
        with torchjax.no_grad():
            y = F.linear(torchjax.tensor(x) * 2, torchjax.tensor(w)).relu() + 1
            assert _pending(y) or i == 0
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-5)
    wt, wT = torchjax.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    for _ in range(3):
        F.linear(torchjax.tensor(x), wt).tanh().sum().backward()
        tF.linear(torch.tensor(x), wT).tanh().sum().backward()
    np.testing.assert_allclose(wt.grad.numpy(), wT.grad.numpy(), rtol=1e-5, atol=1e-5)
