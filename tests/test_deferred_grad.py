"""Deferred ops that record a tape node (_deferred.GRAD, experimental) give PyTorch's
results and gradients.

Each test runs the same code with torch and with torchjax (deferral and GRAD on), the
torchjax side twice first so that the fast path's per-kind data exists, and checks that
its forward really was deferred (a pending result with a grad_fn).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

import torchjax
from torchjax import (
    _deferred,
    _deferred_backward,
    _deferred_grad,
    _deferred_programs,
    _deferred_split,
    _deferred_template,
    _deferred_windows,
    _result_hooks,
)

RNG = np.random.default_rng(1919)
D = 16
EMB = RNG.standard_normal((20, D)).astype(np.float32)
W = (RNG.standard_normal((D, 2 * D)) * 0.2).astype(np.float32)
BIAS = (RNG.standard_normal(D) * 0.1).astype(np.float32)
TOKENS = RNG.integers(0, 20, 8)


@pytest.fixture(autouse=True)
def deferred_grad_on(monkeypatch):
    monkeypatch.setattr(_result_hooks.STATE, "hooks", ())  # (see test_deferred.py)
    # (kinds of call earlier tests ran alone would start no sequence here: _deferred._alone)
    monkeypatch.setattr(_deferred, "_ALONE", {}, raising=False)
    was = _deferred.ON[0], _deferred.GRAD[0]
    _deferred.ON[0] = _deferred.GRAD[0] = True
    _deferred_grad.reset()
    yield
    _deferred.flush()
    _deferred.ON[0], _deferred.GRAD[0] = was


def _tree(rng, lo, hi):
    if hi - lo == 1:
        return lo
    cut = rng.randint(lo + 1, hi - 1)
    return (_tree(rng, lo, cut), _tree(rng, cut, hi))


def _tree_step(lib, tree, seen=None):
    emb = lib.tensor(EMB, requires_grad=True)
    w = lib.tensor(W, requires_grad=True)
    b = lib.tensor(BIAS, requires_grad=True)
    leaves = emb[lib.tensor(TOKENS)].split(1)

    def encode(node):
        if isinstance(node, int):
            return leaves[node]
        h = lib.tanh(lib.nn.functional.linear(lib.cat((encode(node[0]), encode(node[1])), 1),
                                              w, b))
        if seen is not None:
            seen.append(h)
        return h
    loss = (encode(tree) * 0.5).sum()
    loss.backward()
    return loss, emb.grad, w.grad, b.grad


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tree_net_gradients(seed):
    tree = _tree(random.Random(seed), 0, len(TOKENS))
    ref = _tree_step(torch, tree)
    for _ in range(2):
        _tree_step(torchjax, tree)
    seen = []
    got = _tree_step(torchjax, tree, seen)
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g.detach().numpy(), r.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_forward_is_deferred_with_nodes():
    x = torchjax.tensor(W, requires_grad=True)
    for _ in range(3):
        y = (x * 2).tanh()
    assert y._lazy is not None and y.grad_fn is not None
    assert y.grad_fn.name() == "TanhBackward0" and y.requires_grad
    y.sum().backward()
    ref = torch.tensor(W, requires_grad=True)
    (ref * 2).tanh().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ref.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_in_place_change_of_a_saved_pending_result_is_caught():
    def fn(lib):
        x = lib.tensor(W, requires_grad=True)
        y = (x * 3).exp()  # exp saves its result
        y.add_(1)
        y.sum().backward()
    with pytest.raises(RuntimeError) as ref:
        fn(torch)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            fn(torchjax)
    assert "modified by an inplace operation" in str(ref.value)


def test_autograd_grad_retain_graph_and_create_graph():
    def fn(lib):
        x = lib.tensor(W, requires_grad=True)
        y = (x * x).tanh().sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True, retain_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x, retain_graph=True)
        y.backward()
        return g, gg, x.grad
    ref = fn(torch)
    for _ in range(2):
        fn(torchjax)
    for r, g in zip(ref, fn(torchjax)):
        np.testing.assert_allclose(g.detach().numpy(), r.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)


def test_backward_twice_raises_like_torch():
    def fn(lib):
        x = lib.tensor(W, requires_grad=True)
        y = (x * 2).sigmoid().sum()
        y.backward()
        y.backward()
    with pytest.raises(RuntimeError) as ref:
        fn(torch)
    for _ in range(2):
        with pytest.raises(RuntimeError) as got:
            fn(torchjax)
    assert str(got.value).split(".")[0] == str(ref.value).split(".")[0]


def test_training_steps_match():
    def run(lib):
        w = lib.tensor(W[:, :D], requires_grad=True)
        b = lib.tensor(BIAS, requires_grad=True)
        opt = lib.optim.SGD([w, b], lr=0.1)
        x = lib.tensor(EMB[:8])
        losses = []
        for _ in range(5):
            opt.zero_grad()
            h = lib.relu(lib.nn.functional.linear(x, w, b))
            loss = ((h - 0.5) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(float(loss.item()))
        return losses, w.detach().numpy()
    (rl, rw), (gl, gw) = run(torch), run(torchjax)
    np.testing.assert_allclose(gl, rl, rtol=1e-5)
    np.testing.assert_allclose(gw, rw, rtol=1e-5, atol=1e-6)


def test_grad_fn_called_directly():
    def fn(lib):
        x = lib.tensor(W, requires_grad=True)
        y = (x * 2).tanh()
        g = y.grad_fn(lib.ones(W.shape))
        # (torchjax's grad_fn call returns a list of one array where torch returns the tensor;
        # not this test's subject)
        return y, g[0] if isinstance(g, (list, tuple)) else g
    ref = fn(torch)[1]
    for _ in range(2):
        fn(torchjax)
    y, got = fn(torchjax)
    assert y.grad_fn is not None
    np.testing.assert_allclose(np.asarray(got), ref.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_new_structures_cool_down_repeated_ones_do_not(monkeypatch):
    # (without windows and templates: with them a new structure finds its windows' programs,
    # below, or its template's, test_deferred_template.py)
    monkeypatch.setattr(_deferred, "WINDOWS", [False])
    monkeypatch.setattr(_deferred_template, "ON", [False])
    rng = random.Random(7)
    for _ in range(3):  # the kinds of call get their per-kind data
        _tree_step(torchjax, _tree(rng, 0, len(TOKENS)))
    for _ in range(8):  # a new structure every step: no program found, deferral pauses
        _tree_step(torchjax, _tree(rng, 0, len(TOKENS)))
    assert _deferred_grad._COOL[0] > 0
    _deferred_grad._MISSES[0] = _deferred_grad._COOL[0] = 0
    tree = _tree(rng, 0, len(TOKENS))
    for _ in range(6):  # one structure repeated: programs are found from its second step on
        seen = []
        _tree_step(torchjax, tree, seen)
    assert _deferred_grad._COOL[0] == 0
    assert seen[-1].grad_fn is not None
    ref = _tree_step(torch, tree)
    got = _tree_step(torchjax, tree)
    for r, g in zip(ref, got):
        np.testing.assert_allclose(g.detach().numpy(), r.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_a_repeated_structure_ends_the_cool_down_new_ones_made(monkeypatch):
    """A cool-down is the process's: one that new structures made (a tree net over new
    trees) must not hold back a repeated structure that follows in the same process. Its
    second backward meets a structure seen before, which ends the cool-down and forgets its
    doubling; its sequence seen before runs op by op while its program is made (not a miss),
    so it never cools down again, and its forward is deferred from then on."""
    monkeypatch.setattr(_deferred, "WINDOWS", [False])
    monkeypatch.setattr(_deferred_template, "ON", [False])
    rng = random.Random(5)
    for _ in range(3):
        _tree_step(torchjax, _tree(rng, 0, len(TOKENS)))
    for _ in range(12):  # new structures until deferral cools down
        _tree_step(torchjax, _tree(rng, 0, len(TOKENS)))
        if _deferred_grad._COOL[0]:
            break
    assert _deferred_grad._COOL[0] > 2
    tree = _tree(rng, 0, len(TOKENS))
    for _ in range(2):
        _tree_step(torchjax, tree)
    assert _deferred_grad._COOL[0] == 0
    assert _deferred_grad._NEXT_COOL[0] == _deferred_grad.COOL_STEPS
    ref = _tree_step(torch, tree)
    for _ in range(8):
        emb = torchjax.tensor(EMB, requires_grad=True)
        w = torchjax.tensor(W, requires_grad=True)
        b = torchjax.tensor(BIAS, requires_grad=True)
        leaves = emb[torchjax.tensor(TOKENS)].split(1)

        def encode(node, w=w, b=b, leaves=leaves):
            if isinstance(node, int):
                return leaves[node]
            return torchjax.tanh(torchjax.nn.functional.linear(
                torchjax.cat((encode(node[0]), encode(node[1])), 1), w, b))
        loss = (encode(tree) * 0.5).sum()
        assert _pending(loss)  # deferred: never cooled down again
        loss.backward()
        for r, g in zip(ref, (loss, emb.grad, w.grad, b.grad)):
            np.testing.assert_allclose(g.detach().numpy(), r.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)
    assert _deferred_grad._COOL[0] == 0


def _windows_counted(monkeypatch):
    """Turn windows on; count the window programs found and the windows run op by op."""
    monkeypatch.setattr(_deferred, "WINDOWS", [True])
    found = []
    real = _deferred_windows.run

    def run(ops, flat, ext, live):
        before = _deferred_programs.STATS["op_by_op"]
        res = real(ops, flat, ext, live)
        found.append(_deferred_programs.STATS["op_by_op"] == before)
        return res
    monkeypatch.setattr(_deferred_windows, "run", run)
    return found


def test_new_structures_run_by_windows(monkeypatch):
    """A new tree every step: the sequence has no program, its cat-Linear-tanh windows do,
    and every loss and gradient is PyTorch's (windows fed from the wrong place fail)."""
    found = _windows_counted(monkeypatch)
    # (a sequence run by windows counts as a miss for the cool-down: kept from pausing here)
    monkeypatch.setattr(_deferred_grad, "MISS_LIMIT", 10**9)
    # (deferred, the leaves' split would start each sequence, and windows are cut where the
    # first op's kind recurs)
    monkeypatch.setattr(_deferred_split, "ON", [False])
    rng = random.Random(11)
    for _ in range(12):
        tree = _tree(rng, 0, len(TOKENS))
        ref = _tree_step(torch, tree)
        got = _tree_step(torchjax, tree)
        for r, g in zip(ref, got):
            np.testing.assert_allclose(g.detach().numpy(), r.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)
    assert found and found[-1]  # the last steps found every window's program


