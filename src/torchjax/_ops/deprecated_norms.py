"""Op-table rows and composites: torch.frobenius_norm and torch.nuclear_norm, which PyTorch
keeps for TorchScript with a once-only deprecation warning, and torch.norm_except_dim (the
norm weight_norm takes, over every dim but one). frobenius_norm is the 2-norm
over at most two dims (linalg.vector_norm's function) under PyTorch's NormBackward1 node;
nuclear_norm the sum of the singular values over two dims, built from svdvals, sum and
movedim as PyTorch builds it (so its grad_fn is PyTorch's)."""

from __future__ import annotations

import warnings

import jax.numpy as jnp

from ._registry import OPS, function, op
from .torch_linalg import _name

_WARNED: set = set()


def _warn_once(name, replacement):
    if name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(f"at::{name} is deprecated and it is just left for JIT compatibility. It "
                      f"will be removed in a future PyTorch release. Please use "
                      f"`{replacement}` instead", UserWarning, stacklevel=4)


def _frobenius_checks(input, dim, **_):
    _warn_once("frobenius_norm", "linalg.vector_norm(A, 2., dim, keepdim)")


@op(promote="none", method=False, grad="NormBackward1", saves=("input", "result"),
    check=_frobenius_checks)
def frobenius_norm(input, dim, keepdim=False):
    """The 2-norm of input over the (at most two) dims in dim."""
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           f"instead.")
    if not jnp.issubdtype(input.dtype, jnp.inexact):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_name(input)} instead.")
    return OPS["linalg_vector_norm"].fn(input, 2, dims, keepdim)


@function(name="nuclear_norm", method=False)
def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """The sum of the singular values of the matrices in dims dim (the last two)."""
    from .. import linalg
    if out is not None:
        raise NotImplementedError("torch.nuclear_norm(out=...) is not supported by torchjax")
    _warn_once("nuclear_norm", "linalg.matrix_norm(A, 'nuc', dim, keepdim)")
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    d0, d1 = (-2, -1) if dim is None else tuple(dim)
    out = linalg.svdvals(input.movedim((d0, d1), (-2, -1))).sum(-1)
    if keepdim:
        out = out.unsqueeze(-1).unsqueeze(-1).movedim((-2, -1), (d0, d1))
    return out


@op(promote="none", function=False, method=False, grad="NormBackward0",
    saves=("input", "result"))
def _norm_all(input, p=2):
    """The p-norm of all of input (ATen's norm, as norm_except_dim(v, p, -1) reaches it)."""
    return OPS["linalg_vector_norm"].fn(input, p)


@function(name="norm_except_dim", method=False)
def norm_except_dim(v, pow=2, dim=0):
    """The pow-norm of v over every dim but `dim`, keeping size-1 dims (dim=-1: over all)."""
    from .._dispatch import call_op
    if dim == -1:
        return call_op("_norm_all", v, pow)
    n = v.dim()
    if dim == 0 or dim == n - 1:
        shape = [1] * n
        shape[dim] = v.shape[dim]
        rows = v.contiguous().view(v.shape[0], -1) if dim == 0 else \
            v.contiguous().view(-1, v.shape[-1])
        return rows.norm(pow, 1 if dim == 0 else 0).view(shape)
    # the other dims through dim 0, as PyTorch does
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)
