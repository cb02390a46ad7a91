"""Second derivatives of every differentiable row against PyTorch's double backward, in float64.

autograd.grad(..., create_graph=True) records the backward pass on the tape; differentiating
the resulting gradients (with respect to the inputs and the cotangent) must give PyTorch's
values. Rows whose PyTorch double backward is missing are skipped with PyTorch's reason.

Compiling every row's double backward takes minutes, so the suite checks a fixed selection
that covers each kind of backward (result-saving rules, composites, views, complex, linear
algebra, convolution and pooling, losses, indexing); TORCHJAX_ALL_SECOND_ORDER=1 checks every
differentiable row (all pass but index_reduce, see SKIP)."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import torchjax
from torchjax._ops import OPS

from . import harness
from .test_table import NAMES, SAMPLES, _as64, row


def _second_order(lib, name, sample):
    args = tuple(harness._to_lib(a, lib, True) for a in sample.args)
    inputs = [t for t in harness._leaves(args) if t.requires_grad]
    outs = [o for o in harness._flat_outputs(harness.call(lib, name, sample, args))
            if o.requires_grad]
    if not inputs or not outs:
        return None
    rng = np.random.default_rng(3)
    ws = [lib.tensor(rng.uniform(-1, 1, size=tuple(o.shape))).to(o.dtype).requires_grad_()
          for o in outs]
    grads = lib.autograd.grad(outs, inputs, ws, create_graph=True, allow_unused=True)
    vs = [rng.uniform(-1, 1, size=tuple(t.shape)) for t in inputs]
    total = None
    for g, v in zip(grads, vs):
        if g is None or not g.requires_grad:
            continue
        term = (g * lib.tensor(v).to(g.dtype)).sum()
        total = term if total is None else total + term
    if total is None:
        return grads, None
    return grads, lib.autograd.grad(total, inputs + ws, allow_unused=True)


SELECTED = (
    "abs", "add", "addmm", "atan2", "avg_pool2d", "baddbmm", "binary_cross_entropy",
    "cat", "clamp", "conj", "convolution", "cos", "cross_entropy", "cumprod", "cumsum", "div",
    "elu", "exp", "expand", "fft_ifft", "gather", "gelu", "hardswish", "index_select",
    "layer_norm", "lerp", "linalg_det", "linalg_inv_ex", "linalg_norm", "linalg_solve_ex", "linear",
    "log", "log_softmax", "logsumexp", "masked_fill", "matmul", "maximum", "_batch_norm",
    "max_pool2d_with_indices", "mean", "mse_loss", "mul", "nll_loss", "norm", "permute", "polar", "pow", "prod",
    "reciprocal", "relu", "rsqrt", "_scaled_dot_product_attention_math", "select", "sigmoid",
    "silu", "sin", "smooth_l1_loss", "softmax", "softplus", "sqrt", "std", "sub", "sum",
    "tanh", "var", "where", "xlogy",
)
# row -> why its second derivative is not compared
SKIP = {"index_reduce": "JAX cannot differentiate a scatter-multiply with repeated indices "
                        "twice (its first derivative is PyTorch's)"}


def _dense(t):
    """PyTorch returns efficient zero tensors and lazily conjugated/negated views for some
    derivatives; numpy needs plain values."""
    if isinstance(t, torch.Tensor):
        if t._is_zerotensor():
            return torch.zeros(t.shape, dtype=t.dtype)
        return t.resolve_conj().resolve_neg()
    return t


def _first(name):
    for s in SAMPLES.get(name, ()):
        if s.grad and any(isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in s.args):
            return _as64(s)
    return None


ROWS = [n for n in NAMES if OPS[n].differentiable] if os.environ.get(
    "TORCHJAX_ALL_SECOND_ORDER") else [n for n in SELECTED if n in OPS]


def test_selection_names_rows():
    assert set(SELECTED) <= set(OPS), set(SELECTED) - set(OPS)


@pytest.mark.parametrize("name", [row(n) for n in ROWS])
def test_second_order_matches_torch(name):
    if name in SKIP:
        pytest.skip(SKIP[name])
    sample = _first(name)
    if sample is None:
        pytest.skip("no floating sample with gradients")
    try:
        expected = _second_order(torch, name, sample)
    except RuntimeError as e:
        pytest.skip(f"PyTorch has no double backward here: {str(e)[:80]}")
    got = _second_order(torchjax, name, sample)
    if expected is None:
        return
    (g_th, h_th), (g_tj, h_tj) = expected, got
    for a, b in zip(g_tj, g_th):
        b = _dense(b)
        if b is not None:
            harness.assert_same(a, b, 1e-7, 1e-6, f"{name}: first derivative")
    if h_th is None:
        return
    for i, (a, b) in enumerate(zip(h_tj, h_th)):
        b = _dense(b)
        if b is None or a is None:
            # no path from the input: one library may say None where the other says zeros
            other = a if b is None else b
            assert other is None or not np.any(harness.to_numpy(other)), \
                f"{name}: second derivative {i}"
            continue
        harness.assert_same(a, b, 1e-6, 1e-5, f"{name}: second derivative {i}")
