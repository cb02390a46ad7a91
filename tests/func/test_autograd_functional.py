"""torchjax.autograd.functional against torch.autograd.functional: values, PyTorch's tuple
conventions (single Tensor vs tuple, nested tuples), strict mode and errors."""

from __future__ import annotations

import pytest

import torchjax
import torchjax.autograd.functional as AF  # noqa: F401  (the submodule import must work)

from . import arr, check, check_raises

X = arr(2, 3, seed=12)
Y = arr(3, seed=13)


def af(lib):
    return lib.autograd.functional


def two_in_two_out(x, y):
    return (x.sin() * y).sum(1), (x.exp() * y).sum()


def scalar(x, y):
    return (x.sin() * y).sum() * y.pow(2).sum()


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_conventions(vectorize):
    kw = {"vectorize": vectorize}
    check(lambda lib: af(lib).jacobian(lambda x: x.tanh() * 2, lib.tensor(Y), **kw))
    check(lambda lib: af(lib).jacobian(two_in_two_out, (lib.tensor(X), lib.tensor(Y)), **kw))
    check(lambda lib: af(lib).jacobian(lambda x: (x.sin(), x.sum()), lib.tensor(Y), **kw))
    check(lambda lib: af(lib).jacobian(lambda x, y: x @ y, (lib.tensor(X), lib.tensor(Y)),
                                       **kw))
    check(lambda lib: af(lib).jacobian(lambda x: x.exp(), (lib.tensor(Y),), **kw))


def test_jacobian_forward_mode_and_integer_outputs():
    check(lambda lib: af(lib).jacobian(two_in_two_out, (lib.tensor(X), lib.tensor(Y)),
                                       vectorize=True, strategy="forward-mode"))
    check(lambda lib: af(lib).jacobian(lambda x: (x * 2, x.argmax()), lib.tensor(Y)))


def test_hessian():
    check(lambda lib: af(lib).hessian(lambda x: (x.sin() * x).sum(), lib.tensor(Y)))
    check(lambda lib: af(lib).hessian(scalar, (lib.tensor(X), lib.tensor(Y))))
    check(lambda lib: af(lib).hessian(scalar, (lib.tensor(X), lib.tensor(Y)), vectorize=True,
                                      outer_jacobian_strategy="forward-mode"))


def test_vjp_jvp():
    check(lambda lib: af(lib).vjp(lambda x: x.exp().sum(), lib.tensor(Y)))
    check(lambda lib: af(lib).vjp(two_in_two_out, (lib.tensor(X), lib.tensor(Y)),
                                  (lib.ones(2), lib.tensor(2.0))))
    check(lambda lib: af(lib).jvp(lambda x: x.exp() * 3, lib.tensor(Y), lib.tensor(Y)))
    check(lambda lib: af(lib).jvp(two_in_two_out, (lib.tensor(X), lib.tensor(Y)),
                                  (lib.ones(2, 3), lib.tensor(Y))))


def test_hvp_vhp():
    for name in ("hvp", "vhp"):
        check(lambda lib: getattr(af(lib), name)(lambda x: (x ** 3).sum(), lib.tensor(Y),
                                                 lib.tensor(Y)))
        check(lambda lib: getattr(af(lib), name)(scalar, (lib.tensor(X), lib.tensor(Y)),
                                                 (lib.ones(2, 3), lib.tensor(Y))))
        # the output keeps its shape (one element, not necessarily 0-d)
        check(lambda lib: getattr(af(lib), name)(lambda x: (x * x).sum().reshape(1, 1),
                                                 lib.tensor(Y), lib.ones(3)))


def test_strict_mode():
    y = lambda lib: lib.tensor(Y)  # noqa: E731
    check_raises(lambda lib: af(lib).vjp(lambda x: lib.ones(3), y(lib), lib.ones(3),
                                         strict=True))
    check_raises(lambda lib: af(lib).vjp(lambda x, z: x * 2, (y(lib), y(lib)), lib.ones(3),
                                         strict=True))
    check_raises(lambda lib: af(lib).jvp(lambda x, z: x * 2, (y(lib), y(lib)),
                                         (y(lib), y(lib)), strict=True))
    check_raises(lambda lib: af(lib).jacobian(lambda x, z: (x * 2, z + x), (y(lib), y(lib)),
                                              strict=True))
    check_raises(lambda lib: af(lib).jacobian(lambda x: x * 2, y(lib), strict=True,
                                              vectorize=True))
    check_raises(lambda lib: af(lib).hessian(lambda x: x.sum() * 2, y(lib), strict=True))
    check_raises(lambda lib: af(lib).vhp(lambda x: x.sum() * 2, y(lib), y(lib), strict=True))
    # dependent everywhere: strict passes
    check(lambda lib: af(lib).jacobian(lambda x, z: x * z, (y(lib), y(lib)), strict=True))
    check(lambda lib: af(lib).hessian(lambda x: (x ** 3).sum(), y(lib), strict=True))


def test_errors():
    y = lambda lib: lib.tensor(Y)  # noqa: E731
    check_raises(lambda lib: af(lib).jacobian(lambda x: x, [y(lib)]))
    check_raises(lambda lib: af(lib).jacobian(lambda x: [x], y(lib)))
    check_raises(lambda lib: af(lib).jacobian(lambda x, z: x, (y(lib), 3)))
    check_raises(lambda lib: af(lib).jacobian(lambda x: x, y(lib), strategy="sideways"))
    check_raises(lambda lib: af(lib).jacobian(lambda x: x, y(lib), strategy="forward-mode"))
    check_raises(lambda lib: af(lib).jacobian(lambda x: x, y(lib), strategy="forward-mode",
                                              strict=True, vectorize=True))
    check_raises(lambda lib: af(lib).vjp(lambda x: x, y(lib)))
    check_raises(lambda lib: af(lib).vjp(lambda x: x, y(lib), lib.ones(2)))
    check_raises(lambda lib: af(lib).vjp(lambda x: (x, x), y(lib), (lib.ones(3),)))
    check_raises(lambda lib: af(lib).jvp(lambda x, z: x, (y(lib), y(lib)),
                                         (lib.ones(3), lib.ones(2))))
    check_raises(lambda lib: af(lib).jvp(lambda x: x, y(lib)))
    check_raises(lambda lib: af(lib).hessian(lambda x: x * 2, y(lib)))
    check_raises(lambda lib: af(lib).hessian(lambda x: (x.sum(), x.sum()), y(lib)))
    check_raises(lambda lib: af(lib).hvp(lambda x: x * 2, y(lib), y(lib)))
    check_raises(lambda lib: af(lib).jacobian(lambda x: x, lib.arange(3)))


def test_create_graph_is_refused_clearly():
    with pytest.raises(NotImplementedError, match="create_graph=True"):
        torchjax.autograd.functional.jacobian(lambda x: x * 2, torchjax.ones(3),
                                              create_graph=True)
    with pytest.raises(NotImplementedError, match="create_graph=True"):
        torchjax.autograd.functional.hvp(lambda x: x.sum(), torchjax.ones(3), torchjax.ones(3),
                                         create_graph=True)
