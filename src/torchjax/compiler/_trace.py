"""One trace of a Python step into a jaxpr, with the state it reads and writes.

The step runs once under `jax.make_jaxpr`, on the very objects the user made: every known
tensor (the call's tensor arguments and the state `_discover.walk` lists) holds a tracer in
place of its array while it runs, so nothing the trace reads is frozen into the program.
Values found only while the step runs become the jaxpr's constants and are then turned into
inputs, each mapped back to where a later call reads it:

- optimizer hyper-parameters (`lr`, betas, ...): `optim.optimizer.HYPER_HOOK` hands the
  update fresh 0-d arrays, read from the param group again on every call;
- random draws: `_random.DRAW_HOOK` gives each generator's draws the generator's key and
  its offset at the start of the call (plus the draw's position), so dropout draws anew each
  call, exactly the masks eager mode draws from the same seed;
- tensors no source holds, reported by the ops that read them (`_dispatch.CAPTURE`).

Scheduler steps are taken out of the trace (`lr_scheduler.STEP_HOOK`) and replayed around the
program on every call. After the step returns, every change it made to Python-visible state
is listed as a write: a tensor whose array changed, a new gradient, new optimizer state, a
buffer replaced. Then everything is put back as it was before the trace, so the first call
runs the program like every later one.
"""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
from jax.core import Tracer

from .. import _layout, _linearize, _printing, _random
from .._autograd import engine
from .._functionalize import tree_flatten
from .._tensor import Tensor
from ..autograd import _function_traced
from ..optim import lr_scheduler as _lr_scheduler
from ..optim import optimizer as _optimizer
from ..utils._capture import watching
from ._breaks import GraphBreak, sticky

# In a job of several processes torchjax.distributed sets this to an object that traces the
# step per rank (`axis_env`, `avals(arrays)`, `tracing()`, `check(traced)`) and runs its program as one SPMD
# program over every process (`jit(fun, donate_argnums, program)`): distributed/_per_rank.py.
# `kept()` lists traced values the program must compute though no write or output needs them
# (a collective whose result only some ranks keep: every rank's program must run it)
SPMD = [None]

# torchjax.distributed.tensor sets this to its `layout(t) -> (array, tag)`: for a DTensor the
# program returns or writes back, its array constrained to the layout its placements say and
# a tag whose `apply(tensor)` makes the program's result that DTensor again (None otherwise)
LAYOUT = [None]

OUT = object()  # marks a tensor output's place among the result's leaves

# -- writes: where a value the program returns goes back -------------------------------------


class TensorWrite:
    """An existing tensor took a new value (in-place op, optimizer update, buffer update)."""

    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t

    def put(self, known, value):
        t = known[self.t]
        t._counter()[0] += 1
        t._data = value
        if t._views:
            t._refresh_views()


class GradWrite:
    """A parameter's .grad became a new tensor (the first backward after zero_grad); tag:
    the DTensor it is (LAYOUT), or None."""

    __slots__ = ("t", "tag")

    def __init__(self, t, tag=None):
        self.t, self.tag = t, tag

    def put(self, known, value):
        g = Tensor._wrap(value)
        known[self.t]._grad = self.tag.apply(g) if self.tag is not None else g


class Discard:
    """A value the program computes only so that it is computed (SPMD's `kept()`)."""

    __slots__ = ()

    def put(self, known, value):
        pass


class GradClear:
    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t

    def put(self, known, value):
        known[self.t]._grad = None


class DictWrite:
    """A new tensor stored under a key of a dict that outlives the call (a module's
    buffers or attributes)."""

    __slots__ = ("d", "key", "requires_grad")

    def __init__(self, d, key, requires_grad):
        self.d, self.key, self.requires_grad = d, key, requires_grad

    def put(self, known, value):
        self.d[self.key] = Tensor._wrap(value, self.requires_grad)


class OptStateWrite:
    """Optimizer state created by the step (the first step makes it lazily)."""

    __slots__ = ("opt", "p", "key", "tag")

    def __init__(self, opt, p, key, tag=None):
        self.opt, self.p, self.key, self.tag = opt, p, key, tag

    def put(self, known, value):
        v = Tensor._wrap(value)
        self.opt.state[known[self.p]][self.key] = self.tag.apply(v) if self.tag else v


