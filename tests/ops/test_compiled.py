"""Every op row that can be traced runs its samples eagerly and compiled, and the results agree.

Per row, one `torchjax.compile(fullgraph=True)` function runs the row's samples, in two ways:

- "inside": the function returns each sample's outputs and the gradients of
  sum(output_i * w_i) with respect to its inputs, taken by torchjax.autograd.grad inside the
  function (the backward pass is part of the program, as in a compiled training step);
- "forward" (differentiable rows): the function returns the outputs only, and the same
  gradients are taken eagerly through the compiled forward, which the tape holds as one node
  whose backward is JAX's vjp of the whole program (a compiled model in an eager loop).

The same Python body run eagerly, from equal inputs and the same seed, is the reference.
The compiled function is called twice without re-seeding: the second call is the cached
program on new input tensors, and for rows that draw random numbers it must draw what a second
eager run draws, which holds only if the program takes the generator's offset as an input
instead of baking in the draws the trace saw.

Rows that no program can hold (data-dependent output shapes, values read into Python) are
listed with the reason, and the test asserts that compiling them raises Unsupported, so the
lists cannot go stale; known bugs are strict xfails, so they cannot hide a fix.

Cost: XLA's CPU compile time grows with the number of kernels in a program (measured here:
10, 40 and 160 copies of a three-op body compile in 1.2, 4.1 and 15.7 s), so grouping rows
into fewer programs saves nothing, and eager mode compiles a program per op and per backward.
Every sample of every row in both modes takes about an hour of CPU, so by default each row
compiles one sample (`_chosen`: the first that takes gradients) plus the REGRESSIONS, and the
"forward" mode runs on FORWARD_ROWS. TORCHJAX_ALL_COMPILED=1 runs every sample of every row in
both modes (all pass, but the KNOWN_COMPILE_BUGS).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import torchjax as torch
from torchjax._autograd import engine
from torchjax._ops import OPS
from torchjax.compiler import Unsupported

from . import harness
from .test_second_order import SELECTED as SECOND_ORDER_ROWS
from .test_table import SAMPLES

ALL = bool(os.environ.get("TORCHJAX_ALL_COMPILED"))

# Rows no program can hold, row -> why. Every sample's output shape depends on the input's
# values, so the test asserts that compiling each sample raises Unsupported: a row that
# becomes traceable fails here and should leave this list.
UNTRACEABLE = {
    "_bincount": "the output's length is the input's largest value + 1",
    "_masked_select": "the output has one element per True in the mask",
    "_nonzero": "nonzero and argwhere give one row per nonzero element",
    "_unique2": "the output has one element per distinct value",
    "_unique_consecutive": "the output has one element per run of equal values",
    "_unique_dim": "the output has one slice per distinct slice",
    "_pack_padded": "the packed data's length and its batch_sizes come from the values of "
                    "`lengths`, which become a tensor (a traced one) inside the row",
    "_pad_packed": "packs first (see _pack_padded), then reads batch_sizes to pad",
}

# Rows with some untraceable samples, row -> (sample indices, why). The row's other samples
# run compiled; each listed sample, compiled alone, must raise Unsupported.
UNTRACEABLE_SAMPLES = {
    "_index": ((8, 9, 10, 11, 12, 16), "a boolean mask keeps as many elements as it has True"),
    "_index_put": ((2, 3, 4, 9), "x[mask] = v: the boolean mask is turned into indices, as "
                                 "many as it has True"),
    "_slice": ((9,), "a tensor as a slice bound is read as a Python int"),
    "_rnn": ((1,), "the packed overload reads batch_sizes (tolist) to lay out its time steps"),
    "isclose": ((7, 8, 9, 10, 11, 13), "allclose and equal return a Python bool read from "
                                      "the values"),
    "one_hot": ((0,), "num_classes=-1 takes the class count from the largest value"),
    "repeat_interleave": ((9, 10, 11, 12, 13, 14, 15, 16), "a tensor of repeats sets the "
                                                          "output's length"),
    "tensor_split": ((8, 9), "tensor indices_or_sections set the pieces' lengths"),
    "tensordot": ((7, 8), "tensor dims say which axes contract, so they set the shape"),
}

# Samples of UNTRACEABLE rows that trace all the same, row -> indices: errors of the
# arguments' types and shapes, raised before the values are needed. They run in
# test_compiled_equals_eager like any sample.
SHAPE_ERRORS = {
    "_bincount": (11, 12, 13, 14, 15),
    "_unique_dim": (6,),
}

# Samples that expect an error which eager raises after looking at the values, row ->
# (sample indices, why). While tracing the values are unknown, and these rows skip the check
# on purpose (as PyTorch's compiled one_hot skips its class-range check): compiled, the call
# returns a result instead. The test asserts the difference is still there, so the entry
# goes once compiled mode checks values at run time.
VALUE_CHECKS = {
    "one_hot": ((4, 5), "class values >= num_classes or negative"),
    "quantile": ((9,), "q values outside [0, 1], given as a tensor"),
}

# A bug of torchjax.compile: a graph break is an exception, and a try/except in the traced
# code catches it like any error, so the trace completes and the program returns what the
# except clause made of it (here the samples' own raises(): the break's message where eager
# gives the error it raises after reading the values) instead of breaking or, with
# fullgraph=True, raising Unsupported. row -> the samples that show it; each is a strict
# xfail that expects Unsupported, so it passes (and must leave this list) once fixed.
SWALLOWED_BREAKS = {
    "_bincount": (10,),     # negative values: bincount raises the break, the sample catches it
    "_pack_padded": (2,),   # unsorted lengths: jax's TracerArrayConversionError is caught
}
SWALLOWED_WHY = "a graph break raised inside a try/except of the traced code is caught there: " \
    "the trace completes with the caught message (compiler: breaks are not sticky)"

# row -> a bug of torchjax.compile or of the core (not of the row's own code) that its chosen
# samples show, one line of diagnosis. test_known_compile_bugs runs the row strictly in the
# "forward" mode as a strict xfail, so an entry must go once the bug is fixed;
# test_compiled_equals_eager lets that one discrepancy through and checks everything else.
_PRUNED = "compiled forward under grad: _program._run_recorded records the program through " \
    "_jax_node.record, which keeps only outputs/inputs linked by a nonzero tangent " \
    "(_dependence), so outputs eager marks requires_grad (zero-derivative ops: sign, floor, " \
    "slogdet's sign, empty results) lose it and inputs with a zero gradient get None instead " \
    "of zeros; the trace's out_requires_grad already holds eager's flags"
KNOWN_COMPILE_BUGS = {name: _PRUNED for name in (
    "_copy_from", "ceil", "copysign", "fill", "floor", "linalg_lstsq", "linalg_slogdet",
    "nextafter", "round", "sign", "slogdet", "special_round", "trunc", "zero")}

# Samples that found a bug (since fixed), row -> indices: compiled by default too, in both
# modes (see _chosen and _rows).
REGRESSIONS = {
    "_embedding": (4,),  # max_norm: JAX's vjp of the program went through the in-place renorm
    "_slice": (10,),     # a bfloat16 result of a compiled forward did not require grad
    "one_hot": (7,),     # empty input, num_classes=-1: a graph break instead of the error
}

# Rows that draw random numbers, row -> samples showing the draws. Eager runs twice for them
# (each run draws anew); a deterministic row runs once, since its second run would repeat the
# first, and a row missing here whose results show its draws fails on its second compiled
# call. The row's own samples hide the random slopes (they compare out * (x > 0) with
# PyTorch, whose generator differs): these show them, so compiled draws meet eager draws.
RANDOM_ROWS = {
    "rrelu_with_noise": [
        harness.S(harness.make(3, 4, seed=11), desc="raw random slopes",
                  call=lambda lib, x: lib.nn.functional.rrelu(x, 0.1, 0.3, training=True)),
        harness.S(harness.make(2, 5, seed=12), desc="raw random slopes, in place",
                  call=lambda lib, x: lib.nn.functional.rrelu(x.clone(), training=True,
                                                              inplace=True)),
    ],
}

MODES = ("inside", "forward")

# Rows differentiated through a compiled forward by default (every differentiable row with
# TORCHJAX_ALL_COMPILED=1): JAX's vjp of the whole program replaces the rows' own backward
# rules there, so what can differ is a kind of rule, not a row. test_second_order's selection
# covers each kind (result-saving rules, composites, views, complex, linear algebra,
# convolution and pooling, losses, indexing).
FORWARD_ROWS = frozenset(SECOND_ORDER_ROWS)


def _excluded(name):
    """Samples that run elsewhere: untraceable ones, value checks, swallowed breaks."""
    if name in UNTRACEABLE:
        return set(range(len(SAMPLES[name]))) - set(SHAPE_ERRORS.get(name, ()))
    return {k for table in (UNTRACEABLE_SAMPLES, VALUE_CHECKS)
            for k in table.get(name, ((), ""))[0]} | set(SWALLOWED_BREAKS.get(name, ()))


def _differentiable(name, sample):
    return OPS[name].differentiable and sample.grad


def _floating(sample):
    return any(isinstance(a, np.ndarray) and a.dtype.kind in "fc" for a in sample.args)


def _chosen(name):
    """The indices of the row's samples to compile: by default the first that takes gradients
    (or the first) and the REGRESSIONS; every one with TORCHJAX_ALL_COMPILED=1."""
    skip = _excluded(name)
    own = [k for k in range(len(SAMPLES[name])) if k not in skip]
    if ALL or name in UNTRACEABLE:
        return own
    first = next((k for k in own if _differentiable(name, SAMPLES[name][k])
                  and _floating(SAMPLES[name][k])), own[0])
    return sorted({first, *REGRESSIONS.get(name, ())})


def _samples(name):
    return [SAMPLES[name][k] for k in _chosen(name)] + RANDOM_ROWS.get(name, [])


def _inputs(name, samples):
    """Fresh tensors for every sample: a sample's call may write into its inputs."""
    return [tuple(harness._to_lib(a, torch, _differentiable(name, s)) for a in s.args)
            for s in samples]


