"""Samples for the rows in _ops/torch_linalg.py and _ops/linalg_{factorizations,norms,pinv,products}.py."""

import numpy as np

from .harness import Const, S, make, own_make, raises

# a sample added later draws from its own generator: the others keep their arrays
_m = own_make(202)


def sq(*shape, dtype="float32"):
    """Well-conditioned square matrices: random plus n on the diagonal."""
    n = shape[-1]
    return (make(*shape, low=-1, high=1) + n * np.eye(n)).astype(dtype)


def spd(*shape, dtype="float32"):
    """Symmetric positive-definite matrices with well-separated eigenvalues."""
    n = shape[-1]
    a = make(*shape, low=-1, high=1)
    d = np.diag(np.arange(1, n + 1) * 1.5 + 0.5)
    return (a @ np.swapaxes(a, -1, -2) * 0.2 + d).astype(dtype)


def sym(lib, a):
    """A symmetric function of every entry, so finite differences see what LAPACK reads."""
    return (a + a.mT) / 2


def distinct(m, n, *batch, dtype="float32"):
    """Matrices with well-separated singular values."""
    k = min(m, n)
    u = np.linalg.qr(make(*batch, m, m))[0]
    v = np.linalg.qr(make(*batch, n, n))[0]
    s = np.zeros((*batch, m, n))
    idx = np.arange(k)
    s[..., idx, idx] = np.arange(k, 0, -1) * 1.3 + 0.4
    return (u @ s @ v).astype(dtype)


def _svd_sign_free(lib, a, **kw):
    # U and V are determined up to a sign per singular pair: compare sign-free products
    U, S_, Vh = lib.linalg.svd(a, **kw)
    k = S_.shape[-1]
    return U[..., :k] * Vh[..., :k, :1].mT, S_, U[..., :, :k] @ (S_[..., :, None] * Vh[..., :k, :])


def _orthonormal(lib, Q):
    return Q.mT @ Q


def _svd_v_sign_free(lib, a, method=False, **kw):
    U, S_, V = a.svd(**kw) if method else lib.svd(a, **kw)
    k = S_.shape[-1]
    return U[..., :k] * V[..., :1, :k], S_, U[..., :, :k] @ (S_[..., :, None] * V[..., :k].mT)


def _eigh_sign_free(res):
    w, V = res
    return w, V * V[..., :1, :], V @ (w[..., :, None] * V.mT)


# PyTorch builds these from other ops, and the last of those names the node
GRAD_NAME_SKIP = {"linalg_norm": "matrix orders take linalg_matrix_norm's paths",
                  "linalg_matrix_norm": "ord 1 / inf end in AmaxBackward0, nuc in SumBackward1",
                  "linalg_matrix_power": "n=1 is CloneBackward0, batched n>1 UnsafeView",
                  "_chain_matmul": "two matrices are ViewBackward0, more CloneBackward0"}

