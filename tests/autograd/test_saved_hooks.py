"""saved_tensors_hooks, save_on_cpu and disable_saved_tensors_hooks against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

LIBS = pytest.mark.parametrize("lib", [torch, torchjax], ids=["torch", "torchjax"])


def _run(lib, hooks_for):
    log = []
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = lib.tensor([0.5, -1.0, 2.0], requires_grad=True) * 2
    with hooks_for(log):
        y = a * b            # saves both inputs
        z = y.exp()          # saves its result
        w = a + b            # saves nothing
    (z.sum() + w.sum()).backward()
    return log, a.grad


def _logging(lib):
    def hooks_for(log):
        def pack(t):
            log.append(("pack", tuple(t.shape), t.requires_grad))
            return ("packed", t)

        def unpack(p):
            log.append(("unpack",))
            return p[1]
        return lib.autograd.graph.saved_tensors_hooks(pack, unpack)
    return hooks_for


@LIBS
def test_pack_and_unpack_are_called_for_saved_tensors(lib):
    log, grad = _run(lib, _logging(lib))
    log_th, grad_th = _run(torch, _logging(torch))
    assert sorted(log) == sorted(log_th)
    assert log.index(("unpack",)) == 3  # all packing in the forward, unpacking in backward
    np.testing.assert_allclose(np.asarray(grad.tolist()), grad_th.numpy(), rtol=1e-6)


@LIBS
def test_unpack_hook_value_is_what_backward_uses(lib):
    def pack(t):
        return t.detach() * 0 + 10.0  # backward sees 10 instead of the saved value

    def unpack(t):
        return t
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    c = lib.tensor([3.0, 4.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * c).sum()
    y.backward()
    assert x.grad.tolist() == [10.0, 10.0] and c.grad.tolist() == [10.0, 10.0]


@LIBS
def test_save_on_cpu_gives_the_same_gradients(lib):
    gen = np.random.default_rng(0)
    w = lib.tensor(gen.standard_normal((4, 3)), requires_grad=True)
    x = lib.tensor(gen.standard_normal((2, 4)))
    with lib.autograd.graph.save_on_cpu():
        loss = lib.tanh(x @ w).pow(2).sum()
    loss.backward()
    w2 = lib.tensor(w.detach().numpy() if lib is torch else np.asarray(w.detach()._data),
                    requires_grad=True)
    lib.tanh(x @ w2).pow(2).sum().backward()
    np.testing.assert_allclose(np.asarray(w.grad.tolist()), np.asarray(w2.grad.tolist()),
                               rtol=1e-6)


@LIBS
def test_disable_saved_tensors_hooks(lib):
    with lib.autograd.graph.disable_saved_tensors_hooks("hooks are off here"):
        with pytest.raises(RuntimeError, match="hooks are off here"):
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        pass


def test_packed_graph_is_not_fused_and_runs_again():
    # the same structure three times: the engine fuses it unless hooks packed its values
    calls = []
    for _ in range(3):
        x = torchjax.tensor([1.0, 2.0], requires_grad=True)
        with torchjax.autograd.graph.saved_tensors_hooks(lambda t: t,
                                                        lambda t: calls.append(1) or t):
            y = (x * x).sin().sum()
        y.backward()
        np.testing.assert_allclose(np.asarray(x.grad.tolist()),
                                   np.cos([1.0, 4.0]) * 2 * np.array([1.0, 2.0]), rtol=1e-6)
    assert len(calls) == 3 * 3  # mul saves two, sin one, every time


def test_saved_hooks_with_create_graph():
    x = torchjax.tensor([0.5, 1.5], requires_grad=True)
    with torchjax.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = (x.sin() * x).sum()
    (g,) = torchjax.autograd.grad(y, x, create_graph=True)
    (h,) = torchjax.autograd.grad(g.sum(), x)
    xs = np.array([0.5, 1.5])
    np.testing.assert_allclose(np.asarray(h.tolist()), 2 * np.cos(xs) - xs * np.sin(xs),
                               rtol=1e-6)
