"""real, imag, view_as_real and view_as_complex are views: writes through them change their
base (and the base's other views), and autograd through such writes gives PyTorch's
gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax


def _np(t):
    return t.detach().numpy()


def _writes(lib):
    w = lib.zeros(3, dtype=lib.complex64)
    r, i = w.real, w.imag
    r += 1
    i[0] = 5
    v = lib.view_as_real(w)
    v[1, 1] = 7
    c = lib.view_as_complex(v)
    c[2] = 3 + 3j
    w.imag = lib.tensor([9.0, 8.0, 7.0])
    return [w, r, i, v, c]


def test_writes_reach_base_and_sibling_views():
    for a, b in zip(_writes(torchjax), _writes(torch)):
        np.testing.assert_array_equal(_np(a), _np(b))


def _grads(lib):
    z = lib.tensor([1 + 2j, 3 - 1j, 0.5j], requires_grad=True)
    y = z * 1
    y.real.mul_(2)
    y.imag[0] = 1.0
    r = lib.view_as_real(y)
    r[1] *= 3
    (y.abs() ** 2).sum().backward()
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    h = x * 2
    lib.view_as_complex(h).mul_(1j)
    (h * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    return [z.grad, y, x.grad, h]


def test_gradients_through_writes_into_complex_views():
    for a, b in zip(_grads(torchjax), _grads(torch)):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6)


def test_real_of_real_tensor_is_itself_and_imag_raises():
    x = torchjax.ones(2)
    assert x.real is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex"):
        x.imag


def test_grad_fn_names():
    for lib in (torch, torchjax):
        z = lib.tensor([1 + 1j], requires_grad=True)
        names = [z.real.grad_fn.name(), lib.view_as_real(z).grad_fn.name(),
                 lib.view_as_complex(lib.ones(1, 2, requires_grad=True) * 1).grad_fn.name()]
        assert names == ["SelectBackward0", "ViewAsRealBackward0", "ViewAsComplexBackward0"]
