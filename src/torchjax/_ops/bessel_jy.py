"""Op-table rows: torch.special.bessel_j0, bessel_j1, bessel_y0 and bessel_y1, the Bessel
functions of the first and second kind of orders 0 and 1.

JAX has no accurate kernels for them (jax.scipy.special.bessel_jn loses all digits past
x ~ 20), so they are computed here in float64, in three ranges of |x|:
- below 8, the power series in (x/2)^2, whose terms stay below ~1e2 (few digits cancel);
- from 8 to 25, J_n by the downward recurrence J_{n-1} = (2n/x) J_n - J_{n+1} from order 64
  (stable downwards), normalised by J_0 + 2 sum J_2k = 1; Y_0 by Neumann's series
  (2/pi) ((log(x/2) + gamma) J_0 - 2 sum (-1)^k J_2k / k) and Y_1 = -Y_0' from the same J_n;
- from 25, Hankel's asymptotic expansion, whose smallest term is about exp(-2x).
The results agree with SciPy's to ~1e-14. PyTorch's own kernels are less accurate near
x = 5, where they switch approximations (errors up to ~1e-6).

As PyTorch's: J_0 is even and J_1 odd; Y of a negative number is nan and of 0 is -inf; an
infinite input gives nan; float16 and bfloat16 raise; no derivatives (results never require
grad).
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from ._registry import op
from .special import _not_implemented_for

_FLAGS = dict(promote="float", function=False, method=False, namespace="torch.special",
              differentiable=False)

_EULER = 0.5772156649015329
_SERIES_BELOW = 8.0
_ASYMPTOTIC_FROM = 25.0
_TOP_ORDER = 64      # well above 25 + the ~30 orders the recurrence needs to settle
_SERIES_TERMS = 40   # (x/2)^2k / (k!)^2 < 1e-17 by k = 40 for x < 8
_HANKEL_TERMS = 30   # the terms still shrink past k = 30 for x >= 25


def _power_series(x):
    """(J0, J1, Y0, Y1) of x > 0 by their series in q = (x/2)^2, with the harmonic numbers
    H_k in Y's: Y0 = (2/pi) ((log(x/2) + gamma) J0 - sum (-q)^k H_k / (k!)^2) and
    Y1 = -2/(pi x) + (2/pi) log(x/2) J1 - (1/pi) sum (psi(k+1) + psi(k+2)) (x/2)(-q)^k /
    (k! (k+1)!)."""
    q = (x / 2) ** 2
    t0, t1 = jnp.ones_like(x), x / 2   # the k-th terms of J0 and J1
    j0, j1 = t0, t1
    harmonic = jnp.zeros_like(x)
    y0_sum = jnp.zeros_like(x)
    y1_sum = (1 - 2 * _EULER) * t1     # psi(1) + psi(2) = 1 - 2 gamma
    for k in range(1, _SERIES_TERMS):
        t0 = -t0 * q / (k * k)
        t1 = -t1 * q / (k * (k + 1))
        harmonic = harmonic + 1.0 / k
        j0, j1 = j0 + t0, j1 + t1
        y0_sum = y0_sum - harmonic * t0
        y1_sum = y1_sum + (2 * harmonic + 1.0 / (k + 1) - 2 * _EULER) * t1
    log = jnp.log(x / 2)
    y0 = (2 / math.pi) * ((log + _EULER) * j0 + y0_sum)
    y1 = -2 / (math.pi * x) + (2 / math.pi) * log * j1 - y1_sum / math.pi
    return j0, j1, y0, y1


def _recurrence(x):
    """(J0, J1, Y0, Y1) of x in [8, 25) from the downward recurrence (see the docstring)."""
    after, j = jnp.zeros_like(x), jnp.full_like(x, 1e-300)  # J_{n+1}, J_n up to a factor
    even = jnp.zeros_like(x)        # sum_{k>=1} J_2k
    neumann = jnp.zeros_like(x)     # sum_{k>=1} (-1)^k J_2k / k
    slope = jnp.zeros_like(x)       # its derivative, sum (-1)^k (J_{2k-1} - J_{2k+1}) / (2k)
    for n in range(_TOP_ORDER, 0, -1):
        if n % 2 == 0:
            even = even + j
            neumann = neumann + (-1) ** (n // 2) * j / (n // 2)
        else:  # J_n with n = 2m - 1 enters the derivative's terms k = m and k = m - 1
            m = (n + 1) // 2
            weight = 1 / (2 * m) + (1 / (2 * (m - 1)) if m > 1 else 0.0)
            slope = slope + (-1) ** m * weight * j
        after, j = j, (2 * n / x) * j - after
    scale = j + 2 * even
    j0, j1 = j / scale, after / scale
    log = jnp.log(x / 2) + _EULER
    y0 = (2 / math.pi) * (log * j0 - 2 * neumann / scale)
    y1 = -(2 / math.pi) * (j0 / x - log * j1 - 2 * slope / scale)
    return j0, j1, y0, y1


def _hankel(x, order):
    """(J, Y) of order 0 or 1 for x >= 25: sqrt(2/(pi x)) (P cos chi - Q sin chi) and
    (P sin chi + Q cos chi), chi = x - (order/2 + 1/4) pi, P and Q the even and odd terms
    of sum (-1)^floor(k/2) a_k with a_k = a_{k-1} (4 order^2 - (2k-1)^2) / (8 k x)."""
    mu = 4.0 * order * order
    a = jnp.ones_like(x)
    p, q = a, jnp.zeros_like(x)
    for k in range(1, _HANKEL_TERMS):
        a = a * (mu - (2 * k - 1) ** 2) / (8 * k * x)
        if k % 2 == 0:
            p = p + (-1) ** (k // 2) * a
        else:
            q = q + (-1) ** (k // 2) * a
    # cos and sin of x - pi/4 (order 0) or x - 3pi/4 (order 1) from those of x, which keeps
    # the digits a subtraction from a large x would lose
    s, c = jnp.sin(x) * math.sqrt(0.5), jnp.cos(x) * math.sqrt(0.5)
    cos_chi, sin_chi = (c + s, s - c) if order == 0 else (s - c, -(s + c))
    amplitude = jnp.sqrt(2 / (math.pi * x))
    return amplitude * (p * cos_chi - q * sin_chi), amplitude * (p * sin_chi + q * cos_chi)


def _bessel(input):
    """(J0, J1, Y0, Y1) of |input| in float64, each range on inputs it is valid for."""
    ax = jnp.abs(input.astype(jnp.float64))
    low = ax < _SERIES_BELOW
    high = ax >= _ASYMPTOTIC_FROM
    series = _power_series(jnp.where(low & (ax > 0), ax, 1.0))
    middle = _recurrence(jnp.where(low | high, 10.0, ax))
    far = jnp.where(high & jnp.isfinite(ax), ax, 30.0)
    (j0, y0), (j1, y1) = _hankel(far, 0), _hankel(far, 1)
    out = []
    for a, b, c in zip(series, middle, (j0, j1, y0, y1)):
        out.append(jnp.where(low, a, jnp.where(high, c, b)))
    return out


def _finish(input, value, odd=False, second_kind=False):
    x = input.astype(jnp.float64)
    if odd:  # J1(-x) = -J1(x), -0.0 at -0.0
        value = jnp.where(jnp.signbit(x), -value, value)
    if second_kind:
        value = jnp.where(x == 0, -jnp.inf, jnp.where(x < 0, jnp.nan, value))
    else:  # J0(0) = 1; J1(0) = 0 with the sign of the zero
        value = jnp.where(x == 0, x if odd else 1.0, value)
    value = jnp.where(jnp.isinf(x) | jnp.isnan(x), jnp.nan, value)
    return value.astype(input.dtype)


def _row(name, pick, **finish):
    def fn(input):
        if input.dtype in (jnp.float16, jnp.bfloat16):  # PyTorch has no half kernel
            raise _not_implemented_for(name + "_cpu", input.dtype)
        return _finish(input, _bessel(input)[pick], **finish)

    fn.__name__ = "special_" + name
    fn.__doc__ = {
        "bessel_j0": "The Bessel function of the first kind of order 0.",
        "bessel_j1": "The Bessel function of the first kind of order 1.",
        "bessel_y0": "The Bessel function of the second kind of order 0.",
        "bessel_y1": "The Bessel function of the second kind of order 1.",
    }[name]
    op(name="special_" + name, **_FLAGS)(fn)


_row("bessel_j0", 0)
_row("bessel_j1", 1, odd=True)
_row("bessel_y0", 2, second_kind=True)
_row("bessel_y1", 3, second_kind=True)
