"""A reinforcement-learning loop: every episode's length is a new graph structure.

The fused backward (engine._run_fused) compiles a structure's whole backward once it
repeats; in a workload whose structures keep changing it waits for more sightings
(engine._FUSE_AFTER_VARYING), and a process's first structure is not fused at once when it
is an unrolled loop (engine._UNROLLED). Gradients are PyTorch's in every episode, whichever
way it ran; the counts are of fused programs built.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax
from torchjax import (
    _deferred,
    _deferred_backward,
    _deferred_grad,
    _deferred_split,
    _deferred_template,
    _dispatch,
    _one_off,
    _scalar_args,
)
from torchjax._autograd import batched, chains, engine

RNG = np.random.default_rng(3)
W1 = RNG.standard_normal((8, 4)).astype(np.float32) * 0.5
B1 = RNG.standard_normal(8).astype(np.float32) * 0.1
W2 = RNG.standard_normal((2, 8)).astype(np.float32) * 0.5
B2 = RNG.standard_normal(2).astype(np.float32) * 0.1
STATES = RNG.standard_normal((64, 4)).astype(np.float32)
ACTIONS = RNG.integers(0, 2, 64)


def _policy(lib):
    net = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2))
    with lib.no_grad():
        for p, v in zip(net.parameters(), (W1, B1, W2, B2)):
            p.copy_(lib.tensor(v))
    return net


def _episode(lib, net, length):
    """REINFORCE's loss over an episode of `length` steps, as pytorch/examples writes it:
    one forward and Categorical per step, the returns normalised, cat(...).sum()."""
    log_probs = []
    for t in range(length):
        probs = lib.softmax(net(lib.tensor(STATES[t]).unsqueeze(0)), dim=1)
        m = lib.distributions.Categorical(probs)
        log_probs.append(m.log_prob(lib.tensor([int(ACTIONS[t])])))
    returns = lib.tensor(np.cumsum(np.ones(length))[::-1].copy(), dtype=lib.float32)
    returns = (returns - returns.mean()) / (returns.std() + 1e-6)
    return lib.cat([-lp * r for lp, r in zip(log_probs, returns)]).sum()


def _grads(lib, net, length):
    net.zero_grad()
    _episode(lib, net, length).backward()
    return [p.grad.numpy().copy() for p in net.parameters()]


# the module tables these tests fill, as the process's workload meets graphs (structures
# counted, chain and sequence programs, cool-down counters): what a test leaves in them
# decides what the next test's steps do, so each test here starts from empty tables and
# gives the next one back the tables it found
_TABLES = [(engine, "_seen"), (engine, "_counts"), (engine, "_new_passes"),
           (chains, "_seen"), (chains, "_programs_by_key"), (batched, "_programs_by_key"),
           (_deferred, "_ALONE"), (_deferred_backward, "_PROGRAMS"), (_deferred_backward, "_SEEN"),
           (_deferred_template, "_PROGRAMS"), (_deferred_template, "_SEEN"),
           (_deferred_template, "_QUICK"), (_deferred_template, "_PREFER_LENS"),
           (_deferred_split, "_KINDS"), (_one_off, "_calls"), (_scalar_args, "_SEEN"),
           (_scalar_args, "_ARRAYS")]
_COUNTERS = [_deferred_grad._MISSES, _deferred_grad._COOL, _deferred_grad._NEXT_COOL,
             _deferred_grad._SHORT, _deferred_grad._NEW]


@pytest.fixture(autouse=True)
def fresh_tables(monkeypatch):
    for module, name in _TABLES:
        monkeypatch.setattr(module, name, type(getattr(module, name))())
    counters = [list(c) for c in _COUNTERS]
    _deferred_grad.reset()
    # and the ops' fast-path entries, which hold what deferral learnt of each kind of call
    # (its result's type, after its first eager call): the chain test's `stack(...).sum()`
    # of shape (5, 1) left sum's entry known, so test_deferred_backward's later
    # `pred.sum()` of that shape was deferred at once, its one-op sequence counted a miss
    # and grad deferral cooled down before that test's forward+backward program was made
    _dispatch._clear_fast()
    yield
    _dispatch._clear_fast()
    for c, was in zip(_COUNTERS, counters):
        c[:] = was


@pytest.fixture
def fused(monkeypatch):
    """The fused programs built while the test runs, with the engine's rules as a script
    meets them (the suite's conftest turns the varying-structure rule off)."""
    built = []
    real = engine._compile_fused

    def counting(key):
        built.append(len(key[2]))
        return real(key)

    monkeypatch.setattr(engine, "_compile_fused", counting)
    monkeypatch.setattr(engine, "_FUSE_AFTER_VARYING", 4)
    monkeypatch.setattr(_deferred_backward, "ON", [False])
    return built


def test_changing_lengths_fuse_only_a_length_that_keeps_coming(fused):
    ours, theirs = _policy(torchjax), _policy(torch)
    # 8 new lengths: the workload is one of changing structures; then a length seen twice
    # (not fused) and one seen four times (fused at its fourth pass)
    lengths = [3, 4, 5, 6, 7, 8, 9, 10, 11, 11, 12, 12, 12]
    for n in lengths:
        for g, e in zip(_grads(torchjax, ours, n), _grads(torch, theirs, n)):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert fused == []
    for g, e in zip(_grads(torchjax, ours, 12), _grads(torch, theirs, 12)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert len(fused) == 1
    for g, e in zip(_grads(torchjax, ours, 12), _grads(torch, theirs, 12)):  # the fused run
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert len(fused) == 1 and engine._seen and all(callable(f) for f in engine._seen.values())


def test_a_repeating_loop_still_fuses_at_its_second_pass(fused):
    ours, theirs = _policy(torchjax), _policy(torch)
    for rep in range(3):
        for g, e in zip(_grads(torchjax, ours, 5), _grads(torch, theirs, 5)):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
        assert len(fused) == (0 if rep == 0 else 1)


def test_the_first_structure_is_fused_at_once_unless_it_is_an_unrolled_loop(
        monkeypatch, fused):
    monkeypatch.setattr(engine, "FUSE_FIRST", [1])
    ours, theirs = _policy(torchjax), _policy(torch)
    # 9 steps: each parameter has 9 users (one per step) -> node by node
    for g, e in zip(_grads(torchjax, ours, 9), _grads(torch, theirs, 9)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert fused == [] and engine.FUSE_FIRST == [0]
    monkeypatch.setattr(engine, "FUSE_FIRST", [1])
    # 2 steps: a plain graph -> fused on its first pass
    for g, e in zip(_grads(torchjax, ours, 2), _grads(torch, theirs, 2)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert len(fused) == 1


def test_a_leaf_with_ever_more_users_sums_its_gradients_in_three_program_sizes(
        monkeypatch, fused):
    """batched.sum_all sums a leaf's gradients in chunks of 8, 4 or 2: the node-by-node
    backward of an episode of any length uses at most three summing programs per shape."""
    counts = set()
    real = batched._sum

    def counting(*gs):
        counts.add(len(gs))
        return real(*gs)

    monkeypatch.setattr(batched, "_sum", counting)
    monkeypatch.setattr(engine, "_FUSE_AFTER", 10**9)  # (node by node throughout)
    monkeypatch.setattr(engine, "_FUSE_AFTER_VARYING", 10**9)
    ours, theirs = _policy(torchjax), _policy(torch)
    for n in (2, 3, 5, 7, 9, 13, 15, 23, 31, 47, 61):
        for g, e in zip(_grads(torchjax, ours, n), _grads(torch, theirs, n)):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert counts and counts <= {2, 4, 8}


def _two_losses(lib, net, length):
    """actor_critic.py's shape of loss: two stacks of per-step terms, each summed."""
    policy, value = [], []
    for t in range(length):
        probs = lib.softmax(net(lib.tensor(STATES[t]).unsqueeze(0)), dim=1)
        lp = lib.distributions.Categorical(probs).log_prob(lib.tensor([int(ACTIONS[t])]))
        policy.append(-lp * (t + 1.0) / length)
        value.append((probs[:, 0] - 0.5) ** 2)
    net.zero_grad()
    (lib.stack(policy).sum() + lib.stack(value).sum()).backward()
    return [p.grad.numpy().copy() for p in net.parameters()]


def test_a_chain_met_twice_in_an_episode_of_a_new_length_gets_no_program(monkeypatch, fused):
    """chains._program: while structures keep changing, a chain's program waits for its
    fourth sighting: the stack-and-sum chain of each loss, met twice per pass, made a
    program (and its trace) for every episode length."""
    ours, theirs = _policy(torchjax), _policy(torch)
    for n in range(3, 8):  # the per-step chains get their programs here
        for g, e in zip(_two_losses(torchjax, ours, n), _two_losses(torch, theirs, n)):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
    made = chains.STATS["programs"]
    for n in range(8, 14):
        for g, e in zip(_two_losses(torchjax, ours, n), _two_losses(torch, theirs, n)):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
    assert chains.STATS["programs"] == made
    assert fused == []
