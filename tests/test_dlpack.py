"""torch.from_dlpack / to_dlpack and torch.utils.dlpack (src/torchjax/_dlpack.py): memory
shared with CPU producers as PyTorch shares it, capsules consumed once, and PyTorch's error."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchjax


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int16", "uint8", "bool"])
def test_from_numpy_shares(dtype):
    out = []
    for lib in (torch, torchjax):
        a = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
        t = lib.from_dlpack(a)
        a[0, 0] = 1  # seen by the tensor
        first = t.tolist()
        t[1, 2] = 0  # seen by the array
        out.append((first, a.tolist(), str(t.dtype), tuple(t.shape)))
    assert out[0] == out[1]


def test_from_pytorch_tensor_shares():
    src = torch.arange(4.0)
    t = torchjax.from_dlpack(src)
    src[0] = 5.0
    assert t.tolist() == [5.0, 1.0, 2.0, 3.0]
    t[3] = -1.0
    assert src.tolist() == [5.0, 1.0, 2.0, -1.0]


def test_capsules_round_trip_once():
    msgs = []
    for lib in (torch, torchjax):
        cap = lib.to_dlpack(lib.tensor([1, 2, 3]))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning either
            assert lib.from_dlpack(cap).tolist() == [1, 2, 3]
        with pytest.raises(RuntimeError) as e:
            lib.from_dlpack(cap)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert msgs[0].startswith("from_dlpack received an invalid capsule")


def test_tensor_and_jax_array_and_copy():
    import jax.numpy as jnp
    x = torchjax.tensor([1.0, 2.0], requires_grad=True)
    y = torchjax.from_dlpack(x)
    assert not y.requires_grad and y.tolist() == [1.0, 2.0]
    z = torchjax.from_dlpack(jnp.arange(3.0))
    assert z.tolist() == [0.0, 1.0, 2.0]
    a = np.arange(3.0)
    c = torchjax.from_dlpack(a, copy=True)
    a[0] = 9.0
    assert c.tolist() == [0.0, 1.0, 2.0]


def test_utils_module():
    from torchjax.utils import dlpack
    assert dlpack.from_dlpack is torchjax.from_dlpack
    assert dlpack.to_dlpack is torchjax.to_dlpack


def test_not_an_array():
    for lib in (torch, torchjax):
        with pytest.raises(RuntimeError, match="from_dlpack received an invalid capsule"):
            lib.from_dlpack([1, 2])
