"""Samples for the rows in _ops/polynomials.py (torch.special's orthogonal polynomials). They
are not differentiable in PyTorch: values only, over x inside, at and beyond the ends of the
interval and n negative, small, past the closed-form thresholds and fractional."""

import numpy as np

from .harness import S

_X = np.array([-2.0, -1.0, -0.999, -0.7, -0.5, 0.0, 0.3, 0.5, 0.999, 1.0, 1.5, 3.0])
_N = np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 5.0, 7.0, 9.0, 12.0, 2.7])
X, N = (a.astype("float32") for a in np.meshgrid(_X, _N))
# shifted polynomials live on [0, 1]
XS = ((X + 1) / 2).astype("float32")


def _samples(x):
    # float32: the recurrences amplify rounding, and PyTorch's shifted kernels form 2x - 1 in
    # their own order (4x - 3 for the first V), so a few ulps of the largest values differ
    return [
        S(x, N, grad=False, rtol=1e-5),
        S(x.astype("float64"), N.astype("float64"), grad=False, desc="float64"),
        S(x[0], 4, grad=False, desc="int n"),
        S(x[:3], np.float32(9.0), grad=False, desc="0-d n"),
        S(np.array([0, 1, 2, -1], np.int64), np.array([3, 2, 1, 4], np.int64), grad=False,
          desc="int64 -> float32"),
    ]


SAMPLES = {f"special_{kind}_polynomial_{k}": _samples(XS if kind.startswith("shifted") else X)
           for kind in ("chebyshev", "shifted_chebyshev") for k in "tuvw"}
SAMPLES.update({f"special_{name}": _samples(X) for name in (
    "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
    "legendre_polynomial_p")})
