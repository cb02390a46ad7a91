"""torch.stft and torch.istft (src/torchjax/_stft.py) against PyTorch 2.13: values, dtypes,
grad_fn names and gradients in float64 (and float32 values) over the options, the
deprecation and window warnings, and PyTorch's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchjax

_rng = np.random.default_rng(0)
X = _rng.normal(size=(2, 48))
W16 = np.hanning(18)[1:-1] + 0.1
W10 = _rng.uniform(0.5, 1, size=10)

STFT = {
    "window_hop": lambda t, x: t.stft(x, 16, hop_length=4, window=t.tensor(W16),
                                      return_complex=True),
    "defaults": lambda t, x: t.stft(x, 16, return_complex=True),
    "1d_short_window_no_center": lambda t, x: t.stft(x[0], 16, hop_length=5, win_length=10,
                                                     window=t.tensor(W10), center=False,
                                                     return_complex=True),
    "twosided_normalized": lambda t, x: t.stft(x, 16, return_complex=True, onesided=False,
                                               normalized=True),
    "real_output_constant_pad": lambda t, x: t.stft(x, 16, return_complex=False,
                                                    pad_mode="constant"),
    "method_replicate": lambda t, x: x.stft(12, hop_length=3, win_length=7, return_complex=True,
                                            pad_mode="replicate"),
    "complex_input": lambda t, x: t.stft(t.complex(x, x * 0.5), 16, window=t.tensor(W16),
                                         return_complex=True),
}


def _run(fn, make_input, dtype="float64"):
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (torch, torchjax):
            x = make_input(lib, dtype)
            r = fn(lib, x)
            weights = lib.tensor(np.cos(np.arange(r.numel())).reshape(tuple(r.shape)),
                                 dtype=getattr(lib, dtype))
            (r.abs() if r.is_complex() else r).mul(weights).sum().backward()
            out.append((r.detach().numpy(), x.grad.numpy(), r.grad_fn.name(), str(r.dtype)))
    return out


def _signal(lib, dtype):
    return lib.tensor(X, dtype=getattr(lib, dtype), requires_grad=True)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(STFT))
def test_stft(name, dtype):
    (a, ga, na, da), (b, gb, nb, db) = _run(STFT[name], _signal, dtype)
    tol = 1e-10 if dtype == "float64" else 2e-5
    assert (nb, db, b.shape) == (na, da, a.shape)
    np.testing.assert_allclose(b, a, rtol=tol, atol=tol)
    np.testing.assert_allclose(gb, ga, rtol=tol, atol=tol)


def _spectrum(**kw):
    def make(lib, dtype):
        x = lib.tensor(X, dtype=getattr(lib, dtype))
        return lib.stft(x, 16, return_complex=True, **kw).detach().requires_grad_()
    return make


ISTFT = {
    "inverse": (lambda t, s: t.istft(s, 16, hop_length=4, window=t.tensor(W16)),
                {"hop_length": 4}),
    "shorter_length": (lambda t, s: t.istft(s, 16, hop_length=4, window=t.tensor(W16),
                                            length=45), {"hop_length": 4}),
    "longer_length_pads": (lambda t, s: t.istft(s, 16, hop_length=4, window=t.tensor(W16),
                                                length=60), {"hop_length": 4}),
    "unbatched": (lambda t, s: t.istft(s[0], 16, hop_length=4, window=t.tensor(W16)),
                  {"hop_length": 4}),
    "method_normalized": (lambda t, s: s.istft(16, hop_length=4, window=t.tensor(W16),
                                               normalized=True),
                          {"hop_length": 4, "normalized": True}),
    "short_window": (lambda t, s: t.istft(s, 16, hop_length=4, win_length=10,
                                          window=t.tensor(W10)), {"hop_length": 4}),
    "no_center": (lambda t, s: t.istft(s, 16, hop_length=4, window=t.ones(16), center=False),
                  {"hop_length": 4, "center": False}),
    "twosided": (lambda t, s: t.istft(s, 16, hop_length=4, window=t.tensor(W16),
                                      onesided=False), {"hop_length": 4, "onesided": False}),
    "complex_output": (lambda t, s: t.istft(s, 16, hop_length=4, window=t.tensor(W16),
                                            onesided=False, return_complex=True),
                       {"hop_length": 4, "onesided": False}),
}


@pytest.mark.parametrize("name", sorted(ISTFT))
def test_istft(name):
    fn, kw = ISTFT[name]
    (a, ga, na, da), (b, gb, nb, db) = _run(fn, _spectrum(**kw))
    assert (nb, db, b.shape) == (na, da, a.shape)
    np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gb, ga, rtol=1e-10, atol=1e-10)


def test_round_trip():
    x = torchjax.tensor(X)
    w = torchjax.hann_window(16, dtype=torchjax.float64)
    y = torchjax.istft(torchjax.stft(x, 16, 4, window=w, return_complex=True), 16, 4, window=w)
    np.testing.assert_allclose(y.numpy(), X, atol=1e-12)


def _x(lib):
    return lib.tensor(X)


ERRORS = [
    (lambda t: t.stft(_x(t), 16), RuntimeError,
     "stft requires the return_complex parameter be given for real inputs"),
    (lambda t: t.stft(_x(t), 16, win_length=20, return_complex=True), RuntimeError,
     "window=None, normalized=0, onesided=None, return_complex=1, align_to_window=None) : "
     "expected 0 < win_length <= n_fft, but got win_length=20"),
    (lambda t: t.stft(_x(t), 16, window=t.ones(5), return_complex=True), RuntimeError,
     "expected a 1D window tensor of size equal to win_length=16, but got window with size "
     "[5]"),
    (lambda t: t.stft(t.zeros(2, 2, 50), 16, return_complex=True), RuntimeError,
     "stft(torch.FloatTensor[2, 2, 66], n_fft=16, hop_length=4, win_length=16, window=None, "
     "normalized=0, onesided=None, return_complex=1, align_to_window=None) : expected a 1D or "
     "2D tensor"),
    (lambda t: t.stft(_x(t), 16, hop_length=0, return_complex=True), RuntimeError,
     "expected hop_length > 0, but got hop_length=0"),
    (lambda t: t.stft(_x(t), 100, return_complex=True), RuntimeError,
     "Padding size should be less than the corresponding input dimension"),
    (lambda t: t.istft(_x(t), 16), RuntimeError,
     "istft requires a complex-valued input tensor matching the output from stft with "
     "return_complex=True."),
    (lambda t: t.istft(t.stft(_x(t), 16, return_complex=True), 15, window=t.ones(15)),
     RuntimeError, "expected the frequency dimension (3rd to the last) of the input tensor to "
     "match n_fft / 2 + 1 when onesided=True, but got 9"),
    (lambda t: t.istft(t.stft(_x(t), 16, return_complex=True), 16, window=t.zeros(16)),
     RuntimeError, "window overlap add min: 1"),
    (lambda t: t.istft(t.stft(_x(t), 16, return_complex=True), 16, window=t.ones(16),
                       return_complex=True),
     RuntimeError, "Cannot have onesided output if window or input is complex"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    fn, exc, phrase = ERRORS[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (torch, torchjax):
            with pytest.raises(exc) as e:
                fn(lib)
            assert phrase in str(e.value), (lib.__name__, str(e.value))


def test_warnings_once():
    from torchjax import _stft
    _stft._WINDOW_WARNED[0] = _stft._REAL_WARNED[0] = False  # as in a fresh process
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for _ in range(2):
                torchjax.stft(torchjax.tensor(X), 16, return_complex=False)
        msgs = [str(m.message) for m in w]
        assert sum("A window was not provided" in m for m in msgs) == 1
        assert sum("stft with return_complex=False is deprecated" in m for m in msgs) == 1
    finally:
        _stft._WINDOW_WARNED[0] = _stft._REAL_WARNED[0] = True
