"""Samples for the rows in _ops/structure.py, stacking.py, splitting.py and tensor_products.py."""

import numpy as np

from .harness import Const, S, make


def _method(name):
    return lambda lib, x, *a, **k: getattr(x, name)(*a, **k)


def _inplace(name):
    return lambda lib, x, *a, **k: getattr(x.clone(), name + "_")(*a, **k)


def _fn(name):
    return lambda lib, *a, **k: getattr(lib, name)(*a, **k)


def _tri(name):
    return [
        S(make(3, 4)),
        S(make(4, 3), 1),
        S(make(3, 4), -1),
        S(make(2, 3, 4), diagonal=2),
        S(make(3, 3), -5),
        S(make(0, 3)),
        S(make(3, 4, dtype="int64", low=-5, high=5), 1),
        S(make(3, 3, dtype="bool")),
        S(make(3, 4), 1, call=_method(name)),
        S(make(3, 4), -1, call=_inplace(name)),
        S(make(2, 3, 3, dtype="int32", low=-5, high=5), call=_inplace(name)),
    ]


def _diag(name):
    return [
        S(make(3, 4)),
        S(make(3, 4), 1),
        S(make(3, 4), -2),
        S(make(3, 4), 5),
        S(make(2, 3, 4), 0, 1, 2),
        S(make(2, 3, 4), offset=1, dim1=-1, dim2=0),
        S(make(2, 3, 4), -1, 2, 1),
        S(make(3, 3, dtype="int64", low=-5, high=5)),
        S(make(2, 2, dtype="bool"), 1),
    ]


# PyTorch 2.13's vander backward raises (it modifies a saved tensor in place), so these
# compare values only; tests/test_structure.py checks our gradient by finite differences
def _vander(increasing):
    def call(lib, x, *a, **k):
        return lib.vander(x, *a, increasing=increasing, **k)
    return [
        S(make(4), grad=False, call=call),
        S(make(4), 2, grad=False, call=call),
        S(make(3), N=5, grad=False, call=call),
        S(make(3), 0, grad=False, call=call),
        S(make(3), 1, grad=False, call=call),
        S(make(0), 3, grad=False, call=call),
        S(make(3, dtype="int32", low=-3, high=4), grad=False, call=call),
        S(make(3, dtype="bool"), 4, grad=False, call=call),
        S(make(3, dtype="float64"), grad=False, call=call),
    ]


