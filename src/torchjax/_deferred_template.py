"""A pending forward and its backward as ONE program keyed on the kinds of its ops, not on
its structure: a tree net over a new random tree every sample.

Why: _deferred_backward.py runs a pending forward with its backward as one program, keyed on
the exact sequence and graph, so a structure that never repeats never gets one; its steps
ran eagerly (94 XLA calls forward, ~34 chain programs backward, ~2x PyTorch's step). Yet
the tree's forward is always the same list of kinds of call (the leaves' split, then
cat, Linear, tanh per internal node in post-order, then the loss): only WHICH earlier
result each op reads changes with the tree. So here those reads are data: every result
of the sequence is written into a stacked buffer per result type, and an op reads an
earlier result by an index passed to the program (`idx`); the backward goes through the
same indices in reverse (each node's gradient for an earlier result is added into that
result's slot of a gradient buffer), with each node's own backward (its spec: what the
fused backward and the node-by-node engine run). One program then serves every tree of
the same size, and a step makes one XLA call for its forward and backward.

Which graphs: the plain ones _deferred_backward.run accepts (no hooks, retained grads,
autograd.grad or retain_graph; nodes not alive outside the graph) whose exact program has
not been seen before, whose forward results are not weakly typed, and whose non-leaf
nodes outside the sequence (recorded before it: an embedding run eagerly) take no
gradient from anything but the sequence's inputs. The gradients leaving the sequence are
the program's outputs: leaves get theirs at once, the nodes outside run afterwards
through the engine (engine.run_rest), as the rest of any backward would.

The template (key) holds, per op, its kind (fast-path token), which of its inputs are
outside arrays (by argument), constants, or earlier results (by their result type only),
and per node in the graph its backward spec and where its saved values come from; made
the COMPILE_AFTER-th time it is seen, compiled on engine's background thread.
"""

from __future__ import annotations

from operator import itemgetter

import jax
import jax.numpy as jnp
from jax import lax

from . import _deferred_grad as _grad
from . import _programs
from ._autograd import engine
from ._autograd.node import AccumulateGrad
from ._scalar_args import seen_enough as _seen_enough

ON = [True]  # (off: exact programs only; bench/bench_dynamic.py runs with it on)
COMPILE_AFTER = 2
_MAX = 32  # programs kept (cleared when full); also bounds the sightings table
_PROGRAMS: dict = {}
_SEEN: dict = {}
# for tests and benchmarks: runs of a template's program, programs made, sequences analysed
STATS = {"runs": 0, "programs": 0, "analysed": 0}
_flatten = jax.tree_util.tree_flatten
_unflatten = jax.tree_util.tree_unflatten
_Ref = _grad.Ref


class _Decline(Exception):
    """This graph is not one for a template: the usual path runs it."""


class _Key:
    """A template's key with its hash kept: the key is a tuple of a few hundred entries,
    hashed again by every lookup otherwise (~20 us)."""

    __slots__ = ("k", "h")

    def __init__(self, k):
        self.k, self.h = k, hash(k)

    def __hash__(self):
        return self.h

    def __eq__(self, other):
        return self is other or self.h == other.h and self.k == other.k


class _Quick:
    """What a later sequence of a template must repeat for the template's key, arguments and
    index array to be its own, checked in a few C-level lookups instead of the analysis
    (which cost ~400 us of Python per tree-net step): the positions of `flat` that do not
    vary, and how to read the ones that do (_quick)."""

    __slots__ = ("key", "n_flat", "n_nodes", "get", "static", "members", "dyn", "slot_of",
                 "nodes", "bare", "ext_edges", "n_out", "roots", "streak", "n_ops")


# (kinds of call per op, results still alive, implicit roots) -> the _Quick of the template
# last analysed for them
_QUICK: dict = {}


