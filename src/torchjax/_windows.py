"""Window functions: torch.hann_window, hamming_window, blackman_window, bartlett_window,
kaiser_window.

A window is a constant of a few hundred values made once (for an STFT, a filter), so it is
made on the host with NumPy and moved to the device, without compiling a program for it. The
values follow PyTorch's own steps, each rounded to the requested dtype as PyTorch's in-place
ops round it (arange, then `mul_`, `cos_`, ... in float16 stay float16 between steps; the
arithmetic itself is in float32, PyTorch's "opmath" for float16, bfloat16 and float32), so a
float16 Hann window has PyTorch's 0.4998 where the exact value rounds to 0.5. PyTorch's C++
steps take each scalar (2 pi / (N - 1), beta, alpha) rounded to the dtype first, so these do.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from . import _creation, _dtypes, _one_off
from ._x64 import scoped

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]

# C++'s names in PyTorch's TensorOptions message for a dtype that is not floating
_CPP_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "uint16": "unsigned short",
              "uint32": "unsigned int", "uint64": "unsigned long"}


def _checked(fname, window_length, periodic, dtype):
    if not isinstance(window_length, numbers.Integral) or isinstance(window_length, bool):
        raise TypeError(f"{fname}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    if not isinstance(periodic, (bool, np.bool_)):
        raise TypeError(f"{fname}(): argument 'periodic' (position 2) must be bool, not "
                        f"{type(periodic).__name__}")
    d = _dtypes.get_default_dtype() if dtype is None else _dtypes.to_dtype(dtype)
    if d.is_complex:
        # PyTorch's check lets complex through; its arange then refuses it
        raise NotImplementedError(
            f"\"arange_cpu\" not implemented for '{_dtypes.SCALAR_NAMES[d.name]}'")
    if not d.is_floating_point:
        raise RuntimeError(
            f"{fname} expects floating point dtypes, got: TensorOptions(dtype="
            f"{_CPP_NAMES.get(d.name, d.name)}, device=cpu, layout=Strided (default), "
            f"requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(f"{fname} requires non-negative window_length, got "
                           f"window_length={window_length}")
    return int(window_length), bool(periodic), d


def _rounder(d):
    """(opmath dtype, r): r(x) rounds x to the tensor's dtype and back to opmath, as storing a
    step's result in the tensor does."""
    target = np.dtype(d.np)
    op = np.float64 if target == np.float64 else np.float32

    def r(x):
        return np.asarray(x, op).astype(target).astype(op)
    return op, r


def _window(fname, window_length, periodic, dtype, layout, device, requires_grad, steps):
    """The window of `window_length` values: steps(n, op, r) makes the symmetric window of n
    values in opmath (n >= 2); periodic windows are the first window_length of n + 1."""
    n, periodic, d = _checked(fname, window_length, periodic, dtype)
    if n <= 1:
        host = np.ones(n, d.np)
    else:
        op, r = _rounder(d)
        full = n + 1 if periodic else n
        host = steps(full, op, r)[:n].astype(d.np)
    return _creation._make((n,), d, _creation._target(device), requires_grad,
                           lambda _: _one_off.to_device(host), None, fname, layout)


def _arange(n, op, r):
    return r(np.arange(n, dtype=np.float64))


def _hamming_steps(alpha, beta):
    def steps(n, op, r):
        # arange(n).mul_(2 pi / (n - 1)).cos_().mul_(-beta).add_(alpha)
        w = r(_arange(n, op, r) * r(2 * math.pi / (n - 1)))
        w = r(np.cos(w))
        w = r(w * r(-beta))
        return r(w + r(alpha))
    return steps


@scoped
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False, pin_memory=False):
    """alpha - beta * cos(2 pi n / (N - 1)); periodic drops the last of N + 1."""
    return _window("hamming_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _hamming_steps(float(alpha), float(beta)))


@scoped
def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False, pin_memory=False):
    """The Hamming window with alpha = beta = 0.5, as PyTorch makes it."""
    return _window("hann_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _hamming_steps(0.5, 0.5))


def _blackman_steps(n, op, r):
    # w = arange(n).mul_(pi / (n - 1));  0.08 cos(4w) - 0.5 cos(2w) + 0.42
    w = r(_arange(n, op, r) * r(math.pi / (n - 1)))
    a = r(r(np.cos(r(w * op(4)))) * r(0.08))
    b = r(r(np.cos(r(w * op(2)))) * r(0.5))
    return r(r(a - b) + r(0.42))


@scoped
def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False, pin_memory=False):
    return _window("blackman_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _blackman_steps)


def _bartlett_steps(n, op, r):
    # arange(n).mul_(2 / (n - 1)), then the second half becomes 2 - w
    w = r(_arange(n, op, r) * r(2.0 / (n - 1)))
    half = ((n - 1) >> 1) + 1
    w[half:] = r(r(w[half:] * op(-1)) + r(2))
    return w


@scoped
def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False, pin_memory=False):
    return _window("bartlett_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _bartlett_steps)


def _kaiser_steps(beta):
    def steps(n, op, r):
        # PyTorch's kernel, in one rounding: i0(beta sqrt(|1 - ((k - a) / a)^2|)) / i0(beta)
        # with a = (n - 1) / 2; NumPy's i0 is float64, rounded to the dtype at the end (so a
        # float32 window is within 1e-6 of PyTorch's, whose i0 is computed in float32)
        k = _arange(n, op, r).astype(np.float64)
        a = (n - 1) / 2.0
        b = float(op(beta))
        return np.i0(b * np.sqrt(np.abs(1 - ((k - a) / a) ** 2))) / np.i0(b)
    return steps


@scoped
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False, pin_memory=False):
    """The Kaiser window: i0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) / i0(beta)."""
    return _window("kaiser_window", window_length, periodic, dtype, layout, device,
                   requires_grad, _kaiser_steps(float(beta)))
