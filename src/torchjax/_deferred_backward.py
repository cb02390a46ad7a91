"""A backward that finds its forward still pending runs both as ONE program.

Why: with grad deferral (_deferred_grad.py) a repeated forward is one pending sequence, and
until now `backward()` first ran it as a program of its own, returning every value a tape
node saved, then ran the fused backward over those values: the repeated tree net's forward
returned 63 arrays and its backward took 64 (each output and argument of an XLA CPU call
costs ~2 us here), and the step made two calls. When the graph of the backward and the
pending sequence are the ones seen before, one program now computes the forward's values
and the gradients from them: its arguments are the sequence's inputs (and arrays saved by
nodes recorded outside it), its results the forward's results still alive and the leaves'
gradients. The saved values never leave it.

When: engine.run_backward calls `run` before running the pending sequence, for a plain graph
(engine._structure: no hooks, no retained grads; not autograd.grad, not retain_graph, not
anomaly mode) at the top level. It declines (the usual path runs) when the thread has no
pending sequence with tape nodes, when a node that saved a pending value is alive outside
the graph (its saved values must be written back), or until the pair (sequence, graph) has
been seen COMPILE_AFTER times; its program then compiles on engine's background thread as
the fused backward's does (engine.BACKGROUND), the usual path running meanwhile.

Results are the usual path's: the same pure rows and the same pure backward
(_autograd/fused.backward_of) run in one program instead of two.
"""

from __future__ import annotations

import sys

import jax

from . import (
    _deferred,
    _deferred_fold,
    _deferred_programs,
    _deferred_split,
    _deferred_template,
    _one_off,
    _programs,
)
from . import _deferred_grad as _grad
from . import _deferred_replay as _replay
from ._autograd import engine, fused
from ._autograd.node import AccumulateGrad, Node
from ._scalar_args import seen_enough as _count
from ._tensor import Tensor

ON = [True]  # (off: the usual path always; bench/bench_eager22_ab.py compares the two)
COMPILE_AFTER = 2  # a (sequence, graph) pair seen this many times gets its program
_MAX = 64  # programs kept (cleared when full); also bounds the sightings table
_PROGRAMS: dict = {}  # key -> program, or engine._Compiling while it compiles
_SEEN: dict = {}
# for tests and benchmarks ("replayed": runs whose key the step's trace gave)
STATS = {"runs": 0, "programs": 0, "replayed": 0}
_Ref = _grad.Ref
_refs = sys.getrefcount
_source = _deferred_programs.source
_flatten = jax.tree_util.tree_flatten
_unflatten = jax.tree_util.tree_unflatten
_CONCRETE = fused._CONCRETE
_wrap = Tensor._wrap
_STORE_GRAD = Tensor._store_grad
_RELEASE = Node.release
_FOLD = _deferred_fold.ON