def _quick(q, seq, nodes, graph, root_slots, results):
    """(arguments, index array, outside edges, the sequence's nodes) for a sequence of the
    template `q` describes; None when this sequence differs from it (then analysed)."""
    flat = seq.key
    if len(flat) != q.n_flat or len(nodes) != q.n_nodes or q.get(flat) != q.static:
        return None
    for p, k, v in q.members:
        if flat[p][1][k] != v:
            return None
    slot_of = q.slot_of
    try:
        idx = [slot_of[flat[p] if k is None else flat[p][1][k]] for p, k in q.dyn]
    except KeyError:  # a read of a result no buffer holds
        return None
    seq_nodes = []
    for r, spec in q.nodes:
        fn = results[r]._grad_fn
        if fn is None or fn._spec is not spec or id(fn) not in graph:
            return None
        seq_nodes.append(fn)
    for r in q.bare:  # (ops that recorded no node in the graph still record none there)
        fn = results[r]._grad_fn
        if fn is not None and id(fn) in graph:
            return None
    outside = [None] * q.n_out
    for k, e, slot in q.ext_edges:
        edge = seq_nodes[k]._edges[e]
        if slot is None:
            if edge is not None:
                return None
            continue
        rep = outside[slot]
        if rep is None:
            if edge is None:
                return None
            outside[slot] = edge
        elif edge is None or edge[0] is not rep[0] or edge[1] != rep[1]:
            return None
    for (k, nr), r in zip(root_slots, q.roots):
        t = results[r]
        if t._grad_fn is not nodes[k] or t._output_nr != nr:
            return None
    return tuple(seq.ext), idx, outside, seq_nodes


def _sig(seq, live, root_grads):
    """What a template is looked up by: the kinds of call of its ops, the results alive, the
    implicit roots."""
    flat = seq.key
    return (tuple([flat[op[2] - 1] for op in seq.ops]), live,
            tuple(g.key if g.__class__ is engine.Ones else None for g in root_grads))


# A template whose program ran this many times in a row is tried first (preferred): the
# sequences of its kind are new graphs, whose exact keys _deferred_backward would build and
# hash for nothing (~60-80 us a tree-net step)
PREFER_AFTER = 4
_PREFER_LENS: set = set()  # the lengths of the sequences of such templates


def preferred(seq, live, root_grads):
    """The template signature of the sequence when its template is to be tried before the
    exact graph's program, else None."""
    if not ON[0] or len(seq.ops) not in _PREFER_LENS:
        return None  # (cheaply: most steps, a small MLP's, never have such a template)
    sig = _sig(seq, live, root_grads)
    q = _QUICK.get(sig)
    return sig if q is not None and q.streak >= PREFER_AFTER else None


