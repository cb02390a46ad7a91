"""torch.linalg beyond the op table: PyTorch's errors (shapes, dtypes, singular and
non-positive-definite inputs), the singular-matrix gradient of det, result types, grad_fn
names, and the checking functions under jax tracing."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import torchjax


def _both(fn):
    """Run fn in both libraries: (torchjax error or result, torch error or result)."""
    out = []
    for lib in (torchjax, torch):
        try:
            out.append(fn(lib))
        except Exception as e:  # noqa: BLE001 - the exception itself is compared
            out.append(e)
    return out


ERRORS = [
    ("inv shape", lambda lib: lib.linalg.inv(lib.ones(2, 3))),
    ("inv 1-d", lambda lib: lib.linalg.inv(lib.ones(3))),
    ("inv long", lambda lib: lib.linalg.inv(lib.ones(3, 3, dtype=lib.int64))),
    ("inv half", lambda lib: lib.linalg.inv(lib.ones(3, 3, dtype=lib.float16))),
    ("inv singular", lambda lib: lib.linalg.inv(lib.zeros(3, 3))),
    ("inv singular batch", lambda lib: lib.linalg.inv(lib.stack([lib.eye(2), lib.zeros(2, 2)]))),
    ("inverse singular", lambda lib: lib.inverse(lib.tensor([[1., 2.], [2., 4.]]))),
    ("inv_ex check", lambda lib: lib.linalg.inv_ex(lib.zeros(2, 2), check_errors=True)),
    ("det shape", lambda lib: lib.linalg.det(lib.ones(2, 3))),
    ("torch.det shape", lambda lib: lib.det(lib.ones(2, 3))),
    ("det long", lambda lib: lib.linalg.det(lib.ones(3, 3, dtype=lib.int64))),
    ("slogdet shape", lambda lib: lib.linalg.slogdet(lib.ones(2, 3))),
    ("logdet shape", lambda lib: lib.logdet(lib.ones(2, 3))),
    ("solve shape", lambda lib: lib.linalg.solve(lib.ones(2, 3), lib.ones(2))),
    ("solve rhs", lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(2))),
    ("solve vector right", lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(3), left=False)),
    ("solve vector right 1x1",
     lambda lib: lib.linalg.solve(lib.ones(1, 1), lib.ones(1), left=False)),
    ("solve right shape",
     lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(2, 4), left=False)),
    ("solve dtype", lambda lib: lib.linalg.solve(lib.eye(3), lib.ones(3, dtype=lib.float64))),
    ("solve singular", lambda lib: lib.linalg.solve(lib.zeros(3, 3), lib.ones(3))),
    ("solve singular batch", lambda lib: lib.linalg.solve(lib.zeros(2, 3, 3), lib.ones(2, 3))),
    ("cholesky shape", lambda lib: lib.linalg.cholesky(lib.ones(2, 3))),
    ("cholesky not pd", lambda lib: lib.linalg.cholesky(-lib.eye(3))),
    ("cholesky minor 3",
     lambda lib: lib.linalg.cholesky(lib.diag(lib.tensor([1., 2., -3., 4.])))),
    ("cholesky batch", lambda lib: lib.linalg.cholesky(lib.stack([lib.eye(2), -lib.eye(2)]))),
    ("cholesky_ex check", lambda lib: lib.linalg.cholesky_ex(-lib.eye(2), check_errors=True)),
    ("torch.cholesky not pd", lambda lib: lib.cholesky(-lib.eye(3))),
    ("eigh shape", lambda lib: lib.linalg.eigh(lib.ones(2, 3))),
    ("eigh UPLO", lambda lib: lib.linalg.eigh(lib.eye(3), UPLO="x")),
    ("matrix_exp shape", lambda lib: lib.linalg.matrix_exp(lib.ones(2, 3))),
    ("matrix_exp long", lambda lib: lib.linalg.matrix_exp(lib.ones(3, 3, dtype=lib.int64))),
    ("matrix_power shape", lambda lib: lib.linalg.matrix_power(lib.ones(2, 3), 2)),
    ("svd 1-d", lambda lib: lib.linalg.svd(lib.ones(3))),
    ("svd driver", lambda lib: lib.linalg.svd(lib.eye(3), driver="gesvd")),
    ("qr 1-d", lambda lib: lib.linalg.qr(lib.ones(3))),
    ("qr mode", lambda lib: lib.linalg.qr(lib.eye(3), mode="foo")),
    ("pinv 1-d", lambda lib: lib.linalg.pinv(lib.ones(3))),
    ("lstsq rows", lambda lib: lib.linalg.lstsq(lib.ones(3, 2), lib.ones(4, 2))),
    ("lstsq driver", lambda lib: lib.linalg.lstsq(lib.eye(3), lib.ones(3, 2), driver="foo")),
    ("solve_triangular shape",
     lambda lib: lib.linalg.solve_triangular(lib.eye(3), lib.ones(2, 2), upper=True)),
    ("multi_dot one", lambda lib: lib.linalg.multi_dot([lib.eye(3)])),
    ("multi_dot 3-d", lambda lib: lib.linalg.multi_dot([lib.ones(3, 3, 3), lib.eye(3)])),
    ("multi_dot shapes", lambda lib: lib.linalg.multi_dot([lib.ones(3, 4), lib.eye(3)])),
    ("cross length", lambda lib: lib.linalg.cross(lib.ones(3, 2), lib.ones(3, 2))),
    ("cross dtype", lambda lib: lib.linalg.cross(lib.ones(3), lib.ones(3, dtype=lib.float64))),
    ("vector_norm long", lambda lib: lib.linalg.vector_norm(lib.ones(3, dtype=lib.int64))),
    ("vector_norm narrowing",
     lambda lib: lib.linalg.vector_norm(lib.ones(3, dtype=lib.float64), dtype=lib.float32)),
    ("matrix_norm 1-d", lambda lib: lib.linalg.matrix_norm(lib.ones(3))),
    ("matrix_norm ord", lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3), ord=3)),
    ("norm ord 3-d", lambda lib: lib.linalg.norm(lib.ones(2, 3, 4), ord=2)),
    ("vecdot long", lambda lib: lib.linalg.vecdot(lib.ones(2, dtype=lib.int64),
                                                  lib.ones(2, dtype=lib.int64))),
    ("addmv dtype", lambda lib: lib.addmv(lib.ones(2), lib.ones(2, 2, dtype=lib.float64),
                                          lib.ones(2))),
    ("addbmm batches", lambda lib: lib.addbmm(lib.ones(2, 2), lib.ones(3, 2, 2),
                                              lib.ones(2, 2, 2))),
]


@pytest.mark.parametrize("fn", [f for _, f in ERRORS], ids=[n for n, _ in ERRORS])
def test_errors_match_torch(fn):
    ours, theirs = _both(fn)
    assert isinstance(theirs, Exception), "the case should fail in PyTorch"
    assert isinstance(ours, Exception), f"no error; PyTorch raises {theirs!r}"
    assert isinstance(ours, RuntimeError) == isinstance(theirs, RuntimeError), (ours, theirs)
    assert str(ours) == str(theirs)
    if isinstance(theirs, torch.linalg.LinAlgError):
        assert isinstance(ours, torchjax.linalg.LinAlgError)


def test_det_gradient_at_a_singular_matrix_is_zero_like_torch():
    a = np.array([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]])
    grads = []
    for lib in (torchjax, torch):
        x = lib.tensor(a, requires_grad=True)
        lib.linalg.det(x).backward()
        grads.append(np.asarray(x.grad.detach().numpy()))
    np.testing.assert_array_equal(grads[0], grads[1])


def test_ex_functions_report_info_without_raising():
    r = torchjax.linalg.inv_ex(torchjax.stack([torchjax.eye(2), torchjax.zeros(2, 2)]))
    assert r.info.tolist() == [0, 1] and r.info.dtype == torchjax.int32
    c = torchjax.linalg.cholesky_ex(torchjax.diag(torchjax.tensor([1., 2., -3., 4.])))
    assert int(c.info) == torch.linalg.cholesky_ex(torch.diag(torch.tensor([1., 2., -3., 4.]))
                                                   ).info.item() == 3
    s = torchjax.linalg.solve_ex(torchjax.zeros(2, 2), torchjax.ones(2))
    assert int(s.info) == 1


def test_result_types_and_grad_fns():
    a = torchjax.eye(3, requires_grad=True) * 2
    t = torch.eye(3, requires_grad=True) * 2
    for fn in (lambda L, x: L.linalg.slogdet(x), lambda L, x: L.linalg.qr(x),
               lambda L, x: L.linalg.svd(x), lambda L, x: L.linalg.eigh(x),
               lambda L, x: L.linalg.lstsq(x, x), lambda L, x: L.svd(x),
               lambda L, x: L.linalg.inv_ex(x), lambda L, x: L.linalg.cholesky_ex(x)):
        ours, theirs = fn(torchjax, a), fn(torch, t)
        assert type(ours).__name__ == type(theirs).__name__
        assert len(ours) == len(theirs)
        for f in ours._fields:  # PyTorch's struct sequences name the same fields
            assert getattr(ours, f) is ours[ours._fields.index(f)]
            getattr(theirs, f)
        for o, p in zip(ours, theirs):
            assert (o.grad_fn is None) == (p.grad_fn is None)
            if p.grad_fn is not None and o.grad_fn is not None and type(theirs).__name__ != "svd":
                assert type(o.grad_fn).__name__ == type(p.grad_fn).__name__
    for name in ("inv", "det", "pinv", "matrix_exp", "cholesky", "solve", "svdvals"):
        args = (a, a) if name == "solve" else (a,)
        targs = (t, t) if name == "solve" else (t,)
        assert type(getattr(torchjax.linalg, name)(*args).grad_fn).__name__ == \
            type(getattr(torch.linalg, name)(*targs).grad_fn).__name__, name


def test_checking_functions_work_on_tracers():
    def f(x):
        a = torchjax.Tensor._wrap(x, requires_grad=True)
        y = torchjax.linalg.inv(a).sum() + torchjax.linalg.cholesky(a).sum() \
            + torchjax.linalg.solve(a, a[0]).sum()
        y.backward()
        return y._data, a.grad._data

    x = (jnp.eye(3) * 3 + 0.1).astype(jnp.float32)
    v, g = jax.jit(f)(x)
    v2, g2 = f(x)
    np.testing.assert_allclose(v, v2, rtol=1e-5)
    np.testing.assert_allclose(g, g2, rtol=1e-5, atol=1e-6)


def _pair_up(w_ref, v_ref, w, v):
    """For each reference eigenpair, the index of the pair of (w, v) with the nearest
    eigenvalue, and how far its eigenvector is from the reference one up to a unit phase
    (geev's normalisation leaves that phase, a sign for real vectors, to the build)."""
    out = []
    for i in range(w_ref.shape[0]):
        j = int(np.argmin(np.abs(w - w_ref[i])))
        overlap = abs(np.vdot(v_ref[:, i], v[:, j]))
        out.append((j, abs(w[j] - w_ref[i]), abs(overlap - 1)))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_eig_pairs_match_pytorch_as_sets(seed):
    # symmetric float32 matrices of order 20: MKL's geev (PyTorch) and jaxlib's often return
    # these eigenvalues in different orders (the iteration converges to them in another
    # order), so the pairs are compared as sets: every PyTorch eigenvalue is one of
    # torchjax's, once, with the same eigenvector beside it
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(20, 20))
    a = (a + a.T).astype(np.float32)
    w_t, v_t = (x.numpy() for x in torch.linalg.eig(torch.tensor(a)))
    w_j, v_j = (x.numpy() for x in torchjax.linalg.eig(torchjax.tensor(a)))
    pairs = _pair_up(w_t, v_t, w_j, v_j)
    assert sorted(j for j, _, _ in pairs) == list(range(20))
    assert max(dw for _, dw, _ in pairs) < 1e-4 * np.abs(w_t).max()
    assert max(dv for _, _, dv in pairs) < 1e-3
    # and eigvals lists the same eigenvalues in eig's order
    np.testing.assert_allclose(torchjax.linalg.eigvals(torchjax.tensor(a)).numpy(), w_j,
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fn", [
    lambda lib, a: lib.linalg.ldl_factor(a),
    lambda lib, a: lib.linalg.ldl_factor_ex(a, check_errors=True),
])
def test_ldl_factor_of_a_singular_matrix_raises_as_pytorch(fn):
    # PyTorch reports a zero pivot through an internal assert; its key phrase is the code
    msgs = []
    for lib in (torch, torchjax):
        with pytest.raises(RuntimeError) as e:
            fn(lib, lib.tensor(np.diag([1.0, 0.0, 0.0])))
        msgs.append(str(e.value))
    assert "Unknown error code: 2." in msgs[0] and msgs[1].endswith("Unknown error code: 2.")


def test_ldl_solve_takes_int64_pivots_and_checks_their_shape():
    a = np.array([[2.0, 1.0, 0.0], [1.0, -3.0, 4.0], [0.0, 4.0, 0.5]])
    b = np.arange(6.0).reshape(3, 2)
    out, msgs = [], []
    for lib in (torch, torchjax):
        LD, pivots = lib.linalg.ldl_factor(lib.tensor(a))
        out.append(lib.linalg.ldl_solve(LD, pivots.long(), lib.tensor(b)).numpy())
        with pytest.raises(RuntimeError) as e:
            lib.linalg.ldl_solve(LD, pivots[:2], lib.tensor(b))
        msgs.append(str(e.value))
    np.testing.assert_allclose(out[1], out[0], rtol=1e-12)
    np.testing.assert_allclose(a @ out[1], b, atol=1e-12)
    assert msgs[1] == msgs[0]
