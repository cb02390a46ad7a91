"""Factories in every call form PyTorch accepts (sizes, size=, out=, dtype/device/layout/
requires_grad/pin_memory keywords), the default device (`with torch.device(...)`,
set_default_device) and the meta device, against PyTorch 2.13."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchjax


def _describe(t):
    if not isinstance(t, (torch.Tensor, torchjax.Tensor)):
        return repr(t)
    values = None if t.is_meta else t.detach().numpy().tolist()
    return (tuple(t.shape), str(t.dtype).replace("torchjax", "torch"), t.device.type,
            t.requires_grad, values)


def _outcome(f, lib):
    try:
        return _describe(f(lib))
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return f"{type(e).__name__}: {e}"


CALLS = {
    "zeros varargs": lambda t: t.zeros(2, 3),
    "zeros tuple": lambda t: t.zeros((2, 3)),
    "zeros list": lambda t: t.zeros([2, 3]),
    "zeros Size": lambda t: t.zeros(t.Size([2, 3])),
    "zeros size=": lambda t: t.zeros(size=(2, 3)),
    "zeros 0-d": lambda t: t.zeros(()),
    "zeros []": lambda t: t.zeros([]),
    "zeros 0-d tensor size": lambda t: t.zeros(t.tensor(3)),
    "ones size=": lambda t: t.ones(size=[1, 2]),
    "empty size=": lambda t: t.empty(size=(2, 3)).shape,
    "empty varargs": lambda t: t.empty(4, 1).shape,
    "rand size=": lambda t: t.rand(size=(2,)).shape,
    "randn size=": lambda t: t.randn(size=[1, 2]).dtype,
    "full size=": lambda t: t.full(size=(2,), fill_value=3.0),
    "randint size=": lambda t: t.randint(10, size=(3,)).shape,
    "randint keywords": lambda t: t.randint(low=0, high=10, size=(3,)).dtype,
    "keywords": lambda t: t.zeros(2, dtype=t.float64, device="cpu", requires_grad=True,
                                  layout=t.strided, pin_memory=False),
    "ones layout": lambda t: t.ones(2, layout=t.strided),
    "layout str": lambda t: t.zeros(2, layout="strided"),
    "size twice": lambda t: t.zeros(2, size=(3,)),
    "two sizes": lambda t: t.zeros((2, 3), (4,)),
    "negative": lambda t: t.zeros(-1),
    "arange keywords": lambda t: t.arange(0, 5, 2, dtype=t.float32, requires_grad=True),
    "eye keywords": lambda t: t.eye(2, 3, dtype=t.int64, layout=t.strided),
    "linspace layout": lambda t: t.linspace(0, 1, 3, layout=t.strided),
    "tensor keywords": lambda t: t.tensor([1.0, 2.0], dtype=t.float64, device="cpu",
                                          requires_grad=True, pin_memory=False),
    "like keywords": lambda t: t.zeros_like(t.ones(2), dtype=t.int32, layout=t.strided,
                                            memory_format=t.preserve_format
                                            if hasattr(t, "preserve_format") else None),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_call_forms(name):
    f = CALLS[name]
    assert _outcome(f, torchjax) == _outcome(f, torch)


def _out(lib):
    res = []
    o = lib.empty(2, 3, dtype=lib.int64)
    r = lib.zeros(2, 3, out=o)
    res.append((r is o, _describe(o)))
    o = lib.empty(5)
    r = lib.ones(2, 3, out=o)
    res.append((r is o, _describe(o)))
    o = lib.empty(3, dtype=lib.int32)
    res.append((lib.arange(3, out=o) is o, _describe(o)))
    o = lib.empty(3)
    res.append((lib.full((3,), 2, out=o) is o, _describe(o)))
    res.append((lib.rand(3, out=o) is o, o.shape))
    res.append(_describe(lib.eye(2, out=lib.empty(1))))
    res.append(_describe(lib.linspace(0, 1, 3, out=lib.empty(3))))
    res.append(_outcome(lambda t: t.zeros(2, out=t.empty(2), dtype=t.float64), lib))
    res.append(_outcome(lambda t: t.zeros(2, out=[1.0]), lib))
    return res


def test_out():
    assert _out(torchjax) == _out(torch)


def test_layouts():
    for name in ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
                 "sparse_bsc"):
        assert repr(getattr(torchjax, name)) == repr(getattr(torch, name))
        assert isinstance(getattr(torchjax, name), torchjax.layout)
    assert torchjax.ones(2).layout is torchjax.strided
    with pytest.raises(NotImplementedError, match="sparse_coo"):
        torchjax.zeros(2, layout=torchjax.sparse_coo)


def _default_devices(lib):
    seen = []
    with lib.device("meta"):
        seen += [lib.zeros(2).device, lib.tensor([1.0]).device, lib.arange(3).device,
                 lib.get_default_device(), lib.zeros_like(lib.ones(2, device="cpu")).device,
                 lib.ones(2, device="cpu").device, lib.Tensor(2, 3).device,
                 lib.normal(0.0, 1.0, (2,)).device]
        with lib.device("cpu"):
            seen += [lib.zeros(1).device, lib.get_default_device()]
        seen.append(lib.randn(1).device)
    seen.append(lib.zeros(1).device)
    lib.set_default_device("meta")
    try:
        seen += [lib.zeros(2).device, lib.get_default_device()]
        with lib.device("cpu"):
            seen.append(lib.ones(1).device)
        seen.append(lib.full((1,), 2.0).device)
    finally:
        lib.set_default_device(None)
    seen += [lib.zeros(1).device, lib.get_default_device()]
    return [str(d) for d in seen]


def test_default_device():
    assert _default_devices(torchjax) == _default_devices(torch)


def _meta(lib):
    out = []
    x = lib.empty(2, 3, device="meta")
    out += [repr(x), repr(lib.nn.Parameter(x)), x.is_meta, str(x.device), x.to("meta") is x,
            repr(lib.empty(2, dtype=lib.int64, device="meta")),
            repr(lib.empty(2, device="meta").requires_grad_() * 2),
            repr(x @ x.t()), repr(x.sum(1)), repr(x[0].add_(1)), repr(x.uniform_())]
    for f in (x.item, x.numpy, x.tolist, lambda: x.to("cpu"), lambda: float(x.sum()),
              lambda: bool(x.sum() > 0)):
        out.append(_outcome(lambda _: f(), lib))
    return out


def test_meta_tensors():
    assert _meta(torchjax) == _meta(torch)


def test_ops_on_meta_tensors_compile_nothing():
    # shapes only: the op's trace (kept per argument types), never an XLA program; a meta
    # array once reached jax.jit, which compiled a program for its shape before refusing it
    x = torchjax.empty(5, 7, device="meta", requires_grad=True)
    before = torchjax.compile_stats()
    y = ((x * 2 + 1) @ x.t()).softmax(1).sum(0)
    y.add_(3)
    after = torchjax.compile_stats()
    assert y.is_meta and tuple(y.shape) == (5,)
    assert (after.lowered, after.compiled, after.cache_hits) == \
        (before.lowered, before.compiled, before.cache_hits)


class _Net:
    @staticmethod
    def build(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = lib.nn.Conv2d(3, 4, 3)
                self.bn = lib.nn.BatchNorm2d(4)
                self.fc = lib.nn.Linear(4, 2)
                self.emb = lib.nn.Embedding(5, 4)
                self.apply(self._init)

            def _init(self, m):
                if isinstance(m, lib.nn.Linear):
                    lib.nn.init.normal_(m.weight, 0, 0.02)
                    lib.nn.init.zeros_(m.bias)

            def forward(self, x):
                return self.fc(self.bn(self.conv(x)).mean((2, 3)))
        return Net


def _meta_model(lib):
    Net = _Net.build(lib)
    lib.manual_seed(0)
    reference = Net()
    with lib.device("meta"):
        m = Net()
    out = [sorted((n, p.device.type, tuple(p.shape), p.requires_grad)
                  for n, p in m.named_parameters()),
           sorted((n, b.device.type) for n, b in m.named_buffers())]
    out.append(_outcome(lambda _: m.to("cpu"), lib))
    empty = Net
    with lib.device("meta"):
        empty = Net()
    empty = empty.to_empty(device="cpu")
    out.append(sorted((n, p.device.type, type(p).__name__, p.requires_grad)
                      for n, p in empty.named_parameters()))
    with lib.device("meta"):
        assigned = Net()
    out.append(str(assigned.load_state_dict(reference.state_dict(), assign=True)))
    out.append(sorted((n, p.device.type, type(p).__name__, p.requires_grad)
                      for n, p in assigned.named_parameters()))
    x = lib.ones(1, 3, 5, 5)
    assigned.eval()
    reference.eval()
    out.append(bool(lib.equal(assigned(x), reference(x))))
    return out


def test_meta_model_to_empty_and_assign():
    assert _meta_model(torchjax) == _meta_model(torch)


def test_meta_model_builds_without_data():
    # a large model on the meta device allocates nothing and computes no initialisation
    with torchjax.device("meta"):
        m = torchjax.nn.Linear(50_000, 50_000)
    assert m.weight.is_meta and m.weight.shape == (50_000, 50_000)
    assert not isinstance(m.weight._data, np.ndarray)
