"""Sorting, selection, unique and searching beyond the op table: grad_fn names, PyTorch's
errors in backward for the ops it cannot differentiate, return types, tie rules on many random
inputs, and what happens under jax.jit for ops whose output shape depends on the values."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import torch

import torchjax

_rng = np.random.default_rng(7)


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t.detach()._data)


def _same(a, b):
    assert str(a.dtype).replace("torchjax", "torch") == str(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(_np(a), _np(b))


@pytest.mark.parametrize("expr, grad_fn", [
    ("lib.sort(x, 1).values", "SortBackward0"),
    ("x.sort(descending=True)[0]", "SortBackward0"),
    ("lib.msort(x)", "SortBackward0"),
    ("lib.topk(x, 2).values", "TopkBackward0"),
    ("lib.kthvalue(x, 2, 0).values", "KthvalueBackward0"),
])
def test_grad_fn_names(expr, grad_fn):
    for lib in (torch, torchjax):
        x = lib.tensor(_rng.uniform(size=(3, 4)).astype(np.float32), requires_grad=True)
        out = eval(expr, {"lib": lib, "x": x})
        assert type(out.grad_fn).__name__ == grad_fn, lib.__name__


def test_return_types():
    x = np.array([[3., 1., 2.]], np.float32)
    for name, args in (("sort", ()), ("topk", (2,)), ("kthvalue", (2,))):
        a = getattr(torchjax, name)(torchjax.tensor(x), *args)
        b = getattr(torch, name)(torch.tensor(x), *args)
        assert type(a).__name__ == type(b).__name__ == name
        assert a._fields == ("values", "indices")
        _same(a.values, b.values)
        _same(a.indices, b.indices)
        assert repr(a).startswith(f"torch.return_types.{name}(\nvalues=tensor(")


@pytest.mark.parametrize("expr, grad_fn", [
    ("lib.unique(x)", "Unique2Backward0"),
    ("lib.unique(x, return_counts=True)[0]", "Unique2Backward0"),
    ("lib.unique(x.reshape(3, 2), dim=0)", "UniqueDimBackward0"),
    ("lib.unique_consecutive(x)", "UniqueConsecutiveBackward0"),
    ("lib.unique_consecutive(x.reshape(3, 2), dim=1)", "UniqueConsecutiveBackward0"),
    ("lib.bincount(lib.tensor([0, 2, 2, 1, 0, 3]), x)", "NotImplemented"),
])
def test_not_differentiable_like_torch(expr, grad_fn):
    """The result requires grad, but backward raises PyTorch's error."""
    errors = []
    for lib in (torch, torchjax):
        x = lib.tensor([1., 2., 1., 1., 3., 2.], requires_grad=True)
        out = eval(expr, {"lib": lib, "x": x})
        assert out.requires_grad and type(out.grad_fn).__name__ == grad_fn, lib.__name__
        with pytest.raises((RuntimeError, NotImplementedError)) as e:
            out.sum().backward()
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]


def test_sort_gradient_goes_through_the_indices():
    x = np.array([[2., 1., 2., 0., 1.], [5., 5., 5., 4., 4.]], np.float32)
    w = _rng.uniform(-1, 1, size=(2, 5)).astype(np.float32)
    grads = []
    for lib in (torch, torchjax):
        t = lib.tensor(x, requires_grad=True)
        v, i = lib.sort(t, descending=True)
        (v * lib.tensor(w)).sum().backward()
        grads.append(_np(t.grad))
        _same(i, i) if lib is torch else None
    np.testing.assert_allclose(grads[0], grads[1])


@pytest.mark.parametrize("descending", [False, True])
def test_sort_stable_on_many_ties(descending):
    # PyTorch's default CPU sort is stable only on rows of at most 16 elements (it sorts those
    # by insertion); stable=True is stable at every length
    for n in (1, 7, 16, 31, 200, 2000):
        a = _rng.integers(0, 4, size=(3, n))
        f = a.astype(np.float32)
        f[_rng.random(f.shape) < 0.1] = np.nan
        f[_rng.random(f.shape) < 0.1] = -0.0
        for x in (a, f):
            for kw in ({"stable": True}, {} if n <= 16 else {"stable": True}):
                r1 = torch.sort(torch.tensor(x), descending=descending, **kw)
                r2 = torchjax.sort(torchjax.tensor(x), descending=descending, **kw)
                _same(r2.indices, r1.indices)
                np.testing.assert_array_equal(_np(r2.values), _np(r1.values))
                _same(torchjax.argsort(torchjax.tensor(x), descending=descending, **kw),
                      torch.argsort(torch.tensor(x), descending=descending, **kw))


