"""Every op row's samples run inside `torchjax.compile(fullgraph=True)` and agree with eager mode.

The reference is PyTorch, as in test_table: test_table holds eager torchjax to PyTorch's
values, dtypes, shapes, requires_grad flags and gradients on exactly these samples, with these
tolerances, so a compiled result that meets PyTorch's meets eager's. Running eager torchjax
here as well would double the cost for nothing: eager mode compiles one XLA program per op and
per backward, about 2-6 s per row even with the persistent cache warm (25 minutes for the
table), while PyTorch answers in microseconds. Eager torchjax is the reference only where
PyTorch cannot be: the random draws of RANDOM_ROWS, which must be eager's own.

Two ways to compile:

- "inside": the compiled function returns each sample's outputs and the gradients of
  sum(output_i * w_i) with respect to the inputs, taken by one torchjax.autograd.grad inside
  it (the backward pass is part of the program, as in a compiled training step);
- "forward": it returns the outputs only, and the same gradients are taken eagerly through the
  compiled forward, which the tape holds as one node whose backward is JAX's vjp of the whole
  program (a compiled model in an eager loop); the outputs' requires_grad flags must be
  PyTorch's.

The samples of one samples file (a "group") are one program per mode, and its gradients one
backward of a summed loss, so each group pays the fixed cost of a program once; the program
is called twice, the second time on new input tensors, and must be compiled once and run
twice. A sample that breaks the trace makes its group raise Unsupported naming the sample's
line in samples_*.py: list it in compiled_lists.

Cost, measured on this 2-core machine: a sample costs ~70 ms of tracing and ~190 ms of XLA
compile cold (~35 ms with the persistent cache warm), whatever the grouping. Every sample of
every row (3639, TORCHJAX_ALL_COMPILED=1) takes ~23 minutes per mode cold (~5 warm). So by
default each row compiles one sample, its first that takes gradients, plus the REGRESSIONS, in
"inside" mode, and "forward" mode runs the FORWARD_ROWS: 439 + 75 samples, ~75 s of CPU cold
and ~35 s warm for the whole file. The full run passes; run it after changing the compiler,
the tape or a row's samples.
"""

from __future__ import annotations

import importlib
import os
import pathlib
import pkgutil
import re

import numpy as np
import pytest
import torch

import torchjax
from torchjax._ops import OPS
from torchjax.compiler import Unsupported

from . import harness
from .compiled_lists import (
    BREAK_REASON,
    KNOWN_COMPILE_BUGS,
    RANDOM_ROWS,
    REGRESSIONS,
    SHAPE_ERRORS,
    UNTRACEABLE,
    UNTRACEABLE_SAMPLES,
    VALUE_CHECKS,
)
from .test_second_order import SELECTED as SECOND_ORDER_ROWS
from .test_table import SAMPLES

ALL = bool(os.environ.get("TORCHJAX_ALL_COMPILED"))

# Rows differentiated through a compiled forward by default (every differentiable row with
# TORCHJAX_ALL_COMPILED=1): JAX's vjp of the whole program replaces the rows' own backward
# rules there, so what can differ is a kind of rule, not a row. test_second_order's selection
# covers each kind (result-saving rules, composites, views, complex, linear algebra,
# convolution and pooling, losses, indexing); sign, floor, round and slogdet's sign have zero
# derivatives, where the traced tape, not JAX, must link outputs to inputs.
FORWARD_ROWS = frozenset(SECOND_ORDER_ROWS) | {"sign", "floor", "round", "slogdet"}

GROUPS: dict = {}  # samples file -> its rows
for _m in pkgutil.iter_modules([str(pathlib.Path(__file__).parent)]):
    if _m.name.startswith("samples_"):
        GROUPS[_m.name[len("samples_"):]] = sorted(
            importlib.import_module(f"tests.ops.{_m.name}").SAMPLES)


def _excluded(name) -> set:
    """Indices of the row's samples tested elsewhere (untraceable, value checks, known bugs)."""
    out = set(KNOWN_COMPILE_BUGS.get(name, ((),))[0])
    if name in UNTRACEABLE:
        return out | set(range(len(SAMPLES[name]))) - set(SHAPE_ERRORS.get(name, ()))
    for table in (UNTRACEABLE_SAMPLES, VALUE_CHECKS):
        out |= set(table.get(name, ((),))[0])
    return out