def _weights(outs):
    # the same cotangents in every run; inside the trace they are constants of the program
    rng = np.random.default_rng(1)
    return [torch.tensor(rng.uniform(-1, 1, size=tuple(o.shape)), dtype=o.dtype) for o in outs]


def _wrt(args):
    # the inputs to differentiate, picked before the call (a call may mark more)
    return [t for t in harness._leaves(args) if t.requires_grad]


def _grad_outputs(out):
    return [o for o in harness._flat_outputs(out) if o.requires_grad]


def _body(name, samples, backward=True):
    """The row's samples as one function: per sample (its result, its input gradients or
    None, whether its call itself ran a backward pass); without `backward`, the results only.
    It runs eagerly as the reference and compiled as the test."""
    def run(all_args):
        results = []
        for s, args in zip(samples, all_args):
            leaves = _wrt(args)
            runs = engine.RUNS[0]
            out = harness.call(torch, name, s, args)
            if not backward:
                results.append(out)
                continue
            inner = engine.RUNS[0] != runs
            grads = None
            outs = _grad_outputs(out)
            if leaves and outs:
                grads = torch.autograd.grad(outs, leaves, _weights(outs), allow_unused=True)
            results.append((out, grads, inner))
        return results
    return run


def _through(all_args, outs_c, outs_e):
    """Gradients taken eagerly through the compiled forward's outputs: one backward over all
    samples (their inputs are disjoint, so each input's gradient is its own sample's). Each
    output takes the cotangent eager gave the output in its place."""
    outs, ws, leaves, where = [], [], [], []
    for args, out, ref in zip(all_args, outs_c, outs_e):
        flat, x = harness._flat_outputs(out), _wrt(args)
        picked = []
        w = iter(_weights(_grad_outputs(ref)))
        for o, e in zip(flat, harness._flat_outputs(ref)):
            if e.requires_grad:
                v = next(w)
                if o.requires_grad:
                    picked.append((o, v))
        if picked and x:
            where.append((len(leaves), len(x)))
            outs += [o for o, _ in picked]
            ws += [v for _, v in picked]
            leaves += x
        else:
            where.append(None)
    if not outs:
        return [None] * len(where)
    grads = torch.autograd.grad(outs, leaves, ws, allow_unused=True)
    return [None if w is None else grads[w[0]:w[0] + w[1]] for w in where]


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


