"""nn.functional.linear_cross_entropy against PyTorch 2.13: values, grad_fn names and the
gradients of input, weight and bias, for class indices and probabilities, K-dimensional
weights, class weights, ignore_index, label smoothing and each reduction; PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

_rng = np.random.default_rng(7)


def _f(*shape):
    return _rng.uniform(-1, 1, size=shape)


def _probs(*shape, axis=1):
    p = _rng.uniform(0.1, 1, size=shape)
    return p / p.sum(axis=axis, keepdims=True)


# (arrays: input, linear_weight, target, linear_bias or None; keyword arguments)
CASES = {
    "indices": ((_f(5, 4), _f(3, 4), np.array([0, 2, 1, 1, 0]), None), {}),
    "bias, sum": ((_f(5, 4), _f(3, 4), np.array([2, 2, 1, 0, 0]), _f(3)),
                  {"reduction": "sum"}),
    "unbatched": ((_f(4), _f(3, 4), np.array(1), _f(3)), {}),
    "ignore_index, class weights": ((_f(6, 4), _f(3, 4), np.array([0, 2, 1, 1, 0, 2]), None),
                                    {"ignore_index": 1, "weight": np.array([0.5, 1.5, 2.0])}),
    "label smoothing, none": ((_f(5, 4), _f(3, 4), np.array([0, 2, 1, 1, 0]), _f(3)),
                              {"label_smoothing": 0.2, "reduction": "none"}),
    "probabilities": ((_f(5, 4), _f(3, 4), _probs(5, 3), _f(3)), {}),
    "K-dimensional": ((_f(5, 4), _f(3, 2, 4), np.array([[0, 1], [2, 2], [1, 0], [0, 0],
                                                       [2, 1]]), _f(3, 2)), {}),
    "K-dimensional probabilities": ((_f(5, 4), _f(3, 2, 4), _probs(5, 3, 2), None),
                                    {"reduction": "sum"}),
}


def _run(lib, arrays, kwargs):
    x, w, target, b = arrays
    x = lib.tensor(x, requires_grad=True)
    w = lib.tensor(w, requires_grad=True)
    b = None if b is None else lib.tensor(b, requires_grad=True)
    target = lib.tensor(target)
    kw = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    out = lib.nn.functional.linear_cross_entropy(x, w, target, linear_bias=b, **kw)
    out.sum().backward()
    grads = [t.grad.numpy() for t in (x, w, b) if t is not None]
    return out.detach().numpy(), out.grad_fn.name(), grads


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_pytorch(name):
    arrays, kwargs = CASES[name]
    want, got = (_run(lib, arrays, kwargs) for lib in (torch, torchjax))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10, atol=1e-12)
    assert got[1] == want[1]
    for g, w in zip(got[2], want[2]):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


def test_gradient_by_finite_differences():
    x, w, b = (torchjax.tensor(_f(*s), requires_grad=True) for s in ((3, 4), (3, 2, 4), (3, 2)))
    target = torchjax.tensor([[0, 1], [2, 2], [1, 0]])
    assert torchjax.autograd.gradcheck(
        lambda x, w, b: torchjax.nn.functional.linear_cross_entropy(
            x, w, target, linear_bias=b, label_smoothing=0.1), (x, w, b))


ERRORS = {
    "3-d input": lambda lib: (lib.ones(2, 2, 4), lib.ones(3, 4), lib.zeros(2, dtype=lib.long),
                              {}),
    "1-d weight": lambda lib: (lib.ones(2, 4), lib.ones(4), lib.zeros(2, dtype=lib.long), {}),
    "in_features": lambda lib: (lib.ones(2, 4), lib.ones(3, 5), lib.zeros(2, dtype=lib.long),
                                {}),
    "bias shape": lambda lib: (lib.ones(2, 4), lib.ones(3, 4), lib.zeros(2, dtype=lib.long),
                               {"linear_bias": lib.ones(4)}),
    "K-dim unbatched": lambda lib: (lib.ones(4), lib.ones(3, 2, 4), lib.zeros(2, dtype=lib.long),
                                    {}),
    "ignore_index with probabilities": lambda lib: (lib.ones(2, 4), lib.ones(3, 4),
                                                    lib.ones(2, 3) / 3, {"ignore_index": 0}),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_pytorch(name):
    msgs = []
    for lib in (torch, torchjax):
        x, w, target, kw = ERRORS[name](lib)
        with pytest.raises(RuntimeError) as e:
            lib.nn.functional.linear_cross_entropy(x, w, target, **kw)
        msgs.append(str(e.value))
    assert msgs[1] == msgs[0]


def test_chunked_options_are_refused_by_name():
    with pytest.raises(NotImplementedError, match="options"):
        torchjax.nn.functional.linear_cross_entropy(
            torchjax.ones(2, 4), torchjax.ones(3, 4), torchjax.zeros(2, dtype=torchjax.long),
            options=object())
