"""Fractional max pooling against PyTorch: F.fractional_max_pool2d / 3d (and _with_indices)
at the same random samples, over random shapes, kernel and output sizes, with ties and NaNs:
outputs, indices, gradients and grad_fn names; output_ratio; the samples drawn when none are
given; nn.FractionalMaxPool2d / 3d; PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax


def _case(seed):
    rng = np.random.default_rng(seed)
    n = 2 + seed % 2
    spatial = tuple(int(s) for s in rng.integers(5, 12, size=n))
    kernel = tuple(int(k) for k in rng.integers(1, 4, size=n))
    # the 3-d kernel wants its windows to end before the input's end
    out = tuple(int(rng.integers(1, s - k + (2 if n == 2 else 1)))
                for s, k in zip(spatial, kernel))
    x = rng.normal(size=(2, 3) + spatial)
    if seed % 5 == 0:
        x = np.round(x)
    if seed % 7 == 0:
        x.flat[rng.integers(0, x.size, 5)] = np.nan
    return n, x, rng.random((2, 3, n)), kernel, out


def _run(lib, n, x, u, kernel, out, dtype):
    xt = lib.tensor(x.astype(dtype), requires_grad=True)
    f = getattr(lib.nn.functional, f"fractional_max_pool{n}d_with_indices")
    o, i = f(xt, kernel, output_size=out, _random_samples=lib.tensor(u.astype(dtype)))
    w = lib.tensor(np.cos(np.arange(o.numel())).reshape(tuple(o.shape)).astype(dtype))
    (o * w).sum().backward()
    return o.detach().numpy(), i.numpy(), xt.grad.numpy(), o.grad_fn.name()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", range(12))
def test_matches_pytorch_at_the_same_samples(seed, dtype):
    want, got = (_run(lib, *_case(seed), dtype) for lib in (torch, torchjax))
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_allclose(got[0], want[0], equal_nan=True)
    np.testing.assert_allclose(got[2], want[2])
    assert got[3] == want[3]


def test_gradient_by_finite_differences():
    rng = np.random.default_rng(3)
    x = torchjax.tensor(rng.normal(size=(1, 2, 7, 6)), requires_grad=True)
    u = torchjax.tensor(rng.random((1, 2, 2)))
    assert torchjax.autograd.gradcheck(lambda x: torchjax.nn.functional.fractional_max_pool2d(
        x, 2, output_size=(3, 4), _random_samples=u), (x,))


def test_output_ratio_and_drawn_samples():
    x = np.random.default_rng(4).normal(size=(2, 3, 10, 9)).astype(np.float32)
    shapes = []
    for lib in (torch, torchjax):
        lib.manual_seed(0)
        out, idx = lib.nn.functional.fractional_max_pool2d(
            lib.tensor(x), 3, output_ratio=(0.5, 0.4), return_indices=True)
        shapes.append((tuple(out.shape), tuple(idx.shape)))
        # whatever the samples, each output is the element its index names
        flat = x.reshape(2, 3, -1)
        np.testing.assert_array_equal(
            np.take_along_axis(flat, idx.numpy().reshape(2, 3, -1), -1).reshape(out.shape),
            out.numpy())
    assert shapes[1] == shapes[0]


def test_modules_match_pytorch():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 3, 8, 8, 8))
    u = rng.random((2, 3, 3))
    got = []
    for lib in (torch, torchjax):
        m3 = lib.nn.FractionalMaxPool3d(2, output_size=(3, 4, 5), return_indices=True,
                                        _random_samples=lib.tensor(u))
        out, idx = m3(lib.tensor(x))
        m2 = lib.nn.FractionalMaxPool2d((2, 3), output_ratio=0.5)
        got.append((out.numpy(), idx.numpy(), repr(m3), repr(m2), list(m2.state_dict()),
                    m2.kernel_size, m2.output_ratio, m3.output_size))
    np.testing.assert_allclose(got[1][0], got[0][0])
    np.testing.assert_array_equal(got[1][1], got[0][1])
    assert got[1][2:] == got[0][2:]


ERRORS = {
    "no size": lambda lib: lib.nn.functional.fractional_max_pool2d(lib.ones(1, 1, 4, 4), 2),
    "ratio of three": lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.ones(1, 1, 4, 4), 2, output_ratio=(0.5, 0.5, 0.5)),
    "2-d input": lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.ones(4, 4), 2, output_size=2),
    "pool width": lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.ones(1, 1, 9, 9), (2, 8), output_size=4),
    "pool time": lambda lib: lib.nn.functional.fractional_max_pool3d(
        lib.ones(1, 1, 9, 9, 9), (8, 2, 2), output_size=4),
    "sample dtype": lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.ones(1, 2, 9, 9), 2, output_size=3,
        _random_samples=lib.ones(1, 2, 2, dtype=lib.float64)),
    "samples of three": lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.ones(1, 2, 9, 9), 2, output_size=3, _random_samples=lib.ones(1, 2, 3) / 2),
    "integer input": lambda lib: lib.nn.functional.fractional_max_pool2d(
        lib.ones(1, 2, 9, 9, dtype=lib.long), 2, output_size=3,
        _random_samples=lib.ones(1, 2, 2, dtype=lib.long)),
    "module without a size": lambda lib: lib.nn.FractionalMaxPool2d(2),
    "module with both": lambda lib: lib.nn.FractionalMaxPool2d(2, output_size=2,
                                                               output_ratio=0.5),
    "module ratio": lambda lib: lib.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 1.0, 0.5)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_pytorch(name):
    got = []
    for lib in (torch, torchjax):
        with pytest.raises(Exception) as e:
            ERRORS[name](lib)
        got.append((type(e.value).__name__, str(e.value)))
    assert got[1] == got[0]
