"""torchjax.finfo / torchjax.iinfo against torch's values, reprs and errors."""

from __future__ import annotations

import pytest
import torch

import torchjax

FLOATS = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
INTS = ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"]
FINFO_ATTRS = ["bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo(name):
    a, b = torchjax.finfo(getattr(torchjax, name)), torch.finfo(getattr(torch, name))
    for attr in FINFO_ATTRS:
        va, vb = getattr(a, attr), getattr(b, attr)
        assert type(va) is type(vb) and va == vb, attr
    assert repr(a) == repr(b) and str(a) == str(b)


@pytest.mark.parametrize("name", INTS)
def test_iinfo(name):
    a, b = torchjax.iinfo(getattr(torchjax, name)), torch.iinfo(getattr(torch, name))
    for attr in ("bits", "max", "min", "dtype"):
        va, vb = getattr(a, attr), getattr(b, attr)
        assert type(va) is type(vb) and va == vb, attr
    assert repr(a) == repr(b)


def test_defaults_and_python_types():
    assert torchjax.finfo().dtype == torch.finfo().dtype == "float32"
    torchjax.set_default_dtype(torchjax.float64)
    try:
        assert torchjax.finfo().dtype == "float64"
    finally:
        torchjax.set_default_dtype(torchjax.float32)
    assert repr(torchjax.finfo(float)) == repr(torch.finfo(float))
    assert repr(torchjax.iinfo(int)) == repr(torch.iinfo(int))
    assert repr(torchjax.finfo(type=torchjax.float16)) == repr(torch.finfo(type=torch.float16))
    assert torchjax.finfo(torchjax.float32) == torchjax.finfo(torchjax.float32)
    assert torchjax.finfo(torchjax.float32) != torchjax.finfo(torchjax.float64)
    assert torchjax.iinfo(torchjax.int8) == torchjax.iinfo(torchjax.int8)
    assert str(torchjax.finfo) == str(torch.finfo)


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - compared below
        return type(e), str(e)
    return None


@pytest.mark.parametrize("call", [
    lambda L: L.finfo(L.int32),
    lambda L: L.finfo(L.bool),
    lambda L: L.finfo(L.uint8),
    lambda L: L.finfo(int),
    lambda L: L.iinfo(L.float32),
    lambda L: L.iinfo(L.complex64),
    lambda L: L.iinfo(L.bool),
    lambda L: L.iinfo(bool),
    lambda L: L.finfo("float32"),
    lambda L: hash(L.finfo(L.float32)),
], ids=["finfo-int", "finfo-bool", "finfo-uint8", "finfo-pyint", "iinfo-float",
        "iinfo-complex", "iinfo-bool", "iinfo-pybool", "finfo-str", "hash"])
def test_errors(call):
    expected = _err(lambda: call(torch))
    assert expected is not None
    assert _err(lambda: call(torchjax)) == expected
