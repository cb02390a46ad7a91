"""Torch functions and submodules added with the coverage of torch's public names (see
test_torch_names.py): torch.as_strided_copy, torch.lobpcg, torch.functional,
torch.return_types, torch.signal.windows, torch.quasirandom and the modules torchjax names but
does not implement, each against PyTorch 2.13."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax


def _raises_the_same(call, error):
    """call(torch) and call(torchjax) raise `error` with the same message."""
    messages = []
    for lib in (torch, torchjax):
        with pytest.raises(error) as e:
            call(lib)
        messages.append(str(e.value))
    assert messages[1] == messages[0]


# ---------------------------------------------------------------- functions


def test_as_strided_copy_matches_pytorch():
    a = np.arange(12.0, dtype=np.float32)
    for size, stride, offset in (((3, 2), (2, 3), 1), ((2, 3), (3, 1), None)):
        results = []
        for lib in (torch, torchjax):
            x = lib.tensor(a, requires_grad=True)
            y = lib.as_strided_copy(x, size, stride, offset)
            assert y.is_contiguous()
            (y * y).sum().backward()
            y.data.add_(1)  # a copy: the input is not changed
            results.append((y.detach().numpy(), x.grad.numpy(), x.detach().numpy()))
        for got, want in zip(results[1], results[0]):
            np.testing.assert_array_equal(got, want)


def _spd(rng, m, batch=()):
    r = rng.standard_normal(batch + (m, m))
    return r @ np.swapaxes(r, -1, -2) + m * np.eye(m)


LOBPCG_CASES = {
    "k=3": ({"k": 3}, False, ()), "smallest": ({"k": 2, "largest": False}, False, ()),
    "default k": ({}, False, ()), "batched": ({"k": 2}, False, (2,)),
    "with B": ({"k": 2}, True, ()), "with X": ({"X": "start"}, False, ()),
}


@pytest.mark.parametrize("case", sorted(LOBPCG_CASES))
def test_lobpcg_matches_pytorchs_converged_eigenpairs(case):
    kw, with_b, batch = LOBPCG_CASES[case]
    rng = np.random.default_rng(3)
    a, b = _spd(rng, 12, batch), _spd(rng, 12, batch)
    start = rng.standard_normal(batch + (12, 2))
    results = []
    for lib in (torch, torchjax):
        torch.manual_seed(0)  # PyTorch's random start
        A = lib.tensor(a, requires_grad=not with_b)
        args = {k: lib.tensor(start) if v == "start" else v for k, v in kw.items()}
        E, X = lib.lobpcg(A, B=lib.tensor(b) if with_b else None, **args)
        # the projector X X^T does not depend on each eigenvector's arbitrary sign
        got = [E.detach().numpy(), (X @ X.mT).detach().numpy()]
        if with_b:
            got.append((X.mT @ lib.tensor(b) @ X).detach().numpy())  # B-orthonormal
        else:
            (E.sum() + (X @ X.mT).pow(2).sum()).backward()
            got.append(A.grad.numpy())
        results.append(got)
    for got, want in zip(results[1], results[0]):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("call,error", [
    (lambda lib: lib.lobpcg(lib.eye(12, dtype=lib.float64), k=5), ValueError),
    (lambda lib: lib.lobpcg(lib.ones(4, 5)), AssertionError),
    (lambda lib: lib.lobpcg(lib.eye(12), B=lib.eye(11)), AssertionError),
])
def test_lobpcg_errors_as_in_pytorch(call, error):
    _raises_the_same(call, error)
    with pytest.raises(NotImplementedError, match="tracker=.... is not supported by torchjax"):
        torchjax.lobpcg(torchjax.eye(12), tracker=lambda worker: None)


# ---------------------------------------------------------------- submodules


def test_functional_is_torchs_functions():
    import torch.functional as tf

    import torchjax.functional as jf
    assert jf.__all__ == tf.__all__
    for name in jf.__all__:
        assert getattr(jf, name) is getattr(torchjax, name), name
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    got = jf.einsum("ij,kj->ik", torchjax.tensor(a), torchjax.tensor(a))
    want = tf.einsum("ij,kj->ik", torch.tensor(a), torch.tensor(a))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def _public_return_types(module):
    return sorted(n for n in dir(module) if not n.startswith("_")
                  and isinstance(getattr(module, n), type)
                  and getattr(module, n).__module__ == "torch.return_types")


RESULTS = {
    "max": lambda lib, x: lib.max(x, 1), "min": lambda lib, x: lib.min(x, 0),
    "sort": lambda lib, x: lib.sort(x), "topk": lambda lib, x: lib.topk(x, 2),
    "kthvalue": lambda lib, x: lib.kthvalue(x, 2), "median": lambda lib, x: lib.median(x, 1),
    "mode": lambda lib, x: lib.mode(x, 1), "cummax": lambda lib, x: lib.cummax(x, 1),
    "aminmax": lambda lib, x: lib.aminmax(x), "frexp": lambda lib, x: lib.frexp(x),
    "svd": lambda lib, x: lib.svd(x), "linalg_svd": lambda lib, x: lib.linalg.svd(x),
    "linalg_eigh": lambda lib, x: lib.linalg.eigh(x @ x.T),
    "linalg_slogdet": lambda lib, x: lib.linalg.slogdet(x),
    "linalg_lu_factor": lambda lib, x: lib.linalg.lu_factor(x),
    "histogram": lambda lib, x: lib.histogram(x.flatten()),
    "histogramdd": lambda lib, x: lib.histogramdd(x[:, :2], bins=3),
}


def test_return_types_are_the_classes_the_ops_return():
    import torchjax.return_types as jr
    assert _public_return_types(jr) == _public_return_types(torch.return_types)
    assert set(jr.all_return_types) == {getattr(jr, n) for n in _public_return_types(jr)}
    a = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    for name, f in RESULTS.items():
        got, want = f(torchjax, torchjax.tensor(a)), f(torch, torch.tensor(a))
        assert type(want) is getattr(torch.return_types, name)
        assert type(got) is getattr(jr, name), name
        assert got._fields == type(want).__match_args__
        assert repr(type(got)) == repr(type(want))
    assert not isinstance(torchjax.max(torchjax.tensor(a), 1), jr.max_out)


WINDOW_CASES = [("cosine", {}), ("exponential", {}), ("exponential", {"tau": 2.5}),
                ("exponential", {"center": 1.0}), ("gaussian", {}),
                ("gaussian", {"std": 0.4}), ("general_cosine", {"a": [0.46, 0.23, 0.31]}),
                ("general_hamming", {}), ("general_hamming", {"alpha": 0.6}), ("hamming", {}),
                ("hann", {}), ("kaiser", {}), ("kaiser", {"beta": 0.0}), ("kaiser", {"beta": 3.0}),
                ("nuttall", {}), ("bartlett", {}), ("blackman", {})]


@pytest.mark.parametrize("name,kw", WINDOW_CASES)
def test_signal_windows_match_pytorch(name, kw):
    import torchjax.signal.windows as jw
    for m in (0, 1, 2, 3, 8, 17, 64):
        for sym in (True, False):
            if "center" in kw and sym:
                continue
            for dt, tol in (("float32", 2e-6), ("float64", 1e-13)):
                want = getattr(torch.signal.windows, name)(m, sym=sym, dtype=getattr(torch, dt),
                                                           **kw)
                got = getattr(jw, name)(m, sym=sym, dtype=getattr(torchjax, dt), **kw)
                assert repr(got.dtype) == repr(want.dtype) and tuple(got.shape) == want.shape
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["hann", "kaiser", "gaussian", "exponential", "cosine"])
def test_signal_window_requires_grad_as_in_pytorch(name):
    import torchjax.signal.windows as jw
    want = getattr(torch.signal.windows, name)(6, dtype=torch.float64, requires_grad=True)
    got = getattr(jw, name)(6, dtype=torchjax.float64, requires_grad=True)
    assert got.requires_grad == want.requires_grad and got.is_leaf == want.is_leaf
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-13)


@pytest.mark.parametrize("call,error", [
    (lambda lib: lib.signal.windows.hann(-1), ValueError),
    (lambda lib: lib.signal.windows.hann(4, dtype=lib.float16), ValueError),
    (lambda lib: lib.signal.windows.hann(4, dtype=lib.int64), ValueError),
    (lambda lib: lib.signal.windows.gaussian(4, std=0), ValueError),
    (lambda lib: lib.signal.windows.exponential(4, tau=-1), ValueError),
    (lambda lib: lib.signal.windows.exponential(4, center=1.0), ValueError),
    (lambda lib: lib.signal.windows.kaiser(4, beta=-1.0), ValueError),
    (lambda lib: lib.signal.windows.general_cosine(4, a=[]), ValueError),
    (lambda lib: lib.signal.windows.general_cosine(4, a=3), TypeError),
    (lambda lib: lib.signal.windows.hann(4, layout=lib.sparse_coo), ValueError),
])
def test_signal_window_errors_as_in_pytorch(call, error):
    _raises_the_same(call, error)


def _sobol_run(lib, dimension, dtype):
    engine = lib.quasirandom.SobolEngine(dimension)
    got = []
    for step, arg in (("draw", 1), ("draw", 3), ("fast_forward", 5), ("draw", 7),
                      ("draw_base2", 4), ("draw_base2", 3), ("reset", None), ("draw", 2)):
        try:
            r = getattr(engine, step)(arg) if step == "fast_forward" else \
                engine.reset() if step == "reset" else \
                getattr(engine, step)(arg, dtype=getattr(lib, dtype))
        except ValueError as e:
            got.append(("error", str(e)))
            continue
        if step.startswith("draw"):
            got.append((r.numpy().tolist(), repr(r.dtype)))
        got.append(engine.num_generated)
    out = lib.empty(0, dtype=getattr(lib, dtype))
    engine.draw(3, out=out, dtype=getattr(lib, dtype))
    return got + [out.numpy().tolist(), repr(engine)]


@pytest.mark.parametrize("dimension", [1, 2, 7, 300, 21201])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sobol_engine_is_pytorchs_sequence(dimension, dtype):
    assert _sobol_run(torchjax, dimension, dtype) == _sobol_run(torch, dimension, dtype)


def test_sobol_engine_scrambled_and_errors():
    a = torchjax.quasirandom.SobolEngine(3, scramble=True, seed=7)
    b = torchjax.quasirandom.SobolEngine(3, scramble=True, seed=7)
    pa, pb = a.draw(16), b.draw(16)
    assert repr(a) == repr(torch.quasirandom.SobolEngine(3, scramble=True, seed=7))
    np.testing.assert_array_equal(pa.numpy(), pb.numpy())  # a seed fixes the scramble
    points = pa.numpy()
    assert points.shape == (16, 3) and (points >= 0).all() and (points < 1).all()
    # a scrambled net of 16 points still has one point in each 1/16 of every axis
    for axis in range(3):
        assert sorted((points[:, axis] * 16).astype(int).tolist()) == list(range(16))
    for bad in (0, 21202):
        _raises_the_same(lambda lib, bad=bad: lib.quasirandom.SobolEngine(bad), ValueError)


UNSUPPORTED_MODULES = {"masked": "masked_tensor", "nested": "nested_tensor", "export": "export",
                       "package": "PackageExporter", "library": "custom_op", "ops": "aten",
                       "ao": "quantization", "quantization": "quantize_dynamic",
                       "monitor": "Stat", "mtia": "is_available",
                       "futures": "Future", "classes": "load_library", "cpp": "nn"}


@pytest.mark.parametrize("module,name", sorted(UNSUPPORTED_MODULES.items()))
def test_unsupported_submodules_name_what_is_missing(module, name):
    assert hasattr(torch, module) and hasattr(getattr(torch, module), name)
    mod = getattr(torchjax, module)
    assert not hasattr(mod, name)
    with pytest.raises(AttributeError, match=rf"torch\.{module}\.{name} is not supported by "
                                             rf"torchjax: \w"):
        getattr(mod, name)