def _items(group, mode):
    """The group's samples to compile in `mode`: every one with TORCHJAX_ALL_COMPILED=1;
    by default each row's first sample that takes gradients, in "forward" mode only for the
    FORWARD_ROWS (see the module docstring for the cost)."""
    out = []
    for name in GROUPS[group]:
        again = REGRESSIONS.get(name, ())
        if mode == "forward" and not (ALL or name in FORWARD_ROWS or again):
            continue
        own = [(name, k, s) for k, s in enumerate(SAMPLES[name]) if k not in _excluded(name)
               and (mode == "inside" or _differentiable(name, s))]
        if own and not ALL:
            first = next((x for x in own if _differentiable(name, x[2]) and _floating(x[2])),
                         own[0])
            own = [x for x in own if x is first or x[1] in again]
        out += own
    return out


def _floating(sample):
    return any(isinstance(a, np.ndarray) and a.dtype.kind in "fc" for a in sample.args)


def _differentiable(name, sample):
    return OPS[name].differentiable and sample.grad


def _inputs(lib, items):
    """Fresh tensors for every sample: a sample's call may write into its inputs."""
    return [tuple(harness._to_lib(a, lib, _differentiable(n, s)) for a in s.args)
            for n, _, s in items]


def _wrt(args):
    # the inputs to differentiate: those the sample marked requires_grad
    return [t for t in harness._leaves(args) if t.requires_grad]


def _weights(lib, outs):
    # harness.compare's cotangents; inside a trace they are constants of the program
    rng = np.random.default_rng(1)
    return [lib.tensor(rng.uniform(-1, 1, size=tuple(o.shape))).to(o.dtype) for o in outs]


def _flatten(x, out):
    if isinstance(x, (list, tuple)):  # named tuples and Size too
        for v in x:
            _flatten(v, out)
    elif isinstance(x, dict):
        for k in sorted(x):
            _flatten(x[k], out)
    else:
        out.append(x)
    return out


def _run(lib, items, all_args, backward, results=None):
    """Each sample's result, and (when `backward`) per sample the gradients of the summed
    weighted outputs that require grad with respect to its inputs (None where not taken),
    by one autograd.grad: the inputs are disjoint, so each input's gradient is its own
    sample's. Given `results` (of a compiled forward), only the gradients are taken."""
    given = results is not None
    results = results if given else []
    outs, ws, leaves, where = [], [], [], []
    for j, ((name, _, s), args) in enumerate(zip(items, all_args)):
        x = _wrt(args)
        if given:
            out = results[j]
        else:
            out = harness.call(lib, name, s, args)
            results.append(out)
        o = [t for t in harness._flat_outputs(out) if t.requires_grad]
        if backward and _differentiable(name, s) and o and x:
            outs += o
            ws += _weights(lib, o)
            where.append((len(leaves), len(x)))
            leaves += x
        else:
            where.append((None, len(x)))
    grads = lib.autograd.grad(outs, leaves, ws, allow_unused=True) if outs else ()
    return results, [(None,) * n if i is None else tuple(grads[i:i + n]) for i, n in where]


def _reference(items):
    """PyTorch's results and input gradients (None where PyTorch gives none)."""
    return _run(torch, items, _inputs(torch, items), backward=True)


def _same(what, a, b, atol, rtol):
    """A torchjax value against PyTorch's: tensors by harness.assert_same (dtype, shape,
    values) and requires_grad; Python values equal, NaN or not."""
    if isinstance(b, torch.Tensor):
        assert isinstance(a, torchjax.Tensor), f"{what}: compiled gives {a!r}"
        # autograd.grad may hand back a lazily negated or conjugated view, which numpy() refuses
        harness.assert_same(a, b.resolve_neg().resolve_conj(), atol, rtol, what)
    elif isinstance(b, torch.dtype):
        assert str(a).replace("torchjax", "torch") == str(b), f"{what}: {a}, torch {b}"
    else:
        assert not isinstance(a, torchjax.Tensor), f"{what}: compiled gives a tensor, torch {b!r}"
        assert type(a) is type(b) and (a == b or (a != a and b != b)), \
            f"{what}: compiled {a!r}, torch {b!r}"


