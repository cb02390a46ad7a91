"""Samples for the rows in _ops/scatter.py (the public functions: scatter_functions.py and
index_writes.py).

scatter, index_copy and put(accumulate=False) with repeated indices are nondeterministic in
PyTorch, so their samples use unique write positions; the accumulating ops repeat them.
"""

import numpy as np

from .harness import Const, S, make


def _i(*v, shape=None):
    a = np.array(v, dtype=np.int64)
    return Const(a.reshape(shape) if shape is not None else a)


def _i32(*v, shape=None):
    a = np.array(v, dtype=np.int32)
    return Const(a.reshape(shape) if shape is not None else a)


def _ints(*shape, low=-9, high=9, dtype="int64"):
    return make(*shape, dtype=dtype, low=low, high=high)


# one permutation per column: unique positions for scatter along dim 0 of a (3, 4) input
_PERM04 = _i(0, 1, 2, 0, 2, 0, 1, 1, shape=(2, 4))
# unique positions along dim 1 of a (3, 4) input
_PERM1 = _i(3, 0, 1, 2, 0, 1, shape=(3, 2))
_DUP0 = _i(0, 2, 2, 0, 0, 0, 1, 2, 2, 2, 2, 0, shape=(3, 4))
_mask34 = np.array([[True, False, True, False], [False, False, False, False],
                    [True, True, False, True]])


def _inplace(name):
    def call(lib, x, *args, **kw):
        return getattr(x.clone(), name + "_")(*args, **kw)
    return call


def _method(name):
    def call(lib, x, *args, **kw):
        return getattr(x, name)(*args, **kw)
    return call


def _fn(name):
    def call(lib, *args, **kw):
        return getattr(lib, name)(*args, **kw)
    return call


def _val(v, **fixed):
    """scatter(x, dim, index, <a Python number>)."""
    def call(lib, x, d, i, *rest, **kw):
        return lib.scatter(x, d, i, v, *rest, **fixed, **kw)
    return call


