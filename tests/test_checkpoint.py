"""torchjax.utils.checkpoint against torch.utils.checkpoint: values, gradients, errors."""

from __future__ import annotations

import gc
import warnings
import weakref

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tck
from jax.core import Tracer

import torchjax
import torchjax.utils.checkpoint as jck
from torchjax import _dispatch

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 6)).astype(np.float32)
W1 = RNG.standard_normal((6, 5)).astype(np.float32)
W2 = RNG.standard_normal((5, 3)).astype(np.float32)
B1 = RNG.standard_normal(5).astype(np.float32)


def np_(t):
    return np.asarray(t.detach().numpy())


def libs():
    return ((torch, tck), (torchjax, jck))


def close(a, b, **kw):
    np.testing.assert_allclose(np_(a) if not isinstance(a, np.ndarray) else a,
                               np_(b) if not isinstance(b, np.ndarray) else b,
                               rtol=1e-5, atol=1e-5, **kw)


def _setup(lib):
    x = lib.tensor(X, requires_grad=True)
    w1 = lib.tensor(W1, requires_grad=True)
    w2 = lib.tensor(W2, requires_grad=True)
    b1 = lib.tensor(B1, requires_grad=True)

    def block(h, scale=1.0):  # reads the closure tensors w1, b1, w2 (like module parameters)
        return (lib.tanh(h @ w1 + b1) @ w2) * scale
    return x, (w1, w2, b1), block


# -- gradients equal the un-checkpointed ones --------------------------------------------------

@pytest.mark.parametrize("reentrant", [True, False])
def test_grads_match_plain_and_torch(reentrant):
    res = []
    for lib, ck in libs():
        x, params, block = _setup(lib)
        y = ck.checkpoint(block, x, use_reentrant=reentrant)
        (y.sin().sum()).backward()
        res.append((y, x.grad, *(p.grad for p in params)))
        # the same program without checkpoint
        x2, params2, block2 = _setup(lib)
        block2(x2).sin().sum().backward()
        for a, b in zip(res[-1][1:], (x2.grad, *(p.grad for p in params2))):
            close(a, b)
    for a, b in zip(*res):
        close(a, b)
    name = "CheckpointFunctionBackward" if reentrant else "CheckpointBackward"
    assert type(res[1][0].grad_fn).__name__ == name
    if reentrant:
        assert type(res[0][0].grad_fn).__name__ == name


def test_multiple_outputs_non_tensor_args_kwargs_and_int_outputs():
    res = []
    for lib, ck in libs():
        x, (w1, w2, b1), _ = _setup(lib)

        def f(h, k, *, power):
            z = lib.tanh(h @ w1 + b1)
            return {"a": z * k, "b": (z ** power).sum(), "idx": z.argmax(1), "tag": "ok"}, 7

        out, seven = ck.checkpoint(f, x, 3.0, power=2, use_reentrant=False)
        assert seven == 7 and out["tag"] == "ok"
        assert not out["idx"].requires_grad and out["idx"].dtype == lib.int64
        # only "b" takes part in the loss: "a"'s gradient is zero
        out["b"].backward()
        res.append((out["a"], out["b"], out["idx"], x.grad, w1.grad, b1.grad))
        assert w2.grad is None
    for a, b in zip(*res):
        close(a, b)


def test_outputs_that_need_no_grad():
    for lib, ck in libs():
        x = lib.tensor(X)  # no input requires grad: nothing to record
        w = lib.tensor(W1)
        y = ck.checkpoint(lambda h: h @ w, x, use_reentrant=False)
        assert not y.requires_grad and y.grad_fn is None
        # an argument returned as it is stays that tensor
        m = lib.tensor(X)
        xg = lib.tensor(X, requires_grad=True)
        a, b = ck.checkpoint(lambda h, mask: (h * mask, mask), xg, m, use_reentrant=False)
        assert b is m and a.requires_grad
    # under no_grad the function just runs
    with torchjax.no_grad():
        y = jck.checkpoint(lambda h: h * 2, torchjax.tensor(X, requires_grad=True),
                           use_reentrant=False)
    assert not y.requires_grad


def test_nested_checkpoint():
    res = []
    for lib, ck in libs():
        x, (w1, w2, b1), _ = _setup(lib)

        def inner(h):
            return lib.tanh(h @ w1 + b1)

        def outer(h):
            return ck.checkpoint(inner, h, use_reentrant=False) @ w2

        y = ck.checkpoint(outer, x, use_reentrant=False)
        y.pow(2).sum().backward()
        res.append((y, x.grad, w1.grad, w2.grad, b1.grad))
    for a, b in zip(*res):
        close(a, b)


