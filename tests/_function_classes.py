"""The shared pieces of the torchjax.autograd.Function tests (test_function*.py): the same
Function classes, written once per library, and the helpers that compare torch's and
torchjax's values, gradients and errors."""

import functools
import types

import numpy as np
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
