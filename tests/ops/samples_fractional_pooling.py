"""Samples for the rows in _ops/fractional_pooling.py (fractional_max_pool2d / 3d at given
random samples): values, indices and gradients, for overlapping and disjoint windows, one
output along a dim, ties and NaNs."""

import numpy as np

from .harness import Const, S, own_make, raises

make = own_make(150)


def _u(*shape):
    return Const(make(*shape, low=0.0, high=1.0))


def _pool(n, kernel, output_size):
    def call(lib, x, u):
        f = getattr(lib.nn.functional, f"fractional_max_pool{n}d")
        return f(x, kernel, output_size=output_size, return_indices=True, _random_samples=u)
    return call


_TIES = np.round(make(2, 2, 7, 6))
_NANS = make(1, 2, 8, 8)
_NANS[0, 0, 1, 2] = _NANS[0, 1, 5, 5] = _NANS[0, 1, 6, 6] = np.nan

SAMPLES = {
    "fractional_max_pool2d": [
        S(make(2, 3, 9, 8), _u(2, 3, 2), call=_pool(2, 2, (4, 3))),
        S(make(2, 3, 10, 10), _u(2, 3, 2), call=_pool(2, (3, 2), (5, 5)), desc="overlapping"),
        S(make(3, 7, 9), _u(1, 3, 2), call=_pool(2, (2, 3), (1, 4)), desc="unbatched"),
        S(_TIES, _u(2, 2, 2), grad=False, call=_pool(2, 2, (3, 3)), desc="ties"),
        S(_NANS, _u(1, 2, 2), grad=False, call=_pool(2, 2, (4, 4)), desc="NaNs"),
        S(make(1, 2, 9, 9), _u(1, 2, 2), grad=False, call=raises(_pool(2, 8, (4, 4))),
          desc="pool too large"),
        S(make(1, 2, 9, 9), _u(1, 3, 2), grad=False, call=raises(_pool(2, 2, (3, 3))),
          desc="samples per channel"),
    ],
    "fractional_max_pool3d": [
        S(make(2, 2, 6, 7, 6), _u(2, 2, 3), call=_pool(3, 2, (3, 4, 2))),
        S(make(2, 5, 6, 5), _u(1, 2, 3), call=_pool(3, (2, 3, 1), (2, 2, 4)),
          desc="unbatched"),
        S(make(1, 2, 5, 5, 5), _u(1, 2, 3), grad=False, call=raises(_pool(3, 2, (4, 3, 3))),
          desc="windows would end at the input's end"),
    ],
}
