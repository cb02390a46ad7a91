"""Smaller Tensor methods and torch functions real programs use (Tensor.new, get_device,
nbytes, is_nonzero, sum_to_size, fill_diagonal_, apply_/map_, narrow_copy, split_with_sizes,
adjoint, scalar_tensor, asarray, torch.range, trapz, vmap), against PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchjax

from ._same_error import outcome


def _res(f, lib):
    return outcome(f, lib, _plain)


def _plain(r):
    if isinstance(r, (torch.Tensor, torchjax.Tensor)):
        return (str(r.dtype).replace("torchjax", "torch"), tuple(r.shape),
                np.round(r.detach().numpy().astype(np.float64), 6).tolist())
    if isinstance(r, (list, tuple)):
        return [_plain(x) for x in r]
    return r


CALLS = {
    "new sizes": lambda t: t.arange(6.).new(2, 3).shape,
    "new data": lambda t: t.arange(6.).long().new([1.5, -2.5]),
    "new empty": lambda t: t.ones(2).new().shape,
    "new Size": lambda t: t.ones(2).new(t.Size([3])).shape,
    "new tensor": lambda t: t.ones(2).new(t.arange(3.)),
    "get_device": lambda t: (t.ones(2).get_device(), t.get_device(t.ones(1))),
    "sizes": lambda t: (t.ones(2, 3).nbytes, t.ones(2, dtype=t.int16).itemsize,
                        t.ones(1).is_signed(), t.ones(1, dtype=t.uint8).is_signed(),
                        t.ones(2, 3).is_same_size(t.zeros(2, 3))),
    "is_nonzero": lambda t: (t.tensor([2.0]).is_nonzero(), t.is_nonzero(t.tensor([0]))),
    "is_nonzero many": lambda t: t.ones(2).is_nonzero(),
    "is_nonzero none": lambda t: t.tensor([]).is_nonzero(),
    "sum_to_size": lambda t: [t.arange(6.).view(2, 3).sum_to_size(*s)
                              for s in ((1, 3), (2, 1), (3,), ((2, 3),))],
    "sum_to_size bad": lambda t: t.ones(2, 3).sum_to_size(4),
    "fill_diagonal_": lambda t: (t.zeros(3, 4).fill_diagonal_(5.0),
                                 t.zeros(7, 3).fill_diagonal_(1, wrap=True),
                                 t.zeros(7, 3).fill_diagonal_(2),
                                 t.zeros(2, 2, 2).fill_diagonal_(3)),
    "fill_diagonal_ bad": lambda t: t.zeros(2, 3, 2).fill_diagonal_(3),
    "apply_": lambda t: t.arange(4.).apply_(lambda v: v * 2 + 1),
    "map_": lambda t: t.arange(4).map_(t.tensor([1, 2, 3, 4]), lambda a, b: a * b),
    "narrow_copy": lambda t: t.arange(6.).view(2, 3).narrow_copy(1, 0, 2),
    "split_with_sizes": lambda t: (t.arange(6.).view(2, 3).split_with_sizes([1, 2], dim=1),
                                   t.split_with_sizes(t.arange(4.), [3, 1])),
    "adjoint": lambda t: (t.arange(6.).view(2, 3).adjoint(), t.adjoint(t.ones(2, 1, 3))),
    "scalar_tensor": lambda t: (t.scalar_tensor(2), t.scalar_tensor(True),
                                t.scalar_tensor(2, dtype=t.int32)),
    "asarray": lambda t: (t.asarray([1, 2]), t.asarray([1.0, 2.0], dtype=t.float64),
                          t.asarray(3.5), t.asarray(True),
                          t.asarray(t.ones(2), requires_grad=True).requires_grad),
    "asarray identity": lambda t: [(lambda o: (t.asarray(o) is o, t.asarray(o, copy=True) is o))(
        t.ones(2))],
    "trapz": lambda t: t.trapz(t.tensor([1.0, 2.0, 3.0])),
    "vmap": lambda t: t.vmap(lambda a: (a * a).sum())(t.arange(6.).view(3, 2)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_against_pytorch(name):
    assert _res(CALLS[name], torchjax) == _res(CALLS[name], torch)


def test_range_is_inclusive_and_deprecated():
    for lib in (torch, torchjax):
        with pytest.warns(UserWarning, match="torch.range is deprecated") as rec:
            got = [_plain(lib.range(1, 4)), _plain(lib.range(1, 4, dtype=lib.int64)),
                   _plain(lib.range(0, 1, 0.3))]
        assert rec[0].filename == __file__
        if lib is torch:
            want = got
    assert got == want
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError, match="end"):
            torchjax.range(3)


def test_pin_memory_is_a_no_op():
    # JAX moves host arrays to devices itself: there is no pinned copy to make
    x = torchjax.ones(2)
    assert x.pin_memory() is x and not x.is_pinned()
