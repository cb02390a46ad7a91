"""Samples for the indexing rows: x[key] (views and copies), x[key] = v, gather, index_select,
take, take_along_dim, masked_fill, masked_select, index_put."""

import numpy as np

from .harness import S, make


def _i(*v):
    return np.array(v, dtype=np.int64)


def _setitem(key):
    """x[key] = v on a non-leaf copy of x, returning it (key may be a function of lib)."""
    def call(lib, x, v, *idx):
        y = x * 1
        k = key(lib, *idx) if callable(key) else key
        y[k] = v
        return y
    return call


def _put(accumulate, inplace=False):
    def call(lib, x, v, *idx):
        if inplace:
            return (x * 1).index_put_(tuple(idx), v, accumulate=accumulate)
        return lib.index_put(x, tuple(idx), v, accumulate=accumulate)
    return call


_mask34 = np.array([[True, False, True, False], [False, False, False, False],
                    [True, True, False, True]])

SAMPLES = {
    "_select": [
        S(make(3, 4), call=lambda lib, x: x[1]),
        S(make(3, 4), call=lambda lib, x: x[-1]),
        S(make(2, 3, 4), call=lambda lib, x: x[1, :, -2]),
        S(make(2, 3, 4), call=lambda lib, x: x[..., 0]),
        S(make(2, 3, 4), call=lambda lib, x: x[0, 1, 2]),
        S(make(5), call=lambda lib, x: x[lib.tensor(3)], desc="0-d index tensor"),
        S(make(3, 4, dtype="int64", low=-9, high=9), call=lambda lib, x: x[2]),
        S(make(3, 2, dtype="bool"), call=lambda lib, x: x[:, 1]),
        S(make(4, 3, dtype="float16"), call=lambda lib, x: x[np.int64(2)], atol=1e-3),
    ],
    "_slice": [
        S(make(4, 5), call=lambda lib, x: x[1:, None, ::2]),
        S(make(6), call=lambda lib, x: x[1:5:2]),
        S(make(6), call=lambda lib, x: x[-4:]),
        S(make(6), call=lambda lib, x: x[:], desc="a bare full slice is a SliceBackward0"),
        S(make(6), call=lambda lib, x: x[4:2], desc="empty"),
        S(make(6), call=lambda lib, x: x[-100:100:3]),
        S(make(3, 4, 5), call=lambda lib, x: x[..., 1:3]),
        S(make(3, 4, 5), call=lambda lib, x: x[0, :, 1:]),
        S(make(3, 4, 5), call=lambda lib, x: x[None, 1:, ..., ::4]),
        S(make(2, 5, dtype="int32", low=-9, high=9), call=lambda lib, x: x[:, lib.tensor(1):]),
        S(make(6), call=lambda lib, x: x.to(lib.bfloat16)[::2], atol=1e-2),
    ],
    "_unsqueeze": [
        S(make(3, 4), call=lambda lib, x: x[None]),
        S(make(3, 4), call=lambda lib, x: x[:, None]),
        S(make(3, 4), call=lambda lib, x: x[..., None]),
        S(make(3, 4), call=lambda lib, x: x[None, ..., None]),
        S(make(), call=lambda lib, x: x[None]),
        S(make(3, 4), call=lambda lib, x: x[1, None]),
    ],
    "_alias": [
        S(make(3, 4), call=lambda lib, x: x[...]),
        S(make(3, 4), call=lambda lib, x: x[:, :]),
        S(make(3, 4), call=lambda lib, x: x[()]),
        S(make(), call=lambda lib, x: x[...]),
        S(make(3, 4), call=lambda lib, x: x[..., ...], desc="repeated ellipsis"),
    ],
    "_index": [
        S(make(5, 3), _i(0, 4, 4, -1), call=lambda lib, x, i: x[i], desc="duplicates"),
        S(make(5, 3), _i(2, 0), call=lambda lib, x, i: x[:, i[:1]]),
        S(make(2, 3, 4), call=lambda lib, x: x[0, :, [0, 1]], desc="int then separated"),
        S(make(2, 3, 4), call=lambda lib, x: x[[0, 1], :, 0]),
        S(make(2, 3, 4), call=lambda lib, x: x[[1, 0], :, [3, 2]], desc="separated: first"),
        S(make(2, 3, 4), call=lambda lib, x: x[:, [2, 0], [1, 3]], desc="adjacent: in place"),
        S(make(2, 3, 4), call=lambda lib, x: x[[[0], [1]], 1:, [[0, 1, 2]]], desc="broadcast"),
        S(make(2, 3, 4), call=lambda lib, x: x[1:, None, [0, 2]]),
        S(make(3, 4), _mask34, call=lambda lib, x, m: x[m], desc="2-d mask"),
        S(make(2, 3, 4), np.array([True, False, True]), call=lambda lib, x, m: x[:, m]),
        S(make(2, 3, 4), _mask34[:3, :4], call=lambda lib, x, m: x[1, m]),
        S(make(2, 3, 4), np.array([[True, False, True, True]] * 3),
          call=lambda lib, x, m: x[..., m]),
        S(make(3, 4), call=lambda lib, x: x[[True, False, True]], desc="list of bools"),
        S(make(3, 4), call=lambda lib, x: x[True], desc="python bool"),
        S(make(3, 4), call=lambda lib, x: x[False]),
        S(make(3, 4), call=lambda lib, x: x[0, True]),
        S(make(3, 4), call=lambda lib, x: x[lib.tensor(True)]),
        S(make(), call=lambda lib, x: x[True]),
        S(make(3, 4), call=lambda lib, x: x[np.array([2, 0])], desc="numpy index"),
        S(make(3, 4), call=lambda lib, x: x[:, lib.tensor([1, 3], dtype=lib.int32)]),
        S(make(3, 4), call=lambda lib, x: x[lib.tensor([], dtype=lib.int64)]),
        S(make(3, 4), call=lambda lib, x: x[[]]),
        S(make(3, 4), _i(1, 2), call=lambda lib, x, i: x[i.view(2, 1), i]),
        S(make(4, 3, dtype="int64", low=-9, high=9), _i(3, 1),
          call=lambda lib, x, i: x[i, 1:]),
        S(make(4, dtype="bool"), call=lambda lib, x: x[[3, 3, 0]]),
        S(make(4, 3, dtype="float16"), _i(3, 1), call=lambda lib, x, i: x[i], atol=1e-3),
    ],
    "_copy_slices": [
        S(make(3, 4), make(4), call=_setitem(1)),
        S(make(3, 4), make(), call=_setitem((slice(None), 2))),
        S(make(3, 4), make(1, 2), call=_setitem((slice(1, None), slice(None, None, 2)))),
        S(make(3, 4), make(1, 1, 4), call=_setitem(0), desc="leading ones dropped"),
        S(make(2, 3, 4), make(3, 2), call=_setitem((0, slice(None), [1, 3]))),
        S(make(2, 3, 4), make(2), call=_setitem((slice(None), 1, [0, 2]))),
        S(make(3, 4), make(3, 1, 1), call=_setitem((Ellipsis, None, slice(1, 3)))),
        S(make(3, 4), make(3, 4, dtype="float64"), call=_setitem(slice(None)), desc="cast",
          grad_name=False),  # PyTorch: CopyBackwards for a dtype-changing copy
        S(make(3, 4), 2.5, call=_setitem((1, slice(None, 2)))),
        S(make(3, 4, dtype="int64", low=-9, high=9), 2.7, call=_setitem(0), grad=False),
    ],
    "_index_put": [
        S(make(5, 3), make(3), _i(0, 4), call=_setitem(lambda lib, i: i)),
        S(make(5, 3), make(2, 3), _i(0, -1), call=_setitem(lambda lib, i: i)),
        S(make(3, 4), make(), _mask34, call=_setitem(lambda lib, m: m), desc="x[mask] = v"),
        S(make(3, 4), 0.0, _mask34, call=_setitem(lambda lib, m: m), desc="x[mask] = 0"),
        S(make(3, 4), make(5), _mask34, call=_setitem(lambda lib, m: m)),
        S(make(3, 4), make(2), _i(2, 0), _i(1, 3), call=_setitem(lambda lib, i, j: (i, j))),
        S(make(3, 4), make(2), _i(2, 0), _i(1, 3), call=_put(False)),
        S(make(3, 4), make(3), _i(2, 2, 2), _i(1, 1, 0), call=_put(True), desc="accumulate"),
        S(make(3, 4), make(4), _i(1, 1), call=_put(True, inplace=True)),
        S(make(3, 4), make(4), _mask34[:, 0], call=_put(False, inplace=True)),
        S(make(4, dtype="int64", low=-9, high=9), make(4, dtype="int64", low=0, high=9),
          _i(1, 1, 3, 0), call=_put(True)),
    ],
    "gather": [
        S(make(3, 4), 1, _i(0, 3, 3, 1, 2, 0).reshape(3, 2)),
        S(make(3, 4), 0, _i(2, 2, 0, 1, 1, 0, 2, 2).reshape(2, 4)),
        S(make(3, 4), -1, _i(0, 1).reshape(1, 2), desc="index smaller than input"),
        S(make(2, 3, 4), 1, _i(*[2, 0, 1, 1] * 3).reshape(1, 3, 4)),
        S(make(), 0, _i(0, 0)),
        S(make(5), 0, np.array(3, dtype=np.int64)),
        S(make(3, 4), 1, _i(0, 3, 3, 1, 2, 0).reshape(3, 2).astype(np.int32)),
        S(make(3, 4, dtype="int32", low=-9, high=9), 1, _i(0, 3).reshape(1, 2)),
        S(make(3, 4), 1, _i(1, 2).reshape(1, 2), call=lambda lib, x, d, i: x.gather(d, i)),
    ],
    "index_select": [
        S(make(4, 3), 0, _i(3, 0, 3)),
        S(make(4, 3), 1, _i(2)),
        S(make(4, 3), -1, _i()),
        S(make(2, 3, 4), 2, np.array([1, 1, 0], dtype=np.int32)),
        S(make(4, 3), 0, np.array(2, dtype=np.int64)),
        S(make(), 0, _i(0)),
        S(make(4, 3, dtype="int64", low=-9, high=9), 0, _i(1, 2)),
        S(make(4, 3), 1, _i(2, 0), call=lambda lib, x, d, i: x.index_select(d, i)),
    ],
    "take": [
        S(make(3, 4), _i(0, 11, -1, -12, 5).reshape(5, 1)),
        S(make(3, 4), _i(3, 3)),
        S(make(), _i(0, -1)),
        S(make(3, 4), np.array(2, dtype=np.int64)),
        S(make(2, 3, dtype="bool"), _i(1, 4)),
        S(make(3, 4), _i(7), call=lambda lib, x, i: x.take(i)),
    ],
    "take_along_dim": [
        S(make(3, 4), _i(0, 3, 3, 1, 2, 0).reshape(3, 2), 1),
        S(make(3, 4), _i(2, 0, 1, 1).reshape(1, 4), 0),
        S(make(3, 4), _i(0, 3, 1, 2, 1).reshape(1, 5), 1, desc="broadcast"),
        S(make(3, 1), _i(0, 0).reshape(1, 2), 1, desc="broadcast both"),
        S(make(3, 4), _i(0, -1).reshape(1, 2), -1, desc="negative"),
        S(make(3, 4), _i(5, 11, 0).reshape(3, 1)),
        S(make(3, 4), make(3, 4).argsort(1).astype(np.int64), 1, desc="sort by argsort"),
        S(make(3, 4), _i(3, 1).reshape(1, 2), call=lambda lib, x, i: x.take_along_dim(i, 1)),
    ],
    "masked_fill": [
        S(make(3, 4), _mask34, 0.5),
        S(make(3, 4), _mask34, make(), desc="0-d value tensor with grad"),
        S(make(3, 4), _mask34[0], -1),
        S(make(4), _mask34, 2.0, desc="mask broadcasts the result"),
        S(make(3, 4), _mask34, float("-inf"), grad=False),
        S(make(3, 4, dtype="int64", low=-9, high=9), _mask34, 2.7),
        S(make(3, 4, dtype="int64", low=-9, high=9), _mask34, np.array(3.5), grad=False),
        S(make(3, 4, dtype="bool"), _mask34, 1),
        S(make(3, 4, dtype="float16"), _mask34, np.array(2.0), atol=1e-3),
        S(make(3, 4), _mask34, np.array(2.0, dtype=np.float64), desc="value dtype cast"),
        S(make(3, 4), _mask34, 1.5, call=lambda lib, x, m, v: x.masked_fill(m, v)),
        S(make(3, 4), _mask34[2], 1.5,
          call=lambda lib, x, m, v: (x * 1).masked_fill_(m, v), desc="in place"),
    ],
    "_masked_select": [
        S(make(3, 4), _mask34, call=lambda lib, x, m: lib.masked_select(x, m)),
        S(make(3, 4), _mask34[1], call=lambda lib, x, m: lib.masked_select(x, m)),
        S(make(4), _mask34, call=lambda lib, x, m: lib.masked_select(x, m), desc="broadcast"),
        S(make(3, 1), _mask34[2], call=lambda lib, x, m: x.masked_select(m)),
        S(make(3, 4, dtype="int32", low=-9, high=9), _mask34,
          call=lambda lib, x, m: x.masked_select(m)),
        S(make(), np.array(True), call=lambda lib, x, m: lib.masked_select(x, m)),
    ],
}
