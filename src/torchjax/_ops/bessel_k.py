"""Op-table rows: torch.special.modified_bessel_k0 and modified_bessel_k1, the modified Bessel
functions of the second kind of orders 0 and 1, and their scaled forms exp(x) K(x).

Computed in float64, in two ranges:
- below 2, the series K0 = -(log(x/2) + gamma) I0 + sum H_k q^k / (k!)^2 (q = x^2/4, H_k the
  harmonic numbers) and K1 from the Wronskian I0 K1 + I1 K0 = 1/x (all terms positive);
- from 2, the integral exp(x) K_n(x) = int_0^inf exp(-x (cosh t - 1)) cosh(n t) dt, which
  the substitution u = sqrt(2x) sinh(t/2) turns into int_0^inf exp(-u^2) g_n(u) du with
  g_0 = 2 / sqrt(2x + u^2) and g_1 = g_0 (1 + u^2/x): smooth, with no singularity within
  sqrt(2x) >= 2 of the real line, so the trapezoidal rule with step 0.2 is exact to double
  precision (its error is about exp(-2 pi sqrt(2x) / 0.2)) after 33 nodes.

As PyTorch's: nan for negative x, inf at 0, 0 at inf; float16 and bfloat16 raise; no
derivatives (results never require grad).
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from ._registry import op
from .special import _not_implemented_for

_FLAGS = dict(promote="float", function=False, method=False, namespace="torch.special",
              differentiable=False)

_EULER = 0.5772156649015329
_SERIES_BELOW = 2.0
_SERIES_TERMS = 25   # q^k / (k!)^2 < 1e-40 by k = 25 for q <= 1
_STEP = 0.2
_NODES = 33          # exp(-u^2) < 1e-19 past u = 6.4


def _series(x):
    """(K0, K1, I0) of 0 < x < 2."""
    q = (x / 2) ** 2
    term = jnp.ones_like(x)       # q^k / (k!)^2
    term1 = x / 2                 # (x/2) q^k / (k! (k+1)!)
    i0, i1 = term, term1
    harmonic = jnp.zeros_like(x)
    k0_sum = jnp.zeros_like(x)
    for k in range(1, _SERIES_TERMS):
        term = term * q / (k * k)
        term1 = term1 * q / (k * (k + 1))
        harmonic = harmonic + 1.0 / k
        i0, i1 = i0 + term, i1 + term1
        k0_sum = k0_sum + harmonic * term
    k0 = -(jnp.log(x / 2) + _EULER) * i0 + k0_sum
    k1 = (1 / x - i1 * k0) / i0
    return k0, k1


def scaled_k_integral(x, order):
    """exp(x) K_order(x) of x >= 2 (any real order) by the trapezoidal rule (see the
    docstring): cosh(order t) is 1 + u^2/x for order 1, else computed from t =
    2 asinh(u / sqrt(2x))."""
    total = jnp.zeros_like(x)
    root = jnp.sqrt(2 * x)
    for k in range(_NODES):
        u = k * _STEP
        weight = _STEP * math.exp(-u * u) * (0.5 if k == 0 else 1.0)
        # 2 / sqrt(2x + u^2), written so that a huge x does not overflow
        g = 2 / (root * jnp.sqrt(1 + u * u / (2 * x)))
        if order == 1:
            g = g * (1 + u * u / x)
        elif order != 0:
            g = g * jnp.cosh(order * 2 * jnp.arcsinh(u / root))
        total = total + weight * g
    return total


def _k(input, order, scaled):
    x = input.astype(jnp.float64)
    low = x < _SERIES_BELOW
    series = _series(jnp.where(low & (x > 0), x, 1.0))[order]
    far = jnp.where(low | ~jnp.isfinite(x), 3.0, x)
    integral = scaled_k_integral(far, order)
    if scaled:
        value = jnp.where(low, series * jnp.exp(jnp.where(low, x, 0.0)), integral)
    else:
        value = jnp.where(low, series, integral * jnp.exp(-far))
    value = jnp.where(x == 0, jnp.inf, jnp.where(x < 0, jnp.nan, value))
    value = jnp.where(jnp.isposinf(x), 0.0, jnp.where(jnp.isnan(x), jnp.nan, value))
    return value.astype(input.dtype)


def _row(name, order, scaled):
    def fn(input):
        if input.dtype in (jnp.float16, jnp.bfloat16):  # PyTorch has no half kernel
            raise _not_implemented_for(name + "_cpu", input.dtype)
        return _k(input, order, scaled)

    fn.__name__ = "special_" + name
    fn.__doc__ = (("exp(input) times the" if scaled else "The")
                  + f" modified Bessel function of the second kind of order {order}.")
    op(name="special_" + name, **_FLAGS)(fn)


_row("modified_bessel_k0", 0, False)
_row("modified_bessel_k1", 1, False)
_row("scaled_modified_bessel_k0", 0, True)
_row("scaled_modified_bessel_k1", 1, True)