SAMPLES = {
    "vander": _vander(False),
    "_vander_increasing": _vander(True),
    "tril": _tri("tril"),
    "triu": _tri("triu"),
    "diagonal": _diag("diagonal") + [
        S(make(3, 4), 1, call=_method("diagonal")),
        S(make(2, 3, 4), dim1=2, dim2=0, call=_method("diagonal")),
    ],
    "diagonal_copy": _diag("diagonal_copy") + [
        S(make(4), call=_fn("diag")),
        S(make(4), 1, call=_fn("diag")),
        S(make(3), diagonal=-2, call=_fn("diag")),
        S(make(3, 4), call=_fn("diag")),
        S(make(3, 4), -1, call=_method("diag")),
        S(make(3, dtype="int64", low=-5, high=5), call=_method("diag")),
    ],
    "diag_embed": [
        S(make(3)),
        S(make(2, 3), 1),
        S(make(2, 3), -2),
        S(make(2, 3), 1, 0, 2),
        S(make(2, 3), offset=-1, dim1=-1, dim2=0),
        S(make(2, 3), dim1=1, dim2=0),
        S(make(0)),
        S(make(2, 2, dtype="int32", low=-5, high=5)),
        S(make(3, dtype="bool"), 1),
        S(make(2, 3), 1, call=_method("diag_embed")),
    ],
    "diagflat": [
        S(make(3)),
        S(make(2, 3)),
        S(make(2, 2), 1),
        S(make(3), offset=-2),
        S(make()),
        S(make(3, dtype="int64", low=-5, high=5), 1),
        S(make(2, 2), -1, call=_method("diagflat")),
    ],
    "trace": [
        S(make(3, 3)),
        S(make(3, 5)),
        S(make(5, 2)),
        S(make(0, 3)),
        S(make(3, 3, dtype="int32", low=-5, high=5)),
        S(make(3, 3, dtype="uint8", low=0, high=100)),
        S(make(2, 4), call=_method("trace")),
    ],
    "flip": [
        S(make(3, 4), (0,)),
        S(make(3, 4), [0, 1]),
        S(make(2, 3, 4), (-1, 0)),
        S(make(3, 4), ()),
        S(make(), (0,)),
        S(make(4, dtype="int64"), (0,)),
        S(make(2, 3, dtype="bool"), (1,)),
        S(make(2, 3, 4), 0, 2, call=_method("flip")),
        S(make(2, 3, 4), (1,), call=_method("flip")),
    ],
    "fliplr": [
        S(make(3, 4)),
        S(make(2, 3, 4)),
        S(make(3, 4, dtype="int32")),
        S(make(3, 4), call=_method("fliplr")),
    ],
    "flipud": [
        S(make(4)),
        S(make(3, 4)),
        S(make(3, 4, dtype="bool")),
        S(make(3, 4), call=_method("flipud")),
    ],
    "roll": [
        S(make(3, 4), 1),
        S(make(3, 4), -5),
        S(make(3, 4), 1, 0),
        S(make(3, 4), (1, -2), (0, 1)),
        S(make(2, 3, 4), shifts=[2, 7], dims=[-1, 0]),
        S(make(), 3),
        S(make(5, dtype="int64"), 2),
        S(make(2, 3, dtype="bool"), 1, 1),
        S(make(3, 4), 2, -1, call=_method("roll")),
    ],
    "rot90": [
        S(make(3, 4)),
        S(make(3, 4), 2),
        S(make(3, 4), -1),
        S(make(3, 4), 5, [1, 0]),
        S(make(2, 3, 4), k=3, dims=(0, -1)),
        S(make(2, 3, 4), 0, (1, 2)),
        S(make(3, 4, dtype="int64")),
        S(make(2, 3, dtype="bool"), 1),
        S(make(3, 4), 1, [0, 1], call=_method("rot90")),
    ],
    "tile": [
        S(make(3, 4), (2,)),
        S(make(3, 4), (2, 1, 2)),
        S(make(3, 4), [1, 3]),
        S(make(3, 4), ()),
        S(make(), (2, 3)),
        S(make(2, 2), (0, 1)),
        S(make(3, dtype="int64"), (2,)),
        S(make(3, dtype="bool"), (2, 1)),
        S(make(3, 4), 2, call=_method("tile")),
        S(make(3, 4), 2, 1, 1, call=_method("tile")),
        S(make(3, 4), (1, 2), call=_method("tile")),
    ],
    "repeat_interleave": [
        S(make(3, 4), 2),
        S(make(3, 4), 3, 0),
        S(make(3, 4), 2, dim=-1),
        S(make(3, 4), 0, 1),
        S(make(3, 4), 2, dim=0, output_size=6),
        S(make(), 3),
        S(make(4, dtype="int32"), 2),
        S(make(4, dtype="bool"), 2, 0),
        S(make(3, 4), 2, 1, call=_method("repeat_interleave")),
        # a tensor of repeats: an eager index_select on the values read from it
        S(make(3, 4), Const(np.array([1, 0, 2])), dim=0),
        S(make(3, 4), Const(np.array([2, 1, 1, 3])), 1, output_size=7),
        S(make(3, 4), Const(np.array([2]))),
        S(make(3, 4), Const(np.array(2)), 1),
        S(make(3, dtype="int64"), Const(np.array([3, 0, 1]))),
        S(make(3, 4), Const(np.array([1, 2, 1])), 0, call=_method("repeat_interleave")),
        S(Const(np.array([1, 0, 2, 3])), grad=False),
        S(Const(np.array([2, 1], dtype=np.int32)), output_size=3, grad=False),
    ],
    "block_diag": [
        S(make(2, 3), make(3, 2)),
        S(make(2, 3), make(4), make()),
        S(make(2, 2)),
        S(make(0, 2), make(2, 0), make(1, 1)),
        S(make(2, dtype="int32"), make(1, 2)),
        S(make(2, dtype="int64"), make(2, 2, dtype="int32")),
        S(make(2, dtype="bool"), make(1, dtype="bool")),
        S(make(2, 2), make(2, dtype="float64")),
        S(call=lambda lib: lib.block_diag()),
    ],
    "tensor_split": [
        S(make(7, 3), 3),
        S(make(3, 7), 3, 1),
        S(make(3, 4), 5),
        S(make(3, 4), [1, 3]),
        S(make(3, 4), (2, 1, 5)),
        S(make(3, 4), [-1], dim=-1),
        S(make(3, 4), []),
        S(make(6, dtype="int64"), 4),
        S(make(3, 4), Const(np.array([1, 2])), 1),
        S(make(3, 4), Const(np.array(2))),
        S(make(3, 4), 2, dim=1, call=_method("tensor_split")),
        S(make(3, 4), [1], call=_method("tensor_split")),
        # hsplit / vsplit / dsplit are tensor_split along a fixed dim
        S(make(3, 4), 2, call=_fn("hsplit")),
        S(make(4), [1, 3], call=_fn("hsplit")),
        S(make(3, 4), [1, 5], call=_method("hsplit")),
        S(make(4, 3), 2, call=_fn("vsplit")),
        S(make(3, 4), [2], call=_method("vsplit")),
        S(make(2, 3, 4), 2, call=_fn("dsplit")),
        S(make(2, 3, 4), [1, 2], call=_method("dsplit")),
    ],
    "unfold": [
        S(make(3, 4), 1, 2, 1, call=_method("unfold")),
        S(make(3, 4), 0, 2, 1, call=_method("unfold")),
        S(make(3, 7), -1, 3, 2, call=_method("unfold")),
        S(make(2, 6, 3), 1, 2, 2, call=_method("unfold")),
        S(make(3, 4), 1, 4, 3, call=_method("unfold")),
        S(make(3, 4), 1, 0, 1, call=_method("unfold")),
        S(make(), 0, 1, 1, call=_method("unfold")),
        S(make(5, dtype="int64"), 0, 2, 2, call=_method("unfold")),
    ],
    "kron": [
        S(make(2, 3), make(3, 2)),
        S(make(2, 3), make(4)),
        S(make(3), make(2, 2, 2)),
        S(make(), make(3)),
        S(make(2, 2), make(2, 2, dtype="float64")),
        S(make(2, dtype="int32"), make(2, dtype="int64")),
        S(make(2, dtype="int64"), make(3)),
        S(make(2, dtype="bool"), make(2, dtype="bool")),
        S(make(2, 2), make(2, 2), call=_method("kron")),
    ],
    "tensordot": [
        S(make(3, 4), make(3, 4)),
        S(make(3, 4), make(4, 5), 1),
        S(make(2, 3, 4), make(3, 4, 5), dims=2),
        S(make(3, 4), make(5, 2), 0),
        S(make(3, 4), make(5, 4), ([1], [1])),
        S(make(2, 3, 4), make(4, 2, 5), [[0, 2], [1, 0]]),
        S(make(3, 4, dtype="int64"), make(4, dtype="int64"), 1),
        S(make(3, 4), make(3, 4), Const(np.array(2))),
        S(make(3, 4), make(4, 3), Const(np.array([[1], [0]]))),
    ],
    "cross": [
        S(make(4, 3), make(4, 3)),
        S(make(3, 4), make(3, 4), 0),
        S(make(2, 3, 4), make(2, 3, 4), dim=1),
        S(make(1, 3), make(5, 3), dim=-1),
        S(make(3), make(3)),
        S(make(2, 3, 3), make(2, 3, 3)),
        S(make(4, 3, dtype="int64"), make(4, 3, dtype="int64"), 1),
        S(make(4, 3), make(4, 3), dim=1, call=_method("cross")),
    ],
    "cdist": [
        S(make(3, 4), make(5, 4)),
        S(make(3, 4), make(5, 4), 1.0),
        S(make(3, 4), make(5, 4), p=3),
        S(make(3, 4), make(5, 4), p=0.5),
        S(make(3, 4), make(5, 4), p=0.0),
        S(make(3, 4), make(5, 4), p=float("inf")),
        S(make(2, 3, 4), make(2, 5, 4)),
        S(make(2, 1, 3, 4), make(4, 5, 4), 1.5),
        S(make(3, 4), make(5, 4), compute_mode="donot_use_mm_for_euclid_dist"),
        S(make(0, 4), make(5, 4)),
        S(make(3, 0), make(5, 0)),
        # PyTorch computes these through a matmul (over 25 rows, or when asked): same values to
        # rounding, and its grad_fn is then ViewBackward0
        # PyTorch's matrix-multiply path (large or use_mm) ends in ViewBackward0
        S(make(30, 3), make(26, 3), atol=1e-4, rtol=1e-4, grad_name=False),
        S(make(3, 4), make(5, 4), compute_mode="use_mm_for_euclid_dist", atol=1e-4, rtol=1e-4,
          grad_name=False),
    ],
}
