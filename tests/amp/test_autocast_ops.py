"""Every op on PyTorch's CPU autocast lists that torchjax has: the result dtype, the values
(to low precision) and the gradients' dtypes under autocast match PyTorch's CPU autocast."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

from .samples import FP32, LOWER, PROMOTE, UNLISTED

_ALL = LOWER + FP32 + PROMOTE + UNLISTED


def _inputs(lib, sample, low, which, grad):
    """Tensors of the sample; float inputs in `which` ("all" or "first") cast to `low`;
    the first `grad` float inputs require grad (grad True: all)."""
    out = []
    n_float = 0
    for a in sample.inputs:
        t = lib.tensor(a)
        if t.is_floating_point():
            if low is not None and (which == "all" or n_float == 0):
                t = t.to(getattr(lib, low))
            n_float += 1
            if grad is True or n_float <= grad:
                t.requires_grad_()
        out.append(t)
    return out


def _run(lib, sample, amp_dtype, low=None, which="all", grad=False):
    xs = _inputs(lib, sample, low, which, grad)
    with lib.autocast("cpu", dtype=getattr(lib, amp_dtype)):
        out = sample.fn(lib, *xs)
    grads = None
    if grad and out.is_floating_point():
        out.float().sum().backward()
        grads = [x.grad for x in xs if x.requires_grad]
    return out, grads


def _numpy(t):
    t = t.detach().resolve_conj()
    return t.numpy() if t.is_complex() else t.float().numpy()


def _close(actual, expected, name):
    a, e = _numpy(actual), _numpy(expected)
    scale = max(1.0, float(np.abs(e).max()) if e.size else 1.0)
    np.testing.assert_allclose(a, e, rtol=0.05, atol=0.05 * scale, err_msg=name)


def _check(sample, amp_dtype, low=None, which="all", grad=False):
    try:
        expected, egrads = _run(torch, sample, amp_dtype, low, which, grad)
    except RuntimeError as e:  # PyTorch's CPU kernel lacks this dtype: nothing to match
        pytest.skip(f"PyTorch: {e}".splitlines()[0][:120])
    actual, agrads = _run(torchjax, sample, amp_dtype, low, which, grad)
    assert str(actual.dtype) == str(expected.dtype), sample.id
    if sample.values:
        _close(actual, expected, sample.id)
    if grad and egrads is not None:
        assert agrads is not None, sample.id
        for g, h in zip(agrads, egrads):
            assert str(g.dtype) == str(h.dtype), f"{sample.id}: gradient dtype"
            _close(g, h, f"{sample.id}: gradient")


@pytest.mark.parametrize("sample", LOWER + PROMOTE + UNLISTED, ids=lambda s: s.id)
def test_float32_inputs_under_bfloat16(sample):
    _check(sample, "bfloat16", grad=sample.grad)


@pytest.mark.parametrize("sample", FP32 + PROMOTE + UNLISTED, ids=lambda s: s.id)
def test_bfloat16_inputs_under_bfloat16(sample):
    _check(sample, "bfloat16", low="bfloat16", grad=sample.grad)


@pytest.mark.parametrize("sample", PROMOTE, ids=lambda s: s.id)
def test_mixed_inputs_promote(sample):
    _check(sample, "bfloat16", low="bfloat16", which="first")


@pytest.mark.parametrize("sample", LOWER, ids=lambda s: s.id)
def test_float32_inputs_under_float16(sample):
    _check(sample, "float16")


_F16_FP32 = [s for s in FP32 if s.id.endswith("loss") or s.id in ("cdist", "prod", "trace")]


@pytest.mark.parametrize("sample", _F16_FP32, ids=lambda s: s.id)
def test_float16_inputs_under_float16(sample):
    _check(sample, "float16", low="float16")


def test_float64_inputs_are_not_cast():
    a = torchjax.randn(3, 4, dtype=torchjax.float64)
    with torchjax.autocast("cpu"):
        assert torchjax.mm(a, a.t()).dtype is torchjax.float64
        assert torchjax.nn.functional.mse_loss(a, a).dtype is torchjax.float64


def _compiled_outputs(samples, amp_dtype, low, where):
    """Every sample's result from one torchjax.compile'd function (fullgraph: a graph break
    fails), autocast entered inside the step (`where` "inside") or around its call."""
    args = [_inputs(torchjax, s, low, "all", False) for s in samples]
    dtype = getattr(torchjax, amp_dtype)

    def every(*xss):
        return [s.fn(torchjax, *xs) for s, xs in zip(samples, xss)]

    if where == "inside":
        step = torchjax.compile(torchjax.autocast("cpu", dtype=dtype)(every), fullgraph=True)
        return step(*args)
    step = torchjax.compile(every, fullgraph=True)
    with torchjax.autocast("cpu", dtype=dtype):
        return step(*args)


@pytest.mark.parametrize("where", ["inside", "around"])
@pytest.mark.parametrize("amp_dtype,low,lists", [
    ("bfloat16", None, "LOWER PROMOTE UNLISTED"),
    ("bfloat16", "bfloat16", "FP32 PROMOTE UNLISTED"),
    ("float16", None, "LOWER")])
def test_compiled_results_match_pytorchs_autocast(amp_dtype, low, lists, where):
    """The same op lists inside torchjax.compile (one program per list: compiling each op
    alone would cost a second apiece): each result's dtype and values are PyTorch's eager
    CPU autocast's."""
    samples = []
    for name in lists.split():
        samples += {"LOWER": LOWER, "FP32": FP32, "PROMOTE": PROMOTE, "UNLISTED": UNLISTED}[name]
    expected = {}
    for s in samples:
        try:
            expected[s.id] = _run(torch, s, amp_dtype, low)[0]
        except RuntimeError:  # PyTorch's CPU kernel lacks this dtype (skipped eagerly too)
            pass
    samples = [s for s in samples if s.id in expected]
    got = _compiled_outputs(samples, amp_dtype, low, where)
    for s, actual in zip(samples, got):
        assert str(actual.dtype) == str(expected[s.id].dtype), s.id
        if s.values:
            _close(actual, expected[s.id], s.id)