def run(nodes, root_slots, parts, root_grads) -> bool:
    """Run the thread's pending sequence and the backward of engine._structure's graph
    (nodes, root_slots, parts) as one program; False when this call is not one for it."""
    seq = _deferred._LOCAL.seq
    if seq.done or not seq.graph or not ON[0] or not _one_off.top_level() \
            or len(nodes) > engine._FUSE_MAX_NODES:
        return False
    graph = set(map(id, nodes))
    for n in seq.nodes:
        # alive outside the graph (the list, the loop and getrefcount hold it): its saved
        # values must be written back, which only the usual path does
        if id(n) not in graph and _refs(n) > 3:
            return False
    results = seq.results
    live = []
    i = 0
    for t in results:  # alive: held by more than `results`, this loop and getrefcount's
        if _refs(t) > 3 and t._lazy is not None:
            live.append(i)
        i += 1
    if seq.pieces and live:  # pieces nobody read yet are computed at their first read
        live = _deferred_split.later(seq.ops, seq.key, seq.ext, results, live)
    live = tuple(live)
    exp = seq.exp
    if exp is not None and exp.bw is not None and len(results) == len(exp.entries):
        # the last step again (record followed its sequence op for op): when the graph is
        # its graph too, so are the key and the program; no saved value is walked
        bw = exp.bw
        if live == bw.live and parts == bw.parts and root_slots == bw.root_slots and \
                nodes[0] is results[bw.root]._grad_fn:
            implicit, given = engine.root_parts(root_grads)
            if implicit == bw.implicit:
                prog = bw.prog
                if prog.__class__ is engine._Compiling:
                    if prog.thread.is_alive():
                        prog = None
                    else:
                        prog = bw.prog = _PROGRAMS[bw.key] = prog.fn
                if prog is not None:
                    args = list(seq.ext)
                    for k, j in bw.numbers:
                        args.append(nodes[k]._saved[j])
                    _replay.follow(exp)
                    STATS["replayed"] += 1
                    if bw.folds and _FOLD[0]:  # the optimizer's update too (_deferred_fold)
                        done = _folded(seq, nodes, live, results, bw, args, given, root_grads)
                        if done:
                            return True
                    _finish(seq, nodes, live, results, lambda: prog(tuple(args), given),
                            args, bw)
                    return True
    if exp is not None:
        _replay.materialize(seq)
    flat = seq.key
    # (a kind of sequence whose graphs keep being new runs by its template at once: its
    # exact key, which would be built, hashed and counted for nothing, is skipped)
    sig = _deferred_template.preferred(seq, live, root_grads)
    if sig is not None:
        if _template(seq, nodes, graph, root_slots, root_grads, live, results, True, sig):
            return True
        tried = True  # (not again below: it would be analysed and counted twice)
    else:
        tried = False
    # the saved tuples of the graph's nodes, each leaf mapped to where the program finds it:
    # s >= 0 its argument s (the sequence's inputs first), s < 0 the result of op ~s
    saved = []
    for n in nodes:
        if type(n) is not AccumulateGrad:
            saved.append(n._saved)
    leaves, tree = _flatten(saved)
    where = []
    args = list(seq.ext)
    at = seq.where  # id of an array among the sequence's inputs -> its argument
    extra = {}
    for a in leaves:
        if a.__class__ is _Ref:
            if a.seq is not seq:  # (another thread's pending sequence: its usual path)
                return False
            where.append(~a.i)
        elif a.__class__ is _CONCRETE:
            i = at.get(id(a))
            if i is None:
                i = extra.get(id(a))
                if i is None:
                    i = extra[id(a)] = len(args)
                    args.append(a)
            where.append(i)
        else:  # a number: an argument of its own
            where.append(len(args))
            args.append(a)
    implicit, given = engine.root_parts(root_grads)
    structure = (root_slots, implicit, parts)
    key = (tuple(flat), live, structure, tree, tuple(where))
    prog = _PROGRAMS.get(key)
    if prog is None:
        # (a graph not seen before, or whose program is being made: its template's program,
        # keyed on the kinds of its ops rather than its structure, may run it)
        if not _seen_enough(key):
            return not tried and _template(seq, nodes, graph, root_slots, root_grads, live,
                                           results, True)
        prog = _program(key, seq.ops, args, root_grads)
        if prog is None:  # (while it compiles: a template's program made already may run it)
            return not tried and _template(seq, nodes, graph, root_slots, root_grads, live,
                                           results, False)
    elif prog.__class__ is engine._Compiling:
        if prog.thread.is_alive():
            return not tried and _template(seq, nodes, graph, root_slots, root_grads, live,
                                           results, False)
        prog = _PROGRAMS[key] = prog.fn
    bw = _replay.keep_backward(seq, prog, lambda: _trace_of(
        seq, nodes, results, key, prog, parts, root_slots, implicit, live, leaves, where,
        len(seq.ext)))
    _finish(seq, nodes, live, results, lambda: prog(tuple(args), given), args, bw)
    return True


