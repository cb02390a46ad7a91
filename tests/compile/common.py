"""Helpers of the compiled-mode tests: the same training loop run eagerly and compiled."""

from __future__ import annotations

import numpy as np

import torchjax as torch
from torchjax import _dispatch
from torchjax._autograd import engine


def state_arrays(model, opt):
    """Everything a step leaves behind, as NumPy: parameters, grads, buffers, optimizer state."""
    out = {}
    for name, p in model.named_parameters():
        out[name] = p.detach().numpy()
        out[name + ".grad"] = None if p.grad is None else p.grad.numpy()
    for name, b in model.named_buffers():
        out[name] = b.numpy()
    for i, st in opt.state_dict()["state"].items():
        for k, v in st.items():
            out[f"opt.{i}.{k}"] = v.numpy() if isinstance(v, torch.Tensor) else v
    return out


def assert_states_close(a, b, rtol=2e-5, atol=2e-6):
    assert a.keys() == b.keys(), set(a) ^ set(b)
    for k in a:
        if a[k] is None or b[k] is None:
            assert a[k] is None and b[k] is None, k
        else:
            np.testing.assert_allclose(a[k], b[k], rtol=rtol, atol=atol, err_msg=k)


class Counting:
    """Counts eager op dispatches and backward passes while active (a compiled call after its
    trace makes neither: the whole step is its one program)."""

    def __enter__(self):
        self.ops = 0
        self.backwards = engine.RUNS[0]
        original = self._original = _dispatch.dispatch

        def counted(*a, **k):
            self.ops += 1
            return original(*a, **k)
        _dispatch.dispatch = counted
        return self

    def __exit__(self, *exc):
        _dispatch.dispatch = self._original
        self.backwards = engine.RUNS[0] - self.backwards
