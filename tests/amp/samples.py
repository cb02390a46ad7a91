"""One sample per op on PyTorch's CPU autocast lists that torchjax has (and a few that are
on no list, as controls): fn(lib, *tensors) runs with lib = torch or torchjax."""

from __future__ import annotations

import numpy as np

_rng = np.random.default_rng(0)


def _n(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


def _u(*shape, lo=0.1, hi=0.9):
    return _rng.uniform(lo, hi, shape).astype(np.float32)


def _spd(n):
    a = _n(n, n)
    return (a @ a.T + n * np.eye(n)).astype(np.float32)


def _i(*values):
    return np.array(values, dtype=np.int64)


class S:
    """A sample: `values` compares the values too (off where a result is only defined up
    to signs, e.g. qr); `grad` checks the gradients (dtypes and values) of the first `grad`
    floating inputs (True: all of them). Gradients are checked for the matmul-like ops and a
    few float32 ones: compiling each backward costs seconds, and the cast they test is the
    same mechanism for every row."""

    def __init__(self, id, fn, *inputs, values=True, grad=False):
        self.id, self.fn, self.inputs, self.values, self.grad = id, fn, inputs, values, grad


def L(*args, **kwargs):
    """A sample whose gradients are checked."""
    return S(*args, grad=kwargs.pop("grad", True), **kwargs)


def _F(lib):
    return lib.nn.functional


def _pool_unpool(lib, x, dim):
    F = _F(lib)
    pool = F.max_pool2d if dim == 2 else F.max_pool3d
    unpool = F.max_unpool2d if dim == 2 else F.max_unpool3d
    y, idx = pool(x, 2, return_indices=True)
    return unpool(y, idx, 2)


LOWER = [
    L("conv1d", lambda lib, x, w: _F(lib).conv1d(x, w), _n(1, 2, 6), _n(3, 2, 3)),
    L("conv2d", lambda lib, x, w, b: _F(lib).conv2d(x, w, b), _n(1, 2, 5, 5), _n(3, 2, 3, 3),
      _n(3)),
    L("conv3d", lambda lib, x, w: _F(lib).conv3d(x, w), _n(1, 2, 4, 4, 4), _n(2, 2, 2, 2, 2)),
    L("conv_transpose1d", lambda lib, x, w: _F(lib).conv_transpose1d(x, w), _n(1, 2, 5),
      _n(2, 3, 3)),
    L("conv_transpose2d", lambda lib, x, w: _F(lib).conv_transpose2d(x, w), _n(1, 2, 4, 4),
      _n(2, 3, 3, 3)),
    L("conv_transpose3d", lambda lib, x, w: _F(lib).conv_transpose3d(x, w), _n(1, 2, 3, 3, 3),
      _n(2, 2, 2, 2, 2)),
    L("bmm", lambda lib, a, b: lib.bmm(a, b), _n(2, 3, 4), _n(2, 4, 5)),
    L("mm", lambda lib, a, b: lib.mm(a, b), _n(3, 4), _n(4, 5)),
    L("linalg.vecdot", lambda lib, a, b: lib.linalg.vecdot(a, b), _n(3, 4), _n(3, 4)),
    L("baddbmm", lambda lib, c, a, b: lib.baddbmm(c, a, b), _n(2, 3, 5), _n(2, 3, 4),
      _n(2, 4, 5)),
    L("addmm", lambda lib, c, a, b: lib.addmm(c, a, b), _n(3, 5), _n(3, 4), _n(4, 5)),
    L("addbmm", lambda lib, c, a, b: lib.addbmm(c, a, b), _n(3, 5), _n(2, 3, 4), _n(2, 4, 5)),
    L("linear", lambda lib, x, w, b: _F(lib).linear(x, w, b), _n(3, 4), _n(5, 4), _n(5)),
    L("matmul", lambda lib, a, b: lib.matmul(a, b), _n(2, 3, 4), _n(4, 5)),
    L("matmul_vector", lambda lib, a, b: a @ b, _n(4), _n(4)),
    L("prelu", lambda lib, x, w: _F(lib).prelu(x, w), _n(2, 3, 4), _u(3)),
    L("scaled_dot_product_attention",
      lambda lib, q, k, v: _F(lib).scaled_dot_product_attention(q, k, v),
      _n(1, 2, 3, 4), _n(1, 2, 5, 4), _n(1, 2, 5, 4)),
    # PyTorch runs these as listed ops (bmm, mm, linear)
    L("einsum", lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), _n(3, 4), _n(4, 5)),
    L("tensordot", lambda lib, a, b: lib.tensordot(a, b, dims=1), _n(3, 4), _n(4, 5)),
    L("linalg.multi_dot", lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]), _n(3, 4),
      _n(4, 5), _n(5, 2)),
    L("chain_matmul", lambda lib, a, b: lib.chain_matmul(a, b), _n(3, 4), _n(4, 5)),
]

