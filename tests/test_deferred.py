"""Deferred op sequences (torchjax/_deferred.py) give PyTorch's results.

Deferral is switched on for every test here; each test first runs its code once so that the
fast path's entries exist (only kinds of calls seen before are deferred), then checks that
the second run did defer (a pending tensor), and compares values, errors and gradients with
torch 2.13.
"""

from __future__ import annotations

import threading

import jax
import numpy as np
import pytest
import torch

import torchjax
from torchjax import _deferred, _deferred_programs, _result_hooks, _scalar_args

RNG = np.random.default_rng(19)
A = RNG.standard_normal((4, 5)).astype(np.float32)
B = RNG.standard_normal((4, 5)).astype(np.float32)


@pytest.fixture(autouse=True)
def deferred_on(monkeypatch):
    # (a DTensor made earlier in the worker leaves its result hook installed, and no op is
    # deferred while one is: these tests are about plain tensors)
    monkeypatch.setattr(_result_hooks.STATE, "hooks", ())
    was = _deferred.ON[0]
    # (kinds of call earlier tests ran alone would start no sequence here: _deferred._alone)
    monkeypatch.setattr(_deferred, "_ALONE", {}, raising=False)
    _deferred.ON[0] = True
    yield
    _deferred.flush()
    _deferred.ON[0] = was


def _pending(t):
    return t._lazy is not None


def _both(fn, *arrays, warm=True):
    """fn run with torch and twice with torchjax (the first run makes the fast path's
    entries): (torch result, torchjax result of the second run)."""
    ref = fn(torch, *[torch.tensor(a) for a in arrays])
    if warm:
        fn(torchjax, *[torchjax.tensor(a) for a in arrays])
    got = fn(torchjax, *[torchjax.tensor(a) for a in arrays])
    return ref, got


def _close(ref, got, **kw):
    assert got.dtype == getattr(torchjax, str(ref.dtype).split(".")[1])
    np.testing.assert_allclose(np.asarray(got.detach().numpy()), ref.detach().numpy(), **kw)


def test_no_grad_chain_is_deferred_and_runs_as_one_program():
    # a shape of its own: the counts below start from fast-path entries no other test made
    a = RNG.standard_normal((3, 17)).astype(np.float32)
    x = torchjax.tensor(a)
    before = dict(_deferred.STATS)
    counts = []
    for i in range(14):  # (a number used 8 times becomes a kept array: _scalar_args)
        with torchjax.no_grad():
            y = (x * 2 + 1).sum()
        if i:
            assert _pending(y)
        assert float(y) == pytest.approx(float((torch.tensor(a) * 2 + 1).sum()), rel=1e-6)
        counts.append((_deferred.STATS["compiled"], _deferred.STATS["op_by_op"]))
    # the first run is eager, the second op by op, then one program for the rest (once the
    # numbers 2 and 1 have each been used 8 times in the process, each becomes a constant
    # of the program: up to two more programs, then none)
    assert 1 <= _deferred.STATS["compiled"] - before["compiled"] <= 3
    assert _deferred.STATS["op_by_op"] - before["op_by_op"] >= 1
    assert counts[-1] == counts[-4]  # the last runs: one cached program, nothing op by op
    # x * 2 and + 1 died inside the expression: the program returns the sum only
    assert list(_deferred._PROGRAMS)[-1][1] == (2,)


def test_new_scalars_reuse_the_program():
    x = torchjax.tensor(A)
    for k in range(12):  # 0.5 repeats: it becomes a kept array, then a program constant
        with torchjax.no_grad():
            (x * (k + 100.25) - 0.5).sum().item()
    before = _deferred.STATS["compiled"]
    for k in range(20):  # a number is an argument of the program, not a constant of it
        with torchjax.no_grad():
            got = (x * (k + 0.25) - 0.5).sum().item()
        assert got == pytest.approx(float((torch.tensor(A) * (k + 0.25) - 0.5).sum()),
                                    rel=1e-5)
    assert _deferred.STATS["compiled"] == before


