"""nn.utils against PyTorch: gradient clipping, parameters <-> vector, parametrize (custom
parametrizations, caching, removal), parametrizations.orthogonal / weight_norm /
spectral_norm, and the older hook-based weight_norm / spectral_norm."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import torchjax

LIBS = (torch, torchjax)
RNG = np.random.default_rng(0)


def same_error(fn):
    got = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            fn(lib)
        got.append((type(info.value), str(info.value)))
    assert got[1] == got[0]


def to_jax_state(sd):
    return {k: torchjax.tensor(v.detach().numpy()) for k, v in sd.items()}


def close(a, b, **kw):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), **{"rtol": 1e-5, "atol": 1e-6,
                                                                 **kw})


def np_of(t):
    return t.detach().numpy()


# -- clipping ---------------------------------------------------------------------------------

def _params_with_grads(lib, scale=1.0):
    grads = [np.array([[3.0, -4.0], [1.0, 2.0]]), np.array([0.5, -6.0]), None]
    params = []
    for g in grads:
        p = lib.nn.Parameter(lib.zeros(2, 2) if g is None or g.ndim == 2 else lib.zeros(2))
        if g is not None:
            p.grad = lib.tensor((g * scale).astype(np.float32))
        params.append(p)
    return params


@pytest.mark.parametrize("max_norm,norm_type", [(1.0, 2.0), (100.0, 2.0), (2.0, 1),
                                                (2.0, float("inf")), (0.5, 3.0)])
def test_clip_grad_norm_matches(max_norm, norm_type):
    out = []
    for lib in LIBS:
        params = _params_with_grads(lib)
        total = lib.nn.utils.clip_grad_norm_(params, max_norm, norm_type, foreach=True)
        out.append((float(total), [np_of(p.grad) for p in params if p.grad is not None],
                    total.shape, str(total.dtype)))
    close(out[1][0], out[0][0])
    for a, b in zip(out[1][1], out[0][1]):
        close(a, b)
    assert out[1][2:] == out[0][2:]


def test_clip_grad_helpers():
    for lib in LIBS:
        p = _params_with_grads(lib)[0]
        total = lib.nn.utils.get_total_norm([p.grad], 2.0)
        lib.nn.utils.clip_grads_with_norm_(p, 1.0, total)
        close(float(total), 5.4772258)
        close(float(p.grad.norm()), 1.0, rtol=1e-5)
        assert float(lib.nn.utils.clip_grad_norm_([], 1.0)) == 0.0
        with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
            lib.nn.utils.clip_grad_norm_((q for q in []), 1.0)
        with pytest.warns(FutureWarning, match="`torch.nn.utils.clip_grad_norm` is now "
                                               "deprecated"):
            lib.nn.utils.clip_grad_norm(p, 1.0)

    def nonfinite(lib):
        params = _params_with_grads(lib)
        params[0].grad[0, 0] = float("inf")
        lib.nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    same_error(nonfinite)


def test_clip_grad_value_matches():
    out = []
    for lib in LIBS:
        params = _params_with_grads(lib)
        assert lib.nn.utils.clip_grad_value_(params, 1.5) is None
        lib.nn.utils.clip_grad_value_(params[0], 1.0)
        out.append([np_of(p.grad) for p in params if p.grad is not None])
    for a, b in zip(*out):
        close(a, b)


def test_parameters_to_vector_and_back():
    out = []
    for lib in LIBS:
        m = lib.nn.Linear(3, 2)
        with lib.no_grad():
            m.weight.copy_(lib.arange(6.0).reshape(2, 3))
            m.bias.fill_(-1.0)
        vec = lib.nn.utils.parameters_to_vector(m.parameters())
        lib.nn.utils.vector_to_parameters(vec * 2, m.parameters())
        out.append((np_of(vec), np_of(m.weight), np_of(m.bias), vec.grad_fn is not None))
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)
    same_error(lambda lib: lib.nn.utils.vector_to_parameters([1.0], []))


# -- parametrize ------------------------------------------------------------------------------

def symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def scaled(lib):
    class Scale(lib.nn.Module):
        def forward(self, X):
            return X * 2

        def right_inverse(self, A):
            return A / 2
    return Scale()


def _pair(make):
    tm, jm = make(torch), make(torchjax)
    jm.load_state_dict(to_jax_state(tm.state_dict()))
    return tm, jm


def _run(tm, jm, x_shape=(2, 3), steps=1):
    """Forward/backward `steps` times with the same input; compares outputs and gradients."""
    x = RNG.normal(size=x_shape).astype(np.float32)
    for _ in range(steps):
        outs = []
        for lib, m in ((torch, tm), (torchjax, jm)):
            m.zero_grad()
            y = m(lib.tensor(x))
            (y * y).sum().backward()
            outs.append((np_of(y), [np_of(p.grad) for p in m.parameters()]))
        close(outs[1][0], outs[0][0], rtol=1e-4, atol=1e-5)
        for a, b in zip(outs[1][1], outs[0][1]):
            close(a, b, rtol=1e-4, atol=1e-5)


def test_register_parametrization_structure_and_gradients():
    P = None

    def make(lib):
        nonlocal P
        P = lib.nn.utils.parametrize
        m = lib.nn.Linear(3, 3)
        P.register_parametrization(m, "weight", symmetric(lib))
        P.register_parametrization(m, "weight", scaled(lib))  # chained
        return m
    tm, jm = _pair(make)
    assert type(jm).__name__ == "ParametrizedLinear" and repr(jm) == repr(tm)
    assert list(jm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in jm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    close(np_of(jm.weight), np_of(tm.weight))
    _run(tm, jm, (2, 3))
    P = torchjax.nn.utils.parametrize
    clone = copy.deepcopy(jm)
    assert type(clone).__name__ == "ParametrizedLinear"
    with torchjax.no_grad():
        clone.parametrizations.weight.original.zero_()
    assert float(clone.weight.abs().sum()) == 0 and float(jm.weight.abs().sum()) > 0
    same_error(lambda lib: pickle.dumps(tm if lib is torch else jm))
    assert P.is_parametrized(jm) and P.is_parametrized(jm, "weight")
    assert not P.is_parametrized(jm, "bias")
    assert P.type_before_parametrizations(jm) is torchjax.nn.Linear
    with P.cached():
        assert jm.weight is jm.weight
    assert jm.weight is not jm.weight


def test_parametrization_assignment_and_removal():
    def make(lib, leave):
        P = lib.nn.utils.parametrize
        m = lib.nn.Linear(3, 3)
        with lib.no_grad():
            m.weight.copy_(lib.arange(9.0).reshape(3, 3))
        P.register_parametrization(m, "weight", symmetric(lib))
        m.weight = lib.ones(3, 3) * 4  # right_inverse sets the original
        assigned = np_of(m.parametrizations.weight.original)
        P.remove_parametrizations(m, "weight", leave_parametrized=leave)
        return (type(m).__name__, assigned, np_of(m.weight), type(m.weight).__name__,
                list(m.state_dict()), hasattr(m, "parametrizations"))
    for leave in (True, False):
        got, expected = make(torchjax, leave), make(torch, leave)
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a, b)


def test_parametrization_with_several_originals_and_buffers():
    def make(lib):
        class Split(lib.nn.Module):
            def forward(self, a, b):
                return a + b

            def right_inverse(self, X):
                return X * 0.25, X * 0.75
        m = lib.nn.Linear(2, 2)
        m.register_buffer("buf", lib.ones(2))
        P = lib.nn.utils.parametrize
        P.register_parametrization(m, "weight", Split())
        P.register_parametrization(m, "buf", scaled(lib))
        return m
    tm, jm = _pair(make)
    assert list(jm.state_dict()) == list(tm.state_dict())
    close(np_of(jm.buf), np_of(tm.buf))
    _run(tm, jm, (3, 2))
    same_error(lambda lib: lib.nn.utils.parametrize.remove_parametrizations(
        make(lib), "weight", leave_parametrized=False))


def test_parametrize_errors():
    def shape_change(lib):
        class Grow(lib.nn.Module):
            def forward(self, X):
                return lib.cat([X, X])
        lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "weight",
                                                          Grow())

    def dtype_change(lib):
        class ToDouble(lib.nn.Module):
            def forward(self, X):
                return X.double()
        lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "weight",
                                                          ToDouble())

    def chained_shape_change(lib):
        m = lib.nn.Linear(2, 2)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", scaled(lib))

        class Grow(lib.nn.Module):
            def forward(self, X):
                return lib.cat([X, X])
        lib.nn.utils.parametrize.register_parametrization(m, "weight", Grow())

    def no_right_inverse(lib):
        m = lib.nn.Linear(2, 2)

        class Double(lib.nn.Module):
            def forward(self, X):
                return X * 2
        lib.nn.utils.parametrize.register_parametrization(m, "weight", Double())
        m.weight = lib.ones(2, 2)

    same_error(shape_change)
    same_error(dtype_change)
    same_error(chained_shape_change)
    same_error(no_right_inverse)
    same_error(lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Linear(2, 2), "nothing", scaled(lib)))
    same_error(lambda lib: lib.nn.utils.parametrize.remove_parametrizations(
        lib.nn.Linear(2, 2), "weight"))

    class Grow(torchjax.nn.Module):
        def forward(self, X):
            return torchjax.cat([X, X])
    m = torchjax.nn.Linear(2, 2)
    torchjax.nn.utils.parametrize.register_parametrization(m, "weight", Grow(), unsafe=True)
    assert m.weight.shape == (4, 2)


# -- parametrizations -------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization(dim):
    def make(lib):
        return lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 4), dim=dim)
    tm, jm = _pair(make)
    assert list(jm.state_dict()) == list(tm.state_dict()) and repr(jm) == repr(tm)
    g = jm.parametrizations.weight.original0
    assert g.shape == tm.parametrizations.weight.original0.shape
    _run(tm, jm, (2, 3))


def test_weight_norm_loads_old_checkpoints():
    old = torchjax.nn.Linear(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torchjax.nn.utils.weight_norm(old)
    new = torchjax.nn.utils.parametrizations.weight_norm(torchjax.nn.Linear(3, 4))
    new.load_state_dict(old.state_dict())
    x = torchjax.ones(2, 3)
    close(np_of(new(x)), np_of(old(x)))


@pytest.mark.parametrize("shape,dim", [((4, 3), None), ((4, 3), 1), ((3,), None)])
def test_spectral_norm_parametrization(shape, dim):
    def make(lib):
        m = lib.nn.Module()
        m.weight = lib.nn.Parameter(lib.tensor(
            np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape)))
        return lib.nn.utils.parametrizations.spectral_norm(m, dim=dim)
    tm, jm = _pair(make)
    assert list(jm.state_dict()) == list(tm.state_dict())
    for _ in range(2):  # training: each access runs one power iteration
        wt, wj = tm.weight, jm.weight
        close(np_of(wj), np_of(wt), rtol=1e-4)
        (wt * wt.detach()).sum().backward()
        (wj * wj.detach()).sum().backward()
        close(np_of(jm.parametrizations.weight.original.grad),
              np_of(tm.parametrizations.weight.original.grad), rtol=1e-4, atol=1e-5)
    for k, v in tm.state_dict().items():
        close(np_of(jm.state_dict()[k]), np_of(v), rtol=1e-4, atol=1e-6)
    if len(shape) > 1:
        jm.eval()
        u = np_of(jm.parametrizations.weight[0]._u).copy()
        jm.weight
        np.testing.assert_array_equal(np_of(jm.parametrizations.weight[0]._u), u)


def test_spectral_norm_errors():
    same_error(lambda lib: lib.nn.utils.parametrizations.spectral_norm(
        lib.nn.Linear(2, 2), dim=2))
    same_error(lambda lib: lib.nn.utils.parametrizations.spectral_norm(
        lib.nn.Linear(2, 2), n_power_iterations=0))
    same_error(lambda lib: lib.nn.utils.parametrizations.spectral_norm(
        lib.nn.Linear(2, 2), name="nothing"))


@pytest.mark.parametrize("shape,orth_map,trivial", [
    ((3, 3), None, True),  # matrix_exp
    ((5, 3), "cayley", True),
    ((3, 5), None, True),  # householder, transposed
    ((2, 4, 3), "householder", False),  # batched; the originals come from geqrf
])
def test_orthogonal_parametrization(shape, orth_map, trivial):
    w0 = RNG.normal(size=shape).astype(np.float32)

    def make(lib):
        m = lib.nn.Module()
        m.weight = lib.nn.Parameter(lib.tensor(w0))
        return lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orth_map,
                                                        use_trivialization=trivial)
    tm, jm = _pair(make)
    assert list(jm.state_dict()) == list(tm.state_dict())
    for k, v in tm.state_dict().items():  # also the geqrf result when not trivial
        close(np_of(jm.state_dict()[k]), np_of(v), rtol=1e-4, atol=1e-5)
    wj = jm.weight
    close(np_of(wj), np_of(tm.weight), rtol=1e-4, atol=1e-5)
    q = np_of(wj).reshape(-1, *shape[-2:])
    small = min(shape[-2:])
    gram = q.swapaxes(-1, -2) @ q if shape[-2] >= shape[-1] else q @ q.swapaxes(-1, -2)
    close(gram, np.broadcast_to(np.eye(small), gram.shape), atol=1e-5)
    target = RNG.normal(size=shape).astype(np.float32)
    for lib, m in ((torch, tm), (torchjax, jm)):
        (m.weight * lib.tensor(target)).sum().backward()
    close(np_of(jm.parametrizations.weight.original.grad),
          np_of(tm.parametrizations.weight.original.grad), rtol=1e-4, atol=1e-5)


def test_orthogonal_assignment_and_errors():
    m = torchjax.nn.utils.parametrizations.orthogonal(torchjax.nn.Linear(3, 3))
    q = np.linalg.qr(RNG.normal(size=(3, 3)))[0].astype(np.float32)
    m.weight = torchjax.tensor(q)
    close(np_of(m.weight), q, atol=1e-5)
    same_error(lambda lib: lib.nn.utils.parametrizations.orthogonal(
        lib.nn.Linear(3, 3), orthogonal_map="qr"))
    same_error(lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.BatchNorm1d(3)))
    same_error(lambda lib: setattr(lib.nn.utils.parametrizations.orthogonal(
        lib.nn.Linear(3, 3), use_trivialization=False), "weight", lib.eye(3)))


# -- the older hook-based versions ------------------------------------------------------------

def test_hook_based_weight_norm():
    def make(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return lib.nn.utils.weight_norm(lib.nn.Linear(3, 4), dim=1)
    tm, jm = _pair(make)
    assert list(jm.state_dict()) == list(tm.state_dict()) == ["bias", "weight_g", "weight_v"]
    _run(tm, jm, (2, 3))
    for lib, m in ((torch, tm), (torchjax, jm)):
        lib.nn.utils.remove_weight_norm(m)
    assert list(jm.state_dict()) == list(tm.state_dict()) == ["bias", "weight"]
    close(np_of(jm.weight), np_of(tm.weight))

    def twice(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            lib.nn.utils.weight_norm(lib.nn.utils.weight_norm(lib.nn.Linear(2, 2)))
    same_error(twice)
    same_error(lambda lib: lib.nn.utils.remove_weight_norm(lib.nn.Linear(2, 2)))


def test_hook_based_spectral_norm():
    def make(lib):
        return lib.nn.utils.spectral_norm(lib.nn.Linear(3, 4))
    tm, jm = _pair(make)
    assert list(jm.state_dict()) == list(tm.state_dict())
    assert jm.state_dict()._metadata[""]["spectral_norm"] == {"weight.version": 1}
    _run(tm, jm, (2, 3), steps=2)
    for k, v in tm.state_dict().items():
        close(np_of(jm.state_dict()[k]), np_of(v), rtol=1e-4, atol=1e-6)
    for lib, m in ((torch, tm), (torchjax, jm)):
        lib.nn.utils.remove_spectral_norm(m)
    assert list(jm.state_dict()) == list(tm.state_dict()) == ["bias", "weight"]
    close(np_of(jm.weight), np_of(tm.weight), rtol=1e-4)
    same_error(lambda lib: lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(
        lib.nn.Linear(2, 2))))
    same_error(lambda lib: lib.nn.utils.remove_spectral_norm(lib.nn.Linear(2, 2)))
