"""Helpers shared by the torchjax.utils.data tests: run the same code on torch and torchjax
and compare what comes out."""

from __future__ import annotations

import collections.abc

import torch

import torchjax


def plain(x):
    """A batch as comparable Python data: tensors become (dtype, shape, values); containers
    keep their type name, so a tuple that should have become a list is caught."""
    if isinstance(x, (torch.Tensor, torchjax.Tensor)):
        return ("tensor", str(x.dtype), tuple(x.shape), x.tolist())
    if isinstance(x, collections.abc.Mapping):
        return (type(x).__name__, {k: plain(v) for k, v in x.items()})
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [plain(v) for v in x])
    return x


def both(fn):
    """fn(lib) for torch and for torchjax, as plain data: (torch's, torchjax's)."""
    return plain(fn(torch)), plain(fn(torchjax))


def error_of(fn, lib):
    """(type name, message) of what fn(lib) raises."""
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 - any error is compared
        return type(e).__name__, str(e)
    return None


def same_error(fn):
    t, j = error_of(fn, torch), error_of(fn, torchjax)
    assert t is not None
    assert t == j
