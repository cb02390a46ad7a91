"""The CPU lowering of convolutions and average pooling (torchjax/_ops/conv_cpu.py,
pooling._window_sum): results and gradients against PyTorch over a spread of arguments,
float64 finite differences, forward mode and second order, and the check that the CPU form is
what XLA's CPU backend runs while other platforms keep lax's convolution."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import torchjax
from torchjax._ops import conv_cpu

RNG = np.random.default_rng(14)


@pytest.fixture(autouse=True)
def _cpu_form_at_every_size(monkeypatch):
    """The shapes here are small enough for the size rule to keep lax's lowering; the tests
    are about the CPU form, so the rule is lifted (test_size_rule checks the rule itself)."""
    monkeypatch.setattr(conv_cpu, "_MIN_ELEMENTS", 0)

# (function, input shape, weight shape, keyword arguments); weight shapes are PyTorch's
CASES = [
    ("conv2d", (2, 3, 7, 7), (4, 3, 3, 3), {}),  # unpadded: the zero row is added and cut
    ("conv2d", (1, 1, 6, 5), (2, 1, 2, 3), dict(stride=2)),  # batch 1, one channel
    ("conv2d", (2, 4, 8, 7), (6, 2, 3, 2), dict(stride=(2, 1), padding=(1, 0),
                                                 dilation=(1, 2), groups=2)),
    ("conv2d", (2, 6, 5, 5), (6, 1, 3, 3), dict(padding=1, groups=6)),
    ("conv2d", (2, 3, 5, 4), (4, 3, 1, 1), {}),
    ("conv2d", (2, 2, 9, 9), (3, 2, 3, 3), dict(stride=2, dilation=3)),
    ("conv3d", (1, 2, 4, 5, 4), (3, 2, 2, 3, 2), dict(stride=(1, 2, 1), padding=(0, 1, 0))),
    ("conv3d", (2, 4, 4, 4, 4), (4, 2, 3, 3, 3), dict(groups=2)),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), dict(stride=2, padding=1, output_padding=1,
                                                     groups=2, dilation=2)),
    ("conv_transpose2d", (1, 3, 4, 5), (3, 2, 3, 3), dict(stride=2, padding=1,
                                                           output_padding=1)),
    ("conv_transpose2d", (2, 2, 3, 3), (2, 1, 2, 2), {}),
    ("conv_transpose2d", (2, 4, 3, 4), (4, 3, 3, 2), dict(stride=(2, 3), padding=(1, 0),
                                                           dilation=(2, 1),
                                                           output_padding=(1, 2), groups=2)),
    ("conv_transpose3d", (1, 2, 2, 3, 2), (2, 3, 2, 2, 2), dict(stride=2, padding=(0, 1, 0))),
]
# cases that keep lax's lowering on CPU too (conv_cpu._cpu_form says why)
LAX_CASES = [
    ("conv1d", (2, 3, 9), (4, 3, 3), dict(stride=2)),
    ("conv_transpose2d", (1, 2, 3, 3), (2, 2, 2, 2), dict(dilation=2, output_padding=1)),
    ("conv2d", (1, 1, 9, 9), (1, 1, 9, 8), {}),  # more taps than _MAX_TAPS
]


def _ids(cases):
    return [f"{c[0]}-{'x'.join(map(str, c[1]))}-{c[3]}" for c in cases]


@pytest.mark.parametrize("name, xs, ws, kw", CASES + LAX_CASES, ids=_ids(CASES + LAX_CASES))
def test_against_pytorch(name, xs, ws, kw):
    """Output and the input, weight and bias gradients of the same call in both libraries."""
    transposed = "transpose" in name
    groups = kw.get("groups", 1)
    n_out = ws[1] * groups if transposed else ws[0]
    arrays = [RNG.uniform(-1, 1, size=s).astype(np.float32) for s in (xs, ws, (n_out,))]
    results = []
    for lib in (torch, torchjax):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in arrays)
        y = getattr(lib.nn.functional, name)(x, w, b, **kw)
        ct = np.linspace(-1, 1, y.numel(), dtype=np.float32).reshape(tuple(y.shape))
        y.backward(lib.tensor(ct))
        results.append([y.detach().numpy()] + [t.grad.numpy() for t in (x, w, b)])
    for got, want in zip(results[1], results[0], strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _statics(name, xs, ws, kw):
    dim = len(xs) - 2

    def tup(v, default):
        v = kw.get(v, default)
        return tuple(v) if isinstance(v, tuple) else (v,) * dim
    return (tup("stride", 1), tup("padding", 0), tup("dilation", 1), "transpose" in name,
            tup("output_padding", 0), kw.get("groups", 1))


# one case of each kind: compiling is most of this test's time
LOWERED = [CASES[i] for i in (0, 3, 6, 8, 10)] + LAX_CASES


@pytest.mark.parametrize("name, xs, ws, kw", LOWERED, ids=_ids(LOWERED))
def test_cpu_form_is_lowered_on_cpu_only(name, xs, ws, kw):
    """Where the CPU form applies, the compiled CPU program of the weight gradient reads it
    as matmuls per kernel tap (XLA may fuse the smallest into elementwise loops), with no
    convolution and no conditional left; elsewhere it is lax's convolution. A TPU lowering of
    the same program has no matmul at all (lax's convolution only)."""
    statics = _statics(name, xs, ws, kw)
    x, w = jnp.zeros(xs, jnp.float32), jnp.zeros(ws, jnp.float32)
    applies = conv_cpu._cpu_form(x, w, *statics) is not None
    assert applies == ((name, xs, ws, kw) in CASES)

    def weight_grad(x, w):
        return jax.grad(lambda w: conv_cpu.convolution(x, w, *statics).sum())(w)

    traced = jax.jit(weight_grad).trace(x, w)
    cpu_text = traced.lower(lowering_platforms=("cpu",)).compile().as_text()
    assert ("convolution(" not in cpu_text) == applies
    assert "conditional" not in cpu_text
    tpu_text = traced.lower(lowering_platforms=("tpu",)).as_text()
    assert "dot_general" not in tpu_text and "convolution" in tpu_text


def test_size_rule(monkeypatch):
    """Small non-transposed convolutions keep lax's lowering, large ones take the CPU form;
    transposed ones take it at any size."""
    monkeypatch.setattr(conv_cpu, "_MIN_ELEMENTS", 1 << 17)
    plain = ((1, 1), (1, 1), (1, 1), False, (0, 0), 1)

    def form(xs, ws, statics=plain):
        return conv_cpu._cpu_form(jax.ShapeDtypeStruct(xs, jnp.float32),
                                  jax.ShapeDtypeStruct(ws, jnp.float32), *statics)
    assert form((64, 16, 4, 4), (32, 16, 3, 3)) is None
    assert form((64, 1, 28, 28), (32, 1, 3, 3)) is not None  # the first layer
    assert form((16, 64, 14, 14), (64, 64, 3, 3)) is not None
    assert form((2, 4, 3, 3), (4, 2, 3, 3), ((2, 2), (1, 1), (1, 1), True, (1, 1), 1))


GRADCHECK = [  # (call, input shape, weight shape)
    (lambda F, x, w: F.conv2d(x, w), (1, 2, 5, 4), (2, 2, 2, 3)),
    (lambda F, x, w: F.conv2d(x, w, stride=2, padding=1, groups=2), (1, 2, 5, 4), (2, 1, 2, 3)),
    (lambda F, x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
     (1, 2, 3, 4), (2, 3, 2, 3)),
    (lambda F, x, w: F.conv3d(x, w, padding=(1, 0, 1)), (1, 2, 3, 4, 3), (2, 2, 2, 2, 2)),
]


@pytest.mark.parametrize("fn, xs, ws", GRADCHECK,
                         ids=["plain", "strided-grouped", "transposed", "3d"])
def test_gradcheck_float64(fn, xs, ws):
    """float64 finite differences for both inputs through the CPU form."""
    x = torchjax.tensor(RNG.normal(size=xs), requires_grad=True)
    w = torchjax.tensor(RNG.normal(size=ws), requires_grad=True)
    assert torchjax.autograd.gradcheck(lambda x, w: fn(torchjax.nn.functional, x, w), (x, w))


def test_gradgradcheck_float64():
    """Second order through the CPU form's jvp rule (its weight tangent is plain JAX ops)."""
    x = torchjax.tensor(RNG.normal(size=(1, 2, 4, 4)), requires_grad=True)
    w = torchjax.tensor(RNG.normal(size=(2, 2, 2, 2)), requires_grad=True)
    assert torchjax.autograd.gradgradcheck(
        lambda x, w: torchjax.nn.functional.conv2d(x, w, stride=(1, 2)), (x, w))


def test_gradcheck_avg_pool_float64():
    """The CPU window sum of average pooling, padded and strided."""
    p = torchjax.tensor(RNG.normal(size=(1, 2, 5, 6)), requires_grad=True)
    assert torchjax.autograd.gradcheck(
        lambda p: torchjax.nn.functional.avg_pool2d(p, 3, stride=2, padding=1), (p,))


@pytest.mark.parametrize("transposed", [False, True])
def test_forward_mode_matches_lax(transposed):
    """jax.jvp and jax.vjp of the CPU form equal lax's, in float64 (jax.jvp runs the custom
    rule itself; the dispatcher only ever uses reverse mode)."""
    with jax.enable_x64(True):
        x = jnp.asarray(RNG.normal(size=(2, 4, 5, 6)))
        w = jnp.asarray(RNG.normal(size=(4, 3, 3, 2)))
        args = ((2, 1), (1, 0), (1, 2))
        if transposed:
            cpu = lambda x, w: conv_cpu.cpu_conv_transposed(x, w, *args, (1, 0), 2)  # noqa: E731
            ref = lambda x, w: conv_cpu.lax_conv_transposed(x, w, *args, (1, 0), 2)  # noqa: E731
        else:
            w = w[:, :2]
            cpu = lambda x, w: conv_cpu.cpu_conv(x, w, *args, 2)  # noqa: E731
            ref = lambda x, w: conv_cpu.lax_conv(x, w, *args, 2)  # noqa: E731
        tangents = (0.3 * x, -0.7 * w)
        for got, want in zip(jax.jvp(cpu, (x, w), tangents), jax.jvp(ref, (x, w), tangents)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        ct = jnp.asarray(RNG.normal(size=ref(x, w).shape))
        for got, want in zip(jax.vjp(cpu, x, w)[1](ct), jax.vjp(ref, x, w)[1](ct)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_half_precision_accumulates_in_float32():
    """bfloat16 runs in float32 inside the CPU form and rounds once, as lax's accumulation
    does: the result equals PyTorch's float32 result rounded to bfloat16, within one ulp."""
    x = RNG.uniform(-1, 1, size=(1, 8, 6, 6)).astype(np.float32)
    w = RNG.uniform(-1, 1, size=(4, 8, 3, 3)).astype(np.float32)
    want = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w)).to(torch.bfloat16)
    got = torchjax.nn.functional.conv2d(torchjax.tensor(x).bfloat16(),
                                        torchjax.tensor(w).bfloat16())
    assert got.dtype == torchjax.bfloat16
    # the inputs are rounded to bfloat16 first, so compare at bfloat16's resolution
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=2e-2, atol=5e-2)
