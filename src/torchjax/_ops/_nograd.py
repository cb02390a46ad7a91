"""Identities whose backward raises PyTorch's error for an op it cannot differentiate."""

from __future__ import annotations

import jax


def no_derivative(message: str, exc: type = RuntimeError):
    """An identity whose backward raises exc(message) (e.g. "derivative for aten::heaviside is
    not implemented"). The error comes while the backward is traced, that is when backward()
    reaches the op, as in PyTorch; a forward nobody differentiates is unaffected."""

    @jax.custom_vjp
    def ident(x):
        return x

    def bwd(_, ct):
        raise exc(message)

    ident.defvjp(lambda x: (x, None), bwd)
    return ident