# -- inputs the trace discovered while running -----------------------------------------------


class Hyper:
    """A hyper-parameter of an optimizer's param group, read anew on each call."""

    __slots__ = ("opt", "group", "key")

    def __init__(self, opt, group, key):
        self.opt, self.group, self.key = opt, group, key


class RngKey:
    __slots__ = ("gen",)

    def __init__(self, gen):
        self.gen = gen


class RngOffset:
    __slots__ = ("gen",)

    def __init__(self, gen):
        self.gen = gen


class Extra:
    """A tensor the step read that no source holds (held strongly: it is an input)."""

    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t


class Literal:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


# -- the snapshot that undoes a trace ----------------------------------------------------------


class Snapshot:
    """Everything a trace may change, as it was before; restore() puts it back."""

    def __init__(self, tensors, src, generators):
        self.tensors = [(t, t._data, t._grad, t._grad_fn, t._output_nr, t._requires_grad,
                         t._vc[0] if t._vc is not None else None) for t in tensors]
        # the arrays of gradients that are not themselves traced (an argument's .grad): a
        # backward inside the trace adds to them in place
        ids = {id(t) for t in tensors}
        self.grads = [(t._grad, t._grad._data) for t in tensors
                      if t._grad is not None and id(t._grad) not in ids]
        self.views = []
        for t in tensors:
            for r in t._views or ():
                v = r()
                if v is not None:
                    self.views.append((v, v._data))
        self.modules = []
        for root in src.modules:
            for m in root.modules():
                self.modules.append((m, dict(m.__dict__), dict(m._parameters),
                                     dict(m._buffers), dict(m._modules)))
        self.optimizers = []
        for opt in src.optimizers:
            self.optimizers.append((opt, [(p, st, dict(st)) for p, st in opt.state.items()],
                                    [dict(g) for g in opt.param_groups]))
        self.generators = [(g, g._offset) for g in generators]
        self.containers = [(c, list(c) if isinstance(c, list) else dict(c))
                           for c in src.containers]

    def restore(self):
        for t, data, grad, fn, nr, rg, version in self.tensors:
            t._data, t._grad, t._grad_fn, t._output_nr, t._requires_grad = data, grad, fn, nr, rg
            if version is not None:
                t._vc[0] = version
        for g, data in self.grads:
            g._data = data
        for v, data in self.views:
            v._data = data
        for m, d, params, buffers, mods in self.modules:
            for target, saved in ((m._parameters, params), (m._buffers, buffers),
                                  (m._modules, mods)):
                target.clear()
                target.update(saved)
            m.__dict__.clear()
            m.__dict__.update(d)
        for opt, states, groups in self.optimizers:
            opt.state.clear()
            for p, st, items in states:
                st.clear()
                st.update(items)
                opt.state[p] = st
            for g, saved in zip(opt.param_groups, groups):
                g.clear()
                g.update(saved)
        for g, offset in self.generators:
            g._offset = offset
        for c, items in self.containers:
            if isinstance(c, list):
                c[:] = items
            else:
                c.clear()
                c.update(items)


# -- the trace -----------------------------------------------------------------------------------


class Traced:
    """What one trace found: the jaxpr and how to feed it and read it back."""

    __slots__ = ("jaxpr", "const_slots", "n_known", "array_of", "writes", "out_spec",
                 "out_template", "out_requires_grad", "out_reach", "backward_ran", "draws",
                 "scheduler_steps", "n_outputs", "input_positions", "out_long32",
                 "out_tags")

    @property
    def differentiable_outputs(self) -> bool:
        """Results that need a tape node (a compiled forward called with grad)."""
        return not self.backward_ran and any(self.out_requires_grad)


def _reach(t) -> frozenset:
    """The ids of the leaf tensors whose AccumulateGrad the tape reaches from t: the inputs
    an eager backward from t sends gradients to (zeros included, as sign's or floor's)."""
    if not t._requires_grad:
        return frozenset()
    if t._grad_fn is None:
        return frozenset((id(t),))
    found, seen, stack = set(), {id(t._grad_fn)}, [t._grad_fn]
    while stack:
        node = stack.pop()
        var = getattr(node, "variable", None)
        if var is not None:
            found.add(id(var))
        for e in node._edges:
            if e is not None and e[0] is not None and id(e[0]) not in seen:
                seen.add(id(e[0]))
                stack.append(e[0])
    return frozenset(found)


