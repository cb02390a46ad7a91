"""torch.svd_lowrank and torch.pca_lowrank (src/torchjax/_lowrank.py) against PyTorch 2.13.
The methods are randomized: on matrices of rank at most q both recover the factorization
exactly, so singular values and reconstructions are compared; shapes, dtypes, grad_fn names
and PyTorch's errors are compared directly."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax

_rng = np.random.default_rng(8)


def _rank(m, n, k, *batch):
    return _rng.normal(size=(*batch, m, k)) @ _rng.normal(size=(*batch, k, n))


@pytest.mark.parametrize("shape,q", [((8, 6, 3), 3), ((6, 9, 2), 4), ((5, 5, 5), 5)])
def test_svd_lowrank_recovers_low_rank(shape, q):
    A = _rank(*shape)
    res = []
    for lib in (torch, torchjax):
        a = lib.tensor(A, requires_grad=True)
        U, S, V = lib.svd_lowrank(a, q=q)
        S.sum().backward()
        res.append((U.detach().numpy(), S.detach().numpy(), V.detach().numpy(),
                    [t.grad_fn.name() for t in (U, S, V)], str(S.dtype), a.grad.shape))
    (Ua, Sa, Va, na, da, ga), (Ub, Sb, Vb, nb, db, gb) = res
    assert (nb, db, gb) == (na, da, ga) and Ub.shape == Ua.shape and Vb.shape == Va.shape
    np.testing.assert_allclose(Sb, Sa, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose((Ub * Sb) @ Vb.T, A, rtol=1e-8, atol=1e-8)


def test_pca_lowrank_and_batches():
    A = _rank(10, 4, 2) + 3.0  # a constant offset: centring removes it
    t = torch.pca_lowrank(torch.tensor(A), q=3)
    j = torchjax.pca_lowrank(torchjax.tensor(A), q=3)
    np.testing.assert_allclose(j[1].numpy()[:2], t[1].numpy()[:2], rtol=1e-9)
    assert [tuple(x.shape) for x in j] == [tuple(x.shape) for x in t]
    jn = torchjax.pca_lowrank(torchjax.tensor(A), q=3, center=False)
    tn = torch.pca_lowrank(torch.tensor(A), q=3, center=False)
    np.testing.assert_allclose(jn[1].numpy()[:1], tn[1].numpy()[:1], rtol=1e-9)
    B = _rank(4, 7, 3, 2)
    jb = torchjax.svd_lowrank(torchjax.tensor(B), q=3)
    tb = torch.svd_lowrank(torch.tensor(B), q=3)
    assert [tuple(x.shape) for x in jb] == [tuple(x.shape) for x in tb]
    np.testing.assert_allclose(jb[1].numpy(), tb[1].numpy(), rtol=1e-9)


@pytest.mark.parametrize("q", [7, -1])
def test_pca_q_error(q):
    for lib in (torch, torchjax):
        with pytest.raises(ValueError, match=rf"q\(={q}\) must be non-negative integer and "
                                             r"not greater than min\(m, n\)=5"):
            lib.pca_lowrank(lib.zeros(6, 5), q=q)
