"""Which inputs an op saves for backward depends, as in PyTorch, on which inputs require grad:
`w * x` keeps x only when w requires grad (src/torchjax/_saves.py). For every subset of the
floating inputs requiring grad, each input (and the result) is changed in place after the op,
then backward runs; torchjax must raise "modified by an inplace operation" exactly where
PyTorch does.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import torchjax

_rng = np.random.default_rng(0)


def _pos(*shape):
    return _rng.uniform(0.5, 2.0, size=shape).astype("float32")


def _any(*shape):
    return _rng.uniform(-2.0, 2.0, size=shape).astype("float32")


def _F(lib):
    return lib.nn.functional


# (id, fn(lib, *tensors), input arrays); integer arrays never require grad
CASES = [
    ("mul", lambda lib, a, b: a * b, [_any(3), _any(3)]),
    ("mul_scalar", lambda lib, a: a * 5, [_any(3)]),
    ("rmul_scalar", lambda lib, a: 5 * a, [_any(3)]),
    ("div", lambda lib, a, b: a / b, [_any(3), _pos(3)]),
    ("div_scalar", lambda lib, a: a / 5, [_any(3)]),
    ("rdiv_scalar", lambda lib, a: 5 / a, [_pos(3)]),
    ("div_floor", lambda lib, a, b: lib.div(a, b, rounding_mode="floor"), [_any(3), _pos(3)]),
    ("remainder", lambda lib, a, b: a % b, [_any(3), _pos(3)]),
    ("pow", lambda lib, a, b: a ** b, [_pos(3), _any(3)]),
    ("pow_scalar", lambda lib, a: a ** 2, [_any(3)]),
    ("rpow", lambda lib, a: 2 ** a, [_any(3)]),
    ("lerp", lambda lib, a, b, w: lib.lerp(a, b, w), [_any(3), _any(3), _pos(3) / 2]),
    ("lerp_scalar", lambda lib, a, b: lib.lerp(a, b, 0.3), [_any(3), _any(3)]),
    ("mm", lambda lib, a, b: a @ b, [_any(2, 3), _any(3, 4)]),
    ("matmul_batched", lambda lib, a, b: a @ b, [_any(2, 2, 3), _any(3, 4)]),
    ("addmm", lambda lib, c, a, b: lib.addmm(c, a, b), [_any(2, 4), _any(2, 3), _any(3, 4)]),
    ("addcmul", lambda lib, c, a, b: lib.addcmul(c, a, b, value=0.5),
     [_any(3), _any(3), _any(3)]),
    ("addcdiv", lambda lib, c, a, b: lib.addcdiv(c, a, b, value=0.5),
     [_any(3), _any(3), _pos(3)]),
    ("hypot", lambda lib, a, b: lib.hypot(a, b), [_any(3), _any(3)]),
    ("copysign", lambda lib, a, b: lib.copysign(a, b), [_any(3), _any(3)]),
    ("linear", lambda lib, x, w, b: _F(lib).linear(x, w, b), [_any(2, 3), _any(4, 3), _any(4)]),
    ("conv2d", lambda lib, x, w, b: _F(lib).conv2d(x, w, b),
     [_any(1, 2, 4, 4), _any(3, 2, 3, 3), _any(3)]),
    ("layer_norm", lambda lib, x, w, b: _F(lib).layer_norm(x, (3,), w, b),
     [_any(2, 3), _pos(3), _any(3)]),
    ("rms_norm", lambda lib, x, w: _F(lib).rms_norm(x, (3,), w), [_any(2, 3), _pos(3)]),
    ("cross_entropy", lambda lib, a, t: _F(lib).cross_entropy(a, t),
     [_any(2, 3), np.array([0, 2])]),
    ("kl_div", lambda lib, a, b: _F(lib).kl_div(a, b, reduction="batchmean"),
     [_any(2, 3), _pos(2, 3) / 3]),
    ("l1_loss", lambda lib, a, b: _F(lib).l1_loss(a, b), [_any(3), _any(3)]),
    ("cosine_similarity", lambda lib, a, b: _F(lib).cosine_similarity(a, b),
     [_any(2, 3), _any(2, 3)]),
    ("pairwise_distance", lambda lib, a, b: _F(lib).pairwise_distance(a, b),
     [_any(2, 3), _any(2, 3)]),
    ("gather", lambda lib, a, i: a.gather(1, i), [_any(2, 3), np.array([[0, 2], [1, 1]])]),
    ("scatter_add", lambda lib, a, i, s: a.scatter_add(0, i, s),
     [_any(3), np.array([0, 2]), _any(2)]),
    ("index_add", lambda lib, a, i, s: a.index_add(0, i, s),
     [_any(3), np.array([0, 2]), _any(2)]),
    ("attention_math", lambda lib, q, k, v: _F(lib).scaled_dot_product_attention(q, k, v),
     [_any(1, 2, 3), _any(1, 2, 3), _any(1, 2, 3)]),
    ("attention_fused", lambda lib, q, k, v: _F(lib).scaled_dot_product_attention(q, k, v),
     [_any(1, 1, 2, 3), _any(1, 1, 2, 3), _any(1, 1, 2, 3)]),
    ("solve", lambda lib, a, b: lib.linalg.solve(a, b),
     [_any(2, 2) + 3 * np.eye(2, dtype="float32"), _any(2, 1)]),
    ("cdist", lambda lib, a, b: lib.cdist(a, b), [_any(2, 3), _any(4, 3)]),
    ("gru_cell", lambda lib, x, h, wi, wh: lib.gru_cell(x, h, wi, wh),
     [_any(1, 2), _any(1, 3), _any(9, 2), _any(9, 3)]),
]


def _outcome(lib, fn, arrays, target, requires):
    leaves = [lib.tensor(a.copy(), requires_grad=i in requires) for i, a in enumerate(arrays)]
    xs = [t * 1 if t.requires_grad else t.clone() for t in leaves]
    out = fn(lib, *xs)
    changed = out if target == "result" else xs[target]
    with lib.no_grad():
        changed.add_(1)
    try:
        out.sum().backward()
    except RuntimeError as e:
        if "modified by an inplace operation" in str(e):
            return "raises"
        raise
    return "ok"


def _params():
    for name, fn, arrays in CASES:
        floats = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
        for r in range(1, len(floats) + 1):
            for requires in itertools.combinations(floats, r):
                yield pytest.param(fn, arrays, requires,
                                   id=f"{name}-requires{''.join(map(str, requires))}")


@pytest.mark.parametrize("fn, arrays, requires", list(_params()))
def test_saved_inputs_follow_requires_grad(fn, arrays, requires):
    for target in [*range(len(arrays)), "result"]:
        want = _outcome(torch, fn, arrays, target, set(requires))
        assert _outcome(torchjax, fn, arrays, target, set(requires)) == want, target


def test_write_into_a_clone_after_a_scalar_product():
    # the brief's example: `z[0] * 5` saves nothing of z, so writing z[0] afterwards is fine
    w = torchjax.ones(3, requires_grad=True)
    z = w.clone()
    z[0] = z[0] * 5
    z.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [5.0, 1.0, 1.0])


def test_frozen_weight_keeps_nothing_of_the_activation():
    # a layer with frozen weights: PyTorch lets the activation change in place afterwards
    x = torchjax.ones(2, 3, requires_grad=True) * 1
    w = torchjax.ones(4, 3)
    y = torchjax.nn.functional.linear(x, w)
    with torchjax.no_grad():
        x.mul_(2)
    y.sum().backward()
    # but a weight that requires grad needs the activation
    w.requires_grad_()
    x = torchjax.ones(2, 3) * 1
    y = torchjax.nn.functional.linear(x, w)
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_batch_norm_saves_the_updated_running_statistics():
    for lib in (torch, torchjax):
        for training in (True, False):
            rm, rv = lib.zeros(3), lib.ones(3)
            x = lib.tensor(_any(4, 3), requires_grad=True)
            y = lib.nn.functional.batch_norm(x, rm, rv, training=training)
            y.sum().backward(retain_graph=True)  # the op's own update is not a change
            rm.add_(1)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                y.sum().backward()


@pytest.mark.parametrize("f", [lambda x: x // 2, lambda x: 2 // x,
                               lambda x: torchjax.heaviside(x, torchjax.tensor([0.5]))])
def test_step_functions_without_derivative_raise_at_backward(f):
    # PyTorch records them and raises when backward reaches them, even though the
    # derivative of a step function is zero almost everywhere
    y = f(torchjax.tensor([1.0, 2.0], requires_grad=True) * 1)
    with pytest.raises(RuntimeError, match="derivative for aten::.* is not implemented"):
        y.sum().backward()
