"""torch.unravel_index, torch.frombuffer, torch.set_warn_always / is_warn_always_enabled and
cholesky_inverse's LinAlgError, against PyTorch 2.13. (cholesky_solve and cholesky_inverse's
values and gradients are op-table rows: tests/ops/samples_cholesky_solve.py.)"""

from __future__ import annotations

import array
import warnings

import numpy as np
import pytest
import torch

import torchjax
from torchjax import _frombuffer, _settings


@pytest.mark.parametrize("indices,shape,dtype", [
    ([4, 1], (3, 2), "int64"), ([4, 1, -1, 7], (3, 2), "int32"), (5, 6, "int64"),
    ([[1234], [5678]], (10, 10, 10, 10), "int64"), ([[1234], [5678]], (100, 100), "int16"),
    ([1], (), "int64"), ([0, 3, 5], [2, 1, 3], "uint8"), ([], (2, 3), "int64"),
])
def test_unravel_index(indices, shape, dtype):
    t, j = (lib.unravel_index(lib.tensor(indices, dtype=getattr(lib, dtype)), shape)
            for lib in (torch, torchjax))
    assert isinstance(j, tuple) and len(j) == len(t)
    for a, b in zip(t, j):
        assert str(b.dtype) == str(a.dtype) and tuple(b.shape) == tuple(a.shape)
        np.testing.assert_array_equal(b.numpy(), a.numpy())


@pytest.mark.parametrize("make,shape,exc,phrase", [
    (lambda lib: lib.tensor([1.0]), (3, 2), TypeError,
     "expected 'indices' to be integer dtype, but got torch.float32"),
    (lambda lib: lib.tensor([True]), (3,), TypeError,
     "expected 'indices' to be integer dtype, but got torch.bool"),
    (lambda lib: lib.tensor([1]), (3, -2), ValueError,
     "'shape' cannot have negative values, but got (3, -2)"),
    (lambda lib: lib.tensor([1]), 3.0, TypeError,
     "expected 'shape' to be int or sequence of ints, but got <class 'float'>"),
    (lambda lib: lib.tensor([1]), (3, 2.0), TypeError,
     "expected 'shape' sequence to only contain ints, but got <class 'float'>"),
    (lambda lib: lib.tensor([1]), (3, 0), RuntimeError, "ZeroDivisionError"),
])
def test_unravel_index_errors(make, shape, exc, phrase):
    for lib in (torch, torchjax):
        with pytest.raises(exc) as e:
            lib.unravel_index(make(lib), shape)
        assert phrase in str(e.value), (lib.__name__, str(e.value))


def test_frombuffer_shares_memory():
    out = []
    for lib in (torch, torchjax):
        a = array.array("i", [1, 2, 3, 4, 5])
        t = lib.frombuffer(a, dtype=lib.int32, count=3, offset=4)
        a[1] = 99  # the buffer's write is seen by the tensor
        first = t.tolist()
        t[2] = -5  # and the tensor's by the buffer
        out.append((first, list(a), str(t.dtype), tuple(t.shape)))
    assert out[0] == out[1]


@pytest.mark.parametrize("dtype", ["uint8", "int16", "float32", "float64", "complex64", "bool"])
def test_frombuffer_dtypes(dtype):
    raw = bytes(range(0, 256, 8))  # 32 bytes
    got = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (torch, torchjax):
            data = raw if dtype != "bool" else bytes(b % 2 for b in raw)
            t = lib.frombuffer(bytearray(data), dtype=getattr(lib, dtype))
            got.append((str(t.dtype), t.numpy().tobytes()))
    assert got[0] == got[1]


def test_frombuffer_requires_grad_and_readonly_warning():
    _frombuffer._WARNED[0] = False  # (PyTorch's is given once per process too)
    try:
        msgs = []
        for lib in (torch, torchjax):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                t = lib.frombuffer(b"\x00\x00\x80\x3f\x00\x00\x00\x40", dtype=lib.float32,
                                   requires_grad=True)
            assert t.requires_grad and t.tolist() == [1.0, 2.0]
            msgs.append([str(x.message) for x in w])
        phrase = "The given buffer is not writable, and PyTorch does not support non-writable"
        assert any(phrase in m for m in msgs[1]) and any(phrase in m for m in msgs[0])
        assert len(msgs[1]) == 1  # from_numpy's own warning is not added
    finally:
        _frombuffer._WARNED[0] = True


