"""Ops linearized as they are traced (torchjax/_linearize.py): a compiled step that calls
backward() traces each op's forward once, and its results stay those of eager mode, on the
paths that linearize and on those that keep the eager backward (complex values, saved-tensor
hooks, create_graph, a forward-only function)."""

from __future__ import annotations

import numpy as np
import pytest

import torchjax as torch
from torchjax import nn
from torchjax.compiler._trace import calls_backward


def _count(program, name):
    return sum(e.primitive.name == name for e in program.traced.jaxpr.jaxpr.eqns)


def _run_both(make, steps=3):
    """(eager results, compiled results, compiled function) of `steps` calls of the step
    make() returns, each from the same seed."""
    out = []
    for compiled in (False, True):
        torch.manual_seed(0)
        step, read = make()
        f = torch.compile(step) if compiled else step
        res = [f(torch.arange(6.0).reshape(2, 3) / 7 + i) for i in range(steps)]
        out.append(([r.detach().numpy() for r in res], read()))
    (a, sa), (b, sb) = out
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=2e-6, atol=1e-6)
    for x, y in zip(sa, sb):
        np.testing.assert_allclose(x, y, rtol=2e-6, atol=1e-6)
    return f


def _mlp():
    model = nn.Sequential(nn.Linear(3, 5), nn.Linear(5, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.05)

    def step(x):
        opt.zero_grad()
        loss = torch.sin(model(x)).pow(2).mean()
        loss.backward()
        opt.step()
        return loss

    return step, lambda: [p.detach().numpy() for p in model.parameters()] + [
        p.grad.numpy() for p in model.parameters()]


def test_training_step_traces_each_forward_once():
    f = _run_both(_mlp)
    (program,) = f.programs
    # eagerly, sin's backward re-runs sin under jax.vjp: traced that way the step held two
    assert _count(program, "sin") == 1


def test_calls_backward_reads_the_code():
    def step(x):
        x.sum().backward()

    def nested(x):
        def inner():
            return torch.autograd.grad(x.sum(), x)
        return inner()

    def forward_only(x):
        return x * 2

    assert calls_backward(step) and calls_backward(nested)
    assert not calls_backward(forward_only)
    assert not calls_backward(nn.Linear(2, 2))


def test_complex_ops_keep_the_eager_backward():
    w = torch.tensor([1.0 + 2.0j, -0.5 + 0.25j], requires_grad=True)

    def step(x):
        w.grad = None
        z = w * x[0, :2].to(torch.complex64)
        z.abs().sum().backward()
        return w.grad.clone()

    eager = step(torch.ones(2, 3))
    compiled = torch.compile(step)(torch.ones(2, 3))
    np.testing.assert_allclose(compiled.numpy(), eager.numpy(), rtol=1e-6)


def test_saved_tensor_hooks_still_see_their_values():
    def make():
        lin = nn.Linear(3, 2)
        seen = []

        def step(x):
            lin.zero_grad()
            # the unpack hook's value is what the backward uses (doubled here)
            with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 2):
                loss = torch.tanh(lin(x)).sum()
            loss.backward()
            seen.append(1)
            return loss

        return step, lambda: [lin.weight.grad.numpy(), lin.bias.grad.numpy()]

    _run_both(make, steps=2)


def test_create_graph_inside_a_compiled_step():
    def make():
        lin = nn.Linear(3, 1)
        opt = torch.optim.SGD(lin.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            x = x.clone().requires_grad_()
            y = torch.sin(lin(x)).sum()
            (gx,) = torch.autograd.grad(y, x, create_graph=True)
            loss = y + gx.pow(2).sum()  # a gradient penalty
            loss.backward()
            opt.step()
            return loss

        return step, lambda: [p.detach().numpy() for p in lin.parameters()]

    _run_both(make)


@pytest.mark.parametrize("retain", [False, True])
def test_second_backward_in_a_step(retain):
    def make():
        w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)

        def step(x):
            w.grad = None
            y = (torch.exp(x * w)).sum()
            if retain:
                y.backward(retain_graph=True)
                y.backward()
            else:
                y.backward()
            return w.grad.clone()

        return step, lambda: [w.detach().numpy()]

    _run_both(make, steps=2)


def test_second_backward_without_retain_graph_raises():
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)

    @torch.compile(fullgraph=True)
    def step(x):
        y = torch.exp(x * w).sum()
        y.backward()
        y.backward()
        return y

    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        step(torch.ones(3))
