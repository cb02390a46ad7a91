"""The first step's update program is compiled while the first backward runs
(torchjax/optim/_first_step.py): the step then traces and compiles nothing, the results are
PyTorch's, and a wrong guess (a parameter that gets no gradient) only costs a compile."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
import torch

import torchjax
from torchjax import _host_tier, _programs
from torchjax.optim import _first_step


@pytest.fixture(autouse=True)
def _compiled_first_steps(monkeypatch):
    # with the host tier on, a small first update is evaluated with NumPy and nothing is
    # compiled ahead (test_host_tier_takes_the_first_update); these tests check the compile
    # ahead that a first update the host tier does not take gets
    monkeypatch.setattr(_host_tier, "ON", [False])


def _width() -> int:
    # a shape no other test (or earlier run, whose programs a warm cache holds) has used:
    # the update program must be new for the step's trace count to mean anything
    return 5 + int.from_bytes(os.urandom(3), "little") % 20_000


def _model(lib, width, seed=0):
    rng = np.random.default_rng(seed)
    w1 = rng.normal(size=(width, 3))
    w2 = rng.normal(size=(2, width)) / np.sqrt(width)  # (the loss stays O(1) at any width)
    # (float64: Adam's normalisation turns float32 round-off in tiny gradients into whole steps)
    m = lib.nn.Sequential(lib.nn.Linear(3, width), lib.nn.Tanh(), lib.nn.Linear(width, 2))
    m = m.double()
    w1, w2 = lib.tensor(w1), lib.tensor(w2)
    with lib.no_grad():
        m[0].weight.copy_(w1)
        m[0].bias.zero_()
        m[2].weight.copy_(w2)
        m[2].bias.zero_()
    return m


def _train(lib, make_opt, width, steps, unused=False):
    m = _model(lib, width)
    extra = lib.nn.Parameter(lib.ones(4, dtype=lib.float64))  # requires grad, never used when `unused`
    params = list(m.parameters()) + ([extra] if unused else [])
    opt = make_opt(lib, params)
    x = lib.tensor(np.linspace(-1, 1, 24).reshape(8, 3))
    traced_in_step = []
    for _ in range(steps):
        opt.zero_grad()
        loss = (m(x) ** 2).mean()
        loss.backward()
        if lib is torchjax:
            before = torchjax.compile_stats().traced
        opt.step()
        if lib is torchjax:
            traced_in_step.append(torchjax.compile_stats().traced - before)
    return [p.detach().numpy() for p in m.parameters()], traced_in_step


OPTIMIZERS = {
    "adam": lambda lib, ps: lib.optim.Adam(ps, lr=1e-2),
    "adamw_amsgrad": lambda lib, ps: lib.optim.AdamW(ps, lr=1e-2, amsgrad=True),
    "sgd_momentum": lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9),
    "sgd": lambda lib, ps: lib.optim.SGD(ps, lr=0.1),
    "two_groups": lambda lib, ps: lib.optim.RMSprop(
        [{"params": ps[:2]}, {"params": ps[2:], "lr": 1e-3}], lr=1e-2),
}


@pytest.fixture
def soon_threads(monkeypatch):
    """The names of the compile-ahead threads started during the test."""
    started = []
    real = _programs._Soon.__init__

    def spy(self, work, label, queued=None):
        real(self, work, label, queued)
        started.append(self.label)

    monkeypatch.setattr(_programs._Soon, "__init__", spy)
    return started


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_first_update_compiled_during_backward(name, soon_threads):
    if not _programs.enabled():
        pytest.skip("the head start needs the program cache (TORCHJAX_CACHE=0 here)")
    width = _width()
    got, traced = _train(torchjax, OPTIMIZERS[name], width, 3)
    want, _ = _train(torch, OPTIMIZERS[name], width, 3)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-9)
    # the update was traced at the first backward, so no step traced anything
    assert traced == [0, 0, 0]
    groups = 2 if name == "two_groups" else 1
    assert len(soon_threads) == groups and all("update" in t for t in soon_threads)


def test_wrong_guess_costs_only_a_compile(soon_threads):
    if not _programs.enabled():
        pytest.skip("the head start needs the program cache (TORCHJAX_CACHE=0 here)")
    width = _width()
    make = OPTIMIZERS["adam"]
    got, traced = _train(torchjax, make, width, 2, unused=True)
    want, _ = _train(torch, make, width, 2, unused=True)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-9)
    # the guess included the unused parameter: the step made its own program
    assert len(soon_threads) == 1 and traced[0] == 1 and traced[1] == 0


def test_no_head_start_without_backward_or_when_off(soon_threads, monkeypatch):
    m = _model(torchjax, _width())
    torchjax.optim.Adam(m.parameters())
    m(torchjax.ones(2, 3, dtype=torchjax.float64)).sum().item()  # no backward: none started
    assert soon_threads == []
    monkeypatch.setattr(_first_step, "AHEAD", [False])
    opt = torchjax.optim.Adam(m.parameters())
    m(torchjax.ones(2, 3, dtype=torchjax.float64)).sum().backward()
    opt.step()
    assert soon_threads == [] and opt.state  # stepped, with its program made by the step


def test_not_inside_a_compiled_step(soon_threads):
    width = _width()
    m = _model(torchjax, width)
    opt = torchjax.optim.SGD(m.parameters(), lr=0.1)
    x = torchjax.ones(4, 3, dtype=torchjax.float64)

    @torchjax.compile
    def step():
        opt.zero_grad()
        loss = m(x).sum()
        loss.backward()
        opt.step()
        return loss

    step()
    step()
    # the eager update never runs in a compiled step: nothing was compiled ahead for it
    assert soon_threads == []
    assert not [t for t in threading.enumerate() if t.name.startswith("torchjax-compile-soon")]


def test_only_optimizers_the_backward_reaches(soon_threads):
    if not _programs.enabled():
        pytest.skip("the head start needs the program cache (TORCHJAX_CACHE=0 here)")
    a, b = _model(torchjax, _width()), _model(torchjax, _width())
    opt_a = torchjax.optim.SGD(a.parameters(), lr=0.1, momentum=0.5)
    opt_b = torchjax.optim.Adam(b.parameters())
    x = torchjax.ones(2, 3, dtype=torchjax.float64)
    for _ in range(_first_step._PATIENCE):
        a(x).sum().backward()
    # b's optimizer was never reached: nothing compiled for it, and it is no longer watched
    assert len(soon_threads) == 1 and "SGD" in soon_threads[0]
    assert opt_b not in _first_step._waiting and opt_a not in _first_step._waiting


def test_first_zero_grad_starts_it(soon_threads):
    if not _programs.enabled():
        pytest.skip("the head start needs the program cache (TORCHJAX_CACHE=0 here)")
    m = _model(torchjax, _width())
    opt = torchjax.optim.Adam(m.parameters())
    opt.zero_grad()  # before any forward: the update compiles beside the forward's compiles
    assert len(soon_threads) == 1
    before = torchjax.compile_stats().traced
    m(torchjax.ones(2, 3, dtype=torchjax.float64)).sum().backward()
    traced_in_backward = torchjax.compile_stats().traced - before
    before = torchjax.compile_stats().traced
    opt.step()
    assert torchjax.compile_stats().traced == before and len(soon_threads) == 1
    assert traced_in_backward >= 1  # (the forward's and backward's own programs)



def test_an_optimizer_made_after_the_others_started_is_still_watched(soon_threads,
                                                                      monkeypatch):
    """The "any optimizer waiting" flag, down once every watched optimizer has started, is
    up again for one made later: its first zero_grad starts its update."""
    if not _programs.enabled():
        pytest.skip("the head start needs the program cache (TORCHJAX_CACHE=0 here)")
    # (no optimizer of an earlier test of this process still waiting: one not yet collected
    # would keep the flag up)
    import weakref
    monkeypatch.setattr(_first_step, "_waiting", weakref.WeakKeyDictionary())
    monkeypatch.setattr(_first_step, "ANY", [False])
    a = _model(torchjax, _width())
    opt_a = torchjax.optim.SGD(a.parameters(), lr=0.1, momentum=0.5)
    opt_a.zero_grad()
    x = torchjax.ones(2, 3, dtype=torchjax.float64)
    a(x).sum().backward()
    opt_a.step()
    opt_a.zero_grad()  # nothing waits now: the flag goes down
    assert not _first_step.ANY[0] and len(soon_threads) == 1
    b = _model(torchjax, _width())
    opt_b = torchjax.optim.Adam(b.parameters())
    assert _first_step.ANY[0]
    opt_b.zero_grad()
    assert len(soon_threads) == 2 and "Adam" in soon_threads[1]
    assert opt_b not in _first_step._waiting
    b(x).sum().backward()
    opt_b.step()  # (waits for that compile: the next test counts the threads it sees)


def test_host_tier_takes_the_first_update(monkeypatch):
    monkeypatch.setattr(_host_tier, "ON", [True])
    width = _width()
    m = _model(torchjax, width)
    opt = torchjax.optim.Adam(m.parameters(), lr=0.1)
    x = torchjax.tensor(np.linspace(-1, 1, 12).reshape(4, 3))
    opt.zero_grad()
    before = [t for t in threading.enumerate() if t.name.startswith("torchjax-compile-soon")]
    m(x).pow(2).sum().backward()
    assert before == []  # nothing compiled ahead
    s0 = torchjax.compile_stats()
    opt.step()
    s1 = torchjax.compile_stats()
    assert s1.host_calls > s0.host_calls and s1.compiled == s0.compiled
    tm = _model(torch, width)
    topt = torch.optim.Adam(tm.parameters(), lr=0.1)
    topt.zero_grad()
    tm(torch.tensor(np.linspace(-1, 1, 12).reshape(4, 3))).pow(2).sum().backward()
    topt.step()
    for a, b in zip(m.parameters(), tm.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9, atol=1e-12)
