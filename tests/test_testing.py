"""torchjax.testing.assert_close against torch.testing.assert_close: the same inputs pass or
raise the same exception type with the same message."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import torchjax

NAN, INF = math.nan, math.inf


def _t(lib, data, dtype="float32"):
    return lib.tensor(data, dtype=getattr(lib, dtype))


# (id, build(lib) -> (actual, expected), assert_close keyword arguments)
CASES = [
    ("equal", lambda L: (_t(L, [1., 2, 3]), _t(L, [1., 2, 3])), {}),
    ("within-tol", lambda L: (_t(L, [1., 2, 3]), _t(L, [1., 2 + 1e-6, 3])), {}),
    ("one-off", lambda L: (_t(L, [1., 2, 3]), _t(L, [1., 2.5, 3])), {}),
    ("two-off", lambda L: (_t(L, [1., 2, 3]), _t(L, [1., 2.5, 3.1])), {}),
    ("2d", lambda L: (_t(L, [[1., 2], [3, 4]]), _t(L, [[1., 2], [3, 5]])), {}),
    ("3d", lambda L: (_t(L, np.arange(24.).reshape(2, 3, 4)),
                      _t(L, np.arange(24.).reshape(2, 3, 4) * 1.01)), {}),
    ("0d", lambda L: (_t(L, 1.), _t(L, 2.)), {}),
    ("0d-f64", lambda L: (_t(L, 0.1, "float64"), _t(L, 0.2, "float64")), {}),
    ("0d-zero-expected", lambda L: (_t(L, 1.), _t(L, 0.)), {}),
    ("float64", lambda L: (_t(L, [1., 2], "float64"), _t(L, [1., 2 + 1e-6], "float64")), {}),
    ("float16", lambda L: (_t(L, [1., 2], "float16"), _t(L, [1., 2.01], "float16")), {}),
    ("float16-close", lambda L: (_t(L, [100., 2], "float16"), _t(L, [100.06, 2], "float16")),
     {}),
    ("bfloat16", lambda L: (_t(L, [1., 2], "bfloat16"), _t(L, [1., 2.1], "bfloat16")), {}),
    ("bfloat16-close", lambda L: (_t(L, [1., 2], "bfloat16"), _t(L, [1., 2.015625], "bfloat16")),
     {}),
    ("int", lambda L: (_t(L, [1, 2, 3], "int64"), _t(L, [1, 2, 4], "int64")), {}),
    ("int-third", lambda L: (_t(L, [1, 2, 4], "int32"), _t(L, [1, 2, 3], "int32")), {}),
    ("uint8", lambda L: (_t(L, [0, 200], "uint8"), _t(L, [5, 0], "uint8")), {}),
    ("bool", lambda L: (_t(L, [True, False], "bool"), _t(L, [True, True], "bool")), {}),
    ("bool-zero", lambda L: (_t(L, [True, True], "bool"), _t(L, [True, False], "bool")), {}),
    ("int-tol", lambda L: (_t(L, [10, 20], "int64"), _t(L, [11, 20], "int64")),
     dict(rtol=0.1, atol=0)),
    ("int-tol-fail", lambda L: (_t(L, [10, 20], "int64"), _t(L, [12, 20], "int64")),
     dict(rtol=0.1, atol=0.5)),
    ("dtype", lambda L: (_t(L, [1., 2]), _t(L, [1., 2], "float64")), {}),
    ("dtype-int", lambda L: (_t(L, [0., 2]), _t(L, [1, 2], "int64")), {}),
    ("no-check-dtype", lambda L: (_t(L, [1., 2]), _t(L, [1., 2], "float64")),
     dict(check_dtype=False)),
    ("no-check-dtype-fail", lambda L: (_t(L, [1., 2]), _t(L, [1., 2.1], "float64")),
     dict(check_dtype=False)),
    ("no-check-dtype-int", lambda L: (_t(L, [0., 2]), _t(L, [1, 2], "int64")),
     dict(check_dtype=False)),
    ("shape", lambda L: (_t(L, [1., 2, 3]), _t(L, [1., 2, 3, 4])), {}),
    ("nan", lambda L: (_t(L, [1., NAN]), _t(L, [1., NAN])), {}),
    ("nan-equal", lambda L: (_t(L, [1., NAN]), _t(L, [1., NAN])), dict(equal_nan=True)),
    ("nan-vs-number", lambda L: (_t(L, [1., NAN, 3]), _t(L, [1., 2, 4])), {}),
    ("inf", lambda L: (_t(L, [INF, -INF]), _t(L, [INF, -INF])), {}),
    ("inf-mismatch", lambda L: (_t(L, [INF, 1]), _t(L, [1., 1])), {}),
    ("zero-expected", lambda L: (_t(L, [0., 1e-3]), _t(L, [0., 0.])), {}),
    ("tie", lambda L: (_t(L, [1., 2, 3]), _t(L, [2., 3, 4])), {}),
    ("tol", lambda L: (_t(L, [1., 2]), _t(L, [1., 2.1])), dict(rtol=0.1, atol=0)),
    ("tol-fail", lambda L: (_t(L, [1., 2]), _t(L, [1., 2.5])), dict(rtol=0.1, atol=0.01)),
    ("zero-tol", lambda L: (_t(L, [1., 2]), _t(L, [1., 2.5])), dict(rtol=0, atol=0)),
    ("only-rtol", lambda L: (_t(L, [1., 2]), _t(L, [1., 2.1])), dict(rtol=0.1)),
    ("only-atol", lambda L: (_t(L, [1., 2]), _t(L, [1., 2.1])), dict(atol=0.1)),
    ("msg", lambda L: (_t(L, [1., 2]), _t(L, [1., 2.1])), dict(msg="custom")),
    ("msg-callable", lambda L: (_t(L, [1., 2]), _t(L, [1., 2.1])),
     dict(msg=lambda m: f"Header\n\n{m}\n\nFooter")),
    ("float", lambda L: (1.0, 1.1), {}),
    ("float-close", lambda L: (1.0, 1.0 + 1e-9), {}),
    ("int-numbers", lambda L: (1, 2), {}),
    ("int-float", lambda L: (1, 1.0), {}),
    ("complex-numbers", lambda L: (1 + 1j, 1 + 2j), {}),
    ("numbers-nan", lambda L: (NAN, NAN), {}),
    ("numbers-nan-equal", lambda L: (NAN, NAN), dict(equal_nan=True)),
    ("numpy-number", lambda L: (np.float32(1.0), np.float32(1.5)), {}),
    ("bools", lambda L: (True, False), {}),
    ("none", lambda L: (None, None), {}),
    ("none-mismatch", lambda L: (None, 1), {}),
    ("list", lambda L: ([1., 2.], [1., 2.1]), {}),
    ("list-len", lambda L: ([1., 2.], [1., 2., 3.]), {}),
    ("tuple-tensors", lambda L: ((_t(L, [1.]), _t(L, [2.])), (_t(L, [1.]), _t(L, [2.5]))),
     {}),
    ("nested", lambda L: ([_t(L, 1.), [_t(L, 3.)]], [_t(L, 1.), [_t(L, 3.5)]]), {}),
    ("dict", lambda L: ({"a": _t(L, 1.)}, {"a": _t(L, 2.)}), {}),
    ("dict-nested", lambda L: ({"b": [_t(L, [1., 2])], "a": 1}, {"b": [_t(L, [1., 3])],
                                                                  "a": 1}), {}),
    ("dict-keys", lambda L: ({"a": 1, "b": 2}, {"a": 1, "c": 2}), {}),
    ("dict-id-callable", lambda L: ({"w": _t(L, [1., 2])}, {"w": _t(L, [1., 3])}),
     dict(msg=lambda m: "X" + m)),
    ("tensor-vs-list", lambda L: (_t(L, [1., 2]), [1., 2.]), {}),
    ("numpy-arrays", lambda L: (np.array([1., 2.]), np.array([1., 2.5])), {}),
    ("complex", lambda L: (_t(L, [1 + 1j, 2], "complex64"), _t(L, [1 + 1j, 2 + 1j],
                                                                "complex64")), {}),
    ("big", lambda L: (_t(L, np.linspace(0, 1, 1000)), _t(L, np.linspace(0, 1, 1000) ** 1.1)),
     {}),
    ("empty", lambda L: (_t(L, np.zeros((0, 3))), _t(L, np.zeros((0, 3)))), {}),
]


def _outcome(lib, build, kwargs):
    actual, expected = build(lib)
    try:
        lib.testing.assert_close(actual, expected, **kwargs)
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return type(e), str(e)
    return None


@pytest.mark.parametrize("build,kwargs", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_assert_close_matches_torch(build, kwargs):
    expected = _outcome(torch, build, kwargs)
    got = _outcome(torchjax, build, kwargs)
    assert got == expected


def test_default_tolerances_are_torch_table():
    # a relative error just inside / just outside each dtype's default rtol (atol negligible)
    for dtype, rtol in (("float32", 1.3e-6), ("float64", 1e-7)):
        base = 1e3
        for factor in (0.5, 2.0):
            def build(L, f=factor, d=dtype):
                return _t(L, [base], d), _t(L, [base * (1 + f * rtol)], d)
            assert _outcome(torchjax, build, {}) == _outcome(torch, build, {})
    ok = _outcome(torchjax, lambda L: (_t(L, [1000.]), _t(L, [1000.0004])), {})
    assert ok is None
    bad = _outcome(torchjax, lambda L: (_t(L, [1000.]), _t(L, [1000.01])), {})
    assert bad is not None and bad[0] is AssertionError


def test_failure_is_assertion_error_with_header():
    with pytest.raises(AssertionError, match="Tensor-likes are not close!"):
        torchjax.testing.assert_close(torchjax.tensor([1., 2.]), torchjax.tensor([1., 3.]))


# -- make_tensor -------------------------------------------------------------------------------

MAKE_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int8", "uint8",
               "bool", "complex64"]


@pytest.mark.parametrize("dtype", MAKE_DTYPES)
def test_make_tensor_matches_torch_ranges(dtype):
    for shape in [(), (3,), (20, 50)]:
        a = torchjax.testing.make_tensor(*shape, dtype=getattr(torchjax, dtype), device="cpu")
        b = torch.testing.make_tensor(*shape, dtype=getattr(torch, dtype), device="cpu")
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
    big_a = torchjax.testing.make_tensor((2000,), dtype=getattr(torchjax, dtype), device="cpu")
    big_b = torch.testing.make_tensor((2000,), dtype=getattr(torch, dtype), device="cpu")
    if dtype == "complex64":
        parts = [(np.real(x), np.imag(x)) for x in (big_a.numpy(), big_b.numpy())]
        for pa, pb in zip(*parts):
            assert pa.min() >= -9 and pa.max() < 9 and pb.min() >= -9 and pb.max() < 9
        return
    xa, xb = big_a.double().numpy(), big_b.double().numpy()
    if dtype in ("bool", "int64", "int32", "int8", "uint8"):
        assert set(np.unique(xa)) == set(np.unique(xb))  # the same integer support
    else:
        assert -9 <= xa.min() and xa.max() <= 9 and abs(xa.mean()) < 0.6


def test_make_tensor_options():
    m = torchjax.testing.make_tensor
    x = m(1000, dtype=torchjax.int8, device="cpu", low=-500, high=500).numpy()
    assert x.min() < -100 and x.max() > 100  # clamped to the dtype's range, not rejected
    y = m(1000, dtype=torchjax.int64, device="cpu", low=-1, high=2, exclude_zero=True).numpy()
    assert set(np.unique(y)) == {-1, 1}
    z = m(1000, dtype=torchjax.float32, device="cpu", low=-1, high=1, exclude_zero=True)
    assert (z.numpy() != 0).all()
    g = m(2, 3, dtype=torchjax.float64, device="cpu", requires_grad=True)
    assert g.requires_grad and g.is_leaf and tuple(g.shape) == (2, 3)
    with pytest.warns(FutureWarning):
        f = m(3, dtype=torchjax.float32, device="cpu", low=3, high=3)
    assert f.tolist() == [3.0, 3.0, 3.0]


def _make_err(lib, kwargs):
    try:
        lib.testing.make_tensor(3, **{k: (getattr(lib, v[6:]) if isinstance(v, str) and
                                        v.startswith("torch.") else v)
                                     for k, v in kwargs.items()})
    except Exception as e:  # noqa: BLE001 - compared below
        return type(e), str(e)
    return None


@pytest.mark.parametrize("kwargs", [
    dict(dtype="torch.float32", device="cpu", low=2, high=1),
    dict(dtype="torch.float32", device="cpu", low=NAN),
    dict(dtype="torch.uint8", device="cpu", low=3, high=3),
    dict(dtype="torch.int32", device="cpu", requires_grad=True),
    dict(dtype="torch.float32"),
])
def test_make_tensor_errors(kwargs):
    expected = _make_err(torch, kwargs)
    assert expected is not None
    assert _make_err(torchjax, kwargs) == expected