def _print_hook(t):
    raise GraphBreak("printing a tensor reads the values")


def _is_traced(x) -> bool:
    return isinstance(x, Tracer)


_NAMES = frozenset({"backward", "grad"})
_CALLS: dict = {}


def _code_calls(code) -> bool:
    got = _CALLS.get(code)
    if got is None:
        got = _CALLS[code] = bool(_NAMES.intersection(code.co_names)) or any(
            _code_calls(c) for c in code.co_consts if hasattr(c, "co_names"))
    return got


def calls_backward(fn) -> bool:
    """Whether fn's code (nested functions included) names backward() or autograd.grad: a
    training step, whose ops are then linearized as they are traced (_linearize.py). A
    guess from the code alone; either answer gives the same program, only the trace's cost
    differs (a forward-only function would linearize for nothing)."""
    fn = getattr(fn, "__func__", fn)
    if not hasattr(fn, "__code__"):
        fn = getattr(type(fn), "forward", None) or type(fn).__dict__.get("__call__")
    code = getattr(fn, "__code__", None)
    return code is not None and _code_calls(code)


def trace(fn, args, kwargs, known, src) -> Traced:
    """Trace fn(*args, **kwargs) with the arrays of `known` (the tensor arguments, then the
    state from walk, each tensor once) as the program's inputs."""
    for t in known:
        if t.layout is not _layout.strided:  # a sparse COO tensor holds no array to thread
            raise GraphBreak(f"the step reads a {t.layout} tensor, and torchjax compiles steps "
                             f"over strided tensors only")
    ids = {id(t): i for i, t in enumerate(known)}
    # tensors sharing one array (p and p.data) share one program input
    arrays: list = []
    array_ids: dict = {}
    array_of: list = []
    for t in known:
        a = t._data
        i = array_ids.get(id(a))
        if i is None:
            i = array_ids[id(a)] = len(arrays)
            arrays.append(a)
        array_of.append(i)

    generators = [_random.default_generator]
    snapshot = Snapshot(known, src, generators)
    grads0 = [t._grad for t in known]
    modules = [m for root in src.modules for m in root.modules()]
    opt_state0 = {id(opt): {id(p): (st, dict(st)) for p, st in opt.state.items()}
                  for opt in src.optimizers}

    hypers: dict = {}        # id(const) -> Hyper
    rng: dict = {}           # generator -> [offset at its first draw, key const, offset const]
    sched_steps: list = []   # (scheduler, args, after an optimizer step)
    stepped = [False]
    extras: dict = {}        # id(tensor) -> (tensor, array before the trace)

    def hyper_hook(opt, group, values):
        stepped[0] = True
        out = {}
        gi = next(i for i, g in enumerate(opt.param_groups) if g is group)
        for k, v in values.items():
            # a concrete array, so a const of the jaxpr: device_put, because jnp.asarray
            # compiles a program for it (the same weak-typed f64 either way)
            with jax.ensure_compile_time_eval():
                c = jax.device_put(v)
            hypers[id(c)] = (c, Hyper(opt, gi, k))
            out[k] = c
        return out

    def draw_hook(gen, parts):
        key, off = parts
        st = rng.get(gen)
        if st is None:
            if gen not in generators:
                generators.append(gen)
                snapshot.generators.append((gen, int(off)))
            with jax.ensure_compile_time_eval():
                st = rng[gen] = [int(off), gen._base_key(), jnp.asarray(np.uint32(int(off)))]
        k = int(off) - st[0]
        return st[1], (st[2] + np.uint32(k) if k else st[2])

    def step_hook(sched, sargs):
        if any(isinstance(a, Tensor) for a in sargs):
            raise GraphBreak(f"{type(sched).__name__}.step() is given a tensor, whose value "
                             "decides the learning rate; call it outside the compiled "
                             "function with metric.item()")
        sched_steps.append((sched, sargs, stepped[0]))
        return True

    def see(dyn):
        for v in dyn:
            for t in (v if isinstance(v, (list, tuple)) else (v,)):
                if isinstance(t, Tensor) and id(t) not in ids and id(t) not in extras \
                        and not _is_traced(t._data):
                    extras[id(t)] = (t, t._data)

    result: dict = {}
    runs0 = engine.RUNS[0]

    def body(*tracers):
        outside = []  # arguments with history from outside the step
        for t, i in zip(known, array_of):
            t._data = tracers[i]
            if t._grad_fn is not None:  # a non-leaf argument is a leaf inside the step
                outside.append(t._grad_fn)
                t._grad_fn = None
        for t in known:
            if t._views:
                t._refresh_views()
        out = fn(*args, **kwargs)
        if outside and engine.RUNS[0] != runs0:
            # PyTorch's backward would go on into that history (and its leaves' .grad would
            # be part of this step's optimizer update): the program cannot reach it
            raise GraphBreak(f"backward() inside the compiled function reaches an argument "
                             f"made by {type(outside[0]).__name__} outside it; pass a tensor "
                             "without history (detach it, or compute it inside the function)")
        leaves, spec = tree_flatten(out)
        outs, template, out_rg, reach, long32, tags = [], [], [], [], [], []
        for x in leaves:
            if isinstance(x, Tensor):
                if x.__dict__.get("_long32", False):  # _device_dtypes: an int64 held as int32
                    long32.append(len(outs))
                data, tag = _layout_of(x)
                if tag is not None:
                    tags.append((len(outs), tag))
                outs.append(data)
                out_rg.append(x._requires_grad)
                reach.append(_reach(x))
                template.append(OUT)
            else:
                template.append(x)
        writes, values = _writes(known, array_of, tracers, grads0, modules, src, opt_state0,
                                 extras, ids)
        if SPMD[0] is not None:
            SPMD[0].end_trace()  # inside the trace: it may still join other ranks' collectives
            for v in SPMD[0].kept():
                writes.append((Discard(), True))
                values.append(v)
        for gen, st in rng.items():
            st.append(gen._offset)  # draws made = offset now - offset at the first draw
        result.update(spec=spec, template=template, out_rg=out_rg, reach=reach, writes=writes,
                      n_outputs=len(outs), long32=tuple(long32), tags=tuple(tags))
        return outs, values

    prev = (_optimizer.HYPER_HOOK, _random.DRAW_HOOK, _lr_scheduler.STEP_HOOK,
            _printing.ON_TRACED)
    _optimizer.HYPER_HOOK, _random.DRAW_HOOK, _lr_scheduler.STEP_HOOK, _printing.ON_TRACED = (
        hyper_hook, draw_hook, step_hook, _print_hook)
    tape_tracing = _function_traced.TAPE_TRACING[0]
    _function_traced.TAPE_TRACING[0] = True
    linearize = _linearize.ACTIVE[0]
    _linearize.ACTIVE[0] = calls_backward(fn)
    try:
        with watching(see), sticky() as breaks:
            # every op's own jax.jit inlined: the step is one flat jaxpr rather than ~100
            # nested calls (the GPT step: lowering 2.1 s -> 1.0 s, XLA compile -12%)
            spmd = SPMD[0]
            with jax.disable_jit(), (spmd.tracing(breaks) if spmd
                                     else contextlib.nullcontext()):
                closed = jax.make_jaxpr(body, axis_env=spmd.axis_env if spmd else None)(
                    *(spmd.avals(arrays) if spmd else arrays))
        if breaks:  # caught by the traced code itself: the graph breaks all the same
            raise breaks[0]
    finally:
        _function_traced.TAPE_TRACING[0] = tape_tracing
        _linearize.ACTIVE[0] = linearize
        (_optimizer.HYPER_HOOK, _random.DRAW_HOOK, _lr_scheduler.STEP_HOOK,
         _printing.ON_TRACED) = prev
        snapshot.restore()

    tr = Traced()
    tr.jaxpr = closed
    tr.n_known = len(arrays)
    tr.array_of = array_of
    tr.writes = result["writes"]
    tr.out_spec = result["spec"]
    tr.out_template = result["template"]
    tr.out_requires_grad = result["out_rg"]
    tr.out_long32 = result["long32"]
    tr.out_tags = result["tags"]
    # the tape, not JAX's derivative, says which inputs a compiled forward's outputs reach
    # (sign(x) has a zero derivative, but eager's output requires grad and x gets zeros):
    # per output, the indices of the known tensors (a later call passes other objects) and
    # the ids of the tensors found while tracing (the program's Extra slots hold them)
    tr.out_reach = [(frozenset(ids[r] for r in reach if r in ids), reach)
                    for reach in result["reach"]]
    tr.n_outputs = result["n_outputs"]
    tr.backward_ran = engine.RUNS[0] != runs0
    tr.draws = [(gen, st[3] - st[0]) for gen, st in rng.items()]
    tr.scheduler_steps = sched_steps
    rng_slots = {}
    for gen, st in rng.items():
        rng_slots[id(st[1])] = RngKey(gen)
        rng_slots[id(st[2])] = RngOffset(gen)
    extra_arrays = {id(a): Extra(t) for t, a in extras.values()}
    slots = []
    for c in closed.consts:
        k = id(c)
        if k in hypers:
            slots.append(hypers[k][1])
        elif k in rng_slots:
            slots.append(rng_slots[k])
        elif k in extra_arrays:
            slots.append(extra_arrays[k])
        else:
            slots.append(Literal(c))
    tr.const_slots = slots
    if SPMD[0] is not None:
        SPMD[0].check(tr)
    return tr


