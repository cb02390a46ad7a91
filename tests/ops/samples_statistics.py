"""Samples for diff, trapezoid, cumulative_trapezoid, quantile, nanquantile, cov, corrcoef."""

import numpy as np

from .harness import A, Const, S, make, raises

_NAN = A(1.0, np.nan, 3.0, 0.5, np.nan, -2.0, 4.0, 2.5).reshape(2, 4)

SAMPLES = {
    "diff": [
        S(make(3, 5)),
        S(make(4, 3), 2, 0),
        S(make(2, 4), prepend=make(2, 1), append=make(2, 2)),
        S(make(5, dtype="int64", low=-9, high=9), grad=False),
        S(np.array([True, False, False, True]), grad=False),
        S(make(3), 4),
        S(make(3), call=raises(lambda lib, x: lib.diff(x, -1))),
        S(make(2, 3), call=raises(lambda lib, x: lib.diff(x[0, 0]))),
        S(make(2, 3), call=lambda lib, x: x.diff(dim=0)),
    ],
    "trapezoid": [
        S(make(3, 5)),
        S(make(3, 5), dx=0.5, dim=0),
        S(make(2, 4), make(4)),
        S(make(2, 4), make(2, 4), dim=1),
        S(make(4, dtype="int64", low=-5, high=5), grad=False),
    ],
    "cumulative_trapezoid": [
        S(make(3, 5)),
        S(make(3, 5), dx=2.0, dim=0),
        S(make(2, 4), make(4)),
    ],
    "quantile": [
        S(make(3, 6), 0.3),
        S(make(3, 6), make(4, low=0, high=1), dim=1, keepdim=True),
        S(make(7), make(3, low=0, high=1), interpolation="lower"),
        S(make(2, 5), 0.5, dim=0, interpolation="midpoint"),
        # ranks exactly halfway: rounds half to even (finite differences jump there, so q is
        # held constant)
        S(A(1.0, 2.0, 3.0, 4.0, 5.0), Const(A(0.125, 0.375, 0.625)), interpolation="nearest"),
        S(make(2, 3, 4), 0.75, dim=-1, interpolation="higher"),
        S(make(3, 4), 0.6, keepdim=True),
        S(_NAN, 0.5, dim=1),
        S(make(3), call=raises(lambda lib, x: lib.quantile(x, 1.5))),
        S(make(3), call=raises(lambda lib, x: lib.quantile(x, lib.tensor([0.5, 2.0])))),
        S(make(3), call=raises(lambda lib, x: lib.quantile(x, 0.5, interpolation="x"))),
        S(make(3, dtype="int64"), call=raises(lambda lib, x: lib.quantile(x, 0.5))),
        S(make(3), grad=False,
          call=raises(lambda lib, x: lib.quantile(x, lib.tensor([0.5], dtype=lib.float64)))),
    ],
    "nanquantile": [
        S(_NAN, 0.5, dim=1),
        S(_NAN, A(0.1, 0.9)),
        S(A(np.nan, np.nan, 1.0, 2.0).reshape(2, 2), 0.3, dim=1, keepdim=True),
        S(make(2, 5), 0.25, dim=0, interpolation="linear"),
    ],
    "cov": [
        S(make(3, 6)),
        S(make(5)),
        S(make(2, 5), correction=0),
        S(make(2, 5), fweights=Const(np.array([1, 2, 1, 3, 1])),
          aweights=Const(make(5, low=0.1, high=1.0))),
        S(make(2, 5), aweights=Const(make(5, low=0.1, high=1.0))),
        S(make(3, 4, dtype="int64", low=-5, high=5), grad=False),
    ],
    "corrcoef": [
        S(make(3, 6)),
        S(make(2, 5)),
        S(make(4)),
    ],
}
