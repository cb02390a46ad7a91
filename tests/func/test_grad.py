"""torchjax.func.grad / grad_and_value / vjp / jvp / linearize against torch.func."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import torchjax

from . import arr, check, check_raises

X = arr(2, 3, seed=1)
Y = arr(3, seed=2)


def f_xy(x, y):
    return (x.sin() * y).sum() + (x * x).mean()


def test_grad_and_argnums():
    check(lambda lib: lib.func.grad(f_xy)(lib.tensor(X), lib.tensor(Y)))
    check(lambda lib: lib.func.grad(f_xy, argnums=1)(lib.tensor(X), lib.tensor(Y)))
    check(lambda lib: lib.func.grad(f_xy, argnums=(0, 1))(lib.tensor(X), lib.tensor(Y)))
    check(lambda lib: lib.func.grad(f_xy, argnums=(-1,))(lib.tensor(X), lib.tensor(Y)))


def test_grad_and_value_has_aux_and_kwargs():
    def f(x, y, *, scale):
        loss = (x.exp() * y).sum() * scale
        return loss, {"loss": loss, "y": [y * 2]}

    check(lambda lib: lib.func.grad_and_value(f, has_aux=True)(lib.tensor(X), lib.tensor(Y),
                                                                scale=0.5))
    check(lambda lib: lib.func.grad(f, argnums=(0, 1), has_aux=True)(
        lib.tensor(X), lib.tensor(Y), scale=2.0))
    check(lambda lib: lib.func.grad_and_value(lambda x: (x ** 3).sum())(lib.tensor(Y)))


def test_grad_of_pytree_keeps_dict_order():
    def f(p):
        return (p["w"] * p["b"].sum()).sum() + p["a"][0].pow(2).sum()

    def run(lib):
        params = {"w": lib.tensor(X), "b": lib.tensor(Y), "a": [lib.tensor(Y)]}
        return lib.func.grad(f)(params)
    check(run)
    Pair = collections.namedtuple("Pair", "u v")

    def run_nt(lib):
        return lib.func.grad(lambda p: (p.u * p.v).sum())(Pair(lib.tensor(Y), lib.tensor(Y)))
    got = check(run_nt)
    assert type(got).__name__ == "Pair"


def test_nested_grad_is_second_derivative():
    check(lambda lib: lib.func.grad(lib.func.grad(lambda x: x.sin() * x ** 3))(
        lib.tensor(0.7)))


def test_python_control_flow_on_values_works_under_grad():
    def f(x):
        if x.sum() > 0:
            return (x * 2).sum()
        return (x * x).sum()
    check(lambda lib: lib.func.grad(f)(lib.tensor(Y)))
    check(lambda lib: lib.func.grad(f)(-lib.tensor(Y).abs()))


def test_closure_tensors_are_constants():
    def run(lib):
        w = lib.tensor(Y, requires_grad=True)
        g = lib.func.grad(lambda x: (x * w).sum())(lib.tensor(Y))
        return g, w.grad
    check(run)


def test_grad_errors():
    check_raises(lambda lib: lib.func.grad(lambda x: x)(lib.tensor(Y)))
    check_raises(lambda lib: lib.func.grad(lambda x: [x.sum()])(lib.tensor(Y)))
    check_raises(lambda lib: lib.func.grad(lambda x: x.sum(), has_aux=True)(lib.tensor(Y)))
    check_raises(lambda lib: lib.func.grad(lambda x: x.sum())(3.0))
    check_raises(lambda lib: lib.func.grad(lambda x: x.sum(), argnums=2)(lib.tensor(Y)))
    check_raises(lambda lib: lib.func.grad(lambda x: x.sum(), argnums=(0, 0))(lib.tensor(Y)))
    check_raises(lambda lib: lib.func.grad(lambda x: x.sum(), argnums=())(lib.tensor(Y)))
    check_raises(lambda lib: lib.func.grad(lambda x: x.sum(), argnums=1.0)(lib.tensor(Y)))
    check_raises(lambda lib: lib.func.grad(lambda x: x.sum())(lib.arange(3)))
    check_raises(lambda lib: lib.func.grad(lambda x: (x * 1j).sum())(lib.tensor(Y)))


def test_vjp():
    def run(lib):
        out, fn = lib.func.vjp(lambda x, y: (x * y, x.cos()), lib.tensor(X), lib.tensor(Y))
        return out, fn((lib.ones(2, 3), lib.tensor(X)))
    check(run)

    def run_aux(lib):
        out, fn, aux = lib.func.vjp(lambda x: (x.exp(), {"s": x.sum()}), lib.tensor(Y),
                                    has_aux=True)
        # a float64 cotangent is cast to the output's dtype, as autograd does
        return out, fn(lib.ones(3, dtype=lib.float64)), aux
    check(run_aux)


def test_vjp_fn_composes_with_vmap():
    def run(lib):
        _, fn = lib.func.vjp(lambda x: x.sin() * 2, lib.tensor(Y))
        return lib.func.vmap(fn)(lib.eye(3))
    check(run)


def test_vjp_errors():
    check_raises(lambda lib: lib.func.vjp(lambda x: x, lib.ones(3))[1](lib.ones(2)))
    check_raises(lambda lib: lib.func.vjp(lambda x: x, lib.ones(3))[1]((lib.ones(3),)))
    check_raises(lambda lib: lib.func.vjp(lambda x: x.long(), lib.ones(3)))
    check_raises(lambda lib: lib.func.vjp(lambda x: (x, 3), lib.ones(3)))


def test_jvp():
    check(lambda lib: lib.func.jvp(lambda x, y: (x * y).sum(0), (lib.tensor(X), lib.tensor(Y)),
                                   (lib.ones(2, 3), lib.tensor(Y))))
    check(lambda lib: lib.func.jvp(lambda x: (x.tanh(), x.sum()), (lib.tensor(Y),),
                                   (lib.tensor(Y),), has_aux=False))
    check(lambda lib: lib.func.jvp(lambda x: (x.exp(), x * 3), (lib.tensor(Y),),
                                   (lib.ones(3),), has_aux=True))


def test_jvp_errors():
    check_raises(lambda lib: lib.func.jvp(lambda x: x, lib.ones(3), (lib.ones(3),)))
    check_raises(lambda lib: lib.func.jvp(lambda x: x * 2, (lib.ones(3),), (lib.ones(2),)))
    check_raises(lambda lib: lib.func.jvp(lambda x: x, (lib.ones(3),), [lib.ones(3)]),
                 match="Expected primals and tangents to have the same python structure")
    check_raises(lambda lib: lib.func.jvp(lambda x: lib.ones(3), (lib.ones(3),),
                                          (lib.ones(3),), strict=True))


def test_linearize():
    def run(lib):
        out, fn = lib.func.linearize(lambda x: x.sin() * x, lib.tensor(Y))
        return out, fn(lib.ones(3)), fn(lib.tensor(Y))
    check(run)


def test_results_are_plain_tensors():
    x = torchjax.tensor(Y, requires_grad=True)
    g = torchjax.func.grad(lambda x: (x * x).sum())(x)
    assert isinstance(g, torchjax.Tensor) and g.grad_fn is None
    np.testing.assert_allclose(g.numpy(), 2 * Y, rtol=1e-6)


@pytest.mark.parametrize("api", ["grad", "jacrev", "jacfwd"])
def test_transforms_keep_function_name(api):
    def my_loss(x):
        return x.sum()
    assert getattr(torchjax.func, api)(my_loss).__name__ == "my_loss"


def test_aux_must_hold_tensors():
    check_raises(lambda lib: lib.func.grad(lambda x: (x.sum(), 3), has_aux=True)(lib.ones(3)))


def test_detach_inside_grad_is_a_constant():
    check(lambda lib: lib.func.grad(lambda x: (x.detach() * x).sum())(lib.tensor(Y)))


def test_no_grad_inside_grad_is_respected():
    def f(lib, x):
        with lib.no_grad():
            c = x ** 2
        return (x - c).sum()
    check(lambda lib: lib.func.grad(lambda x: f(lib, x))(lib.tensor(Y)))


def test_outer_no_grad_does_not_stop_the_transform():
    def run(lib):
        with lib.no_grad():
            return lib.func.grad(lambda x: (x ** 3).sum())(lib.tensor(Y))
    check(run)