SAMPLES: dict = {
    "linalg_inv_ex": [
        S(sq(3, 3)),
        S(sq(2, 4, 4)),
        S(sq(1, 1)),
        S(sq(2, 0, 0)),
        S(sq(3, 3, dtype="float64")),
        S(sq(3, 3), check_errors=True),
        S(sq(2, 3, 3), call=lambda lib, a: lib.linalg.inv(a)),
        S(sq(3, 3), call=lambda lib, a: lib.inverse(a)),
        S(sq(3, 3), call=lambda lib, a: a.inverse()),
        S(sq(3, 3), call=lambda lib, a: lib.linalg.inv_ex(a, check_errors=True)),
    ],
    "linalg_det": [
        S(sq(3, 3)),
        S(sq(2, 4, 4)),
        S(sq(1, 1)),
        S(make(3, 3)),
        S(sq(2, 0, 0)),
        S(np.array([[1., 2.], [2., 4.]], dtype="float32"), grad=False),  # singular
    ],
    "det": [
        S(sq(3, 3)),
        S(sq(2, 2, 2)),
        S(sq(3, 3), call=lambda lib, a: a.det()),
    ],
    "linalg_slogdet": [
        S(sq(3, 3)),
        S(-sq(2, 4, 4)),
        S(make(3, 3)),
        S(sq(1, 1)),
    ],
    "slogdet": [
        S(sq(3, 3)),
        S(-sq(3, 3), call=lambda lib, a: a.slogdet()),
    ],
    "logdet": [
        S(sq(3, 3)),
        S(sq(2, 3, 3)),
        S(np.array([[0., 1.], [1., 0.]], dtype="float32"), grad=False),  # det < 0: nan
        S(sq(3, 3), call=lambda lib, a: a.logdet()),
    ],
    "linalg_solve_ex": [
        S(sq(3, 3), make(3, 2)),
        S(sq(3, 3), make(3)),
        S(sq(2, 3, 3), make(2, 3)),  # a batch of vectors
        S(sq(2, 3, 3), make(3, 4)),  # broadcast B
        S(sq(3, 3), make(4, 3, 1)),  # broadcast A
        S(sq(3, 3), make(2, 3), left=False),
        S(sq(2, 3, 3), make(2, 2, 3), left=False),
        S(sq(3, 3), make(3, 2), check_errors=True),
        S(sq(2, 3, 3), make(2, 3, 2), call=lambda lib, a, b: lib.linalg.solve(a, b)),
        S(sq(3, 3), make(2, 3), call=lambda lib, a, b: lib.linalg.solve(a, b, left=False)),
        S(sq(3, 3), make(3), call=lambda lib, a, b: lib.linalg.solve_ex(a, b,
                                                                        check_errors=True)),
    ],
    "linalg_cholesky_ex": [
        S(spd(3, 3), call=lambda lib, a: lib.linalg.cholesky_ex(sym(lib, a))),
        S(spd(2, 4, 4), call=lambda lib, a: lib.linalg.cholesky_ex(sym(lib, a), upper=True)),
        S(spd(3, 3), call=lambda lib, a: lib.linalg.cholesky(sym(lib, a))),
        S(spd(2, 3, 3), call=lambda lib, a: lib.linalg.cholesky(sym(lib, a), upper=True)),
        S(spd(3, 3), call=lambda lib, a: lib.linalg.cholesky_ex(sym(lib, a),
                                                                check_errors=True)),
        S(spd(1, 1)),
        # an unsymmetric input: LAPACK reads the lower (or upper) triangle only
        S(make(3, 3) + 6 * np.eye(3, dtype="float32"), grad=False),
        S(make(3, 3) + 6 * np.eye(3, dtype="float32"), upper=True, grad=False),
    ],
    "_cholesky_torch": [
        S(spd(3, 3), call=lambda lib, a: lib.cholesky(sym(lib, a))),
        S(spd(2, 3, 3), call=lambda lib, a: lib.cholesky(sym(lib, a), True)),
        S(spd(3, 3), call=lambda lib, a: sym(lib, a).cholesky(upper=True)),
    ],
    "linalg_qr": [
        S(make(4, 3)),
        S(make(3, 3)),
        S(make(2, 5, 3)),
        S(make(3, 5)),  # wide
        S(make(2, 3, 4), mode="reduced"),
        S(make(4, 3), mode="r", grad=False),  # PyTorch cannot differentiate without Q
        S(make(3, 3), mode="complete"),
        S(make(3, 5), mode="complete"),
        S(make(4, 3), mode="complete", grad=False),  # PyTorch has no derivative here
    ],
    "qr": [
        S(make(4, 3)),
        S(make(3, 4), some=True),
        S(make(3, 3), False),
        S(make(4, 3), call=lambda lib, a: a.qr()),
    ],
    "linalg_svd": [
        S(distinct(3, 3), call=_svd_sign_free),
        S(distinct(4, 3), call=_svd_sign_free, desc="full 4x3"),
        S(distinct(3, 4, 2), call=_svd_sign_free, desc="full 2x3x4"),
        S(distinct(4, 3), full_matrices=False, call=_svd_sign_free),
        S(distinct(3, 5, 2), full_matrices=False, call=_svd_sign_free),
        S(distinct(4, 3), call=lambda lib, a: [x.shape for x in lib.linalg.svd(a)]),
        S(distinct(4, 3), call=lambda lib, a: [x.shape for x in lib.linalg.svd(a, False)]),
        S(distinct(4, 3), call=lambda lib, a: _orthonormal(lib, lib.linalg.svd(a).U),
          grad=False),
        S(distinct(3, 5), call=lambda lib, a: _orthonormal(lib, lib.linalg.svd(a).Vh.mT),
          grad=False),
    ],
    "linalg_svdvals": [
        S(distinct(3, 3)),
        S(distinct(4, 2)),
        S(distinct(2, 5, 3)),
    ],
    "_svd_torch": [
        S(distinct(4, 3), call=lambda lib, a: _svd_v_sign_free(lib, a)),
        S(distinct(3, 3), call=lambda lib, a: _svd_v_sign_free(lib, a, some=True)),
        S(distinct(3, 3, 2), call=lambda lib, a: _svd_v_sign_free(lib, a, method=True)),
        S(distinct(4, 3), call=lambda lib, a: _svd_v_sign_free(lib, a, some=False)),
        S(distinct(4, 3), call=lambda lib, a: [x.shape for x in lib.svd(a, some=False)]),
        S(distinct(4, 3), call=lambda lib, a: lib.svd(a, compute_uv=False), grad=False),
        S(distinct(2, 4, 2), call=lambda lib, a: lib.svd(a, compute_uv=False), grad=False),
        S(distinct(4, 3), call=lambda lib, a: lib.svd(a, compute_uv=False).S),
    ],
    "linalg_eigh": [
        S(spd(3, 3), call=lambda lib, a: _eigh_sign_free(lib.linalg.eigh(sym(lib, a)))),
        S(spd(2, 4, 4), call=lambda lib, a: _eigh_sign_free(lib.linalg.eigh(sym(lib, a),
                                                                            UPLO="U"))),
        S(spd(3, 3) - 4 * np.eye(3, dtype="float32"),
          call=lambda lib, a: _eigh_sign_free(lib.linalg.eigh(sym(lib, a), "L"))),
        # unsymmetric: the lower (upper) triangle is read
        S(make(3, 3), grad=False, call=lambda lib, a: _eigh_sign_free(lib.linalg.eigh(a))),
        S(make(3, 3), grad=False,
          call=lambda lib, a: _eigh_sign_free(lib.linalg.eigh(a, UPLO="U"))),
        S(spd(3, 3), call=lambda lib, a: lib.linalg.eigh(sym(lib, a)).eigenvalues),
    ],
    "linalg_eigvalsh": [
        S(spd(3, 3), call=lambda lib, a: lib.linalg.eigvalsh(sym(lib, a))),
        S(spd(2, 4, 4), call=lambda lib, a: lib.linalg.eigvalsh(sym(lib, a), UPLO="U")),
        S(make(3, 3), grad=False),
        S(make(3, 3), UPLO="U", grad=False),
    ],
    "linalg_vector_norm": [
        S(make(3, 4)),
        S(make(5)),
        S(make()),
        S(make(2, 3, 4), 1, -1),
        S(make(2, 3, 4), 3.5, (0, 2), True),
        S(make(2, 3), float("inf")),
        S(make(2, 3), -float("inf"), dim=1),
        S(make(2, 3), 0, dim=0),
        S(make(2, 3), ord=-1.5),
        S(make(2, 3), keepdim=True),
        S(make(2, 3), dtype=np.float64 and None),
        S(np.zeros((2, 3), dtype="float32")),  # gradient 0 at 0, as PyTorch
        S(np.zeros((3,), dtype="float32"), float("inf")),
        S(np.array([1., -3., 3.], dtype="float32"), float("inf")),  # tie: split evenly
    ],
    "linalg_matrix_norm": [
        S(make(3, 4)),
        S(make(2, 3, 4), "fro"),
        S(distinct(3, 4, 2), "nuc"),
        S(distinct(4, 3), 2),
        S(distinct(3, 3), -2),
        S(make(3, 4), 1),
        S(make(3, 4), -1),
        S(make(2, 3, 4), float("inf")),
        S(make(3, 4), -float("inf")),
        S(make(2, 3, 4), "fro", (0, 2), True),
        S(make(2, 3, 4), 1, dim=(-1, 0)),
        S(distinct(3, 4, 2).transpose(1, 2, 0).copy(), "nuc", dim=(0, 1), keepdim=True),
    ],
    "linalg_norm": [
        S(make(3, 4)),
        S(make(2, 3, 4)),
        S(make(5), 3),
        S(make(3, 4), "fro"),
        S(distinct(3, 4), "nuc"),
        S(make(3, 4), float("inf")),
        S(make(2, 3, 4), None, 1),
        S(make(2, 3, 4), 1, (0, 2)),
        S(make(2, 3, 4), 4, -1, True),
        S(make(2, 3, 4), None, (1, 2), True),
    ],
    "linalg_pinv": [
        S(distinct(3, 3)),
        S(distinct(4, 3)),
        S(distinct(3, 5, 2)),
        S(distinct(4, 3), rtol=0.3),  # drops the smallest singular value
        S(distinct(4, 3), atol=1.0),
        S(distinct(4, 3), atol=0.5, rtol=0.01),
        S(spd(3, 3), hermitian=True, grad=False),
        S(spd(3, 3), call=lambda lib, a: lib.linalg.pinv(sym(lib, a), hermitian=True)),
        S(distinct(4, 3, 2), Const(np.array([0.1, 2.0], dtype="float32")),
          call=lambda lib, a, t: lib.linalg.pinv(a, atol=t), desc="tensor atol", grad=False),
        S(distinct(4, 3, 2), Const(np.array([0.1, 0.2], dtype="float32")),
          call=lambda lib, a, t: lib.linalg.pinv(a, rtol=t), desc="tensor rtol"),
    ],
    "pinverse": [
        S(distinct(3, 4)),
        S(distinct(4, 3), 0.3),
        S(distinct(3, 3), call=lambda lib, a: a.pinverse()),
    ],
    "linalg_lstsq": [
        S(distinct(5, 3), make(5, 2), call=lambda lib, a, b: lib.linalg.lstsq(a, b)),
        S(distinct(3, 3), make(3, 1), call=lambda lib, a, b: lib.linalg.lstsq(a, b)),
        S(distinct(5, 3, 2), make(2, 5, 4), call=lambda lib, a, b: lib.linalg.lstsq(a, b)),
        S(distinct(3, 5), make(3, 2), call=lambda lib, a, b: lib.linalg.lstsq(a, b)),
        S(distinct(5, 3), make(5), call=lambda lib, a, b: lib.linalg.lstsq(a, b)),
        S(distinct(5, 3), make(5, 2),
          call=lambda lib, a, b: lib.linalg.lstsq(a, b, driver="gelsy")),
        S(distinct(5, 3), make(5, 2), call=lambda lib, a, b: lib.linalg.lstsq(a, b, 1e-3)),
        S(distinct(5, 3), make(5, 2),
          call=lambda lib, a, b: lib.linalg.lstsq(a, b, driver="gels")),
        S(distinct(5, 3, 2), make(2, 5), call=lambda lib, a, b: lib.linalg.lstsq(a, b,
                                                                                 driver="gels")),
        S(distinct(3, 5), make(3, 2),
          call=lambda lib, a, b: lib.linalg.lstsq(a, b, driver="gels")),
    ],
    "linalg_matrix_rank": [
        S(distinct(3, 3)),
        S(distinct(4, 3, 2)),
        S(np.ones((3, 3), dtype="float32")),
        S(distinct(4, 3), atol=1.0),
        S(distinct(4, 3), rtol=0.5),
        S(distinct(4, 3), atol=0.1, rtol=0.5),
        S(spd(3, 3), hermitian=True),
        S(np.zeros((2, 3), dtype="float32")),
    ],
    "linalg_cond": [
        S(sq(3, 3)),
        S(distinct(4, 3)),
        S(sq(2, 3, 3), 2),
        S(sq(3, 3), -2),
        # PyTorch's backward fails for the norms that go through the inverse (it modifies a
        # saved inverse in place), so these compare values only
        S(sq(3, 3), "fro", grad=False),
        S(sq(2, 3, 3), "nuc", grad=False),
        S(sq(3, 3), 1, grad=False),
        S(sq(3, 3), float("inf"), grad=False),
        S(sq(3, 3), -1, grad=False),
    ],
    "linalg_matrix_power": [
        S(sq(3, 3) / 3, 3),
        S(sq(2, 3, 3) / 3, 2),
        S(sq(3, 3) / 3, 1),
        S(sq(3, 3) / 3, 0),
        S(sq(3, 3), -1),
        S(sq(3, 3), -3),
        S(sq(3, 3) / 3, 6),
        S(make(3, 3, dtype="int64", low=-3, high=3), 3),
        S(make(3, 3, dtype="int64", low=-3, high=3), 0),
    ],
    "matrix_power": [
        S(sq(3, 3) / 3, 2),
        S(sq(3, 3), -2),
        S(sq(3, 3) / 3, 3, call=lambda lib, a, n: a.matrix_power(n)),
    ],
    "linalg_matrix_exp": [
        S(make(3, 3, low=-1, high=1)),
        S(make(2, 4, 4, low=-1, high=1)),
        S(make(1, 1)),
        S(make(3, 3, low=-3, high=3)),
        S(make(2, 0, 0)),
    ],
    "matrix_exp": [
        S(make(3, 3, low=-1, high=1)),
        S(make(3, 3, low=-1, high=1), call=lambda lib, a: a.matrix_exp()),
    ],
    "linalg_multi_dot": [
        S([make(2, 3), make(3, 4)]),
        S([make(2, 3), make(3, 4), make(4, 2)]),
        S([make(3), make(3, 4), make(4, 5), make(5)]),
        S([make(3), make(3, 4), make(4, 2)]),
        S([make(5, 3), make(3, 4), make(4)]),
        S((make(2, 3), make(3, 4), make(4, 5), make(5, 2))),
    ],
    "_chain_matmul": [
        S(make(2, 3), make(3, 4), call=lambda lib, *m: lib.chain_matmul(*m)),
        S(make(2, 3), make(3, 4), make(4, 2), call=lambda lib, *m: lib.chain_matmul(*m)),
        S(make(2, 3), call=lambda lib, *m: lib.chain_matmul(*m)),
    ],
    "linalg_cross": [
        S(make(3), make(3)),
        S(make(4, 3), make(4, 3)),
        S(make(4, 3), make(1, 3)),  # broadcast
        S(make(3, 4), make(3, 4), dim=0),
        S(make(2, 3, 5), make(2, 3, 5), dim=-2),
        S(make(4, 3, dtype="int64"), make(4, 3, dtype="int64")),
    ],
    "linalg_vecdot": [
        S(make(3), make(3)),
        S(make(4, 3), make(4, 3)),
        S(make(4, 3), make(3)),
        S(make(3, 4), make(3, 4), dim=0),
        S(make(2, 3, 5), make(1, 3, 5), dim=-2),
    ],
    "linalg_solve_triangular": [
        S(np.triu(sq(3, 3)), make(3, 2), upper=True),
        S(np.tril(sq(3, 3)), make(3, 2), upper=False),
        S(sq(3, 3), make(3, 2), upper=True),  # the other triangle is ignored
        S(sq(2, 3, 3), make(3, 4), upper=False),
        S(sq(3, 3), make(2, 3, 1), upper=True),
        S(sq(3, 3), make(2, 3), upper=True, left=False),
        S(sq(3, 3), make(3, 2), upper=False, unitriangular=True),
        S(sq(2, 3, 3), make(2, 4, 3), upper=False, left=False, unitriangular=True),
    ],
    "linalg_diagonal": [
        S(make(3, 3)),
        S(make(2, 3, 4)),
        S(make(3, 4), offset=1),
        S(make(4, 3), offset=-2),
        S(make(2, 3, 4), dim1=0, dim2=2),
        S(make(2, 3, 4), offset=1, dim1=-1, dim2=0),
        S(make(3, 3, dtype="int64")),
    ],
    "addbmm": [
        S(make(2, 4), make(3, 2, 5), make(3, 5, 4)),
        S(make(4), make(3, 2, 5), make(3, 5, 4)),
        S(make(1, 1), make(2, 2, 3), make(2, 3, 2), beta=0.5, alpha=2.0),
        S(make(2, 2), make(2, 2, 3), make(2, 3, 2), beta=0),
        S(make(2, 2, dtype="int64"), make(2, 2, 3, dtype="int64"), make(2, 3, 2, dtype="int64"),
          alpha=2),
        S(make(2, 4), make(3, 2, 5), make(3, 5, 4),
          call=lambda lib, i, a, b: i.addbmm(a, b, alpha=0.5)),
        S(make(2, 4), make(3, 2, 5), make(3, 5, 4),
          call=lambda lib, i, a, b: i.clone().addbmm_(a, b, beta=2.0)),
    ],
    "addmv": [
        S(make(3), make(3, 4), make(4)),
        S(make(1), make(3, 4), make(4)),
        S(make(), make(3, 4), make(4), beta=0.5, alpha=-1.5),
        S(make(3), make(3, 4), make(4), beta=0),
        S(make(3, dtype="int64"), make(3, 2, dtype="int64"), make(2, dtype="int64")),
        S(make(3), make(3, 4), make(4), call=lambda lib, i, a, b: i.addmv(a, b)),
        S(make(3), make(3, 4), make(4), call=lambda lib, i, a, b: i.clone().addmv_(a, b,
                                                                                  alpha=2.0)),
        S(_m(1), _m(3, 4), _m(4), grad=False,
          call=raises(lambda lib, i, a, b: i.clone().addmv_(a, b))),
    ],
    "addr": [
        S(make(3, 4), make(3), make(4)),
        S(make(4), make(3), make(4)),
        S(make(), make(3), make(4), beta=0.5, alpha=2.0),
        S(make(3, 4), make(3), make(4), beta=0),
        # promotes (PyTorch's backward fails on mixed dtypes)
        S(make(3, 4, dtype="int64"), make(3, dtype="int64"), make(4), grad=False),
        S(make(3, 2, dtype="bool"), make(3, dtype="bool"), make(2, dtype="bool")),
        S(make(3, 2, dtype="bool"), make(3, dtype="bool"), make(2, dtype="bool"),
          beta=False),
        S(make(3, 4), make(3), make(4), call=lambda lib, i, a, b: i.addr(a, b)),
        S(make(3, 4), make(3), make(4), call=lambda lib, i, a, b: i.clone().addr_(a, b,
                                                                                 beta=0.5)),
    ],
}

_ = Const
