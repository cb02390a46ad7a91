"""torchjax.autograd.Function against torch.autograd.Function: the grad_fn is the ctx; Functions
inside bigger graphs, nested and differentiated twice; the hooks and modes the engine applies
to every node."""

import importlib
import warnings

import numpy as np
import torch

import torchjax

from ._function_classes import (
    cmp,
    make,
    np_of,
    raises_same,
    t,
    with_backward,
)

# -- the grad_fn is the ctx ---------------------------------------------------------------------

def test_grad_fn_is_ctx():
    def run(lib):
        ns = make(lib)
        x = t(lib, [1.0, 2.0], grad=True)
        w = t(lib, [3.0, 4.0])
        y = ns.MulNew.apply(x, w, 2.0)
        fn = y.grad_fn
        fn.metadata["tag"] = 1
        direct = fn.apply(t(lib, [1.0, 1.0]))
        return (isinstance(fn, lib.autograd.function.FunctionCtx), fn.k, fn.needs_input_grad,
                fn.saved_tensors, fn.metadata, fn._forward_cls is ns.MulNew,
                ns.MulNew._backward_cls.__name__, type(fn) is ns.MulNew._backward_cls,
                direct, fn.name())
    cmp(run)

    def call_node(lib):
        y = make(lib).Exp.apply(t(lib, [1.0], grad=True))
        y.grad_fn(t(lib, [1.0]))
    raises_same(call_node, "object is not callable")


# -- inside bigger graphs, twice, nested, higher order -----------------------------------------

def test_function_inside_a_graph_used_twice():
    def run(lib):
        ns = make(lib)
        x = t(lib, [0.5, 1.0], grad=True)
        w = t(lib, [2.0, 3.0], grad=True)
        a = x.sin()
        b = ns.MulNew.apply(a, w) + ns.MulNew.apply(a * 2, w)
        c = ns.Exp.apply(b * 0.1).sum()
        c.backward(retain_graph=True)
        first = (x.grad.clone(), w.grad.clone())
        c.backward()
        res = (first, x.grad, w.grad)
        try:
            c.backward()
        except RuntimeError as e:
            return res, str(e)[:60]
        return res, None
    cmp(run)


def test_autograd_grad_through_function():
    def run(lib):
        x = t(lib, [0.5, 1.0], grad=True)
        y = make(lib).Exp.apply(x * 2)
        z = (y * y).sum()
        gy, gx = lib.autograd.grad(z, (y, x))
        return gy, gx
    cmp(run)


def test_nested_functions():
    def run(lib):
        x = t(lib, [0.5, 1.0], grad=True)
        o = make(lib).Outer.apply(x)
        o.sum().backward()
        return o, x.grad, o.grad_fn.inner
    cmp(run)


