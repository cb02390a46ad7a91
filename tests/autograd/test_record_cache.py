"""The recording data the fast path keeps per kind of call (_record._record_simple's and
_record_list's `rec`, in each fast-path entry): calls of one row that differ only in which
inputs require grad, in their shapes or in their numbers must each get their own node
(name, edges, saved values) and PyTorch's gradients, in any order and repeated, so that data
made for one kind of call is never reused for another.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

RNG = np.random.default_rng(23)


def _arr(shape):
    return (RNG.standard_normal(shape) * 2).astype(np.float32)


def _run(lib, fn, arrays, flags):
    ts = [lib.tensor(a, requires_grad=rg) for a, rg in zip(arrays, flags)]
    out = fn(lib, *ts)
    name = out.grad_fn.name() if out.grad_fn is not None else None
    # how many inputs the node has an edge for (PyTorch's addmm orders them bias first)
    nexts = (sorted(e[0] is None for e in out.grad_fn.next_functions)
             if out.grad_fn is not None else None)
    if out.requires_grad:
        (out * lib.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32)
                          .reshape(tuple(out.shape)))).sum().backward()
    grads = [None if t.grad is None else t.grad.numpy() for t in ts]
    return out.detach().numpy(), name, nexts, grads


def _same(fn, arrays, flags, edges=True):
    want = _run(torch, fn, arrays, flags)
    got = _run(torchjax, fn, arrays, flags)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    assert got[1] == want[1]
    if edges:
        assert got[2] == want[2]
    for g, w in zip(got[3], want[3]):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _linear(lib, x, w, b):
    return lib.nn.functional.linear(x, w, b)


# one row, kinds of call interleaved: which inputs require grad, input rank (linear's node is
# AddmmBackward0 on 2-D input and ViewBackward0 on 3-D), the bias' shape (unsaved: the
# backward makes zeros of its shape)
LINEAR_CASES = [
    ((2, 4), (3, 4), (3,), (True, True, True)),
    ((2, 4), (3, 4), (3,), (False, True, False)),
    ((2, 5, 4), (3, 4), (3,), (True, True, True)),
    ((2, 4), (3, 4), (3,), (True, False, False)),
    ((2, 4), (3, 4), (1,), (True, True, True)),
    ((2, 5, 4), (3, 4), (3,), (False, False, True)),
    ((2, 4), (3, 4), (3,), (True, True, True)),
]


@pytest.mark.parametrize("repeat", [1, 2])
def test_linear_kinds_interleaved(repeat):
    for _ in range(repeat):
        for xs, ws, bs, flags in LINEAR_CASES:
            # (not the edges: PyTorch's ViewBackward0 on 3-D input leads to an addmm node,
            # torchjax's one node has an edge per input)
            _same(_linear, [_arr(xs), _arr(ws), _arr(bs)], flags, edges=len(xs) == 2)


def test_mul_patterns_and_numbers():
    # the same row with a tensor or a number on either side, each operand requiring grad or
    # not, and 0-d tensors (which promote differently)
    cases = [
        (lambda lib, a, b: a * b, [(3, 2), (3, 2)], (True, False)),
        (lambda lib, a, b: a * b, [(3, 2), (3, 2)], (False, True)),
        (lambda lib, a, b: a * b, [(3, 2), ()], (True, True)),
        (lambda lib, a, b: a * b, [(), (3, 2)], (True, False)),
        (lambda lib, a, b: a * 2.5 * b, [(3, 2), (3, 2)], (True, True)),
        (lambda lib, a, b: 3 * a + b, [(3, 2), (2,)], (False, True)),
        (lambda lib, a, b: a.pow(b), [(3, 2), (3, 2)], (True, True)),
        (lambda lib, a, b: a.abs().pow(2.0) + b, [(3, 2), (3, 2)], (True, False)),
        (lambda lib, a, b: lib.pow(2.0, a) * b, [(3, 2), (3, 2)], (True, True)),
    ]
    for _ in range(2):
        for fn, shapes, flags in cases:
            _same(fn, [_arr(s) for s in shapes], flags)


def test_result_saving_rows():
    # tanh's backward reads its result; exp's too: alternate shapes and grad patterns
    cases = [
        (lambda lib, a, b: lib.tanh(a) + b, [(4,), (4,)], (True, False)),
        (lambda lib, a, b: lib.tanh(a) * b, [(2, 4), (2, 4)], (True, True)),
        (lambda lib, a, b: lib.exp(a) - lib.tanh(b), [(4,), (4,)], (False, True)),
    ]
    for _ in range(2):
        for fn, shapes, flags in cases:
            _same(fn, [_arr(s) for s in shapes], flags)


def test_cat_patterns_and_shapes():
    cases = [
        ([(1, 3), (1, 3)], (True, True)),
        ([(1, 3), (1, 3)], (False, True)),
        ([(1, 3), (1, 5)], (True, False)),
        ([(2, 3), (1, 3)], (True, True)),
    ]
    for _ in range(2):
        for shapes, flags in cases:
            dim = 0 if shapes[0][1] == shapes[1][1] and shapes[0][0] != shapes[1][0] else 1
            _same(lambda lib, a, b, d=dim: lib.cat((a, b), d) * 1.5,
                  [_arr(s) for s in shapes], flags)


def test_inplace_change_of_saved_input_still_caught():
    # the cached data names which inputs are saved; their versions are still stamped per call
    for lib in (torch, torchjax):
        w = lib.tensor(_arr((3, 4)), requires_grad=True)
        b = lib.tensor(_arr((3,)), requires_grad=True)
        for _ in range(2):
            x = lib.tensor(_arr((2, 4)), requires_grad=True)
            y = lib.nn.functional.linear(x, w, b)
            with lib.no_grad():
                x.mul_(2)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                y.sum().backward()
