"""torchjax.nn.utils.parametrizations: orthogonal, weight_norm and spectral_norm as
parametrizations (see nn.utils.parametrize)."""

from __future__ import annotations

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

from enum import Enum, auto

import jax
import jax.numpy as jnp
import numpy as np

from ... import _creation, linalg
from ..._autograd.grad_mode import no_grad
from ..._tensor import Tensor
from ...autograd.function import Function
from .. import functional as F
from ..modules.module import Module
from . import parametrize


def _is_orthogonal(Q) -> bool:
    from ... import allclose, finfo
    n, k = Q.size(-2), Q.size(-1)
    eye = _creation.eye(k, dtype=Q.dtype, device=Q.device)
    eps = 10.0 * n * finfo(Q.dtype).eps
    return allclose(Q.mH @ Q, eye, atol=eps)


def _make_orthogonal(A):
    """The Q of A = QR with R's diagonal made positive (unique, whatever QR's sign
    convention)."""
    Q, R = linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _householder_product_jnp(A, tau):
    """LAPACK's orgqr: the first k columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H, with v_i
    column i of A below the diagonal and 1 on it."""
    n, k = A.shape[-2], A.shape[-1]
    V = jnp.tril(A, -1) + jnp.eye(n, k, dtype=A.dtype)
    Q = jnp.broadcast_to(jnp.eye(n, dtype=A.dtype), (*A.shape[:-2], n, n))
    for i in range(k):
        v = V[..., :, i:i + 1]
        Q = Q - (Q @ v) * tau[..., i, None, None] * jnp.conj(jnp.swapaxes(v, -1, -2))
    return Q[..., :k]


_householder_fwd = jax.jit(lambda A, tau: jax.vjp(_householder_product_jnp, A, tau))
_apply_vjp = jax.jit(lambda vjp, ct: vjp(ct))


class LinalgHouseholderProduct(Function):
    """torch.linalg.householder_product as one autograd node (one compiled program per shape
    rather than a chain of small ops)."""

    @staticmethod
    def forward(ctx, A, tau):
        out, ctx.vjp = _householder_fwd(A._data, tau._data)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        grad_A, grad_tau = _apply_vjp(ctx.vjp, grad._data)
        return Tensor._wrap(grad_A), Tensor._wrap(grad_tau)


def _geqrf(A: np.ndarray):
    """LAPACK's geqrf for a real (n, k) matrix, n >= k: R on and above the diagonal, the
    Householder vectors below it, and their scales tau."""
    A = A.copy()
    n, k = A.shape
    tau = np.zeros(k, A.dtype)
    for j in range(k):
        alpha = A[j, j]
        xnorm = np.linalg.norm(A[j + 1:, j])
        if xnorm == 0:
            continue  # no reflection needed: tau = 0
        beta = -np.copysign(np.hypot(alpha, xnorm), alpha)
        tau[j] = (beta - alpha) / beta
        A[j + 1:, j] /= alpha - beta
        A[j, j] = beta
        v = np.concatenate([[1.0], A[j + 1:, j]])
        A[j:, j + 1:] -= tau[j] * np.outer(v, v @ A[j:, j + 1:])
    return A, tau


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map: _OrthMaps, *, use_trivialization=True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                from ... import cat
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                from ... import matrix_exp
                Q = matrix_exp(A)
            else:
                eye = _creation.eye(n, dtype=A.dtype, device=A.device)
                Q = linalg.solve(eye.add(A, alpha=-0.5), eye.add(A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = LinalgHouseholderProduct.apply(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            return self._householder_inverse(Q, transpose)
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            from ... import cat, randn
            N = randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        # -I: the trivialization starts at the identity, so the weight is `base` itself
        neg_id = _creation.zeros_like(Q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id

    @staticmethod
    def _householder_inverse(Q, transpose: bool):
        """geqrf(Q) with the diagonal replaced by the signs forward multiplies back in."""
        q = np.asarray(Q._data)
        batch = q.shape[:-2]
        out = np.empty_like(q)
        for idx in np.ndindex(*batch):
            A, tau = _geqrf(q[idx])
            d = np.sign(np.diagonal(A))
            # tau = 0 is no reflection in LAPACK, but forward's tau is never 0: flip the sign
            d[tau == 0.0] *= -1
            np.fill_diagonal(A, d)
            out[idx] = A
        A = _creation.tensor(out, dtype=Q.dtype, device=Q.device)
        return A.mT if transpose else A


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Make module.<name> an orthogonal (or semi-orthogonal) matrix or batch of matrices:
    orthogonal_map "matrix_exp", "cayley" or "householder" (default: matrix_exp for square
    or complex matrices, householder otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1)
                          or weight.is_complex() else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


def _norm_except_dim(v, dim: int):
    """torch.norm_except_dim(v, 2, dim): the 2-norm over every dim but dim (kept as size 1);
    dim=-1 means over all of v (a 0-d result)."""
    if dim == -1:
        return linalg.vector_norm(v)
    d = dim % v.dim()
    others = [i for i in range(v.dim()) if i != d]
    if not others:
        return v.abs()
    return linalg.vector_norm(v, 2, dim=others, keepdim=True)


def _weight_norm(v, g, dim: int):
    """torch._weight_norm: v scaled so each slice along dim has norm g."""
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0):
    """Reparametrize module.<name> as g * v / ||v|| (norms over all dims but dim; dim=None:
    over the whole tensor): original0 is g, original1 is v."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs) -> None:
        # checkpoints of the old hook-based weight_norm name g and v <name>_g and <name>_v
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # start from good estimates of the singular vectors
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations: int) -> None:
        """Refine _u and _v (in place) towards the top singular vectors of weight_mat."""
        from ... import mv
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(mv(weight_mat.H, self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        from ... import mv, vdot
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # copies: later power iterations must not change what this result's gradient uses
        u = self._u.clone()
        v = self._v.clone()
        sigma = vdot(u, mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide module.<name> by its spectral norm, estimated by power iteration (one step per
    forward in training mode, none in eval mode)."""
    from ..modules import conv
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        transposed = tuple(getattr(conv, c) for c in ("ConvTranspose1d", "ConvTranspose2d",
                                                      "ConvTranspose3d") if hasattr(conv, c))
        dim = 1 if isinstance(module, transposed) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module

