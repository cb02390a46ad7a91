"""The backward engine's two modes (node by node, fused replay) give PyTorch's gradients.

A graph structure seen before runs as one cached XLA program; these tests repeat each graph
so that the fused program is built and used, and compare every repetition with PyTorch.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax
from torchjax import _deferred_backward
from torchjax._autograd import engine, fused

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal((3, 4)).astype(np.float32)


def _shared_dag(lib, a, b):
    # a subexpression used twice, a leaf used twice, a multi-output op, a result-saving op
    h = (a * b).tanh()
    s1, s2 = h.split(2, dim=1)
    m = (s1 * s2 + h[:, :2].exp()).sum()
    v, i = (a * a).max(dim=1)
    return m + v.sum() + (h.sigmoid() * b).sum()


def _self_product(lib, a, b):
    return (a * a).sum()


def _cross_product(lib, a, b):
    return (a * b).sum()


def _grads(lib, fn, reps=4, gradient=None):
    out = []
    a = lib.tensor(A, requires_grad=True)
    b = lib.tensor(B, requires_grad=True)
    for _ in range(reps):
        a.grad = b.grad = None
        y = fn(lib, a, b)
        if gradient is None:
            y.backward()
        else:
            y.backward(lib.tensor(gradient))
        out.append(tuple(None if t is None else t.numpy().copy()
                         for t in (a.grad, b.grad, y.detach())))
    return out


@pytest.fixture
def compiled(monkeypatch):
    """Counts the fused programs built while the test runs."""
    built = []
    real = engine._compile_fused

    def counting(key):
        built.append(key)
        return real(key)

    monkeypatch.setattr(engine, "_compile_fused", counting)
    monkeypatch.setattr(engine, "_seen", {})  # structures from earlier tests are not reused
    monkeypatch.setattr(engine, "_counts", {})
    # (a forward still pending would run with its backward as one program instead, see
    # test_deferred_backward.py: these tests are about the fused backward itself)
    monkeypatch.setattr(_deferred_backward, "ON", [False])
    return built


@pytest.mark.parametrize("fn", [_shared_dag, _self_product, _cross_product])
def test_fused_replay_matches_pytorch(fn, compiled):
    expected = _grads(torch, fn)
    got = _grads(torchjax, fn)
    assert compiled, "the repeated graph never ran as one fused program"
    for got_rep, expected_rep in zip(got, expected):
        for g, e in zip(got_rep, expected_rep):
            assert (g is None) == (e is None)
            if e is not None:
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_same_ops_different_wiring_do_not_share_a_program(compiled):
    # x*x and x*y have the same nodes; only the edges differ, and so must the programs
    for fn in (_cross_product, _self_product, _cross_product):
        expected = _grads(torch, fn, reps=3)
        got = _grads(torchjax, fn, reps=3)
        for (ga, gb, _), (ea, eb, _) in zip(got, expected):
            np.testing.assert_allclose(ga, ea, rtol=1e-6)
            assert (gb is None) == (eb is None)
            if eb is not None:
                np.testing.assert_allclose(gb, eb, rtol=1e-6)
    keys = {k for k in compiled}
    assert len(keys) == 2


def test_fused_replay_with_explicit_gradient(compiled):
    g = RNG.standard_normal((3, 4)).astype(np.float32)

    def fn(lib, a, b):
        return (a * b).tanh() * a

    expected = _grads(torch, fn, gradient=g)
    got = _grads(torchjax, fn, gradient=g)
    assert compiled
    for (ga, gb, _), (ea, eb, _) in zip(got, expected):
        np.testing.assert_allclose(ga, ea, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gb, eb, rtol=1e-5, atol=1e-6)


def test_the_fused_program_compiles_on_another_thread_and_takes_over(monkeypatch, compiled):
    monkeypatch.setattr(engine, "BACKGROUND", True)
    monkeypatch.setattr(engine, "_compiling", [None])
    expected = _grads(torch, _shared_dag, reps=2)[-1]
    a = torchjax.tensor(A, requires_grad=True)
    b = torchjax.tensor(B, requires_grad=True)
    for rep in range(60):
        a.grad = b.grad = None
        _shared_dag(torchjax, a, b).backward()
        for g, e in zip((a.grad, b.grad), expected):
            np.testing.assert_allclose(g.numpy(), e, rtol=1e-5, atol=1e-6)
        state = engine._seen[compiled[0]] if compiled else None
        if rep == 1:  # the second pass started the compile and ran node by node
            assert isinstance(state, engine._Compiling)
        if rep > 1 and not isinstance(state, engine._Compiling):
            break  # the fused program took over
        if rep > 1:
            state.thread.join()
    assert callable(engine._seen[compiled[0]]) and len(compiled) == 1


def test_a_processs_first_structure_is_fused_at_once(monkeypatch, compiled):
    """engine.FUSE_FIRST: the first structure a process meets runs fused on its first pass
    (a script's training step), later new structures node by node until they repeat."""
    monkeypatch.setattr(engine, "FUSE_FIRST", [1])
    monkeypatch.setattr(engine, "BACKGROUND", True)
    monkeypatch.setattr(engine, "_compiling", [None])
    expected = _grads(torch, _shared_dag, reps=1)[0]
    got = _grads(torchjax, _shared_dag, reps=1)[0]
    assert len(compiled) == 1 and callable(engine._seen[compiled[0]])
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert engine.FUSE_FIRST == [0]
    _grads(torchjax, _cross_product, reps=1)  # another structure: node by node
    assert len(compiled) == 1


def test_fused_replay_still_checks_versions_and_frees_the_graph():
    a = torchjax.tensor(A, requires_grad=True)
    for _ in range(3):
        y = a.exp()
        loss = y.sum()
        loss.backward()
    y = a.exp()
    loss = y.sum()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    y = a.tanh()
    loss = (y * y).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


@pytest.mark.parametrize("name", ["exp", "exp2", "expm1", "sqrt", "rsqrt", "tan", "tanh",
                                  "sigmoid"])
def test_result_rule_rows_in_place_and_out_of_place(name):
    """Rows whose backward reads the saved result: both forms, float32 and float64."""
    x = np.abs(A) + 0.1
    for dtype in (np.float32, np.float64):
        res = []
        for lib in (torch, torchjax):
            t = lib.tensor(x.astype(dtype), requires_grad=True)
            y = getattr(t, name)() * 2
            z = (t * 1).clone()
            getattr(z, name + "_")()
            (y.sum() + (z * z).sum()).backward()
            res.append(t.grad.numpy())
        np.testing.assert_allclose(res[1], res[0], rtol=2e-5 if dtype == np.float32 else 1e-12)


def test_compile_cache_key_sees_types_inside_tuples():
    # (2,) and (2.0,) hash alike; a row compiled for one must not serve the other
    from torchjax import _dispatch
    prep = _dispatch.PREPARED["sum"]
    a = _dispatch._fwd_for(prep, ((0,), False, None), None)
    b = _dispatch._fwd_for(prep, ((False,), False, None), None)
    assert a is not b


def _two_products(lib, a, b, c, d):
    # both products save their constant factor for the other input's gradient
    return (a * c + b * d).sum()


def test_fused_program_passes_a_shared_saved_array_once(compiled, monkeypatch):
    """A saved array that several nodes keep (a Linear's weight) is one argument of the
    fused program (fused.Fused); when the next pass keeps two arrays there, it gets a
    program of its own, and both give PyTorch's gradients."""
    argc = []
    real = fused.Fused.prepare

    def counting(self, saved):
        prog, args = real(self, saved)
        argc.append(len(args))
        return prog, args

    monkeypatch.setattr(fused.Fused, "prepare", counting)
    C = RNG.standard_normal((3, 4)).astype(np.float32)
    D = RNG.standard_normal((3, 4)).astype(np.float32)
    for shared in (True, True, False, False, True):
        got = []
        for lib in (torch, torchjax):
            a = lib.tensor(A, requires_grad=True)
            b = lib.tensor(B, requires_grad=True)
            c = lib.tensor(C)
            d = c if shared else lib.tensor(D)
            _two_products(lib, a, b, c, d).backward()
            got.append((a.grad.numpy(), b.grad.numpy()))
        for g, e in zip(got[1], got[0]):
            np.testing.assert_allclose(g, e, rtol=1e-6)
    assert len(compiled) == 1  # one structure...
    # ...run fused from its second pass, with c passed once, then c and d apart
    n = argc[0]
    assert argc == [n, n + 1, n + 1, n]


def test_structures_seen_once_keep_no_key(compiled):
    """A graph whose structure never repeats (a tree net over a new tree per sample) is
    counted by its key's hash: its key, a tuple per node, is not kept (4096 of them kept
    ~400k objects alive, which Python's cyclic GC walked over and over), while a repeated
    structure still fuses at its second sighting."""
    x = torchjax.tensor(A, requires_grad=True)
    for n in range(1, 6):  # five structures, each seen once
        y = x
        for _ in range(n):
            y = y.tanh()
        y.sum().backward()
    assert not compiled and not engine._seen
    assert len(engine._counts) == 5 and all(type(k) is int for k in engine._counts)
    x.grad = None
    (x * 2).tanh().sum().backward()
    (x * 2).tanh().sum().backward()  # seen twice: fused
    assert len(compiled) == 1 and callable(engine._seen[compiled[0]])