def run(seq, nodes, graph, root_slots, root_grads, live, results, item_cls, no_result,
        concrete, make=True, sig=None) -> bool:
    """Run the thread's pending sequence `seq` and the backward of the graph `nodes` (ids in
    `graph`) as the template's program; False when it is not (yet) one for a template.
    make: count the template's sightings and make its program (False: the exact graph has
    been seen before and gets a program of its own; only a template's program made already
    may run it meanwhile)."""
    if not ON[0]:
        return False
    if sig is None:
        sig = _sig(seq, live, root_grads)
    q = _QUICK.get(sig)
    if q is None and not make:
        return False  # (no template program for it: not worth an analysis)
    got = None if q is None else _quick(q, seq, nodes, graph, root_slots, results)
    if got is not None:
        key = q.key
        args, idx, outside, seq_nodes = got
        outside_nodes = None
    else:
        if q is not None:
            q.streak = 0
        STATS["analysed"] += 1
        try:
            t = _template(seq, nodes, graph, root_slots, root_grads, live, results, item_cls,
                          no_result, concrete)
        except _Decline:
            return False
        key, args, idx, outside, seq_nodes, outside_nodes, q = t
        if q is not None:
            if len(_QUICK) >= 4 * _MAX:
                _QUICK.clear()
                _PREFER_LENS.clear()
            _QUICK[sig] = q
    prog = _PROGRAMS.get(key)
    if prog is None or prog.__class__ is engine._Compiling:
        if q is not None:
            q.streak = 0
    if prog is None:
        if not make:
            return False
        h = key.h  # (counted by hash: a key holds a tuple per op, see engine._counts)
        if not _seen_enough(_SEEN, h, COMPILE_AFTER, 4 * _MAX):
            return False
        seq.warm = True  # (its program is on the way: running op by op is no miss)
        if engine.BACKGROUND:
            busy = engine._compiling[0]
            if busy is not None and busy.thread.is_alive():
                _SEEN[h] = COMPILE_AFTER - 1  # (seen again next time)
                return False
        prog = _program(key, seq.ops, args, idx, root_grads)
        if prog is None:
            return False
    elif prog.__class__ is engine._Compiling:
        if prog.thread.is_alive():
            seq.warm = True
            return False
        prog = _PROGRAMS[key] = prog.fn
    for n in seq_nodes:
        n.check_saved()
    given = tuple(g for g in root_grads if g.__class__ is not engine.Ones)
    grads = _grad.run_together(seq, live, results, lambda: prog(args, _index(idx), given))
    if q is not None:
        q.streak += 1
        if q.streak == PREFER_AFTER:
            _PREFER_LENS.add(q.n_ops)
    STATS["runs"] += 1
    for n in seq_nodes:
        n.release()
    roots, rest = [], []
    for (fn, nr), g in zip(outside, grads):
        if g is None:
            continue
        if type(fn) is AccumulateGrad:
            fn.variable._store_grad(g)
        else:
            roots.append((fn, nr))
            rest.append(g)
    if roots:
        engine.run_rest(roots, rest)
    else:  # (nodes outside that no gradient reached: released as the engine's)
        if outside_nodes is None:
            ids = {id(n) for n in seq_nodes}
            outside_nodes = [n for n in nodes
                             if type(n) is not AccumulateGrad and id(n) not in ids]
        for n in outside_nodes:
            n.release()
    return True


