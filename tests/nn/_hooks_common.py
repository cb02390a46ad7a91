"""The shared pieces of the module hook tests (test_hooks*.py): records of what hooks saw,
their comparison between PyTorch and torchjax, global hook registrations and the fixture
that resets them."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
import torch

import torchjax

LIBS = (torch, torchjax)


def modmod(lib):
    """lib.nn.modules.module, where the global hook registrations live."""
    return importlib.import_module(lib.__name__ + ".nn.modules.module")


def rec(x):
    """A comparable record of hook arguments: tensors become (shape, dtype, values)."""
    if isinstance(x, (torch.Tensor, torchjax.Tensor)):
        return ("T", tuple(x.shape), str(x.dtype), np.asarray(x.detach().numpy()).tolist())
    if isinstance(x, (tuple, list)):
        return type(x)(rec(v) for v in x)
    return x


def assert_same(got, expected):
    """Equal records, tensors' values to float tolerance."""
    if isinstance(expected, tuple) and expected[:1] == ("T",):
        assert isinstance(got, tuple) and got[:3] == expected[:3], (got, expected)
        np.testing.assert_allclose(np.asarray(got[3], dtype=np.float64),
                                   np.asarray(expected[3], dtype=np.float64), rtol=1e-5,
                                   atol=1e-6)
        return
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected), (got, expected)
        for g, e in zip(got, expected):
            assert_same(g, e)
        return
    assert got == expected


def same(fn):
    """fn(lib) returns the same record in both libraries."""
    expected = fn(torch)
    assert_same(fn(torchjax), expected)
    return expected


def error_of(fn, lib):
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value).__name__, str(info.value)


def same_error(fn):
    expected = error_of(fn, torch)
    assert error_of(fn, torchjax) == expected
    return expected


def warnings_of(fn, lib):
    """(result, [(category, message)]) of fn(lib), every warning recorded."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = fn(lib)
    return res, [(x.category.__name__, str(x.message)) for x in w]


class _Globals:
    """Global hooks registered for one test and removed after it."""

    def __init__(self, lib):
        self.mm = modmod(lib)
        self.handles = []

    def add(self, name, *args, **kwargs):
        self.handles.append(getattr(self.mm, name)(*args, **kwargs))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()


@pytest.fixture(autouse=True)
def _reset_global_full_flag():
    """register_module_(full_)backward_hook sets a sticky module flag: keep tests apart."""
    yield
    for lib in LIBS:
        modmod(lib)._global_is_full_backward_hook = None


def scale_module(lib, name, log, factor=2.0):
    """y = x * w with w = factor (a parameter), logging its forward."""
    class Scale(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.full((3,), factor))

        def forward(self, x):
            log.append(("forward", name))
            return x * self.w
    return Scale()
