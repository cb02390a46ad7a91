"""Samples for the rows in _ops/sorting.py.

Float samples that are checked with finite differences have no ties (a tie has no derivative).
Ties are tested in integer samples and in float samples of more than 64 elements, whose
gradients are compared with PyTorch's only. topk breaks ties like PyTorch only on rows of at
most 3 elements (PyTorch's order there comes from std::nth_element), so larger tie samples
compare its values alone."""

import numpy as np

from .harness import S, make, raises

F32 = np.float32
NAN = np.nan


_err = raises


X34 = make(3, 4)
X234 = make(2, 3, 4)
NANS = np.array([[3., NAN, 1., -0., 0., 1., NAN], [NAN, 2., -1., 2., 0., -0., 5.]], F32)
# > 64 elements with ties everywhere: the gradient goes where PyTorch's indices say
TIES = (np.arange(84) * 7 % 5).astype(F32).reshape(7, 12)
TIES3 = (np.arange(90) * 3 % 4).astype(F32).reshape(3, 5, 6)
INT_TIES = make(4, 9, dtype="int64", low=0, high=3)
INT32 = make(3, 6, dtype="int32", low=-3, high=3)
BOOLS = make(3, 5, dtype="bool")
PERM = np.random.default_rng(3).permutation(40).reshape(4, 10).astype(np.int64)
SMALL_TIES = make(5, 3, dtype="int64", low=0, high=2)  # rows of 3: ties broken like PyTorch
SEQ = np.sort(make(6))
SEQ2 = np.sort(make(2, 5), axis=-1)
INT_SEQ = np.array([1, 2, 2, 3, 5, 5, 5, 8], np.int64)
DUPS = np.array([3., 1., 2., 1., 5., 3., 3., -0., 0.], F32)
ROWS = np.array([[1, 2, 0], [0, 5, 1], [1, 2, 0], [0, 1, 1], [0, 1, 1]], np.int64)


def _sorted_topk(lib, t, k, **kw):
    # sorted=False leaves the order unspecified: compare the selections in a fixed order
    v, i = lib.topk(t, k, sorted=False, **kw)
    return lib.sort(v, -1).values, lib.sort(i, -1).values