def test_autograd_grad_through_region():
    res = []
    for lib, ck in libs():
        x, params, block = _setup(lib)
        y = ck.checkpoint(block, x, 2.0, use_reentrant=False)
        grads = lib.autograd.grad(y.sum(), [x, *params])
        assert all(p.grad is None for p in params)  # grad() accumulates nothing
        res.append(grads)
    for a, b in zip(*res):
        close(a, b)


def test_create_graph_through_region():
    res = []
    for lib, ck in libs():
        x = lib.tensor(X[0], requires_grad=True)
        y = ck.checkpoint(lambda a: a.sin() * a, x, use_reentrant=False)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        g2, = lib.autograd.grad(g.sum(), x)
        res.append((g, g2))
    for a, b in zip(*res):
        close(a, b)


def test_retain_graph_and_backward_twice():
    res = []
    for lib, ck in libs():
        x, params, block = _setup(lib)
        y = ck.checkpoint(block, x, use_reentrant=False).sum()
        y.backward(retain_graph=True)
        y.backward()
        res.append(x.grad)
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.backward()
    close(*res)


def test_checkpoint_sequential():
    tm = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 8),
                             torch.nn.ReLU(), torch.nn.Linear(8, 3), torch.nn.Tanh())
    jm = torchjax.nn.Sequential(torchjax.nn.Linear(6, 8), torchjax.nn.Tanh(),
                                torchjax.nn.Linear(8, 8), torchjax.nn.ReLU(),
                                torchjax.nn.Linear(8, 3), torchjax.nn.Tanh())
    jm.load_state_dict({k: torchjax.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    for segments, reentrant in ((2, False), (3, True)):
        res = []
        for (lib, ck), m in zip(libs(), (tm, jm)):
            m.zero_grad()
            x = lib.tensor(X, requires_grad=True)
            y = ck.checkpoint_sequential(m, segments, x, use_reentrant=reentrant)
            y.sum().backward()
            res.append((y, x.grad, *(p.grad for p in m.parameters())))
        for a, b in zip(*res):
            close(a, b)
    # a plain list of functions, and the keyword check
    fs = [lambda t: t * 2, torchjax.sin, torchjax.cos, lambda t: t + 1]
    x = torchjax.tensor(X, requires_grad=True)
    close(jck.checkpoint_sequential(fs, 2, x, use_reentrant=False),
          ((x * 2).sin().cos() + 1))
    for ck, lib in ((tck, torch), (jck, torchjax)):
        with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
            ck.checkpoint_sequential(fs, 2, lib.ones(2), use_reentrant=False, foo=1)


# -- random numbers and buffers ----------------------------------------------------------------

def _dropout_net(use_ck, preserve=True):
    torchjax.manual_seed(0)
    lin1, lin2 = torchjax.nn.Linear(6, 16), torchjax.nn.Linear(16, 3)
    drop = torchjax.nn.Dropout(0.5)
    x = torchjax.tensor(X, requires_grad=True)

    def block(h):
        return lin2(drop(torchjax.relu(lin1(h))))

    torchjax.manual_seed(1)
    y = jck.checkpoint(block, x, use_reentrant=False, preserve_rng_state=preserve) \
        if use_ck else block(x)
    torchjax.rand(3)  # the generator moves on between forward and backward
    y.sum().backward()
    return y, x.grad, lin1.weight.grad, lin2.weight.grad


def test_dropout_masks_preserved():
    for a, b in zip(_dropout_net(True), _dropout_net(False)):
        close(a, b)
    # without preserve_rng_state the recomputation draws other masks (so the test above can fail)
    y, xg, _, _ = _dropout_net(True, preserve=False)
    _, xg_plain, _, _ = _dropout_net(False)
    assert not np.allclose(np_(xg), np_(xg_plain))
    # and the generator state after the backward is the one the program left
    torchjax.manual_seed(5)
    x = torchjax.tensor(X, requires_grad=True)
    y = jck.checkpoint(lambda h: torchjax.nn.functional.dropout(h, 0.5), x,
                       use_reentrant=False)
    state = torchjax.get_rng_state()
    y.sum().backward()
    assert np.array_equal(torchjax.get_rng_state().numpy(), state.numpy())


def test_batchnorm_buffers_keep_forward_values():
    def run(use_ck):
        torchjax.manual_seed(0)
        bn, lin = torchjax.nn.BatchNorm1d(6), torchjax.nn.Linear(6, 3)
        x = torchjax.tensor(X, requires_grad=True)
        y = jck.checkpoint(lambda h: lin(bn(h)), x, use_reentrant=False) if use_ck \
            else lin(bn(x))
        y.sum().backward()
        return bn, x.grad, bn.weight.grad
    bn_ck, *grads_ck = run(True)
    bn, *grads = run(False)
    for a, b in zip(grads_ck, grads):
        close(a, b)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        buf = getattr(bn_ck, name)
        assert not isinstance(buf._data, Tracer)
        close(buf, getattr(bn, name))
    assert bn_ck.num_batches_tracked.item() == 1
    assert bn_ck.running_mean._version == bn.running_mean._version


def test_activations_are_not_kept():
    seen = []

    def f(h):
        z = torchjax.tanh(h * 2)
        seen.append(weakref.ref(z))
        return z.sum()

    x = torchjax.tensor(X, requires_grad=True)
    y = jck.checkpoint(f, x, use_reentrant=False)
    gc.collect()
    assert seen[0]() is None  # the forward's intermediate is gone
    y.backward()
    close(x.grad, 2 * (1 - np.tanh(2 * X) ** 2))
    assert _dispatch.CAPTURE is None


# -- errors ------------------------------------------------------------------------------------

def _message(fn):
    with pytest.raises(Exception) as e:
        fn()
    return e.type, str(e.value)


def test_missing_use_reentrant_warns_like_torch():
    msgs = []
    for lib, ck in libs():
        x = lib.tensor(X, requires_grad=True)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            y = ck.checkpoint(lambda h: h * 2, x)
            ck.checkpoint_sequential([lambda h: h * 2], 1, x)
        msgs.append([(r.category, str(r.message)) for r in rec])
        assert type(y.grad_fn).__name__ == "CheckpointFunctionBackward"  # reentrant default
    assert msgs[0] == msgs[1] and len(msgs[0]) == 2


def test_reentrant_argument_errors():
    for lib, ck in libs():
        x = lib.tensor(X, requires_grad=True)
        with pytest.raises(ValueError, match="^Unexpected keyword arguments: b,c$"):
            ck.checkpoint(lambda a, b=1, c=2: a, x, b=2, c=3, use_reentrant=True)
        with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
            ck.checkpoint(lambda a: a, x, use_reentrant=True, debug=True)
        with pytest.raises(ValueError, match="determinism_check should be one of"):
            ck.checkpoint(lambda a: a, x, use_reentrant=False, determinism_check="x")
        # no argument requires grad: PyTorch's reentrant outputs do not either
        w = lib.tensor(W1, requires_grad=True)
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            y = ck.checkpoint(lambda a: a @ w, lib.tensor(X), use_reentrant=True)
        assert not y.requires_grad


@pytest.mark.parametrize("reentrant", [True, False])
def test_inplace_change_of_an_input_is_caught(reentrant):
    msgs = []
    for lib, ck in libs():
        x = lib.tensor(X, requires_grad=True).clone()
        w = lib.tensor(W1, requires_grad=True)
        y = ck.checkpoint(lambda a: (a @ w).sin(), x, use_reentrant=reentrant)
        with lib.no_grad():
            x.add_(1)
        msgs.append(_message(lambda: y.sum().backward()))
    for typ, msg in msgs:
        assert typ is RuntimeError
        assert "modified by an inplace operation" in msg and "is at version 1" in msg


def test_inplace_change_of_a_parameter_is_caught():
    # PyTorch's checkpoint would recompute with the new values; torchjax raises the error an
    # un-checkpointed graph raises (see docs/performance.md)
    x = torchjax.tensor(X, requires_grad=True)
    w = torchjax.tensor(W1, requires_grad=True)
    y = jck.checkpoint(lambda a: (a @ w).sin(), x, use_reentrant=False)
    with torchjax.no_grad():
        w.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_recomputation_that_differs_raises_checkpoint_error():
    for lib, ck in libs():
        calls = []
        x = lib.tensor(X, requires_grad=True)

        def f(a):
            calls.append(1)
            return a[:len(calls)].sin()

        y = ck.checkpoint(f, x, use_reentrant=False)
        with pytest.raises(ck.CheckpointError, match="different metadata than during the "
                                                     "forward pass"):
            y.sum().backward()
    assert issubclass(jck.CheckpointError, RuntimeError)


def test_error_inside_recompute_restores_state():
    x = torchjax.tensor(X, requires_grad=True)
    w = torchjax.tensor(W1, requires_grad=True)
    calls = []

    def f(a):
        calls.append(1)
        if len(calls) > 1:
            raise KeyError("boom")
        return (a @ w).sin()

    y = jck.checkpoint(f, x, use_reentrant=False)
    with pytest.raises(KeyError):
        y.sum().backward()
    assert not isinstance(x._data, Tracer) and not isinstance(w._data, Tracer)
    assert _dispatch.CAPTURE is None
    np.testing.assert_array_equal(np_(w), W1)


def test_host_reads_inside_the_function():
    # .item() and a boolean mask need values: the backward then runs op by op (eagerly)
    res = []
    for lib, ck in libs():
        x = lib.tensor(X[0], requires_grad=True)

        def f(a):
            return a[a > 0].sin().sum() * a.sum().item()

        y = ck.checkpoint(f, x, use_reentrant=False)
        y.backward()
        res.append((y, x.grad))
    for a, b in zip(*res):
        close(a, b)
    # a detached value read on the host is a constant of the recomputation, as in PyTorch
    grads = []
    for lib, ck in libs():
        x = lib.tensor(X[0], requires_grad=True)
        y = ck.checkpoint(lambda a: a * float(a.detach().numpy().sum()), x, use_reentrant=False)
        y.sum().backward()
        grads.append(x.grad)
    close(*grads)


def test_backward_program_is_reused():
    torchjax.manual_seed(0)
    block = torchjax.nn.Sequential(torchjax.nn.Linear(6, 6), torchjax.nn.Dropout(0.3),
                                   torchjax.nn.Tanh())
    blocks = [block, torchjax.nn.Sequential(torchjax.nn.Linear(6, 6), torchjax.nn.Dropout(0.3),
                                            torchjax.nn.Tanh())]

    def step():
        h = torchjax.tensor(X, requires_grad=True)
        for b in blocks:
            h = jck.checkpoint(b, h, use_reentrant=False)
        h.sum().backward()
    step()
    n = len(jck._COMPILED)
    step()  # new random offsets, other parameters: the same compiled backward
    assert len(jck._COMPILED) == n


def test_same_block_with_and_without_an_input_requiring_grad():
    # the first block's input is a constant of its backward, the second's a variable: the
    # two backward programs must not be mistaken for one another
    tm = torch.nn.Linear(6, 6)
    jm = torchjax.nn.Linear(6, 6)
    jm.load_state_dict({k: torchjax.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    res = []
    for (lib, ck), m in zip(libs(), (tm, jm)):
        h = lib.tensor(X)
        for _ in range(3):
            h = ck.checkpoint(lambda a: lib.tanh(m(a)), h, use_reentrant=False)
        h.sum().backward()
        res.append((h, m.weight.grad, m.bias.grad))
    for a, b in zip(*res):
        close(a, b)


def test_custom_function_inside_uses_its_own_backward():
    """A straight-through estimator: its backward, not round's zero derivative, must be used
    by the recomputation (the Function becomes a jax.custom_vjp there)."""
    def run(lib):
        class STE(lib.autograd.Function):
            @staticmethod
            def forward(x, scale):
                return lib.round(x)

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])
                ctx.scale = inputs[1]

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * ctx.scale * (x.abs() < 5).to(g.dtype), None

        x = lib.tensor([0.3, 1.7, 7.0], requires_grad=True)
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        loss = lib.utils.checkpoint.checkpoint(
            lambda a, b: (STE.apply(a * b, 2.0) * b).sum(), x, w, use_reentrant=False)
        loss.backward()
        return x.grad.tolist(), w.grad.tolist()
    ours, theirs = run(torchjax), run(torch)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_no_grad_and_detach_inside_the_region():
    """Values computed under no_grad or detached inside the region stay constants of the
    recomputed backward, as in PyTorch."""
    def run(lib, ck):
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)

        def region(a):
            with lib.no_grad():
                scale = a.abs().max()
            return (a * scale + a.detach() ** 2 * a).sum()
        ck(region, x, use_reentrant=False).backward()
        return x.grad.tolist()
    np.testing.assert_allclose(run(torchjax, jck.checkpoint), run(torch, tck.checkpoint),
                               rtol=1e-6)
