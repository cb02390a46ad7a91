"""The backward of a graph seen for the first time, level by level, same-kind nodes batched.

A graph whose structure changes every step (a tree net over a new random tree per sample)
never reaches the fused backward (engine._run_fused), and node by node it costs one XLA call
per node plus one per gradient sum. Here the nodes are grouped by their level (the longest
path from a root): two nodes of one level are independent (a path between them would put
them on different levels), so every group of nodes of one level with the same backward
(spec) and the same argument shapes runs as ONE vmapped XLA call. In a tree net every
tree depth's internal nodes make three levels (their tanh, Linear and cat backwards), each
one call, so a 63-node tree's backward is three calls per depth whatever its shape.

The batched program is keyed on (spec, argument shapes, which arguments the members share,
which gradients they all send to one place, batch-size bucket), never on the structure:
random trees reuse the same few programs. Inside it:
- an argument every member holds as the same array (a Linear's weight) is passed once;
- a gradient every member sends to the same input (the weight's) is summed in the program,
  so a shared parameter receives one gradient per group instead of one per node;
- the batch is padded to a power of two with copies of the first member; the copies'
  gradients are masked out (with where, not a product, so an inf cannot make a NaN).

Only plain graphs come here (engine._structure's test: no hooks, no retained grads, no
custom Functions, no saved-tensor hooks); everything else runs engine.run_nodes.

Measured (docs/performance.md, issue 14): on a 32-leaf random tree it makes 46 XLA calls per
backward against 106 node by node, but costs more time on this 2-core CPU, mostly the
Python that forms the groups; engine.BATCHED therefore stays off by default.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _programs
from .rows import Row, Rows, concrete

_SCALARS = (bool, int, float, complex)
_programs_by_key: dict = {}
_PROGRAMS_MAX = 4096  # bound the table (each program keeps a few memory maps, PITFALLS.md)


def _sum_all(*gs):
    total = gs[0]
    for g in gs[1:]:
        total = total + g
    return total


_sum = _programs.lazy_jit(_sum_all)  # one program per count: 2, 4 or _SUM_CHUNK
_SUM_CHUNK = 8


def sum_all(gs):
    """The sum of a list of gradient arrays in few calls: one for up to _SUM_CHUNK of them
    (a pairwise add per gradient costs an XLA call each: 61 of them in a 32-leaf tree).
    Chunks are of 8, 4 or 2 arrays, so a shape has at most three programs: with a chunk per
    count, a leaf whose number of users changes every pass (an RL episode's policy weights,
    one use per step) compiled seven per shape, 29 of reinforce.py's 53 programs."""
    while len(gs) > 1:
        out = []
        k, n = 0, len(gs)
        while k < n:
            m = min(_SUM_CHUNK, n - k)
            if m == 1:
                out.append(gs[k])
            else:
                m = 1 << (m.bit_length() - 1)  # (the largest power of two in it)
                out.append(_sum(*gs[k:k + m]))
            k += m
        gs = out
    return gs[0]


def levels(order, parts):
    """Node indices grouped by longest distance from a root, nearest first (`order` is a
    topological order: every node after all its users)."""
    level = [0] * len(parts)
    for i in order:
        p = parts[i]
        if p is None:
            continue
        below = level[i] + 1
        for e in p[2]:
            if e is not None and level[e[0]] < below:
                level[e[0]] = below
    grouped: dict = {}
    for i in order:
        grouped.setdefault(level[i], []).append(i)
    return [grouped[k] for k in sorted(grouped)]


def _gathered(incoming):
    """One gradient per output from the contributions collected for it (None: none came);
    a single stacked Row stays a Row, a sum needs arrays."""
    out = []
    for gs in incoming:
        if gs is None:
            out.append(None)
        elif len(gs) == 1:
            out.append(gs[0])
        else:
            out.append(sum_all([concrete(g) for g in gs]))
    return out