def _compare(items, got, ref, failures, tag):
    """Collect one failure message per sample that differs from PyTorch."""
    for (name, k, s), out, mine, out_th, g_th in zip(items, *got, *ref):
        what = f"{name} sample {k} {s!r} ({tag})"
        try:
            xs, ys = _flatten(out, []), _flatten(out_th, [])
            assert len(xs) == len(ys), f"{what}: {len(xs)} outputs, torch gives {len(ys)}"
            for i, (a, b) in enumerate(zip(xs, ys)):
                _same(f"{what} output {i}", a, b, s.atol, s.rtol)
                if isinstance(b, torch.Tensor):
                    assert a.requires_grad == b.requires_grad, \
                        f"{what} output {i}: requires_grad {a.requires_grad}, torch " \
                        f"{b.requires_grad}"
            for i, (a, b) in enumerate(zip(mine, g_th)):
                if b is None:
                    assert a is None or not np.any(harness.to_numpy(a)), \
                        f"{what}: gradient of input {i}, torch has none"
                else:
                    assert a is not None, f"{what}: no gradient of input {i}"
                    _same(f"{what} gradient of input {i}", a, b, s.atol * 10, max(s.rtol, 1e-5))
        except AssertionError as e:
            failures.append(str(e).splitlines()[0][:600])


def _runs_backward(name, k, sample) -> bool:
    """Whether the sample's call runs a backward pass itself (PyTorch's, counted). A compiled
    function that does returns outputs whose graph is spent (docs/compile.md), so such
    samples run in "inside" mode only: in a "forward" group they would spend every sample's
    graph."""
    runs = []
    backward, grad = torch.autograd.backward, torch.autograd.grad

    def counted(f):
        def run(*a, **kw):
            runs.append(1)
            return f(*a, **kw)
        return run
    torch.autograd.backward, torch.autograd.grad = counted(backward), counted(grad)
    try:
        _run(torch, [(name, k, sample)], _inputs(torch, [(name, k, sample)]), backward=False)
    finally:
        torch.autograd.backward, torch.autograd.grad = backward, grad
    return bool(runs)


def check(items, mode):
    """Compile `items` in `mode`, call twice, compare with PyTorch; the failure messages."""
    ref = _reference(items)
    inside = mode == "inside"
    fn = torchjax.compile(lambda args: _run(torchjax, items, args, backward=inside),
                          fullgraph=True)
    failures: list = []
    for call in range(2):
        args = _inputs(torchjax, items)
        got = fn(args)
        if not inside:
            # the same backward, eagerly through the compiled forward's one tape node
            got = _run(torchjax, items, args, backward=True, results=got[0])
        _compare(items, got, ref, failures, f"{mode}, call {call}")
    if (fn.compiles, fn.executions) != (1, 2):
        failures.append(f"{fn.compiles} programs run {fn.executions} times: expected one "
                        "program, run by both calls")
    return failures


@pytest.mark.parametrize("mode", ["inside", "forward"])
@pytest.mark.parametrize("group", sorted(GROUPS))
def test_compiled_equals_eager(group, mode):
    items = _items(group, mode)
    if mode == "forward":
        items = [x for x in items if not _runs_backward(*x)]
    if not items:
        pytest.skip("no sample")
    failures = check(items, mode)
    assert not failures, f"{len(failures)} differences:\n" + "\n".join(failures)


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(reason=why, strict=True))
    for name, (_, _, why) in sorted(KNOWN_COMPILE_BUGS.items())])
def test_known_compile_bugs(name):
    indices, mode, _ = KNOWN_COMPILE_BUGS[name]
    items = [(name, k, SAMPLES[name][k]) for k in indices]
    if mode == "break":
        for _, k, s in items:
            _assert_breaks(name, k)
        return
    failures = check(items, mode)
    assert not failures, "\n".join(failures)


def _assert_breaks(name, k):
    """fullgraph=True raises Unsupported naming the reason and the sample's line."""
    items = [(name, k, SAMPLES[name][k])]
    fn = torchjax.compile(lambda args: _run(torchjax, items, args, backward=True),
                          fullgraph=True)
    with pytest.raises(Unsupported) as info:
        fn(_inputs(torchjax, items))
    assert re.search(BREAK_REASON, str(info.value)), str(info.value)
    # the user's innermost line: the sample's call= in samples_*.py, or harness.call's
    assert "tests/ops/" in str(info.value), f"the break names no line of the test: {info.value}"


@pytest.mark.parametrize("name", sorted(UNTRACEABLE))
def test_untraceable_rows(name):
    # the trace stops at the break, before any XLA compile: every sample is cheap to check
    for k in sorted(_excluded(name) - set(KNOWN_COMPILE_BUGS.get(name, ((),))[0])):
        _assert_breaks(name, k)


