"""Op-table rows: torch.geqrf (and Tensor.geqrf), torch.linalg.householder_product with its
alias torch.orgqr (and Tensor.orgqr), torch.ormqr (and Tensor.ormqr): QR in LAPACK's compact
form (R above the diagonal, the Householder vectors below it, and their scalars tau) and the
products with Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^H.

geqrf is XLA's (LAPACK's geqrf on CPU, as PyTorch's), without a derivative as in PyTorch.
The products apply the reflectors one by one with JAX's arithmetic, so they are
differentiable in A, tau and other as PyTorch's are.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax._src.lax import linalg as _lax_linalg

from ._nograd import no_derivative
from ._registry import op
from .torch_linalg import _name

_no_geqrf_grad = no_derivative("the derivative for 'geqrf' is not implemented.",
                               NotImplementedError)


def _need_float(x, kernel):
    if not jnp.issubdtype(x.dtype, jnp.inexact) or x.dtype in (jnp.float16, jnp.bfloat16):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_name(x)}'")


@op(promote="none", out_names=("a", "tau"), grad="GeqrfBackward0", saves=())
def geqrf(input):
    """QR in LAPACK's compact form: (a, tau)."""
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _need_float(input, "geqrf_cpu")
    a, tau = _lax_linalg.geqrf(input)
    return _no_geqrf_grad(a, input), _no_geqrf_grad(tau, input)


def _reflector(A, i):
    """v_i: column i of A below the diagonal, 1 on it, 0 above."""
    m = A.shape[-2]
    col = A[..., :, i]
    rows = jnp.arange(m)
    return jnp.where(rows > i, col, jnp.where(rows == i, 1, 0).astype(A.dtype))


def _apply(A, tau, C, left, adjoint):
    """Q C, Q^H C (left) or C Q, C Q^H (right) for Q = H_1 ... H_k."""
    k = tau.shape[-1]
    forward = left == adjoint  # Q^H C and C Q take H_1 first
    for i in (range(k) if forward else reversed(range(k))):
        v = _reflector(A, i)
        t = tau[..., i, None, None]
        t = jnp.conj(t) if adjoint else t
        if left:  # H C = C - t v (v^H C)
            C = C - t * v[..., :, None] * jnp.sum(jnp.conj(v)[..., :, None] * C, -2,
                                                  keepdims=True)
        else:  # C H = C - t (C v) v^H
            C = C - t * jnp.sum(C * v[..., None, :], -1, keepdims=True) * jnp.conj(v)[
                ..., None, :]
    return C


def _householder_product(input, tau):
    f = "torch.linalg.householder_product"
    if input.ndim < 2:
        raise RuntimeError(f"{f}: input must have at least 2 dimensions.")
    m, n = input.shape[-2:]
    if m < n:
        raise RuntimeError(f"{f}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if n < tau.shape[-1]:
        raise RuntimeError(f"{f}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if tau.dtype != input.dtype:
        raise RuntimeError(f"{f}: tau dtype {_name(tau)} does not match input dtype "
                           f"{_name(input)}")
    _need_float(input, "orgqr_cpu")
    batch = jnp.broadcast_shapes(input.shape[:-2], tau.shape[:-1])
    eye = jnp.broadcast_to(jnp.eye(m, n, dtype=input.dtype), batch + (m, n))
    return _apply(input, tau, eye, True, False)


@op(tensors=("input", "tau"), promote="none", function=False, method=False,
    namespace="torch.linalg", grad="LinalgHouseholderProductBackward0")
def linalg_householder_product(input, tau):
    """The first n columns of Q = H_1 ... H_k from the Householder vectors and scalars."""
    return _householder_product(input, tau)


@op(tensors=("input", "input2"), promote="none", grad="LinalgHouseholderProductBackward0")
def orgqr(input, input2):
    """torch.linalg.householder_product(input, input2)."""
    return _householder_product(input, input2)


@op(tensors=("input", "input2", "input3"), promote="none", grad="OrmqrBackward0")
def ormqr(input, input2, input3, left=True, transpose=False):
    """input3 multiplied by Q (Q^H with transpose) from the left or the right."""
    m = input.shape[-2]
    if left and input3.shape[-2] != m:
        raise RuntimeError("torch.ormqr: other.shape[-2] must be equal to input.shape[-2]")
    if not left and input3.shape[-1] != m:
        raise RuntimeError("torch.ormqr: other.shape[-1] must be equal to input.shape[-2]")
    _need_float(input, "ormqr_cpu")
    return _apply(input, input2, input3, bool(left), bool(transpose))