def _assert_same(what, x, y, atol, rtol):
    if isinstance(x, torch.Tensor):
        assert isinstance(y, torch.Tensor), f"{what}: compiled gives {y!r}"
        assert x.dtype == y.dtype, f"{what}: dtype {x.dtype}, compiled {y.dtype}"
        assert x.shape == y.shape, f"{what}: shape {tuple(x.shape)}, compiled {tuple(y.shape)}"
        u, v = harness.to_numpy(x), harness.to_numpy(y)
        if u.dtype.kind in "fc":
            np.testing.assert_allclose(v, u, atol=atol, rtol=rtol, equal_nan=True, err_msg=what)
        else:
            np.testing.assert_array_equal(v, u, err_msg=what)
    else:  # Python values the trace computed (error messages, flags): equal, NaN or not
        assert type(x) is type(y) and (x == y or (x != x and y != y)), \
            f"{what}: {x!r}, compiled {y!r}"


def _assert_outputs(what, s, out_e, out_c):
    xs, ys = _flatten(out_e, []), _flatten(out_c, [])
    assert len(xs) == len(ys), f"{what}: {len(xs)} outputs, compiled {len(ys)}"
    for i, (x, y) in enumerate(zip(xs, ys)):
        _assert_same(f"{what} output {i}", x, y, s.atol, s.rtol)


