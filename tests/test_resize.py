"""Tensor.resize_ / resize_as_ / resize / resize_as and torch.resize_as_
(src/torchjax/_resize.py) against PyTorch 2.13: shapes, the values kept (including those a
shrink cut off, back after a growth), version bumps, and PyTorch's errors. (PyTorch leaves
grown elements uninitialised: only the defined ones are compared.)"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchjax


def _both(fn):
    out = []
    for lib in (torch, torchjax):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(fn(lib))
    return out


def test_reshape_shrink_grow_keeps_storage():
    def run(lib):
        x = lib.arange(6.0)
        steps = []
        r = x.resize_(2, 3)
        steps.append((r is x, tuple(x.shape), x.tolist(), x._version))
        x.resize_(2)
        x.add_(10)
        steps.append((tuple(x.shape), x.tolist(), x._version))
        x.resize_((6,))  # the cut-off values come back
        steps.append((tuple(x.shape), x.tolist(), x._version))
        x.resize_([3, 3])
        steps.append((tuple(x.shape), x.reshape(-1)[:6].tolist(), x._version))
        return steps
    t, j = _both(run)
    assert j == t


def test_resize_as_and_deprecated_forms():
    def run(lib):
        a = lib.zeros(4)
        b = lib.resize_as_(a, lib.ones(2, 2))
        c = lib.zeros(3).resize_as_(lib.ones(1, 3))
        w = lib.arange(6.0)
        d = w.resize(3, 2)
        e = w.resize_as(lib.ones(2, 3))
        return (b is a, tuple(a.shape), tuple(c.shape), d.tolist(), tuple(w.shape),
                e.tolist())
    t, j = _both(run)
    assert j == t


def test_resize_warns_deprecated():
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        torchjax.arange(4.0).resize(2, 2)


@pytest.mark.parametrize("make,exc,phrase", [
    (lambda t: t.ones(2, requires_grad=True).resize_(3), RuntimeError,
     "cannot resize variables that require grad"),
    (lambda t: t.arange(6.0).resize_(-1), RuntimeError, "numel: integer multiplication overflow"),
    (lambda t: t.from_numpy(np.arange(4.0)).resize_(8), RuntimeError,
     "Trying to resize storage that is not resizable"),
])
def test_errors(make, exc, phrase):
    for lib in (torch, torchjax):
        with pytest.raises(exc) as e:
            make(lib)
        assert phrase in str(e.value), (lib.__name__, str(e.value))


def test_views_are_refused_clearly():
    b = torchjax.arange(6.0)
    with pytest.raises(NotImplementedError, match="resize_ of a view"):
        b[1:3].resize_(4)
