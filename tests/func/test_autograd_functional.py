"""torchjax.autograd.functional against torch.autograd.functional: values, PyTorch's tuple
conventions (single Tensor vs tuple, nested tuples), strict mode and errors; with
create_graph=True also a further backward through the results (gradients of the inputs, of v
and of parameters func captures)."""

from __future__ import annotations

import pytest

import torchjax.autograd.functional as AF  # noqa: F401  (the submodule import must work)

from . import LIBS, arr, assert_same, check, check_raises

X = arr(2, 3, seed=12)
Y = arr(3, seed=13)
X2 = arr(2, 3, seed=14)
Y2 = arr(3, seed=15)
V2 = arr(2, seed=16)
S = arr(seed=17)
W = arr(2, 3, seed=18)
B = arr(2, seed=19)


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


# -- create_graph=True --------------------------------------------------------------------------

def _tensors(res) -> list:
    if isinstance(res, (tuple, list)):
        return [t for r in res for t in _tensors(r)]
    return [res]


def linear(lib):
    lin = lib.nn.Linear(3, 2)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(W))
        lin.bias.copy_(lib.tensor(B))
    return lin


def check_graph(call, *arrays, module=None):
    """call(lib, *leaves) (call(lib, module, *leaves) when a module factory is given), the
    leaves made from `arrays` with requires_grad: the results agree with torch's and carry
    history where torch's do, and the gradients of sum(r * r) over those results with respect
    to every leaf (and the module's parameters) agree too."""
    got, differentiable = {}, None
    for lib in LIBS:
        leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
        if module is None:
            res = call(lib, *leaves)
        else:
            m = module(lib)
            res = call(lib, m, *leaves)
            leaves += list(m.parameters())
        flat = _tensors(res)
        if differentiable is None:  # torch's results that have history
            differentiable = [r.requires_grad for r in flat]
            assert any(differentiable)
        else:
            for i, (r, d) in enumerate(zip(flat, differentiable)):
                assert r.requires_grad or not d, f"result {i} lost its autograd history"
        loss = sum((r * r).sum() for r, d in zip(flat, differentiable) if d)
        grads = lib.autograd.grad(loss, leaves, materialize_grads=True)
        got[lib] = res, grads
    (res_t, grads_t), (res_j, grads_j) = got.values()
    assert_same(res_t, res_j, rtol=1e-4, atol=1e-5)
    assert_same(grads_t, grads_j, rtol=1e-4, atol=1e-5, path="gradients")


def cubic(x):
    return (x ** 3).sum() * x.sin().sum()


def test_vjp_create_graph():
    check_graph(lambda lib, x, v: af(lib).vjp(lambda x: x.exp() * x, x, v, create_graph=True),
                Y, Y2)
    check_graph(lambda lib, x, y, v, s: af(lib).vjp(two_in_two_out, (x, y), (v, s),
                                                    create_graph=True), X, Y, V2, S)
    check_graph(lambda lib, x: af(lib).vjp(lambda x: (x.sin() * x).sum(), x,
                                           create_graph=True), Y)


def test_jvp_create_graph():
    check_graph(lambda lib, x, v: af(lib).jvp(lambda x: x.exp() * x, x, v, create_graph=True),
                Y, Y2)
    check_graph(lambda lib, x, y, u, v: af(lib).jvp(two_in_two_out, (x, y), (u, v),
                                                    create_graph=True), X, Y, X2, Y2)


def test_jacobian_create_graph():
    check_graph(lambda lib, x: af(lib).jacobian(lambda x: x.tanh() * x, x, create_graph=True),
                Y)
    check_graph(lambda lib, x, y: af(lib).jacobian(two_in_two_out, (x, y), create_graph=True),
                X, Y)
    # an integer output has a zero jacobian; vectorize=True gives the same
    check_graph(lambda lib, x: af(lib).jacobian(lambda x: (x.exp() * x, x.argmax()), x,
                                                create_graph=True), Y)
    check_graph(lambda lib, x: af(lib).jacobian(lambda x: x.exp() * x, x, create_graph=True,
                                                vectorize=True), Y)
    # an input with history of its own: gradients flow on to the leaf behind it
    check_graph(lambda lib, a: af(lib).jacobian(lambda x: x.exp() * x, a * 2,
                                                create_graph=True), Y)


def test_hessian_create_graph():
    def hessian_and_third_order(lib, x):  # the loss's backward is then a fourth order
        h = af(lib).hessian(cubic, x, create_graph=True)
        return h, lib.autograd.grad(h.sum(), x, create_graph=True)[0]
    check_graph(hessian_and_third_order, Y)
    check_graph(lambda lib, x, y: af(lib).hessian(scalar, (x, y), create_graph=True,
                                                  vectorize=True), Y, Y2)


