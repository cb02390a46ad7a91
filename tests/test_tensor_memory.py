"""Tensor.data_ptr / const_data_ptr against PyTorch: not the addresses themselves (XLA owns
the buffers) but what code reads from them: a view's offset from its base in bytes, equal
pointers for the same storage and offset, a pointer an in-place op keeps, a new one for a
copy, 64-byte alignment, and 0 for a tensor of no elements."""

from __future__ import annotations

import pytest
import torch

import torchjax


def _x(lib, dtype=None):
    return lib.arange(24, dtype=dtype or lib.float32).reshape(4, 6)


VIEWS = {
    "select": lambda x: x[1],
    "column": lambda x: x[:, 2],
    "block": lambda x: x[2:, 3:],
    "transpose": lambda x: x.t(),
    "transposed row": lambda x: x.T[3],
    "view": lambda x: x.view(6, 4),
    "reshape": lambda x: x.reshape(-1),
    "detach": lambda x: x.detach(),
    "data": lambda x: x.data,
    "detached select": lambda x: x[1].detach(),
    "narrow": lambda x: x.narrow(1, 2, 3),
    "unbind": lambda x: x.unbind(0)[2],
    "split": lambda x: x.split(2)[1],
    "expand": lambda x: x[1:2].expand(3, 6)[2],
    "diagonal": lambda x: x.diagonal(1),
    "contiguous": lambda x: x.contiguous(),
    "same-dtype to": lambda x: x.to(x.dtype),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16"])
def test_offsets_from_the_base_match_pytorch(name, dtype):
    got = []
    for lib in (torch, torchjax):
        x = _x(lib, getattr(lib, dtype))
        v = VIEWS[name](x)
        got.append((v.data_ptr() - x.data_ptr(), v.const_data_ptr() == v.data_ptr()))
    assert got[1] == got[0]


def _relations(lib):
    x = _x(lib)
    before = x.data_ptr()
    x.add_(1)
    x[0, 0] = 5.0
    lin1, lin2 = lib.nn.Linear(3, 3), lib.nn.Linear(3, 3)
    lin2.weight = lin1.weight
    a, b = lib.zeros(3), lib.zeros(3)
    return {
        "in-place keeps it": x.data_ptr() == before,
        "clone is new": x.clone().data_ptr() != x.data_ptr(),
        "a cast is new": x.to(lib.float16).data_ptr() != x.data_ptr(),
        "t().contiguous() is new": x.t().contiguous().data_ptr() != x.data_ptr(),
        "two tensors differ": a.data_ptr() != b.data_ptr(),
        "tied weights share, biases do not": (lin1.weight.data_ptr() == lin2.weight.data_ptr(),
                                              lin1.bias.data_ptr() == lin2.bias.data_ptr()),
        "64-byte aligned": x.data_ptr() % 64,
        "not null": x.data_ptr() != 0,
        "empty tensor": lib.empty(0).data_ptr(),
        "empty view": x[1:1].data_ptr(),
    }


def test_relations_match_pytorch():
    assert _relations(torchjax) == _relations(torch)
