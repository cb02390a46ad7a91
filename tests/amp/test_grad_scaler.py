"""GradScaler against torch.amp.GradScaler("cpu"), step by step: scale, unscale_, skipped
steps on inf/NaN, backoff and growth, state_dict; and a small autocast training loop."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import torchjax

_W = np.array([[0.5, -0.25], [1.0, 2.0]], dtype=np.float32)
_BATCHES = [[1.0, 2.0], [3.0, float("inf")], [0.5, 0.5], [1.0, -1.0], [float("nan"), 1.0],
            [2.0, 1.0], [0.25, -0.5]]


def _steps(lib, batches=_BATCHES):
    model = lib.nn.Linear(2, 2)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(_W))
        model.bias.fill_(0.1)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
    seen = []
    for x in batches:
        opt.zero_grad()
        loss = model(lib.tensor([x])).sum()
        scaled = scaler.scale(loss)
        scaled.backward()
        scaler.unscale_(opt)
        grad = model.weight.grad.clone()
        ret = scaler.step(opt)
        scaler.update()
        seen.append((scaled.item(), grad.numpy(), ret, scaler.get_scale(),
                     scaler.state_dict(), model.weight.detach().numpy().copy()))
    return seen


def test_steps_match_pytorch_including_inf_and_nan_steps():
    ours, theirs = _steps(torchjax), _steps(torch)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert a[0] == b[0] or (np.isnan(a[0]) and np.isnan(b[0])), i
        np.testing.assert_array_equal(a[1], b[1], err_msg=f"step {i}: unscaled gradient")
        assert a[2:5] == b[2:5], i  # step's return, the scale, the state dict
        np.testing.assert_allclose(a[5], b[5], rtol=1e-6, err_msg=f"step {i}: weights")
    scales = [s[3] for s in ours]
    assert scales == [4.0, 2.0, 2.0, 4.0, 2.0, 2.0, 4.0]  # backoff twice, growth twice


def _errors(lib):
    model = lib.nn.Linear(2, 1)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    scaler = lib.amp.GradScaler("cpu")
    msgs = []

    def attempt(f):
        try:
            f()
            msgs.append(None)
        except (RuntimeError, AssertionError, ValueError) as e:
            msgs.append(f"{type(e).__name__}: {e}")

    attempt(lambda: scaler.step(opt))  # no scale() yet
    scaler.scale(model(lib.ones(1, 2)).sum()).backward()
    attempt(lambda: scaler.step(opt, closure=lambda: 0))
    scaler.unscale_(opt)
    attempt(lambda: scaler.unscale_(opt))
    scaler.step(opt)
    attempt(lambda: scaler.step(opt))
    attempt(lambda: scaler.unscale_(opt))
    scaler.update()
    attempt(lambda: scaler.update())
    half = lib.nn.Parameter(lib.ones(2, dtype=lib.float16))
    half.grad = lib.ones(2, dtype=lib.float16)
    scaler.scale(lib.ones(()))
    attempt(lambda: scaler.unscale_(lib.optim.SGD([half], lr=0.1)))
    return msgs


def test_misuse_raises_pytorchs_errors():
    assert _errors(torchjax) == _errors(torch)


def test_update_with_a_new_scale_and_state_dict_round_trip():
    for lib in (torch, torchjax):
        s = lib.amp.GradScaler("cpu", init_scale=8.0, growth_factor=4.0, backoff_factor=0.25,
                               growth_interval=3)
        assert s.get_scale() == 8.0 and s.state_dict()["_growth_tracker"] == 0
        s.scale(lib.ones(()))
        s.update(2.0)
        assert s.get_scale() == 2.0
        s.update(lib.tensor(16.0))
        assert s.get_scale() == 16.0
        t = lib.amp.GradScaler("cpu")
        t.load_state_dict(s.state_dict())
        assert t.state_dict() == s.state_dict() == {
            "scale": 16.0, "growth_factor": 4.0, "backoff_factor": 0.25, "growth_interval": 3,
            "_growth_tracker": 0}
        u = pickle.loads(pickle.dumps(s))
        assert u.get_scale() == 16.0
        with pytest.raises(RuntimeError, match="source state dict is empty"):
            t.load_state_dict({})
        scaled = s.scale([lib.ones(2), (lib.ones(()),)])
        assert scaled[0].tolist() == [16.0, 16.0] and scaled[1][0].item() == 16.0


def _train(lib, steps=6):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.tensor(np.cos(np.arange(p.numel()) + i).reshape(p.shape) * 0.5,
                               dtype=lib.float32))
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=2)
    x = lib.tensor(np.sin(np.arange(40)).reshape(10, 4).astype(np.float32))
    t = lib.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2, 0])
    losses, scales = [], []
    for i in range(steps):
        opt.zero_grad()
        with lib.autocast("cpu", dtype=lib.float16):
            out = model(x * (1e30 if i == 2 else 1.0))  # step 2 overflows float16
            loss = lib.nn.functional.cross_entropy(out, t)
        assert out.dtype == lib.float16 and loss.dtype == lib.float32
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
        scales.append(scaler.get_scale())
    return losses, scales, [p.detach().numpy() for p in model.parameters()]


def test_autocast_training_loop_matches_pytorch():
    (la, sa, pa), (lb, sb, pb) = _train(torchjax), _train(torch)
    assert sa == sb
    assert np.isinf(la[2]) == np.isinf(lb[2]) or np.isnan(la[2]) == np.isnan(lb[2])
    np.testing.assert_allclose([v for i, v in enumerate(la) if i != 2],
                               [v for i, v in enumerate(lb) if i != 2], rtol=2e-2)
    for a, b in zip(pa, pb):
        np.testing.assert_allclose(a, b, rtol=2e-2, atol=2e-3)


def test_a_compiled_step_with_a_scaler_runs_eagerly_and_matches():
    def make():
        torchjax.manual_seed(0)
        m = torchjax.nn.Linear(4, 2)
        return m, torchjax.optim.SGD(m.parameters(), lr=0.1), torchjax.amp.GradScaler("cpu")

    def step(m, opt, scaler, x):
        opt.zero_grad()
        with torchjax.autocast("cpu", dtype=torchjax.float16):
            loss = m(x).float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    x = torchjax.randn(3, 4)
    (m1, o1, s1), (m2, o2, s2) = make(), make()
    compiled = torchjax.compile(step)
    with pytest.warns(UserWarning, match="Graph break.*GradScaler"):
        for _ in range(2):
            assert compiled(m2, o2, s2, x).item() == step(m1, o1, s1, x).item()
    assert s1.state_dict() == s2.state_dict()
    np.testing.assert_array_equal(m2.weight.detach().numpy(), m1.weight.detach().numpy())
