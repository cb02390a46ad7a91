"""Tensor and grad_fn hooks against PyTorch: Tensor.register_hook on leaves and non-leaves,
retain_grad, register_post_accumulate_grad_hook, grad_fn.register_hook / register_prehook.
Each scenario runs the same code with both libraries and compares what the hooks saw, in
which order, and the resulting gradients."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchjax

LIBS = (torch, torchjax)


def rec(x):
    """A comparable record: tensors become (type, shape, values); other values stay."""
    if isinstance(x, (torch.Tensor, torchjax.Tensor)):
        return ("Tensor", tuple(x.shape), np.asarray(x.detach().numpy()).tolist())
    if isinstance(x, (tuple, list)):
        return (type(x).__name__, [rec(v) for v in x])
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    return ("other", type(x).__name__)  # e.g. a raw array where PyTorch gives a Tensor


def assert_same(got, expected):
    if isinstance(expected, tuple) and expected[:1] == ("Tensor",):
        assert isinstance(got, tuple) and got[:2] == expected[:2], (got, expected)
        np.testing.assert_allclose(np.asarray(got[2], dtype=np.float64),
                                   np.asarray(expected[2], dtype=np.float64), rtol=1e-6)
        return
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected), (got, expected)
        for g, e in zip(got, expected):
            assert_same(g, e)
        return
    assert got == expected


def same(fn):
    expected = fn(torch)
    assert_same(fn(torchjax), expected)
    return expected


def error_of(fn, lib):
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value).__name__, str(info.value)


def vec(lib, *values):
    return lib.tensor([float(v) for v in values], requires_grad=True)


# -- Tensor.register_hook on leaves ------------------------------------------------------------

def test_leaf_hooks_observe_replace_in_order_and_remove():
    def run(lib):
        log = []
        x = vec(lib, 1, 2, 3)
        x.register_hook(lambda g: log.append(("h1", rec(g))))
        h2 = x.register_hook(lambda g: g * 2)
        x.register_hook(lambda g: log.append(("h3", rec(g))))  # sees h2's result
        (x * x).sum().backward()
        log.append(("grad", rec(x.grad)))
        h2.remove()
        h2.remove()
        x.grad = None
        (x * x).sum().backward()
        log.append(("grad", rec(x.grad)))
        return log
    same(run)


def test_leaf_hook_runs_once_with_the_summed_gradient_each_backward():
    def run(lib):
        log = []
        x = vec(lib, 1, 2, 3)
        x.register_hook(lambda g: log.append(rec(g)))
        loss = (x * x + x).sum()
        loss.backward(retain_graph=True)
        loss.backward()
        return log, rec(x.grad)
    same(run)


def test_hook_handle_as_context_manager():
    def run(lib):
        log = []
        x = vec(lib, 1, 2)
        with x.register_hook(lambda g: log.append("in")):
            x.sum().backward()
        x.sum().backward()
        return log
    assert same(run) == ["in"]


def test_hook_registration_errors():
    def no_grad_tensor(lib):
        lib.ones(2).register_hook(lambda g: None)

    def post_acc_on_non_leaf(lib):
        (vec(lib, 1) * 2).register_post_accumulate_grad_hook(lambda t: None)

    for fn in (no_grad_tensor, post_acc_on_non_leaf):
        assert error_of(fn, torchjax) == error_of(fn, torch)


def test_hook_changing_the_gradient_shape_is_an_error():
    def run(lib):
        x = vec(lib, 1, 2, 3)
        x.register_hook(lambda g: lib.ones(2))
        (x * x).sum().backward()
    assert error_of(run, torchjax) == error_of(run, torch)


# -- Tensor.register_hook on non-leaves, retain_grad ---------------------------------------------

def test_non_leaf_hook_observes_the_gradient():
    def run(lib):
        log = []
        x = vec(lib, 1, 2, 3)
        y = x * 2
        y.register_hook(lambda g: log.append(rec(g)))
        (y * y + y).sum().backward()  # two uses: one call with the sum
        return log, rec(x.grad), y.retains_grad
    same(run)


def test_non_leaf_hook_replaces_the_gradient_upstream():
    def run(lib):
        x = vec(lib, 1, 2, 3)
        y = x * 2
        y.register_hook(lambda g: g * 10)
        (y * y).sum().backward()
        return rec(x.grad)
    same(run)


def test_non_leaf_hook_does_not_fill_grad():
    def run(lib):
        x = vec(lib, 1, 2, 3)
        y = x * 2
        y.register_hook(lambda g: None)
        y.sum().backward()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # reading a non-leaf's .grad warns in both
            return y.grad is None
    assert same(run) is True


@pytest.mark.parametrize("retain_first", [True, False])
def test_retained_grad_sees_the_hook_modified_gradient(retain_first):
    """PyTorch's retain_grad hook always runs last, whatever the registration order."""
    def run(lib):
        log = []
        x = vec(lib, 1, 2, 3)
        y = x * 2
        if retain_first:
            y.retain_grad()
        y.register_hook(lambda g: log.append(rec(g)) or g * 10)
        y.register_hook(lambda g: log.append(rec(g)))
        if not retain_first:
            y.retain_grad()
        (y * y).sum().backward()
        return log, rec(y.grad), y.retains_grad
    same(run)


