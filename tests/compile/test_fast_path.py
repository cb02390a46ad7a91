"""The compiled function's fast path (compiler/_guard.py): after the same state has been walked
twice, a generated guard stands in for the walk. Every change the walk would notice must make
the guard step aside: each test below warms a compiled training step up until its guard is
in use, changes one thing, and checks that the compiled step and the same step run eagerly
stay equal (losses, parameters, gradients) for a few more steps."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import torchjax as torch
from torchjax import nn

SCALE = 1.0  # a global the step reads: its value is baked into the trace


def _setup(momentum=0.0):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Tanh(), nn.Linear(4, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=momentum)
    box = {"offset": torch.zeros(2)}

    def set_shift(v):
        nonlocal shift_value
        shift_value = v

    shift_value = 0.0

    def step(x):
        opt.zero_grad()
        out = model(x) * SCALE + box["offset"] + shift_value
        loss = (out ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    return model, opt, box, step, set_shift


def _pair(momentum=0.0):
    eager = _setup(momentum)
    comp = _setup(momentum)
    cstep = torch.compile(comp[3])
    return eager, comp, cstep


def _compare(eager, comp, cstep, x, steps=2):
    for _ in range(steps):
        want = eager[3](x)
        got = cstep(x)
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-5, atol=1e-6)
    for (n, p), (_, q) in zip(eager[0].named_parameters(), comp[0].named_parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=n)
        assert (p.grad is None) == (q.grad is None), n
    for (n, b), (_, c) in zip(eager[0].named_buffers(), comp[0].named_buffers()):
        np.testing.assert_allclose(c.numpy(), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=n)


def _warm(eager, comp, cstep, x):
    _compare(eager, comp, cstep, x, steps=4)
    assert cstep._guard is not None, "the fast path should be in use after a few calls"
    assert cstep.programs, "the step compiled (no graph break)"


CHANGES = {
    "eval": lambda s: s[0].eval(),
    "frozen parameter": lambda s: s[0][0].weight.requires_grad_(False),
    "replaced parameter": lambda s: setattr(s[0][3], "bias", nn.Parameter(torch.ones(2))),
    "replaced submodule": lambda s: (torch.manual_seed(1),
                                     s[0].__setitem__(3, nn.Linear(4, 2))),
    "forward hook": lambda s: s[0][0].register_forward_hook(lambda m, i, o: o * 2),
    "momentum on": lambda s: s[1].param_groups[0].__setitem__("momentum", 0.9),
    "grads cleared outside": lambda s: s[1].zero_grad(),
    "grads zeroed, kept": lambda s: s[1].zero_grad(set_to_none=False),
    "dict entry replaced": lambda s: s[2].__setitem__("offset", torch.full((2,), 0.5)),
    "closure value": lambda s: s[4](0.25),
    "buffer replaced": lambda s: setattr(s[0][1], "running_mean", torch.ones(4)),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_change_after_warm_up_matches_eager(change):
    eager, comp, cstep = _pair()
    x = torch.randn(5, 3)
    _warm(eager, comp, cstep, x)
    CHANGES[change](eager)
    CHANGES[change](comp)
    _compare(eager, comp, cstep, x, steps=3)


def test_global_scalar_changes_recompile(monkeypatch):
    eager, comp, cstep = _pair()
    x = torch.randn(5, 3)
    _warm(eager, comp, cstep, x)
    n = cstep.compiles
    module = sys.modules[__name__]
    monkeypatch.setattr(module, "SCALE", 3.0)
    _compare(eager, comp, cstep, x, steps=3)
    assert cstep.compiles == n + 1
    monkeypatch.setattr(module, "SCALE", 1.0)
    _compare(eager, comp, cstep, x, steps=2)
    assert cstep.compiles == n + 1  # the first program again


def test_optimizer_state_reloaded_is_read_afresh():
    eager, comp, cstep = _pair(momentum=0.9)
    x = torch.randn(5, 3)
    _warm(eager, comp, cstep, x)
    for s in (eager, comp):
        sd = s[1].state_dict()
        for st in sd["state"].values():
            st["momentum_buffer"] = st["momentum_buffer"] * 0 + 0.5
        s[1].load_state_dict(sd)
    _compare(eager, comp, cstep, x, steps=3)


def test_tied_weights_and_parameter_argument():
    def make():
        torch.manual_seed(0)
        a, b = nn.Linear(3, 3), nn.Linear(3, 3)
        b.weight = a.weight  # tied
        model = nn.Sequential(a, nn.Tanh(), b)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def step(x, w):
            opt.zero_grad()
            loss = (model(x) @ w).pow(2).mean()
            loss.backward()
            opt.step()
            return loss
        return model, opt, step

    (m1, _, s1), (m2, _, s2) = make(), make()
    c2 = torch.compile(s2)
    x = torch.randn(4, 3)
    for i in range(8):
        # steps 3-5 pass a parameter as the argument: the guard's list would hold it twice,
        # so it steps aside and the walk sorts it out; steps 6-7 a view of one, whose
        # history from outside the step backward() must reach: a graph break
        w1 = w2 = torch.ones(3, 1)
        if 3 <= i < 6:
            w1, w2 = m1[0].weight, m2[0].weight
        elif i >= 6:
            w1, w2 = m1[0].bias.unsqueeze(1), m2[0].bias.unsqueeze(1)
        if i == 6:
            with pytest.warns(UserWarning, match="reaches an argument made by Unsqueeze"):
                got = c2(x, w2)
        else:
            got = c2(x, w2)
        np.testing.assert_allclose(got.item(), s1(x, w1).item(), rtol=1e-5)
    assert m2[2].weight is m2[0].weight
    np.testing.assert_allclose(m2[0].weight.detach().numpy(), m1[0].weight.detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_guard_is_fast_path_only():
    """The guard never changes what runs: with it forced off, the same programs run."""
    eager, comp, cstep = _pair()
    x = torch.randn(5, 3)
    _warm(eager, comp, cstep, x)
    n = cstep.compiles
    cstep._guard = None
    cstep._guard_builds = 99  # no new guard
    _compare(eager, comp, cstep, x, steps=2)
    assert cstep.compiles == n
