"""torchjax.autocast's API against PyTorch's: state functions, nesting, decorators, threads,
what is not eligible (out=, in-place, float64), gradients, and compiled functions."""

from __future__ import annotations

import logging
import threading
import warnings

import numpy as np
import pytest
import torch

import torchjax
from torchjax import nn as tnn

_STATE_CALLS = [
    lambda lib: lib.is_autocast_enabled(),
    lambda lib: lib.is_autocast_enabled("cpu"),
    lambda lib: str(lib.get_autocast_dtype("cpu")),
    lambda lib: str(lib.get_autocast_dtype("cuda")),
    lambda lib: lib.is_autocast_cache_enabled(),
]


def _state(lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return [f(lib) for f in _STATE_CALLS] + [str(lib.get_autocast_cpu_dtype()),
                                                  lib.is_autocast_cpu_enabled()]


def _nested(lib):
    seen = [_state(lib)]
    with lib.autocast("cpu"):
        seen.append(_state(lib))
        with lib.autocast("cpu", dtype=lib.float16, cache_enabled=False):
            seen.append(_state(lib))
            with lib.autocast("cpu", enabled=False):
                seen.append(_state(lib))
            seen.append(_state(lib))
        seen.append(_state(lib))
    seen.append(_state(lib))
    return seen


def test_state_functions_and_nesting_match_pytorch():
    assert _nested(torchjax) == _nested(torch)


def test_decorator_and_aliases():
    for lib in (torch, torchjax):
        @lib.autocast("cpu")
        def f(a):
            return (a @ a).dtype, lib.is_autocast_enabled("cpu")

        @lib.amp.autocast("cpu", dtype=lib.float16)
        def g(a):
            return (a @ a).dtype

        with pytest.warns(FutureWarning, match=r"torch\.cpu\.amp\.autocast\(args\.\.\.\)` is "
                          "deprecated"):
            h = lib.cpu.amp.autocast()(lambda a: (a @ a).dtype)
        a = lib.ones(2, 2)
        assert f(a) == (lib.bfloat16, True) and g(a) == lib.float16 and h(a) == lib.bfloat16
        assert not lib.is_autocast_enabled("cpu")


def test_unsupported_dtype_warns_and_disables_as_pytorch():
    for lib in (torch, torchjax):
        with pytest.warns(UserWarning, match="target dtype is not supported"):
            ctx = lib.autocast("cpu", dtype=lib.float64)
        with ctx:
            assert not lib.is_autocast_enabled("cpu")
            assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype == lib.float32
    with pytest.raises(RuntimeError, match="unsupported autocast device_type 'gpu'"):
        torchjax.autocast("gpu")
    with pytest.raises(ValueError, match="device_type"):
        torchjax.autocast(torchjax.device("cpu"))


def test_state_is_per_thread():
    seen = []
    with torchjax.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append(
            (torchjax.is_autocast_enabled("cpu"), (torchjax.ones(2, 2) @ torchjax.ones(2, 2))
             .dtype)))
        t.start()
        t.join()
    assert seen == [(False, torchjax.float32)]


def _not_eligible(lib):
    a, b = lib.ones(2, 2), lib.ones(2, 2)
    out = lib.empty(2, 2)
    c = lib.ones(2, 2)
    with lib.autocast("cpu"):
        lib.mm(a, b, out=out)
        c.addbmm_(a[None], b[None])
        d = lib.mm(a.double(), b.double())
        e = lib.sum(a @ b, dtype=lib.float32)
    return out.dtype, c.dtype, d.dtype, e.dtype


def test_out_inplace_and_float64_are_not_eligible():
    assert [str(d) for d in _not_eligible(torchjax)] == [str(d) for d in _not_eligible(torch)]


