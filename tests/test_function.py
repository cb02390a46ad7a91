"""torchjax.autograd.Function against torch.autograd.Function: the same Function classes
(tests/_function_classes.py), written once per library, must give the same values, gradients,
grad_fn structure and errors. Here: forward styles, arguments, outputs and saved tensors
(mark_dirty and backward's results: test_function_dirty.py; graphs and hooks:
test_function_graphs.py)."""


import pytest

from ._function_classes import (
    check,
    cmp,
    make,
    raises_same,
    t,
)

# -- forward styles, arguments and outputs --------------------------------------------------------

def test_exp_values_grad_and_node():
    def run(lib):
        x = t(lib, [0.5, 1.0, -1.0], grad=True)
        y = make(lib).Exp.apply(x)
        fn = y.grad_fn
        y.sum().backward()
        return (y, x.grad, fn.name(), type(fn).__name__, repr(fn).split(" object")[0],
                [type(n).__name__ for n, _ in fn.next_functions],
                [n.name() for n, _ in fn.next_functions], y.is_leaf, y.requires_grad)
    cmp(run)


def test_old_style_keywords_and_defaults():
    for call in (lambda S, x: S.apply(x), lambda S, x: S.apply(x, 3.0),
                 lambda S, x: S.apply(x, j=5.0, k=2.0), lambda S, x: S.apply(x=x),
                 lambda S, x: S.apply(x, 1.0, j=4.0)):
        def run(lib, call=call):
            x = t(lib, [1.0, 2.0], grad=True)
            y = call(make(lib).Scale, x)
            y.sum().backward()
            return y, x.grad, y.grad_fn.needs_input_grad
        check(run)
    # PyTorch binds keywords to positions without filling defaults in between
    for call in (lambda S, x: S.apply(x, j=5.0), lambda S, x: S.apply(x, 2.0, k=3.0),
                 lambda S, x: S.apply(x, zz=3.0), lambda S, x: S.apply(x, 1.0, 2.0, 3.0)):
        raises_same(lambda lib, call=call: call(make(lib).Scale, t(lib, [1.0], grad=True)))


def test_keyword_only_and_var_keyword_forward_rejected():
    def run(lib):
        class K(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, *, scale):
                return x * scale

            @staticmethod
            def backward(ctx, g):
                return g
        return K.apply(t(lib, [1.0], grad=True), scale=2)
    raises_same(run, "unexpected keyword argument 'scale'")


def test_new_style_setup_context():
    for kw in ({}, {"k": 3.0}):
        def run(lib, kw=kw):
            F = make(lib).MulNew
            x, w = t(lib, [1.0, 2.0], grad=True), t(lib, [3.0, 4.0], grad=True)
            y = F.apply(x, w, **kw)
            seen = y.grad_fn.seen
            y.sum().backward()
            return y, x.grad, w.grad, seen, y.grad_fn.needs_input_grad, y.grad_fn.k
        check(run)
    raises_same(lambda lib: make(lib).MulNew.apply(t(lib, [1.0]), t(lib, [1.0]), zz=2),
                "unexpected keyword argument 'zz'")


def test_non_tensor_outputs_and_materialized_grads():
    def run(lib):
        x = t(lib, [1.0, 2.0], grad=True)
        out = make(lib).Multi.apply(x)
        kinds = [type(o).__name__ if not isinstance(o, lib.Tensor) else
                 (o.requires_grad, o.grad_fn is None) for o in out]
        out[0].sum().backward()
        got = [None if g is None else (str(g[0]), g[1], g[2]) for g in out[0].grad_fn.got]
        return out, kinds, x.grad, got
    cmp(run)


def test_set_materialize_grads_false():
    def run(lib):
        x = t(lib, [1.0, 2.0], grad=True)
        a, b = make(lib).MultiNoMat.apply(x)
        b.sum().backward()
        return x.grad, a.grad_fn.got
    cmp(run)


def test_mark_non_differentiable():
    def run(lib):
        x = t(lib, [1.0, 2.0], grad=True)
        a, b = make(lib).NonDiff.apply(x)
        info = (b.requires_grad, b.grad_fn is None, b.is_leaf, a.grad_fn.name())
        a.sum().backward()
        return a, b, info, x.grad, a.grad_fn.got
    cmp(run)
    raises_same(lambda lib: make(lib).NonDiff.apply(t(lib, [1.0], grad=True))[1].sum()
                .backward())


def test_single_tuple_list_and_plain_outputs():
    def run(lib):
        F = lib.autograd.Function
        x = t(lib, [1.0, 2.0], grad=True)

        class T1(F):
            @staticmethod
            def forward(ctx, x):
                return (x * 2,)

            @staticmethod
            def backward(ctx, g):
                return g

        class L1(F):
            @staticmethod
            def forward(ctx, x):
                return [x * 2, x * 3]

            @staticmethod
            def backward(ctx, g):
                return g

        class S(F):
            @staticmethod
            def forward(ctx, x):
                return 3

            @staticmethod
            def backward(ctx, g):
                return g

        r1, r2, r3 = T1.apply(x), L1.apply(x), S.apply(x)
        return (type(r1).__name__, r1[0].grad_fn.name(), type(r2).__name__,
                [o.requires_grad for o in r2], r3)
    cmp(run)


