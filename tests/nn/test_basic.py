"""The first nn and optim pieces against PyTorch with the same weights and inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax


def copy_weights(src: torch.nn.Module, dst: torchjax.nn.Module):
    sd = {k: torchjax.tensor(v.detach().numpy()) for k, v in src.state_dict().items()}
    dst.load_state_dict(sd)


def mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))


def test_linear_forward_backward_matches():
    tm, jm = mlp(torch), mlp(torchjax)
    copy_weights(tm, jm)
    x = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    yt = tm(torch.tensor(x))
    yj = jm(torchjax.tensor(x))
    np.testing.assert_allclose(yj.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert yj.grad_fn.name() == yt.grad_fn.name() == "AddmmBackward0"
    (yt ** 2).sum().backward()
    (yj ** 2).sum().backward()
    for (nt, pt), (nj, pj) in zip(tm.named_parameters(), jm.named_parameters()):
        assert nt == nj
        np.testing.assert_allclose(pj.grad.numpy(), pt.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_module_structure_matches():
    tm, jm = mlp(torch), mlp(torchjax)
    assert repr(tm) == repr(jm)
    assert list(tm.state_dict()) == list(jm.state_dict())
    assert [n for n, _ in tm.named_modules()] == [n for n, _ in jm.named_modules()]
    jm.eval()
    assert not any(m.training for m in jm.modules())
    with pytest.raises(AttributeError, match="'Sequential' object has no attribute 'foo'"):
        jm.foo


def test_parameters_before_children_and_shared_once():
    class Net(torchjax.nn.Module):
        def __init__(self):
            super().__init__()
            self.child = torchjax.nn.Linear(2, 2)
            self.scale = torchjax.nn.Parameter(torchjax.ones(1))
            self.tied = self.child

    names = [n for n, _ in Net().named_parameters()]
    assert names == ["scale", "child.weight", "child.bias"]


def test_parameter_repr():
    p = torchjax.nn.Parameter(torchjax.tensor([1.0, 2.0]))
    q = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    assert repr(p) == repr(q)


def test_load_state_dict_errors_name_the_keys():
    m = torchjax.nn.Linear(2, 3)
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        m.load_state_dict({"weight": torchjax.zeros(3, 2)})
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        m.load_state_dict({"weight": torchjax.zeros(2, 2), "bias": torchjax.zeros(3)})


def test_linear_shape_error_message():
    m = torchjax.nn.Linear(4, 8)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(10x3 and 4x8\)"):
        m(torchjax.zeros(10, 3))


@pytest.mark.parametrize("kw", [
    {},
    {"reduction": "sum"},
    {"reduction": "none"},
    {"ignore_index": 1},
    {"label_smoothing": 0.2},
    {"weight": np.array([0.5, 2.0, 1.0], dtype=np.float32)},
    {"weight": np.array([0.5, 2.0, 1.0], dtype=np.float32), "label_smoothing": 0.1},
])
def test_cross_entropy_matches(kw):
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(6, 3)).astype(np.float32)
    target = np.array([0, 1, 2, 1, 1, 0])
    res = []
    for lib in (torch, torchjax):
        k = {n: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for n, v in kw.items()}
        x = lib.tensor(logits, requires_grad=True)
        loss = lib.nn.CrossEntropyLoss(**k)(x, lib.tensor(target))
        loss.sum().backward()
        res.append((loss.detach().numpy(), x.grad.numpy(), loss.grad_fn.name()))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-5, atol=1e-6)
    if "label_smoothing" not in kw:  # PyTorch composes smoothing from several nodes
        assert res[0][2] == res[1][2]


def test_cross_entropy_with_probabilities_and_spatial_dims():
    rng = np.random.default_rng(4)
    logits = rng.normal(size=(2, 3, 4)).astype(np.float32)
    probs = rng.dirichlet(np.ones(3), size=(2, 4)).transpose(0, 2, 1).astype(np.float32)
    idx = rng.integers(0, 3, size=(2, 4))
    for target in (probs, idx):
        out = []
        for lib in (torch, torchjax):
            x = lib.tensor(logits, requires_grad=True)
            loss = lib.nn.functional.cross_entropy(x, lib.tensor(target))
            loss.backward()
            out.append((loss.item(), x.grad.numpy()))
        assert out[0][0] == pytest.approx(out[1][0], rel=1e-5)
        np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-5, atol=1e-6)


def test_mse_and_l1_match():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(4, 3)).astype(np.float32), rng.normal(size=(4, 3)).astype(np.float32)
    for name in ("MSELoss", "L1Loss"):
        for red in ("mean", "sum", "none"):
            out = []
            for lib in (torch, torchjax):
                x = lib.tensor(a, requires_grad=True)
                loss = getattr(lib.nn, name)(reduction=red)(x, lib.tensor(b))
                loss.sum().backward()
                out.append((loss.detach().numpy(), x.grad.numpy()))
            np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kw", [
    dict(lr=0.1),
    dict(lr=0.1, momentum=0.9),
    dict(lr=0.1, momentum=0.9, nesterov=True),
    dict(lr=0.05, momentum=0.5, dampening=0.3, weight_decay=0.01),
    dict(lr=0.1, weight_decay=0.1, maximize=True),
])
def test_sgd_trajectory_matches_over_10_steps(kw):
    tm, jm = mlp(torch), mlp(torchjax)
    copy_weights(tm, jm)
    rng = np.random.default_rng(6)
    x = rng.normal(size=(8, 4)).astype(np.float32)
    y = rng.normal(size=(8, 3)).astype(np.float32)
    topt = torch.optim.SGD(tm.parameters(), **kw)
    jopt = torchjax.optim.SGD(jm.parameters(), **kw)
    for _ in range(10):
        for lib, m, opt in ((torch, tm, topt), (torchjax, jm, jopt)):
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(m(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            opt.step()
    for pt, pj in zip(tm.parameters(), jm.parameters()):
        np.testing.assert_allclose(pj.detach().numpy(), pt.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)


def test_zero_grad_sets_none():
    m = torchjax.nn.Linear(2, 1)
    m(torchjax.ones(1, 2)).sum().backward()
    assert m.weight.grad is not None
    m.zero_grad()
    assert m.weight.grad is None
