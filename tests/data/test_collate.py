"""default_collate / default_convert against torch, in the main process and in the shipping
form workers use (numpy arrays that unpickle as tensors)."""

from __future__ import annotations

import collections
import pickle

import numpy as np
import pytest

import torchjax
from torchjax.utils.data import _collate

from .common import both, plain, same_error

Point = collections.namedtuple("Point", "x y")


def samples(lib):
    """Two samples of every kind default_collate handles."""
    return [
        {"t": lib.tensor([1.0, 2.0]), "i": lib.tensor(3), "f": 0.5, "n": 7, "b": True,
         "s": "a", "by": b"x", "a": np.arange(3, dtype=np.int32), "a0": np.array(2.5),
         "sc": np.float32(1.5), "mix8": np.int8(1), "p": Point(1, [2.0, "u"]), "tup": (1, 2.0)},
        {"t": lib.tensor([3.0, 4.0]), "i": lib.tensor(4), "f": 1.5, "n": 8, "b": False,
         "s": "b", "by": b"y", "a": np.arange(3, 6, dtype=np.int32), "a0": np.array(3.5),
         "sc": np.float32(2.5), "mix8": np.uint8(2), "p": Point(3, [4.0, "v"]), "tup": (3, 4.0)},
    ]


def test_default_collate_structure_and_dtypes():
    t, j = both(lambda lib: lib.utils.data.default_collate(samples(lib)))
    assert t == j


def test_shipping_collate_equals_main_process():
    shipped = _collate.for_worker(torchjax.utils.data.default_collate)(samples(torchjax))
    received = pickle.loads(pickle.dumps(shipped))
    assert plain(received) == plain(torchjax.utils.data.default_collate(samples(torchjax)))
    assert isinstance(received["t"], torchjax.Tensor)


@pytest.mark.parametrize("batch", [
    [1, 2.5], [True, 2], [np.int64(1), np.int32(2)], [[1, 2], [3, 4]],
    [{"k": [np.zeros(2, np.float16)]}, {"k": [np.ones(2, np.float16)]}],
])
def test_default_collate_numbers(batch):
    t, j = both(lambda lib: lib.utils.data.default_collate(batch))
    assert t == j


def test_default_collate_keeps_autograd():
    x = torchjax.tensor(1.0, requires_grad=True)
    out = torchjax.utils.data.default_collate([x, torchjax.tensor(2.0)])
    assert out.grad_fn.name() == "StackBackward0"


@pytest.mark.parametrize("batch", [
    [object(), object()],
    [None, None],
    [[1, 2], [1]],
    [np.array(["a"]), np.array(["b"])],
    [np.zeros(2, dtype="M8[s]")] * 2,
    [np.zeros(2, dtype=">f4")] * 2,
    [np.zeros((2, 3)), np.zeros((3, 2))],
    [np.zeros(()), np.zeros(1)],
])
def test_default_collate_errors(batch):
    same_error(lambda lib: lib.utils.data.default_collate(batch))
    ship = _collate.for_worker(torchjax.utils.data.default_collate)
    same_error(lambda lib: (lib.utils.data.default_collate if lib is not torchjax else ship)(
        batch))


def test_stack_size_error_for_tensors():
    same_error(lambda lib: lib.utils.data.default_collate([lib.zeros(2), lib.zeros(3)]))


def test_default_convert():
    data = (np.array([1, 2], np.int16), 2.0, "x", np.float64(1), {"a": np.array(["s"])},
            Point(np.bool_(True), [np.zeros(1)]))
    t, j = both(lambda lib: lib.utils.data.default_convert(data))
    assert t == j
    ship = _collate.for_worker(torchjax.utils.data.default_convert)
    assert plain(pickle.loads(pickle.dumps(ship(data)))) == j


def test_custom_collate_fn_map():
    from torchjax.utils.data._utils.collate import collate, default_collate_fn_map

    def collate_str(batch, *, collate_fn_map=None):
        return "|".join(batch)
    out = collate([("a", 1), ("b", 2)],
                  collate_fn_map={**default_collate_fn_map, str: collate_str})
    assert out[0] == "a|b" and out[1].tolist() == [1, 2]
