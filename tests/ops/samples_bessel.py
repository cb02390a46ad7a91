"""Samples for the rows in _ops/bessel.py (torch.special.modified_bessel_i0 / i1,
spherical_bessel_j0), _ops/bessel_jy.py (bessel_j0, j1, y0, y1) and _ops/bessel_k.py
(modified_bessel_k0, k1 and their scaled forms) and _ops/airy.py (airy_ai): not
differentiable in PyTorch, values only."""

import numpy as np

from .harness import S, raises

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


# each range of bessel_jy.py's (series below 8, recurrence to 25, asymptotic above) and
# their edges, zeros of both signs, a tiny and a huge argument, infinities and nan
_JY = np.concatenate([np.linspace(-40, 40, 161), [0.0, -0.0, 1e-8, -1e-4, 7.999, 8.0, 24.999,
                                                  25.0, 1e3, 1e6, np.inf, -np.inf, np.nan]])


def _jy_samples(name):
    return [
        # PyTorch's float64 kernels are off by up to ~5e-7 near x = 5, where their
        # approximations switch (SciPy's agree with torchjax's to ~1e-14)
        S(_JY, grad=False, atol=1e-6, rtol=1e-6, desc="float64"),
        # float32: PyTorch computes in float32, which loses the phase of large arguments
        S(_JY[np.abs(_JY) <= 1e3].astype("float32"), grad=False, atol=5e-6, rtol=1e-5),
        S(np.array([0, 1, -2, 9, 30], np.int64), grad=False, desc="int64 -> float32"),
        S(np.ones(2, np.float16), grad=False,
          call=raises(lambda lib, a: getattr(lib.special, name)(a)), desc="no half kernel"),
    ]


SAMPLES.update({f"special_{n}": _jy_samples(n)
                for n in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1")})

# both ranges of bessel_k.py's (series below 2, integral above), their edge, tiny and huge
# arguments, where exp(-x) underflows, negative numbers (nan), zeros, infinities and nan
_K = np.concatenate([np.geomspace(1e-6, 60, 120), [0.0, -0.0, -1.0, 1.999, 2.0, 2.001, 700.0,
                                                   800.0, 1e10, np.inf, -np.inf, np.nan]])


def _k_samples(name):
    return [
        S(_K, grad=False, rtol=1e-13, desc="float64"),
        S(_K.astype("float32"), grad=False, rtol=2e-6),
        S(np.array([0, 1, 3, -2], np.int64), grad=False, desc="int64 -> float32"),
        S(np.ones(2, np.float16), grad=False,
          call=raises(lambda lib, a: getattr(lib.special, name)(a)), desc="no half kernel"),
    ]


SAMPLES.update({f"special_{n}": _k_samples(n) for n in (
    "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1")})

# airy_ai: each range of airy.py's (asymptotic below -7.5, series to 2, K_1/3 above) and their
# edges, where the result underflows (x > ~104), infinities and nan
_AIRY = np.concatenate([np.linspace(-40, 110, 301), [-7.5, -7.4999, 1.9999, 2.0, -0.0, np.inf,
                                                     -np.inf, np.nan]])

SAMPLES["special_airy_ai"] = [
    # PyTorch's float64 kernel is off by up to ~3e-6 near x = -2.1 (SciPy agrees with
    # torchjax to ~1e-11 there)
    S(_AIRY, grad=False, atol=5e-6, rtol=1e-6, desc="float64"),
    S(_AIRY[_AIRY > -8].astype("float32"), grad=False, atol=5e-6, rtol=1e-5),
    S(np.array([0, 1, -3, 200], np.int64), grad=False, desc="int64 -> float32"),
    S(np.ones(2, np.float16), grad=False,
      call=raises(lambda lib, a: lib.special.airy_ai(a)), desc="no half kernel"),
]