def test_a_program_compiled_on_another_thread(monkeypatch):
    """BACKGROUND (on outside the test suite): the sequence runs op by op, with the right
    values, until the other thread's compile is done, then as its program."""
    monkeypatch.setattr(_deferred_programs, "BACKGROUND", True)
    # (fresh tables: what earlier tests in this process counted would move the iterations
    # where the program is made and where 3.5 and 1.75 become kept constants; a program made
    # just before that switch is never called again and keeps its placeholder)
    monkeypatch.setattr(_deferred_programs, "SEEN", {})
    monkeypatch.setattr(_deferred_programs, "PROGRAMS", {})
    monkeypatch.setattr(_deferred, "_PROGRAMS", _deferred_programs.PROGRAMS)
    monkeypatch.setattr(_scalar_args, "_SEEN", {})
    monkeypatch.setattr(_scalar_args, "_ARRAYS", {})
    x = torchjax.tensor(A)
    want = float((torch.tensor(A) * 3.5 - 1.75).exp().sum())
    made = []
    counts = []
    for _ in range(24):
        with torchjax.no_grad():
            y = (x * 3.5 - 1.75).exp().sum()
        assert float(y) == pytest.approx(want, rel=1e-5)
        counts.append(_deferred.STATS["op_by_op"])
        queued = [p for p in _deferred._PROGRAMS.values()
                  if isinstance(p, _deferred_programs._Compiling) and p not in made]
        # (op by op while it compiles; the wait keeps the test's end deterministic)
        made += queued
        _deferred_programs.wait()
    assert made  # compiled apart (once more when 3.5 and 1.75 became constants)
    assert counts[-1] == counts[-4]  # the last runs: the program, nothing op by op
    assert all(c.done for c in made)
    # the program the last runs used has replaced its placeholder
    assert any(_deferred._PROGRAMS.get(c.key) is c.fn for c in made)


@pytest.mark.parametrize("fn", [
    lambda lib, a, b: lib.tanh(a * b + 1).mean(dim=1),
    lambda lib, a, b: (a.exp() - b).relu().sum(0, keepdim=True),
    lambda lib, a, b: lib.softmax(a @ b.t(), dim=-1) * 3,
    lambda lib, a, b: (a > b).sum(),  # bool -> int64 sum
    lambda lib, a, b: (a.to(lib.float64) * b + 2).sum(),  # float64 result
    lambda lib, a, b: (a.to(lib.int32) * 3 + 1) // 2,  # integer arithmetic
    lambda lib, a, b: lib.maximum(a, b) - lib.minimum(a, b).abs(),
])
def test_values_and_dtypes_match_torch(fn):
    ref, got = _both(lambda lib, a, b: fn(lib, a, b), A, B)
    _close(ref, got, rtol=1e-5, atol=1e-6)


def test_results_are_pending_until_read():
    x, w = torchjax.tensor(A), torchjax.tensor(B)
    for _ in range(2):
        y = x * w
        z = y + 1
    assert _pending(y) and _pending(z)
    # shape reads use the shape known at recording: the sequence stays pending (a loss's
    # size check must not cut a forward in two)
    assert z.shape == (4, 5) and z.size() == (4, 5) and z.size(-1) == 5
    assert z.dim() == 2 and z.ndim == 2
    assert _pending(y) and _pending(z)
    assert z.numpy().shape == (4, 5)  # reading the value runs the sequence (y too: alive)
    assert not _pending(y) and not _pending(z)
    np.testing.assert_allclose(y.numpy(), A * B, rtol=1e-6)
    np.testing.assert_allclose(z.numpy(), A * B + 1, rtol=1e-6)