FP32 = [
    S("avg_pool3d", lambda lib, x: _F(lib).avg_pool3d(x, 2), _n(1, 1, 4, 4, 4)),
    S("binary_cross_entropy", lambda lib, p, t: _F(lib).binary_cross_entropy(p, t), _u(6),
      _u(6)),
    S("grid_sample", lambda lib, x, g: _F(lib).grid_sample(x, g, align_corners=False),
      _n(1, 1, 4, 4), _u(1, 2, 2, 2, lo=-0.9, hi=0.9)),
    S("polar", lambda lib, a, t: lib.polar(a, t), _u(4), _n(4)),
    L("prod", lambda lib, x: lib.prod(x, 1), _u(3, 4, lo=0.5, hi=1.5)),
    S("quantile", lambda lib, x: lib.quantile(x, 0.3, dim=1), _n(3, 5)),
    S("nanquantile", lambda lib, x: lib.nanquantile(x, 0.3, dim=1), _n(3, 5)),
    L("cdist", lambda lib, a, b: lib.cdist(a, b), _n(3, 4), _n(5, 4)),
    S("trace", lambda lib, x: lib.trace(x), _n(4, 4)),
    S("view_as_complex", lambda lib, x: lib.view_as_complex(x), _n(3, 2)),
    L("inverse", lambda lib, x: lib.inverse(x), _spd(3)),
    S("pinverse", lambda lib, x: lib.pinverse(x), _spd(3)),
    S("max_pool3d", lambda lib, x: _F(lib).max_pool3d(x, 2), _n(1, 1, 4, 4, 4)),
    S("max_unpool2d", lambda lib, x: _pool_unpool(lib, x, 2), _n(1, 1, 4, 4)),
    S("max_unpool3d", lambda lib, x: _pool_unpool(lib, x, 3), _n(1, 1, 4, 4, 4)),
    S("adaptive_avg_pool3d", lambda lib, x: _F(lib).adaptive_avg_pool3d(x, 2),
      _n(1, 1, 4, 4, 4)),
    S("adaptive_max_pool3d", lambda lib, x: _F(lib).adaptive_max_pool3d(x, 2),
      _n(1, 1, 4, 4, 4)),
    S("reflection_pad1d", lambda lib, x: _F(lib).pad(x, (2, 1), mode="reflect"), _n(1, 2, 5)),
    S("reflection_pad2d", lambda lib, x: _F(lib).pad(x, (1, 1, 2, 0), mode="reflect"),
      _n(1, 2, 4, 4)),
    S("replication_pad1d", lambda lib, x: _F(lib).pad(x, (2, 1), mode="replicate"),
      _n(1, 2, 5)),
    S("replication_pad2d", lambda lib, x: _F(lib).pad(x, (1, 1, 2, 0), mode="replicate"),
      _n(1, 2, 4, 4)),
    S("replication_pad3d", lambda lib, x: _F(lib).pad(x, (1, 1, 1, 0, 0, 1), mode="replicate"),
      _n(1, 1, 3, 3, 3)),
    L("mse_loss", lambda lib, a, b: _F(lib).mse_loss(a, b), _n(3, 4), _n(3, 4)),
    S("cosine_embedding_loss", lambda lib, a, b, t: _F(lib).cosine_embedding_loss(a, b, t),
      _n(3, 4), _n(3, 4), np.array([1.0, -1.0, 1.0], np.float32)),
    S("nll_loss", lambda lib, x, t: _F(lib).nll_loss(x, t), _n(4, 3), _i(0, 2, 1, 1)),
    S("nll_loss2d", lambda lib, x, t: _F(lib).nll_loss(x, t), _n(2, 3, 2, 2),
      _rng.integers(0, 3, (2, 2, 2))),
    S("hinge_embedding_loss", lambda lib, x, t: _F(lib).hinge_embedding_loss(x, t), _n(5),
      np.array([1, -1, 1, -1, 1], np.float32)),
    S("poisson_nll_loss", lambda lib, x, t: _F(lib).poisson_nll_loss(x, t), _n(5), _u(5)),
    S("smooth_l1_loss", lambda lib, a, b: _F(lib).smooth_l1_loss(a, b), _n(5), _n(5)),
    L("cross_entropy", lambda lib, x, t: _F(lib).cross_entropy(x, t), _n(4, 3), _i(0, 2, 1, 1)),
    S("l1_loss", lambda lib, a, b: _F(lib).l1_loss(a, b), _n(5), _n(5)),
    S("huber_loss", lambda lib, a, b: _F(lib).huber_loss(a, b), _n(5), _n(5)),
    S("margin_ranking_loss", lambda lib, a, b, t: _F(lib).margin_ranking_loss(a, b, t), _n(4),
      _n(4), np.array([1.0, -1.0, 1.0, -1.0], np.float32)),
    S("soft_margin_loss", lambda lib, x, t: _F(lib).soft_margin_loss(x, t), _n(4),
      np.array([1.0, -1.0, 1.0, -1.0], np.float32)),
    S("triplet_margin_loss", lambda lib, a, p, n: _F(lib).triplet_margin_loss(a, p, n),
      _n(3, 4), _n(3, 4), _n(3, 4)),
    S("multi_margin_loss", lambda lib, x, t: _F(lib).multi_margin_loss(x, t), _n(4, 3),
      _i(0, 2, 1, 1)),
    S("ctc_loss", lambda lib, x, t: _F(lib).ctc_loss(x.log_softmax(-1), t, [5, 5], [2, 2]),
      _n(5, 2, 4), _i(1, 2, 3, 1).reshape(2, 2)),
    S("kl_div", lambda lib, a, b: _F(lib).kl_div(a, b, reduction="batchmean"), _n(3, 4),
      _u(3, 4)),
    S("multilabel_margin_loss", lambda lib, x, t: _F(lib).multilabel_margin_loss(x, t),
      _n(2, 4), _i(3, 0, -1, 1, 2, 1, -1, 0).reshape(2, 4)),
    L("binary_cross_entropy_with_logits",
      lambda lib, x, t: _F(lib).binary_cross_entropy_with_logits(x, t), _n(6), _u(6)),
    *(S(f"fft.{n}", (lambda n: lambda lib, x: getattr(lib.fft, n)(x))(n), _n(4, 4))
      for n in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
                "irfft2", "rfftn", "irfftn", "hfft", "ihfft")),
    S("linalg.cond", lambda lib, x: lib.linalg.cond(x), _spd(3)),
    S("linalg.matrix_rank", lambda lib, x: lib.linalg.matrix_rank(x), _spd(3)),
    L("linalg.solve", lambda lib, a, b: lib.linalg.solve(a, b), _spd(3), _n(3, 2)),
    S("linalg.cholesky", lambda lib, x: lib.linalg.cholesky(x), _spd(3)),
    S("cholesky", lambda lib, x: lib.cholesky(x), _spd(3)),
    S("linalg.svdvals", lambda lib, x: lib.linalg.svdvals(x), _spd(3)),
    S("linalg.eigvalsh", lambda lib, x: lib.linalg.eigvalsh(x), _spd(3)),
    S("linalg.inv", lambda lib, x: lib.linalg.inv(x), _spd(3)),
    S("qr", lambda lib, x: lib.qr(x)[0], _spd(3), values=False),
    S("svd", lambda lib, x: lib.svd(x)[1], _spd(3)),
    S("linalg.qr", lambda lib, x: lib.linalg.qr(x)[1], _spd(3), values=False),
    S("linalg.cholesky_ex", lambda lib, x: lib.linalg.cholesky_ex(x)[0], _spd(3)),
    S("linalg.svd", lambda lib, x: lib.linalg.svd(x)[1], _spd(3)),
    S("linalg.eigh", lambda lib, x: lib.linalg.eigh(x)[0], _spd(3)),
    S("linalg.lstsq", lambda lib, a, b: lib.linalg.lstsq(a, b)[0], _spd(3), _n(3, 2)),
    S("linalg.inv_ex", lambda lib, x: lib.linalg.inv_ex(x)[0], _spd(3)),
    S("cholesky_solve", lambda lib, b, u: lib.cholesky_solve(b, u), _n(3, 2),
      np.linalg.cholesky(_spd(3)).astype(np.float32)),
    S("cholesky_inverse", lambda lib, u: lib.cholesky_inverse(u),
      np.linalg.cholesky(_spd(3)).astype(np.float32)),
    S("orgqr", lambda lib, a, t: lib.orgqr(a, t), _n(4, 3), _n(3)),
    S("ormqr", lambda lib, a, t, c: lib.ormqr(a, t, c), _n(4, 3), _n(3), _n(4, 2)),
    S("linalg.householder_product", lambda lib, a, t: lib.linalg.householder_product(a, t),
      _n(4, 3), _n(3)),
    S("geqrf", lambda lib, x: lib.geqrf(x)[0], _spd(3)),
    S("triangular_solve", lambda lib, b, a: lib.triangular_solve(b, a)[0], _n(3, 2),
      np.triu(_spd(3))),
    S("linalg.eigvals", lambda lib, x: lib.linalg.eigvals(x), _spd(3)),
    S("linalg.eig", lambda lib, x: lib.linalg.eig(x)[0], _spd(3)),
    S("lu_solve", lambda lib, a, b: lib.lu_solve(b, *lib.lu(a)), _spd(3), _n(3, 2)),
    S("stft", lambda lib, x: lib.stft(x, 8, window=lib.ones(8), return_complex=True),
      _n(2, 32)),
    S("linalg.tensorinv", lambda lib, x: lib.linalg.tensorinv(x.reshape(2, 2, 4), ind=2),
      _spd(4)),
    S("linalg.tensorsolve", lambda lib, a, b: lib.linalg.tensorsolve(a, b), _spd(4),
      _n(4)),
]

