"""Every distribution's statistics, log_prob, cdf, icdf and entropy, and their gradients
with respect to the parameters, against PyTorch's with the same parameter values."""

import numpy as np
import pytest
import torch

import torchjax

from .cases import CASES
from .helpers import assert_close, tensors

PROPERTIES = ("mean", "variance", "stddev", "mode")
METHODS = ("entropy", "log_prob", "cdf", "icdf")


def evaluate(lib, case):
    """(parameters, distribution, {quantity: tensor or NotImplemented})."""
    p = tensors(lib, case.params)
    d = case.build(lib.distributions, p)
    args = {"log_prob": case.value, "cdf": case.cdf, "icdf": case.icdf}
    out = {}
    for q in PROPERTIES + METHODS:
        if q in args and args[q] is None:
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


def loss_terms(out, case):
    """The finite, differentiable quantities, each weighted differently so a wrong gradient
    in one cannot cancel another."""
    terms = []
    for i, (q, v) in enumerate(sorted(out.items())):
        if v is NotImplemented or q in case.no_grad or not v.requires_grad:
            continue
        if not bool(np.isfinite(v.detach().numpy()).all()):
            continue
        terms.append((i + 1) * v.sum())
    return terms


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

    t_terms, j_terms = loss_terms(tout, case), loss_terms(jout, case)
    assert len(t_terms) == len(j_terms)
    if not t_terms:
        return
    sum(t_terms).backward()
    sum(j_terms).backward()
    for name, t in tp.items():
        if not (isinstance(t, torch.Tensor) and t.requires_grad):
            continue
        g, expected = jp[name].grad, t.grad
        if expected is None:
            assert g is None or not np.any(g.numpy()), f"grad of {name}"
            continue
        assert g is not None, f"no gradient reached {name}"
        assert_close(g, expected, case.rtol * 5, case.atol * 5, what=f"grad of {name}")