def _member_key(spec, saved, cts):
    """What must be equal for two nodes to share one batched call: the spec, the saved
    values' structure and avals (a Python scalar by its value: it is passed once), the
    cotangents' avals. (None, None) when a saved value cannot be batched."""
    if any(v.__class__ is tuple for v in saved):  # a tensor-list argument: flatten it
        leaves, tree = jax.tree_util.tree_flatten(saved)
    else:  # the common case, without the pytree machinery (this runs per node)
        leaves = [v for v in saved if v is not None]
        tree = tuple(v is None for v in saved)
    parts = []
    for v in leaves:
        if v.__class__ in _SCALARS:
            parts.append((v.__class__, v))
        else:
            aval = getattr(v, "aval", None)
            if aval is None:
                return None, None
            parts.append(aval)
    ct_avals = tuple(None if c is None else c.aval for c in cts)
    return (spec, tree, tuple(parts), ct_avals), leaves


def _rebuild(tree, leaves):
    """The saved tuple from its leaves (the inverse of _member_key's flattening)."""
    if tree.__class__ is not tuple:
        return jax.tree_util.tree_unflatten(tree, leaves)
    it = iter(leaves)
    return tuple(None if none else next(it) for none in tree)


def _bucket(n):
    b = 1
    while b < n:
        b *= 2
    return b


_MAX_SOURCES = 4  # more stacks feeding one call: pass rows as arrays (the key would vary)


def _make_program(spec, tree, shared, summed, ct_kinds, bucket):
    """The vmapped backward of `bucket` members of one group (see the module docstring).
    ct_kinds per cotangent position: None, "arrays", or the number of source stacks."""
    pure = spec.pure

    def batched(shared_leaves, member_leaves, ct_args, index, n):
        # member_leaves: per member, its non-shared saved leaves; ct_args: per position,
        # None, the members' arrays, or the source stacks (rows picked by `index`)
        stacked = [jnp.stack(xs) for xs in zip(*member_leaves)]
        cts = []
        r = 0
        for kind, arg in zip(ct_kinds, ct_args):
            if kind is None:
                cts.append(None)
            elif kind == "arrays":
                cts.append(jnp.stack(arg))
            else:
                src = arg[0] if kind == 1 else jnp.concatenate(arg)
                cts.append(src[index[r]])
                r += 1

        def one(own, cts1):
            it_shared, it_own = iter(shared_leaves), iter(own)
            leaves = [next(it_shared) if s else next(it_own) for s in shared]
            return pure(_rebuild(tree, leaves), tuple(cts1))

        grads = jax.vmap(one)(stacked, cts)
        keep = jnp.arange(bucket) < n
        out = []
        for g, s in zip(grads, summed):
            if g is None:
                out.append(None)
            elif s:
                mask = keep.reshape((bucket,) + (1,) * (g.ndim - 1))
                out.append(jnp.where(mask, g, jnp.zeros((), g.dtype)).sum(0))
            else:
                out.append(g)
        return tuple(out)

    return _programs.program(batched, None)


def _all_same(values, first, identical):
    for v in values:
        if (v is not first) if identical else (v != first):
            return False
    return True


