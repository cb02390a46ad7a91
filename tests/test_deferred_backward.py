"""A backward that finds its forward pending runs both as one program (_deferred_backward.py):
the same losses, gradients and kept results as PyTorch's, and the usual path wherever the
one program could not give them (a node kept alive outside the graph, retain_graph).

Each test repeats a step so that the (sequence, graph) pair gets its program (the suite
compiles it at once: tests/conftest.py) and checks that the program really ran.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

import torchjax
from tests.test_deferred_grad import BIAS, EMB, TOKENS, W, _tree
from torchjax import (
    _deferred,
    _deferred_backward,
    _deferred_grad,
    _deferred_template,
    _result_hooks,
)

RNG = np.random.default_rng(2202)
X = RNG.standard_normal((5, 4)).astype(np.float32)
W1 = RNG.standard_normal((8, 4)).astype(np.float32) * 0.5
W2 = RNG.standard_normal((1, 8)).astype(np.float32) * 0.5
B1 = RNG.standard_normal(8).astype(np.float32) * 0.1
B2 = RNG.standard_normal(1).astype(np.float32) * 0.1
Y = RNG.standard_normal((5, 1)).astype(np.float32)


@pytest.fixture(autouse=True)
def deferred_grad_on(monkeypatch):
    monkeypatch.setattr(_result_hooks.STATE, "hooks", ())  # (see test_deferred.py)
    # (templates an earlier test of the worker made are not this test's: a kind of sequence
    # it preferred to run by its template could leave these few steps no fused run of their
    # own; seen once in a full suite)
    for name, fresh in (("_PROGRAMS", {}), ("_SEEN", {}), ("_QUICK", {}), ("_PREFER_LENS", set())):
        monkeypatch.setattr(_deferred_template, name, fresh)
    monkeypatch.setattr(_deferred, "_ALONE", {}, raising=False)
    monkeypatch.setattr(_deferred_backward, "_PROGRAMS", {})
    monkeypatch.setattr(_deferred_backward, "_SEEN", {})
    was = _deferred.ON[0], _deferred.GRAD[0], _deferred_backward.ON[0]
    _deferred.ON[0] = _deferred.GRAD[0] = _deferred_backward.ON[0] = True
    _deferred_grad.reset()
    yield
    _deferred.flush()
    _deferred.ON[0], _deferred.GRAD[0], _deferred_backward.ON[0] = was
    _deferred_grad.reset()


def _runs():
    return _deferred_backward.STATS["runs"]


def _train_tree(lib, tree, steps, keep=None):
    """SGD steps of a small tree net; per step the loss, the leaves' gradients and (keep) the
    root's value, read after the backward."""
    emb = lib.tensor(EMB, requires_grad=True)
    w = lib.tensor(W, requires_grad=True)
    b = lib.tensor(BIAS, requires_grad=True)
    out = []
    for _ in range(steps):
        for p in (emb, w, b):
            p.grad = None
        leaves = emb[lib.tensor(TOKENS)].split(1)

        def encode(node):
            if isinstance(node, int):
                return leaves[node]
            return lib.tanh(lib.nn.functional.linear(
                lib.cat((encode(node[0]), encode(node[1])), 1), w, b))
        root = encode(tree)
        loss = (root * 0.5).sum()
        loss.backward()
        row = [loss.item(), emb.grad.numpy().copy(), w.grad.numpy().copy(),
               b.grad.numpy().copy()]
        if keep:
            row.append(root.detach().numpy().copy())
        out.append(row)
        with lib.no_grad():
            for p in (emb, w, b):
                p -= 0.1 * p.grad
    return out


def _same(got, ref):
    for g_row, r_row in zip(got, ref):
        for g, r in zip(g_row, r_row):
            # (float32 over several training steps: a pre-activation near 0 keeps only the
            # round-off of its terms, ~1e-6 absolute, which differs between XLA's fused
            # programs and NumPy's host-tier evaluation of a step)
            np.testing.assert_allclose(g, r, rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("seed", [0, 3])
def test_tree_net_steps_match_pytorch(seed):
    tree = _tree(random.Random(seed), 0, len(TOKENS))
    before = _runs()
    got = _train_tree(torchjax, tree, 6, keep=True)
    assert _runs() - before >= 3  # from the pair's second sighting on
    _same(got, _train_tree(torch, tree, 6, keep=True))


def _train_mlp(lib, steps, explicit=False):
    torch_like = lib.nn
    params = [lib.tensor(a, requires_grad=True) for a in (W1, B1, W2, B2)]
    w1, b1, w2, b2 = params
    x, y = lib.tensor(X), lib.tensor(Y)
    out = []
    for _ in range(steps):
        for p in params:
            p.grad = None
        h = lib.relu(torch_like.functional.linear(x, w1, b1))
        pred = torch_like.functional.linear(h, w2, b2)
        if explicit:  # a root that is not a scalar, with its gradient given
            (pred - y).backward(lib.tensor(Y * 0.1))
            loss = pred.sum()
        else:
            loss = torch_like.functional.mse_loss(pred, y)
            loss.backward()
        # h is a pending result of the forward still held here: its value comes back too
        out.append([loss.item(), h.detach().numpy().copy()]
                   + [p.grad.numpy().copy() for p in params])
        with lib.no_grad():
            for p in params:
                p -= 0.05 * p.grad
    return out


@pytest.mark.parametrize("explicit", [False, True])
def test_short_forward_and_backward_as_one_program(explicit):
    before = _runs()
    got = _train_mlp(torchjax, 8, explicit)
    assert _runs() - before >= 3
    # (recorded and run as one program, a short forward pays: no cool-down, see
    # test_deferred_grad.test_short_forwards_compile_no_program_and_cool_down)
    assert _deferred_grad._COOL[0] == 0
    _same(got, _train_mlp(torch, 8, explicit))


def test_a_node_alive_outside_the_graph_takes_the_usual_path():
    """A second branch the backward does not reach keeps nodes whose saved values are
    pending: they are written back, and its own backward works afterwards."""
    def step(lib):
        w = lib.tensor(W1, requires_grad=True)
        x = lib.tensor(X)
        h = (x @ w.t()).tanh()
        other = (w * 3).exp().sum()  # exp saves its pending result
        (h * h).sum().backward()
        g1 = w.grad.numpy().copy()
        w.grad = None
        other.backward()
        return g1, w.grad.numpy().copy(), other.item()
    ref = step(torch)
    before = _runs()
    for _ in range(4):
        got = step(torchjax)
    assert _runs() == before
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=2e-5, atol=1e-5)


