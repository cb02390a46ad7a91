"""torch.hann_window, hamming_window, blackman_window, bartlett_window and kaiser_window
(src/torchjax/_windows.py) against PyTorch 2.13: every length class (0, 1, 2, odd, even,
long), periodic and symmetric, each floating dtype (bit for bit in float16, bfloat16 and
float64; float32 within PyTorch's own cos/i0 rounding), requires_grad, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax
from tests._same_error import raises_as_pytorch

WINDOWS = [("hann_window", ()), ("hamming_window", ()), ("hamming_window", (False, 0.6, 0.3)),
           ("blackman_window", ()), ("bartlett_window", ()), ("kaiser_window", ()),
           ("kaiser_window", (True, 5.0))]
LENGTHS = [0, 1, 2, 3, 4, 7, 16, 33, 400]


def _both(name, *args, **kwargs):
    out = []
    for lib in (torch, torchjax):
        kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        out.append(getattr(lib, name)(*args, **kw))
    return out


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("name,extra", WINDOWS)
def test_values(name, extra, dtype):
    for n in LENGTHS:
        for periodic in ([extra[0]] if extra else [True, False]):
            t, j = _both(name, n, periodic, *extra[1:], dtype=dtype)
            assert str(j.dtype) == str(t.dtype) and tuple(j.shape) == tuple(t.shape) == (n,)
            a, b = t.float().numpy(), j.float().numpy()
            # float32: PyTorch's vectorised cos and float i0 differ from NumPy's by an ulp or
            # two; the half types and float64 agree exactly
            # (and its float32 i0 is off by up to 1e-6 relative)
            atol = 4e-7 if dtype == "float32" else 0
            rtol = 1e-6 if dtype == "float32" and name == "kaiser_window" else 0
            np.testing.assert_allclose(b, a, rtol=rtol, atol=atol,
                                       err_msg=f"{name}({n}, {periodic})")


@pytest.mark.parametrize("name", ["hann_window", "kaiser_window"])
def test_defaults_and_keywords(name):
    t, j = _both(name, 9)
    np.testing.assert_allclose(j.numpy(), t.numpy(), rtol=1e-6, atol=4e-7)
    assert str(j.dtype) == "torch.float32"
    t, j = _both(name, 9, periodic=False, requires_grad=True, device="cpu")
    assert t.requires_grad and j.requires_grad and j.is_leaf
    np.testing.assert_allclose(j.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=4e-7)


def test_default_dtype_followed():
    prev = torchjax.get_default_dtype()
    try:
        torchjax.set_default_dtype(torchjax.float64)
        torch.set_default_dtype(torch.float64)
        t, j = _both("blackman_window", 12)
        assert str(j.dtype) == str(t.dtype) == "torch.float64"
        np.testing.assert_array_equal(j.numpy(), t.numpy())
    finally:
        torchjax.set_default_dtype(prev)
        torch.set_default_dtype(torch.float32)


ERRORS = [
    (lambda lib: lib.hann_window(5, dtype=lib.int64), RuntimeError,
     "hann_window expects floating point dtypes, got: TensorOptions(dtype=long int"),
    (lambda lib: lib.kaiser_window(5, dtype=lib.int32), RuntimeError,
     "kaiser_window expects floating point dtypes, got: TensorOptions(dtype=int,"),
    (lambda lib: lib.bartlett_window(-1), RuntimeError,
     "bartlett_window requires non-negative window_length, got window_length=-1"),
    (lambda lib: lib.hamming_window(5.0), TypeError,
     "argument 'window_length' (position 1) must be int, not float"),
    (lambda lib: lib.blackman_window(4, dtype=lib.complex64), NotImplementedError,
     "\"arange_cpu\" not implemented for 'ComplexFloat'"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    raises_as_pytorch(*ERRORS[case])
