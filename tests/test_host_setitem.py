"""x[key] = value written on the host (torchjax/_ops/_host_setitem.py): the same values,
versions and errors as PyTorch, no program compiled, and autograd's writes still recorded."""

import numpy as np
import pytest
import torch

import torchjax

CASES = [  # (shape, dtype name, key, value: a number or ("t", array))
    ((16,), "int64", slice(1, 5), ("t", np.array([5, 13, 13, 1]))),
    ((16,), "int64", slice(6, None), -1),
    ((16,), "int64", slice(None, 4), ("t", np.array([1, 2, 3, 4]))),
    ((4, 5), "float32", (1, slice(1, 3)), 0.1),
    ((4, 5), "float32", (Ellipsis, 2), ("t", np.arange(4, dtype=np.float32))),
    ((4, 5), "float32", (slice(None, None, 2), None), ("t", np.ones((1, 5), np.float32))),
    ((4, 5), "float64", -1, 1e-300),
    ((3,), "bool", 0, True),
    ((3,), "uint8", 1, 255),
    ((2, 3), "int32", (0,), 7),
    ((5,), "float16", slice(1, 3), 0.5),
    ((5,), "float16", slice(1, 3), 0.1),      # inexact in half: the program path
    ((5,), "int64", 2, 2.0),                  # an integral float
    ((5,), "int64", 2, 2.7),                  # truncated: the program path
    ((5,), "uint8", 2, 300),                  # out of range: PyTorch's error
    ((5,), "uint8", 2, -1),                   # wraps, as in PyTorch
    ((5,), "int8", 2, 200),
    ((5,), "int64", 2, 1e30),
    ((5,), "float32", 2, 1e40),
    ((5,), "float16", 2, 70000.0),            # inf, as in PyTorch
    ((5,), "bool", 2, 2),
    ((5,), "float32", 2, float("nan")),
    ((5,), "complex64", 2, 3),
    ((), "float32", Ellipsis, 4.0),
    ((2, 3), "float32", (1,), ("t", np.array(2.5, np.float32))),
]


def _value(lib, v, dtype):
    if isinstance(v, tuple):
        return lib.tensor(v[1].astype(dtype))
    return v


@pytest.mark.parametrize("shape,dtype,key,value", CASES,
                         ids=[f"{c[1]}{list(c[0])}[{c[2]}]={c[3] if not isinstance(c[3], tuple) else 'tensor'}"
                              for c in CASES])
def test_setitem_matches_pytorch(shape, dtype, key, value):
    outs = []
    for lib in (torch, torchjax):
        x = lib.arange(int(np.prod(shape))).reshape(shape).to(getattr(lib, dtype)) \
            if shape else lib.tensor(1.0)
        v0 = x._version
        try:
            x[key] = _value(lib, value, dtype)
        except RuntimeError as e:
            outs.append(("error", str(e), None))
            continue
        outs.append((x.numpy().copy(), x._version - v0, str(x.dtype)))
    if isinstance(outs[0][0], str):
        assert outs[1][:2] == outs[0][:2]
        return
    (want, wv, wd), (got, gv, gd) = outs
    assert gd.replace("torchjax", "torch") == wd and gv == wv
    np.testing.assert_array_equal(got, want)


def test_a_new_write_compiles_nothing():
    x = torchjax.zeros(17, dtype=torchjax.long)
    values = [torchjax.tensor([3, 1, 4][:n], dtype=torchjax.long) for n in range(1, 4)]
    before = torchjax.compile_stats()
    for n in range(1, 4):  # new slice lengths and value shapes: a program each before
        x[1:1 + n] = values[n - 1]
        x[n + 1:] = -1
    assert torchjax.compile_stats().compiled == before.compiled
    assert x.tolist() == [0, 3, 1, 4, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1]


def test_recorded_writes_and_views_keep_the_program_path():
    for lib in (torch, torchjax):
        w = lib.ones(4, requires_grad=True)
        y = w * 2
        y[1:3] = lib.tensor([5.0, 6.0])  # recorded: CopySlices
        assert type(y.grad_fn).__name__ == "CopySlices"
        y.sum().backward()
        assert w.grad.tolist() == [2.0, 0.0, 0.0, 2.0]
        base = lib.zeros(2, 3)
        row = base[1]
        base[1, 1:] = 7.0  # base has a view: the view sees the write
        assert row.tolist() == [0.0, 7.0, 7.0]
        row[0] = 3.0       # a write into a view reaches its base
        assert base.tolist() == [[0.0, 0.0, 0.0], [3.0, 7.0, 7.0]]
        with lib.no_grad():
            w[0] = 9.0     # a leaf requiring grad, under no_grad
        assert w.tolist() == [9.0, 1.0, 1.0, 1.0] and w.requires_grad


def test_leaf_requiring_grad_raises_as_pytorch():
    for lib in (torch, torchjax):
        w = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            w[0] = 2.0


def test_write_reaches_a_shared_numpy_array():
    a = np.zeros(4, np.float32)
    t = torchjax.from_numpy(a)
    t[1:3] = 5.0
    assert a.tolist() == [0.0, 5.0, 5.0, 0.0] and t.tolist() == a.tolist()
