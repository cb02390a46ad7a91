"""An optimizer's update computed by the program of the forward and backward it follows
(torchjax/_deferred_fold.py): the same parameters, gradients and losses as PyTorch's, and
the update computed as before wherever the step reads something that changed since the
backward (the learning rate, the gradients, the parameters, the options, the state), where
the backward adds to gradients (accumulation, zero_grad(set_to_none=False)), and under
step hooks.

Each test trains for a few steps so that the forward and backward get their program and
trace (the suite compiles programs at once: tests/conftest.py) and the update is learned,
then compares every step with torch 2.13 and checks the fold counts.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax
from torchjax import _deferred, _deferred_backward, _deferred_fold, _deferred_grad, _result_hooks

RNG = np.random.default_rng(2526)
X = RNG.standard_normal((6, 4)).astype(np.float32)
Y = RNG.standard_normal((6, 1)).astype(np.float32)
INIT = [RNG.standard_normal((8, 4)).astype(np.float32) * 0.5,
        RNG.standard_normal(8).astype(np.float32) * 0.1,
        RNG.standard_normal((1, 8)).astype(np.float32) * 0.5,
        RNG.standard_normal(1).astype(np.float32) * 0.1]
STEPS = 12


@pytest.fixture(autouse=True)
def fold_on(monkeypatch):
    monkeypatch.setattr(_result_hooks.STATE, "hooks", ())  # (see test_deferred.py)
    monkeypatch.setattr(_deferred, "_ALONE", {}, raising=False)
    was = (_deferred.ON[0], _deferred.GRAD[0], _deferred.REPLAY[0], _deferred_backward.ON[0],
           _deferred_fold.ON[0])
    _deferred.ON[0] = _deferred.GRAD[0] = _deferred.REPLAY[0] = True
    _deferred_backward.ON[0] = _deferred_fold.ON[0] = True
    _deferred.flush()
    _deferred_fold._LOCAL.pending.clear()
    _deferred_fold._LOCAL.last = None
    _deferred_grad.reset()
    yield
    _deferred.flush()
    (_deferred.ON[0], _deferred.GRAD[0], _deferred.REPLAY[0], _deferred_backward.ON[0],
     _deferred_fold.ON[0]) = was
    _deferred_grad.reset()


def _model(lib):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    with lib.no_grad():
        for p, a in zip(model.parameters(), INIT):
            p.copy_(lib.tensor(a))
    return model


def _train(lib, make_opt, steps=STEPS, after_backward=None, before_step=None, after_step=None,
           backwards=1, set_to_none=True):
    """Training steps; per step the loss, the gradients the step read and the parameters
    after it. The hooks get (lib, step number, model, optimizer)."""
    model = _model(lib)
    opt = make_opt(lib, model)
    loss_fn = lib.nn.MSELoss()
    x, y = lib.tensor(X), lib.tensor(Y)
    out = []
    for step in range(steps):
        opt.zero_grad(set_to_none=set_to_none)
        for _ in range(backwards):
            loss = loss_fn(model(x), y)
            loss.backward()
        if after_backward is not None:
            after_backward(lib, step, model, opt)
        grads = [p.grad.numpy().copy() for p in model.parameters()]
        if before_step is not None:
            before_step(lib, step, model, opt)
        opt.step()
        if after_step is not None:
            after_step(lib, step, model, opt)
        out.append((loss.item(), grads,
                    [p.detach().numpy().copy() for p in model.parameters()]))
    return out


def _compare(make_opt, taken=None, **kw):
    """Train with both libraries and compare every step; `taken`: whether folded updates
    must have been taken (True), must not have been (False), or either (None)."""
    before = dict(_deferred_fold.STATS)
    got = _train(torchjax, make_opt, **kw)
    after = dict(_deferred_fold.STATS)
    ref = _train(torch, make_opt, **kw)
    for step, ((lg, gg, pg), (lr, gr, pr)) in enumerate(zip(got, ref)):
        assert lg == pytest.approx(lr, rel=1e-5, abs=1e-6), step
        for a, b in zip(gg + pg, gr + pr):
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6, err_msg=f"step {step}")
    n = after["taken"] - before["taken"]
    if taken is True:
        assert n >= STEPS // 3, (before, after)
    elif taken is False:
        assert n == 0, (before, after)
    return before, after


def _sgd(lr=0.05, **kw):
    return lambda lib, model: lib.optim.SGD(model.parameters(), lr=lr, **kw)


def _adam(**kw):
    return lambda lib, model: lib.optim.Adam(model.parameters(), lr=0.01, **kw)


@pytest.mark.parametrize("make_opt", [
    _sgd(),
    _sgd(momentum=0.9),
    _sgd(momentum=0.9, nesterov=True, weight_decay=0.01),
    _sgd(momentum=0.5, dampening=0.3, maximize=True),
    _adam(),
    _adam(amsgrad=True, weight_decay=0.1),
    lambda lib, model: lib.optim.AdamW(model.parameters(), lr=0.01),
    lambda lib, model: lib.optim.RMSprop(model.parameters(), lr=0.01, momentum=0.5),
], ids=["sgd", "momentum", "nesterov-decay", "dampening-maximize", "adam", "amsgrad",
        "adamw", "rmsprop"])
def test_folded_updates_match_pytorch(make_opt):
    _compare(make_opt, taken=True)


def test_two_groups_with_their_own_learning_rates():
    def make(lib, model):
        ps = list(model.parameters())
        return lib.optim.SGD([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.2}], lr=0.05,
                             momentum=0.9)
    _compare(make, taken=True)


def test_reading_grad_between_backward_and_step_keeps_the_fold():
    norms = []

    def read(lib, step, model, opt):
        norms.append(sum(float((p.grad * p.grad).sum()) for p in model.parameters()))
    _compare(_sgd(momentum=0.9), taken=True, after_backward=read)


def test_a_learning_rate_changed_after_the_backward_is_the_steps():
    def change(lib, step, model, opt):
        for g in opt.param_groups:
            g["lr"] = 0.05 / (1 + step)
    before, after = _compare(_sgd(momentum=0.9), taken=False, before_step=change)
    assert after["missed"] > before["missed"]


def test_a_scheduler_after_the_step_keeps_the_fold():
    scheds = {}

    def sched(lib, step, model, opt):
        s = scheds.get(opt)
        if s is None:
            s = scheds[opt] = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
        s.step()
    _compare(_adam(), taken=True, after_step=sched)


def test_gradients_changed_in_place_before_the_step():
    # (the step's gradients are not the backward's: nothing is learned, nothing folded)
    def clip(lib, step, model, opt):
        lib.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    _compare(_sgd(momentum=0.9), taken=False, before_step=clip)

    # clipped from the fifth step on: learned, then computed and not taken
    def clip_later(lib, step, model, opt):
        if step >= 5:
            clip(lib, step, model, opt)
    before, after = _compare(_sgd(momentum=0.9), taken=None, before_step=clip_later)
    assert after["missed"] > before["missed"]


def test_a_gradient_replaced_before_the_step():
    def replace(lib, step, model, opt):
        p = next(iter(model.parameters()))
        p.grad = p.grad * 0.5
    _compare(_sgd(), taken=False, before_step=replace)


def test_parameters_changed_in_place_before_the_step():
    def shrink(lib, step, model, opt):
        with lib.no_grad():
            for p in model.parameters():
                p.mul_(0.99)
    _compare(_adam(), taken=False, before_step=shrink)

    def shrink_later(lib, step, model, opt):  # (once the update is learned)
        if step >= 5:
            shrink(lib, step, model, opt)
    _compare(_adam(), taken=None, before_step=shrink_later)


def test_gradient_accumulation():
    _compare(_sgd(momentum=0.9), taken=False, backwards=2)


def test_zero_grad_to_zeros_adds_to_the_gradients():
    _compare(_adam(), taken=False, set_to_none=False)


def test_a_step_pre_hook_that_scales_the_gradients():
    hooked = set()

    def hook(opt, args, kwargs):
        for g in opt.param_groups:
            for p in g["params"]:
                p.grad.mul_(0.5)

    def add_hook(lib, step, model, opt):
        if opt not in hooked:
            hooked.add(opt)
            opt.register_step_pre_hook(hook)
    _compare(_sgd(momentum=0.9), taken=None, before_step=add_hook)


def test_state_changed_before_the_step():
    def reset(lib, step, model, opt):
        if step % 3 == 2:
            for st in opt.state.values():
                st["momentum_buffer"].mul_(0.5)
    _compare(_sgd(momentum=0.9), taken=None, before_step=reset)


def test_options_changed_between_steps():
    def change(lib, step, model, opt):
        if step == 6:
            for g in opt.param_groups:
                g["weight_decay"] = 0.1  # (another update: compiled in, not an input)
        if step == 8:
            for g in opt.param_groups:
                g["nesterov"] = True
    _compare(_sgd(momentum=0.9), taken=True, after_step=change)


def _hooked(hook_kind):
    """SGD with momentum over a model whose first weight has a gradient hook of that kind."""
    def make(lib, model):
        w = next(iter(model.parameters()))
        if hook_kind == "tensor":  # (the leaf's gradient is the hook's result)
            w.register_hook(lambda g: g * 0.5)
        else:  # (the accumulated gradient changed in place after the backward wrote it)
            def halve(p):
                p.grad.mul_(0.5)
            w.register_post_accumulate_grad_hook(halve)
        return lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return make


@pytest.mark.parametrize("hook_kind", ["tensor", "post_accumulate"])
def test_gradient_hooks_on_a_parameter(hook_kind):
    # the step reads the gradients the hooks left, folded or not
    _compare(_hooked(hook_kind), taken=None)


def test_amp_grad_scaler_unscales_before_the_step():
    # GradScaler.step unscales the gradients in place first: the step's gradients are not
    # the backward's, so a folded update must not be taken
    def run(lib):
        model = _model(lib)
        opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        x, y = lib.tensor(X), lib.tensor(Y)
        out = []
        for _ in range(STEPS):
            opt.zero_grad()
            loss = lib.nn.MSELoss()(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            out.append([p.detach().numpy().copy() for p in model.parameters()])
        return out
    before = dict(_deferred_fold.STATS)
    got = run(torchjax)
    assert _deferred_fold.STATS["taken"] == before["taken"]
    for a, b in zip(got, run(torch)):
        for u, v in zip(a, b):
            np.testing.assert_allclose(u, v, rtol=2e-5, atol=1e-6)


def test_a_second_step_without_a_backward():
    def again(lib, step, model, opt):
        if step % 4 == 3:
            opt.step()
    _compare(_sgd(momentum=0.9), taken=True, after_step=again)


def test_a_backward_without_a_step_drops_the_update():
    model = _model(torchjax)
    opt = torchjax.optim.SGD(model.parameters(), lr=0.05)
    x, y = torchjax.tensor(X), torchjax.tensor(Y)
    loss_fn = torchjax.nn.MSELoss()
    for _ in range(8):
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    assert _deferred_fold._LOCAL.pending == {}
    before = dict(_deferred_fold.STATS)
    for _ in range(3):  # evaluation backwards: no step takes their updates
        opt.zero_grad()
        loss_fn(model(x), y).backward()
    after = dict(_deferred_fold.STATS)
    assert after["missed"] - before["missed"] >= 1
    assert len(_deferred_fold._LOCAL.pending) <= 1
    # the parameters are the ones the last step wrote: no update was applied
    ref = _model(torch)
    ropt = torch.optim.SGD(ref.parameters(), lr=0.05)
    for _ in range(8):
        ropt.zero_grad()
        torch.nn.MSELoss()(ref(torch.tensor(X)), torch.tensor(Y)).backward()
        ropt.step()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=2e-5,
                                   atol=1e-6)


def test_switched_off_nothing_is_folded():
    _deferred_fold.ON[0] = False
    _compare(_adam(), taken=False)
