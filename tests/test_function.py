"""torchjax.autograd.Function against torch.autograd.Function: the same Function classes,
written once per library, must give the same values, gradients, grad_fn structure and
errors."""

import functools
import importlib
import types
import warnings

import numpy as np
import pytest
import torch

import torchjax

LIBS = (torch, torchjax)


def np_of(x):
    """Tensors (nested in tuples/lists) as numpy arrays; other values as they are."""
    if isinstance(x, (tuple, list)):
        return type(x)(np_of(v) for v in x)
    if isinstance(x, (torch.Tensor, torchjax.Tensor)):
        return np.asarray(x.detach().numpy())
    return x


def assert_same(a, b):
    a, b = np_of(a), np_of(b)
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), (a, b)
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    else:
        assert a == b, (a, b)


def outcome(fn, lib):
    """fn(lib)'s result, or the type and message of what it raised."""
    try:
        return ("ok", np_of(fn(lib)))
    except Exception as e:  # noqa: BLE001 - the comparison is the point
        return (type(e).__name__, str(e))


def check(fn):
    """fn gives the same result, or raises the same error, in torch and torchjax."""
    a, b = outcome(fn, torch), outcome(fn, torchjax)
    assert a[0] == b[0], (a, b)
    if a[0] == "ok":
        assert_same(a[1], b[1])
    else:
        assert a[1] == b[1], (a[1], b[1])
    return a


def raises_same(fn, phrase=None, prefix=False):
    """Both libraries raise the same error type and message (with prefix: torchjax's message
    continues PyTorch's, where PyTorch's C++ message is cut short)."""
    a, b = outcome(fn, torch), outcome(fn, torchjax)
    assert a[0] == b[0] != "ok", (a, b)
    if prefix:
        assert b[1].startswith(a[1]), (a[1], b[1])
    else:
        assert a[1] == b[1], (a[1], b[1])
    if phrase is not None:
        assert phrase in a[1], a[1]
    return a


def cmp(fn):
    """Run fn(lib) for both libraries and compare the (nested) results."""
    assert_same(fn(torch), fn(torchjax))


def t(lib, data, grad=False, dtype=None):
    return lib.tensor(data, dtype=dtype or lib.float32, requires_grad=grad)


# -- the Function classes, written once for both libraries ---------------------------------------

@functools.cache
def make(lib):
    F = lib.autograd.Function
    once = lib.autograd.function.once_differentiable
    ns = types.SimpleNamespace()

    class Exp(F):
        @staticmethod
        def forward(ctx, x):
            r = x.exp()
            ctx.save_for_backward(r)
            return r

        @staticmethod
        def backward(ctx, g):
            r, = ctx.saved_tensors
            return g * r

    class Scale(F):  # old style with a non-tensor argument that has a default
        @staticmethod
        def forward(ctx, x, k=2.0, j=1.0):
            ctx.k = k * j
            return x * ctx.k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None, None

    class MulNew(F):  # new style: forward without ctx, setup_context
        @staticmethod
        def forward(x, w, k=1.0):
            return x * w * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, w, k = inputs
            ctx.save_for_backward(x, w)
            ctx.k = k
            ctx.seen = (len(inputs), k, output.requires_grad, output.grad_fn is None,
                        lib.is_grad_enabled())

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w * ctx.k, g * x * ctx.k, None

    class Multi(F):  # tensor and non-tensor outputs
        @staticmethod
        def forward(ctx, x):
            return x * 2, 5, None, (x * 10).long(), x * 3

        @staticmethod
        def backward(ctx, *gs):
            ctx.got = [None if g is None else (g.dtype, tuple(g.shape), g.sum().item())
                       for g in gs]
            return gs[0] * 2 + gs[4] * 3

    class MultiNoMat(F):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            ctx.got = (ga is None, gb is None)
            out = 0
            if ga is not None:
                out = out + ga * 2
            if gb is not None:
                out = out + gb * 3
            return out

    class NonDiff(F):
        @staticmethod
        def forward(ctx, x):
            a, b = x * 2, x * 3
            ctx.mark_non_differentiable(b)
            return a, b

        @staticmethod
        def backward(ctx, ga, gb):
            ctx.got = (ga.sum().item(), gb.abs().sum().item())
            return ga * 2

    class Inplace(F):  # modifies its input and marks it dirty
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Ident(F):  # returns its input as is
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class Head(F):  # returns a view of its input
        @staticmethod
        def forward(ctx, x):
            ctx.n = x.shape[0]
            return x[:2]

        @staticmethod
        def backward(ctx, g):
            return lib.cat([g, g.new_zeros(ctx.n - 2)])

    class Cube(F):  # backward made of differentiable ops: double backward works
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3 * x ** 2

    class CubeOnce(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @once
        def backward(ctx, g):
            x, = ctx.saved_tensors
            ctx.grad_mode = lib.is_grad_enabled()
            return g * 3 * x ** 2

    class Outer(F):  # a Function that calls another in forward and in backward
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            y = Exp.apply(x)
            ctx.inner = (y.requires_grad, y.grad_fn is None)
            return y * 2

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return Exp.apply(x) * 2 * g

    class SaveMid(F):  # saves an intermediate
        @staticmethod
        def forward(ctx, x):
            m = x * 2
            ctx.save_for_backward(m, None)
            ctx.m = m
            ctx.in_forward = len(ctx.saved_tensors)
            return m * 3

        @staticmethod
        def backward(ctx, g):
            m, none = ctx.saved_tensors
            return g * m

    class SaveIn(F):  # saves its inputs
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            ctx.same = (x is ctx.inputs[0], w is ctx.inputs[1])
            return (g * w).sum(0), g * x

    class Dup(F):  # the same tensor returned twice
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            return y, y

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.got = (g1.sum().item(), g2.sum().item())
            return (g1 + g2) * 2

    class Boxed(F):
        boxed_grads_call = True

        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, grads):
            ctx.kind = type(grads).__name__
            return grads[0] * 2 + grads[1] * 3

    class VjpOnly(F):
        @staticmethod
        def forward(ctx, x):
            return x * 4

        @staticmethod
        def vjp(ctx, g):
            return g * 4

    for k, v in dict(locals()).items():
        if isinstance(v, type):
            setattr(ns, k, v)
    return ns


def with_backward(lib, bw, name="X"):
    """A Function X(k, x, y) = x * y * k whose backward is `bw`."""
    def backward(ctx, g):
        return bw(ctx, g)
    return type(lib.autograd.Function)(name, (lib.autograd.Function,), {
        "forward": staticmethod(lambda ctx, k, x, y: x * y * k),
        "backward": staticmethod(backward)})


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
