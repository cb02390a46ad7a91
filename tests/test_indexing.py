"""x[key] = value, writes through views, duplicate indices, grad_fn names and indexing errors,
each checked against PyTorch."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import torch

import torchjax

LIBS = (torchjax, torch)
_rng = np.random.default_rng(0)
X = _rng.uniform(-2, 2, size=(4, 5)).astype(np.float32)
MASK = X > 0.3


def _np(t):
    return np.asarray(t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach()._data)


def both(fn):
    """fn(lib) -> tuple of tensors, in both libraries; assert values, dtypes and shapes agree."""
    a, b = fn(torchjax), fn(torch)
    a, b = (a if isinstance(a, tuple) else (a,)), (b if isinstance(b, tuple) else (b,))
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if x is None or y is None:
            assert x is None and y is None
            continue
        assert str(x.dtype).replace("torchjax", "torch") == str(y.dtype)
        assert tuple(x.shape) == tuple(y.shape)
        np.testing.assert_allclose(_np(x), _np(y), rtol=1e-6, atol=1e-6)
    return a, b


def _setitem_grads(key, value=None):
    """x = leaf * 1; x[key] = value; (x * w).sum().backward(): x, leaf.grad, value.grad."""
    w = _rng.uniform(-1, 1, size=X.shape).astype(np.float32)

    def fn(lib):
        leaf = lib.tensor(X, requires_grad=True)
        x = leaf * 1
        k = key(lib) if callable(key) else key
        v = value
        if isinstance(value, np.ndarray):
            v = lib.tensor(value, requires_grad=True)
        x[k] = v
        (x * lib.tensor(w)).sum().backward()
        return x, leaf.grad, v.grad if isinstance(v, lib.Tensor) else None

    return both(fn)


V3 = np.array([1.5, -2.0, 3.0], dtype=np.float32)


@pytest.mark.parametrize("key,value", [
    (0, 7.0),
    ((slice(1, 3), 2), np.array([5.0, 6.0], dtype=np.float32)),
    ((slice(None), slice(None, None, 2)), V3),
    ((Ellipsis, 1), np.array(2.5, dtype=np.float32)),
    ((2, [0, 3, 4]), V3),
    (([0, 1, 2], [4, 0, 1]), V3),
    ((slice(1, None), [0, 2, 4]), V3),
    (lambda lib: lib.tensor(MASK), 0.0),
    (lambda lib: lib.tensor(MASK), np.array(-1.0, dtype=np.float32)),
    (lambda lib: lib.tensor(MASK), np.arange(MASK.sum(), dtype=np.float32)),
    (lambda lib: (lib.tensor([3, 1]),), np.ones((1, 5), dtype=np.float32)),
    ((None, 1), np.ones((1, 1, 5), dtype=np.float32)),
    (lambda lib: (lib.tensor(2), slice(1, 4)), V3),
])
def test_setitem_values_and_gradients(key, value):
    _setitem_grads(key, value)


def test_setitem_grad_fn_names_and_version():
    def fn(lib):
        leaf = lib.tensor(X, requires_grad=True)
        names = []
        for key in (0, (slice(None), [1, 2]), lib.tensor(MASK), lib.tensor([1, 2])):
            x = leaf * 1
            v0 = x._version
            x[key] = 1.0
            assert x._version == v0 + 1
            names.append(type(x.grad_fn).__name__)
        return names
    assert fn(torchjax) == fn(torch) == ["CopySlices", "IndexPutBackward0", "IndexPutBackward0",
                                         "IndexPutBackward0"]


def test_getitem_grad_fn_names_and_views():
    keys = [0, slice(1, 3), (slice(None), None), Ellipsis, (slice(None),), (1, None, slice(0, 4, 2)),
            [0, 2], (0, True), slice(None)]
    for key in keys:
        a = torchjax.tensor(X, requires_grad=True)[key]
        b = torch.tensor(X, requires_grad=True)[key]
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__, key
        assert (a._base is not None) == (b._base is not None), key


def test_value_requiring_grad_written_into_plain_tensor():
    def fn(lib):
        x = lib.zeros(4, 5)
        v = lib.tensor(V3, requires_grad=True)
        x[1, [0, 2, 4]] = v
        assert x.requires_grad and type(x.grad_fn).__name__ == "CopySlices"
        (x * x).sum().backward()
        return x, v.grad
    both(fn)


def test_writes_through_slices_reach_the_base():
    def fn(lib):
        b = lib.zeros(4, 4)
        row = b[2]
        col = b[:, 1]
        b[1:3][:, 0] = 5
        b[0][1] = 3
        col[3] = 7
        b[..., 2:][1:, None][0, 0, 1] = 9
        b[lib.tensor([True, False, False, True])] += 1
        v = b.view(16)
        v[15] = -1
        return b, row, col
    both(fn)


def test_duplicate_indices():
    def fn(lib):
        x = lib.zeros(5)
        idx = lib.tensor([0, 0, 2, 2, 2])
        x[idx] += 1              # once per position
        y = lib.zeros(5)
        y.index_put_((idx,), lib.ones(5), accumulate=True)
        z = lib.index_put(lib.zeros(5), (idx,), lib.tensor(2.0), accumulate=True)
        w = lib.zeros(5)
        w[lib.tensor([1, 3, 1])] = lib.tensor([4.0, 5.0, 6.0])
        return x, y, z, w[3:]
    both(fn)


def test_duplicate_write_gradients():
    def fn(lib):
        leaf = lib.zeros(5, requires_grad=True)
        x = leaf * 1
        v = lib.tensor([4.0, 5.0, 6.0], requires_grad=True)
        x[lib.tensor([1, 3, 1])] = v
        (x * lib.arange(5.0)).sum().backward()
        g = lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
        leaf2 = lib.ones(5, requires_grad=True)
        leaf2[[0, 0, 4]].mul(g[:3]).sum().backward()
        return leaf.grad, v.grad, leaf2.grad
    both(fn)


def test_masked_fill_in_place_and_value_grad():
    def fn(lib):
        leaf = lib.tensor(X, requires_grad=True)
        val = lib.tensor(2.0, requires_grad=True)
        x = leaf * 1
        x.masked_fill_(lib.tensor(MASK[0]), val)
        # PyTorch calls it MaskedFillBackward1 for a tensor value (0 for a number)
        assert x._version == 1 and type(x.grad_fn).__name__.startswith("MaskedFillBackward")
        (x * x).sum().backward()
        return x, leaf.grad, val.grad
    both(fn)


def test_setitem_casts_values():
    def fn(lib):
        a = lib.zeros(3, dtype=lib.int64)
        a[0] = 2.7
        a[1:] = lib.tensor([1.9, -1.9])
        f = lib.zeros(3)
        f[[0, 2]] = lib.tensor([1.0, 2.0])
        f[1] = True
        f[lib.tensor([False, True, False])] = lib.tensor(5)
        f[True] = lib.tensor([1, 2, 3])
        f[1:][lib.tensor([True, False])] = lib.tensor(4, dtype=lib.float64)
        return a, f
    both(fn)


def _errors(fn):
    """fn(lib) raises in both libraries: the same exception type and message."""
    caught = []
    for lib in LIBS:
        with pytest.raises(Exception) as e:
            fn(lib)
        caught.append(e)
    assert caught[0].type is caught[1].type, (caught[0].value, caught[1].value)
    assert str(caught[0].value) == str(caught[1].value).split("\n")[0]


@pytest.mark.parametrize("fn", [
    lambda lib: lib.zeros(3)[5],
    lambda lib: lib.zeros(3)[-4],
    lambda lib: lib.zeros(2, 3)[:, 3],
    lambda lib: lib.zeros(2, 3)[lib.tensor([0, 5])],
    lambda lib: lib.zeros(2, 3)[:, [0, -4]],
    lambda lib: lib.zeros(2, 3)[lib.tensor(7)],
    lambda lib: lib.zeros(3)[::-1],
    lambda lib: lib.zeros(3)[::0],
    lambda lib: lib.zeros(2, 3)[0, 0, 0],
    lambda lib: lib.zeros(2, 3)[lib.tensor([[True, False]])],
    lambda lib: lib.zeros(2, 3)[lib.tensor([0.0])],
    lambda lib: lib.zeros(2, 3)[[0, 1], [0, 1, 2]],
    lambda lib: lib.zeros(2, 3)[0.5],
    lambda lib: lib.tensor(1.0)[0],
    lambda lib: lib.zeros(3).__setitem__(7, 1.0),
    lambda lib: lib.zeros(3).__setitem__(slice(None), [1, 2, 3]),
    lambda lib: lib.zeros(3).__setitem__(0, np.float32(1.0)),
    lambda lib: lib.zeros(2, 3).__setitem__(0, lib.ones(2)),
    lambda lib: lib.zeros(2, 3).__setitem__(0, lib.ones(2, 3)),
    lambda lib: lib.zeros(2, 3).__setitem__([0, 1], lib.ones(3, 3)),
    lambda lib: lib.zeros(2, 3, requires_grad=True).__setitem__(0, 1.0),
    lambda lib: lib.zeros(2, 3, requires_grad=True).index_put_((lib.tensor([0]),),
                                                               lib.tensor(1.0)),
    lambda lib: lib.zeros(2, 3).index_put_((lib.tensor([0]),), lib.tensor(1)),
    lambda lib: lib.zeros(3).__setitem__([0, 1], lib.tensor([1, 2])),
    lambda lib: lib.zeros(3).__setitem__(lib.tensor([True, False, True]), lib.tensor([1, 2])),
    lambda lib: lib.zeros(2, 3).index_put_((lib.tensor([0]),) * 3, lib.tensor(1.0)),
    lambda lib: lib.gather(lib.zeros(3), 0, lib.tensor([5])),
    lambda lib: lib.gather(lib.zeros(3), 0, lib.tensor([-1])),
    lambda lib: lib.gather(lib.zeros(2, 3), 1, lib.tensor([0])),
    lambda lib: lib.gather(lib.zeros(2, 3), 1, lib.tensor([[0.0]])),
    lambda lib: lib.gather(lib.zeros(2, 3), 1, lib.zeros(3, 2, dtype=lib.int64)),
    lambda lib: lib.index_select(lib.zeros(2, 3), 1, lib.tensor([0, 3])),
    lambda lib: lib.index_select(lib.zeros(2, 3), 1, lib.tensor([[0]])),
    lambda lib: lib.index_select(lib.zeros(2, 3), 2, lib.tensor([0])),
    lambda lib: lib.take(lib.zeros(2, 3), lib.tensor([6])),
    lambda lib: lib.take(lib.zeros(2, 3), lib.tensor([-7])),
    lambda lib: lib.take(lib.zeros(2, 3), lib.tensor([0], dtype=lib.int32)),
    lambda lib: lib.take_along_dim(lib.zeros(2, 3), lib.tensor([6])),
    lambda lib: lib.take_along_dim(lib.zeros(2, 3), lib.tensor([0]), 1),
    lambda lib: lib.masked_fill(lib.zeros(3), lib.tensor([1, 0, 1]), 1.0),
    lambda lib: lib.masked_fill(lib.zeros(3), lib.tensor([True]), lib.tensor([1.0])),
    lambda lib: lib.zeros(3).masked_fill_(lib.tensor([[True, False, True]]), 1.0),
    lambda lib: lib.masked_select(lib.zeros(2, 3), lib.tensor([1, 0, 1])),
    lambda lib: lib.masked_select(lib.zeros(2, 3), lib.tensor([True, False])),
])
def test_errors_match_torch(fn):
    _errors(fn)


def test_index_tensor_modified_after_use():
    for lib in LIBS:
        x = lib.tensor(X, requires_grad=True)
        i = lib.tensor([0, 2])
        y = x[i]
        i.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_traced_mask_is_a_clear_error():
    def f(a):
        t = torchjax.Tensor._wrap(a)
        return t[t > 0]._data

    with pytest.raises(RuntimeError, match="cannot be traced"):
        jax.jit(f)(np.arange(4.0))


def test_traced_integer_indices_work():
    def f(a, i):
        t = torchjax.Tensor._wrap(a)
        return t[torchjax.Tensor._wrap(i), 1:]._data

    out = jax.jit(f)(X, np.array([3, 0]))
    np.testing.assert_array_equal(np.asarray(out), X[[3, 0], 1:])


def _random_key(rnd, rng):
    """A random mix of every index form PyTorch accepts (and some it rejects)."""
    parts = []
    for _ in range(rnd.randint(1, 4)):
        k = rnd.choice(["int", "neg", "slice", "step", "none", "ell", "list", "tensor", "mask"])
        if k == "int":
            parts.append(rnd.randint(0, 4))
        elif k == "neg":
            parts.append(-rnd.randint(1, 5))
        elif k == "slice":
            parts.append(slice(rnd.choice([None, 0, 1, -2]), rnd.choice([None, 3, -1, 10])))
        elif k == "step":
            parts.append(slice(None, None, rnd.choice([2, 3])))
        elif k == "none":
            parts.append(None)
        elif k == "ell" and Ellipsis not in parts:
            # PyTorch's handling of several ellipses is irregular: not tested
            parts.append(Ellipsis)
        elif k == "list":
            parts.append([rnd.randint(-4, 3) for _ in range(rnd.randint(1, 3))])
        elif k == "tensor":
            parts.append(("index", rng.integers(-3, 5, size=rnd.choice([(2,), (2, 2), (3,)]))))
        else:
            parts.append(("mask", rnd.choice([4, 5, 6])))
    return parts


def _key_in(lib, parts):
    out = []
    for p in parts:
        if isinstance(p, tuple) and p[0] == "index":
            out.append(lib.tensor(p[1]))
        elif isinstance(p, tuple):
            out.append(lib.tensor(np.arange(p[1]) % 3 != 1))
        else:
            out.append(p)
    return tuple(out)


def _get(lib, base, parts):
    t = lib.tensor(base.copy(), requires_grad=True)
    try:
        r = t[_key_in(lib, parts)]
    except (IndexError, RuntimeError, TypeError, ValueError) as e:
        return ("error", type(e).__name__)
    r.backward(lib.ones_like(r) * 2)
    return ("ok", tuple(r.shape), r.detach().numpy(), t.grad.numpy())


def _set(lib, base, parts):
    t = lib.tensor(base.copy())
    try:
        t[_key_in(lib, parts)] = 7.5
    except (IndexError, RuntimeError, TypeError, ValueError) as e:
        return ("error", type(e).__name__)
    return ("ok", t.numpy())


@pytest.mark.parametrize("seed", range(3))
def test_random_keys_match_pytorch(seed):
    """Random combinations of ints, slices, steps, None, Ellipsis, lists, index tensors and
    masks: values, shapes, gradients and error types equal PyTorch's, for reads and writes."""
    import random
    rnd = random.Random(seed)
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((4, 5, 6)).astype(np.float32)
    for _ in range(30):
        parts = _random_key(rnd, rng)
        for fn in (_get, _set):
            want, got = fn(torch, base, parts), fn(torchjax, base, parts)
            assert got[0] == want[0], (fn.__name__, parts, want[:2], got[:2])
            if want[0] == "error":
                assert got[1] == want[1], (fn.__name__, parts, want[1], got[1])
                continue
            for a, b in zip(got[1:], want[1:]):
                np.testing.assert_array_equal(np.asarray(a), np.asarray(b),
                                              err_msg=f"{fn.__name__} {parts}")



