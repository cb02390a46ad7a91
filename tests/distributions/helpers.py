"""Shared helpers: build the same distribution in PyTorch and in torchjax from numpy
parameters, and compare tensors from the two."""

import numpy as np
import torch

import torchjax
import torchjax.distributions  # noqa: F401

LIBS = {"torch": torch, "torchjax": torchjax}


def tensors(lib, params: dict, grad: bool = True) -> dict:
    """numpy arrays -> lib tensors; floating ones require grad when `grad`."""
    out = {}
    for k, v in params.items():
        if isinstance(v, np.ndarray):
            t = lib.tensor(v)
            if grad and v.dtype.kind == "f":
                t.requires_grad_(True)
            out[k] = t
        else:
            out[k] = v
    return out


def numpy(t) -> np.ndarray:
    if isinstance(t, torchjax.Tensor):
        return np.asarray(t.detach().numpy())
    return t.detach().cpu().numpy()


def assert_close(actual, expected, rtol=1e-5, atol=1e-6, what=""):
    """Values (nan and inf where the other has them) and dtype agree."""
    a, e = numpy(actual), numpy(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    assert str(a.dtype) == str(e.dtype), f"{what}: dtype {a.dtype} != {e.dtype}"
    np.testing.assert_allclose(a.astype(np.float64) if a.dtype.kind != "b" else a,
                               e.astype(np.float64) if e.dtype.kind != "b" else e,
                               rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def message(fn) -> tuple:
    """(exception type, message) of fn(), or (None, None)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None, None