def _template(seq, nodes, graph, root_slots, root_grads, live, results, item_cls, no_result,
              concrete):
    """(key, program arguments, index array, outside edges, the sequence's nodes in the
    graph, the other non-leaf nodes of the graph); raises _Decline."""
    ops, flat, ext, where = seq.ops, seq.key, seq.ext, seq.where
    n_ops = len(ops)
    args = list(ext)
    avals = [None] * n_ops  # per result its type; None for a split's tuple
    node_of = [None] * n_ops  # per op the node it recorded, when that node is in the graph
    out_of = {}  # (id(node), output nr) -> the result that is that output
    toks = []
    for i, (call, _, a, _b) in enumerate(ops):
        toks.append(flat[a - 1])
        r = results[i]
        if r is no_result:  # a split: its node is its pieces' (output k: item k)
            continue
        lz = r.__dict__.get("_lazy")
        if lz is None:
            raise _Decline  # (its value was replaced: `.data =`)
        av = avals[i] = lz[2]
        if av.weak_type:
            raise _Decline  # (a buffer would make it strongly typed)
        fn = r._grad_fn
        if fn is None or id(fn) not in graph:
            continue
        if call.__class__ is item_cls:
            node_of[~flat[a]] = fn
            out_of[(id(fn), r._output_nr)] = i
        else:
            node_of[i] = fn
            out_of[(id(fn), 0)] = i
    seq_ids = {id(n) for n in node_of if n is not None}
    outside_nodes = []
    for n in nodes:
        if id(n) in seq_ids or type(n) is AccumulateGrad:
            continue
        for e in n._edges:
            if e is not None and id(e[0]) in seq_ids:
                raise _Decline  # (a node outside that takes a gradient from the sequence)
        outside_nodes.append(n)
    # Which reads of earlier results are by index: per class of read (the reading op's kind
    # and input position; a node's spec and saved leaf), one whose reads all lie the same
    # number of ops back is read directly (the tree's Linear reads the cat just before it),
    # any other by index (a cat's inputs). So the template does not depend on the structure.
    first = {}
    dyn = set()
    for i, (_, _, a, b) in enumerate(ops):
        t = toks[i]
        for j, s in enumerate(flat[a:b]):
            if s.__class__ is int:
                if s < 0 and avals[~s] is not None:
                    c = (t, j)
                    if first.setdefault(c, i + s) != i + s:
                        dyn.add(c)
            elif s[0] is None:
                for k, x in enumerate(s[1]):
                    if x.__class__ is int and x < 0 and avals[~x] is not None:
                        c = (t, j, k)
                        if first.setdefault(c, i + x) != i + x:
                            dyn.add(c)
    saved = []
    for i, n in enumerate(node_of):
        if n is None:
            continue
        leaves, tree = _flatten(n._saved)
        saved.append((i, n, leaves, tree))
        spec = n._spec
        for q, x in enumerate(leaves):
            if x.__class__ is _Ref:
                if x.seq is not seq or avals[x.i] is None:
                    raise _Decline
                c = (spec, q)
                if first.setdefault(c, i - x.i) != i - x.i:
                    dyn.add(c)
    reads = []  # per position in idx, the result read there
    dyn_pos = []  # ... and where it is in `flat`: (position, list member or None)
    member_checks = []  # (position, member, source) of a list's members read directly
    buffered = set()  # kinds of call whose results are read by index
    outside = []  # edges leaving the sequence, in order of first use
    out_at = {}
    ext_edges = []  # (op, edge, outside slot or None) of each input read from outside

    def read(c, r, edge, pos):
        if c in dyn:
            reads.append(r)
            dyn_pos.append(pos)
            buffered.add(toks[r])
            return ("r", len(reads) - 1, edge is not None)
        return ("v", r, edge is not None)

    def source(s, edge, c, pos, i, e):
        if s.__class__ is int:
            if s < 0:
                return read(c, ~s, edge, pos)
            if edge is None:
                if e is not None:
                    ext_edges.append((i, e, None))
                return ("x", s, None)
            k = out_at.get((id(edge[0]), edge[1]))
            if k is None:
                k = out_at[(id(edge[0]), edge[1])] = len(outside)
                outside.append(edge)
            ext_edges.append((i, e, k))
            return ("x", s, k)
        return s  # a constant number

    steps = []
    static = []  # the positions of `flat` that every sequence of this template repeats
    for i, (call, _, a, b) in enumerate(ops):
        n = node_of[i]
        edges = n._edges if n is not None and call.__class__ is not item_cls else None
        t = toks[i]
        static.append(a - 1)
        srcs = flat[a:b]
        if len(srcs) == 1 and srcs[0].__class__ is tuple and srcs[0][0] is None:
            # (a list row: its node has an edge per member)
            conv = []
            before = len(dyn_pos)
            for k, x in enumerate(srcs[0][1]):
                conv.append(source(x, None if edges is None else edges[k], (t, 0, k), (a, k),
                                   i, None if edges is None else k))
            if len(dyn_pos) == before:
                static.append(a)
            else:
                member_checks.extend((a, k, x) for k, (x, cv) in enumerate(zip(srcs[0][1], conv))
                                     if cv[0] != "r")
            steps.append((("l", tuple(conv)),))
            continue
        conv = []
        for j, x in enumerate(srcs):
            before = len(dyn_pos)
            conv.append(source(x, edges[j] if edges is not None else None, (t, j), (a + j, None),
                               i, j if edges is not None else None))
            if len(dyn_pos) == before:
                static.append(a + j)
        steps.append(tuple(conv))
    back = []
    seq_nodes = []
    fast = True  # whether later sequences of this template may skip this analysis (_quick)
    for i, n, leaves, tree in saved:
        if results[i] is no_result:
            outs = tuple(out_of[(id(n), k)] for k in range(n._n_out))
        else:
            outs = (i,)
        spec = n._spec
        lsrc = []
        for q, x in enumerate(leaves):
            if x.__class__ is _Ref:
                got = read((spec, q), x.i, None, None)
                fast = fast and got[0] == "v"
                lsrc.append(got[:2])
            elif x.__class__ is concrete and id(x) in where:
                lsrc.append(("x", where[id(x)]))
            else:
                got = _number_source(x, flat, ops[i], ext)
                if got is None:  # another array or number: an argument of its own
                    got = ("x", len(args))
                    args.append(x)
                    fast = False
                lsrc.append(got)
        seq_nodes.append(n)
        back.append((i, spec, outs, tree, tuple(lsrc)))
    # buffers: per result type, the results of the kinds read by index, in order
    groups = {}
    at = [None] * n_ops
    for i in range(n_ops):
        if toks[i] in buffered and avals[i] is not None:
            av = avals[i]
            gk = (av.shape, av.dtype)
            g = groups.get(gk)
            if g is None:
                g = groups[gk] = [len(groups), 0]
            at[i] = (g[0], g[1])
            g[1] += 1
    idx = [at[r][1] for r in reads]
    roots = []
    for (k, nr), g in zip(root_slots, root_grads):
        r = out_of.get((id(nodes[k]), nr))
        if r is None:
            raise _Decline  # (a root outside the sequence)
        roots.append((r, g.key if g.__class__ is engine.Ones else None))
    gtypes = tuple(sorted((v[0], v[1], gk) for gk, v in groups.items()))
    rg = tuple(None if a is None else a[0] for a in (at[r] for r in reads))
    key = _Key((tuple(steps), tuple(at), tuple(back), tuple(roots), tuple(live),
                len(outside), gtypes, rg))
    quick = None
    if fast:
        slot_of = {~r: at[r][1] for r in range(n_ops) if at[r] is not None}
        firsts = {}  # node -> its place in seq_nodes
        for k, n in enumerate(seq_nodes):
            firsts[id(n)] = k
        quick = _Quick()
        quick.key, quick.n_flat, quick.n_nodes = key, len(flat), len(nodes)
        quick.get = itemgetter(*static)
        quick.static = quick.get(flat)
        quick.members = tuple(member_checks)
        quick.dyn = tuple(dyn_pos)
        quick.slot_of = slot_of
        quick.nodes = tuple((out_of[(id(n), 0)] if results[i] is not no_result
                             else out_of[(id(n), 0)], n._spec) for i, n, _, _ in saved)
        quick.bare = tuple(i for i in range(n_ops) if node_of[i] is None
                           and ops[i][0].__class__ is not item_cls
                           and results[i] is not no_result)
        quick.ext_edges = tuple((firsts[id(node_of[i])], e, k) for i, e, k in ext_edges)
        quick.n_out = len(outside)
        quick.roots = tuple(r for r, _ in roots)
        quick.streak = 0  # runs of its program in a row (preferred)
        quick.n_ops = n_ops
    return key, tuple(args), idx, outside, seq_nodes, outside_nodes, quick


