"""A pending forward and its backward as one program keyed on the kinds of its ops
(_deferred_template.py): a tree net over a NEW random tree every step gives PyTorch's losses,
gradients and kept results, and the template's program really runs (the suite compiles it
at once: tests/conftest.py).
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


@pytest.fixture(autouse=True)
def deferred_grad_on(monkeypatch):
    monkeypatch.setattr(_result_hooks.STATE, "hooks", ())  # (see test_deferred.py)
    monkeypatch.setattr(_deferred, "_ALONE", {}, raising=False)
    for name in ("_PROGRAMS", "_SEEN", "_QUICK"):
        monkeypatch.setattr(_deferred_template, name, {})
    was = (_deferred.ON[0], _deferred.GRAD[0], _deferred_backward.ON[0],
           _deferred_template.ON[0])
    _deferred.ON[0] = _deferred.GRAD[0] = _deferred_backward.ON[0] = True
    _deferred_template.ON[0] = True
    _deferred_grad.reset()
    yield
    _deferred.flush()
    (_deferred.ON[0], _deferred.GRAD[0], _deferred_backward.ON[0],
     _deferred_template.ON[0]) = was
    _deferred_grad.reset()


def _forward(lib, tree, frozen=False):
    """The tree net's loss, its parameters and every internal node's value."""
    emb = lib.tensor(EMB, requires_grad=True)
    w = lib.tensor(W, requires_grad=not frozen)
    b = lib.tensor(BIAS, requires_grad=True)
    leaves = emb[lib.tensor(TOKENS)].split(1)
    hs = []

    def encode(node):
        if isinstance(node, int):
            return leaves[node]
        h = lib.tanh(lib.nn.functional.linear(lib.cat((encode(node[0]), encode(node[1])), 1),
                                              w, b))
        hs.append(h)
        return h
    return (encode(tree) * 0.5).sum(), (emb, w, b), hs


def _step(lib, tree, frozen=False, keep=None, scale=None):
    """One backward of the tree net: (loss, emb.grad, w.grad, b.grad), and (keep) every
    internal node's value read after the backward."""
    loss, params, hs = _forward(lib, tree, frozen)
    if scale is None:
        loss.backward()
    else:
        loss.backward(lib.tensor(scale))
    if keep is not None:
        keep.extend(h.detach().numpy().copy() for h in hs)
    return (loss,) + tuple(p.grad for p in params)


def _close(ref, got):
    for r, g in zip(ref, got):
        if r is None:
            assert g is None
            continue
        np.testing.assert_allclose(g.detach().numpy(), r.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_new_trees_run_as_one_program_of_their_template():
    """Every step a new tree: from the second one on the template's program runs, and later
    steps skip the analysis (one template, looked up); losses, gradients and the internal
    values read after the backward are PyTorch's."""
    rng = random.Random(3)
    for _ in range(12):  # the kinds of call get their per-kind data; 0.5 becomes a constant
        _step(torchjax, _tree(rng, 0, len(TOKENS)), keep=[])
    runs = _deferred_template.STATS["runs"]
    analysed = _deferred_template.STATS["analysed"]
    programs = len(_deferred_template._PROGRAMS)
    for _ in range(8):
        tree = _tree(rng, 0, len(TOKENS))
        ref_keep, got_keep = [], []
        _close(_step(torch, tree, keep=ref_keep), _step(torchjax, tree, keep=got_keep))
        for r, g in zip(ref_keep, got_keep):
            np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
    assert _deferred_template.STATS["runs"] - runs == 8
    assert _deferred_template.STATS["analysed"] == analysed  # every tree found its template
    assert len(_deferred_template._PROGRAMS) == programs  # (and no new program)
    # (tried first now, before the exact graph's key is built: the last runs went that way)
    assert max(q.streak for q in _deferred_template._QUICK.values()) >= 8 + 4


def test_a_frozen_weight_is_another_template():
    """The same kinds of call with the weight frozen record other nodes (no weight
    gradient): the known template must not take them, and both stay PyTorch's."""
    rng = random.Random(4)
    for k in range(12):
        tree = _tree(rng, 0, len(TOKENS))
        frozen = k % 3 == 2
        _close(_step(torch, tree, frozen=frozen), _step(torchjax, tree, frozen=frozen))
    assert _deferred_template.STATS["runs"] > 0


def test_an_explicit_root_gradient():
    rng = random.Random(5)
    for _ in range(5):
        tree = _tree(rng, 0, len(TOKENS))
        _close(_step(torch, tree, scale=2.5), _step(torchjax, tree, scale=2.5))


def test_off_switch_takes_the_usual_path(monkeypatch):
    monkeypatch.setattr(_deferred_template, "ON", [False])
    runs = _deferred_template.STATS["runs"]
    rng = random.Random(6)
    for _ in range(5):
        tree = _tree(rng, 0, len(TOKENS))
        _close(_step(torch, tree), _step(torchjax, tree))
    assert _deferred_template.STATS["runs"] == runs


def test_in_place_change_of_a_saved_input_is_caught(monkeypatch):
    """The weight every Linear node saved, changed in place after the forward (which this
    does not run): PyTorch's error at backward, raised on the template's path (its nodes'
    version stamps are checked before its program runs)."""
    rng = random.Random(8)
    for _ in range(4):
        _step(torchjax, _tree(rng, 0, len(TOKENS)))
    tried = []
    real = _deferred_template._quick

    def quick(*a):
        got = real(*a)
        tried.append(got is not None)
        return got
    monkeypatch.setattr(_deferred_template, "_quick", quick)
    for lib in (torch, torchjax):
        loss, (_, w, _), _ = _forward(lib, _tree(rng, 0, len(TOKENS)))
        with lib.no_grad():
            w.mul_(2.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()
    assert tried == [True]