SAMPLES = {
    "sort": [
        S(make(5)), S(X34), S(X34, 0), S(X34, -2, True), S(X234, 1, descending=True),
        S(make()), S(make(), 0), S(make(), -1, True), S(X34, stable=True),
        S(X34, dim=0, descending=True, stable=True), S(X34, stable=None, grad_name=False),
        S(X234, call=lambda lib, t: t.sort(1, True)),
        S(X34, call=lambda lib, t: t.sort(stable=True, dim=0)),
        S(NANS, grad=False, desc="NaN last"), S(NANS, -1, True, grad=False, desc="NaN first"),
        S(TIES, desc="ties keep input order"), S(TIES, 0, True), S(TIES3, 1, True),
        S(INT_TIES), S(INT_TIES, 0, True), S(INT32, descending=True), S(BOOLS), S(BOOLS, 0, True),
        S(make(6, dtype="float16"), grad=False), S(make(4, 7, dtype="float64"), 1),
        S(np.zeros((0, 3), F32), 0),
        S(make(2, 5, dtype="uint8", low=0, high=4), -1, True),
        S(X34, grad=False, call=_err(lambda lib, t: lib.sort(t, 2))),
        S(X34, grad=False, call=_err(lambda lib, t: t.sort(-3))),
    ],
    "argsort": [
        S(make(5)), S(X34), S(X34, 0), S(X34, -1, True), S(X234, dim=-2, descending=True),
        S(make()), S(make(), 0, True), S(X34, stable=True),
        S(X34, dim=1, descending=True, stable=True),
        S(NANS), S(NANS, 1, True), S(TIES), S(TIES3, 2, True), S(INT_TIES, 1, True),
        S(INT32), S(BOOLS, 0), S(make(9, dtype="float16")),
        S(X34, call=lambda lib, t: t.argsort(1, True)),
        S(X34, call=lambda lib, t: t.argsort(dim=0, stable=True)),
        S(X34, call=_err(lambda lib, t: lib.argsort(t, 3))),
    ],
    "msort": [
        S(make(5)), S(X34), S(X234), S(make()), S(TIES), S(TIES3), S(INT_TIES), S(INT32),
        S(BOOLS), S(NANS.T.copy(), grad=False),
        S(X34, call=lambda lib, t: t.msort()),
    ],
    "topk": [
        S(make(6), 2), S(X34, 3), S(X34, 2, 0), S(X34, 1, -2, False), S(X234, 2, 1),
        S(X34, 4, largest=False), S(X34, k=2, dim=0, largest=True, sorted=True),
        S(make(), 1), S(make(), 0), S(make(), 1, -1), S(X34, 0),
        S(X34, 3, call=_sorted_topk), S(X234, 2, call=lambda lib, t, k: _sorted_topk(
            lib, t, k, dim=1, largest=False)),
        S(X34, call=lambda lib, t: t.topk(2, 0, False)),
        S(PERM, 4), S(PERM, 3, 0, False), S(SMALL_TIES, 2), S(SMALL_TIES, 2, largest=False),
        S(SMALL_TIES, 3), S(SMALL_TIES.T.copy(), 1, 0), S(INT32.T[:3].copy(), 2, 0),
        # which of the tied elements gets the gradient is PyTorch's nth_element's choice
        S(TIES, 5, grad=False, call=lambda lib, t, k: lib.topk(t, k).values, desc="ties"),
        S(TIES3, 3, grad=False, call=lambda lib, t, k: t.topk(k, 1, False).values),
        S(NANS, 2, grad=False, desc="NaN is the largest"),
        S(NANS, 2, largest=False, grad=False, call=lambda lib, t, k, **kw: lib.topk(
            t, k, **kw).values),
        S(make(8, dtype="float16"), 3, grad=False),
        S(X34, 5, grad=False, call=_err(lambda lib, t, k: lib.topk(t, k))),
        S(X34, -1, grad=False, call=_err(lambda lib, t, k: lib.topk(t, k))),
        S(BOOLS, 2, grad=False, call=_err(lambda lib, t, k: lib.topk(t, k))),
        S(X34, 2, grad=False, call=_err(lambda lib, t, k: lib.topk(t, k, 2))),
    ],
    "kthvalue": [
        # every (shape, k, dim) compiles PyTorch's quickselect replay anew: few, varied cases
        S(X34, 3, 0), S(X234, 4, keepdim=True), S(make(), 1, 0, True),
        S(X34, call=lambda lib, t: t.kthvalue(2, 0)),
        # ties: tests/test_sorting.py has more
        S(TIES, 5, desc="index among ties: PyTorch's quickselect"), S(TIES3, 3, 1),
        S(INT_TIES, 4), S(NANS, 5, grad=False),
        S(X34, 5, grad=False, call=_err(lambda lib, t, k: lib.kthvalue(t, k))),
        S(X34, 0, grad=False, call=_err(lambda lib, t, k: lib.kthvalue(t, k, 0))),
        S(make(), 2, grad=False, call=_err(lambda lib, t, k: lib.kthvalue(t, k))),
        S(BOOLS, 2, grad=False, call=_err(lambda lib, t, k: lib.kthvalue(t, k))),
    ],
    "searchsorted": [
        S(SEQ, X34), S(SEQ, X34, right=True), S(SEQ, X34, side="right"), S(SEQ, X34, side="left"),
        S(SEQ, make(5), out_int32=True), S(SEQ2, make(2, 3)), S(SEQ2, make(2, 4), right=True),
        S(SEQ, 0.5), S(INT_SEQ, 2), S(INT_SEQ, 2, right=True), S(INT_SEQ, 4.5),
        S(INT_SEQ, np.array([0, 2, 5, 5, 9, 1], np.int64)),
        S(INT_SEQ, np.array([[2, 5], [8, 1]], np.int64), side="right", out_int32=True),
        S(INT_SEQ, make(3)), S(SEQ, np.array([1, -1, 0], np.int32)),
        S(np.array([5, 1, 3, 2], np.int64), np.array([2, 3, 0]), sorter=np.array([1, 3, 2, 0])),
        S(np.array([1., 2., NAN], F32), np.array([NAN, 2., 1.], F32), right=True),
        S(np.array([-0., 0., 1.], F32), np.array([0., -0.], F32)),
        S(SEQ, make(), desc="0-d values"), S(SEQ.astype(np.float64), X34),
        S(np.array([1., 2.], F32), np.array([1., 2.], F32),
          call=_err(lambda lib, s, v: lib.searchsorted(s, v, side="left", right=True))),
        S(np.array([1., 2.], F32), np.array([1., 2.], F32),
          call=_err(lambda lib, s, v: lib.searchsorted(s, v, side="up"))),
        S(SEQ2, make(3), call=_err(lambda lib, s, v: lib.searchsorted(s, v))),
        S(np.array(1., F32), make(3), call=_err(lambda lib, s, v: lib.searchsorted(s, v))),
        S(np.array([5, 1], np.int64), np.array([2]), np.array([1, 0], np.int32),
          call=_err(lambda lib, s, v, so: lib.searchsorted(s, v, sorter=so))),
    ],
    "bucketize": [
        S(X34, SEQ), S(X34, SEQ, right=True), S(make(5), SEQ, out_int32=True),
        S(np.array([0, 2, 5, 5, 9, 1], np.int64), INT_SEQ),
        S(np.array([[2, 5], [8, 1]], np.int64), INT_SEQ, right=True, out_int32=True),
        S(make(), SEQ), S(0.5, SEQ), S(2, INT_SEQ, right=True), S(X234, INT_SEQ),
        S(make(3), SEQ2, call=_err(lambda lib, v, b: lib.bucketize(v, b))),
    ],
    "isin": [
        S(INT_TIES, np.array([0, 2])), S(INT_TIES, np.array([[1], [2]]), invert=True),
        S(INT32, np.array([-1, 2, 7], np.int32), assume_unique=True),
        S(DUPS, np.array([1., 0., 9.], F32)), S(DUPS, np.array([3., NAN], F32)),
        S(np.array([1, 2, 3]), np.array([1.5, 2.])), S(2.0, DUPS), S(DUPS, 3.0),
        S(INT_TIES, np.zeros(0, np.int64)), S(make(), np.array([0.5], F32)),
        S(INT_TIES, np.array([1]), assume_unique=True, invert=True),
        S(BOOLS, np.array([1]), call=_err(lambda lib, e, t: lib.isin(e, t))),
    ],
    "histc": [
        S(make(20), call=lambda lib, t: lib.histc(t, 4, -2, 2)),
        S(make(5, 6), call=lambda lib, t: lib.histc(t)),
        S(make(30), call=lambda lib, t: lib.histc(t, bins=7)),
        S(make(30, low=-3, high=3), call=lambda lib, t: lib.histc(t, 5, min=-1, max=1)),
        S(np.linspace(0, 3, 13).astype(F32), call=lambda lib, t: lib.histc(t, 4, 0, 3),
          desc="values on the bin edges"),
        S(np.linspace(-1, 1, 21), call=lambda lib, t: lib.histc(t, 10, -1, 1)),
        S(np.array([2., 2.], F32), call=lambda lib, t: lib.histc(t, 4)),
        S(np.array([1., NAN, 2.], F32), call=lambda lib, t: lib.histc(t, 3, 0, 3)),
        S(np.zeros(0, F32), call=lambda lib, t: lib.histc(t, 3)),
        S(make(), call=lambda lib, t: lib.histc(t, 3)),
        S(make(10, dtype="float16"), call=lambda lib, t: lib.histc(t, 4, -2, 2)),
        S(make(4, 5), call=lambda lib, t: t.histc(bins=6, min=-1, max=1)),
        S(make(10, dtype="float64"), call=lambda lib, t: lib.histc(t, 3)),
        S(make(4), call=_err(lambda lib, t: lib.histc(t, 0))),
        S(make(4), call=_err(lambda lib, t: lib.histc(t, 3, 2, 1))),
        S(make(4), call=_err(lambda lib, t: lib.histc(t, 3, float("inf"), 1))),
        S(INT32, call=_err(lambda lib, t: lib.histc(t))),
    ],
    "_unique2": [
        S(DUPS, grad=False, call=lambda lib, t: lib.unique(t)),
        S(DUPS, grad=False, call=lambda lib, t: lib.unique(t, return_inverse=True,
                                                           return_counts=True)),
        S(INT_TIES, grad=False, call=lambda lib, t: lib.unique(t, return_inverse=True)),
        S(INT_TIES, grad=False, call=lambda lib, t: lib.unique(t, sorted=False,
                                                               return_counts=True)),
        S(INT32, grad=False, call=lambda lib, t: t.unique(return_inverse=True)),
        S(BOOLS, grad=False, call=lambda lib, t: lib.unique(t, return_counts=True)),
        S(NANS, grad=False, call=lambda lib, t: lib.unique(t, True, True, True)),
        S(make(), grad=False, call=lambda lib, t: lib.unique(t, return_inverse=True,
                                                             return_counts=True)),
        S(np.zeros(0, np.int64), grad=False, call=lambda lib, t: lib.unique(
            t, return_inverse=True, return_counts=True)),
        S(X34, grad=False, call=lambda lib, t: lib.unique(t)),
    ],
    "_unique_dim": [
        S(ROWS, grad=False, call=lambda lib, t: lib.unique(t, dim=0)),
        S(ROWS, grad=False, call=lambda lib, t: lib.unique(t, dim=0, return_inverse=True,
                                                           return_counts=True)),
        S(ROWS.T.copy(), grad=False, call=lambda lib, t: lib.unique(
            t, dim=-1, return_inverse=True, return_counts=True)),
        S(ROWS.astype(F32), grad=False, call=lambda lib, t: t.unique(sorted=False, dim=0)),
        S(ROWS.reshape(5, 3, 1), grad=False, call=lambda lib, t: lib.unique(
            t, return_counts=True, dim=0)),
        S(np.zeros((0, 3), F32), grad=False, call=lambda lib, t: lib.unique(
            t, dim=0, return_inverse=True, return_counts=True)),
        S(make(), grad=False, call=_err(lambda lib, t: lib.unique(t, dim=0))),
    ],
    "_unique_consecutive": [
        S(DUPS, grad=False, call=lambda lib, t: lib.unique_consecutive(t)),
        S(np.array([1, 1, 2, 2, 3, 1, 1, 2]), grad=False, call=lambda lib, t: (
            lib.unique_consecutive(t, return_inverse=True, return_counts=True))),
        S(INT_TIES, grad=False, call=lambda lib, t: t.unique_consecutive(return_inverse=True)),
        S(NANS, grad=False, call=lambda lib, t: lib.unique_consecutive(t, return_counts=True)),
        S(ROWS, grad=False, call=lambda lib, t: lib.unique_consecutive(
            t, return_inverse=True, return_counts=True, dim=0)),
        S(ROWS.T.copy(), grad=False, call=lambda lib, t: lib.unique_consecutive(t, dim=-1)),
        S(make(), grad=False, call=lambda lib, t: lib.unique_consecutive(
            t, return_inverse=True, return_counts=True)),
        S(BOOLS, grad=False, call=lambda lib, t: lib.unique_consecutive(t, return_counts=True)),
    ],
    "_nonzero": [
        S(INT_TIES, call=lambda lib, t: lib.nonzero(t)),
        S(BOOLS, call=lambda lib, t: t.nonzero()),
        S(NANS, call=lambda lib, t: lib.nonzero(t), desc="NaN is nonzero"),
        S(make(2, 3, 4, dtype="int32", low=-1, high=2), call=lambda lib, t: lib.nonzero(t)),
        S(INT_TIES, call=lambda lib, t: lib.nonzero(t, as_tuple=True)),
        S(make(2, 3, 4, dtype="int32", low=-1, high=2),
          call=lambda lib, t: t.nonzero(as_tuple=True)),
        S(make(), call=lambda lib, t: lib.nonzero(t)),
        S(np.array(0., F32), call=lambda lib, t: lib.nonzero(t)),
        S(make(), call=lambda lib, t: lib.nonzero(t, as_tuple=True)),
        S(np.array(0, np.int64), call=lambda lib, t: lib.nonzero(t, as_tuple=True)),
        S(np.zeros((2, 0), F32), call=lambda lib, t: lib.nonzero(t)),
        S(np.zeros((3, 2), F32), call=lambda lib, t: lib.nonzero(t)),
        S(INT_TIES, call=lambda lib, t: lib.argwhere(t)),
        S(BOOLS, call=lambda lib, t: t.argwhere()),
        S(make(), call=lambda lib, t: lib.argwhere(t)),
        S(np.array(False), call=lambda lib, t: lib.argwhere(t)),
    ],
    "_bincount": [
        S(make(12, dtype="int64", low=0, high=6), call=lambda lib, t: lib.bincount(t)),
        S(make(12, dtype="int64", low=0, high=6), call=lambda lib, t: t.bincount(minlength=9)),
        S(make(12, dtype="int32", low=0, high=4), call=lambda lib, t: lib.bincount(t, None, 2)),
        S(make(10, dtype="uint8", low=0, high=5), call=lambda lib, t: lib.bincount(t)),
        S(np.zeros(0, np.int64), call=lambda lib, t: lib.bincount(t)),
        S(np.zeros(0, np.int64), call=lambda lib, t: lib.bincount(t, minlength=3)),
        S(make(6, dtype="int64", low=0, high=4), make(6), grad=False,
          call=lambda lib, t, w: lib.bincount(t, w)),
        S(make(6, dtype="int64", low=0, high=4), make(6, dtype="float64"), grad=False,
          call=lambda lib, t, w: t.bincount(weights=w, minlength=7)),
        S(make(6, dtype="int64", low=0, high=4), make(6, dtype="int64"),
          call=lambda lib, t, w: lib.bincount(t, w)),
        S(make(6, dtype="int64", low=0, high=4), make(6, dtype="float16"), grad=False,
          call=lambda lib, t, w: lib.bincount(t, w)),
        S(np.array([1, -2]), call=_err(lambda lib, t: lib.bincount(t))),
        S(make(2, 3, dtype="int64", low=0, high=3), call=_err(lambda lib, t: lib.bincount(t))),
        S(make(3), call=_err(lambda lib, t: lib.bincount(t))),
        S(BOOLS[0], call=_err(lambda lib, t: lib.bincount(t))),
        S(np.array([1, 2]), call=_err(lambda lib, t: lib.bincount(t, minlength=-1))),
        S(np.array([1, 2]), make(3), grad=False,
          call=_err(lambda lib, t, w: lib.bincount(t, w))),
    ],
}