def test_python_int_indices_share_one_program():
    # a dataset's x[idx] over an epoch must not compile once per index
    from torchjax._ops import indexing
    x = torchjax.arange(60.0).reshape(20, 3)
    rows = [x[0]]
    before = indexing._SELECT_INTS[1]._cache_size()  # other tests index other shapes
    rows += [x[i] for i in range(1, 20)]
    assert [r.tolist() for r in rows] == torch.arange(60.0).reshape(20, 3).tolist()
    assert indexing._SELECT_INTS[1]._cache_size() == before
    rows[4][1] = -1.0  # still a view of x
    assert x[4, 1].item() == -1.0


@pytest.mark.parametrize("key", [range(2), range(0, 4, 2), range(-1, -3, -1), range(0),
                                 (range(2), range(1, 3)), ((0, 2), slice(None)),
                                 (slice(None), (1, 3)), ((True, False, True, False),)],
                         ids=["range", "range step", "range negative", "empty range",
                              "two ranges", "tuple of ints", "tuple after slice",
                              "tuple of bools"])
def test_ranges_and_tuples_index_like_lists(key):
    both(lambda lib: lib.tensor(X)[key])


def test_range_index_in_writes_and_gradients():
    def run(lib):
        x = lib.zeros(3, 3)
        x[range(3), lib.tensor([0, 2, 1])] = 1
        z = lib.zeros(4)
        z[range(2)] += 1
        z[(1, 3), ] = 5
        w = lib.ones(3, 4, requires_grad=True)
        (w * 2)[range(3), [0, 1, 2]].sum().backward()
        return x, z, w.grad
    both(run)


