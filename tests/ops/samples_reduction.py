"""Samples for the reduction rows: sums, means, products, max/min, std/var, norms, cumulative
ops, logical reductions, medians.

Ties are placed on purpose. Where the gradient of a tie goes to one index (max(dim), median(dim),
cummax, mode) finite differences would split it, so those samples have more than 64 elements
(the finite-difference check skips them) while the even-split ones stay small."""

import numpy as np

import torchjax

from .harness import S, make, raises

_err = raises


F32 = np.float32
TIE4 = np.array([1., 3., 3., 2.], dtype=F32)              # one tie at the maximum
TIE_MIN = np.array([[2., 0., 5., 0.], [1., 1., 4., 3.]], dtype=F32)  # two-way ties at minima
# > 64 elements, many ties in every row and column: first-index and selection rules
BIG_TIES = (np.arange(84) * 7 % 5).astype(F32).reshape(7, 12)
BIG_TIES3 = (np.arange(90) * 3 % 4).astype(F32).reshape(3, 5, 6)
ZEROS1 = np.array([[1., 0., 3., 2.], [0., 2., 0., 3.], [1.5, -2., 1., 0.5]], dtype=F32)
NANS = np.array([[1., np.nan, 3., 0.5], [2., -1., 0., 4.]], dtype=F32)
INTS = make(3, 4, dtype="int64", low=-5, high=5)
INT32 = make(2, 5, dtype="int32", low=-3, high=4)
BOOLS = make(3, 4, dtype="bool")
U8 = np.array([[0, 3, 1], [2, 2, 0]], dtype=np.uint8)


def _common(x=None, x3=None):
    """Shapes and dim forms shared by reductions that take dim as int, tuple or None."""
    x = make(3, 4) if x is None else x
    x3 = make(2, 3, 4) if x3 is None else x3
    return [
        S(make()), S(make(5)), S(x), S(x, 1), S(x, -1), S(x, 0, True), S(x, (0, 1)),
        # an explicit dim=None picks PyTorch's dim overload (SumBackward1), a default one
        # cannot be told apart here
        S(x, dim=None, grad_name=False), S(x, dim=None, keepdim=True, grad_name=False),
        S(x3, (0, 2), keepdim=True),
        S(x3, [-1, 0]), S(x3, (-2,)), S(x, ()), S(make(), 0), S(make(), -1, True),
        S(x, dim=1, keepdim=False), S(x3, 1),
    ]


GRAD_NAME_SKIP = {"norm": "matrix orders ('nuc', 2) take linalg_matrix_norm's paths"}