def test_retain_graph_takes_the_usual_path():
    def step(lib):
        w = lib.tensor(W1, requires_grad=True)
        loss = (lib.tensor(X) @ w.t()).tanh().pow(2).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        return w.grad.numpy().copy()
    ref = step(torch)
    before = _runs()
    for _ in range(4):
        got = step(torchjax)
    assert _runs() == before
    np.testing.assert_allclose(got, ref, rtol=2e-5, atol=1e-5)


def test_in_place_change_of_a_saved_pending_result_is_caught():
    def step(lib, change):
        w = lib.tensor(W1, requires_grad=True)
        y = (lib.tensor(X) @ w.t()).exp()  # exp saves its result
        loss = (y * 2).sum()
        if change:
            y.add_(1)
        loss.backward()
        return w.grad.numpy().copy()
    for _ in range(4):
        step(torchjax, False)
    with pytest.raises(RuntimeError) as ref:
        step(torch, True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        step(torchjax, True)
    assert "modified by an inplace operation" in str(ref.value)


def test_in_place_change_of_a_saved_input_is_caught():
    """The weight the pending forward read was changed in place before the backward: the
    program would still see the old array; PyTorch's version check raises first."""
    def step(lib, change):
        w = lib.tensor(W1, requires_grad=True)
        x = lib.tensor(X, requires_grad=True)
        loss = (x @ w.t()).tanh().sum()  # the product saves w for x's gradient
        if change:
            with lib.no_grad():
                w.mul_(2)
        loss.backward()
        return x.grad.numpy().copy()
    before = _runs()
    for _ in range(4):
        step(torchjax, False)
    assert _runs() > before
    with pytest.raises(RuntimeError) as ref:
        step(torch, True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        step(torchjax, True)
    assert "modified by an inplace operation" in str(ref.value)


def _sgd_mlp(lib, steps, accumulate):
    """nn.Linear-ReLU-Linear trained by optim.SGD; `accumulate`: two backwards per step
    (the second adds into the .grad the first stored), a view of a weight and a tensor that
    saved the bias kept across the steps. Per step: loss, grads, the view, the version
    error of a backward through the saved bias."""
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 1))
    with lib.no_grad():
        for p, a in zip(model.parameters(), (W1, B1, W2, B2)):
            p.copy_(lib.tensor(a))
    opt = lib.optim.SGD(model.parameters(), lr=0.05)
    x, y = lib.tensor(X), lib.tensor(Y)
    row = model[0].weight[0]  # a view: the step's write must reach it
    out = []
    for _ in range(steps):
        opt.zero_grad()
        for _ in range(2 if accumulate else 1):
            loss = lib.nn.functional.mse_loss(model(x), y)
            loss.backward()
        kept = model[2].bias * 2  # saves nothing, but the next one saves the bias
        saved = (model[2].bias * model[2].bias).sum()
        opt.step()
        try:
            saved.backward()
            err = None
        except RuntimeError as e:
            err = "modified by an inplace operation" in str(e)
        out.append([loss.item(), row.detach().numpy().copy(), err, kept.detach().numpy()]
                   + [p.grad.numpy().copy() for p in model.parameters()])
    return out


@pytest.mark.parametrize("accumulate", [False, True])
def test_sgd_steps_through_the_inline_stores_and_writes_match_pytorch(accumulate):
    """The fused forward+backward's inline gradient stores (a first .grad, and one added
    into), its inline release (a second backward through a released graph), and the
    optimizer's inline parameter write (a view of a weight, the version a saved tensor
    checks) give PyTorch's values and errors."""
    before = _runs()
    got = _sgd_mlp(torchjax, 6, accumulate)
    assert _runs() - before >= 3
    want = _sgd_mlp(torch, 6, accumulate)
    for g, w in zip(got, want):
        assert g[2] == w[2] and g[2] is True
        for a, b in zip(g[:2] + g[3:], w[:2] + w[3:]):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_released_graph_raises_pytorchs_error_after_the_one_program():
    def second_backward(lib):
        w = lib.tensor(W1, requires_grad=True)
        x = lib.tensor(X)
        for _ in range(4):
            loss = (lib.relu(lib.nn.functional.linear(x, w)) * 2).sum()
            loss.backward()
        try:
            loss.backward()
        except RuntimeError as e:
            return "backward through the graph a second time" in str(e)
        return None
    before = _runs()
    assert second_backward(torchjax) is True
    assert _runs() - before >= 1
    assert second_backward(torch) is True
