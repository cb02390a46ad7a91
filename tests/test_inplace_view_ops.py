"""t_, transpose_, swapaxes_, squeeze_, unsqueeze_: the tensor itself takes the new shape,
with PyTorch's grad_fn, version bump, gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax


def _run(lib):
    a = lib.tensor(np.arange(6.0).reshape(2, 1, 3), requires_grad=True)
    x = a * 1
    out = []
    for name, args in (("squeeze_", (1,)), ("t_", ()), ("unsqueeze_", (0,)),
                       ("transpose_", (0, 2)), ("swapaxes_", (1, 2)), ("squeeze_", ())):
        v = x._version
        assert getattr(x, name)(*args) is x
        out.append((tuple(x.shape), x.grad_fn.name(), x._version - v))
    (x * lib.arange(6.0).reshape(x.shape)).sum().backward()
    return out, a.grad.numpy().tolist()


def test_inplace_view_ops_match_pytorch():
    assert _run(torchjax) == _run(torch)


def test_leaf_and_view_errors():
    for lib in (torch, torchjax):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            lib.ones(2, 3, requires_grad=True).t_()
    b = torchjax.ones(2, 3)
    _ = b[0]
    with pytest.raises(NotImplementedError, match="t_\\(\\) on a view or on a tensor that has"):
        b.t_()
