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
    _deferred_programs,
    _deferred_split,
    _deferred_template,
    _one_off,
    _programs,
)
from . import _deferred_grad as _grad
from ._autograd import engine, fused
from ._autograd.node import AccumulateGrad, Node
from ._scalar_args import seen_enough as _count
from ._tensor import Tensor

ON = [True]  # (off: the usual path always; bench/bench_eager22_ab.py compares the two)
COMPILE_AFTER = 2  # a (sequence, graph) pair seen this many times gets its program
_MAX = 64  # programs kept (cleared when full); also bounds the sightings table
_PROGRAMS: dict = {}  # key -> program, or engine._Compiling while it compiles
_SEEN: dict = {}
STATS = {"runs": 0, "programs": 0}  # for tests and benchmarks
_Ref = _grad.Ref
_refs = sys.getrefcount
_source = _deferred_programs.source
_flatten = jax.tree_util.tree_flatten
_unflatten = jax.tree_util.tree_unflatten
_CONCRETE = fused._CONCRETE
_wrap = Tensor._wrap
_STORE_GRAD = Tensor._store_grad
_RELEASE = Node.release


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
    flat = seq.key
    if seq.pieces and live:  # pieces nobody read yet are computed at their first read
        live = _deferred_split.later(seq.ops, flat, seq.ext, results, live)
    live = tuple(live)
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
    for n in nodes:
        if type(n) is not AccumulateGrad and (n._released or n._versions):
            n.check_saved()
    grads = _grad.run_together(seq, live, results, lambda: prog(tuple(args), given))
    STATS["runs"] += 1
    _store(nodes, grads)
    return True


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


def _program(key, ops, args, root_grads):
    """The key's program (kept), compiled now or on engine's background thread (then None
    is returned: the usual path runs until it is done)."""
    flat, live, structure, tree, where = key
    steps = [(p, flat[a:b]) for _, p, a, b in ops]
    backward = fused.backward_of(structure)

    def forward_backward(args, root_grads):
        vals = []
        for pure, srcs in steps:
            vals.append(pure(*[_source(s, args, vals) for s in srcs]))
        saved = _unflatten(tree, [args[s] if s >= 0 else vals[~s] for s in where])
        return tuple(vals[i] for i in live), backward(saved, root_grads)

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