def test_kthvalue_picks_torchs_index_among_ties():
    # each (k, n) compiles PyTorch's quickselect replay: a few sizes and ks cover its branches
    for n, ks in ((3, (1, 2)), (9, (5,)), (33, (1, 17))):
        a = _rng.integers(0, 3, size=(6, n)).astype(np.float32)
        a[_rng.random(a.shape) < 0.2] = np.nan
        for k in ks:
            r1 = torch.kthvalue(torch.tensor(a), k)
            r2 = torchjax.kthvalue(torchjax.tensor(a), k)
            _same(r2.indices, r1.indices)
            np.testing.assert_array_equal(_np(r2.values), _np(r1.values))


def test_unique_random():
    for dtype in (np.int64, np.int32, np.float32, np.uint8):
        a = _rng.integers(0, 9, size=(5, 40)).astype(dtype)
        for kw in ({}, {"return_inverse": True, "return_counts": True}, {"dim": 1},
                   {"dim": 0, "return_inverse": True}):
            r1 = torch.unique(torch.tensor(a), **kw)
            r2 = torchjax.unique(torchjax.tensor(a), **kw)
            for x, y in zip(r2 if isinstance(r2, tuple) else (r2,),
                            r1 if isinstance(r1, tuple) else (r1,)):
                _same(x, y)


def test_searchsorted_random_against_torch():
    seq = np.sort(_rng.integers(0, 20, size=(3, 50)), axis=-1)
    vals = _rng.integers(-2, 22, size=(3, 30))
    for right in (False, True):
        _same(torchjax.searchsorted(torchjax.tensor(seq), torchjax.tensor(vals), right=right),
              torch.searchsorted(torch.tensor(seq), torch.tensor(vals), right=right))
        _same(torchjax.bucketize(torchjax.tensor(vals), torchjax.tensor(seq[0]), right=right),
              torch.bucketize(torch.tensor(vals), torch.tensor(seq[0]), right=right))


@pytest.mark.parametrize("fn", [
    lambda t: torchjax.unique(t),
    lambda t: torchjax.unique_consecutive(t),
    lambda t: torchjax.nonzero(t),
    lambda t: torchjax.argwhere(t),
    lambda t: torchjax.bincount(t.long()),
])
def test_value_dependent_shapes_refuse_tracing(fn):
    def f(a):
        return fn(torchjax.Tensor._wrap(a))._data

    # x64 on as torchjax's own dtypes need (under a user's jax.jit torchjax follows its setting)
    with jax.enable_x64(True), pytest.raises(RuntimeError, match="depends on the input's values"):
        jax.jit(f)(np.array([1, 0, 2, 2]))


def test_traceable_rows_work_under_jit():
    def f(a, s):
        x, seq = torchjax.Tensor._wrap(a), torchjax.Tensor._wrap(s)
        return (torchjax.sort(x).values._data, torchjax.topk(x, 2).indices._data,
                torchjax.kthvalue(x, 2).values._data,
                torchjax.searchsorted(seq, x)._data, torchjax.isin(x, seq)._data,
                torchjax.histc(x, 4, 0, 4)._data)

    a = jax.numpy.asarray([3., 1., 2., 0.5], np.float32)
    s = jax.numpy.asarray([0., 1., 2.], np.float32)
    with jax.enable_x64(True):  # topk's int64 indices (torchjax follows the jit's setting)
        got = jax.jit(f)(a, s)
    want = f(a, s)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_histc_of_data_with_nan_raises():
    # PyTorch prints the NaN bounds as "nan" or "-nan" depending on the platform
    for lib in (torch, torchjax):
        with pytest.raises(RuntimeError, match=r"torch.histc: range of \[.*nan, .*nan\] is not "
                                               "finite"):
            lib.histc(lib.tensor([1., float("nan")]), 3)
