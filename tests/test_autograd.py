"""Autograd semantics against PyTorch: graph structure, accumulation, errors, grad modes."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import torchjax

LIBS = [torch, torchjax]


def both(fn):
    """Run fn(lib) in both libraries; return the two results."""
    return fn(torch), fn(torchjax)


def np_(t):
    return np.asarray(t.detach().numpy())


def test_grad_fn_names_and_next_functions():
    def f(lib):
        x = lib.tensor(2.0, requires_grad=True)
        y = x * x + 3 * x + 1
        names = []
        stack = [(y.grad_fn, 0)]
        while stack:
            node, depth = stack.pop()
            if node is None:
                names.append((depth, None))
                continue
            names.append((depth, type(node).__name__ if hasattr(node, "name") else str(node)))
            names[-1] = (depth, node.name())
            for nxt, _ in node.next_functions:
                stack.append((nxt, depth + 1))
        return names
    a, b = both(f)
    assert a == b


def test_accumulate_grad_is_shared_per_leaf():
    x = torchjax.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = x * 3
    assert y.grad_fn.next_functions[0][0] is z.grad_fn.next_functions[0][0]
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"
    assert y.grad_fn.next_functions[0][0].variable is x


def test_grads_sum_for_reused_tensor_and_accumulate_across_calls():
    def f(lib):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        (x * x + x.sin() * x).sum().backward()
        g1 = np_(x.grad).copy()
        (x ** 3).sum().backward()
        return g1, np_(x.grad)
    (a1, a2), (b1, b2) = both(f)
    np.testing.assert_allclose(a1, b1, rtol=1e-6)
    np.testing.assert_allclose(a2, b2, rtol=1e-6)


def test_grad_is_accumulated_in_place():
    x = torchjax.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    (x * 2).sum().backward()
    assert x.grad is g
    np.testing.assert_allclose(np_(g), [4.0, 4.0])


def test_retain_grad_and_nonleaf_grad_warning():
    for lib in LIBS:
        x = lib.tensor(2.0, requires_grad=True)
        a = x * 3
        a.retain_grad()
        b = x * 4
        (a * b).backward()
        assert float(a.grad) == pytest.approx(8.0)
        with pytest.warns(UserWarning, match="not a leaf Tensor"):
            assert b.grad is None


def test_second_backward_raises_and_retain_graph_allows_it():
    for lib in LIBS:
        x = lib.tensor(2.0, requires_grad=True)
        y = x * x
        y.backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
            y.backward()
        x2 = lib.tensor(2.0, requires_grad=True)
        y2 = x2 * x2
        y2.backward(retain_graph=True)
        y2.backward()
        assert float(x2.grad) == pytest.approx(8.0)


def test_graph_without_saved_tensors_can_be_replayed():
    # add saves nothing: PyTorch allows a second backward without retain_graph
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x + 1).sum()
        y.backward()
        y.backward()
        np.testing.assert_allclose(np_(x.grad), [2.0, 2.0])


def test_backward_errors():
    for lib in LIBS:
        x = lib.tensor(2.0)
        with pytest.raises(RuntimeError, match="does not require grad and does not have a "
                                               "grad_fn"):
            (x ** 2).backward()
        v = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
            (v * 2).backward()
        with pytest.raises(RuntimeError, match="only Tensors of floating point"):
            lib.tensor([1, 2]).requires_grad_()
        y = v * 2
        with pytest.raises(RuntimeError, match="you can only change requires_grad flags of "
                                               "leaf variables"):
            y.requires_grad = False


def test_backward_with_gradient_argument():
    def f(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * x
        y.backward(lib.tensor([0.1, 1.0, 10.0]))
        return np_(x.grad)
    a, b = both(f)
    np.testing.assert_allclose(a, b, rtol=1e-6)


def test_backward_inputs_restricts_accumulation():
    def f(lib):
        x = lib.tensor(2.0, requires_grad=True)
        w = lib.tensor(3.0, requires_grad=True)
        (x * w).backward(inputs=[w])
        return x.grad, float(w.grad)
    (ax, aw), (bx, bw) = both(f)
    assert ax is None and bx is None and aw == bw


def test_autograd_grad_returns_without_accumulating():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x ** 3).sum()
        (g,) = lib.autograd.grad(y, x)
        return np_(g), x.grad
    (a, ax), (b, bx) = both(f)
    np.testing.assert_allclose(a, b)
    assert ax is None and bx is None


def test_autograd_grad_allow_unused():
    for lib in LIBS:
        x = lib.tensor(1.0, requires_grad=True)
        z = lib.tensor(1.0, requires_grad=True)
        y = x * 2
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            lib.autograd.grad(y, [x, z], retain_graph=True)
        gx, gz = lib.autograd.grad(y, [x, z], allow_unused=True)
        assert gz is None and float(gx) == 2.0


def test_long_chain_has_no_recursion_limit():
    x = torchjax.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 0.0
    y = y * 1.5
    y.backward()
    assert float(x.grad) == 1.5


def test_no_grad_records_nothing():
    for lib in LIBS:
        x = lib.tensor([1.0], requires_grad=True)
        with lib.no_grad():
            y = x * 2
        assert not y.requires_grad and y.grad_fn is None

        @lib.no_grad()
        def f(t):
            return t * 2
        assert not f(x).requires_grad
        with lib.no_grad():
            with lib.enable_grad():
                assert (x * 2).requires_grad
        with lib.set_grad_enabled(False):
            assert not (x * 2).requires_grad
        assert lib.is_grad_enabled()
        lib.set_grad_enabled(False)
        assert not lib.is_grad_enabled()
        lib.set_grad_enabled(True)
        with lib.inference_mode():
            assert not (x * 2).requires_grad
            assert not lib.is_grad_enabled()

        @lib.inference_mode()
        def g(t):
            return t * 2
        assert not g(x).requires_grad


def test_no_grad_decorator_without_parentheses_and_generators():
    @torchjax.no_grad
    def f(t):
        return t * 2

    x = torchjax.tensor([1.0], requires_grad=True)
    assert not f(x).requires_grad

    @torchjax.no_grad()
    def gen(t):
        yield t * 2
        yield t * 3
    assert not any(o.requires_grad for o in gen(x))


def test_grad_mode_is_thread_local():
    seen = []
    with torchjax.no_grad():
        t = threading.Thread(target=lambda: seen.append(torchjax.is_grad_enabled()))
        t.start()
        t.join()
        assert not torchjax.is_grad_enabled()
    assert seen == [True]


def test_inplace_on_leaf_requiring_grad_raises():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                               "in an in-place operation"):
            x.add_(1)
        with lib.no_grad():
            x.add_(1)
        np.testing.assert_allclose(np_(x), [2.0, 3.0])


def test_inplace_records_and_bumps_version():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        v0 = y._version
        y.mul_(3)
        y.add_(1)
        names = y.grad_fn.name()
        y.sum().backward()
        return y._version - v0, names, np_(x.grad)
    a, b = both(f)
    assert a[0] == b[0] == 2 and a[1] == b[1]
    np.testing.assert_allclose(a[2], b[2])


def test_saved_tensor_modified_inplace_raises():
    for lib in LIBS:
        a = lib.tensor([1.0, 2.0], requires_grad=True) * 1
        b = lib.tensor([3.0, 4.0], requires_grad=True) * 1
        c = a * b
        a.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            c.sum().backward()
        # add saves nothing: an in-place change to its input does not matter
        a2 = lib.tensor([1.0, 2.0], requires_grad=True) * 1
        d = a2 + b
        a2.add_(1)
        d.sum().backward()


def test_detach_shares_values_and_version():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0])
        d = x.detach()
        d.add_(5)
        np.testing.assert_allclose(np_(x), [6.0, 7.0])
        assert x._version == d._version
        x.mul_(2)
        np.testing.assert_allclose(np_(d), [12.0, 14.0])
        dd = x.data
        dd.zero_()
        np.testing.assert_allclose(np_(x), [0.0, 0.0])


def test_is_leaf_and_requires_grad_propagation():
    for lib in LIBS:
        x = lib.tensor(2.0, requires_grad=True)
        y = lib.tensor(3.0)
        z = x * y
        assert z.requires_grad and not z.is_leaf and x.is_leaf and y.is_leaf
        assert not (y * y).requires_grad


def test_int_outputs_do_not_require_grad():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        assert not (x > 1).requires_grad


def test_custom_function_wrong_number_of_grads():
    class Bad(torchjax.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    a = torchjax.tensor(1.0, requires_grad=True)
    b = torchjax.tensor(2.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients"):
        Bad.apply(a, b).backward()


def test_register_hook_replaces_gradient():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: g * 10)
        (x * x).sum().backward()
        return np_(x.grad)
    a, b = both(f)
    np.testing.assert_allclose(a, b)


def test_backward_create_graph_leaves_a_differentiable_grad():
    x = torchjax.tensor(1.5, requires_grad=True)
    (x * x * x).backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.item() == 3 * 1.5 ** 2