def _mlp_grads(lib):
    lib.manual_seed(0)
    w1 = lib.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
    w2 = lib.tensor(np.linspace(1, -1, 8, dtype=np.float32).reshape(2, 4), requires_grad=True)
    x = lib.tensor(np.linspace(-2, 2, 15, dtype=np.float32).reshape(5, 3))
    t = lib.tensor([0, 1, 1, 0, 1])
    with lib.autocast("cpu"):
        h = lib.nn.functional.linear(x, w1.t())
        logits = lib.nn.functional.linear(lib.relu(h), w2)
        loss = lib.nn.functional.cross_entropy(logits, t)
    loss.backward()
    return [h.dtype, logits.dtype, loss.dtype, w1.grad.dtype, w2.grad.dtype], \
        [loss.detach().float().numpy(), w1.grad.numpy(), w2.grad.numpy()]


def test_gradients_flow_back_in_the_inputs_dtypes():
    dt_j, v_j = _mlp_grads(torchjax)
    dt_t, v_t = _mlp_grads(torch)
    assert [str(d) for d in dt_j] == [str(d) for d in dt_t]
    for a, b in zip(v_j, v_t):
        np.testing.assert_allclose(a, b, rtol=3e-2, atol=3e-2)


def test_custom_fwd_casts_inputs_and_runs_without_autocast():
    for lib in (torch, torchjax):
        class Square(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x @ x, lib.is_autocast_enabled("cpu")

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g, _):
                (x,) = ctx.saved_tensors
                return g @ x.t() + x.t() @ g

        x = lib.ones(2, 2, dtype=lib.bfloat16, requires_grad=True)
        with lib.autocast("cpu"):
            y, inside = Square.apply(x)
        assert y.dtype == lib.float32 and inside is False
        y.sum().backward()
        assert x.grad.dtype == lib.bfloat16


def test_compiled_function_recompiles_when_autocast_changes(caplog):
    lin = tnn.Linear(4, 3)

    @torchjax.compile
    def f(x):
        return lin(x)

    x = torchjax.randn(2, 4)
    assert f(x).dtype is torchjax.float32
    with caplog.at_level(logging.INFO, logger="torchjax.recompiles"), torchjax.autocast("cpu"):
        y = f(x)
        assert y.dtype is torchjax.bfloat16
        assert f(x).dtype is torchjax.bfloat16  # the autocast program is reused
        with torchjax.autocast("cpu", dtype=torchjax.float16):
            assert f(x).dtype is torchjax.float16
    assert f(x).dtype is torchjax.float32  # the first program again, not a stale one
    assert len(f.programs) == 3
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "autocast is now cpu: bfloat16" in text and "cpu: float16" in text
    np.testing.assert_allclose(y.detach().float().numpy(), lin(x).detach().numpy(), rtol=3e-2,
                               atol=3e-2)


def test_compiled_training_step_under_autocast_matches_eager():
    def make():
        torchjax.manual_seed(0)
        model = tnn.Sequential(tnn.Linear(4, 8), tnn.ReLU(), tnn.Linear(8, 2))
        return model, torchjax.optim.SGD(model.parameters(), lr=0.1)

    def step(model, opt, x, t):
        opt.zero_grad()
        with torchjax.autocast("cpu"):
            loss = torchjax.nn.functional.cross_entropy(model(x), t)
        loss.backward()
        opt.step()
        return loss

    x, t = torchjax.randn(6, 4), torchjax.tensor([0, 1, 0, 1, 1, 0])
    (m1, o1), (m2, o2) = make(), make()
    compiled = torchjax.compile(step)
    for _ in range(3):
        a = step(m1, o1, x, t)
        b = compiled(m2, o2, x, t)
        assert a.dtype is b.dtype is torchjax.float32
        np.testing.assert_allclose(b.item(), a.item(), rtol=1e-2)
    for p, q in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-2, atol=1e-3)


@pytest.fixture
def cuda_autocast(monkeypatch):
    """CUDA autocast's lists applied to this machine's CPU tensors: there is no GPU to run
    PyTorch's CUDA autocast on, so the expectations are PyTorch's documented CUDA
    behaviour (docs/amp.md)."""
    from torchjax import _autocast
    monkeypatch.setattr(_autocast, "_first_device_type", lambda dyn: "cuda")
    _autocast.set_dtype("cuda", torchjax.float16)
    _autocast.set_enabled("cuda", True)
    yield
    _autocast.set_enabled("cuda", False)


