"""The host tier: a program's first calls evaluated with NumPy instead of compiled.

Why: XLA compiles even a one-op program in 10-50 ms on a CPU, and eager mode makes a
program per op, per shape, per backward node. A script waits for every one of them at its
first step, and code whose shapes keep changing (autoregressive generation: every new
length is a new shape for every op) compiles without end: makemore's Transformer sampling
16 tokens compiled ~580 programs (17 s) where PyTorch takes 0.03 s. A NumPy evaluation of
the same jaxpr costs a trace (~0.3-1 ms, once per signature) and microseconds per equation.

So, as a JIT does with an interpreter: a program-cache program (_programs._Program) whose
signature is new, not on disk, small, and on CPU devices runs its jaxpr with NumPy
(_numpy_eval's rules, the evaluation a forked DataLoader worker uses too). A
signature that keeps coming back is compiled after HOT calls, on another thread
(_programs.compile_soon), and runs compiled from then on; until the executable is ready its
calls keep the NumPy evaluation. A primitive without a NumPy rule, a weak-typed or extended
output, low-precision floats (XLA keeps their fused intermediates in float32, which NumPy
cannot reproduce) or random bits make the signature take the compiled path at once.

Results: NumPy's transcendental functions, sums and matrix products round differently from
XLA's in the last bits (both are within PyTorch's tolerance of the exact value; XLA:CPU also
flushes denormals, NumPy does not). A signature's first calls and its compiled calls may so
differ in the last bit, as fused and unfused programs already do (docs/design.md).

TORCHJAX_HOST_TIER=0 turns it off; TORCHJAX_HOST_TIER_HOT sets HOT,
TORCHJAX_HOST_TIER_CHANGING sets CHANGING.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import time

import numpy as np

from . import _host_plans, _host_shapes, _numpy_eval, _numpy_plan, _x64

ON = [os.environ.get("TORCHJAX_HOST_TIER", "1").strip().lower() not in ("0", "false", "off", "")]
# a signature is compiled (on the worker thread) at its HOT-th call...
HOT = int(os.environ.get("TORCHJAX_HOST_TIER_HOT", "4"))
# ...or once its NumPy evaluations have cost about what compiling it would (a small
# program's XLA compile here: 20-100 ms), whichever comes first
BUDGET = 0.05
# Sizes that keep changing. A signature made from a template of changing sizes (_host_shapes:
# one length differs from an earlier call's), or a program of a family (names alike but for
# their integers: `x.view(B, T, H, D)`, `mask[:, :, :T, :T]`, each length another program,
# _host_shapes.variants) that has had FAMILIES programs, is one length of several: it is hot
# only once it comes back after a later length of its template or family has been called,
# or once its calls outlast the group's bursts: twice the longest run of host evaluations
# that one length of the group has been called over, and at least SPAN. Why: a model of L
# layers calls each op L times per token of an autoregressive generate, at that token's
# length, which never comes back; HOT alone queued a compile of each (a 6-layer GPT's
# 150-token generate: ~2,600 compiles, each used for one token; a call waiting for a compile
# of its own waited 7 s behind them). Until session 27 the first 8 lengths of each template
# were still compiled (minGPT's chargpt: ~240 compiles while its prompt grew to the block
# size, the compile thread busy throughout and those forwards 2x slower cold). Lengths that
# come back (episode lengths in reinforcement learning, a training set's last batch) are
# compiled at their return; a length that stays (generation at its block size, a model
# whose shapes a template made from another model's calls) after its first bursts' span.
# CHANGING is the count of other lengths from which the rule applies (per template, not per
# program: a program's signatures from unrelated models are no changing length); tests/
# conftest.py turns it off. A family's members are often a training step's call sites
# (`sum(1)` and `sum(0)`), each called every step: the rule waits for FAMILIES of them (its
# window counts host evaluations, which stop once the rest is compiled).
CHANGING = int(os.environ.get("TORCHJAX_HOST_TIER_CHANGING", "1"))
FAMILIES = 8
SPAN = 256
_GROUPS: dict = {}  # template or family -> [the entry called last, its longest burst]
_BORN = itertools.count(1)
EVALUATED = [0]  # host evaluations so far
# a signature being compiled waits for its executable rather than evaluate again when its
# last evaluation took this long
WAIT = 0.25
# a deferred op sequence (_deferred_programs) whose ops the host tier evaluates gets its
# program when seen this many times (its ops' own programs are then seldom needed)
SEQUENCE_AFTER = int(os.environ.get("TORCHJAX_HOST_TIER_SEQUENCES", "4"))
# signatures one program keeps a jaxpr for (a process meeting ever-new shapes forgets the
# oldest: they are traced again if they come back)
MAX_ENTRIES = 512
# the largest evaluation done with NumPy (elements over all inputs): beyond it the compile is
# the smaller cost, and NumPy's convolutions and reductions of big arrays are slow
MAX_ELEMENTS = 1 << 24
# ...and the most arithmetic (matrix products and convolutions, 2 x multiply-adds): ~0.1-0.2 s
# of one BLAS thread; a bigger product is faster compiled and run on XLA's threads
MAX_FLOPS = 4e9
NO = object()  # a signature the host tier does not take
_EXACT_KINDS = "biuc"
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# random draws keep XLA's bits (a seed's values are the same at every call), and what needs
# a runtime or other devices stays compiled
_STOP = frozenset({"random_bits", "random_seed", "random_wrap", "random_unwrap",
                   "random_fold_in", "random_split",
                   "threefry2x32", "rng_bit_generator", "rng_uniform", "pure_callback",
                   "io_callback", "debug_callback", "custom_call", "infeed", "outfeed",
                   "psum", "all_gather", "all_to_all", "ppermute", "reduce_scatter",
                   "axis_index", "platform_index", "shard_map"})


def _plain_dtype(dtype) -> bool:
    return isinstance(dtype, np.dtype) and (dtype.kind in _EXACT_KINDS or dtype in _FLOATS)


class Entry:
    """What the host tier keeps per (program, signature): its jaxpr's plan (_numpy_plan) and
    how often and how long it ran."""

    __slots__ = ("in_avals", "out_tree", "avals", "calls", "device", "committed", "spent",
                 "last", "blas", "plan", "mark", "group",
                 "born", "first", "latest")

    def __init__(self, plan, in_avals, out_tree, avals, device, committed, blas):
        self.in_avals = in_avals  # (for TORCHJAX_LOGS=compiles, and _host_plans)
        self.out_tree = out_tree
        self.avals = avals
        self.device = device
        self.committed = committed
        self.calls = 0
        self.spent = 0.0  # seconds of NumPy evaluation so far
        self.last = 0.0   # seconds of the last one
        self.blas = blas  # whether it multiplies matrices (see run)
        self.plan = plan
        # made from a template: (its pattern, the length, the lengths it had served)
        self.mark = None
        # its template or family of programs, while it is one length of several (CHANGING),
        # the order it was made in, and EVALUATED at its first and latest calls
        self.group = None
        self.born = self.first = self.latest = 0


def eligible_args(leaves):
    """(device, committed) when every argument is a small plain array on one CPU device
    (or a Python number), else None."""
    from ._host_put import _single_process
    from ._programs import _ARRAY
    if not _single_process():  # (a job's arrays and programs are placed per process)
        return None
    device = None
    committed = False
    total = 0
    for x in leaves:
        if x.__class__ is _ARRAY:
            s = x.sharding
            d = getattr(s, "_device", None)
            if d is None or d.platform != "cpu" or (device is not None and d is not device):
                return None
            device = d
            committed = committed or x._committed
            if not _plain_dtype(x.dtype):
                return None
            total += x.size
            if total > MAX_ELEMENTS:
                return None
        elif x.__class__ is np.ndarray:  # (jax.jit places it, uncommitted)
            if not _plain_dtype(x.dtype):
                return None
            total += x.size
        elif x.__class__ not in (bool, int, float):
            return None
    return device, committed


def _placed(leaves):
    from ._host_put import _default_device, _transfer
    placed = None if _transfer is None else eligible_args(leaves)
    if placed is not None and placed[0] is None:
        placed = _default_device(), placed[1]
    return placed


def entry_for(jitted, args, leaves, prog=None, config=None):
    """A new Entry for this call, or _NO when the host tier does not take it. With `prog`
    (the _programs._Program of `jitted`) and the call's `config` (its key's), its jaxpr may
    come from a template of sizes that change from call to call (_host_shapes) instead of a
    trace."""
    import jax
    placed = _placed(leaves)
    if placed is None:
        return NO
    got = None if prog is None else _host_shapes.jaxpr_for(prog, args, leaves, config)
    if got is not None and got[0] is None:  # (a template's plan, its sizes filled in)
        _, plan, in_avals, out_tree, out_avals, flops = got
        if flops > MAX_FLOPS:
            return NO
        return Entry(plan, in_avals, out_tree, out_avals, *placed, flops > 0)
    if got is not None:
        closed, out_tree = got
    else:
        try:
            traced = jitted.trace(*args)
        except Exception:  # noqa: BLE001  (the compiled path raises the same error properly)
            return NO
        closed, out_tree = traced.jaxpr, jax.tree_util.tree_structure(traced.out_info)
    out_avals = closed.out_avals
    if not takes_jaxpr(closed):
        return NO
    flops = _flops(closed.jaxpr)
    if flops > MAX_FLOPS:
        return NO
    try:
        plan = _numpy_plan.make(closed.jaxpr, closed.consts)
    except _numpy_eval.NoRule:
        return NO
    return Entry(plan, closed.jaxpr.in_avals, out_tree, out_avals, *placed, flops > 0)


def takes_jaxpr(closed) -> bool:
    """Whether the host tier evaluates this ClosedJaxpr (its outputs plain and not weakly
    typed, a NumPy rule for every equation; its sizes are not looked at)."""
    return not any(not _plain_dtype(getattr(a, "dtype", None)) or a.weak_type
                   for a in closed.out_avals) and _numpy_eval.covers(closed.jaxpr, _STOP)


def kept_entry(store, key, leaves):
    """The Entry made from the plan an earlier process kept for this call (_host_plans), or
    None."""
    placed = _placed(leaves)
    got = None if placed is None else _host_plans.load(store, key, leaves)
    if got is None:
        return None
    entry = Entry(got[0], got[1], got[2], got[3], *placed, got[4])
    entry.mark = got[5]
    return entry


def _flops(jaxpr, times=1):
    """Multiply-adds x 2 of `jaxpr`'s matrix products and convolutions (and of the jaxprs it
    calls; a scan's body counts once per iteration): what NumPy's time grows with. In
    integers, so that a jaxpr of symbolic sizes (_host_shapes) gives an expression of them."""
    total = 0
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name == "dot_general":
            (xc, _), _ = eqn.params["dimension_numbers"]
            x = eqn.invars[0].aval.shape
            total += 2 * math.prod(eqn.outvars[0].aval.shape) * math.prod(x[i] for i in xc)
        elif name == "conv_general_dilated":
            w = eqn.invars[1].aval.shape  # (its input features and window: all but one dim)
            total += 2 * math.prod(eqn.outvars[0].aval.shape) * (math.prod(w) // max(
                w[eqn.params["dimension_numbers"].rhs_spec[0]], 1))
        for inner in _numpy_eval.inner_jaxprs(eqn):  # (covers let only these through)
            total += _flops(inner, eqn.params.get("length", 1))
    return total * times


_BLAS: list = []  # threadpoolctl's controllers of the BLAS libraries NumPy loaded


def _blas_libraries():
    if not _BLAS:
        try:
            from threadpoolctl import ThreadpoolController
            _BLAS.append(ThreadpoolController().select(user_api="blas").lib_controllers)
        except Exception:  # noqa: BLE001  (no threadpoolctl, or a BLAS it does not know)
            _BLAS.append([])
    return _BLAS[0]


def run(entry, leaves):
    """The outputs of `entry`'s program for these argument leaves, as device arrays."""
    import jax

    from ._host_put import ALIGN, aligned_copy, transfer
    start = time.perf_counter()
    args = [np.asarray(x) for x in leaves]
    # one BLAS thread: the other core is compiling (the hot programs, the fused backward),
    # and OpenBLAS's threads spinning against it made a 16x256 by 256x1024 product 6-13x
    # slower on this 2-core machine
    libs = _blas_libraries() if entry.blas else ()
    threads = [lib.get_num_threads() for lib in libs]
    try:
        for lib in libs:
            lib.set_num_threads(1)
        with np.errstate(all="ignore"):  # lax computes inf and NaN silently
            outs = _numpy_plan.run(entry.plan, args)
    finally:
        for lib, n in zip(libs, threads):
            lib.set_num_threads(n)
    arrays = []
    # (in torchjax's x64 scope: outside it JAX's transfer would make a float64 array's
    # buffer float32 under its float64 type, as a program that runs outside the scope on
    # float64 arrays does; XLA then refuses the buffer)
    token = _x64.enter()
    try:
        for o, aval in zip(outs, entry.avals):
            o = np.asarray(o, dtype=aval.dtype, order="C")  # (ascontiguousarray: 0-d -> 1-d)
            # a view of an argument's memory gets a buffer of its own, as XLA's outputs have
            # (the argument may be donated); and so does a large output NumPy placed off
            # XLA's alignment (see ALIGN_FROM)
            if not o.flags.owndata or (o.nbytes >= ALIGN_FROM and o.ctypes.data % ALIGN):
                o = aligned_copy(o)
            if o.shape != aval.shape:  # (a rule's mistake: the caller compiles the program)
                raise ValueError(f"host tier: shape {o.shape}, expected {aval.shape}")
            a = transfer(o, aval, entry.device, entry.committed)
            if not any(o is x for x in args):
                # the next host-tier op reads this output with np.asarray: JAX keeps what
                # that read in _npy_value (read-only), and it is `o` (5-8% of a GPT's
                # generate: each op's inputs were copied back from their device buffers)
                o.flags.writeable = False
                try:
                    a._npy_value = o
                except AttributeError:  # pragma: no cover - a JAX without it
                    pass
            arrays.append(a)
    finally:
        _x64.leave(token)
    entry.last = time.perf_counter() - start
    entry.spent += entry.last
    return jax.tree_util.tree_unflatten(entry.out_tree, arrays)


