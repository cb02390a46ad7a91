"""Op-table rows: torch.special's orthogonal polynomials, chebyshev_polynomial_t/u/v/w,
shifted_chebyshev_polynomial_t/u/v/w, hermite_polynomial_h/he, laguerre_polynomial_l and
legendre_polynomial_p, each of (input, n) elementwise with n truncated to an integer.

As PyTorch's kernels: a negative n gives 0, the three-term recurrence runs up to each
element's n (a while loop to the largest n, each element stopping at its own), and the
Chebyshev kinds take their closed trigonometric forms for large n inside (-1, 1) and exact
values at the ends. PyTorch has no derivative for them: the results never require grad.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._registry import op

_FLAGS = dict(tensors=("input", "n"), promote="float", function=False, method=False,
              namespace="torch.special", differentiable=False)


def _recur(x, n, p0, p1, step):
    """P_n(x) for P_0 = p0, P_1 = p1 and P_k = step(k, P_{k-1}, P_{k-2}), per element."""
    n = jnp.broadcast_to(n, x.shape)
    top = jnp.max(n, initial=1)

    def cond(state):
        return state[0] <= top

    def body(state):
        k, p, q = state
        r = step(k, q, p)
        live = k <= n
        return k + 1, jnp.where(live, q, p), jnp.where(live, r, q)

    _, _, q = jax.lax.while_loop(cond, body, (jnp.asarray(2, n.dtype), p0, p1))
    return jnp.where(n == 0, p0, q)


def _prepare(input, n):
    dt = input.dtype
    x = input
    n = jnp.trunc(n).astype(jnp.int64) if jnp.issubdtype(jnp.asarray(n).dtype, jnp.floating) \
        else jnp.asarray(n, jnp.int64)
    n = jnp.broadcast_to(n, jnp.broadcast_shapes(x.shape, n.shape))
    x = jnp.broadcast_to(x, n.shape)
    return x, n, dt


def _even(n):
    return n % 2 == 0


def _chebyshev(x, n, kind):
    """The Chebyshev polynomial of the first to fourth kind (t, u, v, w) at x."""
    one = jnp.ones_like(x)
    two_x = x + x
    first = {"t": x, "u": two_x, "v": two_x - 1, "w": two_x + 1}[kind]
    rec = _recur(x, n, one, first, lambda k, q, p: two_x * q - p)
    theta = jnp.arccos(jnp.clip(x, -1, 1))
    nf = n.astype(x.dtype)
    inside = jnp.abs(x) < 1
    sign = jnp.where(_even(n), 1, -1).astype(x.dtype)
    if kind == "t":
        closed = jnp.cos(nf * theta)
        large = (n > 6) & inside
        ends = jnp.where(x > 0, one, sign)
    elif kind == "u":
        s = jnp.sin(theta)
        closed = jnp.where(s != 0, jnp.sin((nf + 1) * theta) / jnp.where(s != 0, s, 1),
                           (nf + 1) * jnp.cos((nf + 1) * theta) * x)
        large = (n > 8) & inside
        ends = jnp.where(x > 0, nf + 1, sign * (nf + 1))
    elif kind == "v":
        c = jnp.cos(theta / 2)
        closed = jnp.where(jnp.sin(theta / 2) != 1,
                           jnp.cos((nf + 0.5) * theta) / jnp.where(c != 0, c, 1),
                           sign * (nf + nf + 1))
        large = (n > 8) & inside
        ends = jnp.where(x > 0, one, sign * (nf + nf + 1))
    else:
        s = jnp.sin(theta / 2)
        closed = jnp.where(jnp.cos(theta / 2) != 1,
                           jnp.sin((nf + 0.5) * theta) / jnp.where(s != 0, s, 1),
                           jnp.where(x > 0, nf + nf + 1, sign))
        large = (n > 8) & inside
        ends = jnp.where(x > 0, nf + nf + 1, sign)
    out = jnp.where(large, closed, rec)
    out = jnp.where(jnp.abs(x) == 1, ends, out)
    return jnp.where(n < 0, 0, out)


def _chebyshev_row(kind):
    def fn(input, n):
        x, n, dt = _prepare(input, n)
        return _chebyshev(x, n, kind).astype(dt)
    fn.__name__ = f"special_chebyshev_polynomial_{kind}"
    fn.__doc__ = f"The Chebyshev polynomial of the {'tuvw'.index(kind) + 1}. kind, degree n."
    op(name=fn.__name__, **_FLAGS)(fn)


def _shifted_row(kind):
    def fn(input, n):
        # T*_n(x) = T_n(2x - 1): the ends of [0, 1] map to those of [-1, 1]
        x, n, dt = _prepare(input, n)
        return _chebyshev(x + x - 1, n, kind).astype(dt)
    fn.__name__ = f"special_shifted_chebyshev_polynomial_{kind}"
    fn.__doc__ = f"The shifted Chebyshev polynomial of the {'tuvw'.index(kind) + 1}. kind on " \
                 f"[0, 1], degree n."
    op(name=fn.__name__, **_FLAGS)(fn)


for _kind in "tuvw":
    _chebyshev_row(_kind)
    _shifted_row(_kind)


@op(name="special_hermite_polynomial_h", **_FLAGS)
def _hermite_h(input, n):
    """The physicists' Hermite polynomial H_n(x)."""
    x, n, dt = _prepare(input, n)
    out = _recur(x, n, jnp.ones_like(x), x + x,
                 lambda k, q, p: (x + x) * q - 2 * (k - 1).astype(x.dtype) * p)
    return jnp.where(n < 0, 0, out).astype(dt)


@op(name="special_hermite_polynomial_he", **_FLAGS)
def _hermite_he(input, n):
    """The probabilists' Hermite polynomial He_n(x)."""
    x, n, dt = _prepare(input, n)
    out = _recur(x, n, jnp.ones_like(x), x, lambda k, q, p: x * q - (k - 1).astype(x.dtype) * p)
    return jnp.where(n < 0, 0, out).astype(dt)


@op(name="special_laguerre_polynomial_l", **_FLAGS)
def _laguerre(input, n):
    """The Laguerre polynomial L_n(x)."""
    x, n, dt = _prepare(input, n)
    one = jnp.ones_like(x)

    def step(k, q, p):
        m = (k - 1).astype(x.dtype)
        return ((m + m + (1 - x)) * q - m * p) / (m + 1)
    out = _recur(x, n, one, 1 - x, step)
    out = jnp.where(x == 0, one, out)
    return jnp.where(n < 0, 0, out).astype(dt)


@op(name="special_legendre_polynomial_p", **_FLAGS)
def _legendre(input, n):
    """The Legendre polynomial P_n(x)."""
    x, n, dt = _prepare(input, n)
    one = jnp.ones_like(x)

    def step(k, q, p):
        m = (k - 1).astype(x.dtype)
        return ((m + m + 1) * x * q - m * p) / (m + 1)
    out = _recur(x, n, one, x, step)
    ends = jnp.where((x > 0) | _even(n), one, -one)
    out = jnp.where(jnp.abs(x) == 1, ends, out)
    return jnp.where(n < 0, 0, out).astype(dt)