def test_every_read_sees_the_value():
    x = torchjax.tensor(A)
    ref = torch.tensor(A) * 2 - 1
    reads = [
        lambda lib, t: t.numpy().copy(), lambda lib, t: t.tolist(), lambda lib, t: repr(t),
        lambda lib, t: t.sum().item(), lambda lib, t: t[1], lambda lib, t: t.view(-1),
        lambda lib, t: t.clone(), lambda lib, t: np.asarray(t), lambda lib, t: t.detach(),
        lambda lib, t: t.max(dim=1).values, lambda lib, t: lib.cat([t, t]),
        lambda lib, t: t.shape, lambda lib, t: t.dtype, lambda lib, t: bool(t[0, 0] > 0),
    ]
    ref_reads = [f(torch, ref) for f in reads]
    for _ in range(2):
        x * 2 - 1
    for f, r in zip(reads, ref_reads):
        y = x * 2 - 1
        assert _pending(y)
        out = f(torchjax, y)
        if isinstance(r, torch.dtype):
            assert str(out) == str(r)
            continue
        if isinstance(r, torch.Tensor):
            np.testing.assert_allclose(np.asarray(out.numpy()), r.numpy(), rtol=1e-6)
        elif isinstance(r, str):
            assert out == r
        else:
            np.testing.assert_allclose(np.asarray(out), np.asarray(r), rtol=1e-6)


def test_shape_error_is_raised_at_the_op():
    x, bad = torchjax.tensor(A), torchjax.tensor(np.ones(3, np.float32))
    for _ in range(3):
        y = x * 2
        with pytest.raises(RuntimeError, match=r"size of tensor a \(5\) must match the size "
                                               r"of tensor b \(3\) at non-singleton dimension 1"):
            y + bad
    with pytest.raises(RuntimeError) as ref:
        torch.tensor(A) * 2 + torch.ones(3)
    assert "must match the size of tensor b (3)" in str(ref.value)


def test_in_place_writes_see_pending_values_and_keep_old_inputs():
    def fn(lib, a, b):
        with lib.no_grad():
            y = a * 2  # deferred
            a.add_(1)  # an in-place write to its input after the op: y keeps the old a
            v = a * y
            u = b * 3
            u.data = a  # replaces a pending result's value before its sequence ran
            z = y - u
            z.mul_(3)  # an in-place write to a pending result
            return lib.stack([y, z, a, v, u])
    ref, got = _both(fn, A, B)
    _close(ref, got, rtol=1e-6)


def test_gradients_through_pending_constants():
    def fn(lib, a, b):
        w = b.clone().requires_grad_()
        with lib.no_grad():
            c = (a * 0.5 + 1).tanh()  # deferred
        d = a - 1  # deferred too: nothing requires grad
        loss = ((w * c).sum() + (w * d).mean()) * 2
        loss.backward()
        return loss, w.grad
    (rl, rg), (gl, gg) = _both(fn, A, B)
    _close(rl, gl, rtol=1e-5)
    _close(rg, gg, rtol=1e-5, atol=1e-6)


def test_ops_that_record_grad_are_not_deferred(monkeypatch):
    monkeypatch.setattr(_deferred, "GRAD", [False])  # (on: tests/test_deferred_grad.py)
    x = torchjax.tensor(A, requires_grad=True)
    for _ in range(2):
        y = x * 2
    assert not _pending(y) and y.grad_fn is not None
    with torchjax.no_grad():
        z = x * 2
    assert _pending(z) and not z.requires_grad


def test_dead_results_are_not_computed_and_long_sequences_are_cut(monkeypatch):
    monkeypatch.setattr(_deferred, "MAX_OPS", 8)
    x = torchjax.tensor(A)
    for _ in range(2):
        y = x + 1
    ys = []
    for i in range(20):
        y = y * 1.5 if i % 2 else y - 0.25
        ys.append(y)
    ref = torch.tensor(A) + 1
    refs = []
    for i in range(20):
        ref = ref * 1.5 if i % 2 else ref - 0.25
        refs.append(ref)
    assert not _pending(ys[0])  # the first 8 ops ran when the sequence reached MAX_OPS
    for g, r in zip(ys, refs):
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-5)


def test_pending_tensor_read_from_another_thread():
    x = torchjax.tensor(A)
    for _ in range(2):
        y = x * 4
    assert _pending(y)
    out = []
    t = threading.Thread(target=lambda: out.append(y.numpy().copy()))
    t.start()
    t.join()
    np.testing.assert_allclose(out[0], A * 4, rtol=1e-6)


