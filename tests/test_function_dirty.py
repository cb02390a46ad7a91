"""torchjax.autograd.Function against torch.autograd.Function: mark_dirty, inputs returned as
outputs and views, what backward may return, and misuse of the Function class."""

import warnings

import numpy as np
import pytest

from ._function_classes import (
    check,
    cmp,
    make,
    raises_same,
    t,
    with_backward,
)

# -- mark_dirty, returned inputs and views -----------------------------------------------------

def test_mark_dirty_returns_the_input():
    def run(lib):
        x = t(lib, [1.0, 2.0], grad=True)
        a = x * 1
        v0 = a._version
        b = make(lib).Inplace.apply(a)
        info = (b is a, a._version - v0, a.grad_fn.name(),
                [n.name() for n, _ in a.grad_fn.next_functions])
        b.sum().backward()
        return b, info, x.grad
    cmp(run)


def test_mark_dirty_without_grad():
    def run(lib):
        a = t(lib, [1.0, 2.0])
        r = make(lib).Inplace.apply(a)
        with lib.no_grad():
            x = t(lib, [1.0, 2.0], grad=True)
            r2 = make(lib).Inplace.apply(x)
        return r is a, r.requires_grad, a._version, a, r2.requires_grad, r2 is x
    cmp(run)


def test_mark_dirty_errors_and_warning():
    raises_same(lambda lib: make(lib).Inplace.apply(t(lib, [1.0], grad=True)),
                "a leaf Variable that requires grad")

    def not_returned(lib):
        class D(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g
        return D.apply(t(lib, [1.0], grad=True) * 1)
    raises_same(not_returned, "Some elements marked as dirty")

    def not_input(lib):
        class D(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.mark_dirty(y)
                return y

            @staticmethod
            def backward(ctx, g):
                return g * 2
        x = t(lib, [1.0], grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = D.apply(x * 1)
        y.sum().backward()
        return [str(m.message).split(" (Triggered")[0] for m in w], x.grad
    cmp(not_input)

    def bad_args(lib, call):
        class D(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                call(ctx, y)
                return y

            @staticmethod
            def backward(ctx, g):
                return g
        return D.apply(t(lib, [1.0], grad=True))
    raises_same(lambda lib: bad_args(lib, lambda ctx, y: ctx.mark_dirty(3)),
                "mark_dirty can only accept variables, but argument ", prefix=True)
    raises_same(lambda lib: bad_args(lib, lambda ctx, y: ctx.mark_non_differentiable(y, 3)),
                "mark_non_differentiable only accepts variable arguments, but got ", prefix=True)


def test_mark_dirty_on_a_view():
    def run(lib):
        leaf = t(lib, [1.0, 2.0, 3.0], grad=True)
        base = leaf * 1
        v = base[:2]
        r = make(lib).Inplace.apply(v)
        info = (r is v, r.grad_fn.name(), base.grad_fn.name())
        (base * t(lib, [1.0, 2.0, 3.0])).sum().backward()
        return base, info, leaf.grad
    cmp(run)

    def two_outputs(lib):
        class D(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x, x * 2

            @staticmethod
            def backward(ctx, g, g2):
                return g * 2
        return D.apply((t(lib, [1.0, 2.0, 3.0], grad=True) * 1)[:2])
    raises_same(two_outputs, "cannot return more than one Tensor")


def test_input_returned_as_is_and_view_outputs():
    def run(lib):
        ns = make(lib)
        x = t(lib, [1.0, 2.0, 3.0], grad=True)
        r = ns.Ident.apply(x)
        info = (r is x, r._base is x, r.grad_fn.name(), x.is_leaf)
        r.sum().backward()
        g1 = x.grad.clone()
        x.grad = None
        h = ns.Head.apply(x)
        info2 = (h._base is x, h.grad_fn.name())
        (h * t(lib, [2.0, 3.0])).sum().backward()
        xn = t(lib, [1.0, 2.0])
        r2 = ns.Ident.apply(xn)
        with lib.no_grad():
            r3 = ns.Ident.apply(x)
            xn.add_(1)  # the returned alias shares the input's values
        return info, g1, info2, x.grad, (r2 is xn, r2.requires_grad, r2), (r3 is x,
                                                                            r3.requires_grad)
    cmp(run)


def test_same_tensor_returned_twice():
    def run(lib):
        x = t(lib, [1.0, 2.0], grad=True)
        a, b = make(lib).Dup.apply(x)
        (a.sum() + 2 * b.sum()).backward()
        return a is b, x.grad, a.grad_fn.got
    cmp(run)


# -- what backward returns ---------------------------------------------------------------------

BACKWARDS = {
    "one_short": lambda ctx, g: (None, g),
    "single": lambda ctx, g: g,
    "none": lambda ctx, g: None,
    "list": lambda ctx, g: [None, g, g.sum(0)],
    "trailing_none": lambda ctx, g: (None, g, g.sum(0), None, None),
    "extra_tensor": lambda ctx, g: (None, g, g.sum(0), g),
    "grad_for_scalar_arg": lambda ctx, g: (g, g, g.sum(0)),
    "not_a_tensor": lambda ctx, g: (None, 3.0, g.sum(0)),
    "bad_shape": lambda ctx, g: (None, g[0], g.sum(0)),
    "bad_shape_1": lambda ctx, g: (None, g, lib_ones_like(g[0, :1])),
    "scalar_grad": lambda ctx, g: (None, g, g.sum()),
    "broadcast_summed": lambda ctx, g: (None, g.unsqueeze(0).expand(4, 2, 3), g),
    "double_cast": lambda ctx, g: (None, g.double(), g.sum(0)),
    "long_cast": lambda ctx, g: (None, g, g.sum(0).long()),
    "complex_for_real": lambda ctx, g: (None, g * 1j, g.sum(0)),
}


def lib_ones_like(g):
    return g * 0 + 1


@pytest.mark.parametrize("case", sorted(BACKWARDS))
def test_backward_results_checked(case):
    def run(lib):
        X = with_backward(lib, BACKWARDS[case])
        x = t(lib, np.ones((2, 3)), grad=True)
        y = t(lib, [1.0, 2.0, 3.0], grad=True)
        X.apply(2.0, x, y).sum().backward()
        return x.grad, y.grad
    check(run)


def test_gradient_for_input_without_grad_is_ignored():
    def run(lib):
        X = with_backward(lib, lambda ctx, g: (None, g, g[0]))
        x = t(lib, np.ones((2, 3)), grad=True)
        y = t(lib, [1.0, 2.0, 3.0])
        X.apply(2.0, x, y).sum().backward()
        return x.grad, y.grad
    check(run)


def test_backward_vjp_variants():
    def run(lib):
        x = t(lib, [1.0, 2.0], grad=True)
        make(lib).VjpOnly.apply(x).sum().backward()
        a, b = make(lib).Boxed.apply(x)
        (a + b).sum().backward()
        return x.grad, a.grad_fn.kind
    cmp(run)

    def both(lib):
        class B(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

            @staticmethod
            def vjp(ctx, g):
                return g
        B.apply(t(lib, [1.0], grad=True)).sum().backward()
    raises_same(both, "Implementing both 'backward' and 'vjp'")

    def missing(lib):
        class B(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
        B.apply(t(lib, [1.0], grad=True)).sum().backward()
    raises_same(missing, "You must implement either the backward or vjp method")


def test_misuse_of_function_class():
    class_ = lambda lib: type(lib.autograd.Function)(  # noqa: E731
        "NoFwd", (lib.autograd.Function,), {})
    raises_same(lambda lib: class_(lib).apply(t(lib, [1.0], grad=True)),
                "You must implement the forward function")
    raises_same(lambda lib: lib.autograd.Function.apply(t(lib, [1.0])))

    def instantiate(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            f = make(lib).Exp()
        assert [m.category for m in w] == [DeprecationWarning]
        f(t(lib, [1.0]))
    raises_same(instantiate, "Legacy autograd function with non-static forward method")

    def setup_missing(lib):
        return lib.autograd.Function.setup_context(None, (), None)
    raises_same(setup_missing)

    def vmap_attr(lib):
        class V(lib.autograd.Function):
            generate_vmap_rule = True

            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        x = t(lib, [1.0], grad=True)
        V.apply(x).sum().backward()
        return x.grad
    cmp(vmap_attr)