def test_windows_of_one_sequence():
    """Windows start where the first op's kind comes back, or after MAX_WINDOW ops."""
    def ops_of(tokens):
        flat, ops = [], []
        for t in tokens:
            flat.append(t)
            ops.append((None, None, len(flat), len(flat)))
        return ops, flat
    starts, win = _deferred_windows.windows(*ops_of([1, 2, 3, 1, 2, 3, 1, 4]))
    assert starts == [0, 3, 6, 8] and win == [0, 0, 0, 1, 1, 1, 2, 2]
    n = _deferred_windows.MAX_WINDOW
    starts, _ = _deferred_windows.windows(*ops_of([1] + [2, 3] * n))
    # (MAX_WINDOW is even: the window cut there starts at a 3, whose kind then recurs)
    assert starts == [0, n] + list(range(n + 2, 2 * n + 1, 2)) + [2 * n + 1]


def test_window_results_read_by_later_windows_and_lists(monkeypatch):
    """A window returns what later windows read, also inside a cat's list, though no node
    saves it and no tensor holds it (the body's mul result), and the results equal
    PyTorch's."""
    found = _windows_counted(monkeypatch)
    proj = np.ascontiguousarray(W.T * 0.5)  # (2D, D)

    def fn(lib, h, b, p):
        k = b
        for _ in range(4):  # cat, matmul, mul, add, sub: one window each time round
            c = lib.cat((h, b), 1) @ p
            h = c * 0.5 + k  # k: read across windows directly, h: inside a list
            k = c - h
        return (h * k).sum()
    ref_in = [torch.tensor(v, requires_grad=True) for v in (W[:4, :D], W[4:8, :D])]
    ref = fn(torch, *ref_in, torch.tensor(proj))
    ref.backward()
    for _ in range(4):
        got_in = [torchjax.tensor(v, requires_grad=True) for v in (W[:4, :D], W[4:8, :D])]
        got = fn(torchjax, *got_in, torchjax.tensor(proj))
        got.backward()
        np.testing.assert_allclose(float(got.item()), float(ref.item()), rtol=1e-5)
        for r, g in zip(ref_in, got_in):
            np.testing.assert_allclose(g.grad.numpy(), r.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert found  # the sequence did run by windows


def test_short_forwards_compile_no_program_and_cool_down(monkeypatch):
    """A grad forward shorter than MIN_OPS (a small MLP's) gains nothing from a program of
    its own: none is compiled for it, it counts towards the cool-down, and it stays
    PyTorch's. (Run with its backward as one program, a short forward gains: that path is
    off here, test_deferred_backward.py has it.)"""
    monkeypatch.setattr(_deferred_backward, "ON", [False])
    compiled = _deferred_programs.STATS["compiled"]

    def step(lib, w):
        h = lib.relu(lib.nn.functional.linear(lib.tensor(EMB[:4]), w))
        loss = ((h - 0.5) ** 2).mean()
        loss.backward()
        return float(loss.item()), w.grad.numpy().copy()
    rw = torch.tensor(W[:, :D], requires_grad=True)
    ref = step(torch, rw)
    for _ in range(6):
        gw = torchjax.tensor(W[:, :D], requires_grad=True)
        got = step(torchjax, gw)
        np.testing.assert_allclose(got[0], ref[0], rtol=1e-5)
        np.testing.assert_allclose(got[1], ref[1], rtol=1e-5, atol=1e-6)
    assert _deferred_programs.STATS["compiled"] == compiled
    assert _deferred_grad._COOL[0] > 0


def _pending(t):
    return t._lazy is not None


def test_a_cool_down_counts_backward_passes():
    """Deferral resumes at the start of a forward: a cool-down counts backward passes (in
    ops, it ended mid-forward, and a repeated step's sequence was new every time), and while
    it lasts grad ops are turned away before recording."""
    prep = torchjax._dispatch.PREPARED["tanh"]
    _deferred_grad._COOL[0] = 2
    x = torchjax.tensor(W, requires_grad=True)
    for _ in range(3):
        assert not _deferred_grad.usable(prep)
        assert not _pending(torchjax.tanh(x))
    _deferred.flush()  # what every backward calls first
    assert not _deferred_grad.usable(prep)
    _deferred.flush()
    assert _deferred_grad.usable(prep)
    assert _pending(torchjax.tanh(x))


def test_cool_downs_double_while_nothing_fuses():
    def misses():
        for _ in range(_deferred_grad.MISS_LIMIT):
            _deferred_grad.ran(False)
        cool = _deferred_grad._COOL[0]
        _deferred_grad._COOL[0] = 0
        return cool
    first = misses()
    assert first == _deferred_grad.COOL_STEPS and misses() == 2 * first
    _deferred_grad.ran(True, _deferred_grad.MIN_OPS)  # a long sequence ran as one program
    assert misses() == first
    misses()
    _deferred_grad.repeated()  # a structure seen before: the doubling is forgotten
    assert misses() == first


def test_warming_sequences_are_not_misses_and_short_cool_downs_stay():
    """A long sequence seen before that ran op by op (its program is being made) is not a
    miss; a cool-down made by short sequences outlives a repeated graph (their graphs
    repeat: deferring them again would only lose), one made by new long ones does not."""
    for _ in range(2 * _deferred_grad.MISS_LIMIT):
        _deferred_grad.ran(False, _deferred_grad.MIN_OPS, seen=True)
    assert _deferred_grad._COOL[0] == 0
    for _ in range(_deferred_grad.MISS_LIMIT - 1):
        _deferred_grad.ran(False, _deferred_grad.MIN_OPS)
    _deferred_grad.ran(False, 3)
    assert _deferred_grad._COOL[0] > 0
    _deferred_grad.repeated()
    assert _deferred_grad._COOL[0] > 0
    _deferred_grad.reset()
    for _ in range(_deferred_grad.MISS_LIMIT):
        _deferred_grad.ran(False, _deferred_grad.MIN_OPS)
    assert _deferred_grad._COOL[0] > 0
    _deferred_grad.repeated()
    assert _deferred_grad._COOL[0] == 0
