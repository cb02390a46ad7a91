"""Samples for the shape rows (view, reshape, squeeze, permute, cat, split, ...)."""

import torchjax

from .harness import S, make


def _method(name):
    return lambda lib, x, *a, **k: getattr(x, name)(*a, **k)


SAMPLES = {
    "view": [
        S(make(2, 3, 4), 6, 4, call=_method("view")),
        S(make(2, 3, 4), (4, -1), call=_method("view")),
        S(make(2, 3, 4), [2, 12], call=_method("view")),
        S(make(2, 3, 4), torchjax.Size([24]), call=lambda lib, x, s: x.view(lib.Size(s))),
        S(make(6), -1, call=_method("view")),
        S(make(), 1, 1, call=_method("view")),
        S(make(1, 1), (), call=_method("view")),
        S(make(0, 3), 3, 0, call=_method("view")),
        S(make(2, 3, dtype="int64"), 3, 2, call=_method("view")),
        S(make(4, dtype="bool"), 2, 2, call=_method("view")),
    ],
    "reshape": [
        S(make(2, 3, 4), (6, 4)),
        S(make(2, 3, 4), (-1,)),
        S(make(2, 3, 4), 4, 3, 2, call=_method("reshape")),
        S(make(2, 3, 4), [3, -1], call=_method("reshape")),
        S(make(), (1,)),
        S(make(5, dtype="int32"), (5, 1)),
        # PyTorch copies here (non-contiguous input); values and gradients are the same
        S(make(3, 4), call=lambda lib, x: x.t().reshape(2, 6), grad_name=False),
    ],
    "flatten": [
        S(make(2, 3, 4)),
        S(make(2, 3, 4), 1),
        S(make(2, 3, 4), start_dim=0, end_dim=1),
        S(make(2, 3, 4, 5), -3, -2),
        S(make()),
        S(make(3, dtype="int64"), call=_method("flatten")),
    ],
    "unflatten": [
        S(make(2, 12), 1, (3, 4)),
        S(make(2, 12), -1, (2, -1, 3)),
        S(make(6, 2), 0, [6]),
        S(make(2, 6, dtype="int64"), 1, (3, 2), call=_method("unflatten")),
    ],
    "squeeze": [
        S(make(2, 1, 3, 1)),
        S(make(1, 1)),
        S(make()),
        S(make(1, 4, dtype="int64"), call=_method("squeeze")),
    ],
    "_squeeze_dim": [
        S(make(2, 1, 3, 1), 1, call=lambda lib, x, d: lib.squeeze(x, d)),
        S(make(2, 1, 3, 1), dim=-1, call=lambda lib, x, dim: lib.squeeze(x, dim=dim)),
        S(make(2, 1, 3, 1), 0, call=_method("squeeze")),  # not of size 1: a no-op
        S(make(), 0, call=_method("squeeze")),
        S(make(1, 4, dtype="int64"), 0, call=_method("squeeze")),
    ],
    "_squeeze_dims": [
        S(make(2, 1, 3, 1), (1, 3), call=lambda lib, x, d: lib.squeeze(x, d)),
        S(make(2, 1, 3, 1), [0, 1], call=_method("squeeze")),
        S(make(1, 1), (), call=_method("squeeze")),
        S(make(), (0,), call=_method("squeeze")),
        S(make(1, 2, 1, dtype="int32"), (0, -1), call=_method("squeeze")),
    ],
    "unsqueeze": [
        S(make(2, 3), 0),
        S(make(2, 3), 2),
        S(make(2, 3), -1),
        S(make(2, 3), -3),
        S(make(), 0),
        S(make(3, dtype="int64"), 1, call=_method("unsqueeze")),
    ],
    "permute": [
        S(make(2, 3, 4), (2, 0, 1)),
        S(make(2, 3, 4), [1, 2, 0]),
        S(make(2, 3, 4), 2, 0, 1, call=_method("permute")),
        S(make(2, 3), -1, 0, call=_method("permute")),
        S(make(), ()),
        S(make(2, 3, dtype="int64"), (1, 0)),
    ],
    "transpose": [
        S(make(2, 3, 4), 0, 2),
        S(make(2, 3, 4), -1, 1),
        S(make(2, 3), 1, 1),
        S(make(), 0, -1),
        S(make(2, 3, 4), 0, 1, call=lambda lib, x, a, b: lib.swapaxes(x, a, b)),
        S(make(2, 3, 4), 0, 1, call=lambda lib, x, a, b: x.swapdims(a, b)),
        S(make(2, 3, dtype="int32"), 0, 1),
    ],
    "expand": [
        S(make(3, 1), 3, 4, call=_method("expand")),
        S(make(3, 1), 2, 3, 5, call=_method("expand")),
        S(make(3, 1), (-1, 4), call=_method("expand")),
        S(make(3, 1), [2, -1, -1], call=_method("expand")),
        S(make(), 2, 2, call=_method("expand")),
        S(make(1), 0, call=_method("expand")),
        S(make(1, 3, dtype="int64"), 2, 3, call=_method("expand")),
        S(make(3, 1), make(2, 3, 4), call=lambda lib, x, o: x.expand_as(o)),
    ],
    "repeat": [
        S(make(2, 3), 2, 1, call=_method("repeat")),
        S(make(2, 3), (2, 1, 3), call=_method("repeat")),
        S(make(2), [3, 2], call=_method("repeat")),
        S(make(), (), call=_method("repeat")),
        S(make(2, 2), 0, 1, call=_method("repeat")),
        S(make(2, dtype="int64"), 3, call=_method("repeat")),
    ],
    "cat": [
        S([make(2, 3), make(4, 3)]),
        S([make(2, 3), make(2, 1), make(2, 2)], 1),
        S([make(2, 3), make(2, 2)], dim=-1),
        S((make(3), make(2))),
        S([make(2, 3)]),
        S([make(2, 3), make(0)]),  # 1-D empty tensors are skipped
        S([make(2, 3), make(0, 3)]),
        S([make(2, 3), make(2, 3, dtype="float64")]),  # promotion across the list
        S([make(2, dtype="int32"), make(3, dtype="int64")]),
        S([make(2, dtype="bool"), make(3, dtype="int64")]),
        S([make(2, dtype="int64"), make(2)]),
        S([make(2, 2), make(2, 2)], 0, call=lambda lib, ts, d: lib.concat(ts, d)),
        S([make(2, 2), make(2, 2)], 1, call=lambda lib, ts, d: lib.concatenate(ts, dim=d)),
    ],
    "stack": [
        S([make(2, 3), make(2, 3)]),
        S([make(2, 3), make(2, 3), make(2, 3)], 1),
        S([make(2, 3), make(2, 3)], dim=-1),
        S([make(), make()]),
        S([make(3), make(3, dtype="float64")]),
        S([make(2, dtype="int64"), make(2, dtype="int64")]),
    ],
    "split": [
        S(make(5, 2), 2),
        S(make(5, 2), 5),
        S(make(5, 2), 7),
        S(make(4, 6), 2, 1, call=lambda lib, x, s, d: x.split(s, d)),
        S(make(4, 6), 3, call=lambda lib, x, s: x.split(s, dim=1)),
        S(make(0, 2), 0),
        S(make(7, dtype="int64"), 3),
    ],
    "split_with_sizes": [
        S(make(3, 6), [1, 2, 3], 1, call=lambda lib, x, s, d: lib.split(x, s, d)),
        S(make(3, 6), (6,), dim=-1, call=lambda lib, x, s, dim: lib.split(x, s, dim=dim)),
        S(make(3, 6), [0, 3], call=lambda lib, x, s: x.split(s)),
        S(make(7, dtype="int64"), [3, 4], call=lambda lib, x, s: x.split(s)),
    ],
    "chunk": [
        S(make(6, 2), 3),
        S(make(5, 2), 3),
        S(make(2, 3), 4),  # fewer pieces than asked
        S(make(3, 7), 3, 1),
        S(make(3, 7), chunks=2, dim=-1),
        S(make(0), 3, grad_name=False),  # PyTorch: SplitWithSizesBackward0 when empty
        S(make(6, dtype="int32"), 2),
    ],
    "unbind": [
        S(make(3, 2)),
        S(make(3, 2), 1),
        S(make(2, 3, 2), dim=-2),
        S(make(0, 2)),
        S(make(4, dtype="int64")),
    ],
    "narrow": [
        S(make(4, 5), 0, 1, 2),
        S(make(4, 5), 1, 0, 5),
        S(make(4, 5), -1, -3, 2),
        S(make(4, 5), 1, 5, 0),
        S(make(6, dtype="int64"), 0, 2, 3),
    ],
    "select": [
        S(make(4, 5), 0, 1),
        S(make(4, 5), 1, -1),
        S(make(2, 3, 4), -2, 2),
        S(make(3), 0, 2),
        S(make(3, 2, dtype="int64"), 1, 0),
    ],
    "movedim": [
        S(make(2, 3, 4), 0, 2),
        S(make(2, 3, 4), -1, 0),
        S(make(2, 3, 4), (0, 1), (2, 0)),
        S(make(2, 3, 4), [2], [1]),
        S(make(2, 3, 4, 5), (0, 3), (-1, 1), call=lambda lib, x, s, d: lib.moveaxis(x, s, d)),
        S(make(), 0, 0, grad_name=False),  # PyTorch: AliasBackward0 for a 0-d no-op
        S(make(2, 3, dtype="int64"), 1, 0),
    ],
}
