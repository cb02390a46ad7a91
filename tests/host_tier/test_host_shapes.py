"""The host tier's templates for sizes that change from call to call (_host_shapes.py): one
symbolic trace per program and pattern, each later length substituted; results as
PyTorch's, and a length that would make an unproven equality true traced as before."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax
from torchjax import _host_plans, _host_shapes, _programs
from torchjax._x64 import scope

pytestmark = pytest.mark.skipif(not _programs.enabled(), reason="the program cache is off")


@pytest.fixture(autouse=True)
def no_kept_plans(monkeypatch):
    # (plans an earlier run kept would serve these calls instead: _host_plans)
    monkeypatch.setattr(_host_plans, "load", lambda *args, **kwargs: None)


def _attend(lib, x, w_qkv, w_out, mask):
    """One causal self-attention step of a T-token sequence, as a GPT's generate runs it."""
    F = lib.nn.functional
    T = x.shape[1]
    q, k, v = F.linear(F.layer_norm(x, (x.shape[-1],)), w_qkv).split(x.shape[-1], dim=2)
    att = (q @ k.transpose(-2, -1)) * 0.25
    att = att.masked_fill(mask[:T, :T] == 0, float("-inf")).softmax(-1)
    return F.gelu(F.linear(att @ v, w_out)) + x


def test_a_growing_sequence_takes_templates_and_matches_pytorch(tier):
    rng = np.random.default_rng(0)
    d, n = 16, 9
    w_qkv = rng.standard_normal((3 * d, d)).astype(np.float32) / 4
    w_out = rng.standard_normal((d, d)).astype(np.float32) / 4
    seq = rng.standard_normal((1, n, d)).astype(np.float32)
    mask = np.tril(np.ones((n, n), np.float32))
    made, used = _host_shapes.STATS["templates"], _host_shapes.STATS["instances"]
    with torchjax.no_grad():
        args = [torchjax.tensor(a) for a in (w_qkv, w_out, mask)]
        for T in range(1, n + 1):
            got = _attend(torchjax, torchjax.tensor(seq[:, :T]), *args)
            want = _attend(torch, torch.tensor(seq[:, :T]), *map(torch.tensor,
                                                                  (w_qkv, w_out, mask)))
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-5, atol=2e-5)
    assert _host_shapes.STATS["templates"] > made
    # every op of the later lengths came from a template, not a trace of its own
    assert _host_shapes.STATS["instances"] - used >= 5 * (n - 3)


def _program(fn, name):
    return _programs.program(fn, _programs.ident_of("test", "host-shapes", name))


def _special_three(x):
    # an op that treats one size apart: JAX answers `T == 3` False when T is symbolic
    return x * 2.0 if x.shape[0] == 3 else x + 1.0


def test_an_unproven_equality_keeps_its_length_out_of_the_template(tier):
    f = _program(_special_three, "special-three")
    refused = _host_shapes.STATS["refused"]
    for n in (1, 2, 3, 4, 5):
        x = np.arange(n, dtype=np.float32) + 1
        got = np.asarray(f(x))
        np.testing.assert_array_equal(got, x * 2 if n == 3 else x + 1)
    assert _host_shapes.STATS["refused"] > refused  # (n = 3 was traced concretely)


def _needs_its_size(x):
    return x * float(int(x.shape[0]))  # (a concrete size: no symbolic trace)


def test_an_op_that_needs_its_size_is_traced_per_size(tier):
    f = _program(_needs_its_size, "needs-size")
    for n in (1, 2, 3, 4):
        x = np.ones(n, np.float32)
        np.testing.assert_array_equal(np.asarray(f(x)), x * n)


def _outer_masked(x, m):
    return (x[:, None] * x[None, :]) * m


def test_sizes_that_changed_together_share_one_symbol(tier):
    """A T-vector and a T x T mask: one length. A call where the mask's sizes differ from the
    vector's does not fit that template, and is still right."""
    f = _program(_outer_masked, "outer-masked")
    for n in (1, 2, 3, 4):
        x = np.arange(n, dtype=np.float32)
        m = np.tril(np.ones((n, n), np.float32))
        np.testing.assert_array_equal(np.asarray(f(x, m)), np.outer(x, x) * m)
    x = np.arange(3, dtype=np.float32)
    m = np.ones((3, 1), np.float32)  # (broadcasts: another pattern)
    np.testing.assert_array_equal(np.asarray(f(x, m)), np.outer(x, x) * m)


def _in_default_dtype(x):
    # (reads torchjax's default dtype while it is traced, as an op making a new tensor does)
    return x.astype(torchjax.get_default_dtype().np) / 2


def test_a_template_is_not_taken_under_another_default_dtype(tier):
    """A template keeps the configuration it was traced in (the program's key's: JAX's trace
    context and torchjax's default dtype), though the inputs' types are the same."""
    f = _program(_in_default_dtype, "default-dtype")
    with scope():  # (torchjax's x64 scope, where its ops run)
        assert all(np.asarray(f(np.arange(n))).dtype == np.float32 for n in (1, 2, 3))
        sizes = (4, 5, 6)  # (new sizes: JAX's own dispatch keys no torchjax setting)
        was = torchjax.get_default_dtype()
        torchjax.set_default_dtype(torchjax.float64)
        try:
            got = [np.asarray(f(np.arange(n))) for n in sizes]
        finally:
            torchjax.set_default_dtype(was)
    for n, g in zip(sizes, got):
        assert g.dtype == np.float64
        np.testing.assert_array_equal(g, np.arange(n) / 2)


def test_a_zero_length_is_not_a_symbol_s_size(tier):
    f = _program(lambda x: x.sum(0) + 1.0, "zero-length")
    for n in (1, 2, 3, 0, 4):
        x = np.ones((n, 2), np.float32)
        np.testing.assert_array_equal(np.asarray(f(x)), x.sum(0) + 1)


def test_the_last_window_of_a_growing_sequence_takes_a_template_from_a_least_length(tier):
    """`idx[:, -8:]` of a sequence that grows (a generate's crop to its block size) is a
    dynamic slice of 8 from the symbolic length, which JAX can trace only knowing the length
    is at least 8: its template is traced for lengths from the smaller one it has seen, and a
    shorter call does not take it (it is traced as before). Values are PyTorch's."""
    seq = np.arange(40, dtype=np.int64).reshape(1, 40)
    failed, used = _host_shapes.STATS["failed"], _host_shapes.STATS["instances"]
    before = {id(t) for ts in _host_shapes._templates.values() for t in ts}
    for n in list(range(20, 31)) + [9]:
        got = torchjax.tensor(seq[:, :n])[:, -8:]
        np.testing.assert_array_equal(got.numpy(), torch.tensor(seq[:, :n])[:, -8:].numpy())
    assert _host_shapes.STATS["instances"] - used >= 8  # (lengths 22-30 at least)
    assert _host_shapes.STATS["failed"] - failed <= 1  # (the trace without the bound)
    t = [t for ts in _host_shapes._templates.values() for t in ts
         if id(t) not in before and t.least > 1]  # (this test's)
    assert t and min(x.least for x in t) >= 9 and t[0].bind(
        ((t[0].specs[0][0], None, None), (np.dtype(np.int64), False, (1, 9)))) is None