def test_off_switch_runs_eagerly():
    _deferred.ON[0] = False
    x = torchjax.tensor(A)
    for _ in range(2):
        y = x * 2
    assert not _pending(y)


def test_pending_tensor_read_inside_a_compiled_step():
    x = torchjax.tensor(A)
    for _ in range(2):
        y = x * 3
    assert _pending(y)
    step = torchjax.compile(lambda a: (a + y).sum(0))
    for b in (B, B * 2):
        got = step(torchjax.tensor(b))
        np.testing.assert_allclose(got.numpy(), (A * 3 + b).sum(0), rtol=1e-5)
    assert not _pending(y) and isinstance(y.numpy(), np.ndarray)


def test_pending_tensor_read_inside_a_jax_trace():
    x = torchjax.tensor(A)
    for _ in range(2):
        y = x * 5
    assert _pending(y)
    got = jax.jit(lambda a: y._data + a)(B)  # the first read happens while JAX traces
    np.testing.assert_allclose(np.asarray(got), A * 5 + B, rtol=1e-6)
    np.testing.assert_allclose(y.numpy(), A * 5, rtol=1e-6)  # concrete, not a leaked tracer


def test_pending_tensor_read_inside_vmap():
    x = torchjax.tensor(A)
    for _ in range(2):
        y = x - 2
    assert _pending(y)
    got = torchjax.func.vmap(lambda row: row * y[0])(torchjax.tensor(B))
    np.testing.assert_allclose(got.numpy(), B * (A[0] - 2), rtol=1e-6)
    np.testing.assert_allclose(y.numpy(), A - 2, rtol=1e-6)  # concrete, not a leaked tracer


def test_arrays_committed_to_a_device_are_not_deferred():
    from torchjax._tensor import Tensor
    x = Tensor._wrap(jax.device_put(A, jax.devices()[-1]))  # committed, like x.to(device)
    for _ in range(2):
        y = x * 2
    assert not _pending(y)
    np.testing.assert_allclose(y.numpy(), A * 2, rtol=1e-6)


@pytest.mark.parametrize("fn", [
    lambda lib, a, i: (a * 3 + 1.5) * True,
    lambda lib, a, i: (a.to(lib.int32) * 3.0 - 2) / 7,  # int tensor, float number
    lambda lib, a, i: (a.to(lib.int64) + True) * 2,
    lambda lib, a, i: (a.to(lib.float16) * 1e-3 + 1) > 1,
    lambda lib, a, i: a * (i % 3) - 0.5 * (i % 2),  # a few values, kept after 8 uses each
])
def test_repeated_numbers_as_program_constants(fn):
    ta, pa = torchjax.tensor(A * 10), torch.tensor(A * 10)
    for i in range(30):  # numbers become kept device arrays, then program constants
        got = fn(torchjax, ta, i)
        ref = fn(torch, pa, i)
        _close(ref, got, rtol=1e-3 if ref.dtype == torch.float16 else 1e-6)