# A large output NumPy placed off XLA's alignment (_host_put.ALIGN) was copied by the
# transfer, ~3 outputs in 4: 40 us for 128 x 768 float32 values against 3 us for an aligned
# one (a growing GPT's MLP activations, every host-tier call). A copy made here into aligned
# memory costs ~14 us, and the transfer then takes it as it is. Below ALIGN_FROM bytes the
# transfer's own copy costs less than that.
ALIGN_FROM = 16 << 10


def takes(args) -> bool:
    """Whether a program's call with `args` would likely start on the host tier (its
    arguments qualify; its jaxpr is not looked at): callers that would compile it ahead on
    another thread leave it to the host tier instead."""
    if not ON[0]:
        return False
    import jax
    return eligible_args(jax.tree_util.tree_leaves(args)) is not None


def call(prog, args, sig, compiled):
    """The outputs of program-cache program `prog` (_programs._Program) for this call of
    signature `sig`, evaluated here; None when it is to run compiled (`compiled`: what its
    table holds for `sig`: None, or a compile in progress)."""
    from . import _compile_stats, _programs
    from ._program_soon import Soon
    entry = prog.host.get(sig)
    if entry is None:
        if compiled is not None:  # (compile_soon's: the caller wants that executable)
            return None
        family, mark = 0, None
        store = _programs._get_store()
        key = prog._key_of(sig)
        if key is not None and os.path.exists(store._file(key)):
            entry = NO  # (loading it is cheaper)
        else:
            start = time.perf_counter()
            leaves = _leaves(args)
            plan_key = None if key is None else _host_plans.key_of(key)
            entry = None if key is None else kept_entry(store, plan_key, leaves)
            made = entry is None
            if not made:
                _compile_stats.log_host_tier(entry.in_avals, time.perf_counter() - start,
                                             loaded=True)
                mark = entry.mark  # (its process made it from a template)
            else:
                entry = entry_for(prog.jit, args, leaves, prog, sig[1:])
                mark = _host_shapes.mark()
            if mark is not None:  # the lengths its template has served (see CHANGING)
                family = _host_shapes.served(prog, mark)
            if made and entry is not NO:
                entry.mark = None if mark is None else mark[:2] + (family,)
                _compile_stats.log_host_tier(entry.in_avals, time.perf_counter() - start)
                if plan_key is not None:
                    _host_plans.save(store, plan_key, entry)
        group = None
        if mark is not None:
            if family >= CHANGING:
                group = (prog.ident, mark[0])
        elif not prog.host and not prog.compiled:  # (a program's first call)
            family_name = _host_shapes.family_of(prog.ident)
            if _host_shapes.variants(family_name) >= FAMILIES:
                group = family_name
        if entry is not NO and group is not None:
            # one length of several: hot only once it comes back after another one, or
            # its calls outlast its group's bursts (see CHANGING)
            entry.group = group
            entry.born = next(_BORN)
            entry.first = entry.latest = EVALUATED[0]
        if len(prog.host) >= MAX_ENTRIES:  # (ever-new shapes: stay bounded)
            prog.host.clear()
        prog.host[sig] = entry
    if entry is NO:
        return None
    if compiled is None:
        group = entry.group
        waiting = group is not None and _one_of_several(entry, group)
        entry.calls += 1
        if entry.calls >= HOT and not waiting or entry.spent >= BUDGET:
            # hot: compiled on the worker thread, which takes the programs whose evaluation
            # here costs most first; it traces and lowers them too, in this call's x64 mode
            # (_programs._work checks it). (Lowering here instead made autoregressive
            # generation 1.7 -> 2.9-3.2 s: ~400 lowerings of programs used for one length)
            enter = _x64.scope if _x64.X64.value else contextlib.nullcontext
            if not prog.compile_soon(args, f"hot {prog.ident[:60]}", enter,
                                     queued=entry.spent / entry.calls):
                prog.host[sig] = NO
                return None
            compiled = prog.compiled.get(sig)
    if compiled is not None and (compiled.__class__ is not Soon or not compiled.busy()
                                 or entry.last >= WAIT):
        return None  # (ready, or evaluating here is too slow to go on with: wait for it)
    try:
        outs = run(entry, _leaves(args))
    except Exception:  # noqa: BLE001  (a rule declining a form, NoRule: compile it)
        prog.host[sig] = NO
        return None
    _compile_stats.count_host_call()
    EVALUATED[0] += 1
    return outs


def _one_of_several(entry, group) -> bool:
    """Whether `entry`, one length of its template or family, is to wait (see CHANGING):
    notes its call and the bursts of its group."""
    g = _GROUPS.get(group)
    if g is None:
        if len(_GROUPS) >= 4096:
            _GROUPS.clear()
        g = _GROUPS[group] = [entry, 0]
    last = g[0]
    if last is not entry:  # (the burst of `last` ended here, for now)
        # (a length still waiting ended a burst; one that outlasted the bursts or came
        # back has left its group, and its calls are no burst)
        if last.group is not None:
            span = last.latest - last.first
            if span > g[1]:
                g[1] = span
        g[0] = entry
        if entry.calls and last.born > entry.born:
            # back after a later length: one that recurs (a family's members made before it
            # are other call sites, called beside it at each length)
            entry.group = None
            return False
    entry.latest = now = EVALUATED[0]
    if now - entry.first >= max(SPAN, 2 * g[1]):  # (it outlasts the bursts)
        entry.group = None
        return False
    return True


def _leaves(args):
    import jax
    return jax.tree_util.tree_leaves(args)
