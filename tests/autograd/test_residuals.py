"""Rows whose backward reads the residuals their forward kept (_residuals.py: the RNN scan).

Gradients against PyTorch through the node-by-node, fused and create_graph paths, with the
vjp's tree rebuilt by an abstract trace (what a process whose forward program came from the
program cache does), and in fresh processes on a shared program cache."""

from __future__ import annotations

import json
import subprocess
import sys

import jax
import numpy as np
import pytest
import torch

import torchjax
from tests.nn.test_rnn import pair  # the same layer in both, PyTorch's weights copied
from tests.test_compile_cache import _env
from torchjax import _residuals

_rng = np.random.default_rng(3)


def step(lib, m, x, forget=False):
    """Loss of a forward and the gradients of the input and every parameter."""
    xi = lib.tensor(x, requires_grad=True)
    out, hidden = m(xi)
    hs = hidden if isinstance(hidden, tuple) else (hidden,)
    loss = out.square().sum() + sum((k + 2) * h.sum() for k, h in enumerate(hs))
    if forget:  # as in a process whose forward program was loaded: no tree from its trace
        _residuals._TREES.clear()
    loss.backward()
    return [xi.grad.numpy()] + [p.grad.numpy() for p in m.parameters()], out


CASES = [("LSTM", dict(num_layers=2, batch_first=True)),
         ("GRU", dict(bidirectional=True)),
         ("RNN", dict(nonlinearity="relu"))]


@pytest.mark.parametrize("kind,kw", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("forget", [False, True], ids=["traced", "rebuilt"])
def test_backward_from_residuals_matches_pytorch(kind, kw, forget):
    tm, jm = pair(kind, 3, 4, **kw)
    x = _rng.uniform(-1, 1, (2, 5, 3)).astype(np.float32)
    want, _ = step(torch, tm, x)
    got, out = step(torchjax, jm, x, forget)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


def test_node_keeps_residuals_not_a_second_forward():
    _, jm = pair("LSTM", 3, 4)
    out, _ = jm(torchjax.randn(5, 2, 3, requires_grad=True))
    node = out.grad_fn
    assert isinstance(node._spec, _residuals.ResidualSpec)
    kept = node._saved[-1]
    assert isinstance(kept, tuple) and len(kept) > 0
    # the gates of every step are among them: (steps, batch, 4 * hidden) or per-step slices
    assert any(a.shape[0] == 5 for a in kept)
    # the vjp's tree rebuilt by an abstract trace (a forward loaded from the program cache
    # was never traced here) gives a backward program equal to the one traced with it
    cts = tuple(jax.numpy.ones(o.shape, o.dtype) for o in (out._data, *[a._data for a in _]))
    want = jax.jit(node._spec.pure)(node._saved, cts)  # (a plain jit both times: the program
    _residuals._TREES.clear()                           # cache's options may round apart)
    got = jax.jit(node._spec.pure)(node._saved, cts)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    with torchjax.no_grad():  # no node, no residuals: the plain forward
        assert jm(torchjax.randn(5, 2, 3))[0].grad_fn is None


def test_fused_backward_uses_residuals():
    """The same structure three times: the second and third backward run fused, over the
    residuals; every gradient equals PyTorch's."""
    tm, jm = pair("LSTM", 3, 4, num_layers=2)
    for _ in range(3):
        x = _rng.uniform(-1, 1, (5, 2, 3)).astype(np.float32)
        tm.zero_grad()
        jm.zero_grad()
        want, _ = step(torch, tm, x)
        got, _ = step(torchjax, jm, x)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


def test_create_graph_differentiates_the_forward_again():
    """A second derivative through the LSTM (a gradient penalty): the residuals are
    constants to it, so create_graph's backward re-runs the forward from the inputs."""
    x = _rng.uniform(-1, 1, (4, 2, 3))
    res = []
    for lib, (m) in zip((torch, torchjax), pair("LSTM", 3, 4)):
        m = m.double()
        xi = lib.tensor(x, requires_grad=True)
        out, _ = m(xi)
        (g,) = lib.autograd.grad(out.tanh().sum(), xi, create_graph=True)
        g.square().sum().backward()
        res.append([xi.grad.numpy()] + [p.grad.numpy() for p in m.parameters()])
    for g, w in zip(res[1], res[0]):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11)


