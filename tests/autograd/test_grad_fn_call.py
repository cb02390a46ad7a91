"""Calling a node as the user does (`y.grad_fn(grad)`) gives PyTorch's result: a tensor per
edge (None where no gradient flows), a single one unpacked."""

import numpy as np
import pytest
import torch

import torchjax

CASES = {
    "sum": (lambda lib, x, w: (x * 2).sum(), lambda lib: lib.tensor(1.0)),
    "mul_const": (lambda lib, x, w: x * 3, lambda lib: lib.ones(2, 3)),
    "mul": (lambda lib, x, w: x * w, lambda lib: lib.ones(2, 3)),
    "add_self": (lambda lib, x, w: x + x, lambda lib: lib.ones(2, 3)),
    "cat": (lambda lib, x, w: lib.cat([x, w * 2]), lambda lib: lib.arange(12.0).reshape(4, 3)),
    "tanh": (lambda lib, x, w: lib.tanh(x * w), lambda lib: lib.full((2, 3), 0.5)),
    "matmul": (lambda lib, x, w: x @ w.t(), lambda lib: lib.ones(2, 2)),
}


def _run(lib, name):
    x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=lib.float32, requires_grad=True)
    w = lib.tensor(np.linspace(0.5, 2, 6).reshape(2, 3), dtype=lib.float32, requires_grad=True)
    f, grad = CASES[name]
    out = f(lib, x, w).grad_fn(grad(lib))
    if isinstance(out, tuple):
        return tuple(None if g is None else g.detach().numpy() for g in out)
    return out.detach().numpy()


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_fn_call_matches_pytorch(name):
    got, want = _run(torchjax, name), _run(torch, name)
    assert type(got) is type(want)
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert (g is None) == (w is None)
            if w is not None:
                np.testing.assert_allclose(g, w, rtol=1e-6)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6)
