"""The window functions of torch.signal.windows, built from torchjax's ops.

Each samples its formula at M evenly spaced points made by torch.linspace in the requested
dtype, in the order PyTorch computes them, so float64 results agree with PyTorch's to the last
bits and float32 ones to float32 rounding; requires_grad gives a window that carries gradients
as PyTorch's does. sym=True gives the symmetric window (filter design); sym=False the periodic
one (spectral analysis), the first M points of the symmetric window of length M + 1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ... import _dtypes, _layout
from ..._creation import arange, empty, linspace, ones, tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _check(name, M, dtype, layout):
    """The checks every window makes, with PyTorch's messages; returns the dtype to use."""
    dtype = _dtypes.get_default_dtype() if dtype is None else _dtypes.to_dtype(dtype)
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not _layout.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_dtypes.float32, _dtypes.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M, dtype, device, requires_grad, ones_at_one=True):
    """The window of length 0 (empty) or 1 (a single one), or None for a longer window."""
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1 and ones_at_one:
        return ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def _span(M, sym):
    # the periodic window is the symmetric one of length M + 1 cut to M points
    return M - 1 if sym else M


def _points(start, end, M, dtype, device, requires_grad):
    return linspace(start, end, M, dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,
                dtype=None, layout=_layout.strided, device=None, requires_grad: bool = False):
    """exp(-|n - center| / tau) for n = 0 .. M-1."""
    dtype = _check("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    got = _trivial(M, dtype, device, requires_grad, ones_at_one=False)
    if got is not None:
        return got
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _points(-center / tau, (M - 1 - center) / tau, M, dtype, device, requires_grad)
    return (-k.abs()).exp()


def cosine(M: int, *, sym: bool = True, dtype=None, layout=_layout.strided, device=None,
           requires_grad: bool = False):
    """sin(pi (n + 1/2) / M) (the sine window)."""
    dtype = _check("cosine", M, dtype, layout)
    got = _trivial(M, dtype, device, requires_grad, ones_at_one=False)
    if got is not None:
        return got
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return _points(0.5 * step, (M - 0.5) * step, M, dtype, device, requires_grad).sin()


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None,
             layout=_layout.strided, device=None, requires_grad: bool = False):
    """exp(-(n - (M-1)/2)^2 / (2 std^2))."""
    dtype = _check("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    got = _trivial(M, dtype, device, requires_grad, ones_at_one=False)
    if got is not None:
        return got
    first = -(M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / (std * math.sqrt(2))
    k = _points(first * scale, (first + M - 1) * scale, M, dtype, device, requires_grad)
    return (-(k ** 2)).exp()


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None,
           layout=_layout.strided, device=None, requires_grad: bool = False):
    """I0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / I0(beta)."""
    dtype = _check("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    got = _trivial(M, dtype, device, requires_grad)
    if got is not None:
        return got
    # beta as a tensor of the window's dtype: the last point is clamped to beta in that dtype,
    # so beta^2 - k^2 is never negative (a NaN from the square root)
    b = tensor(beta, dtype=dtype, device=device)
    step = 2.0 * b / _span(M, sym)
    end = b.minimum(-b + (M - 1) * step)
    k = _points(-b, end, M, dtype, device, requires_grad)
    return (b * b - k.pow(2)).sqrt().i0() / b.i0()


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=_layout.strided, device=None,
             requires_grad: bool = False):
    """The triangular window 1 - |2n/(M-1) - 1|."""
    dtype = _check("bartlett", M, dtype, layout)
    got = _trivial(M, dtype, device, requires_grad)
    if got is not None:
        return got
    step = 2 / _span(M, sym)
    return 1 - _points(-1, -1 + (M - 1) * step, M, dtype, device, requires_grad).abs()


def general_cosine(M, *, a: Iterable, sym: bool = True, dtype=None, layout=_layout.strided,
                   device=None, requires_grad: bool = False):
    """sum_i (-1)^i a_i cos(2 pi i n / (M-1)): the cosine-sum windows."""
    dtype = _check("general_cosine", M, dtype, layout)
    got = _trivial(M, dtype, device, requires_grad)
    if got is not None:
        return got
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * math.pi / _span(M, sym)
    k = _points(0, (M - 1) * step, M, dtype, device, requires_grad)
    coeffs = tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device,
                    requires_grad=requires_grad)
    i = arange(coeffs.shape[0], dtype=dtype, device=device, requires_grad=requires_grad)
    return (coeffs.unsqueeze(-1) * (i.unsqueeze(-1) * k).cos()).sum(0)


def general_hamming(M, *, alpha: float = 0.54, sym: bool = True, dtype=None,
                    layout=_layout.strided, device=None, requires_grad: bool = False):
    """alpha - (1 - alpha) cos(2 pi n / (M-1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=_layout.strided, device=None,
            requires_grad: bool = False):
    """general_hamming with alpha = 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=_layout.strided, device=None,
         requires_grad: bool = False):
    """general_hamming with alpha = 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=_layout.strided, device=None,
             requires_grad: bool = False):
    """The three-term cosine window with coefficients 0.42, 0.5, 0.08."""
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=_layout.strided, device=None,
            requires_grad: bool = False):
    """Nuttall's four-term cosine-sum window."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
