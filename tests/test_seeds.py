"""Every runnable code example in ../shared/seeds/ runs under PyTorch and under torchjax (as
`import torch`), and both print the same thing.

Examples that print random values (randn-initialised models) cannot match PyTorch's bits:
for those the numbers are masked and everything else (shapes, grad_fn names, structure) must
match. Object addresses are always masked. An example that raises must raise the same
exception type with the same message in both.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import re
import textwrap

import pytest
import torch

import torchjax

# (id, code, prints random numbers)
SNIPPETS = [
    # 000_4a86d20bde20ea95.txt
    ("000-graph", """
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        y = x * x + 3 * x + 1
        print(y)
    """, False),
    ("000-grad_fn", """
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        a = x * x
        b = 3 * x
        y = a + b + 1
        print(y)
        print(y.grad_fn)
    """, False),
    ("000-sequential", """
        import torch
        from torch import nn
        model = nn.Sequential(
            nn.Linear(4, 8),
            nn.ReLU(),
            nn.Linear(8, 2),
        )
        x = torch.randn(3, 4)
        y = model(x)
        print(y.shape, y.grad_fn)
        print(model)
    """, True),
    ("000-backward", """
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        y = x * x + 3 * x + 1
        y.backward()
        print(x.grad)
    """, False),
    ("000-leaf", """
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        print(x, x.is_leaf)
        x = torch.tensor(2.0, requires_grad=True)
        y = x * x
        y.backward()
        print(x.grad)
    """, False),
    ("000-dynamic-f", """
        import torch
        def f(x):
            if x.sum() > 0:
                return x * 2
            else:
                return x * x
        print(f(torch.tensor([1.0, 2.0])), f(torch.tensor([-1.0, -2.0])))
    """, False),
    ("000-loop", """
        import torch
        x = torch.tensor(1.0, requires_grad=True)
        y = x
        for _ in range(5):
            y = y * 2
        y.backward()
        print(x.grad)
    """, False),
    ("000-conditional", """
        import torch
        x = torch.tensor(-2.0, requires_grad=True)
        if x.item() > 0:
            y = x
        else:
            y = x * x
        y.backward()
        print(x.grad)
    """, False),
    ("000-lifetime", """
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        y = x * x
        y.backward()
        y.backward()  # RuntimeError: the graph has been freed
    """, False),
    ("000-retain", """
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        y = x * x
        y.backward(retain_graph=True)
        y.backward()
        print(x.grad)
    """, False),
    ("000-detach", """
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        y = x * x
        z = y.detach()
        print(z.requires_grad)
        print(z)
    """, False),
    ("000-no_grad", """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        x = torch.randn(3, 4)
        model.eval()
        with torch.no_grad():
            outputs = model(x)
        print(outputs.requires_grad, outputs.grad_fn, outputs.shape)
        with torch.inference_mode():
            outputs = model(x)
        print(outputs.requires_grad, outputs.grad_fn, outputs.shape)
    """, True),
    ("000-inplace", """
        import torch
        x = torch.tensor([1.0, 2.0])
        x.add_(1)
        print(x)
        x = torch.tensor(2.0, requires_grad=True)
        y = x * x
        x.add_(1)  # a leaf that requires grad: PyTorch refuses
    """, False),
    ("000-linear-ce", """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        x = torch.randn(3, 4)
        target = torch.randint(0, 2, (3,))
        loss_fn = nn.CrossEntropyLoss()
        logits = model(x)
        loss = loss_fn(logits, target)
        loss.backward()
        print(model.weight.grad.shape)
        print(model.bias.grad.shape)
        print(loss.grad_fn)
    """, True),
    ("000-eager", """
        import torch
        x = torch.tensor([1.0, 2.0])
        y = x + 1
        print(y)
    """, False),
    # 001_a0129a1c6044b9d7.txt: as written, (10, 5) + (5, 1) does not broadcast
    ("001-as-written", """
        import torch
        W = torch.randn(5, 3, requires_grad=True)
        b = torch.randn(5, 1, requires_grad=True)
        x = torch.randn(10, 3)
        y = torch.mm(x, W.t()) + b        # forward executed right here
    """, True),
    ("001-intent", """
        import torch
        W = torch.randn(5, 3, requires_grad=True)
        b = torch.randn(5, requires_grad=True)
        x = torch.randn(10, 3)
        y = torch.mm(x, W.t()) + b
        loss = y.pow(2).mean()
        print(loss.item() > 0, loss.grad_fn)

        class Swish(torch.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                ctx.save_for_backward(z)
                return z * torch.sigmoid(z)

            @staticmethod
            def backward(ctx, grad_out):
                z, = ctx.saved_tensors
                sig = torch.sigmoid(z)
                return grad_out * (sig * (1 + z * (1 - sig)))

        swish = Swish.apply
        out = swish(y)
        out.sum().backward()
        print(W.grad.shape)   # (5, 3)
        print(out.grad_fn)
    """, True),
    ("001-swish-no-grad", """
        import torch
        class Swish(torch.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                ctx.save_for_backward(z)
                return z * torch.sigmoid(z)

            @staticmethod
            def backward(ctx, grad_out):
                z, = ctx.saved_tensors
                sig = torch.sigmoid(z)
                return grad_out * (sig * (1 + z * (1 - sig)))
        x = torch.randn(10, 3)
        out = Swish.apply(x)
        out.sum().backward()
    """, True),
    ("001-swish-grad", """
        import torch
        class Swish(torch.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                ctx.save_for_backward(z)
                return z * torch.sigmoid(z)

            @staticmethod
            def backward(ctx, grad_out):
                z, = ctx.saved_tensors
                sig = torch.sigmoid(z)
                return grad_out * (sig * (1 + z * (1 - sig)))
        z = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        out = Swish.apply(z)
        out.sum().backward()
        print(out)
        print(z.grad)
    """, False),
    # 002_09bde8e86c6dc154.txt
    ("002-pow", """
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        y = torch.tensor(3.0, requires_grad=True)
        a = x + y
        z = a ** 2
        print(z) # tensor(25., grad_fn=<PowBackward0>)
    """, False),
    ("002-linear-shape", """
        import torch
        from torch import nn
        linear = nn.Linear(3, 4)
        X = torch.randn(5, 3)
        Y = linear(X)
        print(Y.shape) # torch.Size([5, 4])
    """, False),
    ("002-loss-shape", """
        import torch
        from torch import nn
        model = nn.Linear(3, 1)
        X = torch.randn(8, 3)
        y = torch.randn(8, 1)
        pred = model(X)
        loss = ((pred - y) ** 2).mean()
        print(loss.shape) # torch.Size([])
    """, False),
    ("002-chain", """
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        y = torch.tensor(3.0, requires_grad=True)
        z = (x + y) ** 2
        z.backward()
        print(x.grad) # tensor(10.)
        print(y.grad) # tensor(10.)
    """, False),
    ("002-leaves", """
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        y = torch.tensor(3.0, requires_grad=True)
        a = x + y
        z = a ** 2
        print(x.is_leaf) # True
        print(y.is_leaf) # True
        print(a.is_leaf) # False
        print(z.is_leaf) # False
        z.backward()
        print(x.grad) # tensor(10.)
        print(y.grad) # tensor(10.)
        print(a.grad) # usually None
    """, False),
    ("002-retain_grad", """
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        y = torch.tensor(3.0, requires_grad=True)
        a = x + y
        a.retain_grad()
        z = a ** 2
        z.backward()
        print(a.grad) # tensor(10.)
    """, False),
    ("002-dynamic", """
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        if x.item() > 0:
            y = x ** 2
        else:
            y = -x
        y.backward()
        print(x.grad) # tensor(4.)
    """, False),
    ("002-mlp", """
        import torch
        from torch import nn
        class MLP(nn.Module):
            def __init__(self):
                super().__init__()
                self.layer1 = nn.Linear(10, 32)
                self.activation = nn.ReLU()
                self.layer2 = nn.Linear(32, 1)

            def forward(self, x):
                h = self.layer1(x)
                h = self.activation(h)
                y = self.layer2(h)
                return y

        model = MLP()
        X = torch.randn(16, 10)
        target = torch.randn(16, 1)
        pred = model(X)
        loss = ((pred - target) ** 2).mean()
        loss.backward()
        for name, param in model.named_parameters():
            print(name, param.shape, param.grad.shape)
        print(model)
    """, False),
    ("002-requires_grad", """
        import torch
        from torch import nn
        x = torch.tensor(2.0, requires_grad=True)
        y = torch.tensor(3.0)
        z = x * y
        print(z.requires_grad) # True
        x = torch.tensor(2.0)
        y = torch.tensor(3.0)
        z = x * y
        print(z.requires_grad) # False
        print(z.grad_fn) # None
        layer = nn.Linear(3, 4)
        print(layer.weight.requires_grad) # True
        print(layer.bias.requires_grad) # True
    """, False),
    ("002-detach", """
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        y = x ** 2
        z = y.detach()
        print(y.requires_grad) # True
        print(z.requires_grad) # False
        w = z * 3
        print(w.requires_grad) # False
    """, False),
    ("002-lifetime", """
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        y = x ** 2
        y.backward(retain_graph=True)
        y.backward()
        print(x.grad)
    """, False),
    ("002-complete", """
        import torch
        from torch import nn

        torch.manual_seed(0)

        model = nn.Sequential(
            nn.Linear(4, 8),
            nn.ReLU(),
            nn.Linear(8, 1),
        )

        X = torch.randn(10, 4)
        y = torch.randn(10, 1)

        pred = model(X)
        loss = ((pred - y) ** 2).mean()

        print(loss)
        print(loss.grad_fn)

        model.zero_grad()
        loss.backward()

        for name, param in model.named_parameters():
            print(name, param.shape, param.grad.shape)
    """, True),
    ("002-error-no-grad", """
        import torch
        x = torch.tensor(2.0)
        y = x ** 2
        y.backward()
    """, False),
    ("002-correct", """
        import torch
        x = torch.tensor(2.0, requires_grad=True)
        y = x ** 2
        y.backward()
        print(x.grad)
    """, False),
    ("002-training-loop", """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        loss_fn = nn.MSELoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        dataloader = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]
        for X, y in dataloader:
            pred = model(X)
            loss = loss_fn(pred, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(loss.grad_fn, [p.grad is None for p in model.parameters()])
        h = model[0](X)
        h = h.detach()
        y = model[2](model[1](h))
        print(y.requires_grad, h.requires_grad)
    """, True),
]

_ADDR = re.compile(r"0x[0-9a-fA-F]+")
_NUM = re.compile(r"-?\d+\.\d*(e[+-]\d+)?|-?\d+\.?\d*e[+-]\d+")


def _run(code: str, lib) -> str:
    real_import = builtins.__import__

    def fake_import(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "torch" or name.startswith("torch."):
            mod = lib
            for part in name.split(".")[1:]:
                mod = getattr(mod, part)
            if fromlist or "." not in name:
                return mod
            return lib
        return real_import(name, globals, locals, fromlist, level)

    b = dict(vars(builtins))
    b["__import__"] = fake_import
    out = io.StringIO()
    ns = {"__builtins__": b, "__name__": "__seed__"}
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(textwrap.dedent(code), "<seed>", "exec"), ns)
        except Exception as e:  # the example's own error is part of what it prints
            print(f"!! {type(e).__name__}: {str(e).splitlines()[0]}")
    return out.getvalue()


def _normalise(text: str, random: bool) -> str:
    text = _ADDR.sub("0x?", text)
    if random:
        text = _NUM.sub("<num>", text)
    return text


@pytest.mark.parametrize("sid,code,random", SNIPPETS, ids=[s[0] for s in SNIPPETS])
def test_seed_prints_like_pytorch(sid, code, random):
    torch.manual_seed(0)
    torchjax.manual_seed(0)
    expected = _normalise(_run(code, torch), random)
    got = _normalise(_run(code, torchjax), random)
    assert got == expected


def test_seed_intent_values_match():
    """The 001 example's intent with shared weights: loss and gradients equal PyTorch's."""
    import numpy as np
    rng = np.random.default_rng(0)
    w, b, x = rng.normal(size=(5, 3)), rng.normal(size=(5,)), rng.normal(size=(10, 3))
    res = []
    for lib in (torch, torchjax):
        W = lib.tensor(w, dtype=lib.float32, requires_grad=True)
        B = lib.tensor(b, dtype=lib.float32, requires_grad=True)
        X = lib.tensor(x, dtype=lib.float32)
        loss = (lib.mm(X, W.t()) + B).pow(2).mean()
        loss.backward()
        res.append((loss.item(), W.grad.numpy(), B.grad.numpy()))
    assert abs(res[0][0] - res[1][0]) < 1e-5
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[0][2], res[1][2], rtol=1e-5, atol=1e-6)
