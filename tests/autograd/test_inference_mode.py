"""Inference tensors, against PyTorch: made under inference_mode, they cannot be changed in
place, require grad or be saved for backward outside it."""

from __future__ import annotations

import pytest
import torch

import torchjax


def _err(f):
    try:
        out = f()
    except RuntimeError as e:
        return f"RuntimeError: {e}"
    return repr(out) if not isinstance(out, (torch.Tensor, torchjax.Tensor)) else "tensor"


def _flags(lib):
    normal = lib.ones(2)
    with lib.inference_mode():
        x = lib.ones(2)
        y = x * 2
        view_of_normal = normal[:1]
        normal.add_(1)  # an in-place update keeps a normal tensor normal
        made = normal + 1
        m = lib.nn.Linear(2, 2)
        rg = lib.ones(1, requires_grad=True).requires_grad
    with lib.no_grad():
        no_grad = lib.ones(1)
    with lib.inference_mode(False):
        disabled = lib.ones(1)
    return (x.is_inference(), y.is_inference(), view_of_normal.is_inference(),
            normal.is_inference(), made.is_inference(), (x + 1).is_inference(),
            x.clone().is_inference(), x.detach().is_inference(), x[:1].is_inference(),
            m.weight.is_inference(), m.weight.requires_grad, rg, no_grad.is_inference(),
            disabled.is_inference(), x.to(lib.float64).is_inference())


def test_which_tensors_are_inference_tensors():
    assert _flags(torchjax) == _flags(torch)


def _uses(lib):
    with lib.inference_mode():
        x = lib.ones(2)
    w = lib.ones(2, requires_grad=True)
    return [
        _err(lambda: (w * x).sum().backward()),  # mul saves x for w's gradient
        _err(lambda: (w + x).sum().backward()),  # add saves nothing
        _err(lambda: w @ x),
        _err(lambda: x.exp()),  # nothing requires grad: nothing is recorded
        _err(lambda: x.add_(1)),
        _err(lambda: x[:1].mul_(2)),
        _err(lambda: x.__setitem__(0, 3.0)),
        _err(lambda: x.requires_grad_()),
        _err(lambda: x.requires_grad_(False)),
        _err(lambda: lib.nn.Parameter(x)),
    ]


def test_using_inference_tensors_outside_inference_mode():
    assert _uses(torchjax) == _uses(torch)


def test_inside_inference_mode_they_behave_normally():
    with torchjax.inference_mode():
        x = torchjax.ones(2)
        x.add_(1)
        x.requires_grad_()
        assert x.requires_grad and x.is_inference()
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        x.detach().zero_()