PROMOTE = [
    S("stack", lambda lib, a, b: lib.stack([a, b]), _n(3), _n(3)),
    S("cat", lambda lib, a, b: lib.cat([a, b]), _n(3), _n(2)),
    S("index_copy", lambda lib, a, b: a.index_copy(0, lib.tensor([2, 0]), b), _n(3, 2),
      _n(2, 2)),
]

# on no CPU list: they run in their inputs' dtype
UNLISTED = [
    S("softmax", lambda lib, x: x.softmax(-1), _n(3, 4)),
    S("exp", lambda lib, x: lib.exp(x), _n(3, 4)),
    S("add", lambda lib, a, b: a + b, _n(3, 4), _n(3, 4)),
    S("layer_norm", lambda lib, x: _F(lib).layer_norm(x, (4,)), _n(3, 4)),
    S("sum", lambda lib, x: x.sum(), _n(3, 4)),
    S("mv", lambda lib, a, b: lib.mv(a, b), _n(3, 4), _n(4)),
    S("gelu", lambda lib, x: _F(lib).gelu(x), _n(3, 4)),
]

# more of the CPU lists' ops, made last so that the samples above keep their random inputs
LOWER += [
    L("conv_tbc", lambda lib, x, w, b: lib.conv_tbc(x, w, b, 1), _n(5, 2, 3), _n(3, 3, 4),
      _n(4)),
    # (PyTorch runs the cells as linear ops)
    L("rnn_tanh_cell", lambda lib, x, h, wi, wh, bi, bh: lib.rnn_tanh_cell(x, h, wi, wh, bi, bh),
      _n(2, 3), _n(2, 4), _n(4, 3), _n(4, 4), _n(4), _n(4)),
    L("rnn_relu_cell", lambda lib, x, h, wi, wh, bi, bh: lib.rnn_relu_cell(x, h, wi, wh, bi, bh),
      _n(2, 3), _n(2, 4), _n(4, 3), _n(4, 4), _n(4), _n(4)),
]
FP32 += [
    S("grid_sample_3d", lambda lib, x, g: _F(lib).grid_sample(x, g, align_corners=False),
      _n(1, 1, 3, 4, 4), _u(1, 2, 2, 2, 3, lo=-0.9, hi=0.9)),
    S("lu", lambda lib, a: lib.lu(a)[0], _spd(3)),
]