def test_hooks_registered_before_and_after_an_in_place_op():
    def run(lib):
        log = []
        x = vec(lib, 1, 2, 3)
        y = x * 2
        y.register_hook(lambda g: log.append(("before", rec(g))))
        y.mul_(5)
        y.register_hook(lambda g: log.append(("after", rec(g))))
        (y * y).sum().backward()
        return log, rec(x.grad)
    same(run)


def test_hook_on_a_view():
    def run(lib):
        log = []
        x = vec(lib, 1, 2, 3) * 1
        v = x[1:]
        v.register_hook(lambda g: log.append(rec(g)))
        (v * v).sum().backward()
        return log
    same(run)


# -- register_post_accumulate_grad_hook --------------------------------------------------------

def test_post_accumulate_grad_hook_sees_the_accumulated_grad():
    def run(lib):
        log = []
        x = vec(lib, 1, 2, 3)
        x.register_hook(lambda g: log.append(("pre", rec(g), x.grad is None)) or g + 1)
        h = x.register_post_accumulate_grad_hook(lambda t: log.append(("post", rec(t.grad))))
        (x * x).sum().backward()
        (x * x).sum().backward()
        h.remove()
        (x * x).sum().backward()
        return log, rec(x.grad)
    same(run)


def test_post_accumulate_grad_hook_can_step_in_place():
    """The optimizer-in-backward pattern: the hook updates the parameter and clears .grad."""
    def run(lib):
        w = vec(lib, 1, 2, 3)

        def step(p):
            with lib.no_grad():
                p.sub_(0.5 * p.grad)
            p.grad = None
        w.register_post_accumulate_grad_hook(step)
        for _ in range(2):
            (w * w).sum().backward()
        return rec(w), w.grad
    same(run)


# -- with autograd.grad and backward(inputs=...) ------------------------------------------------

def test_hooks_run_for_autograd_grad_inputs():
    def run(lib):
        log = []
        x = vec(lib, 1, 2, 3)
        x.register_hook(lambda g: log.append(rec(g)) or g * 2)
        (g,) = lib.autograd.grad((x * x).sum(), x)
        return log, rec(g), x.grad
    same(run)


def test_hooks_run_for_backward_with_inputs():
    def run(lib):
        log = []
        x = vec(lib, 1, 2, 3)
        x.register_hook(lambda g: log.append(rec(g)) or g * 2)
        (x * x).sum().backward(inputs=[x])
        return log, rec(x.grad)
    same(run)


# -- grad_fn hooks ----------------------------------------------------------------------------

def test_node_hooks_order_and_remove():
    def run(lib):
        log = []
        x, w = vec(lib, 1, 2, 3), vec(lib, 4, 5, 6)
        y = x * w
        y.grad_fn.register_prehook(lambda go: log.append("node-pre"))
        y.register_hook(lambda g: log.append("tensor-hook"))
        y.grad_fn.register_hook(lambda gi, go: log.append("node-post"))
        h = y.grad_fn.register_prehook(lambda go: log.append("removed"))
        h.remove()
        y.sum().backward()
        return log
    assert same(run) == ["tensor-hook", "node-pre", "node-post"]


def test_node_hooks_get_tuples_of_tensors():
    def run(lib):
        log = []
        x, w = vec(lib, 1, 2, 3), vec(lib, 4, 5, 6)
        y = x * w
        y.grad_fn.register_prehook(lambda go: log.append(("pre", rec(go))))
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", rec(gi), rec(go))))
        y.sum().backward()
        return log
    same(run)


def test_node_post_hook_replaces_grad_inputs():
    def run(lib):
        x, w = vec(lib, 1, 2, 3), vec(lib, 4, 5, 6)
        y = x * w
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0, gi[1]))
        y.sum().backward()
        return rec((x.grad, w.grad))
    same(run)


def test_node_pre_hook_replaces_grad_outputs():
    def run(lib):
        x, w = vec(lib, 1, 2, 3), vec(lib, 4, 5, 6)
        y = x * w
        y.grad_fn.register_prehook(lambda go: (go[0] * 3,))
        y.sum().backward()
        return rec((x.grad, w.grad))
    same(run)


def test_accumulate_grad_node_hooks():
    def run(lib):
        log = []
        x = vec(lib, 1, 2, 3)
        y = x * 2
        acc = y.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda go: log.append("acc-pre"))
        acc.register_hook(lambda gi, go: log.append(("acc-post", len(gi))))
        x.register_hook(lambda g: log.append("x-hook"))
        x.register_post_accumulate_grad_hook(lambda t: log.append("post-acc"))
        y.sum().backward()
        return log
    same(run)


def test_post_accumulate_grad_hook_returning_a_value_raises():
    # (PyTorch: such a hook is called for its side effects only)
    for lib in (torch, torchjax):
        w = lib.ones(3, requires_grad=True)
        w.register_post_accumulate_grad_hook(lambda p: p.grad.mul_(0.5))
        with pytest.raises(RuntimeError, match="post accumulate grad hooks should return None"):
            (w * 2).sum().backward()
