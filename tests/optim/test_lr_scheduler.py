"""torchjax.optim.lr_scheduler against PyTorch: learning rates (and cycled momentum) epoch by
epoch over 30 epochs, state_dict round trips, warnings and errors."""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
import torch

import torchjax
import torchjax.optim.lr_scheduler as jsched

EPOCHS = 30


def make_optimizer(lib, name="SGD", groups=1):
    ps = [lib.tensor(np.ones(2, np.float32), requires_grad=True) for _ in range(groups)]
    kw = {"momentum": 0.9} if name == "SGD" else {}
    return getattr(lib.optim, name)([{"params": [p], "lr": 0.1 * (i + 1)}
                                     for i, p in enumerate(ps)], lr=0.1, **kw)


def group_values(opt):
    out = []
    for g in opt.param_groups:
        out.append((g["lr"], g.get("momentum"), g.get("betas", (None,))[0]))
    return out


def trajectory(lib, build, opt_name="SGD", groups=1, epochs=EPOCHS):
    opt = make_optimizer(lib, opt_name, groups)
    sched = build(lib.optim.lr_scheduler, opt)
    seen = [(sched.get_last_lr(), group_values(opt))]
    for _ in range(epochs):
        opt.step()
        sched.step()
        seen.append((sched.get_last_lr(), group_values(opt)))
    return seen, sched


def assert_same(a, b):
    np.testing.assert_allclose(np.array(a, dtype=float), np.array(b, dtype=float), rtol=1e-12,
                               atol=1e-15)


SCHEDULERS = {
    "LambdaLR": lambda s, o: s.LambdaLR(o, lambda e: 0.9 ** e),
    "LambdaLR-list": lambda s, o: s.LambdaLR(o, [lambda e: 1 / (e + 1), lambda e: 0.5]),
    "MultiplicativeLR": lambda s, o: s.MultiplicativeLR(o, lambda e: 0.95),
    "StepLR": lambda s, o: s.StepLR(o, step_size=4, gamma=0.5),
    "MultiStepLR": lambda s, o: s.MultiStepLR(o, milestones=[3, 8, 8, 20], gamma=0.3),
    "ConstantLR": lambda s, o: s.ConstantLR(o, factor=0.25, total_iters=6),
    "LinearLR": lambda s, o: s.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=12),
    "ExponentialLR": lambda s, o: s.ExponentialLR(o, gamma=0.9),
    "PolynomialLR": lambda s, o: s.PolynomialLR(o, total_iters=20, power=2.0),
    "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda s, o: s.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.01),
    "CyclicLR-triangular": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=4),
    "CyclicLR-triangular2": lambda s, o: s.CyclicLR(
        o, [0.01, 0.02], 0.1, step_size_up=3, step_size_down=5, mode="triangular2"),
    "CyclicLR-exp_range": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=5,
                                                  mode="exp_range", gamma=0.95,
                                                  cycle_momentum=False),
    "OneCycleLR-cos": lambda s, o: s.OneCycleLR(o, max_lr=1.0, total_steps=EPOCHS + 1),
    "OneCycleLR-linear-3phase": lambda s, o: s.OneCycleLR(
        o, max_lr=[1.0, 0.5], epochs=3, steps_per_epoch=11, anneal_strategy="linear",
        three_phase=True, pct_start=0.25),
    "SequentialLR": lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.1, total_iters=5),
            s.CosineAnnealingLR(o, T_max=10), s.ExponentialLR(o, gamma=0.8)],
        milestones=[5, 17]),
    "ChainedScheduler": lambda s, o: s.ChainedScheduler(
        [s.ConstantLR(o, factor=0.5, total_iters=4), s.ExponentialLR(o, gamma=0.9)]),
}


# Every scheduler with SGD(momentum); the momentum-cycling ones also with Adam's beta1.
TRAJECTORY_CASES = [(name, "SGD") for name in SCHEDULERS] + [
    (name, "Adam") for name in SCHEDULERS if name.startswith(("CyclicLR", "OneCycleLR"))]


