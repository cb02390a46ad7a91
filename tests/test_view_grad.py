"""Autograd through in-place writes into views, against PyTorch (CopySlices, regenerated
views): the same function runs in both libraries and gradients and grad_fn names match."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

RNG = np.random.default_rng(3)
X = RNG.standard_normal((3, 4)).astype(np.float32)
Y = RNG.standard_normal(4).astype(np.float32)


def _names(*ts):
    return tuple(type(t.grad_fn).__name__ if t.grad_fn is not None else None for t in ts)


def _write_row_through_view(lib, x, y):
    b = x.clone()
    v = b[1]
    w = b[:, 2]  # another view, taken before the write
    v.mul_(y)
    return b.sum() + (w * w).sum(), _names(b, v, w)


def _write_base_then_use_old_view(lib, x, y):
    b = x.clone()
    v = b[0]
    b.mul_(2)
    return (v * y).sum(), _names(b, v)


def _augmented_slice_assignment(lib, x, y):
    b = x.clone()
    b[:, 1] += y[:3]
    return (b ** 2).sum(), _names(b)


def _setitem_into_plain_tensor(lib, x, y):
    z = lib.zeros(4)
    z[1:3] = y[:2] * 2
    return (z * z).sum() + x.sum(), _names(z)


def _view_of_view(lib, x, y):
    b = x.clone()
    v = b[1:, :]
    u = v[:, 1:3]
    u.add_(y[:2])
    u.mul_(y[:2] + 1)
    return b.tanh().sum(), _names(b, v, u)


def _base_gets_grad_from_other(lib, x, y):
    a = lib.zeros(3, 4)
    u = a[:2]
    a.add_(x)
    return (u * 3).sum() + (y * 0).sum(), _names(a, u)


def _write_transposed_view(lib, x, y):
    b = x.clone()
    t = b.t()
    t[1].sub_(y[:3])
    return (b * b).sum(), _names(b, t)


CASES = [_write_row_through_view, _write_base_then_use_old_view, _augmented_slice_assignment,
         _setitem_into_plain_tensor, _view_of_view, _base_gets_grad_from_other,
         _write_transposed_view]


def _run(lib, fn, dtype):
    x = lib.tensor(X.astype(dtype), requires_grad=True)
    y = lib.tensor(Y.astype(dtype), requires_grad=True)
    loss, names = fn(lib, x, y)
    loss.backward()
    return loss.item(), x.grad.numpy(), y.grad.numpy(), names


@pytest.mark.parametrize("fn", CASES, ids=[f.__name__ for f in CASES])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_view_writes_match_pytorch(fn, dtype):
    lt, gxt, gyt, nt = _run(torch, fn, dtype)
    lj, gxj, gyj, nj = _run(torchjax, fn, dtype)
    assert nj == nt
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(lj, lt, rtol=tol)
    np.testing.assert_allclose(gxj, gxt, rtol=tol, atol=tol)
    np.testing.assert_allclose(gyj, gyt, rtol=tol, atol=tol)


def test_view_writes_replayed_in_a_loop():
    """The same view-writing step repeated (the fused backward takes over) stays right."""
    for _ in range(3):
        test_view_writes_match_pytorch(_write_row_through_view, np.float32)


def test_view_of_leaf_requiring_grad_cannot_be_written():
    for lib in (torch, torchjax):
        x = lib.tensor(X, requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            x[0].mul_(2)
        with lib.no_grad():
            x[0].mul_(2)  # allowed without grad recording


def test_copy_slices_node_name_and_edges():
    x = torchjax.tensor(X, requires_grad=True)
    y = torchjax.tensor(Y, requires_grad=True)
    b = x.clone()
    b[1].mul_(y)
    assert b.grad_fn.name() == "torch::autograd::CopySlices"
    nxt = [type(f).__name__ for f, _ in b.grad_fn.next_functions]
    assert nxt == ["CloneBackward0", "AccumulateGrad"]
    assert repr(b).endswith("grad_fn=<CopySlices>)")


def test_modifying_a_saved_view_input_is_still_caught():
    for lib in (torch, torchjax):
        x = lib.tensor(X, requires_grad=True)
        b = x.clone()
        y = b[0].exp()  # saves its result
        b[0].add_(1)    # does not touch y, so backward works in both
        y.sum().backward()
        b = x.clone()
        v = b[0]
        z = v * v       # saves v
        b.mul_(2)       # bumps v's version through the base
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
