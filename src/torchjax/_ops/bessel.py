"""Op-table rows: torch.special.modified_bessel_i0 / modified_bessel_i1 (the modified Bessel
functions of the first kind, as JAX's i0 and i1) and spherical_bessel_j0 (sin(x) / x). Like
PyTorch's, these special.* forms are not differentiable (torch.i0 and special.i1 are)."""

from __future__ import annotations

import jax.numpy as jnp
import jax.scipy.special as jss

from ._registry import op

_FLAGS = dict(promote="float", function=False, method=False, namespace="torch.special",
              differentiable=False)


@op(name="special_modified_bessel_i0", **_FLAGS)
def _modified_bessel_i0(input):
    """The modified Bessel function of the first kind of order 0."""
    return jss.i0(input)


@op(name="special_modified_bessel_i1", **_FLAGS)
def _modified_bessel_i1(input):
    """The modified Bessel function of the first kind of order 1."""
    return jss.i1(input)


@op(name="special_spherical_bessel_j0", **_FLAGS)
def _spherical_bessel_j0(input):
    """The spherical Bessel function of the first kind of order 0: sin(x) / x, 1 at 0."""
    x = input
    small = jnp.abs(x) < 0.5
    # the Taylor series near 0, where sin(x) / x loses digits
    x2 = x * x
    series = 1 - x2 / 6 * (1 - x2 / 20 * (1 - x2 / 42 * (1 - x2 / 72 * (1 - x2 / 110 * (
        1 - x2 / 156)))))
    safe = jnp.where(small, 1, x)
    out = jnp.where(small, series, jnp.sin(safe) / safe)
    return jnp.where(jnp.isinf(x), 0, out).astype(input.dtype)