def test_cuda_lists(cuda_autocast):
    F = torchjax.nn.functional
    x = torchjax.randn(3, 4)
    h = x.half()
    assert torchjax.is_autocast_enabled()
    assert (x @ x.t()).dtype is torchjax.float16
    assert torchjax.mv(x, x[0]).dtype is torchjax.float16  # lower on CUDA, not on CPU
    assert h.softmax(-1).dtype is torchjax.float32
    assert h.softmax(-1, dtype=torchjax.float16).dtype is torchjax.float16  # explicit dtype=
    assert torchjax.exp(h).dtype is torchjax.float32
    assert h.sum().dtype is torchjax.float32
    assert F.layer_norm(h, (4,)).dtype is torchjax.float32
    assert torchjax.addcmul(h, x, h).dtype is torchjax.float32  # promote
    assert torchjax.addcmul(h, h, h).dtype is torchjax.float16
    with pytest.raises(RuntimeError, match="unsafe to autocast"):
        F.binary_cross_entropy(h.sigmoid(), h.sigmoid())
    g = h.clone().requires_grad_()
    torchjax.exp(g).sum().backward()  # exp differentiates from its float32 result
    assert g.grad.dtype is torchjax.float16


def _module_dtypes(lib):
    nn = lib.nn
    lib.manual_seed(0)
    x = lib.randn(2, 5, 8)
    calls = {
        "layer_norm": (nn.Sequential(nn.Linear(8, 8), nn.LayerNorm(8)), lambda m: m(x)),
        "group_norm": (nn.Sequential(nn.Conv1d(5, 4, 1), nn.GroupNorm(2, 4)), lambda m: m(x)),
        "batch_norm": (nn.Sequential(nn.Conv1d(5, 4, 1), nn.BatchNorm1d(4)), lambda m: m(x)),
        "rms_norm": (nn.Sequential(nn.Linear(8, 8), nn.RMSNorm(8)), lambda m: m(x)),
        "mha": (nn.MultiheadAttention(8, 2, batch_first=True), lambda m: m(x, x, x)[0]),
        "encoder": (nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, dropout=0.0),
                    lambda m: m(x)),
        "embedding": (nn.Sequential(nn.Embedding(10, 8), nn.Linear(8, 3)),
                      lambda m: m(lib.tensor([[1, 2]]))),
        "gru": (nn.GRU(8, 4, batch_first=True), lambda m: m(x)[0]),
    }
    seen = {}
    for name, (module, call) in calls.items():
        with lib.autocast("cpu"):
            seen[name] = str(call(module).dtype)
    return seen


def test_modules_match_pytorch():
    """Low-precision activations through norms (which take float32 weights), attention,
    a transformer layer (float32 out: its residual adds the float32 input to a bfloat16
    branch) and an RNN."""
    assert _module_dtypes(torchjax) == _module_dtypes(torch)


def _checkpointed(lib):
    lin = lib.nn.Linear(4, 4)
    with lib.no_grad():
        lin.weight.copy_(lib.arange(16.0).reshape(4, 4) / 10 - 0.7)
        lin.bias.fill_(0.1)
    x = lib.ones(2, 4, requires_grad=True)
    with lib.autocast("cpu"):
        y = lib.utils.checkpoint.checkpoint(lambda a: lin(a).relu() @ lin.weight, x,
                                            use_reentrant=False)
    y.float().sum().backward()  # outside autocast: the recomputation keeps the casts
    return [str(y.dtype), str(x.grad.dtype), str(lin.weight.grad.dtype)], \
        [x.grad.numpy(), lin.weight.grad.numpy()]


def test_checkpoint_recomputes_with_the_forwards_casts():
    import torch.utils.checkpoint  # noqa: F401  (torch.utils.checkpoint is a lazy submodule)
    (da, va), (db, vb) = _checkpointed(torchjax), _checkpointed(torch)
    assert da == db
    for a, b in zip(va, vb):
        np.testing.assert_allclose(a, b, rtol=2e-2, atol=2e-2)