def test_create_graph_double_backward():
    def run(lib):
        ns = make(lib)
        x = t(lib, [0.5, 1.0], grad=True)
        w = t(lib, [2.0, 3.0], grad=True)
        g, = lib.autograd.grad(ns.Cube.apply(x).sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        # through a saved output (Exp): third order
        e1, = lib.autograd.grad(ns.Exp.apply(x).sum(), x, create_graph=True)
        e2, = lib.autograd.grad(e1.sum(), x, create_graph=True)
        e3, = lib.autograd.grad(e2.sum(), x)
        # saved inputs of a new-style Function, mixed second derivatives
        gx, gw = lib.autograd.grad(ns.MulNew.apply(x * x, w).sum(), (x, w), create_graph=True)
        h = lib.autograd.grad((gx * gw).sum(), (x, w))
        # a Function whose backward calls a Function
        n1, = lib.autograd.grad(ns.Outer.apply(x).sum(), x, create_graph=True)
        n2, = lib.autograd.grad(n1.sum(), x)
        return g, g.requires_grad, gg, e1, e2, e3, gx, gw, h, n1, n2
    cmp(run)


def test_once_differentiable():
    def run(lib):
        ns = make(lib)
        x = t(lib, [0.5, 2.0], grad=True)
        y = ns.CubeOnce.apply(x)
        y.sum().backward()
        plain = (x.grad, y.grad_fn.grad_mode)
        # create_graph with an incoming gradient that does not require grad: a plain result
        g0, = lib.autograd.grad(ns.CubeOnce.apply(x).sum(), x, create_graph=True)
        y = ns.CubeOnce.apply(x)
        g, = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        return (plain, g0, g0.requires_grad, g, g.requires_grad, g.grad_fn.name(),
                type(g.grad_fn).__name__, [n.name() for n, _ in g.grad_fn.next_functions])
    cmp(run)

    def again(lib):
        x = t(lib, [0.5, 2.0], grad=True)
        y = make(lib).CubeOnce.apply(x)
        g, = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        (g * x).sum().backward()
    raises_same(again, "trying to differentiate twice a function that was marked with "
                       "@once_differentiable")


def test_gradcheck_on_function():
    def run(lib):
        gc = importlib.import_module(lib.__name__ + ".autograd.gradcheck")
        x = lib.tensor([0.3, -0.7, 1.1], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([1.5, 0.5, -2.0], dtype=lib.float64, requires_grad=True)
        ns = make(lib)
        return (gc.gradcheck(ns.MulNew.apply, (x, w)),
                gc.gradcheck(ns.Cube.apply, (x,)),
                gc.gradgradcheck(ns.Cube.apply, (x,)))
    cmp(run)


# -- hooks and modes the engine applies to every node ------------------------------------------

def test_saved_tensors_hooks_apply_to_saved_tensors():
    def run(lib):
        log = []

        def pack(x):
            log.append(("pack", tuple(x.shape), x.requires_grad))
            return x.detach() * 1

        def unpack(p):
            log.append(("unpack",))
            return p

        ns = make(lib)
        x = t(lib, [1.0, 2.0], grad=True)
        w = t(lib, [[1.0, 2.0], [3.0, 4.0]])
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = ns.SaveIn.apply(x, w)
            e = ns.Exp.apply(x)
            with lib.no_grad():
                ns.Exp.apply(x)  # nothing is saved without a graph
        w.add_(1)  # the hook owns the saved values: no version error
        y.grad_fn.inputs = (x, w)
        y.sum().backward()
        r, = e.grad_fn.saved_tensors
        g, = lib.autograd.grad(e.sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        return (log, x.grad, y.grad_fn.same, r.requires_grad, r.grad_fn is e.grad_fn, g, gg)
    cmp(run)

    def bad_unpack(lib):
        with lib.autograd.graph.saved_tensors_hooks(lambda x: x, lambda p: 3):
            y = make(lib).Exp.apply(t(lib, [1.0], grad=True))
        y.sum().backward()
    raises_same(bad_unpack, "unpack_hook expected to be a Tensor")


def test_anomaly_mode_names_the_function():
    def run(lib):
        X = with_backward(lib, lambda ctx, g: (None, g * float("nan"), g[0]), name="Nan")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                try:
                    X.apply(1.0, t(lib, [[1.0]], grad=True), t(lib, [1.0], grad=True)
                            ).sum().backward()
                except RuntimeError as e:
                    err = str(e)
        return err, [str(m.message).split(".")[0] for m in w]
    cmp(run)


def test_grad_fn_hooks_on_function_node():
    def run(lib):
        x = t(lib, [1.0, 2.0], grad=True)
        y = make(lib).Exp.apply(x)
        seen = []
        y.grad_fn.register_hook(lambda gi, go: seen.append((np_of(gi), np_of(go))))
        y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
        y.sum().backward()
        return x.grad, seen
    cmp(run)


def test_function_under_func_transforms_uses_its_backward():
    """Inside torchjax.func transforms the Function is a jax.custom_vjp: grad, vmap and
    vmap(grad) see its backward, as torch.func does for setup_context-style Functions."""
    def make(lib):
        class Clipped(lib.autograd.Function):
            generate_vmap_rule = True

            @staticmethod
            def forward(x):
                return lib.round(x) * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 2 * (x.abs() < 1.5).to(g.dtype)

        data = lib.tensor([[0.4, 1.6, -1.2], [2.2, -0.3, 0.9]])
        f = lambda r: (Clipped.apply(r) * r).sum()  # noqa: E731
        return (lib.func.grad(f)(data[0]), lib.func.vmap(Clipped.apply)(data),
                lib.func.vmap(lib.func.grad(f))(data))
    for a, b in zip(make(torchjax), make(torch)):
        np.testing.assert_allclose(np.asarray(a.tolist()), b.numpy(), rtol=1e-6)
