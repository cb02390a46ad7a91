"""Op-table rows: torch.cholesky_solve and torch.cholesky_inverse, the solve and the inverse
from a Cholesky factor (A = L L^H, or U^H U with upper=True).

The forward reads only the factor's triangle, as LAPACK's potrs/potri do. The backward is
PyTorch's formula (derivatives.yaml), which differentiates A = L L^H through the *whole*
factor: JAX's own derivative of a triangular solve keeps only the triangle, so the off-triangle
gradients would differ from PyTorch's. Hence a custom VJP.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from ._registry import op
from ._solve_checks import check_b_and_a
from .torch_linalg import (
    LinAlgError,
    _batch_prefix,
    _broadcast_batch,
    _concrete,
    _mH,
    _name,
    _singular_inv,
)


def _solve(B, L, upper):
    """A^-1 B from the factor's triangle: two triangular solves."""
    lower = not upper
    # A = L L^H: L Y = B, then L^H X = Y;  A = U^H U: U^H Y = B, then U X = Y
    Y = jax.lax.linalg.triangular_solve(L, B, left_side=True, lower=lower,
                                        transpose_a=upper, conjugate_a=upper)
    return jax.lax.linalg.triangular_solve(L, Y, left_side=True, lower=lower,
                                           transpose_a=lower, conjugate_a=lower)


def _factor_grad(L, S, upper):
    """PyTorch's gradient of the factor from the symmetrised term S: -L S (upper) or -S L."""
    return -(L @ S) if upper else -(S @ L)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _cholesky_solve(B, L, upper):
    return _solve(B, L, upper)


def _cholesky_solve_fwd(B, L, upper):
    X = _solve(B, L, upper)
    return X, (L, X)


def _cholesky_solve_bwd(upper, res, G):
    L, X = res
    gB = _cholesky_solve(G, L, upper)
    C = gB @ _mH(X)
    return gB, _factor_grad(L, C + _mH(C), upper)


_cholesky_solve.defvjp(_cholesky_solve_fwd, _cholesky_solve_bwd)


def _need_float(x, kernel):
    dt = jnp.dtype(x.dtype)
    if not jnp.issubdtype(dt, jnp.inexact) or dt in (jnp.dtype(jnp.float16),
                                                     jnp.dtype(jnp.bfloat16)):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_name(x)}'")


@op(tensors=("input", "input2"), promote="none", grad="CholeskySolveBackward0",
    saves=("input2", "result"))
def cholesky_solve(input, input2, upper=False):
    """X with A X = input, A = input2 input2^H (or input2^H input2 when upper)."""
    for x, arg in ((input, "b"), (input2, "u")):
        if x.ndim < 2:
            raise RuntimeError(f"{arg} should have at least 2 dimensions, but has {x.ndim} "
                               f"dimensions instead")
    check_b_and_a("cholesky_solve", input, input2)
    _need_float(input, "cholesky_solve_cpu")
    L, B = _broadcast_batch(input2, input)
    return _cholesky_solve(B, L, bool(upper))


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def _cholesky_inverse(L, upper):
    eye = jnp.broadcast_to(jnp.eye(L.shape[-1], dtype=L.dtype), L.shape)
    return _solve(eye, L, upper)


def _cholesky_inverse_fwd(L, upper):
    inv = _cholesky_inverse(L, upper)
    return inv, (L, inv)


def _cholesky_inverse_bwd(upper, res, G):
    L, inv = res
    return (_factor_grad(L, inv @ (G + _mH(G)) @ inv, upper),)


_cholesky_inverse.defvjp(_cholesky_inverse_fwd, _cholesky_inverse_bwd)


def _check_zero_diagonal(input, upper=False, **_):
    """PyTorch's LinAlgError for a factor with a zero on its diagonal (potri's info)."""
    data = getattr(input, "_data", None)
    if data is None or data.ndim < 2 or data.shape[-1] != data.shape[-2] \
            or not _concrete(input) or not jnp.issubdtype(data.dtype, jnp.inexact):
        return  # the row reports the wrong shapes and dtypes
    diag = np.diagonal(np.asarray(data), axis1=-2, axis2=-1)
    zero = (diag == 0).reshape(-1, diag.shape[-1]) if diag.size else np.zeros((0, 0), bool)
    bad = np.flatnonzero(zero.any(-1))
    if bad.size:
        k = int(bad[0])
        info = np.zeros(diag.shape[:-1])
        raise LinAlgError("cholesky_inverse: " + _batch_prefix(info, k)
                          + _singular_inv(int(np.argmax(zero[k])) + 1))


@op(promote="none", grad="CholeskyInverseBackward0", saves=("input", "result"),
    check=_check_zero_diagonal)
def cholesky_inverse(input, upper=False):
    """A^-1 for A = input input^H (or input^H input when upper)."""
    if input.ndim < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 "
                           "dimensions.")
    n, m = input.shape[-2:]
    if n != m:
        raise RuntimeError(f"cholesky_inverse: A must be batches of square matrices, but they "
                           f"are {n} by {m} matrices")
    _need_float(input, "cholesky_inverse_out_cpu")
    return _cholesky_inverse(input, bool(upper))