def _finish(seq, nodes, live, results, call, args, bw):
    """Run the program (`call`: its live results and the leaves' gradients) with the
    sequence, store the gradients and note them for a fold (bw: the step's _Backward, or
    None); returns the gradients."""
    for n in nodes:
        if type(n) is not AccumulateGrad and (n._released or n._versions):
            n.check_saved()
    grads = _grad.run_together(seq, live, results, call)
    STATS["runs"] += 1
    _store(nodes, grads)
    if bw is not None:
        _deferred_fold.note(bw, nodes, grads, args)
    return grads


def _folded(seq, nodes, live, results, bw, args, given, root_grads):
    """_finish with the program that also computes bw's folded updates, when they can be
    computed now and the program is made; False: the plain program runs."""
    ups = _deferred_fold.plan(bw, nodes, args)
    if ups is None:
        return False
    inputs = _deferred_fold.inputs(bw, ups)
    fprog = bw.fprog
    if fprog is None:
        _replay.materialize(seq)
        fprog = _fold_program(bw, seq.ops, args, given, inputs)
        if fprog is None:
            return False
    if fprog.__class__ is engine._Compiling:
        if fprog.thread.is_alive():
            return False
        fprog = bw.fprog = fprog.fn
    box = []

    def call():
        outs, grads, res = fprog(tuple(args), given, inputs)
        box.append(res)
        return outs, grads
    grads = _finish(seq, nodes, live, results, call, args, bw)
    _deferred_fold.keep(bw, ups, args, grads, box[0])
    return True


def _fold_program(bw, ops, args, given, inputs):
    """bw's program with its folds' updates, compiled on engine's background thread (None
    while that thread is busy with another: tried again at the next step)."""
    flat, live, structure, tree, where = bw.key
    forward_backward = _forward_backward(bw.key, ops)
    seq_ident = _deferred_programs._ident(ops, flat, live)
    folds = _deferred_fold.ident_of(bw)
    ident = None if seq_ident is None or folds is None else fused.ident(
        structure, (tree, where), "forward+backward+update", seq_ident, folds)
    prog = _programs.program(_deferred_fold.program(bw, forward_backward), ident)
    if engine.BACKGROUND:
        busy = engine._compiling[0]
        if busy is not None and busy.thread.is_alive():
            return None
        bw.fprog = engine._compiling[0] = engine._Compiling(
            prog, _programs.compile_ahead(prog, (tuple(args), given, inputs)))
        return bw.fprog
    bw.fprog = prog
    return prog


class _Backward:
    """What a step that follows the trace of this one op for op needs to know that its graph
    is this one's too (the key's parts that record did not check) and to run it: the
    program and its key, the op whose result is the root, and where the saved numbers (the
    program's arguments after the sequence's inputs) are among the graph's nodes."""

    __slots__ = ("key", "prog", "parts", "root_slots", "implicit", "live", "root", "numbers",
                 "folds", "fprog", "refused")

    def __init__(self):
        # optimizer updates folded into the program (_deferred_fold): the folds, their
        # program (None until made), and the groups not to fold again, (id(optimizer),
        # group index) -> weakref(optimizer)
        self.folds = ()
        self.fprog = None
        self.refused = {}


def _trace_of(seq, nodes, results, key, prog, parts, root_slots, implicit, live, leaves,
              where, n_ext):
    """The _Backward of a step whose graph holds the sequence's nodes only (each saved array
    one of its inputs), from a single root; else None (its steps build their key)."""
    if len(root_slots) != 1 or root_slots[0][0] != 0:
        return None
    own = {}
    for i, t in enumerate(results):
        fn = t._grad_fn if isinstance(t, Tensor) else None
        if fn is not None:
            own[id(fn)] = i
    root = own.get(id(nodes[0]))
    if root is None:
        return None
    numbers = []
    k = 0  # the leaves of the saved tuples in flatten's order: node by node, left to right
    for p, n in enumerate(nodes):
        if type(n) is AccumulateGrad:
            continue
        if id(n) not in own:
            return None  # a node recorded outside the sequence
        for j, x in enumerate(n._saved):
            if x is None:
                continue
            if x.__class__ is _Ref:
                pass
            elif x.__class__ is _CONCRETE:
                if where[k] >= n_ext:
                    return None  # (an array that is not one of the sequence's inputs)
            elif x.__class__ in (tuple, list, dict) or isinstance(x, (tuple, list, dict)):
                return None  # (a nested saved value: not walked here)
            else:
                numbers.append((p, j))
            k += 1
    if k != len(leaves):
        return None
    bw = _Backward()
    bw.key, bw.prog, bw.parts, bw.root_slots = key, prog, parts, root_slots
    bw.implicit, bw.live, bw.root, bw.numbers = implicit, live, root, tuple(numbers)
    return bw