SAMPLES = {
    # -- sums, means, products ---------------------------------------------------------------
    "sum": _common() + [
        S(INTS), S(INTS, 1), S(INT32, 0, True), S(BOOLS), S(BOOLS, (0, 1)),
        S(make(3, 4), dtype=torchjax.float64), S(INTS, 0, dtype=torchjax.float32),
        S(make(2, 3), 1, call=lambda lib, t, d: t.sum(d)),
        S(make(4, 2), call=lambda lib, t: t.sum(dim=0, keepdim=True)),
        S(make(4, dtype="float16"), atol=1e-2, rtol=1e-2, grad=False),
        S(make(3), 1, grad=False, call=_err(lambda lib, t, d: lib.sum(t, d)),
          desc="dim out of range"),
        S(make(), 1, grad=False, call=_err(lambda lib, t, d: lib.sum(t, d)),
          desc="0-d dim out of range"),
        S(make(3, 4), grad=False, call=_err(lambda lib, t: lib.sum(t, (0, 0))),
          desc="repeated dim"),
    ],
    "mean": _common() + [
        S(make(3, 4), dtype=torchjax.float64), S(INTS, dtype=torchjax.float32),
        S(make(2, 3), call=lambda lib, t: t.mean(-1, keepdim=True)),
        S(INTS, grad=False, call=_err(lambda lib, t: lib.mean(t)), desc="int mean"),
        S(BOOLS, 0, grad=False, call=_err(lambda lib, t, d: lib.mean(t, d)), desc="bool mean"),
        S(INTS, grad=False, call=_err(lambda lib, t: lib.mean(t, dtype=lib.int64)),
          desc="int dtype"),
        S(make(2, 3), 5, grad=False, call=_err(lambda lib, t, d: lib.mean(t, dim=d)),
          desc="dim out of range"),
        S(make(2, 3), -3, grad=False, call=_err(lambda lib, t, d: t.mean(d)),
          desc="negative dim out of range"),
    ],
    "nansum": _common() + [
        S(NANS), S(NANS, 1), S(NANS, (0, 1), True), S(INTS), S(BOOLS, 0),
        S(NANS, dtype=torchjax.float64), S(NANS, call=lambda lib, t: t.nansum(0)),
    ],
    "nanmean": _common() + [
        S(NANS), S(NANS, 1), S(NANS, 0, True), S(NANS, dtype=torchjax.float64),
        S(np.array([np.nan, np.nan, 1.], dtype=F32)),
        S(NANS, call=lambda lib, t: t.nanmean(1)),
        S(INTS, grad=False, call=_err(lambda lib, t: lib.nanmean(t)), desc="int nanmean"),
    ],
    "prod": [
        S(make()), S(make(5)), S(make(3, 4)), S(make(3, 4), 1), S(make(3, 4), -1, True),
        S(make(2, 3, 4), 0), S(make(), 0), S(make(), -1, True),
        S(ZEROS1), S(ZEROS1, 0), S(ZEROS1, 1), S(ZEROS1, 1, True),
        S(np.array([0., 0., 2., 3.], dtype=F32), desc="two zeros"),
        S(np.array([[0., 0.], [1., 0.]], dtype=F32), 0),
        S(INTS), S(INTS, 1), S(INT32, 0), S(BOOLS), S(BOOLS, 0),
        S(make(3, 4), dtype=torchjax.float64), S(INTS, 0, dtype=torchjax.float32),
        S(ZEROS1, call=lambda lib, t: t.prod(1)),
        S(make(2, 3), 2, grad=False, call=_err(lambda lib, t, d: lib.prod(t, d)),
          desc="dim out of range"),
    ],
    # -- max and min -------------------------------------------------------------------------
    "_max_all": [
        S(make(), call=lambda lib, t: lib.max(t)),
        S(make(3, 4), call=lambda lib, t: lib.max(t)),
        S(TIE4, call=lambda lib, t: lib.max(t), desc="tie splits the gradient"),
        S(BIG_TIES, call=lambda lib, t: lib.max(t), desc="many ties split evenly"),
        S(make(2, 3), call=lambda lib, t: t.max()),
        S(INTS, call=lambda lib, t: lib.max(t)), S(BOOLS, call=lambda lib, t: t.max()),
        S(NANS, call=lambda lib, t: lib.max(t), grad=False),
        # max(input, other) routes to maximum
        S(make(3, 4), make(3, 4), call=lambda lib, a, b: lib.max(a, b)),
        S(TIE4, TIE4[::-1].copy(), call=lambda lib, a, b: a.max(b)),
        S(make(3, 4), make(4), call=lambda lib, a, b: lib.max(a, other=b)),
        S(np.zeros((0,), F32), grad=False, call=_err(lambda lib, t: lib.max(t)),
          desc="empty"),
        S(make(3), grad=False, call=_err(lambda lib, t: lib.max(t, 0.5)), desc="float dim"),
    ],
    "_min_all": [
        S(make(), call=lambda lib, t: lib.min(t)),
        S(make(3, 4), call=lambda lib, t: lib.min(t)),
        S(-TIE4, call=lambda lib, t: lib.min(t), desc="tie splits the gradient"),
        S(BIG_TIES, call=lambda lib, t: t.min(), desc="many ties split evenly"),
        S(INTS, call=lambda lib, t: lib.min(t)), S(BOOLS, call=lambda lib, t: t.min()),
        S(make(3, 4), make(3, 4), call=lambda lib, a, b: lib.min(a, b)),
        S(make(3, 4), make(3, 1), call=lambda lib, a, b: a.min(other=b)),
    ],
    "max": [
        S(make(3, 4), 1, call=lambda lib, t, d: lib.max(t, d)),
        S(make(3, 4), -1, call=lambda lib, t, d: lib.max(t, d, True)),
        S(make(3, 4), call=lambda lib, t: lib.max(t, dim=0, keepdim=True)),
        S(make(2, 3, 4), call=lambda lib, t: t.max(1)),
        S(make(), call=lambda lib, t: lib.max(t, 0)),
        S(make(), call=lambda lib, t: lib.max(t, -1, True)),
        S(BIG_TIES, call=lambda lib, t: lib.max(t, 0), desc="first index of a tie"),
        S(BIG_TIES, call=lambda lib, t: lib.max(t, 1, True), desc="first index of a tie"),
        S(BIG_TIES3, call=lambda lib, t: t.max(dim=-1)),
        S(INTS, call=lambda lib, t: lib.max(t, 1)), S(BOOLS, call=lambda lib, t: lib.max(t, 0)),
        S(NANS, call=lambda lib, t: lib.max(t, 1), grad=False),
        S(make(3, 4), call=lambda lib, t: (lib.max(t, 1).values, lib.max(t, 1).indices)),
        S(make(3, 4), call=lambda lib, t: type(lib.max(t, 1)).__name__),
        S(make(3, 4), grad=False, call=_err(lambda lib, t: lib.max(t, 2)),
          desc="dim out of range"),
    ],
    "min": [
        S(make(3, 4), 1, call=lambda lib, t, d: lib.min(t, d)),
        S(make(3, 4), call=lambda lib, t: t.min(0, keepdim=True)),
        S(make(), call=lambda lib, t: lib.min(t, 0)),
        S(-BIG_TIES, call=lambda lib, t: lib.min(t, 1), desc="first index of a tie"),
        S(BIG_TIES3, call=lambda lib, t: lib.min(t, dim=0)),
        S(INTS, call=lambda lib, t: lib.min(t, 0)), S(BOOLS, call=lambda lib, t: t.min(1)),
    ],
    "amax": _common() + [
        S(TIE4), S(TIE4, 0), S(-TIE_MIN, 1), S(-TIE_MIN, (0, 1), True),
        S(BIG_TIES), S(BIG_TIES, 0), S(BIG_TIES3, (0, 2), True),
        S(INTS, 1), S(BOOLS), S(TIE4, call=lambda lib, t: t.amax(-1)),
        S(np.zeros((0, 3), F32), 0, grad=False, call=_err(lambda lib, t, d: lib.amax(t, d)),
          desc="empty dim"),
    ],
    "amin": _common() + [
        S(-TIE4), S(TIE_MIN, 1), S(TIE_MIN, (0, 1)), S(BIG_TIES, 1, True), S(INTS, (0,)),
        S(BOOLS, 1), S(TIE_MIN, call=lambda lib, t: t.amin(dim=0)),
    ],
    "aminmax": [
        S(make()), S(make(3, 4)), S(make(3, 4), dim=1), S(make(3, 4), dim=-1, keepdim=True),
        S(make(3, 4), dim=None, keepdim=True), S(make(), dim=0),
        S(TIE_MIN, dim=1), S(TIE4), S(BIG_TIES, dim=0),
        S(INTS), S(INTS, dim=0), S(BOOLS),
        S(make(2, 3), call=lambda lib, t: t.aminmax(dim=0)),
    ],
    "argmax": [
        S(make()), S(make(3, 4)), S(make(3, 4), 1), S(make(3, 4), -1, True),
        S(make(3, 4), keepdim=True), S(make(3, 4), None, True), S(make(), 0), S(make(), 0, True),
        S(BIG_TIES), S(BIG_TIES, 0), S(BIG_TIES3, 2), S(INTS, 0), S(NANS), S(NANS, 1),
        S(TIE4, call=lambda lib, t: t.argmax()),
        S(BOOLS, call=_err(lambda lib, t: lib.argmax(t)), desc="bool"),
        S(make(3), call=_err(lambda lib, t: lib.argmax(t, 3)), desc="dim out of range"),
    ],
    "argmin": [
        S(make()), S(make(3, 4)), S(make(3, 4), 0), S(make(3, 4), 1, True),
        S(make(3, 4), dim=None, keepdim=True), S(make(), -1),
        S(BIG_TIES), S(BIG_TIES, 1), S(INTS, 1), S(NANS, 1),
        S(TIE_MIN, call=lambda lib, t: t.argmin(1)),
    ],
    # -- std and var -------------------------------------------------------------------------
    "std": [
        S(make(5)), S(make(3, 4)), S(make(3, 4), 1), S(make(3, 4), -1, keepdim=True),
        S(make(2, 3, 4), (0, 2)), S(make(3, 4), dim=None, keepdim=True),
        # PyTorch's backward divides by N - correction with N = 1 for dim=(): inf gradients
        S(make(3, 4), (), grad=False),
        S(make(3, 4), correction=0), S(make(3, 4), 1, correction=2),
        S(make(3, 4), 0, correction=0.5), S(make(3, 4), unbiased=False),
        S(make(3, 4), True), S(make(3, 4), False),
        S(make(3, 4), 0, True), S(make(3, 4), 1, False, True), S(make(3, 4), None, True),
        S(make(3, 4), [0], unbiased=True, keepdim=True),
        S(make(2, 3), call=lambda lib, t: t.std(1)),
        S(make(2, 3), call=lambda lib, t: t.std(dim=0, correction=0)),
        S(INTS, grad=False, call=_err(lambda lib, t: lib.std(t)), desc="int std"),
    ],
    "var": [
        S(make(5)), S(make(3, 4)), S(make(3, 4), 1), S(make(3, 4), -1, keepdim=True),
        S(make(2, 3, 4), (0, 2)), S(make(3, 4), (), grad=False), S(make(), grad=False),
        S(make(3, 4), correction=0), S(make(3, 4), 0, correction=2),
        S(make(3, 4), 0, correction=1.5), S(make(3, 4), unbiased=False),
        S(make(3, 4), True), S(make(3, 4), False),
        S(make(3, 4), 0, True), S(make(3, 4), 1, False, True),
        S(make(2, 3), call=lambda lib, t: t.var(0, unbiased=False)),
        S(BOOLS, grad=False, call=_err(lambda lib, t: lib.var(t, 0)), desc="bool var"),
    ],
    "std_mean": [
        S(make(5)), S(make(3, 4)), S(make(3, 4), 1), S(make(3, 4), (0, 1), keepdim=True),
        S(make(3, 4), 0, correction=0), S(make(3, 4), True), S(make(3, 4), 0, False, True),
    ],
    "var_mean": [
        S(make(5)), S(make(3, 4)), S(make(3, 4), -1), S(make(2, 3, 4), (1, 2), keepdim=True),
        S(make(3, 4), 1, correction=0), S(make(3, 4), False), S(make(3, 4), 0, True, True),
    ],
    # -- norms, logsumexp --------------------------------------------------------------------
    "norm": [
        S(make()), S(make(5)), S(make(3, 4)), S(make(3, 4), 1), S(make(3, 4), 3),
        S(make(3, 4), 0.5), S(make(3, 4), 0), S(make(3, 4), float("inf")),
        S(make(3, 4), float("-inf")), S(make(3, 4), "fro"), S(make(3, 4), "fro", 1),
        S(make(2, 3, 4), "fro", (0, 2)), S(make(3, 4), 2, 1, True), S(make(3, 4), 1, -1),
        S(make(2, 3, 4), 3, (0, 1), True), S(make(3, 4), p=2, dim=0),
        S(make(3, 4), dtype=torchjax.float64), S(make(3, 4), 1, dim=1, dtype=torchjax.float64),
        S(make(3, 4), "nuc"), S(make(2, 3, 4), "nuc", (1, 2)),
        S(ZEROS1, 1, 1), S(ZEROS1, 3, 1), S(ZEROS1, 0.5, 1), S(ZEROS1, float("inf"), 1),
        S(np.zeros((2, 3), F32), desc="zero norm"), S(np.zeros((2, 3), F32), 1, 1),
        S(np.zeros((2, 3), F32), float("inf")), S(np.zeros((2, 3), F32), 3, 0),
        S(TIE4, float("inf")), S(-TIE4, float("inf")),
        S(make(3, 4), call=lambda lib, t: t.norm()),
        S(make(3, 4), call=lambda lib, t: t.norm(1, 0, True)),
        S(make(3, 4), call=lambda lib, t: t.norm(p="fro", dim=(0, 1))),
        S(INTS, grad=False, call=_err(lambda lib, t: lib.norm(t)), desc="int norm"),
    ],
    "logsumexp": [
        S(make(), 0), S(make(5), 0), S(make(3, 4), 1), S(make(3, 4), -1, True),
        S(make(3, 4), (0, 1)), S(make(2, 3, 4), (0, 2), keepdim=True),
        S(make(3, 4, low=-90, high=90), 1), S(INTS, 1), S(BOOLS, 0),
        S(np.array([[-np.inf, 0.], [1., -np.inf]], F32), 1),
        S(make(2, 3), call=lambda lib, t: t.logsumexp(0)),
        S(make(2, 3), call=lambda lib, t: t.logsumexp(dim=1, keepdim=True)),
    ],
    # -- cumulative ops ----------------------------------------------------------------------
    "cumsum": [
        S(make(5), 0), S(make(3, 4), 1), S(make(3, 4), -2), S(make(2, 3, 4), 1), S(make(), 0),
        S(make(), -1), S(INTS, 0), S(INT32, 1), S(BOOLS, 1),
        S(make(3, 4), 0, dtype=torchjax.float64), S(INTS, 1, dtype=torchjax.float32),
        S(make(3, 4), call=lambda lib, t: t.cumsum(1)),
        S(make(3, 4), call=lambda lib, t: (t * 1).cumsum_(0)),
        S(INT32, grad=False, call=lambda lib, t: t.clone().cumsum_(1)),
        S(make(3), grad=False, call=_err(lambda lib, t: lib.cumsum(t, 1)),
          desc="dim out of range"),
    ],
    "cumprod": [
        S(make(5), 0), S(make(3, 4), 1), S(make(3, 4), -2), S(make(), 0),
        S(ZEROS1, 0), S(ZEROS1, 1), S(np.array([2., 0., 3., 0., 4.], F32), 0),
        S(INTS, 0), S(INT32, 1), S(BOOLS, 1), S(make(3, 4), 0, dtype=torchjax.float64),
        S(ZEROS1, call=lambda lib, t: t.cumprod(dim=1)),
        S(ZEROS1, call=lambda lib, t: (t * 1).cumprod_(1)),
    ],
    "logcumsumexp": [
        S(make(5), 0), S(make(3, 4), 1), S(make(3, 4), -2), S(make(), 0),
        S(make(3, 4, low=-80, high=80), 1),
        S(make(3, 4), call=lambda lib, t: t.logcumsumexp(0)),
        S(INTS, grad=False, call=_err(lambda lib, t: lib.logcumsumexp(t, 0)), desc="int"),
    ],
    "cummax": [
        S(make(5), 0), S(make(3, 4), 1), S(make(3, 4), -2), S(make(), 0),
        S(BIG_TIES, 1, desc="a later tie wins"), S(BIG_TIES, 0), S(BIG_TIES3, 2),
        S(np.array([1., np.nan, 3., np.nan, 2.], F32), 0, grad=False),
        S(INTS, 1), S(BOOLS, 0), S(make(3, 4), call=lambda lib, t: t.cummax(1)),
    ],
    "cummin": [
        S(make(5), 0), S(make(3, 4), 1), S(make(), 0), S(-BIG_TIES, 1), S(BIG_TIES3, 0),
        S(np.array([3., 1., 1., 2., 1.], F32) * np.ones((14, 1), F32), 1),
        S(np.array([1., np.nan, 0., np.nan], F32), 0, grad=False),
        S(INTS, 0), S(make(3, 4), call=lambda lib, t: t.cummin(-1)),
    ],
    # -- logical reductions, counting --------------------------------------------------------
    "all": [
        S(make()), S(BOOLS), S(BOOLS, 0), S(BOOLS, 1, True), S(BOOLS, (0, 1)),
        S(BOOLS, dim=None, keepdim=True), S(INTS), S(INTS, -1), S(U8), S(U8, 0),
        S(U8, (0, 1), True), S(ZEROS1, 1), S(np.zeros((0,), F32)),
        S(BOOLS, call=lambda lib, t: t.all(1)), S(U8, call=lambda lib, t: t.all()),
    ],
    "any": [
        S(make()), S(BOOLS), S(BOOLS, 0), S(BOOLS, 1, True), S(BOOLS, (0, 1)),
        S(np.zeros((2, 3), bool), 1), S(INTS), S(INTS, -1), S(U8), S(U8, 1), S(U8, (1,), True),
        S(ZEROS1, 0), S(np.zeros((0,), F32)), S(BOOLS, call=lambda lib, t: t.any(0)),
    ],
    "count_nonzero": [
        S(make()), S(ZEROS1), S(ZEROS1, 0), S(ZEROS1, (0, 1)), S(ZEROS1, dim=-1), S(INTS, 1),
        S(BOOLS), S(BOOLS, (1,)), S(ZEROS1, call=lambda lib, t: t.count_nonzero(1)),
    ],
    # -- medians and mode --------------------------------------------------------------------
    "_median_all": [
        S(make(), call=lambda lib, t: lib.median(t)),
        S(make(5), call=lambda lib, t: lib.median(t)),
        S(make(3, 4), call=lambda lib, t: lib.median(t), desc="even count: lower middle"),
        S(TIE4, call=lambda lib, t: lib.median(t)),
        S(BIG_TIES, call=lambda lib, t: lib.median(t), desc="ties share the gradient"),
        S(BIG_TIES3, call=lambda lib, t: t.median()),
        S(NANS, call=lambda lib, t: lib.median(t), grad=False),
        S(INTS, call=lambda lib, t: lib.median(t)),
        S(make(4), call=_err(lambda lib, t: lib.median(t, keepdim=True)), grad=False),
    ],
    "_nanmedian_all": [
        S(make(3, 4), call=lambda lib, t: lib.nanmedian(t)),
        S(NANS, call=lambda lib, t: lib.nanmedian(t)),
        S(np.full((3,), np.nan, F32), call=lambda lib, t: lib.nanmedian(t), grad=False),
        S(BIG_TIES, call=lambda lib, t: t.nanmedian()),
        S(INTS, call=lambda lib, t: lib.nanmedian(t)),
    ],
    "median": [
        S(make(3, 4), call=lambda lib, t: lib.median(t, 1)),
        S(make(3, 5), call=lambda lib, t: lib.median(t, 0, True)),
        S(make(3, 4), call=lambda lib, t: t.median(dim=-1, keepdim=True)),
        S(make(), call=lambda lib, t: lib.median(t, 0)),
        S(BIG_TIES, call=lambda lib, t: lib.median(t, 1), desc="index among ties"),
        S(BIG_TIES, call=lambda lib, t: lib.median(t, 0)),
        S(BIG_TIES3, call=lambda lib, t: t.median(2)),
        S((np.arange(150) * 7 % 3).astype(F32).reshape(2, 75), grad=False,
          call=lambda lib, t: lib.median(t, 1), desc="long rows of ties"),
        S(NANS, call=lambda lib, t: lib.median(t, 1), grad=False),
        S(INTS, call=lambda lib, t: lib.median(t, 0)),
    ],
    "nanmedian": [
        S(make(3, 4), call=lambda lib, t: lib.nanmedian(t, 1)),
        S(NANS, call=lambda lib, t: lib.nanmedian(t, 1), grad=False),
        # the index for an all-NaN row is whatever PyTorch's selection leaves: not compared
        S(np.array([[1., np.nan, 3., 4.], [np.nan, 2., np.nan, np.nan]], F32), grad=False,
          call=lambda lib, t: lib.nanmedian(t, 1, True)),
        S(np.array([[1., np.nan], [np.nan, np.nan]], F32), grad=False,
          call=lambda lib, t: lib.nanmedian(t, 1).values),
        S(BIG_TIES, call=lambda lib, t: t.nanmedian(0)),
        S(INTS, call=lambda lib, t: lib.nanmedian(t, 1)),
    ],
    "mode": [
        S(make(3, 4)), S(make(3, 4), 0), S(make(), 0),
        S(BIG_TIES), S(BIG_TIES, 0, True), S(BIG_TIES3, 1),
        S(np.array([3., 1., 3., 1., 2.], F32) * np.ones((14, 1), F32), desc="last index"),
        S(INTS, 1), S(INT32, keepdim=True), S(BIG_TIES, call=lambda lib, t: t.mode(1)),
    ],
}
