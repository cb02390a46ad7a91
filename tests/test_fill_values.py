"""Tensor.fill_ with a Python number checks it as PyTorch's checked_convert does: a value
out of the dtype's range (or NaN/inf into an integer dtype) raises PyTorch's error rather
than storing a wrapped or saturated value."""

import numpy as np
import pytest
import torch

import torchjax

CASES = [
    ("uint8", -3), ("uint8", -300), ("uint8", 256), ("uint8", -3.0), ("uint8", True),
    ("int8", float("nan")), ("int8", -128), ("int16", 70000.0), ("int32", 2**31),
    ("int32", 3.7), ("int64", float("inf")), ("int64", -(2**63)), ("bool", 5),
    ("bool", float("nan")), ("float16", 65504.0), ("float16", 65519.0), ("float16", 65504.5),
    ("bfloat16", 70000.0), ("bfloat16", 1e40), ("float32", 3.5e38), ("float32", float("-inf")),
    ("float32", 1e40j), ("float32", 2 + 0j), ("float64", 10**400), ("float32", -(2**63) - 1), ("float64", float("nan")),
    ("complex64", 1e40), ("complex64", 1 + 1e40j), ("complex128", 1e300 + 2j),
]


def _fill(lib, dtype, value):
    t = lib.zeros(3, dtype=getattr(lib, dtype))
    try:
        t.fill_(value)
    except (RuntimeError, OverflowError) as e:
        return type(e).__name__, str(e).split("\n")[0]
    return t.to(lib.complex128).numpy() if "complex" in dtype else t.to(lib.float64).numpy()


@pytest.mark.parametrize("dtype,value", CASES, ids=[f"{d}-{v!r:.12}" for d, v in CASES])
def test_fill_checks_the_value_as_pytorch(dtype, value):
    want, got = _fill(torch, dtype, value), _fill(torchjax, dtype, value)
    if isinstance(want, tuple):
        assert got == want
    else:
        np.testing.assert_array_equal(got, want)