def _run_group(key, members, parts, cts_of, leaves_of):
    """Per gradient of the group's spec: (summed, array) where summed says the array is the
    sum over members (they all send it to one place), else a (bucket, ...) stack."""
    spec, tree = key[0], key[1]
    first = leaves_of[0]
    shared = tuple(v.__class__ in _SCALARS or _all_same([m[k] for m in leaves_of], v, True)
                   for k, v in enumerate(first))
    edges = [parts[i][2] for i in members]
    summed = tuple(_all_same([es[e] for es in edges], edges[0][e], False)
                   for e in spec.edge_of)
    n = len(members)
    bucket = _bucket(n)
    pad = bucket - n  # padded members copy the first: masked out or never read
    # per cotangent position: None; "arrays" (one per member, stacked in the program); or
    # the Rows stacks the members' rows come from (gathered in the program by `index`)
    columns = list(zip(*cts_of))
    modes = []  # per position: None, "arrays" or the dict of source Rows
    n_sources = 0
    for column in columns:
        c0 = column[0]
        mode = None if c0 is None else "arrays"
        if c0.__class__ is Row:
            sources = {}
            for c in column:
                if c.__class__ is not Row:
                    break
                sources.setdefault(c.rows, None)
            else:
                n_sources += len(sources)
                mode = sources
        modes.append(mode)
    all_arrays = n_sources > _MAX_SOURCES  # (all or none: a partial choice would vary)
    ct_args, kinds, index = [], [], []
    for column, mode in zip(columns, modes):
        if mode is None:
            kinds.append(None)
            ct_args.append(None)
        elif mode == "arrays" or all_arrays:
            kinds.append("arrays")
            column = [concrete(c) for c in column]
            ct_args.append(tuple(column + column[:1] * pad))
        else:
            offsets, at = {}, 0
            for r in mode:
                offsets[r] = at
                at += r.stack.shape[0]
            rows = [offsets[c.rows] + c.m for c in column]
            index.append(rows + rows[:1] * pad)
            kinds.append(tuple(r.stack.aval for r in mode))
            ct_args.append(tuple(r.stack for r in mode))
    pkey = (key, shared, summed, tuple(kinds), bucket)
    fn = _programs_by_key.get(pkey)
    if fn is None:
        if len(_programs_by_key) >= _PROGRAMS_MAX:
            _programs_by_key.clear()
        fn = _programs_by_key[pkey] = _make_program(
            spec, tree, shared, summed,
            tuple(k if k is None or k == "arrays" else len(k) for k in kinds), bucket)
    shared_leaves = tuple(v for v, s in zip(first, shared) if s)
    own = [tuple(v for v, s in zip(m, shared) if not s) for m in leaves_of]
    own += own[:1] * pad
    idx = np.asarray(index, np.int32) if index else None
    return summed, fn(shared_leaves, tuple(own), tuple(ct_args), idx, n)


def run(nodes, root_slots, parts, order, root_grads, retain_graph, root_of):
    """Backward over a plain graph (engine._structure's nodes and parts), level by level.

    `root_of(g)` turns a root gradient (an array or engine.Ones) into an array."""
    incoming = [None] * len(nodes)  # per node: per output, the list of gradients received

    def receive(i, nr, g):
        slot = incoming[i]
        if slot is None:
            p = parts[i]
            slot = incoming[i] = [None] * (1 if p is None else p[1])
        gs = slot[nr]
        if gs is None:
            slot[nr] = [g]
        else:
            gs.append(g)

    for (i, nr), g in zip(root_slots, root_grads):
        receive(i, nr, root_of(g))
    for level in levels(order, parts):
        groups: dict = {}
        for i in level:
            got = incoming[i]
            if got is None:
                continue
            incoming[i] = None
            cts = _gathered(got)
            node = nodes[i]
            if parts[i] is None:  # a leaf's AccumulateGrad
                node.variable._store_grad(concrete(cts[0]))
                continue
            node.check_saved()
            key, leaves = _member_key(node._spec, node._saved, cts)
            if key is None:  # a saved value that cannot be batched: this node alone
                key = (i,)
            g = groups.get(key)
            if g is None:
                groups[key] = ([i], [cts], [leaves])
            else:
                g[0].append(i)
                g[1].append(cts)
                g[2].append(leaves)
        for key, (members, cts_of, leaves_of) in groups.items():
            if len(key) == 1 or (len(members) == 1 and not any(
                    c.__class__ is Row for c in cts_of[0])):
                for i, cts in zip(members, cts_of):  # alone: the node's own backward
                    grads = nodes[i].apply([concrete(c) for c in cts], retain_graph)
                    for e, g in zip(parts[i][2], grads):
                        if e is not None and g is not None:
                            receive(e[0], e[1], g)
                continue
            summed, grads = _run_group(key, members, parts, cts_of, leaves_of)
            for e_idx, s, g in zip(nodes[members[0]]._spec.edge_of, summed, grads):
                if g is None:
                    continue
                if s:
                    e = parts[members[0]][2][e_idx]
                    if e is not None:
                        receive(e[0], e[1], g)
                    continue
                rows = Rows(g)
                for m, i in enumerate(members):
                    e = parts[i][2][e_idx]
                    if e is not None:
                        receive(e[0], e[1], Row(rows, m))
            if not retain_graph:
                for i in members:
                    nodes[i].release()
