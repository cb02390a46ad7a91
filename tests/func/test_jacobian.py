"""torchjax.func.jacrev / jacfwd / hessian against torch.func."""

from __future__ import annotations

import pytest

from . import arr, check, check_raises

X = arr(2, 3, seed=3)
Y = arr(3, seed=4)


def f_two_out(x, y):
    return (x * y).tanh(), (x.exp() * y).sum()


@pytest.mark.parametrize("api", ["jacrev", "jacfwd"])
def test_jacobian_structure_and_values(api):
    def run(lib, argnums):
        jac = getattr(lib.func, api)
        return jac(f_two_out, argnums=argnums)(lib.tensor(X), lib.tensor(Y))
    check(lambda lib: run(lib, 0))
    check(lambda lib: run(lib, (0, 1)))
    check(lambda lib: getattr(lib.func, api)(lambda d: {"s": d["a"].sin() * d["b"]})(
        {"a": lib.tensor(Y), "b": lib.tensor(Y)}))


@pytest.mark.parametrize("api", ["jacrev", "jacfwd"])
def test_jacobian_has_aux(api):
    check(lambda lib: getattr(lib.func, api)(lambda x: (x.sin(), x.cos().sum()),
                                             has_aux=True)(lib.tensor(Y)))


@pytest.mark.parametrize("chunk_size", [1, 2, None])
def test_jacrev_chunk_size(chunk_size):
    check(lambda lib: lib.func.jacrev(f_two_out, argnums=(0, 1), chunk_size=chunk_size)(
        lib.tensor(X), lib.tensor(Y)))


def test_hessian():
    def f(x, y):
        return (x.sin() * y).sum() * (y * y).sum()
    check(lambda lib: lib.func.hessian(f)(lib.tensor(X), lib.tensor(Y)))
    check(lambda lib: lib.func.hessian(f, argnums=(0, 1))(lib.tensor(X), lib.tensor(Y)))
    check(lambda lib: lib.func.jacrev(lib.func.jacrev(f, argnums=1), argnums=1)(
        lib.tensor(X), lib.tensor(Y)))


def test_jacobian_errors():
    check_raises(lambda lib: lib.func.jacrev(lambda x: x, chunk_size=0))
    check_raises(lambda lib: lib.func.jacrev(lambda x: x * 1j)(lib.tensor(Y)))
    check_raises(lambda lib: lib.func.jacrev(lambda x: x)(lib.tensor(Y) * 1j))
    check_raises(lambda lib: lib.func.jacfwd(lambda x: x * 1j)(lib.tensor(Y)))
    check_raises(lambda lib: lib.func.jacfwd(lambda x: x, randomness="sometimes")(
        lib.tensor(Y)))
    check_raises(lambda lib: lib.func.jacrev(lambda x: x, argnums=3)(lib.tensor(Y)))


def test_jacfwd_randomness():
    # forward mode vmaps over the basis: randomness='error' refuses random ops, like PyTorch
    check_raises(lambda lib: lib.func.jacfwd(lambda x: x * lib.rand(3))(lib.tensor(Y)))

    def same(lib):
        j = lib.func.jacfwd(lambda x: x * lib.rand(()), randomness="same")(lib.tensor(Y))
        return (j == j[0, 0] * lib.eye(3)).all().item()
    assert check(same) is True
