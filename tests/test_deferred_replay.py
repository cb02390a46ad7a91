"""A sequence checked against the thread's last repeated one as it is recorded (the replay:
torchjax/_deferred.py, `_Trace`; and for a forward run with its backward as one program,
_deferred_backward's `_Backward`): PyTorch's values and gradients, whether the replay is taken
or must not be (a step whose ops differ in the middle, other shapes, dtypes, static
arguments, arrays in other places, requires_grad changing, hooks, retained grads, in-place
writes through views, nodes recorded outside the sequence).

Each test repeats a step so that its sequence gets a program and a trace (the suite compiles
programs at once: tests/conftest.py), and checks the replay counts where it must be taken.
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
    _deferred_replay,
    _result_hooks,
)

RNG = np.random.default_rng(2525)
A = RNG.standard_normal((4, 5)).astype(np.float32)
B = RNG.standard_normal((4, 5)).astype(np.float32)
X = RNG.standard_normal((6, 4)).astype(np.float32)
Y = RNG.standard_normal((6, 1)).astype(np.float32)
W1 = RNG.standard_normal((8, 4)).astype(np.float32) * 0.5
B1 = RNG.standard_normal(8).astype(np.float32) * 0.1
W2 = RNG.standard_normal((1, 8)).astype(np.float32) * 0.5
B2 = RNG.standard_normal(1).astype(np.float32) * 0.1


@pytest.fixture(autouse=True)
def replay_on(monkeypatch):
    monkeypatch.setattr(_result_hooks.STATE, "hooks", ())  # (see test_deferred.py)
    monkeypatch.setattr(_deferred, "_ALONE", {}, raising=False)
    was = _deferred.ON[0], _deferred.GRAD[0], _deferred.REPLAY[0], _deferred_backward.ON[0]
    _deferred.ON[0] = _deferred.GRAD[0] = _deferred.REPLAY[0] = True
    _deferred_backward.ON[0] = True
    _deferred.flush()
    loc = _deferred_replay.LOCAL
    loc.trace = loc.ran = None
    loc.traces.clear()
    loc.seen.clear()
    _deferred_grad.reset()
    yield
    _deferred.flush()
    (_deferred.ON[0], _deferred.GRAD[0], _deferred.REPLAY[0],
     _deferred_backward.ON[0]) = was
    _deferred_grad.reset()


def test_a_pending_tensor_has_every_slot_a_wrapped_one_has():
    from torchjax._tensor import Tensor
    ref = Tensor._wrap(torchjax.tensor(A)._data)
    t = Tensor._pending(("seq", 0, None))
    for name in Tensor.__slots__:
        if name in ("_data", "__weakref__", "__dict__"):
            continue
        assert getattr(t, name) == getattr(ref, name), name
    assert "_data" not in dir(t) or t.__dict__ == {"_lazy": ("seq", 0, None)}
    assert t.__dict__ == {"_lazy": ("seq", 0, None)}


def test_a_deferred_node_has_every_slot_an_eager_one_has():
    # (_deferred_grad.attach makes its nodes without Node.__init__: the same slots, set alike)
    from torchjax._autograd.node import Node
    w = torchjax.tensor(W1, requires_grad=True)
    x = torchjax.tensor(X)
    nodes = {}
    for on in (False, True, True):
        _deferred.GRAD[0] = on
        h = torchjax.nn.functional.linear(x, w)
        nodes[on] = h.grad_fn
        h.sum().backward()
    _deferred.GRAD[0] = True
    eager, deferred = nodes[False], nodes[True]
    assert type(eager) is type(deferred)
    for name in Node.__slots__:
        if name in ("__weakref__", "_saved", "_edges", "_versions"):
            continue
        assert getattr(deferred, name) is getattr(eager, name) or \
            getattr(deferred, name) == getattr(eager, name), name


def _replays():
    return _deferred.STATS["replayed"]


def _value(t):
    return np.asarray(t.detach().numpy())


def _check(fn, *arrays, rtol=1e-5, atol=1e-6):
    """fn on torch and torchjax tensors made from `arrays` under no_grad: the same values."""
    with torch.no_grad():
        ref = fn(torch, *[torch.tensor(a) for a in arrays])
    with torchjax.no_grad():
        got = fn(torchjax, *[torchjax.tensor(a) for a in arrays])
    assert tuple(got.shape) == tuple(ref.shape)
    assert str(got.dtype) == str(ref.dtype)
    np.testing.assert_allclose(_value(got), ref.numpy(), rtol=rtol, atol=atol)


def _chain(lib, x):
    return (x * 2 + 1).sum()


def test_a_repeated_chain_follows_its_trace_with_pytorchs_values():
    x = torchjax.tensor(A)
    ref = float((torch.tensor(A) * 2 + 1).sum())
    for step in range(30):
        if step == 20:  # (by now its numbers are kept constants, its program made)
            before = _replays()
        with torchjax.no_grad():
            y = _chain(torchjax, x)
        assert float(y) == pytest.approx(ref, rel=1e-6)
    assert _replays() - before == 10


@pytest.mark.parametrize("other", [
    lambda lib, x, y: (x * 2 - 1).sum(),          # another row in the middle
    lambda lib, x, y: (x * 2 + 1).mean(),         # another last row
    lambda lib, x, y: (x * 3 + 1).sum(),          # another number
    lambda lib, x, y: (x * 2 + y).sum(),          # a tensor where a number was
    lambda lib, x, y: (x * 2 + 1).sum(0),         # another static argument
    lambda lib, x, y: (x * 2 + 1).sum() * 2,      # one op more
    lambda lib, x, y: x * 2,                      # fewer ops
    lambda lib, x, y: (y * x + 1).sum(),          # inputs swapped
    lambda lib, x, y: (x * x + 1).sum(),          # the same array twice
    lambda lib, x, y: (lib.cat([x * y, y]) + 1).sum(),  # a list row after the first op
    lambda lib, x, y: (x * y).chunk(2)[1].sum() + (x * y + 1).sum(),  # pieces, then more
])
def test_a_step_that_differs_from_the_last_one_takes_its_own_way(other):
    x, y = torchjax.tensor(A), torchjax.tensor(B)
    base = lambda lib, x, y: (x * y + 1).sum()  # noqa: E731
    for _ in range(6):  # the trace every later step is checked against
        with torchjax.no_grad():
            base(torchjax, x, y).item()
    for _ in range(3):
        _check(other, A, B)
        _check(base, A, B)


def test_other_shapes_and_dtypes_are_other_sequences():
    for _ in range(6):
        _check(_chain, A)
    for _ in range(3):
        _check(_chain, A[:3])
        _check(_chain, A.astype(np.float64))
        _check(_chain, A[:, :2].copy())
        _check(_chain, A)


def test_true_and_one_are_different_static_arguments():
    # std(x, 1) is over dimension 1; std(x, True) is unbiased over everything: equal as
    # Python values, different calls
    def by_dim(lib, x):
        return lib.std(x * 2, 1)

    def unbiased(lib, x):
        return lib.std(x * 2, True)

    for _ in range(6):
        _check(by_dim, A)
    for _ in range(3):
        _check(unbiased, A)
        _check(by_dim, A)


def test_a_static_argument_of_another_type_is_another_kind_of_call():
    # (True == 1 and (1,) is not 1: PyTorch's arguments never mix them for one op, but the
    # fast path keys the types, so the replay must too: dispatch's own call here)
    from torchjax._dispatch import PREPARED, dispatch
    x = torchjax.tensor(A)

    def step(dim):
        with torchjax.no_grad():
            y = dispatch(PREPARED["sum"], (x * 2,), (dim, False, None))
        seq = y._lazy[0] if y._lazy is not None else None  # (a new kind runs at once)
        if seq is not None:
            _deferred.materialize(seq)  # (an op that followed the trace: the trace's entry)
        token = None if seq is None else seq.key[seq.ops[-1][2] - 1]
        np.testing.assert_allclose(_value(y), (A * 2).sum(1), rtol=1e-6)
        return token
    for _ in range(8):
        by_int = step(1)
    assert by_int is not None
    for _ in range(2):
        assert step(True) != by_int
        assert step((1,)) != by_int
        assert step(1) == by_int


def test_sequences_taking_turns_each_follow_their_trace():
    # A, B, A, B, ...: each sequence is checked against the one that came after the last
    # one last time; the irregular A, B, A, A, B, ... then takes its own way at times
    x = torchjax.tensor(A)
    for step in range(24):
        if step == 19:
            before = _replays()
        _check(_chain, A)
        _check(lambda lib, x: (x * x).mean(1) - 3, A)
    assert _replays() - before == 10
    for step in range(6):
        _check(_chain, A)
        _check(lambda lib, x: (x * x).mean(1) - 3, A)
        with torchjax.no_grad():
            _chain(torchjax, x).item()


def test_a_sequence_that_stops_inside_the_trace_gets_its_own():
    x = torchjax.tensor(A)
    for _ in range(8):
        with torchjax.no_grad():
            _chain(torchjax, x).item()
    for step in range(12):  # the first two ops of the chain, read there
        if step == 8:
            before = _replays()
        _check(lambda lib, x: x * 2 + 1, A)
    assert _replays() - before == 4


def test_another_thread_reads_a_result_of_a_sequence_that_follows_its_trace():
    import threading
    x = torchjax.tensor(A)
    for _ in range(8):
        with torchjax.no_grad():
            (x * 2 + 1).sum().item()
    for _ in range(3):
        with torchjax.no_grad():
            h = x * 2
            y = h + 1
            z = y.sum()
        assert h._lazy is not None and h._lazy[0].exp is not None  # (following the trace)
        out = []
        t = threading.Thread(target=lambda: out.append(y.numpy().copy()))
        t.start()
        t.join()
        np.testing.assert_allclose(out[0], A * 2 + 1, rtol=1e-6)
        assert float(z) == pytest.approx(float((A * 2 + 1).sum()), rel=1e-5)
        np.testing.assert_allclose(_value(h), A * 2, rtol=1e-6)


def test_in_place_writes_between_steps_are_read():
    xs = {lib: lib.tensor(A) for lib in (torch, torchjax)}
    for step in range(10):
        got = {}
        for lib, x in xs.items():
            with lib.no_grad():
                got[lib] = float(_chain(lib, x))
                x[1].add_(0.5)  # through a view: x's array changes, its place does not
                x.mul_(1.01)
        assert got[torchjax] == pytest.approx(got[torch], rel=1e-5), step


def test_a_pending_result_written_through_a_view():
    def fn(lib, x):
        h = x * 2 + 1
        h[0].mul_(3)  # reads h: the sequence runs, and the next one starts after it
        return (h * h).sum()
    for _ in range(8):
        _check(fn, A, rtol=1e-5)


# -- forwards run with their backward as one program ---------------------------------------

def _params(lib):
    return [lib.tensor(a, requires_grad=True) for a in (W1, B1, W2, B2)]


def _mlp_loss(lib, params, x, y):
    F = lib.nn.functional
    w1, b1, w2, b2 = params
    return F.mse_loss(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), y)


def _train(lib, steps, between=None, loss_fn=_mlp_loss):
    """SGD steps written out (no optimizer): per step the loss and every gradient."""
    params = _params(lib)
    x, y = lib.tensor(X), lib.tensor(Y)
    out = []
    for step in range(steps):
        if between is not None:
            between(lib, step, params)
        loss = loss_fn(lib, params, x, y)
        loss.backward()
        grads = [None if p.grad is None else p.grad.numpy().copy() for p in params]
        out.append((float(loss), grads))
        with lib.no_grad():
            for p in params:
                if p.grad is not None:
                    p.sub_(0.05 * p.grad)
                    p.grad = None
    return out


def _same(got, ref):
    assert len(got) == len(ref)
    for step, ((lg, gg), (lr, gr)) in enumerate(zip(got, ref)):
        assert lg == pytest.approx(lr, rel=1e-5, abs=1e-6), step
        for a, b in zip(gg, gr):
            assert (a is None) == (b is None), step
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=str(step))


def test_training_steps_follow_their_trace_with_pytorchs_gradients():
    before = _deferred_backward.STATS["replayed"]
    _same(_train(torchjax, 14), _train(torch, 14))
    assert _deferred_backward.STATS["replayed"] - before >= 6


def test_requires_grad_changing_between_steps():
    def between(lib, step, params):
        if step == 7:
            params[0].requires_grad_(False)
        if step == 10:
            params[0].requires_grad_(True)
    _same(_train(torchjax, 14, between), _train(torch, 14, between))


def test_a_hook_or_a_retained_grad_after_the_replay():
    kept = {}

    def loss_fn(lib, params, x, y):
        w1, b1, w2, b2 = params
        F = lib.nn.functional
        h = F.relu(F.linear(x, w1, b1))
        step = kept.setdefault(lib, [0])
        if step[0] in (8, 9):
            h.register_hook(lambda g: g * 2)
        if step[0] == 11:
            h.retain_grad()
            kept[(lib, "h")] = h
        step[0] += 1
        return F.mse_loss(F.linear(h, w2, b2), y)

    got = _train(torchjax, 14, loss_fn=loss_fn)
    ref = _train(torch, 14, loss_fn=loss_fn)
    _same(got, ref)
    np.testing.assert_allclose(kept[(torchjax, "h")].grad.numpy(),
                               kept[(torch, "h")].grad.numpy(), rtol=1e-5, atol=1e-6)


def test_a_node_recorded_outside_the_sequence():
    def loss_fn(lib, params, x, y):
        w1, b1, w2, b2 = params
        F = lib.nn.functional
        h = F.linear(x, w1, b1)
        if lib is torchjax and h._lazy is not None:
            h._data  # (its sequence runs: h's node was recorded before the rest)
        return F.mse_loss(F.linear(F.relu(h), w2, b2), y)
    _same(_train(torchjax, 12, loss_fn=loss_fn), _train(torch, 12, loss_fn=loss_fn))


def test_a_step_whose_forward_differs_in_the_middle():
    def loss_fn(lib, params, x, y):
        w1, b1, w2, b2 = params
        F = lib.nn.functional
        h = F.linear(x, w1, b1)
        # every third step another activation, in the middle of the forward
        h = lib.tanh(h) if loss_fn.step[lib] % 3 == 2 else F.relu(h)
        loss_fn.step[lib] += 1
        return F.mse_loss(F.linear(h, w2, b2), y)
    loss_fn.step = {torch: 0, torchjax: 0}
    _same(_train(torchjax, 15, loss_fn=loss_fn), _train(torch, 15, loss_fn=loss_fn))


def test_a_saved_input_changed_in_place_after_the_replayed_forward_raises():
    params = _params(torchjax)
    x, y = torchjax.tensor(X), torchjax.tensor(Y)
    for _ in range(8):
        _mlp_loss(torchjax, params, x, y).backward()
        for p in params:
            p.grad = None
    loss = _mlp_loss(torchjax, params, x, y)
    with torchjax.no_grad():
        params[2].mul_(2)  # saved by the second linear
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_switched_off_every_op_builds_its_key():
    _deferred.REPLAY[0] = False
    x = torchjax.tensor(A)
    before = _replays()
    for _ in range(10):
        _check(_chain, A)
        with torchjax.no_grad():
            _chain(torchjax, x).item()
    assert _replays() == before
    assert _deferred_replay.LOCAL.trace is None