def _store(nodes, grads):
    """The leaves' gradients into their .grad, every other node's saved values freed (as
    Tensor._store_grad and Node.release, their common cases inline: a small MLP's step is
    ~100 µs, and this loop made 8 calls of it)."""
    k = 0
    for n in nodes:
        if type(n) is AccumulateGrad:
            g = grads[k]
            k += 1
            if g is not None:
                v = n.variable
                if v._grad is None and not v._post_acc_hooks \
                        and v.__class__._store_grad is _STORE_GRAD:
                    v._grad = _wrap(g)
                else:
                    v._store_grad(g)
        elif n.__class__.release is not _RELEASE:
            n.release()
        elif n._has_saved:
            n._saved = None
            n._released = True


def _template(seq, nodes, graph, root_slots, root_grads, live, results, make, sig=None):
    return _deferred_template.run(seq, nodes, graph, root_slots, root_grads, live, results,
                                  _deferred_split._Item, _deferred_split._NO_RESULT, _CONCRETE,
                                  make, sig)


def _seen_enough(key) -> bool:
    # counted by the key's hash: a key holds the graph's structure, a tuple per node, and
    # kept for every new graph they cost Python's cyclic GC (see engine._counts)
    return _count(_SEEN, hash(key), COMPILE_AFTER, 4 * _MAX)


def _forward_backward(key, ops):
    """The key's pure function: (args, root gradients) -> (live results, leaves' gradients)."""
    flat, live, structure, tree, where = key
    steps = [(p, flat[a:b]) for _, p, a, b in ops]
    backward = fused.backward_of(structure)

    def forward_backward(args, root_grads):
        vals = []
        for pure, srcs in steps:
            vals.append(pure(*[_source(s, args, vals) for s in srcs]))
        saved = _unflatten(tree, [args[s] if s >= 0 else vals[~s] for s in where])
        return tuple(vals[i] for i in live), backward(saved, root_grads)
    return forward_backward


def _program(key, ops, args, root_grads):
    """The key's program (kept), compiled now or on engine's background thread (then None
    is returned: the usual path runs until it is done)."""
    flat, live, structure, tree, where = key
    forward_backward = _forward_backward(key, ops)
    seq_ident = _deferred_programs._ident(ops, flat, live)
    ident = None if seq_ident is None else fused.ident(structure, (tree, where),
                                                       "forward+backward", seq_ident)
    background = engine.BACKGROUND
    if background:
        busy = engine._compiling[0]
        if busy is not None and busy.thread.is_alive():
            return None  # (seen again from the start, tried again)
    prog = _programs.program(forward_backward, ident)
    if len(_PROGRAMS) >= _MAX:
        _PROGRAMS.clear()
    STATS["programs"] += 1
    if background:
        given = tuple(g for g in root_grads if g.__class__ is not engine.Ones)
        # (traced and lowered here; XLA's compile on the thread, as the fused backward's)
        _PROGRAMS[key] = engine._compiling[0] = engine._Compiling(
            prog, _programs.compile_ahead(prog, (tuple(args), given)))
        return None
    _PROGRAMS[key] = prog
    return prog


engine.WITH_FORWARD[0] = run