@pytest.mark.parametrize("name,opt_name", TRAJECTORY_CASES)
def test_lrs_match_torch_epoch_by_epoch(name, opt_name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, _ = trajectory(torch, SCHEDULERS[name], opt_name, groups=2)
        j, _ = trajectory(torchjax, SCHEDULERS[name], opt_name, groups=2)
    for (tl, tg), (jl, jg) in zip(t, j):
        assert_same(jl, tl)
        assert [[v is None for v in g] for g in jg] == [[v is None for v in g] for g in tg]
        assert_same([[v for v in g if v is not None] for g in jg],
                    [[v for v in g if v is not None] for g in tg])


def test_cosine_warm_restarts_fractional_epochs():
    out = []
    for lib in (torch, torchjax):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=3)
        lrs = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in np.arange(0, 20, 0.35):
                opt.step()
                sched.step(float(epoch))
                lrs.append((sched.get_last_lr()[0], sched.last_epoch, sched.T_i))
        out.append(lrs)
    assert_same(out[1], out[0])


def test_closed_form_with_explicit_epoch():
    out = []
    for lib in (torch, torchjax):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            opt.step()
            sched.step(7)
        assert "epoch parameter in `scheduler.step()`" in str(rec[-1].message)
        out.append((sched.get_last_lr(), sched.last_epoch))
    assert out[1] == out[0]


@pytest.mark.parametrize("kw", [dict(),
                                dict(mode="max", threshold_mode="abs", threshold=0.05,
                                     patience=1, cooldown=2, factor=0.5, min_lr=[0.01, 0.02]),
                                dict(patience=0, eps=0.05, min_lr=0.03)])
def test_reduce_lr_on_plateau_matches_torch(kw):
    metrics = [1.0, 0.9, 0.9, 0.95, 0.89, 0.9, 0.9, 1.2, 0.5, 0.5] * 4
    out = []
    for lib in (torch, torchjax):
        opt = make_optimizer(lib, groups=2)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
        seen = []
        for m in metrics:
            opt.step()
            sched.step(m)
            seen.append((sched.get_last_lr(), sched.num_bad_epochs, sched.cooldown_counter,
                         sched.best))
        out.append((seen, sched.state_dict()))
    assert_same([s[0] for s in out[1][0]], [s[0] for s in out[0][0]])
    assert [s[1:] for s in out[1][0]] == [s[1:] for s in out[0][0]]
    assert sorted(out[1][1]) == sorted(out[0][1])


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "CyclicLR-triangular2",
                                  "OneCycleLR-cos", "SequentialLR", "ChainedScheduler",
                                  "LambdaLR"])