def _zero(t):
    return t is None or not np.any(harness.to_numpy(t))


def _assert_grads(what, s, grads_e, grads_c, pruned_ok=False):
    """With pruned_ok, a missing compiled gradient passes where eager's is zero (the pruning
    bug of KNOWN_COMPILE_BUGS, which test_known_compile_bugs pins down)."""
    if pruned_ok and grads_c is None and grads_e is not None:
        grads_c = (None,) * len(grads_e)
    assert (grads_e is None) == (grads_c is None), \
        f"{what}: gradients {'none' if grads_e is None else 'some'}, compiled " \
        f"{'none' if grads_c is None else 'some'}"
    for i, (x, y) in enumerate(zip(grads_e or (), grads_c or ())):
        if pruned_ok and y is None and _zero(x):
            continue
        assert (x is None) == (y is None), f"{what}: gradient of input {i} is {x}, compiled {y}"
        if x is not None:
            # the harness's tolerance for gradients
            _assert_same(f"{what} gradient of input {i}", x, y, s.atol * 10, max(s.rtol, 1e-5))


# The eager reference of the last rows, shared by a row's two modes (which usually run in
# the same worker, one after the other): eager mode compiles a program per op, the costliest
# part of this file. Small, since every entry holds its tensors.
_EAGER: dict = {}


def _eager(name, samples):
    got = _EAGER.get(name)
    if got is None:
        body = _body(name, samples)
        torch.manual_seed(0)
        got = [body(_inputs(name, samples))]
        got.append(body(_inputs(name, samples)) if name in RANDOM_ROWS else got[0])
        while len(_EAGER) >= 4:
            del _EAGER[next(iter(_EAGER))]
        _EAGER[name] = got
    return got


def _forward_samples(name, samples, eager):
    """The indices of the samples to differentiate through a compiled forward: those taking
    gradients whose call runs no backward pass of its own (a trace that runs one returns its
    results without a tape node: the gradient is then the function's business)."""
    return [k for k, (s, (_, grads, inner)) in enumerate(zip(samples, eager[0]))
            if _differentiable(name, s) and grads is not None and not inner]


def _rows():
    out = []
    for name in sorted(OPS):
        if not _chosen(name):
            continue
        for mode in MODES:
            if mode == "forward" and not (
                    (ALL or name in FORWARD_ROWS or name in REGRESSIONS)
                    and OPS[name].differentiable and any(s.grad for s in _samples(name))):
                continue
            out.append(pytest.param(name, mode, id=f"{name}-{mode}"))
    return out


def _check(name, mode, strict):
    """Run the row's chosen samples compiled in `mode` and compare them with eager. Unless
    strict, the forward mode lets through the known pruning bug (KNOWN_COMPILE_BUGS): outputs
    that eager marks as requiring grad but whose derivative is zero come back without grad,
    and inputs whose gradient is zero get None. Any nonzero gradient still has to match."""
    samples = _samples(name)
    eager = _eager(name, samples)
    if mode == "forward":
        keep = _forward_samples(name, samples, eager)
        if not keep:
            pytest.skip("no sample takes gradients through its outputs")
        samples = [samples[k] for k in keep]
        eager = [[run[k] for k in keep] for run in eager]
    fn = torch.compile(_body(name, samples, backward=mode == "inside"), fullgraph=True)
    torch.manual_seed(0)
    for run in range(2):
        args = _inputs(name, samples)
        got = fn(args)
        if mode == "forward":
            for k, (out, e) in enumerate(zip(got, eager[run])):
                flags_e = [o.requires_grad for o in harness._flat_outputs(e[0])]
                flags_c = [o.requires_grad for o in harness._flat_outputs(out)]
                ok = flags_c == flags_e if strict else all(
                    e or not c for c, e in zip(flags_c, flags_e))
                assert ok and len(flags_c) == len(flags_e), f"{name} {samples[k]!r} (call " \
                    f"{run}): outputs requiring grad {flags_e}, compiled {flags_c}"
            grads = _through(args, got, [e[0] for e in eager[run]])
            got = list(zip(got, grads))
        for k, (s, e, c) in enumerate(zip(samples, eager[run], got)):
            what = f"{name} {s!r} (compiled sample {k}, call {run}, {mode})"
            _assert_outputs(what, s, e[0], c[0])
            _assert_grads(what, s, e[1], c[1], pruned_ok=mode == "forward" and not strict)
    assert (fn.compiles, fn.executions) == (1, 2), "one program, run by both calls"


