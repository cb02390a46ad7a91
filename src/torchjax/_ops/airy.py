"""Op-table row: torch.special.airy_ai, the Airy function Ai, computed in float64 in three
ranges:
- from -7.5 to 2, its Maclaurin series Ai(0) f(x) + Ai'(0) g(x), f and g the series in x^3
  (at -7.5 the alternating terms cancel about 4 digits: errors stay below ~1e-11);
- above 2, Ai(x) = sqrt(x/3) K_{1/3}(z) / pi with z = (2/3) x^(3/2), K_{1/3} by bessel_k's
  trapezoidal rule; past x ~ 104 the result underflows to 0, as PyTorch's does;
- below -7.5, the oscillating asymptotic expansion
  Ai(-x) ~ (sin(z + pi/4) P - cos(z + pi/4) Q) / (sqrt(pi) x^(1/4)), P and Q the even and
  odd terms of sum (-1)^floor(k/2) u_k / z^k, summed while they shrink.
As PyTorch's: nan for infinite inputs, float16 and bfloat16 raise, no derivative.
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from ._registry import op
from .bessel_k import scaled_k_integral
from .special import _not_implemented_for

_AI0 = 1 / (3 ** (2 / 3) * math.gamma(2 / 3))    # Ai(0)
_DAI0 = -1 / (3 ** (1 / 3) * math.gamma(1 / 3))  # Ai'(0)
_SERIES_FROM, _SERIES_BELOW = -7.5, 2.0
_SERIES_TERMS = 40
_ASYMPTOTIC_TERMS = 40


def _asymptotic_coefficients(n):
    """u_k = (2k+1)(2k+3)...(6k-1) / (216^k k!), k < n."""
    out = [1.0]
    for k in range(1, n):
        odd = math.prod(range(2 * k + 1, 6 * k, 2))
        out.append(odd / (216 ** k * math.factorial(k)))
    return out


_U = _asymptotic_coefficients(_ASYMPTOTIC_TERMS)


def _maclaurin(x):
    x3 = x ** 3
    f_term, g_term = jnp.ones_like(x), x
    f, g = f_term, g_term
    for k in range(1, _SERIES_TERMS):
        f_term = f_term * x3 / ((3 * k) * (3 * k - 1))
        g_term = g_term * x3 / ((3 * k) * (3 * k + 1))
        f, g = f + f_term, g + g_term
    return _AI0 * f + _DAI0 * g


def _positive(x):
    z = (2 / 3) * x ** 1.5
    return jnp.sqrt(x / 3) / math.pi * scaled_k_integral(z, 1 / 3) * jnp.exp(-z)


def _negative(x):
    """Ai(-x) for x > 7.5."""
    z = (2 / 3) * x ** 1.5
    p, q = jnp.zeros_like(x), jnp.zeros_like(x)
    term = jnp.ones_like(x)
    shrinking = jnp.ones(x.shape, bool)
    for k in range(_ASYMPTOTIC_TERMS):
        if k:
            nxt = term * (_U[k] / _U[k - 1]) / z
            shrinking = shrinking & (nxt < term)
            term = nxt
        signed = jnp.where(shrinking, (-1) ** (k // 2) * term, 0.0)
        if k % 2 == 0:
            p = p + signed
        else:
            q = q + signed
    phase = z + math.pi / 4
    return (jnp.sin(phase) * p - jnp.cos(phase) * q) / (math.sqrt(math.pi) * x ** 0.25)


@op(name="special_airy_ai", promote="float", function=False, method=False,
    namespace="torch.special", differentiable=False)
def _airy_ai(input):
    """The Airy function Ai."""
    if input.dtype in (jnp.float16, jnp.bfloat16):  # PyTorch has no half kernel
        raise _not_implemented_for("airy_ai_cpu", input.dtype)
    x = input.astype(jnp.float64)
    series = (x >= _SERIES_FROM) & (x < _SERIES_BELOW)
    above = x >= _SERIES_BELOW
    out = jnp.where(series, _maclaurin(jnp.where(series, x, 0.0)),
                    jnp.where(above, _positive(jnp.where(above & jnp.isfinite(x), x, 3.0)),
                              _negative(jnp.where(x < _SERIES_FROM, -x, 8.0))))
    out = jnp.where(jnp.isinf(x) | jnp.isnan(x), jnp.nan, out)
    return out.astype(input.dtype)