def test_no_grad_and_inputs_without_grad():
    def run(lib):
        x = t(lib, [1.0, 2.0], grad=True)
        E = make(lib).Scale
        with lib.no_grad():
            a = E.apply(x)
        b = E.apply(x.detach())
        ctxs = []

        class Spy(lib.autograd.Function):
            @staticmethod
            def forward(ctx, k, x, y):
                ctxs.append((ctx.needs_input_grad, lib.is_grad_enabled()))
                return x * y

            @staticmethod
            def backward(ctx, g):
                return None, g, g

        with lib.no_grad():
            Spy.apply(1, x, t(lib, [1.0, 1.0]))
        c = Spy.apply(1, x, t(lib, [1.0, 1.0]))
        return (a.requires_grad, a.grad_fn is None, b.requires_grad, ctxs,
                c.grad_fn.needs_input_grad, [n is None for n, _ in c.grad_fn.next_functions])
    cmp(run)


def test_function_with_integer_tensor_input():
    def run(lib):
        F = lib.autograd.Function

        class Gather(F):
            @staticmethod
            def forward(ctx, idx, x):
                ctx.save_for_backward(idx)
                ctx.n = x.shape[0]
                return x[idx]

            @staticmethod
            def backward(ctx, g):
                idx, = ctx.saved_tensors
                return None, lib.zeros(ctx.n).index_add(0, idx, g)

        x = t(lib, [1.0, 2.0, 3.0], grad=True)
        y = Gather.apply(lib.tensor([0, 2, 2]), x)
        (y * t(lib, [1.0, 2.0, 3.0])).sum().backward()
        return y, x.grad, y.grad_fn.needs_input_grad
    cmp(run)


# -- saved tensors ------------------------------------------------------------------------------

def test_saved_tensors_inputs_outputs_intermediates():
    def run(lib):
        ns = make(lib)
        x = t(lib, [1.0, 2.0], grad=True)
        w = t(lib, [[1.0, 2.0], [3.0, 4.0]])
        y = ns.SaveIn.apply(x, w)
        y.grad_fn.inputs = (x, w)
        y.sum().backward()
        same = y.grad_fn.same
        z = ns.SaveMid.apply(x)
        mid = (z.grad_fn.in_forward, z.grad_fn.saved_tensors[1] is None)
        e = ns.Exp.apply(x)
        r, = e.grad_fn.saved_tensors
        out = (r is e, r.grad_fn is e.grad_fn, r.requires_grad)
        z.sum().backward()
        return x.grad, same, mid, out, z.grad_fn.m
    cmp(run)


@pytest.mark.parametrize("case", ["output", "input", "nonleaf_input", "intermediate"])
def test_saved_tensor_modified_in_place(case):
    def run(lib):
        ns = make(lib)
        x = t(lib, [1.0, 2.0], grad=True)
        if case == "output":
            y = ns.Exp.apply(x)
            with lib.no_grad():
                y.mul_(2)
        elif case in ("input", "nonleaf_input"):
            w = t(lib, [[1.0, 2.0], [3.0, 4.0]])
            if case == "input":
                y = ns.SaveIn.apply(x, w)
                w.add_(1)
            else:
                x2 = x * 1
                y = ns.SaveIn.apply(x2, w)
                with lib.no_grad():
                    x2.add_(1)
        else:
            y = ns.SaveMid.apply(x)
            y.grad_fn.m.add_(1)
        y.sum().backward()
    raises_same(run, "modified by an inplace operation")


def test_saved_tensors_freed_and_retain_graph():
    def run(lib, retain):
        ns = make(lib)
        x = t(lib, [1.0, 2.0], grad=True)
        y = ns.SaveMid.apply(x)
        y.sum().backward(retain_graph=retain)
        return y.grad_fn.saved_tensors
    check(lambda lib: run(lib, True))
    raises_same(lambda lib: run(lib, False), "Trying to backward through the graph a second")

    def nothing_saved(lib):
        x = t(lib, [1.0, 2.0], grad=True)
        y = make(lib).Scale.apply(x)
        y.sum().backward()
        y.sum().backward()  # nothing saved: PyTorch runs the backward again
        return x.grad, y.grad_fn.k
    cmp(nothing_saved)
    # but ctx.saved_tensors after a backward is an error even with nothing saved
    raises_same(_saved_after_backward, "Trying to backward through the graph a second")


def _saved_after_backward(lib):
    y = make(lib).Scale.apply(t(lib, [1.0], grad=True))
    y.sum().backward()
    return y.grad_fn.saved_tensors


def test_save_for_backward_rejects_non_tensors():
    def run(lib, value):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, value)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g
        return Bad.apply(t(lib, [1.0], grad=True))
    raises_same(lambda lib: run(lib, 3))
    raises_same(lambda lib: run(lib, "a"))