def _layout_of(t):
    return LAYOUT[0](t) if LAYOUT[0] is not None else (t._data, None)


def _writes(known, array_of, tracers, grads0, modules, src, opt_state0, extras, ids):
    """(write targets, their values) for every change the step made to outside state."""
    writes, values = [], []

    def add(w, v):
        # a write without a value (a gradient set to None) is not a program output
        writes.append((w, v is not None))
        if v is not None:
            values.append(v)

    for i, t in enumerate(known):
        if t._data is not tracers[array_of[i]] and (t._base is None or id(t._base) not in ids):
            add(TensorWrite(i), _layout_of(t)[0])
        g0, g = grads0[i], t._grad
        if g is g0 and g is not None and id(g) not in ids and _is_traced(g._data):
            raise GraphBreak("backward() adds to the .grad of an argument that has one already; "
                             "set it to None before the call (or pass a tensor that does not "
                             "require grad) to compile the step")
        if g is not g0:
            if g is None:
                add(GradClear(i), None)
            elif id(g) not in ids:
                data, tag = _layout_of(g)
                add(GradWrite(i, tag), data)
    for t, a in list(extras.values()):
        if t._data is not a:
            raise GraphBreak("an in-place change to a tensor the compiled function reached "
                             "only through a container it does not walk; pass the tensor as "
                             "an argument or keep it on a module (register_buffer)")
    for m in modules:
        for name, b in m._buffers.items():
            if b is not None and id(b) not in ids and _is_traced(b._data):
                add(DictWrite(m._buffers, name, b._requires_grad), b._data)
        for name, p in m._parameters.items():
            if p is not None and id(p) not in ids:
                raise GraphBreak(f"parameter {name!r} of {type(m).__name__} is replaced "
                                 "inside the compiled function")
        for name, v in m.__dict__.items():
            if isinstance(v, Tensor) and id(v) not in ids and _is_traced(v._data):
                add(DictWrite(m.__dict__, name, v._requires_grad), v._data)
    for opt in src.optimizers:
        before = opt_state0[id(opt)]
        for p, st in opt.state.items():
            old = before.get(id(p))
            for k, v in st.items():
                if isinstance(v, Tensor):
                    if old is None or old[1].get(k) is not v:
                        data, tag = _layout_of(v)
                        add(OptStateWrite(opt, ids[id(p)], k, tag), data)
                elif old is not None and old[1].get(k, v) != v:
                    raise GraphBreak(f"{type(opt).__name__} keeps a Python number in its state "
                                     f"({k!r}) that changes every step")
    for c in src.containers:
        items = c.values() if isinstance(c, dict) else c
        for v in items:
            # a known tensor held by the container has a tracer for the trace's length;
            # only a tensor made inside it leaks
            if isinstance(v, Tensor) and id(v) not in ids and _is_traced(v._data):
                raise GraphBreak("a tensor made inside the compiled function is stored in a "
                                 f"{type(c).__name__} it does not return; return it instead "
                                 "(or store loss.item() outside the compiled function)")
    return writes, values
