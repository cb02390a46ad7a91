"""torch.linalg.vander, tensorinv, tensorsolve and matmul (src/torchjax/_linalg_tensor.py)
against PyTorch 2.13: values, dtypes, gradients in float64, grad_fn names where PyTorch's last
op is the same, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax
from tests._same_error import raises_as_pytorch

_rng = np.random.default_rng(5)
X = _rng.normal(size=(2, 3))


def _well(shape, rows):
    a = _rng.normal(size=(rows, rows)) + rows * np.eye(rows)
    return a.reshape(shape)


CASES = {
    "vander": (lambda t, x: t.linalg.vander(x), [X], True),
    "vander_N": (lambda t, x: t.linalg.vander(x, N=5), [X], True),
    "vander_0d": (lambda t, x: t.linalg.vander(x[0, 0], N=3), [X], True),
    # PyTorch's inverse is column-major, so its reshape is ReshapeAliasBackward0 (a view here)
    "tensorinv": (lambda t, a: t.linalg.tensorinv(a, ind=2), [_well((4, 6, 8, 3), 24)], False),
    "tensorinv_ind1": (lambda t, a: t.linalg.tensorinv(a, ind=1), [_well((6, 2, 3), 6)], False),
    "tensorsolve": (lambda t, a, b: t.linalg.tensorsolve(a, b),
                    [_well((2, 3, 6, 2, 3, 6), 36), _rng.normal(size=(2, 3, 6))], True),
    "tensorsolve_dims": (lambda t, a, b: t.linalg.tensorsolve(a, b, dims=(0,)),
                         [_well((4, 2, 3, 24), 24).transpose(3, 0, 1, 2).copy(),
                          _rng.normal(size=(4, 2, 3))], True),
    "matmul": (lambda t, a, b: t.linalg.matmul(a, b), [X, _rng.normal(size=(3,))], True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    fn, arrays, same_name = CASES[name]
    res = []
    for lib in (torch, torchjax):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *ts)
        out.mul(lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))).sum() \
            .backward()
        res.append((out.detach().numpy(), [t.grad.numpy() for t in ts], out.grad_fn.name(),
                    str(out.dtype)))
    (a, ga, na, da), (b, gb, nb, db) = res
    assert db == da and b.shape == a.shape
    assert nb == na or not same_name, (nb, na)
    np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-10)
    for x, y in zip(ga, gb):
        np.testing.assert_allclose(y, x, rtol=1e-9, atol=1e-10)


def test_vander_integer():
    t = torch.linalg.vander(torch.tensor([[1, 2], [3, 4]]), N=4)
    j = torchjax.linalg.vander(torchjax.tensor([[1, 2], [3, 4]]), N=4)
    assert str(j.dtype) == str(t.dtype) and j.tolist() == t.tolist()


ERRORS = [
    (lambda t: t.linalg.vander(t.tensor(2.0)), RuntimeError, "N must be greater than 1."),
    (lambda t: t.linalg.vander(t.tensor([1.0, 2.0]), N=1), RuntimeError,
     "N must be greater than 1."),
    (lambda t: t.linalg.tensorinv(t.zeros(4, 6, 8, 3), ind=1), RuntimeError,
     "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind])"
     ", but got 144 != 4"),
    (lambda t: t.linalg.tensorinv(t.zeros(4, 6), ind=0), RuntimeError,
     "Expected a strictly positive integer for 'ind', but got 0"),
    (lambda t: t.linalg.tensorsolve(t.zeros(2, 3, 6, 2, 3, 6), t.zeros(5)), RuntimeError,
     "prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), but got 648 != 5"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    raises_as_pytorch(*ERRORS[case])