def test_gradcheck_float64():
    lstm = torchjax.nn.LSTM(2, 3).double()
    x = torchjax.randn(3, 2, 2, dtype=torchjax.float64, requires_grad=True)
    assert torchjax.autograd.gradcheck(lambda v: lstm(v)[0], (x,))


def test_saved_tensor_hooks_keep_the_inputs_path():
    """Pack hooks see the tensors PyTorch saves: under them the node keeps its inputs only."""
    tm, jm = pair("GRU", 3, 4)
    x = _rng.uniform(-1, 1, (5, 2, 3)).astype(np.float32)
    want, _ = step(torch, tm, x)
    with torchjax.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        xi = torchjax.tensor(x, requires_grad=True)
        out, h = jm(xi)
        assert not isinstance(out.grad_fn._spec, _residuals.ResidualSpec)
        (out.square().sum() + 2 * h.sum()).backward()
    for g, w in zip([xi.grad.numpy()] + [p.grad.numpy() for p in jm.parameters()], want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


SCRIPT = r"""
import json
import numpy as np
import torchjax as torch

torch.manual_seed(0)
m = torch.nn.LSTM(3, 4, num_layers=2)
x = torch.tensor(np.linspace(-1, 1, 30, dtype=np.float32).reshape(5, 2, 3))
grads = []
for _ in range(3):  # node by node, then fused
    m.zero_grad()
    out, (h, c) = m(x)
    (out.square().sum() + h.sum()).backward()
    grads.append([p.grad.numpy().tolist() for p in m.parameters()])
s = torch.compile_stats()
print(json.dumps({"grads": grads, "traced": s.traced, "compiled": s.compiled}))
"""


def test_warm_process_traces_nothing(tmp_path):
    """A second process on the program cache the first left loads both programs: the
    residual forward and the backward over its residuals trace nothing, and give the same
    bits."""
    env = _env(TORCHJAX_CACHE_DIR=str(tmp_path))
    runs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                           text=True, timeout=900)
        assert p.returncode == 0, p.stderr[-3000:]
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert cold["traced"] > 0
    assert warm["grads"] == cold["grads"]
    assert warm["traced"] == 0 and warm["compiled"] == 0, warm


def _spd(n, seed):
    a = np.random.default_rng(seed).standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


LINALG = [  # (name, function of (lib, x), input)
    ("svd", lambda lib, x: lib.linalg.svd(x, full_matrices=False)[1].sum()
     + lib.linalg.svd(x, full_matrices=False)[0].abs().sum(),
     np.random.default_rng(1).standard_normal((5, 4))),
    ("eigh", lambda lib, x: lib.linalg.eigh(x)[0].square().sum(), _spd(4, 2)),
    ("cholesky", lambda lib, x: lib.linalg.cholesky(x).sum(), _spd(4, 3)),
    ("inv", lambda lib, x: lib.linalg.inv(x).square().sum(), _spd(4, 4)),
    ("slogdet", lambda lib, x: lib.linalg.slogdet(x)[1], _spd(4, 5)),
    ("qr", lambda lib, x: lib.linalg.qr(x)[1].abs().sum(),
     np.random.default_rng(6).standard_normal((5, 3))),
    ("solve", lambda lib, x: lib.linalg.solve(x, x[:, :2] + 1).sum(), _spd(4, 7)),
    ("det", lambda lib, x: lib.det(x), _spd(3, 8)),
]


@pytest.mark.parametrize("name,f,x", LINALG, ids=[c[0] for c in LINALG])
def test_linalg_backward_from_residuals(name, f, x):
    """A decomposition's backward reads its residuals (no second decomposition): gradients
    and second derivatives (create_graph) as PyTorch's, float64."""
    res = []
    for lib in (torch, torchjax):
        xi = lib.tensor(x, requires_grad=True)
        y = f(lib, xi)
        if lib is torchjax:
            kinds = set()
            stack = [y.grad_fn]
            while stack:
                n = stack.pop()
                if n is not None:
                    kinds.add(type(getattr(n, "_spec", None)).__name__)
                    stack.extend(e[0] for e in n.next_functions if e[0] is not None)
            assert "ResidualSpec" in kinds, kinds
        (g,) = lib.autograd.grad(y, xi, create_graph=True)
        g.square().sum().backward()
        res.append((g.detach().numpy(), xi.grad.numpy()))
    for a, b in zip(res[1], res[0]):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)
