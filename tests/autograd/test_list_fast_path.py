"""The tensor-list fast path of dispatch (_dispatch._fast_list_call, _record._record_list):
cat, stack and the other rows whose one dynamic argument is a list of tensors give PyTorch's
values, dtypes, gradients and graph, and the general path's errors.

Each case runs in torch and torchjax; `general` runs it again with the list rows' fast
tables switched off (the general path), so a fast path that differs from it fails too.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax
from torchjax import _dispatch

RNG = np.random.default_rng(17)
LIST_ROWS = ("cat", "stack", "block_diag")


@pytest.fixture(params=["fast", "general"])
def mode(request, monkeypatch):
    for name in LIST_ROWS:
        prep = _dispatch.PREPARED[name]
        assert prep.list_fast, name  # the rows this file is about take the list fast path
        if request.param == "general":
            monkeypatch.setattr(prep, "fast", None)
    return request.param


def _arr(shape, dtype):
    a = RNG.standard_normal(shape) * 3
    return a.astype(dtype)


def _pair(a, rg):
    t = torch.tensor(a, requires_grad=rg)
    j = torchjax.tensor(a, requires_grad=rg)
    return t, j


def _check(fn, specs):
    """specs: (array, requires_grad) per tensor; compares fn's result, its dtype, grad_fn and
    the inputs' gradients through a weighted sum."""
    pairs = [_pair(a, rg) for a, rg in specs]
    want = fn(torch, [p[0] for p in pairs])
    got = fn(torchjax, [p[1] for p in pairs])
    assert str(got.dtype) == str(want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)
    assert got.requires_grad == want.requires_grad
    assert (got.grad_fn is None) == (want.grad_fn is None)
    if want.grad_fn is None:
        return
    assert got.grad_fn.name() == want.grad_fn.name()
    assert [e[0] is None for e in got.grad_fn.next_functions] == \
        [e[0] is None for e in want.grad_fn.next_functions]
    w = _arr(tuple(want.shape), np.float64)
    (want * torch.tensor(w, dtype=want.dtype)).sum().backward()
    (got * torchjax.tensor(w, dtype=got.dtype)).sum().backward()
    for (t, j) in pairs:
        assert (j.grad is None) == (t.grad is None)
        if t.grad is not None:
            assert str(j.grad.dtype) == str(t.grad.dtype)
            np.testing.assert_allclose(j.grad.numpy(), t.grad.numpy(), rtol=1e-6)


CASES = {
    "two rows, dim 1": (lambda m, ts: m.cat(ts, 1),
                        [((1, 4), np.float32, True), ((1, 3), np.float32, True)]),
    "dim -1": (lambda m, ts: m.cat(ts, dim=-1),
               [((2, 4), np.float32, True), ((2, 2), np.float32, False)]),
    "dim -2, three": (lambda m, ts: m.cat(ts, -2),
                      [((1, 3), np.float32, False), ((2, 3), np.float32, True),
                       ((3, 3), np.float32, True)]),
    "float32 + float64": (lambda m, ts: m.cat(ts),
                          [((2, 3), np.float32, True), ((1, 3), np.float64, True)]),
    "int + float": (lambda m, ts: m.cat(ts),
                    [((2, 3), np.int64, False), ((1, 3), np.float32, True)]),
    "int32 + int64": (lambda m, ts: m.cat(ts), [((2,), np.int32, False), ((3,), np.int64, False)]),
    "no grad inputs": (lambda m, ts: m.cat(ts, 0),
                       [((2, 2), np.float32, False), ((2, 2), np.float32, False)]),
    "legacy 1-D empty": (lambda m, ts: m.cat(ts, 1),
                         [((2, 3), np.float32, True), ((0,), np.float32, True),
                          ((2, 1), np.float32, True)]),
    "empty rows": (lambda m, ts: m.cat(ts, 0),
                   [((0, 3), np.float32, True), ((2, 3), np.float32, True)]),
    "one tensor": (lambda m, ts: m.cat(ts, 0), [((2, 3), np.float64, True)]),
    "tuple": (lambda m, ts: m.cat(tuple(ts), 1),
              [((2, 1), np.float32, True), ((2, 2), np.float32, True)]),
    "stack dim -1": (lambda m, ts: m.stack(ts, -1),
                     [((2, 3), np.float32, True), ((2, 3), np.float64, False)]),
    "stack": (lambda m, ts: m.stack(ts), [((3,), np.float32, True), ((3,), np.float32, True)]),
    "block_diag": (lambda m, ts: m.block_diag(*ts),
                   [((2, 2), np.float32, True), ((1, 3), np.float32, True)]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_matches_torch(case, mode):
    fn, specs = CASES[case]
    # twice: the first call fills the fast table, the second is served by it
    for _ in range(2):
        _check(fn, [(_arr(s, d), rg) for s, d, rg in specs])


def test_non_leaf_inputs_and_hooks(mode):
    """Inputs made by other ops (edges to their nodes), a hook and retain_grad on the result."""
    a = _arr((2, 3), np.float32)
    got = {}
    for m in (torch, torchjax):
        x = m.tensor(a, requires_grad=True)
        y = m.tensor(a[:1], requires_grad=True)
        seen = []
        c = m.cat([x.tanh(), y * 2, x[:1]], 0)
        c.retain_grad()
        c.register_hook(lambda g: seen.append(g.clone()) or g * 3)
        (c ** 2).sum().backward()
        got[m] = (c.grad.numpy(), seen[0].numpy(), x.grad.numpy(), y.grad.numpy())
    for w, g in zip(got[torch], got[torchjax]):
        # atol: tanh's derivative near 1 - tanh(x)**2 ~ 0 differs in the last float32 bits
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_versions_and_inplace_after(mode):
    """cat saves no input, so changing one in place after it is fine in both; the result has
    its own version counter."""
    for m in (torch, torchjax):
        x = m.ones(2, 2, requires_grad=True)
        h = x * 1
        c = m.cat([h, h], 1)
        assert c._version == 0
        h.add_(1)  # not saved by cat: no error at backward
        c.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.full((2, 2), 2.0))
        c2 = m.cat([x * 1], 0)
        c2.mul_(2)
        assert c2._version == 1


def test_no_grad_and_anomaly(mode):
    x = torchjax.ones(2, requires_grad=True)
    with torchjax.no_grad():
        c = torchjax.cat([x, x])
    assert not c.requires_grad and c.grad_fn is None
    with torchjax.autograd.detect_anomaly():
        c = torchjax.cat([x, x * 2])
        c.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


@pytest.mark.parametrize("make", [
    lambda m: m.cat([m.ones(()), m.ones(())]),
    lambda m: m.cat([m.ones(2, 3), m.ones(2, 4)], 0),
    lambda m: m.cat([m.ones(2, 3), m.ones(2)], 1),
    lambda m: m.cat([m.ones(2), 1.0]),
    lambda m: m.cat([], 0),
    lambda m: m.stack([m.ones(2), m.ones(3)]),
    lambda m: m.cat([m.ones(2, 3)], 2),
])
def test_errors_like_torch(make, mode):
    with pytest.raises(Exception) as want:
        make(torch)
    with pytest.raises(type(want.value)) as got:
        make(torchjax)
    assert str(got.value) == str(want.value)


def test_int_only_has_no_node(mode):
    a = torchjax.tensor([1, 2])
    c = torchjax.cat([a, a])
    assert c.dtype == torchjax.int64 and c.grad_fn is None and not c.requires_grad
