"""The chain-by-chain backward of a new graph (_autograd/chains.py) gives PyTorch's gradients.

Each test runs the same code in torch and torchjax and compares outputs and gradients; the
graphs are new every time (random trees), so they never reach the fused backward, and the
chains' programs are checked to have been used. Also: chains that end early (a gradient that
stops), a root inside another root's chain, several outputs per node, retain_graph and the
freed-graph error, and an in-place change of a saved tensor.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

import torchjax
from torchjax import _deferred_template
from torchjax._autograd import chains, engine

# (the batched backward's tests use the same trees, weights and leaves)
from .test_batched_backward import BIAS, LEAVES, W, _tree


@pytest.fixture(autouse=True)
def chains_on(monkeypatch):
    monkeypatch.setattr(engine, "CHAINS", True)
    monkeypatch.setattr(engine, "BATCHED", False)
    monkeypatch.setattr(engine, "_seen", {})  # a repeated graph must not reach the fused path
    monkeypatch.setattr(engine, "_FUSE_AFTER", 10**9)
    # (a new tree's pending forward would run with its backward as its template's program,
    # _deferred_template.py: these tests are about the backward that runs otherwise)
    monkeypatch.setattr(_deferred_template, "ON", [False])


def _tree_grads(lib, tree, scale=1.0):
    w = lib.tensor(W, requires_grad=True)
    b = lib.tensor(BIAS, requires_grad=True)
    e = lib.tensor(LEAVES, requires_grad=True)
    leaves = e.split(1)

    def encode(node):
        if isinstance(node, int):
            return leaves[node]
        h = lib.cat((encode(node[0]), encode(node[1])), 1)
        return lib.tanh(lib.nn.functional.linear(h, w, b) * scale)
    root = encode(tree)
    root.sum().backward()
    return [root.detach().numpy()] + [t.grad.numpy() for t in (w, b, e)]


def _close(got, ref):
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_random_trees(seed):
    rng = random.Random(seed)
    before = chains.STATS["chains"]
    for _ in range(3):
        tree = _tree(rng, 0, len(LEAVES))
        _close(_tree_grads(torchjax, tree), _tree_grads(torch, tree))
    assert chains.STATS["chains"] > before  # the chains' program ran


def test_a_gradient_that_stops_inside_a_chain():
    """x * 0 then a detach-free chain: zero gradients flow, but a chain whose first node
    gets no gradient at all (an output unused by the loss) is skipped like a node."""
    def fn(lib):
        x = lib.tensor(LEAVES[:2], requires_grad=True)
        a, b = x.unbind(0)  # one node, two outputs: only a reaches the loss
        y = lib.tanh(lib.exp(a * 0.5)).sum() + (b * 0).sum()
        y.backward()
        return [y.detach().numpy(), x.grad.numpy()]
    for _ in range(3):
        _close(fn(torchjax), fn(torch))


def test_a_root_inside_another_roots_chain():
    def fn(lib):
        x = lib.tensor(LEAVES[0], requires_grad=True)
        y = lib.exp(x)
        z = lib.tanh(y)
        lib.autograd.backward([z.sum(), y], [None, lib.ones_like(y) * 2])
        return [x.grad.numpy()]
    for _ in range(3):
        _close(fn(torchjax), fn(torch))


def test_retain_graph_then_freed():
    tree = _tree(random.Random(5), 0, len(LEAVES))
    for lib in (torch, torchjax):
        w = lib.tensor(W, requires_grad=True)
        leaves = lib.tensor(LEAVES).split(1)

        def encode(node):
            if isinstance(node, int):
                return leaves[node]
            return lib.tanh(lib.nn.functional.linear(
                lib.cat((encode(node[0]), encode(node[1])), 1), w))
        loss = encode(tree).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        if lib is torch:
            ref = w.grad.numpy()
        else:
            np.testing.assert_allclose(w.grad.numpy(), ref, rtol=1e-5, atol=1e-6)
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            loss.backward()


def test_saved_tensor_changed_in_place():
    for lib in (torch, torchjax):
        for _ in range(2):  # the second time the chain has its program
            x = lib.tensor(LEAVES[0], requires_grad=True)
            y = lib.exp(x)  # saves its result
            z = lib.tanh(y * 2)
            y.add_(1)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                z.sum().backward()