@pytest.mark.parametrize("args,kwargs,exc,phrase", [
    ((b"\x01\x02\x03",), {"dtype": "int16"}, ValueError,
     "buffer length (3 bytes) after offset (0 bytes) must be a multiple of element size (2)"),
    ((bytearray(8),), {"dtype": "int16", "offset": 8}, ValueError,
     "offset (8 bytes) must be non-negative and no greater than buffer length (8 bytes) minus 1"),
    ((bytearray(8),), {"dtype": "int16", "offset": -1}, ValueError,
     "offset (-1 bytes) must be non-negative"),
    ((bytearray(8),), {"dtype": "int16", "count": 5}, ValueError,
     "requested buffer length (5 * 2 bytes) after offset (0 bytes) must not be greater than "
     "actual buffer length (8 bytes)"),
    ((bytearray(0),), {"dtype": "int16"}, ValueError,
     "both buffer length (0) and count (-1) must not be 0"),
    (([1, 2],), {"dtype": "int8"}, ValueError, "object does not implement Python buffer protocol"),
])
def test_frombuffer_errors(args, kwargs, exc, phrase):
    for lib in (torch, torchjax):
        kw = dict(kwargs, dtype=getattr(lib, kwargs["dtype"]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(exc) as e:
                lib.frombuffer(*args, **kw)
        assert phrase in str(e.value), (lib.__name__, str(e.value))


def test_frombuffer_bfloat16_is_refused_clearly():
    with pytest.raises(NotImplementedError, match="frombuffer"):
        torchjax.frombuffer(bytearray(8), dtype=torchjax.bfloat16)


def test_warn_always():
    for lib in (torch, torchjax):
        assert lib.is_warn_always_enabled() is False
        try:
            lib.set_warn_always(True)
            assert lib.is_warn_always_enabled() is True
        finally:
            lib.set_warn_always(False)
        with pytest.raises(RuntimeError, match="setWarnOnlyOnce expects a bool, but got int"):
            lib.set_warn_always(1)
    assert _settings._state["warn_always"] is False


def test_warn_always_repeats_once_only_warnings():
    def count(flag):
        torchjax.set_warn_always(flag)
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                for _ in range(2):
                    torchjax.sparse.FloatTensor(2, 3)
            return sum("deprecated" in str(x.message) for x in w)
        finally:
            torchjax.set_warn_always(False)
    count(False)  # the once-per-process warning is used up
    assert count(False) == 0
    assert count(True) == 2


@pytest.mark.parametrize("factor", [
    np.array([[1.0, 0.0], [3.0, 0.0]]),
    np.stack([np.eye(3), np.diag([1.0, 0.0, 2.0])]),
])
def test_cholesky_inverse_zero_diagonal(factor):
    msgs = []
    for lib in (torch, torchjax):
        with pytest.raises(RuntimeError) as e:
            lib.cholesky_inverse(lib.tensor(factor))
        assert type(e.value).__name__.endswith("LinAlgError")
        assert isinstance(e.value, lib.linalg.LinAlgError)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("name,args,method", [
    ("solve", 2, True), ("lstsq", 2, True), ("eig", 1, True), ("symeig", 1, True),
    ("matrix_rank", 1, False),
])
def test_removed_linalg_functions(name, args, method):
    msgs = []
    for lib in (torch, torchjax):
        x = lib.eye(3)
        with pytest.raises(RuntimeError) as e:
            getattr(lib, name)(*[x] * args)
        msgs.append(str(e.value))
        assert hasattr(x, name) == method
        if method:
            with pytest.raises(RuntimeError) as e:
                getattr(x, name)(*[x] * (args - 1))
            msgs.append(str(e.value))
    half = len(msgs) // 2
    assert msgs[:half] == msgs[half:]
    assert msgs[0].startswith("This function was deprecated since version 1.9 and is now removed")


def test_set_anomaly_enabled():
    got = []
    for lib in (torch, torchjax):
        try:
            states = []
            lib.set_anomaly_enabled(True, False)
            states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
            lib.set_anomaly_enabled(False)
            states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
            with pytest.raises(TypeError) as e:
                lib.set_anomaly_enabled(1)
            states.append(str(e.value))
            got.append(states)
        finally:
            lib.set_anomaly_enabled(False)
    assert got[0] == got[1]


def test_triangular_solve_warns_once():
    from torchjax._ops import triangular_solve as ts
    ts._WARNED[0] = False  # as in a fresh process
    a, b = torchjax.eye(3), torchjax.ones(3, 2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        torchjax.triangular_solve(b, a)
        b.triangular_solve(a)
    msgs = [str(m.message) for m in w]
    assert len(msgs) == 1 and msgs[0].startswith(
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular")
    res = torchjax.triangular_solve(b, a)
    assert type(res).__name__ == "triangular_solve"
    assert res._fields == ("solution", "cloned_coefficient")


def test_platform_queries():
    x = torchjax.zeros(2)
    assert torchjax.is_storage(x) is False and torch.is_storage(torch.zeros(2)) is False
    assert torchjax.is_distributed(x) is torch.is_distributed(torch.zeros(2)) is False
    assert torchjax.compiled_with_cxx11_abi() is torch.compiled_with_cxx11_abi()
    assert torchjax.init_num_threads() is None
    assert torchjax.set_flush_denormal(False) is False
    assert torchjax.get_device_module("cpu") is torchjax.cpu
    assert torchjax.get_device_module(torchjax.device("cuda:0")) is torchjax.cuda
    assert torchjax.get_device_module() is (torchjax.cuda if torchjax.cuda.is_available()
                                            else torchjax.cpu)
    for lib, arg in ((torch, torch.zeros(2)), (torchjax, x)):
        with pytest.raises(RuntimeError, match="Device 'meta' does not have a corresponding "
                                               "module registered as 'torch.meta'."):
            lib.get_device_module("meta")
        with pytest.raises(TypeError, match=r"is_distributed\(\): argument 'input' \(position "
                                            r"1\) must be Tensor, not int"):
            lib.is_distributed(3)
        with pytest.raises(RuntimeError, match="flush_denormal expects a bool, but got int"):
            lib.set_flush_denormal(1)
        del arg


@pytest.mark.parametrize("size,order", [((2, 3, 4), (0, 2, 1)), ((2, 3, 4, 5), (0, 2, 3, 1)),
                                        ((3,), (0,)), ((2, 0, 3), (2, 1, 0))])
def test_empty_permuted(size, order):
    t = torch.empty_permuted(size, order)
    j = torchjax.empty_permuted(size, order, dtype=torchjax.float64, requires_grad=True)
    assert tuple(j.shape) == tuple(t.shape) and j.stride() == t.stride()
    assert j.dtype is torchjax.float64 and j.requires_grad


def test_empty_permuted_errors():
    for lib in (torch, torchjax):
        with pytest.raises(RuntimeError, match="Duplicate dim not allowed"):
            lib.empty_permuted((2, 3), (0, 0))


def test_new_empty_strided():
    for lib in (torch, torchjax):
        x = lib.zeros(2, dtype=lib.float64)
        y = x.new_empty_strided((2, 3), (1, 2))
        assert (y.stride(), str(y.dtype), tuple(y.shape)) == ((1, 2), "torch.float64", (2, 3))
        z = x.new_empty_strided((2,), (1,), dtype=lib.int32)
        assert str(z.dtype) == "torch.int32"


@pytest.mark.parametrize("name,args", [
    ("sym_int", (3.7,)), ("sym_int", (-3.7,)), ("sym_int", (True,)), ("sym_float", (3,)),
    ("sym_max", (2, 3.0)), ("sym_max", (True, 2)), ("sym_max", (5, 2)), ("sym_min", (2, 3.0)),
    ("sym_min", (4, 3)), ("sym_not", (0,)), ("sym_not", (True,)), ("sym_sqrt", (4,)),
    ("sym_sqrt", (2.0,)), ("sym_sum", ([1, 2, 3.5],)), ("sym_sum", ((1, 2),)),
    ("sym_ite", (True, 1, 2)), ("sym_ite", (False, 1.0, 2.5)),
    ("sym_constrain_range", (3,)), ("sym_constrain_range_for_size", (3,)),
    ("sym_fresh_size", (3,)),
])
def test_sym_helpers(name, args):
    want, got = getattr(torch, name)(*args), getattr(torchjax, name)(*args)
    assert got == want and type(got) is type(want), (got, want)


def test_sym_errors():
    for lib in (torch, torchjax):
        with pytest.raises(AssertionError, match="expected SymBool or bool, got <class 'int'>"):
            lib.sym_ite(1, 2, 3)
        with pytest.raises(AssertionError, match="type mismatch: <class 'int'> vs <class "
                                                 "'float'>"):
            lib.sym_ite(False, 1, 2.5)
        with pytest.raises(ValueError, match="invalid literal for int"):
            lib.sym_int("a")


def test_lu_deprecation_warnings_once():
    from torchjax._ops import lu as lu_module
    lu_module._WARNED.clear()  # as in a fresh process
    a, b = torchjax.eye(3) * 2, torchjax.ones(3, 1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(2):
            LU, piv = torchjax.lu(a)
            torchjax.lu_solve(b, LU, piv)
    msgs = [str(m.message) for m in w]
    assert len(msgs) == 2
    assert msgs[0].startswith("torch.lu is deprecated in favor of torch.linalg.lu_factor")
    assert msgs[1].startswith("torch.lu_solve is deprecated in favor of torch.linalg.lu_solve")
    assert type(torchjax.lu(a, get_infos=True)) is tuple


@pytest.mark.parametrize("kwargs", [{}, {"dim": 1}, {"s": (5,)}, {"dim": (-1, 0)},
                                    {"s": (2, 6), "dim": (0, 2)}])
def test_ihfftn_grad_fn_names(kwargs):
    # PyTorch's ihfftn ends in a lazy conjugate for one dim, its inverse c2c for more
    names = [lib.fft.ihfftn(lib.ones(2, 3, 4, requires_grad=True), **kwargs).grad_fn.name()
             for lib in (torch, torchjax)]
    assert names[0] == names[1]


def test_binomial_draws():
    # draws differ from PyTorch's; the certain cases agree exactly, the rest by statistics
    c = [10.0, 5.0, 0.0, -1.0, 7.0, 4.0]
    p = [0.0, 1.0, 0.3, 0.5, 1.5, float("nan")]
    t = torch.binomial(torch.tensor(c), torch.tensor(p))
    j = torchjax.binomial(torchjax.tensor(c), torchjax.tensor(p))
    np.testing.assert_array_equal(j.numpy(), t.numpy())
    torchjax.manual_seed(0)
    n = 40000
    x = torchjax.binomial(torchjax.full((n,), 12.0, dtype=torchjax.float64),
                          torchjax.tensor([0.25], dtype=torchjax.float64))
    assert x.dtype is torchjax.float64 and tuple(x.shape) == (n,)
    v = x.numpy()
    assert abs(v.mean() - 3.0) < 0.05 and abs(v.var() - 2.25) < 0.1
    assert np.all(v == np.round(v)) and v.min() >= 0 and v.max() <= 12


def test_binomial_errors_and_grad():
    for lib in (torch, torchjax):
        with pytest.raises(ValueError, match="binomial only supports floating-point dtypes for "
                                             "count, got: Long"):
            lib.binomial(lib.tensor([3]), lib.tensor([0.5]))
        with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
            lib.binomial(lib.tensor([3.0]), lib.tensor([0.5], dtype=lib.float64))
        r = lib.binomial(lib.tensor([3.0]), lib.tensor([0.5], requires_grad=True))
        assert r.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::binomial is not "
                                               "implemented"):
            r.sum().backward()


def test_fork_wait_vulkan_reinforce():
    for lib in (torch, torchjax):
        fut = lib.fork(lambda a, b=0: a + b + 1, 3, b=1)
        assert lib.wait(fut) == 5
        assert lib.is_vulkan_available() is False
    msgs = []
    for lib in (torch, torchjax):
        with pytest.raises(RuntimeError) as e:
            lib.ones(2).reinforce(1.0)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_cond_and_while_loop():
    got = []
    for lib in (torch, torchjax):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = lib.cond(x.sum() > 0, lambda v: v * 2, lambda v: v - 1, (x,))
        b = lib.cond(False, lambda v: v * 2, lambda v: v - 1, [x])
        c = lib.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2),
                           (lib.tensor(0), x))
        (a.sum() + b.sum() + c[1].sum()).backward()
        got.append((a.tolist(), b.tolist(), c[0].item(), c[1].tolist(), x.grad.tolist(),
                    type(c).__name__))
    assert got[0] == got[1]


def test_cond_errors():
    for lib in (torch, torchjax):
        x = lib.tensor([1.0, 2.0])
        with pytest.raises(RuntimeError, match="Expected pred to be bool or single-element "
                                               "tensor"):
            lib.cond(x > 0, lambda v: v, lambda v: v, (x,))
        with pytest.raises(RuntimeError, match="Expected pred to be bool or tensor, but got a."):
            lib.cond("a", lambda: 1, lambda: 2)
        with pytest.raises(RuntimeError, match="Expect operands to be a tuple"):
            lib.cond(x.sum() > 0, lambda v: v, lambda v: v, x)


def test_cond_traced_predicate_is_refused():
    @torchjax.compile
    def f(x):
        return torchjax.cond(x.sum() > 0, lambda v: v * 2, lambda v: v, (x,))
    with pytest.raises(NotImplementedError, match="inside torchjax.compile"):
        f(torchjax.ones(2))


def test_map2_module_load_is_distributed():
    got = []
    for lib in (torch, torchjax):
        x = lib.tensor([1.0, 2.0, 3.0])
        r = x.map2_(lib.tensor([1.0, 1.0, 1.0]), lib.tensor([2.0]), lambda a, b, c: a + b * c)
        p = lib.zeros(3)
        loaded = p.module_load(lib.tensor([4.0, 5.0, 6.0]))
        assigned = p.module_load(lib.tensor([7.0], requires_grad=True), assign=True)
        got.append((r is x, x.tolist(), loaded.tolist(), p.tolist(), loaded is p,
                    assigned.tolist(), assigned.requires_grad, x.is_distributed()))
    assert got[0] == got[1]


@pytest.mark.parametrize("args", [(), (True,), ([0, 2],), ([2, 0], True), ((-1, 1),)])
def test_nuclear_norm(args):
    x0 = np.random.default_rng(4).normal(size=(2, 3, 4))
    res = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib in (torch, torchjax):
            x = lib.tensor(x0, requires_grad=True)
            out = lib.nuclear_norm(x, *args)
            out.sum().backward()
            res.append((out.detach().numpy(), x.grad.numpy(), out.grad_fn.name()))
    (a, ga, na), (b, gb, nb) = res
    assert nb == na and b.shape == a.shape
    np.testing.assert_allclose(b, a, rtol=1e-10)
    np.testing.assert_allclose(gb, ga, rtol=1e-9, atol=1e-12)


def test_deprecated_norms_warn_once():
    from torchjax._ops import deprecated_norms
    deprecated_norms._WARNED.clear()
    x = torchjax.ones(3, 3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(2):
            torchjax.frobenius_norm(x, [0])
            torchjax.nuclear_norm(x)
    msgs = [str(m.message) for m in w]
    assert len(msgs) == 2
    assert msgs[0].startswith("at::frobenius_norm is deprecated and it is just left for JIT")
    assert msgs[1].startswith("at::nuclear_norm is deprecated")


def test_autocast_ipu_state():
    got = []
    for lib in (torch, torchjax):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            before = (str(lib.get_autocast_ipu_dtype()), lib.is_autocast_ipu_enabled())
            try:
                lib.set_autocast_ipu_dtype(lib.bfloat16)
                lib.set_autocast_ipu_enabled(True)
                during = (str(lib.get_autocast_ipu_dtype()), lib.is_autocast_ipu_enabled(),
                          lib.is_autocast_enabled("ipu"))
            finally:
                lib.set_autocast_ipu_enabled(False)
                lib.set_autocast_ipu_dtype(lib.float16)
        msgs = sorted({str(m.message).split(" (Triggered")[0] for m in w})
        got.append((before, during, msgs))
    assert got[0] == got[1]


@pytest.mark.parametrize("args", [(2, 0), (2, 1), (2, 2), (3, 1), (2, -1), (1, 0)])
def test_norm_except_dim(args):
    v0 = np.random.default_rng(6).normal(size=(4, 3, 2))
    res = []
    for lib in (torch, torchjax):
        v = lib.tensor(v0, requires_grad=True)
        out = lib.norm_except_dim(v, *args)
        out.mul(lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))).sum() \
            .backward()
        res.append((out.detach().numpy(), v.grad.numpy(), out.grad_fn.name()))
    (a, ga, na), (b, gb, nb) = res
    assert nb == na and b.shape == a.shape
    np.testing.assert_allclose(b, a, rtol=1e-12)
    np.testing.assert_allclose(gb, ga, rtol=1e-10, atol=1e-12)