@pytest.mark.parametrize("name, mode", _rows())
def test_compiled_equals_eager(name, mode):
    _check(name, mode, strict=False)


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(reason=why, strict=True))
    for name, why in sorted(KNOWN_COMPILE_BUGS.items())])
def test_known_compile_bugs(name):
    _check(name, "forward", strict=True)


def _assert_breaks(name, k, where):
    sample = SAMPLES[name][k]
    with pytest.raises(Unsupported):
        torch.compile(_body(name, [sample]), fullgraph=True)(_inputs(name, [sample]))
        raise AssertionError(f"sample {k} ({sample!r}) of {name} compiles: take it out of "
                             f"{where}")


@pytest.mark.parametrize("name", sorted(UNTRACEABLE))
def test_untraceable_rows(name):
    # the trace stops at the break, before any XLA compile: every sample is cheap to check
    for k in range(len(SAMPLES[name])):
        if k not in SHAPE_ERRORS.get(name, ()) and k not in SWALLOWED_BREAKS.get(name, ()):
            _assert_breaks(name, k, "UNTRACEABLE (list it in SHAPE_ERRORS, or the row in "
                                    "UNTRACEABLE_SAMPLES)")


@pytest.mark.parametrize("name", sorted(UNTRACEABLE_SAMPLES))
def test_untraceable_samples(name):
    for k in UNTRACEABLE_SAMPLES[name][0]:
        _assert_breaks(name, k, "UNTRACEABLE_SAMPLES")


@pytest.mark.parametrize("name, k", [
    pytest.param(name, k, marks=pytest.mark.xfail(reason=SWALLOWED_WHY, strict=True))
    for name in sorted(SWALLOWED_BREAKS) for k in SWALLOWED_BREAKS[name]])
def test_swallowed_breaks(name, k):
    _assert_breaks(name, k, "SWALLOWED_BREAKS")


@pytest.mark.parametrize("name", sorted(VALUE_CHECKS))
def test_value_checks_are_not_compiled(name):
    indices, _ = VALUE_CHECKS[name]
    for k in indices:
        sample = SAMPLES[name][k]
        body = _body(name, [sample])
        (eager, _, _), = body(_inputs(name, [sample]))
        assert isinstance(eager, str), f"sample {k}: expected eager's error message"
        try:
            (got, _, _), = torch.compile(body, fullgraph=True)(_inputs(name, [sample]))
        except Exception as e:  # noqa: BLE001 - raises() finding no error, or another error
            got = e
        assert got != eager, f"sample {k} now gives eager's {eager!r}: drop it from " \
            "VALUE_CHECKS"


def test_lists_name_rows_and_samples():
    for table in (UNTRACEABLE, UNTRACEABLE_SAMPLES, VALUE_CHECKS, REGRESSIONS, RANDOM_ROWS,
                  SHAPE_ERRORS, SWALLOWED_BREAKS):
        assert not set(table) - set(OPS), set(table) - set(OPS)
    assert set(SHAPE_ERRORS) <= set(UNTRACEABLE)
    for table in (SHAPE_ERRORS, SWALLOWED_BREAKS):
        for name, indices in table.items():
            assert all(0 <= k < len(SAMPLES[name]) for k in indices), name
    assert set(FORWARD_ROWS) <= set(OPS), set(FORWARD_ROWS) - set(OPS)
    for name in KNOWN_COMPILE_BUGS:
        assert name in OPS and OPS[name].differentiable and _chosen(name), name
    assert not set(UNTRACEABLE) & (set(UNTRACEABLE_SAMPLES) | set(VALUE_CHECKS))
    for table in (UNTRACEABLE_SAMPLES, VALUE_CHECKS):
        for name, (indices, _) in table.items():
            assert all(0 <= k < len(SAMPLES[name]) for k in indices), name
    for name, indices in REGRESSIONS.items():
        assert all(0 <= k < len(SAMPLES[name]) for k in indices), name
        assert not set(indices) & _excluded(name), name
    for name in UNTRACEABLE_SAMPLES.keys() & VALUE_CHECKS.keys():
        assert not set(UNTRACEABLE_SAMPLES[name][0]) & set(VALUE_CHECKS[name][0]), name