def _number_source(x, flat, op, ext):
    """Where a number a node saved comes from among its op's inputs: ("x", i) for ext[i], the
    constant's own source for a constant; None when it is none of them."""
    for src in flat[op[2]:op[3]]:
        if src.__class__ is int:
            if src >= 0 and ext[src] is x:
                return ("x", src)
        elif src[0] is not None and src[1] is x:
            return src
    return None


def _index(idx):
    """The index array (int32: a result's slot in its buffer)."""
    import numpy as np
    return np.asarray(idx, np.int32)


def _program(key, ops, args, idx, root_grads):
    """The template's program (kept), or None while it compiles on engine's background
    thread (the usual path runs meanwhile)."""
    # (the ops' pure rows: equal tokens are equal rows, so any sequence of the template has
    # the same ones)
    fn = _make(key.k, [p for _, p, _, _ in ops])
    prog = _programs.program(fn, _ident(key.k, ops))
    if len(_PROGRAMS) >= _MAX:
        _PROGRAMS.clear()
    STATS["programs"] += 1
    given = tuple(g for g in root_grads if g.__class__ is not engine.Ones)
    if engine.BACKGROUND and getattr(prog, "_program", None) is not None:
        # (traced and lowered here; XLA's compile on the thread, as the fused backward's. A
        # plain jax.jit, the program cache off, compiles at its first call instead)
        work = _programs.compile_ahead(prog, (args, _index(idx), given))
        _PROGRAMS[key] = engine._compiling[0] = engine._Compiling(prog, work)
        return None
    _PROGRAMS[key] = prog
    return prog