def test_threads_recording_and_reading_each_others_pending_tensors():
    """One thread records while others read its pending tensors (running its sequence) and
    use them in their own deferred ops: every value is right, nothing hangs."""
    x = torchjax.tensor(A)
    made, errors, done = [], [], threading.Event()
    for _ in range(2):
        (x * 2 + 1) - x

    def producer():
        try:
            _deferred.ON[0] = True
            for k in range(300):
                made.append((k, x * 2 + k))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)
        finally:
            done.set()

    def consumer():
        try:
            seen = 0
            while not done.is_set() or seen < len(made):
                if seen < len(made):
                    k, t = made[seen]
                    got = (t - x).numpy()  # an op of this thread on the producer's tensor
                    np.testing.assert_allclose(got, A + k, rtol=1e-5, atol=1e-5)
                    seen += 1
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=producer)] + [
        threading.Thread(target=consumer) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors, errors
    for k, t in made:
        np.testing.assert_allclose(t.numpy(), A * 2 + k, rtol=1e-6)


def test_cat_and_stack_are_deferred():
    def fn(lib, a, b):
        y = a * 2
        return lib.cat([y - lib.stack((b, y)).sum(0), b, y + 1], 1)
    ref = fn(torch, torch.tensor(A), torch.tensor(B))
    x, w = torchjax.tensor(A), torchjax.tensor(B)
    for _ in range(2):
        fn(torchjax, x, w)
    for _ in range(2):  # the second time, this kind of call has its fast-path entry
        y = x * 2
        c = torchjax.cat([y, w], 0)
    assert _pending(c)
    np.testing.assert_allclose(c.numpy(), np.concatenate([A * 2, B]), rtol=1e-6)
    _close(ref, fn(torchjax, x, w), rtol=1e-6)


def test_save_and_load_pending_and_computed_results(tmp_path):
    """A tensor's __dict__ is its Python state, which torch.save writes: the pending mark is
    never part of it (a saved mark made torch.load refuse the file)."""
    x = torchjax.tensor(A)
    for _ in range(2):  # (the second run defers)
        with torchjax.no_grad():
            p = x * 2 + 1
            q = (x - 1).exp()
    assert _pending(p) and _pending(q)
    float(q.sum())  # runs the sequence: p and q computed
    with torchjax.no_grad():
        r = x * 2 + 1  # still pending when saved
    assert _pending(r) and not _pending(p)
    torchjax.save({"p": p, "q": q, "r": r}, tmp_path / "t.pt")
    got = torchjax.load(tmp_path / "t.pt")
    oracle = torch.load(tmp_path / "t.pt", weights_only=False)  # PyTorch reads it too
    t = torch.tensor(A)
    want = {"p": t * 2 + 1, "q": (t - 1).exp(), "r": t * 2 + 1}
    for k, w in want.items():
        np.testing.assert_allclose(got[k].numpy(), w.numpy(), rtol=1e-6)
        np.testing.assert_allclose(oracle[k].numpy(), w.numpy(), rtol=1e-6)
        assert "_lazy" not in vars(got[k]) and "_lazy" not in vars(oracle[k])


def test_a_kind_that_always_runs_alone_starts_no_sequence(monkeypatch):
    """An op whose result is read at once ran alone in its sequence: after
    ALONE_AFTER such runs that kind of call runs eagerly, other kinds still defer, and every
    value stays PyTorch's."""
    monkeypatch.setattr(_deferred, "_ALONE", {}, raising=False)
    x = torchjax.tensor(A)
    got = []
    deferred = []
    for _ in range(6):
        y = x * 3.5  # read at once below: a one-op sequence
        deferred.append(_pending(y))
        got.append(y.numpy().reshape(-1).copy())
    assert deferred[1] and not deferred[-1]  # (the first call makes the fast-path entry)
    for _ in range(2):
        z = (x + 2.5).sum()  # a kind that does not run alone is still deferred
    assert _pending(z)
    ref = torch.tensor(A) * 3.5
    for g in got:
        np.testing.assert_allclose(g, ref.view(-1).numpy(), rtol=1e-6)
    np.testing.assert_allclose(float(z.item()), float((torch.tensor(A) + 2.5).sum()),
                               rtol=1e-5)


def test_a_kind_left_eager_is_retried_ever_more_rarely(monkeypatch):
    """A kind of call that runs alone is tried again after ALONE_RETRY calls; when the retry
    runs alone too, the kind is left eager at once and the wait doubles (a retry changes the
    step's next sequence, which then runs op by op: the tree net paid it every 66 steps)."""
    monkeypatch.setattr(_deferred, "_ALONE", {}, raising=False)
    monkeypatch.setattr(_deferred, "ALONE_RETRY", 3)
    x = torchjax.tensor(A)
    (x * 4.5).numpy()  # (the kind's first call runs eagerly and makes its entry)
    _deferred._ALONE.clear()  # (... or, made by an earlier test, ran alone)
    deferred = []
    for _ in range(20):
        y = x * 4.5
        deferred.append(_pending(y))
        np.testing.assert_allclose(y.numpy(), A * 4.5, rtol=1e-6)
    # two runs alone, 3 eager, a retry alone, 6 eager, a retry alone, ...
    assert [i for i, d in enumerate(deferred) if d] == [0, 1, 5, 12]
