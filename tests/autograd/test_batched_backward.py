"""The level-batched backward (_autograd/batched.py) gives PyTorch's gradients.

Each test runs the same lambda in torch and torchjax with the batched backward switched on
and compares outputs and gradients. Graphs are trees of random shapes (every internal node
of a level is one batch), plus the cases that must fall back to the node-by-node engine
(hooks, retain_grad, create_graph) and the ones that batch with a twist (a Python scalar per
node, float64 next to float32, gradients reaching non-leaf tensors).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

import torchjax
from torchjax._autograd import batched, engine

RNG = np.random.default_rng(14)
W = (RNG.standard_normal((8, 16)) * 0.3).astype(np.float32)
BIAS = RNG.standard_normal(8).astype(np.float32)
LEAVES = RNG.standard_normal((10, 8)).astype(np.float32)


@pytest.fixture(autouse=True)
def batched_on(monkeypatch):
    monkeypatch.setattr(engine, "BATCHED", True)
    monkeypatch.setattr(engine, "_seen", {})  # a repeated tree must not reach the fused path
    monkeypatch.setattr(engine, "_FUSE_AFTER", 10**9)


def _tree(rng, lo, hi):
    if hi - lo == 1:
        return lo
    cut = rng.randint(lo + 1, hi - 1)
    return (_tree(rng, lo, cut), _tree(rng, cut, hi))


def _encode(lib, tree, leaves, w, b, scale=None):
    if isinstance(tree, int):
        return leaves[tree]
    h = lib.cat((_encode(lib, tree[0], leaves, w, b, scale),
                 _encode(lib, tree[1], leaves, w, b, scale)), 1)
    h = lib.tanh(lib.nn.functional.linear(h, w, b))
    return h * scale(tree) if scale is not None else h


def _tree_grads(lib, tree, scale=None, dtype=None):
    w = lib.tensor(W, requires_grad=True)
    b = lib.tensor(BIAS, requires_grad=True)
    e = lib.tensor(LEAVES, requires_grad=True)
    if dtype == "float64":  # float64 nodes fed by float32 leaves (through a cast node)
        leaves, wd, bd = e.double().split(1), w.double(), b.double()
    else:
        leaves, wd, bd = e.split(1), w, b
    root = _encode(lib, tree, leaves, wd, bd, scale)
    root.sum().backward()
    return [root.detach().numpy()] + [t.grad.numpy() for t in (w, b, e)]


def _close(ours, theirs, tol=1e-5):
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("seed", range(4))
def test_random_trees_match_pytorch(seed):
    tree = _tree(random.Random(seed), 0, len(LEAVES))
    _close(_tree_grads(torchjax, tree), _tree_grads(torch, tree))


def test_batches_are_formed_and_shared():
    # a balanced tree: its levels batch (more than one member per call), and a second
    # shape with the same level sizes reuses the programs (keyed on shapes, not structure)
    calls = []
    real = batched._run_group

    def counting(key, members, *rest):
        calls.append(len(members))
        return real(key, members, *rest)

    batched._programs_by_key.clear()
    try:
        batched._run_group = counting
        balanced = (((0, 1), (2, 3)), ((4, 5), (6, 7)))
        _close(_tree_grads(torchjax, balanced), _tree_grads(torch, balanced))
        assert max(calls) == 4
        made = len(batched._programs_by_key)
        mirrored = (((6, 7), (4, 5)), ((2, 3), (0, 1)))
        _close(_tree_grads(torchjax, mirrored), _tree_grads(torch, mirrored))
        assert len(batched._programs_by_key) == made
    finally:
        batched._run_group = real


def test_scalar_per_node_and_mixed_dtypes():
    # a Python scalar that differs per node cannot be shared: such nodes group by value;
    # float64 leaves make float64 nodes next to the float32 parameters
    tree = _tree(random.Random(5), 0, len(LEAVES))

    def scale(node):
        return 0.5 if isinstance(node[0], int) else 2.0
    _close(_tree_grads(torchjax, tree, scale), _tree_grads(torch, tree, scale))
    _close(_tree_grads(torchjax, tree, dtype="float64"),
           _tree_grads(torch, tree, dtype="float64"))


def test_non_leaf_grads_and_retain_grad_fall_back():
    tree = ((0, 1), (2, 3))

    def run(lib, keep):
        w = lib.tensor(W, requires_grad=True)
        b = lib.tensor(BIAS, requires_grad=True)
        x = lib.tensor(LEAVES, requires_grad=True) * 1.5  # a non-leaf the leaves come from
        x.retain_grad() if keep else None
        root = _encode(lib, tree, x.split(1), w, b)
        (g,) = lib.autograd.grad(root.sum(), [x], retain_graph=True)
        root.sum().backward()
        return [g.numpy(), w.grad.numpy()] + ([x.grad.numpy()] if keep else [])

    _close(run(torchjax, False), run(torch, False))
    _close(run(torchjax, True), run(torch, True))


def test_hooks_fall_back_and_run_in_pytorchs_order():
    tree = (((0, 1), 2), (3, 4))
    seen = {}

    def run(lib):
        w = lib.tensor(W, requires_grad=True)
        b = lib.tensor(BIAS, requires_grad=True)
        e = lib.tensor(LEAVES, requires_grad=True)
        log = seen.setdefault(lib.__name__, [])
        w.register_hook(lambda g: log.append(("w", float(g.sum()))) or g * 2)
        root = _encode(lib, tree, e.split(1), w, b)
        root.register_hook(lambda g: log.append(("root", float(g.sum()))))
        root.sum().backward()
        return [w.grad.numpy(), e.grad.numpy()]

    _close(run(torchjax), run(torch))
    assert [k for k, _ in seen["torchjax"]] == [k for k, _ in seen["torch"]]
    np.testing.assert_allclose([v for _, v in seen["torchjax"]], [v for _, v in seen["torch"]],
                               rtol=1e-5)


def test_create_graph_double_backward():
    tree = ((0, 1), (2, 3))

    def run(lib):
        w = lib.tensor(W, requires_grad=True)
        b = lib.tensor(BIAS, requires_grad=True)
        e = lib.tensor(LEAVES, requires_grad=True)
        root = _encode(lib, tree, e.split(1), w, b)
        (gw,) = lib.autograd.grad(root.sum(), [w], create_graph=True)
        (gw * gw).sum().backward()
        return [gw.detach().numpy(), e.grad.numpy(), b.grad.numpy()]

    _close(run(torchjax), run(torch), tol=1e-4)


def test_retain_graph_then_second_backward_and_freed_error():
    tree = _tree(random.Random(3), 0, 6)
    w = torchjax.tensor(W, requires_grad=True)
    b = torchjax.tensor(BIAS, requires_grad=True)
    e = torchjax.tensor(LEAVES, requires_grad=True)
    loss = _encode(torchjax, tree, e.split(1), w, b).sum()
    loss.backward(retain_graph=True)
    first = w.grad.numpy().copy()
    loss.backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * first, rtol=1e-5)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_inplace_change_of_saved_value_is_caught():
    w = torchjax.tensor(W, requires_grad=True)
    b = torchjax.tensor(BIAS, requires_grad=True)
    e = torchjax.tensor(LEAVES, requires_grad=True)
    loss = _encode(torchjax, ((0, 1), (2, 3)), e.split(1), w, b)
    loss.mul_(2)  # tanh saved its result: backward must refuse it
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.sum().backward()


def test_padded_rows_do_not_leak_inf():
    # three Linear nodes of one level pad to a batch of four with a copy of one of them;
    # their inputs are +inf, so the weight's gradient is +inf (as in PyTorch), and the
    # masked padding must not turn it into NaN (0 * inf)
    calls = []
    real = batched._run_group

    def run(lib):
        w = lib.tensor(W[:, :8], requires_grad=True)
        xs = [lib.tensor(np.abs(LEAVES[i:i + 1]) + 0.1, requires_grad=True) for i in range(3)]
        scale = [lib.tensor(np.full((1, 8), np.inf, np.float32)) for i in range(3)]
        hs = [lib.nn.functional.linear(x * s, w) for x, s in zip(xs, scale)]
        lib.cat(hs).sum().backward()
        return [w.grad.numpy()] + [x.grad.numpy() for x in xs]

    try:
        batched._run_group = lambda key, members, *rest: (calls.append(len(members)),
                                                          real(key, members, *rest))[1]
        ours = run(torchjax)
    finally:
        batched._run_group = real
    assert 3 in calls and np.isposinf(ours[0]).all()
    _close(ours, run(torch))


def test_sum_all_chunks():
    gs = [np.full((2,), float(i), np.float32) for i in range(19)]
    arrays = [torchjax.tensor(g)._data for g in gs]
    np.testing.assert_allclose(np.asarray(batched.sum_all(arrays)), sum(gs))