@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_hvp_vhp_create_graph(name):
    check_graph(lambda lib, x, v: getattr(af(lib), name)(cubic, x, v, create_graph=True), Y, Y2)
    check_graph(lambda lib, x, y, u, v: getattr(af(lib), name)(scalar, (x, y), (u, v),
                                                               create_graph=True), X, Y, X2, Y2)


def test_captured_module_parameters_get_gradients():
    check_graph(lambda lib, lin, x: af(lib).jacobian(lambda x: lin(x).tanh(), x,
                                                     create_graph=True), Y, module=linear)
    check_graph(lambda lib, lin, x, v: af(lib).vjp(lin, x, v, create_graph=True), Y, V2,
                module=linear)
    check_graph(lambda lib, lin, x: af(lib).hessian(lambda x: lin(x * x).sin().sum(), x,
                                                    create_graph=True), Y, module=linear)
    # func captures the input itself: the input it is given is a different Tensor (a view), so
    # the jacobian is diag(exp(x)), and the captured x's history reaches the gradient too
    check_graph(lambda lib, x: af(lib).jacobian(lambda z: z * x.exp(), x, create_graph=True), Y)


def test_strict_create_graph():
    y = lambda lib: lib.tensor(Y)  # noqa: E731
    kw = {"create_graph": True, "strict": True}
    check_raises(lambda lib: af(lib).vjp(lambda x: lib.ones(3), y(lib), lib.ones(3), **kw))
    check_raises(lambda lib: af(lib).vjp(lambda x, z: x * x, (y(lib), y(lib)), lib.ones(3),
                                         **kw))
    # a result without history under create_graph=True (x * 2: the vjp is the constant 2 v)
    check_raises(lambda lib: af(lib).vjp(lambda x: x * 2, y(lib), lib.ones(3), **kw))
    check_raises(lambda lib: af(lib).jvp(lambda x, z: x * 2, (y(lib), y(lib)),
                                         (y(lib), y(lib)), **kw))
    check_raises(lambda lib: af(lib).jvp(lambda x: x * 2, y(lib), y(lib), **kw))
    check_raises(lambda lib: af(lib).jacobian(lambda x: x * 2, y(lib), **kw))
    check_raises(lambda lib: af(lib).jacobian(lambda x, z: (x * x, z * x), (y(lib), y(lib)),
                                              **kw))
    check_raises(lambda lib: af(lib).jacobian(lambda x: x * x, y(lib), vectorize=True, **kw))
    check_raises(lambda lib: af(lib).hessian(lambda x: x.sum() * 2, y(lib), **kw))
    check_raises(lambda lib: af(lib).hessian(lambda x: (x * x).sum(), y(lib), **kw))
    check_raises(lambda lib: af(lib).vhp(lambda x: (x * x).sum(), y(lib), y(lib), **kw))
    check_raises(lambda lib: af(lib).hvp(lambda x: (x * x).sum(), y(lib), y(lib), **kw))
    check_raises(lambda lib: af(lib).hvp(lambda x, z: (x ** 3).sum() + z.sum(),
                                         (y(lib), y(lib)), (y(lib), y(lib)), **kw))
    # strict passes: the jacobian of w @ x depends on the captured w, which requires grad
    check_graph(lambda lib, w, x: af(lib).jacobian(lambda x: w @ x, x, **kw), W, Y)
    check_graph(lambda lib, x: af(lib).hessian(lambda x: (x ** 3).sum(), x, **kw), Y)


def test_create_graph_errors():
    y = lambda lib: lib.tensor(Y)  # noqa: E731
    kw = {"create_graph": True}
    check_raises(lambda lib: af(lib).jacobian(lambda x: x, y(lib), strategy="forward-mode",
                                              vectorize=True, **kw))
    check_raises(lambda lib: af(lib).hessian(lambda x: x.sum(), y(lib), vectorize=True,
                                             outer_jacobian_strategy="forward-mode", **kw))
    check_raises(lambda lib: af(lib).jacobian(lambda x: [x], y(lib), **kw))
    check_raises(lambda lib: af(lib).jacobian(lambda x: x, lib.arange(3), **kw))
    check_raises(lambda lib: af(lib).vjp(lambda x: x, y(lib), **kw))
    check_raises(lambda lib: af(lib).vjp(lambda x: x, y(lib), lib.ones(2), **kw))
    check_raises(lambda lib: af(lib).jvp(lambda x: x, y(lib), **kw))
    check_raises(lambda lib: af(lib).hessian(lambda x: x * 2, y(lib), **kw))
    check_raises(lambda lib: af(lib).vhp(lambda x: (x.sum(), x.sum()), y(lib), y(lib), **kw))
    check_raises(lambda lib: af(lib).hvp(lambda x: x * 2, y(lib), y(lib), **kw))
