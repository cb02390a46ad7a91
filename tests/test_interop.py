"""torchjax.interop.from_jax: a pure JAX function as a torchjax op, against PyTorch."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import torchjax
from torchjax.interop import from_jax


@from_jax
def swish(x, beta):
    return x * jax.nn.sigmoid(beta * x)


def _torch_swish(x, beta):
    return x * torch.sigmoid(beta * x)


def test_values_gradients_and_node_name_match_the_torch_formula():
    data = np.linspace(-2, 2, 7)
    x = torchjax.tensor(data, requires_grad=True)
    y = swish(x, 1.5)
    assert type(y.grad_fn).__name__ == "swishBackward" and y.requires_grad
    y.sum().backward()
    xt = torch.tensor(data, requires_grad=True)
    _torch_swish(xt, 1.5).sum().backward()
    np.testing.assert_allclose(np.asarray(y.detach()._data), _torch_swish(xt, 1.5).detach(),
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(x.grad._data), xt.grad.numpy(), rtol=1e-12)


def test_higher_order_gradients_are_jax_vjps():
    x = torchjax.tensor([0.3, -1.2], dtype=torchjax.float64, requires_grad=True)
    (g,) = torchjax.autograd.grad(swish(x, 2.0).sum(), x, create_graph=True)
    (h,) = torchjax.autograd.grad(g.sum(), x)
    xt = torch.tensor([0.3, -1.2], dtype=torch.float64, requires_grad=True)
    (gt,) = torch.autograd.grad(_torch_swish(xt, 2.0).sum(), xt, create_graph=True)
    (ht,) = torch.autograd.grad(gt.sum(), xt)
    np.testing.assert_allclose(np.asarray(h._data), ht.numpy(), rtol=1e-10)


def test_pytrees_in_and_out_and_non_differentiable_arguments():
    @from_jax
    def affine(params, x, *, scale):
        out = (x @ params["w"] + params["b"]) * scale
        return {"out": out, "norm": jnp.linalg.norm(out)}

    gen = np.random.default_rng(0)
    w, b, xs = gen.standard_normal((3, 2)), gen.standard_normal(2), gen.standard_normal((4, 3))
    params = {"w": torchjax.tensor(w, requires_grad=True), "b": torchjax.tensor(b)}
    res = affine(params, torchjax.tensor(xs), scale=2.0)
    assert set(res) == {"out", "norm"} and not params["b"].requires_grad
    res["norm"].backward()
    wt = torch.tensor(w, requires_grad=True)
    out = (torch.tensor(xs) @ wt + torch.tensor(b)) * 2.0
    torch.linalg.norm(out).backward()
    np.testing.assert_allclose(np.asarray(params["w"].grad._data), wt.grad.numpy(), rtol=1e-10)
    assert params["b"].grad is None


def test_training_through_a_jax_function():
    """A model whose activation is a jax.numpy function: the loss falls as in PyTorch."""
    def run(lib, act):
        lib.manual_seed(0)
        gen = np.random.default_rng(1)
        xs = lib.tensor(gen.standard_normal((32, 4)), dtype=lib.float32)
        ys = lib.tensor((gen.standard_normal((32, 1)) > 0).astype(np.float32))
        l1, l2 = lib.nn.Linear(4, 8), lib.nn.Linear(8, 1)
        with lib.no_grad():
            for p in list(l1.parameters()) + list(l2.parameters()):
                p.copy_(lib.tensor(gen.uniform(-0.5, 0.5, tuple(p.shape)), dtype=lib.float32))
        opt = lib.optim.SGD(list(l1.parameters()) + list(l2.parameters()), lr=0.5)
        losses = []
        for _ in range(20):
            opt.zero_grad()
            loss = lib.nn.functional.binary_cross_entropy_with_logits(l2(act(l1(xs), 1.0)), ys)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses
    ours, theirs = run(torchjax, swish), run(torch, _torch_swish)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)
    assert ours[-1] < ours[0]


def test_unhashable_static_argument_is_a_clear_error():
    with pytest.raises(TypeError, match="must be hashable"):
        swish(torchjax.ones(2), np.array([1.0]))  # arrays must come as Tensors


def test_the_documented_example_runs(capsys):
    import pathlib
    import re
    doc = pathlib.Path(__file__).parents[1] / "docs" / "jax_interop.md"
    code = re.findall(r"```python\n(.*?)```", doc.read_text(), re.S)[0]
    exec(compile(code, str(doc), "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("<swishBackward object at") and out[1] == "True"