def _ident(key, ops):
    """The program cache's name of a template: per op its row's compiled call's name (as a
    sequence program's, _deferred_programs._ident) and its sources, per node its backward's
    name; None when one has none."""
    steps, at, back, roots, live, n_out, gtypes, rg = key
    names = []
    for (call, _, _, _), srcs in zip(ops, steps):
        prog = getattr(call, "_program", None)
        if prog is None:
            return None
        names.append((prog.ident, srcs))
    nodes = []
    for i, spec, outs, tree, lsrc in back:
        if spec.ident is None:
            return None
        nodes.append((i, spec.ident, outs, str(tree), lsrc))
    return _programs.ident_of("template", tuple(names), at, tuple(nodes), roots, live, n_out,
                              tuple((g, n, gk[0], str(gk[1])) for g, n, gk in gtypes), rg)


def _make(key, pures):
    """The pure forward-and-backward of a template."""
    steps, at, back, roots, live, n_out, gtypes, rg = key
    n_ops = len(steps)

    def edge_sources(i):  # an op's sources in the order of its node's edges
        srcs = steps[i]
        return srcs[0][1] if len(srcs) == 1 and srcs[0][0] == "l" else srcs

    def fwd_bwd(args, idx, given):
        vals = [None] * n_ops
        bufs = {g: jnp.zeros((n,) + gk[0], gk[1]) for g, n, gk in gtypes}

        def get(s):
            c = s[0]
            if c == "x":
                return args[s[1]]
            if c == "v":
                return vals[s[1]]
            if c == "r":
                return lax.dynamic_index_in_dim(bufs[rg[s[1]]], idx[s[1]], keepdims=False)
            if c == "l":
                return tuple(get(x) for x in s[1])
            return s[1]  # a constant number (class, value)

        for i in range(n_ops):
            out = vals[i] = pures[i](*[get(s) for s in steps[i]])
            if at[i] is not None:
                g, k = at[i]
                bufs[g] = lax.dynamic_update_index_in_dim(bufs[g], out, k, 0)
        # gradients: per result a direct one (its direct readers' and the roots'), and for the
        # results read by index one in a buffer like the values'
        direct = [None] * n_ops
        cbufs = {g: jnp.zeros_like(b) for g, b in bufs.items()}
        given_it = iter(given)
        for r, ones in roots:
            ct = jnp.ones(*ones) if ones is not None else next(given_it)
            direct[r] = ct if direct[r] is None else direct[r] + ct
        outs = [None] * n_out
        for i, spec, outs_r, tree, lsrc in reversed(back):
            cts = []
            for r in outs_r:
                c = direct[r]
                if at[r] is not None:
                    g, k = at[r]
                    b = cbufs[g][k]
                    c = b if c is None else c + b
                cts.append(c)
            if all(c is None for c in cts):
                continue
            saved = _unflatten(tree, [get(s) for s in lsrc])
            grads = spec.pure(saved, tuple(cts))
            srcs = edge_sources(i)
            for e_idx, gr in zip(spec.edge_of, grads):
                if gr is None:
                    continue
                s = srcs[e_idx]
                c = s[0]
                if c == "v" and s[2]:
                    r = s[1]
                    direct[r] = gr if direct[r] is None else direct[r] + gr
                elif c == "r" and s[2]:
                    g, p = rg[s[1]], idx[s[1]]
                    cb = cbufs[g]
                    cbufs[g] = lax.dynamic_update_index_in_dim(
                        cb, lax.dynamic_index_in_dim(cb, p, keepdims=False) + gr, p, 0)
                elif c == "x" and s[2] is not None:
                    k = s[2]
                    outs[k] = gr if outs[k] is None else outs[k] + gr
        return tuple(vals[i] for i in live), tuple(outs)

    return fwd_bwd