def test_state_dict_round_trip(name):
    build = SCHEDULERS[name]
    full, _ = trajectory(torchjax, build, groups=2, epochs=20)
    _, sched = trajectory(torchjax, build, groups=2, epochs=8)
    saved = copy.deepcopy(sched.state_dict())
    saved_keys = list(saved)
    saved_opt = copy.deepcopy(sched.optimizer.state_dict())
    opt = make_optimizer(torchjax, groups=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resumed = build(jsched, opt)
    resumed.load_state_dict(saved)
    opt.load_state_dict(saved_opt)
    lrs = []
    for _ in range(12):
        opt.step()
        resumed.step()
        lrs.append(resumed.get_last_lr())
    assert_same(lrs, [lr for lr, _ in full[9:]])
    torch_sd = trajectory(torch, build, groups=2, epochs=8)[1].state_dict()
    assert saved_keys == list(torch_sd)


def test_state_dict_keys_and_values_match_torch():
    _, t = trajectory(torch, SCHEDULERS["CosineAnnealingLR"], epochs=5)
    _, j = trajectory(torchjax, SCHEDULERS["CosineAnnealingLR"], epochs=5)
    assert list(j.state_dict()) == list(t.state_dict())
    assert j.state_dict() == t.state_dict()


def test_warning_when_scheduler_steps_before_optimizer():
    messages = []
    for lib in (torch, torchjax):
        opt = make_optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            sched.step()
        messages.append([str(w.message) for w in rec])
    assert messages[1] == messages[0]
    assert "Detected call of `lr_scheduler.step()` before `optimizer.step()`" in messages[1][0]


def test_get_lr_outside_step_warns_and_initial_lr_is_recorded():
    opt = make_optimizer(torchjax)
    sched = jsched.ExponentialLR(opt, gamma=0.5)
    assert opt.param_groups[0]["initial_lr"] == 0.1
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()
    opt.step()
    sched.step()
    assert sched.last_epoch == 1
    assert math.isclose(sched.get_last_lr()[0], 0.05)
    assert isinstance(sched, jsched.LRScheduler)


def test_tensor_lr_is_filled_in_place():
    opt = torchjax.optim.Adam([torchjax.ones(2, requires_grad=True)], lr=torchjax.tensor(0.1))
    lr = opt.param_groups[0]["lr"]
    sched = jsched.StepLR(opt, step_size=1, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr
    assert math.isclose(float(lr), 0.05, rel_tol=1e-6)


def _step_times(sched, n):
    for _ in range(n):
        sched.step()


ERRORS = {
    "not-optimizer": lambda s, o: s.StepLR(object(), 3),
    "resume-without-initial_lr": lambda s, o: s.StepLR(o, 3, last_epoch=4),
    "lambda-count": lambda s, o: s.LambdaLR(o, [lambda e: 1.0] * 3),
    "multiplicative-not-callable": lambda s, o: s.MultiplicativeLR(o, 0.5),
    "constant-factor": lambda s, o: s.ConstantLR(o, factor=1.5),
    "linear-start": lambda s, o: s.LinearLR(o, start_factor=0),
    "linear-end": lambda s, o: s.LinearLR(o, end_factor=2),
    "sequential-milestones": lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2)], milestones=[3]),
    "sequential-empty": lambda s, o: s.SequentialLR(o, [], milestones=[]),
    "sequential-plateau": lambda s, o: s.SequentialLR(o, [s.ReduceLROnPlateau(o)],
                                                      milestones=[]),
    "chained-empty": lambda s, o: s.ChainedScheduler([]),
    "plateau-factor": lambda s, o: s.ReduceLROnPlateau(o, factor=1.0),
    "plateau-mode": lambda s, o: s.ReduceLROnPlateau(o, mode="avg"),
    "plateau-threshold-mode": lambda s, o: s.ReduceLROnPlateau(o, threshold_mode="pct"),
    "plateau-min-lrs": lambda s, o: s.ReduceLROnPlateau(o, min_lr=[0.1, 0.2]),
    "cyclic-mode": lambda s, o: s.CyclicLR(o, 0.01, 0.1, mode="sine"),
    "cyclic-max-lr-len": lambda s, o: s.CyclicLR(o, 0.01, [0.1, 0.2]),
    "warm-T0": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=0),
    "warm-Tmult": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5),
    "warm-negative-epoch": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    "onecycle-steps": lambda s, o: s.OneCycleLR(o, 1.0),
    "onecycle-total": lambda s, o: s.OneCycleLR(o, 1.0, total_steps=0),
    "onecycle-pct": lambda s, o: s.OneCycleLR(o, 1.0, total_steps=5, pct_start=1),
    "onecycle-anneal": lambda s, o: s.OneCycleLR(o, 1.0, total_steps=5, anneal_strategy="x"),
    "onecycle-overrun": lambda s, o: _step_times(s.OneCycleLR(o, 1.0, total_steps=2), 3),
}


def _message(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001 - we compare whatever PyTorch raises
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", list(ERRORS) + ["cycle-momentum-unsupported"])
def test_errors_match_torch(case):
    def attempt(lib):
        sched = lib.optim.lr_scheduler
        if case == "cycle-momentum-unsupported":
            opt = lib.optim.Adagrad([lib.ones(2, requires_grad=True)])
            return _message(lambda: sched.OneCycleLR(opt, 1.0, total_steps=5))
        return _message(lambda: ERRORS[case](sched, make_optimizer(lib)))

    expected = attempt(torch)
    assert expected is not None
    assert attempt(torchjax) == expected