SAMPLES = {
    "scatter": [
        S(make(3, 4), 0, _PERM04, make(2, 4)),
        # PyTorch's backward fails when src is larger than index (its src gradient has
        # index's shape), so those samples compare values only
        S(make(3, 4), 0, _i(2, 0, 1, shape=(1, 3)), make(2, 5), desc="src larger", grad=False),
        S(make(3, 4), 0, _i(2, 0, 1, shape=(1, 3)), make(1, 3), desc="index smaller"),
        S(make(3, 4), 1, _PERM1, make(3, 2)),
        S(make(3, 4), -1, _PERM1, make(4, 2), grad=False),
        S(make(2, 3, 4), 1, _i(*[2, 0, 1, 1, 0, 2, 0, 0], shape=(1, 2, 4)), make(1, 2, 4)),
        S(make(), 0, _i(0, shape=()), make()),
        S(make(4), 0, _i(2, shape=()), make(), desc="0-d index on 1-d"),
        S(make(3, 4), 0, _i32(2, 0, 1, shape=(1, 3)), make(1, 3), desc="int32 index"),
        S(make(3, 4), 0, Const(np.zeros((0, 4), np.int64)), make(1, 4), desc="empty"),
        S(_ints(3, 4), 0, _PERM04, _ints(2, 4)),
        S(make(3, 4, dtype="bool"), 1, _PERM1, make(3, 2, dtype="bool")),
        S(make(3, 4, dtype="float16"), 0, _PERM04, make(2, 4, dtype="float16"), atol=1e-3),
        S(make(3, 4), 0, _PERM04, make(2, 4), call=_method("scatter")),
        S(make(3, 4), 1, _PERM1, make(3, 2), call=_inplace("scatter")),
        S(make(3, 4), 1, _PERM1, make(3, 2),
          call=lambda lib, x, d, i, s: lib.scatter(x, d, i, src=s), desc="src="),
    ],
    "_scatter_value": [
        S(make(3, 4), 0, _PERM04, call=_val(2.5)),
        S(make(3, 4), -1, _PERM1, call=_val(-1)),
        S(make(2, 3, 4), 2, _i(3, 1, 0, 2, 3, 1, shape=(1, 2, 3)), call=_val(0.25)),
        S(make(), 0, _i(0, shape=()), call=_val(3.0)),
        S(_ints(3, 4), 0, _PERM04, call=_val(2.7), desc="value truncated to int"),
        S(make(3, 4, dtype="bool"), 1, _PERM1, call=_val(True)),
        S(make(3, 4), 0, _PERM04, call=lambda lib, x, d, i: lib.scatter(x, d, i, value=1.5)),
        S(make(3, 4), 0, _PERM04, call=lambda lib, x, d, i: x.scatter(d, i, 4)),
        S(make(3, 4), 1, _PERM1, call=lambda lib, x, d, i: (x * 1).scatter_(d, i, value=-2.)),
    ],
    "_scatter_legacy_reduce": [
        S(make(3, 4), 0, _DUP0, make(3, 4), reduce="add", grad=False, call=_fn("scatter")),
        S(make(3, 4), 0, _DUP0, make(3, 4), reduce="multiply", grad=False, call=_fn("scatter")),
        S(make(3, 4), 1, _PERM1, make(3, 2), call=_inplace("scatter"), reduce="add", grad=False),
        S(_ints(3, 4), 0, _DUP0, _ints(3, 4), reduce="multiply", grad=False, call=_fn("scatter")),
        S(make(3, 4, dtype="bool"), 0, _DUP0, make(3, 4, dtype="bool"), reduce="add",
          grad=False, call=_fn("scatter")),
        S(make(3, 4, dtype="bool"), 0, _DUP0, make(3, 4, dtype="bool"), reduce="multiply",
          grad=False, call=_method("scatter")),
        S(make(3, 4), 0, _DUP0, call=_val(2.0, reduce="add"), grad=False),
        S(make(3, 4), 0, _DUP0, call=_val(3.0, reduce="multiply"), grad=False),
        S(_ints(3, 4), 0, _DUP0, call=_val(2.7, reduce="add"), grad=False),
        S(make(3, 4), 0, _DUP0,
          call=lambda lib, x, d, i: x.clone().scatter_(d, i, value=2.0, reduce="multiply"),
          grad=False),
    ],
    "scatter_add": [
        S(make(3, 4), 0, _DUP0, make(3, 4)),
        S(make(3, 4), 1, _i(3, 3, 0, 1, 1, 1, shape=(3, 2)), make(3, 2)),
        S(make(3, 4), 1, _i(3, 3, 0, 1, 1, 1, shape=(3, 2)), make(3, 3), grad=False),
        S(make(3, 4), -2, _i(2, 2, 2, shape=(1, 3)), make(1, 3), desc="index smaller"),
        S(make(2, 3, 4), 2, _i(*[0, 0, 3] * 6, shape=(2, 3, 3)), make(2, 3, 3)),
        S(make(), 0, _i(0, shape=()), make()),
        S(make(5), 0, _i(4, 4, 0, 4), make(4)),
        S(make(5), 0, _i32(4, 4, 0), make(3), desc="int32 index"),
        S(_ints(3, 4), 0, _DUP0, _ints(3, 4)),
        S(_ints(3, 4, dtype="uint8", low=0, high=200), 0, _DUP0,
          _ints(3, 4, dtype="uint8", low=0, high=200), desc="wraps"),
        S(make(3, 4, dtype="bool"), 0, _DUP0, make(3, 4, dtype="bool")),
        S(make(3, 4, dtype="float16"), 0, _DUP0, make(3, 4, dtype="float16"), atol=1e-2),
        S(make(3, 4), 0, _DUP0, make(3, 4), call=_method("scatter_add")),
        S(make(3, 4), 0, _DUP0, make(3, 4), call=_inplace("scatter_add")),
    ],
    "scatter_reduce": [
        *[S(make(3, 4), 0, _DUP0, make(3, 4, low=0.5, high=2.0), red, include_self=inc)
          for red in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)],
        S(make(3, 4), 1, _i(3, 3, 0, 1, 1, 1, shape=(3, 2)), make(3, 2), "amax"),
        S(make(3, 4), 1, _i(3, 3, 0, 1, 1, 1, shape=(3, 2)), make(3, 3), "amax", grad=False),
        S(make(2, 3, 4), -1, _i(*[0, 0, 3] * 6, shape=(2, 3, 3)), make(2, 3, 3), "mean",
          include_self=False),
        S(make(5), 0, _i(1, 1, 3, 1), np.array([0.5, 0.0, 2.0, 1.5], np.float32), "prod",
          desc="a zero in a product"),
        S(np.array([0.0, 1.5, -2.0], np.float32), 0, _i(0, 0, 2, 2),
          np.array([0.0, 3.0, 0.0, 0.5], np.float32), "prod", include_self=False,
          desc="zeros in self and src"),
        S(make(), 0, _i(0, shape=()), make(), "amin"),
        S(make(4), 0, _i32(3, 3, 0), make(3), "sum", desc="int32 index"),
        *[S(_ints(3, 4), 0, _DUP0, _ints(3, 4), red, include_self=inc)
          for red in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)],
        S(_ints(3, 4, dtype="uint8", low=0, high=250), 0, _DUP0,
          _ints(3, 4, dtype="uint8", low=0, high=250), "mean"),
        *[S(make(3, 4, dtype="bool"), 0, _DUP0, make(3, 4, dtype="bool"), red,
            include_self=False) for red in ("sum", "prod", "amax", "amin")],
        S(make(3, 4, dtype="float16"), 0, _DUP0, make(3, 4, dtype="float16"), "mean",
          atol=1e-2),
        S(make(3, 4), 0, _DUP0, make(3, 4), "max", grad=False, desc="alias of amax"),
        S(make(3, 4), 0, _DUP0, make(3, 4), "min", include_self=False, grad=False),
        S(make(3, 4), 0, _DUP0, make(3, 4), "amax", call=_method("scatter_reduce")),
        S(make(3, 4), 0, _DUP0, make(3, 4), "mean", include_self=False,
          call=_inplace("scatter_reduce")),
    ],
    "index_add": [
        S(make(3, 4), 0, _i(2, 0, 2, 2), make(4, 4)),
        S(make(3, 4), 1, _i(3, 0), make(3, 2), alpha=-1.5),
        S(make(2, 3, 4), -2, _i32(1, 1), make(2, 2, 4), desc="int32 index"),
        S(make(3, 4), 0, _i(1, shape=()), make(1, 4), desc="0-d index"),
        S(make(), 0, _i(0, shape=()), make()),
        S(make(3, 4), 0, _i(), make(0, 4)),
        S(_ints(3, 4), 1, _i(1, 1, 3), _ints(3, 3), alpha=2),
        S(_ints(3, 4), 1, _i(1, 1, 3), _ints(3, 3), alpha=-2.5, desc="alpha truncated"),
        S(make(3, 4, dtype="bool"), 0, _i(2, 2), make(2, 4, dtype="bool")),
        S(make(3, 4, dtype="float16"), 0, _i(2, 0, 2), make(3, 4, dtype="float16"),
          atol=1e-2),
        S(make(3, 4), 0, _i(2, 0, 2), make(3, 4), call=_method("index_add"), alpha=2),
        S(make(3, 4), 1, _i(3, 3), make(3, 2), call=_inplace("index_add")),
    ],
    "index_copy": [
        S(make(3, 4), 0, _i(2, 0), make(2, 4)),
        S(make(3, 4), 1, _i(3, 0, 1), make(3, 3)),
        S(make(2, 3, 4), -1, _i(1, shape=()), make(2, 3, 1), desc="0-d index"),
        S(make(), 0, _i(0), make(1)),
        S(make(3, 4), 0, _i(), make(0, 4)),
        S(_ints(3, 4), 0, _i(1, 2), _ints(2, 4)),
        S(make(3, 4, dtype="bool"), 1, _i(2), make(3, 1, dtype="bool")),
        S(make(3, 4), 0, _i(2, 0), make(2, 4), call=_method("index_copy")),
        S(make(3, 4), 1, _i(0, 2), make(3, 2), call=_inplace("index_copy")),
    ],
    "index_reduce": [
        *[S(make(3, 4), 0, _i(2, 0, 2, 2), make(4, 4, low=0.5, high=2.0), red,
            include_self=inc)
          for red in ("prod", "mean", "amax", "amin") for inc in (True, False)],
        S(make(3, 4), -1, _i32(3, 3, 1), make(3, 3), "amin", desc="int32 index"),
        S(make(5), 0, _i(1, 1, 3), np.array([0.5, 0.0, 2.0], np.float32), "prod",
          include_self=False),
        S(make(), 0, _i(0, shape=()), make(), "prod"),
        *[S(_ints(3, 4), 1, _i(1, 1, 3), _ints(3, 3), red, include_self=inc)
          for red in ("prod", "mean", "amax", "amin") for inc in (True, False)],
        S(make(3, 4), 0, _i(2, 2), make(2, 4), "amax", call=_method("index_reduce")),
        S(make(3, 4), 0, _i(2, 2), make(2, 4), "mean", include_self=False,
          call=_inplace("index_reduce")),
    ],
    "index_fill": [
        S(make(3, 4), 0, _i(2, 0), 2.5),
        S(make(3, 4), 1, _i(-1, 3, 0), -1, desc="negative and repeated"),
        S(make(2, 3, 4), -2, _i(1, shape=()), 0.5, desc="0-d index"),
        S(make(), 0, _i(0), 7.0),
        S(_ints(3, 4), 1, _i(1, 2), 2.7),
        S(make(3, 4, dtype="bool"), 0, _i(1), True),
        S(make(3, 4), 0, _i(2), float("inf"), grad=False),
        S(make(3, 4), 0, _i(2), 1.5, call=_method("index_fill")),
        S(make(3, 4), 1, _i(0, 2), 1.5, call=_inplace("index_fill")),
    ],
    "_index_fill_tensor": [
        S(make(3, 4), 0, _i(2, 0), make(),
          call=lambda lib, x, d, i, v: lib.index_fill(x, d, i, v)),
        # (PyTorch's backward fails for a negative index here, so none in this sample)
        S(make(3, 4), 1, _i(1, 3, 3), make(), desc="repeated position counts once",
          call=lambda lib, x, d, i, v: lib.index_fill(x, d, i, v)),
        S(make(3, 4), 0, _i(1), np.array(2.0, np.float64), desc="value cast",
          call=lambda lib, x, d, i, v: x.index_fill(d, i, v)),
        S(_ints(3, 4), 0, _i(1), Const(np.array(3.5)),
          call=lambda lib, x, d, i, v: x.index_fill(d, i, v)),
        S(make(3, 4), 1, _i(0, 2), make(),
          call=lambda lib, x, d, i, v: (x * 1).index_fill_(d, i, v)),
    ],
    "put": [
        S(make(3, 4), _i(0, 11, -1, 5), make(4), desc="-1 and 11 are the same position",
          accumulate=True),
        S(make(3, 4), _i(0, 5, -2, 7, shape=(2, 2)), make(4)),
        S(make(3, 4), _i(0, 5, -2, 7), make(2, 2), accumulate=False),
        S(make(3, 4), _i(1, 1, 1), make(3), True),
        S(make(), _i(0, shape=()), make()),
        S(make(3, 4), _i(), make(0)),
        S(_ints(3, 4), _i(1, 1, 3), _ints(3), accumulate=True),
        S(make(2, 3, dtype="bool"), _i(1, 1, 3), make(3, dtype="bool"), accumulate=True),
        S(make(3, 4), _i(3, 9), make(2), call=_method("put")),
        S(make(3, 4), _i(3, 9, 3), make(3), True, call=_inplace("put")),
        S(make(3, 4), _i(3, 9), make(2), call=_inplace("put")),
    ],
    "masked_scatter": [
        S(make(3, 4), _mask34, make(6)),
        S(make(3, 4), _mask34, make(4, 5), desc="source larger"),
        S(make(3, 4), _mask34[2], make(3, 3), desc="mask broadcasts"),
        S(make(4), _mask34, make(6), desc="input broadcasts"),
        S(make(), np.array(True), make()),
        S(make(3, 4), np.zeros((3, 4), bool), make(0)),
        S(_ints(3, 4), _mask34, _ints(7)),
        S(make(3, 4), _mask34, make(6), call=_method("masked_scatter")),
        S(make(3, 4), _mask34[0], make(6), call=_inplace("masked_scatter")),
    ],
    "diagonal_scatter": [
        S(make(3, 4), make(3)),
        S(make(3, 4), make(3), 1),
        S(make(3, 4), make(2), -1),
        S(make(3, 4), make(0), 5),
        S(make(2, 3, 4), make(3, 2), 0, -1, 0),
        S(make(2, 3, 4), make(4, 2), offset=1, dim1=0, dim2=1),
        S(make(3, 4), make(3, dtype="float64"), desc="src cast"),
        S(make(3, 4), _ints(3), desc="int src"),
        S(_ints(3, 3), make(3), grad=False),
        S(make(3, 4), make(3), call=_method("diagonal_scatter")),
    ],
    "select_scatter": [
        S(make(3, 4), make(4), 0, 1),
        S(make(3, 4), make(3), -1, -1),
        S(make(2, 3, 4), make(2, 4), 1, 2),
        S(make(3), make(), 0, 2),
        S(make(3, 4), make(4, dtype="float64"), 0, 0),
        S(_ints(3, 4), _ints(4), 0, 1),
        S(make(3, 4), make(4), 0, 1, call=_method("select_scatter")),
    ],
    "slice_scatter": [
        S(make(3, 4), make(2, 4), 0, 1),
        S(make(3, 4), make(3, 2), 1, step=2),
        S(make(3, 4), make(3, 2), 1, -3, -1),
        S(make(3, 4), make(3, 2), 1, 2, 100),
        S(make(3, 4), make(3, 0), 1, 5, 100),
        S(make(3, 4), make(3, 4)),
        S(make(2, 3, 4), make(2, 3, 2), -1, 1, None, 2),
        S(make(3, 4), make(2, 4, dtype="float64"), 0, 1),
        S(_ints(3, 4), _ints(3, 1), 1, 3),
        S(make(3, 4), make(3, 2), dim=1, start=1, end=3,
          call=_method("slice_scatter")),
    ],
}
