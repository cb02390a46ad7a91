"""Graph breaks: code that needs a value falls back to eager with one warning naming the
user's line (or raises with fullgraph=True); explain lists the breaks without running; the
common patterns that need no value do not break."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import torchjax as torch
import torchjax.nn.functional as F
from torchjax import nn
from torchjax.compiler import Unsupported


def _line(fn, text):
    src, start = inspect.getsourcelines(fn)
    return start + next(i for i, s in enumerate(src) if text in s)


def uses_item(x):
    y = x * 2
    if y.sum().item() > 0:  # the break
        return y + 1
    return y - 1


def uses_bool(x):
    if (x > 0).all():  # the break
        return x
    return -x


def uses_nonzero(x):
    return x[x > 0].sum()  # the break


def prints(x):
    print(x)  # the break
    return x + 1


def two_breaks(x):
    a = x.sum().item()  # first
    b = float(x.max())  # second
    return x * (a + b)


@pytest.mark.parametrize("fn,phrase", [(uses_item, "Tensor.item()"), (uses_bool, "bool(tensor)"),
                                       (uses_nonzero, "boolean mask"),
                                       (prints, "printing a tensor")])
def test_break_warns_with_line_and_runs_eagerly(fn, phrase, capsys):
    x = torch.tensor([1.0, -2.0, 3.0])
    want = fn(x)
    cfn = torch.compile(fn)
    line = _line(fn, "the break")
    with pytest.warns(UserWarning, match="Graph break") as rec:
        got = cfn(x)
    msg = str(rec[0].message)
    assert f"{__file__}:{line}" in msg and phrase in msg, msg
    np.testing.assert_allclose(got.numpy(), want.numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one warning per signature: the next call is silent
        np.testing.assert_allclose(cfn(x).numpy(), want.numpy())
    assert cfn.compiles == 0


def test_fullgraph_raises_with_line():
    cfn = torch.compile(uses_item, fullgraph=True)
    with pytest.raises(Unsupported, match=rf"{_line(uses_item, 'the break')}.*Tensor.item\(\)"):
        cfn(torch.ones(3))


def test_break_leaves_state_untouched():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    log = []

    def step(x):
        opt.zero_grad()
        loss = model(x).sum()
        loss.backward()
        opt.step()
        log.append(loss.item())  # breaks after the optimizer step was traced
        return loss

    w = model.weight.detach().clone()
    with pytest.warns(UserWarning, match="Graph break"):
        torch.compile(step)(torch.ones(2, 3))
    # the trace's changes were undone and the step ran once, eagerly
    assert len(log) == 1 and isinstance(log[0], float)
    expected = w - 0.1 * 2 * torch.ones(1, 3)
    np.testing.assert_allclose(model.weight.detach().numpy(), expected.numpy(), rtol=1e-6)
    assert len(opt.state) == 2


def test_explain_lists_breaks_without_running():
    x = torch.tensor([1.0, 2.0])
    out = torch._dynamo.explain(two_breaks)(x)
    assert out.graph_break_count == 2 and out.graph_count == 3
    assert "Tensor.item()" in out.break_reasons[0].reason
    assert "float(tensor)" in out.break_reasons[1].reason
    assert any(f":{_line(two_breaks, 'first')}" in f for f in out.break_reasons[0].user_stack)
    assert "Graph Break Count: 2" in str(out)
    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    w = model.weight.detach().clone()

    def step(x):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()

    assert torch._dynamo.explain(step)(x[None]).graph_break_count == 0
    np.testing.assert_array_equal(model.weight.detach().numpy(), w.numpy())  # did not run
    assert model.weight.grad is None


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        n, d = x.shape
        x = x.reshape(n, d // 2, 2).reshape(n, d)   # shape arithmetic
        for layer in self.layers:                  # loops over layers
            x = F.relu(layer(x))
        if self.training:                          # a flag, not a value
            x = self.drop(x)
        with torch.no_grad():
            scale = x.abs().mean() + 1
        return x / scale, len(self.layers)


def test_common_patterns_do_not_break():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.Adam(model.parameters())

    @torch.compile(fullgraph=True)
    def step(x):
        opt.zero_grad()
        out, n = model(x)
        loss = out.pow(2).mean() * n
        loss.backward()
        opt.step()
        return loss

    for _ in range(3):
        loss = step(torch.randn(5, 4))
        assert isinstance(loss.item(), float)  # the caller reads the value after the step
    model.eval()
    with torch.no_grad():
        out, _ = torch.compile(model, fullgraph=True)(torch.randn(2, 4))
    assert out.shape == (2, 4)


def test_disable_breaks_the_graph():
    @torch.compiler.disable
    def host(x):
        return x + 1

    def f(x):
        return host(x) * 2

    with pytest.warns(UserWarning, match="torch.compiler.disable"):
        out = torch.compile(f)(torch.ones(2))
    np.testing.assert_allclose(out.numpy(), [4.0, 4.0])


def test_leaked_tensor_into_captured_list_breaks():
    history = []

    def f(x):
        y = x * 2
        history.append(y)
        return y

    with pytest.warns(UserWarning, match="stored in a list"):
        torch.compile(f)(torch.ones(2))
    assert len(history) == 1 and history[0].tolist() == [2.0, 2.0]


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


class HostBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, g):
        return g * float(g.sum())  # reads a value in the backward


def test_custom_function_compiles_and_untraceable_backward_breaks():
    w = torch.ones(3, requires_grad=True)

    def step(fn):
        w.grad = None
        fn.apply(w).sum().backward()
        return w.grad

    want = step(Square).clone()
    got = torch.compile(lambda: step(Square))()
    np.testing.assert_allclose(got.numpy(), want.numpy())
    with pytest.raises(Unsupported, match=r"float\(tensor\)"):
        torch.compile(lambda: step(HostBackward), fullgraph=True)()
    assert w.grad is not None and np.allclose(w.grad.numpy(), 2.0)  # untouched by the trace


def test_a_caught_break_still_breaks():
    """A break the traced code catches itself (a fallback around .item(), around a
    data-dependent shape) still breaks the graph: compiled, the except clause would
    otherwise turn into the program's result where eager mode reads the values."""
    def f(x):
        try:
            n = int(x.sum().item() > 0)
        except Exception:  # noqa: BLE001 - the fallback eager never takes
            n = -1
        try:
            k = x[x > 0].numel()
        except RuntimeError:
            k = -1
        return x * n, k

    x = torch.tensor([1.0, -2.0, 3.0])
    want = f(x)
    with pytest.raises(Unsupported, match="test_breaks.py.*reads the value"):
        torch.compile(f, fullgraph=True)(x)
    with pytest.warns(UserWarning, match="Graph break"):
        got = torch.compile(f)(x)
    assert got[1] == want[1] == 2
    np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())


def test_compiler_markers_as_pytorch_outside_a_trace_and_inside():
    """torch.compiler's Dynamo markers, which libraries call at import (einx's allow_in_graph):
    each returns what PyTorch's returns outside a compile, and is_dynamo_compiling is true
    inside torchjax's trace."""
    import torch as pytorch

    import torchjax

    def f(x):
        return x + 1

    for lib in (pytorch, torchjax):
        assert lib.compiler.allow_in_graph(f) is f
        assert lib.compiler.allow_in_graph([f, f]) == [f, f]
        assert lib.compiler.assume_constant_result(f) is f
        assert lib.compiler.is_dynamo_compiling() is False
        assert lib.compiler.is_exporting() is False
        assert lib.compiler.cudagraph_mark_step_begin() is None

    @torchjax.compile
    def step(x):
        return x * 2 if torchjax.compiler.is_dynamo_compiling() else x * 3

    assert step(torchjax.ones(3)).tolist() == [2.0, 2.0, 2.0]
