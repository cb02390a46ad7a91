"""Op-table rows: torch.igamma and torch.igammac (Tensor.igamma/igamma_/igammac/igammac_,
torch.special.gammainc/gammaincc): the regularized lower and upper incomplete gamma functions
P(input, other) and Q(input, other) = 1 - P.

PyTorch differentiates them in `other` only; a gradient reaching `input` raises its
NotImplementedError when backward gets there (torchjax differentiates a row only in the
inputs that require grad, so a gradient for `other` alone never meets the error).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jss

from ._registry import op
from .special import _not_implemented_for

_BIN = ("input", "other")


def _no_input_derivative(name):
    @jax.custom_vjp
    def tie(a):
        return jnp.zeros_like(a)

    def fwd(a):
        return tie(a), None

    def bwd(_, ct):
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")

    tie.defvjp(fwd, bwd)
    return tie


_tie_igamma = _no_input_derivative("igamma")
_tie_igammac = _no_input_derivative("igammac")


def _incomplete(kernel, f, tie, input, other):
    for x in (input, other):
        if not jnp.issubdtype(x.dtype, jnp.floating):
            raise _not_implemented_for(kernel, x.dtype)
    dt = input.dtype
    # half types compute in float32, PyTorch's opmath for them, and round once
    ct = jnp.float32 if dt in (jnp.float16, jnp.bfloat16) else dt
    a = jnp.broadcast_to(input, jnp.broadcast_shapes(input.shape, other.shape)).astype(ct)
    out = f(jax.lax.stop_gradient(a), other.astype(ct)) + tie(a)
    return out.astype(dt)


@op(tensors=_BIN, inplace=True)
def igamma(input, other):
    """The regularized lower incomplete gamma function P(input, other)."""
    return _incomplete("igamma_cpu", jss.gammainc, _tie_igamma, input, other)


@op(tensors=_BIN, inplace=True)
def igammac(input, other):
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P."""
    return _incomplete("igammac_cpu", jss.gammaincc, _tie_igammac, input, other)
