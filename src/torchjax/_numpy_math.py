"""NumPy rules (_numpy_eval) for powers, rounding and special functions: the elementwise
rules that are more than a NumPy function of the same name (a cheaper form, XLA's rounding,
a special value PyTorch gives), kept apart from the table of plain ones."""

from __future__ import annotations

import numpy as np

from ._numpy_eval import rule


def _power_by_products(x, n):
    """x ** n for a small integer n by multiplying. NumPy's float power takes ~45 ns per
    element whatever the exponent (a GPT's GELU, x ** 3.0, cost 2.6 ms per call at 128 x
    768: a third of a generated token), products ~1; XLA rewrites pow by a constant 2 or 3
    into products too."""
    r = x if n else np.ones_like(x)
    for _ in range(abs(n) - 1):
        r = r * x
    return 1 / r if n < 0 else r


def _small_integer(y):
    """y's value when y is one number (or a broadcast of one) equal to an integer in
    [-2, 4], else None."""
    if y.dtype.kind not in "iuf" or (y.ndim and (not y.size or any(y.strides))):
        return None
    v = y.flat[0] if y.ndim else y.item()
    if v != v or not -2 <= v <= 4 or v != int(v):
        return None
    return int(v)


@rule("pow")
def _pow(x, y, **_):
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind in "fc":
        n = _small_integer(y)
        if n is not None:
            return _power_by_products(x.astype(np.result_type(x, y), copy=False), n)
    return np.power(x, y)


@rule("integer_pow")
def _integer_pow(x, *, y, **_):
    x = np.asarray(x)
    if x.dtype.kind in "fc" and -2 <= y <= 4:
        return _power_by_products(x, y)
    return x ** y if y >= 0 else 1 / x ** -y


@rule("round")
def _round(x, *, rounding_method=0, **_):
    if int(rounding_method) == 1:  # to nearest even
        return np.round(x)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


# erf of float32 values (GELU's): a rational function of x * x (the numerator odd, the
# denominator even; the coefficients of Eigen's float erf, which XLA:CPU's float32 erf also
# starts from) evaluated in float64 and rounded once: within 1.6 ulp of the exact erf over
# [-6, 6] (XLA's own: 5.3 ulp), with no import of scipy.special (~0.2 s, a GPT's first step
# paid it). Other dtypes: scipy's.
_ERF_P = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
          -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
          -1.60960333262415e-02)
_ERF_Q = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
          -7.37332916720468e-03, -1.42647390514189e-02)


def _horner(coefficients, x):
    """np.polyval(coefficients, x) for a float64 array x, in one new array."""
    acc = np.full_like(x, coefficients[0])
    for c in coefficients[1:]:
        acc *= x
        acc += c
    return acc


@rule("erf")
def _erf(x, **_):
    if x.dtype == np.float32:
        w = x.astype(np.float64)
        np.clip(w, -4.0, 4.0, out=w)  # (erf is +-1 in float32 beyond)
        w2 = w * w
        # (Horner's rule in place: np.polyval makes a new array at each coefficient, and a
        # GPT's GELU (16 x 64 x 512) took 4.5 ms, in place 2.4, the same bits)
        num = _horner(_ERF_P, w2)
        num *= w
        num /= _horner(_ERF_Q, w2)
        return num.astype(np.float32)
    from scipy import special
    return special.erf(x)


@rule("erfc")
def _erfc(x, **_):
    from scipy import special
    return special.erfc(x)


@rule("erf_inv")
def _erf_inv(x, **_):
    from scipy import special
    return special.erfinv(x)


@rule("lgamma")
def _lgamma(x, **_):
    from scipy import special
    return np.where(x == -np.inf, np.inf, special.gammaln(x))  # (scipy: -inf there)


@rule("digamma")
def _digamma(x, **_):
    from scipy import special
    return special.digamma(x)