@pytest.mark.parametrize("name", sorted(UNTRACEABLE_SAMPLES))
def test_untraceable_samples(name):
    for k in UNTRACEABLE_SAMPLES[name][0]:
        _assert_breaks(name, k)


def test_graph_break_runs_eagerly():
    """Without fullgraph, a break runs that call signature eagerly, with a warning naming
    the line, and gives eager's (PyTorch's) results: one sample of each kind of break."""
    for name, k in (("_nonzero", 0), ("_index", 8), ("isclose", 7), ("repeat_interleave", 9)):
        items = [(name, k, SAMPLES[name][k])]
        fn = torchjax.compile(lambda args, items=items: _run(torchjax, items, args, True))
        with pytest.warns(UserWarning, match="Graph break.*tests/ops/"):
            got = fn(_inputs(torchjax, items))
        failures: list = []
        _compare(items, got, _reference(items), failures, "graph break")
        assert not failures, failures


@pytest.mark.parametrize("name", sorted(VALUE_CHECKS))
def test_value_checks_are_not_compiled(name):
    indices, _ = VALUE_CHECKS[name]
    for k in indices:
        items = [(name, k, SAMPLES[name][k])]
        (ref,), _ = _reference(items)
        assert isinstance(ref, str), f"sample {k}: expected PyTorch's error message"
        fn = torchjax.compile(lambda args: _run(torchjax, items, args, True), fullgraph=True)
        try:
            (got,), _ = fn(_inputs(torchjax, items))
        except Exception as e:  # noqa: BLE001 - raises() finding no error, or another error
            got = e
        assert got != ref, f"sample {k} now gives PyTorch's {ref!r}: drop it from VALUE_CHECKS"


@pytest.mark.parametrize("name", sorted(RANDOM_ROWS))
def test_random_draws_are_eagers(name):
    """Compiled draws are eager's from the same seed, and the second call draws anew."""
    items = [(name, k, s) for k, s in enumerate(RANDOM_ROWS[name])]
    torchjax.manual_seed(0)
    eager = [_run(torchjax, items, _inputs(torchjax, items), True) for _ in range(2)]
    fn = torchjax.compile(lambda args: _run(torchjax, items, args, True), fullgraph=True)
    torchjax.manual_seed(0)
    for call in range(2):
        (outs, grads) = fn(_inputs(torchjax, items))
        for a, b in zip(_flatten([outs, grads], []), _flatten(list(eager[call]), [])):
            np.testing.assert_allclose(harness.to_numpy(a), harness.to_numpy(b), rtol=1e-6,
                                       err_msg=f"call {call}")
    assert not np.allclose(harness.to_numpy(eager[0][0][0]), harness.to_numpy(eager[1][0][0]))
    assert (fn.compiles, fn.executions) == (1, 2)


def test_lists_name_rows_and_samples():
    tables = (UNTRACEABLE, UNTRACEABLE_SAMPLES, VALUE_CHECKS, RANDOM_ROWS, SHAPE_ERRORS,
              KNOWN_COMPILE_BUGS, REGRESSIONS)
    for table in tables:
        assert not set(table) - set(OPS), set(table) - set(OPS)
    assert set(SHAPE_ERRORS) <= set(UNTRACEABLE)
    assert not set(UNTRACEABLE) & (set(UNTRACEABLE_SAMPLES) | set(VALUE_CHECKS))
    for table in (SHAPE_ERRORS, UNTRACEABLE_SAMPLES, VALUE_CHECKS, KNOWN_COMPILE_BUGS,
                  REGRESSIONS):
        for name, v in table.items():
            indices = v[0] if isinstance(v[0], tuple) else v
            assert indices and all(0 <= k < len(SAMPLES[name]) for k in indices), name
    for name, indices in REGRESSIONS.items():
        assert not set(indices) & _excluded(name), name
    for name in UNTRACEABLE_SAMPLES.keys() & VALUE_CHECKS.keys():
        assert not set(UNTRACEABLE_SAMPLES[name][0]) & set(VALUE_CHECKS[name][0]), name
    for name, (_, mode, _) in KNOWN_COMPILE_BUGS.items():
        assert mode in ("inside", "forward", "break"), name
    # every row is in exactly one group, so every row's samples are compiled somewhere
    rows = [n for g in GROUPS.values() for n in g]
    assert sorted(rows) == sorted(OPS)