def _windows(lib):
    src = lib.tensor(np.arange(240.0, dtype=np.float32).reshape(40, 6))
    out = [src[i:i + 7] for i in range(0, 30, 3)]  # a language model's batches
    out += [src[i:i + 5, 2] for i in range(1, 30, 4)]  # with an int: its dim goes
    out += [src[3, 1:4], src[...][2:4, 1:3], src[38:45]]  # (a clamped stop)
    out += [t.stride() + (t.storage_offset(),) for t in out]
    w = src[10:12]  # a view: a write through it reaches src
    w.mul_(-1)
    return tuple(lib.tensor(v) if isinstance(v, tuple) else v for v in out) + (src,)


def test_moving_windows_are_views_and_compile_once():
    both(_windows)
    x = torchjax.arange(300.0)
    before = torchjax.compile_stats()
    got = [x[i:i + 16].sum() for i in range(0, 200, 7)]
    traced = torchjax.compile_stats().traced - before.traced
    # x[0:16] (the row: a slice from 0 is taken as fixed), the moving window (one program
    # whatever its start) and the sum; before, the row compiled one program per start
    assert traced <= 3, traced
    assert [float(g) for g in got] == [float(sum(range(i, i + 16))) for i in range(0, 200, 7)]
    # a window that records a gradient stays the row (its grad_fn is PyTorch's)
    for lib in LIBS:
        p = lib.arange(10.0, requires_grad=True)
        assert p[2:5].grad_fn.name() == "SliceBackward0"


def test_setitem_false_writes_nothing_as_pytorch():
    # PyTorch returns at once for x[False] = v: no node, no new version, even for a value
    # that could not be written (its shape is not checked)
    out = []
    for lib in (torch, torchjax):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        before = y._version
        y[False] = lib.zeros(5)
        y[False] = 1.0
        y.sum().backward()
        out.append((y._version - before, y.grad_fn.name(), x.grad.tolist()))
    assert out[1] == out[0]
