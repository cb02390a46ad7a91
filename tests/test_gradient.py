"""torch.gradient (src/torchjax/_gradient.py) against PyTorch 2.13: values, dtypes, grad_fn
names and gradients in float64 for each spacing form and edge order, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax
from tests._same_error import raises_as_pytorch

_rng = np.random.default_rng(3)
X = _rng.normal(size=(4, 5, 3))
C0 = np.array([0.0, 0.5, 1.7, 2.0])
C1 = np.array([0.0, 1.0, 1.5, 3.5, 4.0])

CASES = {
    "all_dims": lambda t, x: t.gradient(x),
    "dim_edge2": lambda t, x: t.gradient(x, dim=1, edge_order=2),
    "scalar_spacing": lambda t, x: t.gradient(x, spacing=2.0),
    "tensor0d_spacing": lambda t, x: t.gradient(x, spacing=t.tensor(0.5)),
    "spacing_list": lambda t, x: t.gradient(x, spacing=[2.0, 3.0, 0.5]),
    "coordinates": lambda t, x: t.gradient(x, spacing=(t.tensor(C0), t.tensor(C1)),
                                           dim=(0, 1)),
    "coordinates_edge2": lambda t, x: t.gradient(x, spacing=(t.tensor(C1),), dim=[-2],
                                                 edge_order=2),
    "size_two_dim": lambda t, x: t.gradient(x[:, :2], dim=1),
    "size_two_coordinates": lambda t, x: t.gradient(x[:, :2], spacing=(t.tensor(C1[:2]),),
                                                    dim=1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient(name):
    res = []
    for lib in (torch, torchjax):
        x = lib.tensor(X, requires_grad=True)
        out = CASES[name](lib, x)
        assert isinstance(out, tuple)
        total = sum((o * lib.tensor(np.cos(np.arange(o.numel())).reshape(tuple(o.shape)))).sum()
                    for o in out)
        total.backward()
        res.append(([o.detach().numpy() for o in out], x.grad.numpy(),
                    [o.grad_fn.name() for o in out], [str(o.dtype) for o in out]))
    (va, ga, na, da), (vb, gb, nb, db) = res
    assert (nb, db) == (na, da) and len(vb) == len(va)
    for a, b in zip(va, vb):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gb, ga, rtol=1e-12, atol=1e-12)


def test_integer_input():
    for kw in ({}, {"spacing": 2}, {"edge_order": 2}):
        t = torch.gradient(torch.tensor([1, 2, 4, 8, 7]), **kw)[0]
        j = torchjax.gradient(torchjax.tensor([1, 2, 4, 8, 7]), **kw)[0]
        assert str(j.dtype) == str(t.dtype)
        np.testing.assert_allclose(j.numpy(), t.numpy(), rtol=1e-6)


ERRORS = [
    (lambda t: t.gradient(t.tensor([1.0])), RuntimeError,
     "torch.gradient expected each dimension size to be at least edge_order+1"),
    (lambda t: t.gradient(t.tensor([1.0, 2.0]), edge_order=2), RuntimeError,
     "torch.gradient expected each dimension size to be at least edge_order+1"),
    (lambda t: t.gradient(t.tensor(X), edge_order=3), RuntimeError,
     "torch.gradient only supports edge_order=1 and edge_order=2."),
    (lambda t: t.gradient(t.tensor(X), spacing=[1.0, 2.0]), RuntimeError,
     "a list of length equal to 'self.dim() = 3', since dim argument was not given, but got a "
     "list of length 2"),
    (lambda t: t.gradient(t.tensor(X), spacing=[1.0, 2.0], dim=1), RuntimeError,
     "but got a spacing argument of length 2 and a dim argument of length 1."),
    (lambda t: t.gradient(t.tensor(X), spacing=[t.tensor(1.0)], dim=1), RuntimeError,
     "expected each element of spacing to have one dimension, but got an element with 0 "
     "dimensions!"),
    (lambda t: t.gradient(t.tensor(X), dim=(1, 1)), RuntimeError,
     "dim 1 appears multiple times in the list of dims"),
    (lambda t: t.gradient(t.tensor(X), dim=3), IndexError,
     "Dimension out of range (expected to be in range of [-3, 2], but got 3)"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    raises_as_pytorch(*ERRORS[case])
