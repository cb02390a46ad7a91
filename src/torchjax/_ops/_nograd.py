"""Identities whose backward raises PyTorch's error for an op it cannot differentiate."""

from __future__ import annotations

import jax


def no_derivative(message: str, exc: type = RuntimeError):
    """An identity whose backward raises exc(message) (e.g. "derivative for aten::heaviside is
    not implemented"). The error comes while the backward is traced, that is when backward()
    reaches the op, as in PyTorch; a forward nobody differentiates is unaffected.

    ident(out, *inputs): when out is a step function of the inputs (floor, heaviside) JAX
    knows its derivative is zero and would never call the backward; passing the op's inputs
    ties them to it, so the backward runs whenever gradients flow back to them."""

    @jax.custom_vjp
    def ident(x, *inputs):
        return x

    def fwd(x, *inputs):
        return x, None

    def bwd(_, ct):
        raise exc(message)

    ident.defvjp(fwd, bwd)

    def call(x, *inputs):
        return ident(x, *(a for a in inputs if hasattr(a, "dtype")))

    return call
