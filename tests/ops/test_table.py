"""Every row of the op table against PyTorch 2.13: values, dtypes, shapes and gradients, in
float32 and float64, plus finite-difference gradient checks in float64."""

from __future__ import annotations

import importlib
import pathlib
import pkgutil

import numpy as np
import pytest

import torchjax
from torchjax._ops import OPS

from . import harness

SAMPLES: dict = {}
# (row, "float16" | "bfloat16") -> why test_dtypes does not compare that case; a samples file
# may add its own as HALF_SKIP
HALF_SKIP: dict = {}
# row -> why its grad_fn name is not compared with PyTorch's; a samples file may add its own
# as GRAD_NAME_SKIP
GRAD_NAME_SKIP: dict = {}
for _m in pkgutil.iter_modules([str(pathlib.Path(__file__).parent)]):
    if _m.name.startswith("samples_"):
        _mod = importlib.import_module(f"tests.ops.{_m.name}")
        SAMPLES.update(_mod.SAMPLES)
        HALF_SKIP.update(getattr(_mod, "HALF_SKIP", {}))
        GRAD_NAME_SKIP.update(getattr(_mod, "GRAD_NAME_SKIP", {}))

NAMES = sorted(OPS)


def row(name: str):
    """A row's parameter: its tests (here, and test_second_order's) form one xdist group, run
    by one worker (pyproject's `--dist loadgroup`), so the float64 programs that
    test_against_torch compiles for the row's first sample are the ones finite differences and
    second derivatives run again, rather than each worker compiling its own."""
    return pytest.param(name, marks=pytest.mark.xdist_group(f"row-{name}"))


def _as64(s: harness.Sample) -> harness.Sample:
    def conv(a):
        if isinstance(a, harness.Const):
            return harness.Const(conv(a.array))
        if isinstance(a, np.ndarray) and a.dtype == np.float32:
            return a.astype(np.float64)
        if isinstance(a, (list, tuple)) and a and all(isinstance(x, np.ndarray) for x in a):
            return type(a)(conv(x) for x in a)
        return a
    return harness.Sample(tuple(conv(a) for a in s.args), s.kwargs, s.grad, s.call,
                          s.atol, s.rtol, s.desc, s.grad_name)


def _has_float32(s):
    return any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in s.args) or any(
        isinstance(a, (list, tuple)) and any(isinstance(x, np.ndarray) and x.dtype == np.float32
                                             for x in a) for a in s.args)


def test_every_row_has_samples():
    missing = [n for n in NAMES if not SAMPLES.get(n)]
    assert not missing, f"op rows without test samples: {missing}"


def test_no_samples_for_unknown_rows():
    assert not set(SAMPLES) - set(OPS), set(SAMPLES) - set(OPS)


@pytest.mark.parametrize("name", [row(n) for n in NAMES])
def test_against_torch(name):
    samples = SAMPLES.get(name)
    assert samples, f"{name} has no samples"
    op = OPS[name]
    names = name not in GRAD_NAME_SKIP
    for k, s in enumerate(samples):
        harness.compare(name, s, grad=op.differentiable, grad_names=names)
        # float64 repeats the first sample only: dtype handling does not depend on the case,
        # and every small sample is checked in float64 by finite differences below
        if k == 0 and _has_float32(s):
            harness.compare(name, _as64(s), grad=op.differentiable, grad_names=names)


# Finite differences check the first few small samples of each row in float64 (each sample is
# a new float64 compile); test_against_torch compares every sample's gradients with PyTorch's.
FD_SAMPLES = 3


@pytest.mark.parametrize("name", [row(n) for n in NAMES if OPS[n].differentiable])
def test_finite_differences(name):
    samples = [s for s in SAMPLES.get(name, ()) if s.grad]
    checked = 0
    for s in samples:
        sizes = [a.size for a in s.args if isinstance(a, np.ndarray)]
        if not sizes or max(sizes) > 64:
            continue
        if not any(isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in s.args):
            continue
        if any(isinstance(a, np.ndarray) and a.dtype.kind == "f" and np.isnan(a).any()
               for a in s.args):
            continue  # finite differences of NaN are NaN
        checked += bool(harness.gradcheck(name, s))
        if checked == FD_SAMPLES:
            break
    if not checked and any(s.grad for s in SAMPLES.get(name, ())):
        pytest.skip("no small floating sample to check with finite differences")


_ = torchjax
