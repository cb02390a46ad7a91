"""create_graph=True: gradients of gradients, against PyTorch and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax


def _np(t):
    return np.asarray(t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach()._data)


def _both(fn):
    a, b = fn(torch), fn(torchjax)
    a = a if isinstance(a, (tuple, list)) else (a,)
    b = b if isinstance(b, (tuple, list)) else (b,)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_allclose(_np(y), _np(x), rtol=1e-5, atol=1e-6)


def test_third_derivative_of_sin():
    def f(lib):
        x = lib.tensor([0.3, 1.2, -0.7], requires_grad=True)
        (g1,) = lib.autograd.grad(lib.sin(x).sum(), x, create_graph=True)
        (g2,) = lib.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = lib.autograd.grad(g2.sum(), x)
        assert g1.requires_grad and g2.requires_grad and not g3.requires_grad
        return g1, g2, g3
    _both(f)


def test_fourth_derivative_through_saved_results():
    # exp and tanh save their result: higher orders flow back through the node itself
    def f(lib):
        x = lib.tensor([0.3, -1.1], dtype=lib.float64, requires_grad=True)
        y = (lib.exp(x) * lib.tanh(x) + x ** 3 + lib.sigmoid(x)).sum()
        out = []
        g = y
        for _ in range(4):
            (g,) = lib.autograd.grad(g.sum(), x, create_graph=True)
            out.append(g)
        return out
    _both(f)


def test_hessian_vector_product():
    def f(lib):
        gen = np.random.default_rng(0)
        A = lib.tensor(gen.standard_normal((4, 4)))
        x = lib.tensor(gen.standard_normal(4), requires_grad=True)
        v = lib.tensor(gen.standard_normal(4))
        loss = (lib.tanh(A @ x) ** 2).sum() + (x * x).sum()
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        (hv,) = lib.autograd.grad(g, x, grad_outputs=v)
        return g, hv
    _both(f)


def test_gradient_penalty_wgan_gp():
    """The WGAN-GP penalty: (||d critic(x) / dx|| - 1)^2, trained through the gradient."""
    gen = np.random.default_rng(1)
    w1, b1 = gen.standard_normal((8, 3)) * 0.5, gen.standard_normal(8) * 0.1
    w2, b2 = gen.standard_normal((1, 8)) * 0.5, gen.standard_normal(1) * 0.1
    real, fake = gen.standard_normal((5, 3)), gen.standard_normal((5, 3))
    eps = gen.uniform(size=(5, 1))

    def f(lib):
        critic = lib.nn.Sequential(lib.nn.Linear(3, 8), lib.nn.LeakyReLU(0.2),
                                   lib.nn.Linear(8, 1))
        with lib.no_grad():
            for p, v in zip(critic.parameters(), (w1, b1, w2, b2)):
                p.copy_(lib.tensor(v, dtype=lib.float32))
        x = lib.tensor(eps * real + (1 - eps) * fake, dtype=lib.float32, requires_grad=True)
        out = critic(x)
        (g,) = lib.autograd.grad(out, x, grad_outputs=lib.ones_like(out), create_graph=True)
        penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()
        loss = out.mean() + 10 * penalty
        loss.backward()
        return [penalty] + [p.grad for p in critic.parameters()]
    _both(f)


def test_backward_create_graph_accumulates_a_differentiable_grad():
    def f(lib):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        ((w ** 3).sum()).backward(create_graph=True)
        first = w.grad.detach().clone()
        assert w.grad.requires_grad
        (w.grad.sum()).backward()  # d/dw of 3w^2 accumulates into the same .grad
        return first, w.grad
    with pytest.warns(UserWarning, match="reference cycle"):
        a = f(torch)
    with pytest.warns(UserWarning, match="reference cycle"):
        b = f(torchjax)
    for x, y in zip(a, b):
        np.testing.assert_allclose(_np(y), _np(x), rtol=1e-6)


def test_grad_of_grad_with_respect_to_grad_outputs():
    def f(lib):
        x = lib.tensor([0.5, -0.25, 2.0], requires_grad=True)
        v = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (g,) = lib.autograd.grad(lib.sin(x) * x, x, grad_outputs=v, create_graph=True)
        return lib.autograd.grad(g.sum(), (x, v))
    _both(f)


def test_a_repeated_double_backward_as_a_gradient_penalty():
    """A training loop with a gradient penalty (WGAN-GP's): its second step repeats the
    first, so its forward is deferred (_deferred_grad), and the create_graph backward must
    run the pending sequence before it reads saved values (it met a pending reference)."""
    gen = np.random.default_rng(5)
    w0 = gen.standard_normal((4, 3)).astype(np.float32)
    xs = gen.standard_normal((6, 8, 4)).astype(np.float32)

    def run(lib):
        w = lib.tensor(w0, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.05)
        losses = []
        for x_np in xs:
            x = lib.tensor(x_np, requires_grad=True)
            y = (x @ w).tanh().sum()
            (g,) = lib.autograd.grad(y, x, create_graph=True)
            loss = y + ((g.norm(dim=1) - 1) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, _np(w)

    (want, w_want), (got, w_got) = run(torch), run(torchjax)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w_got, w_want, rtol=1e-5, atol=1e-6)


_REPEATED = """
import json, torchjax as lib
out = []
for _ in range(4):
    x = lib.tensor([0.5, -0.25, 2.0], requires_grad=True)
    v = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = lib.autograd.grad(lib.sin(x) * x, x, grad_outputs=v, create_graph=True)
    out.append([t.tolist() for t in lib.autograd.grad(g.sum(), (x, v))])
print(json.dumps(out))
"""


def test_a_double_backward_repeated_in_a_script(tmp_path):
    """The same create_graph gradient again and again, in a script (the suite's settings
    compile deferred programs on the calling thread; a script's, in the background): from
    its second call the forward's ops are deferred (a repeated structure), and grad() must
    run them before it reads what they saved (it met a pending reference)."""
    import json
    import os
    import subprocess
    import sys
    env = dict(os.environ, TORCHJAX_CACHE_DIR=str(tmp_path))
    got = subprocess.run([sys.executable, "-c", _REPEATED], env=env, check=True,
                         capture_output=True, text=True, timeout=300).stdout
    x = torch.tensor([0.5, -0.25, 2.0], requires_grad=True)
    v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = torch.autograd.grad(torch.sin(x) * x, x, grad_outputs=v, create_graph=True)
    want = [t.tolist() for t in torch.autograd.grad(g.sum(), (x, v))]
    for step in json.loads(got.strip().splitlines()[-1]):
        np.testing.assert_allclose(step, want, rtol=1e-5, atol=1e-6)


def test_second_derivative_through_views_and_inplace():
    def f(lib):
        x = lib.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
        y = x.clone()
        y[0] = x[0] * x[1].sin()      # CopySlices
        z = (y.t()[1] ** 2).sum() + (y.exp()).sum()
        (g,) = lib.autograd.grad(z, x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        return g, h
    _both(f)


def test_second_derivative_of_composite_rows():
    gen = np.random.default_rng(2)
    xs = gen.standard_normal((3, 5))
    target = np.array([1, 0, 4])

    def f(lib):
        x = lib.tensor(xs, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(x, lib.tensor(target)) + \
            lib.nn.functional.softplus(x).mean() + lib.nn.functional.layer_norm(x, (5,)).pow(2).sum()
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        (h,) = lib.autograd.grad(g.pow(2).sum(), x)
        return g, h
    _both(f)


def test_second_derivative_matches_finite_differences_float64():
    def first(x):
        y = (torchjax.sin(x) * torchjax.exp(x) + x.pow(3) * torchjax.log1p(x * x)).sum()
        (g,) = torchjax.autograd.grad(y, x, create_graph=True)
        return g

    base = np.array([0.3, -0.8, 1.5])
    x = torchjax.tensor(base, requires_grad=True)
    (h,) = torchjax.autograd.grad(first(x).sum(), x)
    eps = 1e-6
    num = np.zeros(3)
    for k in range(3):
        d = np.zeros(3)
        d[k] = eps
        hi = first(torchjax.tensor(base + d, requires_grad=True)).sum().item()
        lo = first(torchjax.tensor(base - d, requires_grad=True)).sum().item()
        num[k] = (hi - lo) / (2 * eps)
    np.testing.assert_allclose(_np(h), num, rtol=1e-6, atol=1e-8)


def test_retain_graph_defaults_to_create_graph():
    x = torchjax.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    torchjax.autograd.grad(y, x, create_graph=True)
    torchjax.autograd.grad(y, x)  # still there: create_graph retained it
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        torchjax.autograd.grad(y, x)
