"""Samples for the rows in _ops/bessel.py (torch.special.modified_bessel_i0 / i1,
spherical_bessel_j0): not differentiable in PyTorch, values only."""

import numpy as np

from .harness import S

_X = np.concatenate([np.linspace(-30, 30, 121), [0.0, 1e-8, -1e-4, 0.49999, 0.5, 1e3, np.inf,
                                                  -np.inf, np.nan]])


def _samples(rtol):
    return [
        S(_X.astype("float32"), grad=False, rtol=rtol),
        S(_X, grad=False, desc="float64"),
        S(np.array([0, 1, -2, 5], np.int64), grad=False, desc="int64 -> float32"),
    ]


SAMPLES = {
    # float32: JAX's i0/i1 and PyTorch's Cephes series round the last ulps differently
    "special_modified_bessel_i0": _samples(3e-6),
    "special_modified_bessel_i1": _samples(3e-6),
    "special_spherical_bessel_j0": _samples(1.3e-6),
}
