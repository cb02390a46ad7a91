"""Every distribution's statistics, log_prob, cdf, icdf and entropy, and their gradients
with respect to the parameters, against PyTorch's with the same parameter values."""

import numpy as np
import pytest
import torch

import torchjax

from .cases import CASES
from .helpers import assert_close, numpy, tensors

PROPERTIES = ("mean", "variance", "stddev", "mode")
METHODS = ("entropy", "log_prob", "cdf", "icdf")


def evaluate(lib, case):
    """(parameters, distribution, {quantity: tensor or NotImplemented})."""
    p = tensors(lib, case.params)
    d = case.build(lib.distributions, p)
    args = {"log_prob": case.value, "cdf": case.cdf, "icdf": case.icdf}
    out = {}
    for q in PROPERTIES + METHODS:
        if q in args and args[q] is None or q in case.torch_wrong:
            continue
        try:
            if q in PROPERTIES:
                out[q] = getattr(d, q)
            elif q == "entropy":
                out[q] = d.entropy()
            else:
                out[q] = getattr(d, q)(lib.tensor(args[q]))
        except NotImplementedError:
            out[q] = NotImplemented
    return p, d, out


def differentiable(out, case):
    """The finite, differentiable quantities, and the cotangents their gradients are taken
    with: each quantity weighted differently, so a wrong gradient in one cannot cancel
    another, and non-finite entries weighted 0."""
    outs, cts = [], []
    for i, (q, v) in enumerate(sorted(out.items())):
        if v is NotImplemented or q in case.no_grad or not v.requires_grad:
            continue
        values = numpy(v)
        outs.append(v)
        cts.append(np.where(np.isfinite(values), i + 1.0, 0.0).astype(values.dtype))
    return outs, cts


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_values_and_gradients_match_torch(case):
    tp, td, tout = evaluate(torch, case)
    jp, jd, jout = evaluate(torchjax, case)
    assert tuple(jd.batch_shape) == tuple(td.batch_shape)
    assert tuple(jd.event_shape) == tuple(td.event_shape)
    assert set(jout) == set(tout)
    for q, expected in tout.items():
        actual = jout[q]
        if expected is NotImplemented:
            assert actual is NotImplemented, f"{q}: PyTorch has none, torchjax gave one"
            continue
        assert actual is not NotImplemented, f"{q} raised NotImplementedError"
        assert_close(actual, expected, case.rtol, case.atol, what=q)

    (t_outs, t_cts), (j_outs, _) = differentiable(tout, case), differentiable(jout, case)
    assert len(t_outs) == len(j_outs)
    if not t_outs:
        return
    # backward from every quantity at once, with the same cotangents in both libraries (a
    # cotangent instead of a loss: no extra ops, so only the quantities' own programs compile)
    torch.autograd.backward(t_outs, [torch.tensor(c) for c in t_cts])
    torchjax.autograd.backward(j_outs, [torchjax.tensor(c) for c in t_cts])
    for name, t in tp.items():
        if not (isinstance(t, torch.Tensor) and t.requires_grad):
            continue
        g, expected = jp[name].grad, t.grad
        if expected is None:
            assert g is None or not np.any(g.numpy()), f"grad of {name}"
            continue
        assert g is not None, f"no gradient reached {name}"
        assert_close(g, expected, case.rtol * 5, case.atol * 5, what=f"grad of {name}")



def test_kumaraswamy_mode_maximises_the_density():
    """PyTorch 2.13's Kumaraswamy.mode is nan for every parameter; torchjax's is the
    maximiser ((a - 1) / (a b - 1))^(1 / a) where a, b >= 1 (nan otherwise, as PyTorch's)."""
    a, b = torch.tensor([3.2, 2.0, 1.5, 0.5]), torch.tensor([2.5, 2.0, 4.0, 2.0])
    mode = numpy(torchjax.distributions.Kumaraswamy(
        torchjax.tensor(a.numpy()), torchjax.tensor(b.numpy())).mode)
    assert np.isnan(mode[3]) and not np.isnan(mode[:3]).any()
    density = torch.distributions.Kumaraswamy(a[:3], b[:3])
    at = density.log_prob(torch.tensor(mode[:3]))
    for step in (1e-3, -1e-3):
        assert (density.log_prob(torch.tensor(mode[:3] + step)) < at).all()
