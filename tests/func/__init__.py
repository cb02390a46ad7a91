"""Helpers for the torchjax.func / autograd.functional tests: run one lambda with torch and
with torchjax, compare results (structure, shapes, dtypes, values) and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

LIBS = (torch, torchjax)


def arr(*shape, seed=0, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)


def assert_same(expected, got, rtol=1e-5, atol=1e-6, path="result"):
    """torch's result and torchjax's agree: same nesting, container types, dict key order,
    tensor shapes, dtypes and values (float32 tolerance)."""
    if isinstance(expected, torch.Tensor):
        assert isinstance(got, torchjax.Tensor), f"{path}: expected a Tensor, got {type(got)}"
        assert tuple(got.shape) == tuple(expected.shape), (
            f"{path}: shape {tuple(got.shape)} != {tuple(expected.shape)}")
        assert str(got.dtype) == str(expected.dtype), f"{path}: {got.dtype} != {expected.dtype}"
        np.testing.assert_allclose(np.asarray(got._data), expected.detach().numpy(),
                                   rtol=rtol, atol=atol, err_msg=path)
        return
    if isinstance(expected, (tuple, list)):
        assert type(got).__name__ == type(expected).__name__, (
            f"{path}: {type(got).__name__} != {type(expected).__name__}")
        assert len(got) == len(expected), f"{path}: length {len(got)} != {len(expected)}"
        for i, (e, g) in enumerate(zip(expected, got)):
            assert_same(e, g, rtol, atol, f"{path}[{i}]")
        return
    if isinstance(expected, dict):
        assert isinstance(got, dict), f"{path}: expected a dict, got {type(got)}"
        assert list(got) == list(expected), f"{path}: keys {list(got)} != {list(expected)}"
        for k in expected:
            assert_same(expected[k], got[k], rtol, atol, f"{path}[{k!r}]")
        return
    assert got == expected, f"{path}: {got!r} != {expected!r}"


def check(fn, rtol=1e-5, atol=1e-6):
    """fn(lib) agrees between torch and torchjax; returns torchjax's result."""
    expected = fn(torch)
    got = fn(torchjax)
    assert_same(expected, got, rtol, atol)
    return got


def check_raises(fn, match=None):
    """fn(lib) raises the same exception type in both; the messages are equal, or both contain
    `match` when given (for messages that embed reprs that differ)."""
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(Exception) as got:
        fn(torchjax)
    assert type(got.value).__name__ == type(expected.value).__name__, (
        f"{type(got.value).__name__}: {got.value} vs {type(expected.value).__name__}: "
        f"{expected.value}")
    if match is None:
        assert str(got.value) == str(expected.value)
    else:
        assert match in str(expected.value), str(expected.value)
        assert match in str(got.value), str(got.value)
    return got.value
