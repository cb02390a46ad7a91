"""functional_call and stack_module_state against torch.func, and the per-sample-gradient
recipe (vmap(grad(loss)) over functional_call) of PyTorch's tutorial."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

from . import arr, assert_same, check, check_raises

X = arr(5, 4, seed=8)
LABELS = np.array([0, 2, 1, 2, 0])


def _model(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.ReLU(), lib.nn.Linear(6, 3))


def _same_weights(tm, jm):
    jm.load_state_dict({k: torchjax.tensor(v.detach().numpy())
                        for k, v in tm.state_dict().items()})


def _per_sample_grads(lib, model):
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, y):
        out = lib.func.functional_call(model, p, (x.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, y.unsqueeze(0))

    return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
        params, lib.tensor(X), lib.tensor(LABELS))


def test_per_sample_gradients_match_pytorch():
    torch.manual_seed(0)
    tm, jm = _model(torch), _model(torchjax)
    _same_weights(tm, jm)
    expected = _per_sample_grads(torch, tm)
    got = _per_sample_grads(torchjax, jm)
    assert_same(expected, got, rtol=1e-4, atol=1e-6)
    # and they are the gradients of each example's own loss
    w = jm[0].weight
    loss = torchjax.nn.functional.cross_entropy(jm(torchjax.tensor(X[1:2])),
                                                torchjax.tensor(LABELS[1:2]))
    loss.backward()
    np.testing.assert_allclose(got["0.weight"][1].numpy(), w.grad.numpy(), rtol=1e-4,
                               atol=1e-6)


def test_functional_call_swaps_and_restores():
    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 2)
        before = m.weight
        new = {"weight": lib.ones(2, 3), "bias": lib.zeros(2)}
        out = lib.func.functional_call(m, new, lib.ones(1, 3))
        return out, m.weight is before, (m.weight == before).all().item()
    check(run)

    def restored_on_error(lib):
        m = lib.nn.Linear(3, 2)
        before = m.weight
        with pytest.raises(RuntimeError):
            lib.func.functional_call(m, {"weight": lib.ones(5, 5)}, lib.ones(1, 3))
        return m.weight is before and isinstance(m.weight, lib.nn.Parameter)
    assert check(restored_on_error) is True


class _Tied:
    """A module whose two linears share one weight (as tied embeddings do)."""

    @staticmethod
    def make(lib):
        class Tied(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = lib.nn.Linear(3, 3, bias=False)
                self.b = lib.nn.Linear(3, 3, bias=False)
                self.b.weight = self.a.weight

            def forward(self, x):
                return self.b(self.a(x))
        return Tied()


def test_tied_weights():
    x = arr(2, 3, seed=9)

    def run(lib, tie):
        m = _Tied.make(lib)
        w = lib.tensor(np.eye(3, dtype=np.float32) * 2)
        return lib.func.functional_call(m, {"a.weight": w}, (lib.tensor(x),),
                                        tie_weights=tie)

    check(lambda lib: run(lib, True))  # b.weight follows a.weight: 4 x
    got = run(torchjax, True)
    np.testing.assert_allclose(got.numpy(), 4 * x, rtol=1e-6)

    def untied(lib):  # b keeps the module's own weight
        m = _Tied.make(lib)
        with lib.no_grad():
            m.a.weight.copy_(lib.tensor(np.eye(3, dtype=np.float32)))
        w = lib.tensor(np.eye(3, dtype=np.float32) * 2)
        return lib.func.functional_call(m, {"a.weight": w}, (lib.tensor(x),),
                                        tie_weights=False)
    check(untied)
    check_raises(lambda lib: lib.func.functional_call(
        _Tied.make(lib), {"a.weight": lib.ones(3, 3), "b.weight": lib.zeros(3, 3)},
        (lib.ones(1, 3),)))


def test_buffers_batchnorm_eval_and_grad_through_params():
    def run(lib):
        m = lib.nn.BatchNorm1d(3).eval()
        state = {"weight": lib.tensor([1.0, 2.0, 3.0]), "bias": lib.tensor([0.5, 0.0, -0.5]),
                 "running_mean": lib.tensor([0.1, 0.2, 0.3]),
                 "running_var": lib.tensor([2.0, 1.0, 0.5])}
        x = lib.tensor(arr(4, 3, seed=10))
        out = lib.func.functional_call(m, state, (x,))

        def loss(params, buffers):
            return lib.func.functional_call(m, (params, buffers), (x,)).pow(2).sum()
        params = {k: state[k] for k in ("weight", "bias")}
        buffers = {k: v for k, v in state.items() if k.startswith("running")}
        buffers["num_batches_tracked"] = lib.tensor(0)
        g = lib.func.grad(loss)(params, buffers)
        return out, g, m.running_mean
    check(run)


def test_multiple_dicts_strict_and_errors():
    def run(lib):
        m = lib.nn.Linear(2, 2)
        return lib.func.functional_call(m, ({"weight": lib.eye(2)}, {"bias": lib.ones(2)}),
                                        lib.ones(1, 2), strict=True)
    check(run)
    check_raises(lambda lib: lib.func.functional_call(
        lib.nn.Linear(2, 2), {"weight": lib.eye(2)}, lib.ones(1, 2), strict=True))
    check_raises(lambda lib: lib.func.functional_call(
        lib.nn.Linear(2, 2), {"weight": lib.eye(2), "bias": lib.ones(2), "extra": lib.ones(1)},
        lib.ones(1, 2), strict=True))
    check_raises(lambda lib: lib.func.functional_call(
        lib.nn.Linear(2, 2), ({"bias": lib.ones(2)}, {"bias": lib.ones(2)}), lib.ones(1, 2)))
    check_raises(lambda lib: lib.func.functional_call(lib.nn.Linear(2, 2), 3, lib.ones(1, 2)))


def test_inplace_buffer_update_is_reported_back():
    def run(lib):
        class Counter(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("n", lib.zeros(()))

            def forward(self, x):
                self.n = self.n + 1
                return x * self.n
        m = Counter()
        state = {"n": lib.tensor(5.0)}
        out = lib.func.functional_call(m, state, lib.ones(2))
        return out, state["n"], m.n
    check(run)


def test_stack_module_state_ensemble():
    def run(lib):
        lib.manual_seed(0)
        models = [lib.nn.Linear(3, 2) for _ in range(4)]
        params, buffers = lib.func.stack_module_state(models)
        x = lib.tensor(arr(5, 3, seed=11))

        def one(p, b, x):
            return lib.func.functional_call(models[0], (p, b), (x,))
        out = lib.func.vmap(one, in_dims=(0, 0, None))(params, buffers, x)
        loop = lib.stack([m(x) for m in models])
        return (tuple(out.shape), bool(lib.allclose(out, loop.detach(), atol=1e-6)),
                params["weight"].requires_grad, params["weight"].is_leaf, list(params))
    check(run)
    check_raises(lambda lib: lib.func.stack_module_state([]))
    check_raises(lambda lib: lib.func.stack_module_state([lib.nn.Linear(1, 1),
                                                          lib.nn.Linear(1, 1).eval()]))
