"""In-place changes to tensors an op saved for backward: torchjax raises PyTorch's "modified by
an inplace operation" error exactly where PyTorch does, and nowhere else.

Each case runs an op on non-leaf tensors (leaf * 1), changes one input or the result in place,
then calls backward, in both libraries; the outcomes must agree.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

_rng = np.random.default_rng(0)


def _pos(*shape):
    return _rng.uniform(0.5, 2.0, size=shape).astype("float32")


def _any(*shape):
    return _rng.uniform(-2.0, 2.0, size=shape).astype("float32")


def _act(name, **kw):
    def f(lib, x):
        if lib is torch:
            return getattr(torch.nn.functional, name)(x, **kw)
        return torchjax._dispatch.call_op(name, x, **kw)
    return f


# (id, fn(lib, *tensors), input arrays)
CASES = [
    ("exp", lambda lib, x: x.exp(), [_any(3)]),
    ("exp2", lambda lib, x: lib.exp2(x), [_any(3)]),
    ("expm1", lambda lib, x: x.expm1(), [_any(3)]),
    ("tanh", lambda lib, x: x.tanh(), [_any(3)]),
    ("sigmoid", lambda lib, x: x.sigmoid(), [_any(3)]),
    ("sqrt", lambda lib, x: x.sqrt(), [_pos(3)]),
    ("rsqrt", lambda lib, x: x.rsqrt(), [_pos(3)]),
    ("tan", lambda lib, x: x.tan(), [_any(3) / 2]),
    ("reciprocal", lambda lib, x: x.reciprocal(), [_pos(3)]),
    ("relu", lambda lib, x: x.relu(), [_any(3)]),
    ("log", lambda lib, x: x.log(), [_pos(3)]),
    ("sin", lambda lib, x: x.sin(), [_any(3)]),
    ("erf", lambda lib, x: x.erf(), [_any(3)]),
    ("abs", lambda lib, x: x.abs(), [_any(3)]),
    ("neg", lambda lib, x: -x, [_any(3)]),
    ("floor", lambda lib, x: x.floor(), [_any(3)]),
    ("round", lambda lib, x: x.round(), [_any(3)]),
    ("square", lambda lib, x: x.square(), [_any(3)]),
    ("add", lambda lib, a, b: a + b, [_any(3), _any(3)]),
    ("add_alpha", lambda lib, a, b: lib.add(a, b, alpha=2.0), [_any(3), _any(3)]),
    ("sub", lambda lib, a, b: a - b, [_any(3), _any(3)]),
    ("rsub_scalar", lambda lib, a: 2 - a, [_any(3)]),
    ("mul", lambda lib, a, b: a * b, [_any(3), _any(3)]),
    ("mul_scalar", lambda lib, a: a * 2, [_any(3)]),
    ("div", lambda lib, a, b: a / b, [_any(3), _pos(3)]),
    ("pow", lambda lib, a, b: a ** b, [_pos(3), _any(3)]),
    ("pow_scalar", lambda lib, a: a ** 2, [_any(3)]),
    ("atan2", lambda lib, a, b: lib.atan2(a, b), [_any(3), _any(3)]),
    ("maximum", lambda lib, a, b: lib.maximum(a, b), [_any(3), _any(3)]),
    ("clamp", lambda lib, a: a.clamp(-0.5, 0.5), [_any(3)]),
    ("clamp_tensor", lambda lib, a, lo, hi: a.clamp(lo, hi), [_any(3), _any(3) - 2,
                                                            _any(3) + 2]),
    ("where", lambda lib, a, b: lib.where(a > 0, a, b), [_any(3), _any(3)]),
    ("lerp_tensor", lambda lib, a, b, w: lib.lerp(a, b, w), [_any(3), _any(3), _pos(3) / 2]),
    ("remainder", lambda lib, a, b: a % b, [_any(3), _pos(3)]),
    ("softmax", lambda lib, x: x.softmax(-1), [_any(2, 3)]),
    ("log_softmax", lambda lib, x: x.log_softmax(-1), [_any(2, 3)]),
    ("gelu", _act("gelu"), [_any(3)]),
    ("silu", _act("silu"), [_any(3)]),
    ("elu", _act("elu"), [_any(3)]),
    ("leaky_relu", _act("leaky_relu"), [_any(3)]),
    ("hardtanh", _act("hardtanh"), [_any(3)]),
    ("softplus", _act("softplus"), [_any(3)]),
    ("logsigmoid", _act("logsigmoid"), [_any(3)]),
    ("mish", _act("mish"), [_any(3)]),
    ("selu", _act("selu"), [_any(3)]),
    ("celu", _act("celu"), [_any(3)]),
    ("hardswish", _act("hardswish"), [_any(3)]),
    ("threshold", _act("threshold", threshold=0.1, value=-1.0), [_any(3)]),
]


def _outcome(lib, fn, arrays, target, requires=None):
    leaves = [lib.tensor(a.copy(), requires_grad=requires is None or i in requires)
              for i, a in enumerate(arrays)]
    xs = [t * 1 if t.requires_grad else t.clone() for t in leaves]
    out = fn(lib, *xs)
    changed = out if target == "result" else xs[target]
    if changed is out and any(out is x for x in xs):
        return "aliased"
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
        for target in [*range(len(arrays)), "result"]:
            yield pytest.param(fn, arrays, target, id=f"{name}-{target}")


@pytest.mark.parametrize("fn, arrays, target", list(_params()))
def test_inplace_after_op(fn, arrays, target):
    want = _outcome(torch, fn, arrays, target)
    assert _outcome(torchjax, fn, arrays, target) == want


def test_examples_from_the_brief():
    x = torchjax.tensor([0.5, 1.0], requires_grad=True) * 1
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    a = torchjax.tensor([0.5, 1.0], requires_grad=True) * 1
    b = torchjax.tensor([2.0, 3.0], requires_grad=True) * 1
    z = a * b
    a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    a = torchjax.tensor([0.5, 1.0], requires_grad=True) * 1
    z = a + b
    a.add_(1)
    z.sum().backward()


def _inplace_op_cases():
    # the in-place op itself, then a second change
    yield "exp_", lambda lib, x: x.exp_(), [_any(3)]
    yield "sigmoid_", lambda lib, x: x.sigmoid_(), [_any(3)]
    yield "mul_", lambda lib, x, y: x.mul_(y), [_any(3), _any(3)]
    yield "add_", lambda lib, x, y: x.add_(y), [_any(3), _any(3)]
    yield "relu_", lambda lib, x: x.relu_(), [_any(3)]


@pytest.mark.parametrize("name, fn, arrays", list(_inplace_op_cases()),
                         ids=[c[0] for c in _inplace_op_cases()])
def test_inplace_op_then_change(name, fn, arrays):
    for target in [*range(1, len(arrays)), "result"]:
        def run(lib):
            leaves = [lib.tensor(a.copy(), requires_grad=True) for a in arrays]
            xs = [t * 1 for t in leaves]
            out = fn(lib, *xs)
            with lib.no_grad():
                (out if target == "result" else xs[target]).add_(1)
            try:
                out.sum().backward()
            except RuntimeError as e:
                assert "modified by an inplace operation" in str(e)
                return "raises"
            return "ok"
        assert run(torchjax) == run(torch), target


# PyTorch saves an input only when the gradient that uses it is wanted: `w * x` with x not
# requiring grad does not save w (more in test_saved_tensors.py)
@pytest.mark.parametrize("name, fn", [("mul", lambda lib, a, b: a * b),
                                      ("div", lambda lib, a, b: a / b)])
def test_conditional_saves(name, fn):
    arrays = [_pos(3), _pos(3)]
    want = _outcome(torch, fn, arrays, 0, requires={0})
    assert _outcome(torchjax, fn, arrays, 0, requires={0}) == want


def _augmented(lib):
    x = lib.ones(3)
    alias, view = x, x[:2]
    x += 1
    x *= 2
    x -= 1
    x /= 2
    x **= 2
    x //= 1
    x %= 3
    b = lib.tensor([True, False])
    b |= lib.tensor([False, True])
    b &= lib.tensor([True, True])
    b ^= lib.tensor([True, False])
    i = lib.tensor([5, 6])
    i <<= 1
    i >>= 2
    z = lib.zeros(4)
    z[lib.tensor([0, 0, 2])] += 1  # duplicate indices increment once
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    c = a * 1
    c += a
    c.sum().backward()
    return (x is alias, x, view, b, i, z, a.grad, type(c.grad_fn).__name__, x._version)


def test_augmented_assignment_is_in_place():
    got, want = _augmented(torchjax), _augmented(torch)
    for g, w in zip(got, want):
        if isinstance(w, torch.Tensor):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
        else:
            assert g == w
    for lib in (torch, torchjax):
        i = lib.tensor([1, 2])
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                               "output type Long"):
            i += 0.5
        a = lib.tensor([1.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            a += 1
