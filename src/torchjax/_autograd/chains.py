"""The backward of a graph seen for the first time, chain by chain.

Why: a graph whose structure is new every step (a tree net over a new random tree per
sample) never reaches the fused backward (engine._run_fused), whose program is keyed on the
whole structure, so it ran one XLA call per node. Its nodes come in short chains, though:
each internal node of a tree is tanh <- Linear <- cat, and the tanh's and the Linear's
backwards each feed exactly one node, which nothing else feeds. Such a chain runs as ONE
program keyed on the chain alone (its nodes' backward specs and how their edges lead into
the chain or out of it), never on the graph: every tree, whatever its shape, reuses the same
chain program, and its backward makes one XLA call per tree node instead of three.

A chain continues from a node to its child when the node has exactly one edge to a node
that is not a leaf and that child has no other incoming edge (its whole gradient comes from
the chain); at most MAX_NODES nodes. The chain runs where its first node comes in the
backward order (every node after all its users: the chain's other nodes have their only user
inside it, and the nodes its gradients go to come later). Its program returns the gradients
leaving it, one per outgoing edge; they are added up per node and output as node by node.

A chain's program is made the second time its key is seen (often within one graph: a tree
has 31 of them) and kept in torchjax's program cache; until then its nodes run one by one.
Only plain graphs come here (engine._structure: no hooks, retained grads, custom Functions
or saved-tensor hooks); run_nodes handles everything else.
"""

from __future__ import annotations

from .. import _programs
from .node import named_parts, receive

MAX_NODES = 8
_PROGRAMS_MAX = 1024  # (each program keeps a few memory maps, PITFALLS.md)
_programs_by_key: dict = {}
_seen: dict = {}
STATS = {"chains": 0, "programs": 0}  # for tests: chains run by their program, programs made


def _chains(order, parts, root_slots):
    """[(node indices of a chain, its key, its outgoing edges (node index, output nr))]."""
    users = [0] * len(parts)
    for i, _ in root_slots:  # a root receives its own gradient: it only ever starts a chain
        users[i] += 1
    inner = [None] * len(parts)  # the child a node's chain continues to, as its edge
    for p in parts:
        if p is not None:
            for e in p[2]:
                if e is not None:
                    users[e[0]] += 1
    for i, p in enumerate(parts):
        if p is None:
            continue
        found = None
        for e in p[2]:
            if e is not None and parts[e[0]] is not None:
                if found is not None:
                    found = None
                    break
                found = e
        else:
            if found is not None and users[found[0]] == 1:
                inner[i] = found
    taken = [False] * len(parts)
    chains = []
    for i in order:
        if parts[i] is None or taken[i]:
            continue
        members = [i]
        j = i
        while inner[j] is not None and len(members) < MAX_NODES:
            j = inner[j][0]
            taken[j] = True
            members.append(j)
        key = []
        outs = []
        for k, m in enumerate(members):
            spec, n_out, edges = parts[m]
            nxt = inner[m] if k + 1 < len(members) else None
            where = []
            for e in edges:
                if e is None:
                    where.append(None)
                elif e is nxt:
                    where.append((True, e[1]))  # into the next node of the chain
                else:
                    where.append((False, len(outs)))
                    outs.append(e)
            key.append((spec, n_out, tuple(where)))
        chains.append((members, tuple(key), outs))
    return chains


def _make(key):
    """One program running a chain's backwards in order: (saved per node, the first node's
    output gradients) -> the gradients leaving the chain."""
    n_outs = sum(1 for _, _, where in key for w in where if w is not None and not w[0])

    def chain(saved, cts):
        outs = [None] * n_outs
        for k, (spec, _, where) in enumerate(key):
            if all(c is None for c in cts):
                break
            grads = spec.pure(saved[k], tuple(cts))
            cts = None
            for e_idx, g in zip(spec.edge_of, grads):
                w = where[e_idx]
                if w is None or g is None:
                    continue
                if w[0]:
                    cts = [None] * key[k + 1][1]
                    cts[w[1]] = g
                else:
                    outs[w[1]] = g
            if cts is None:
                break
        return tuple(outs)

    named = named_parts(key)
    return _programs.program(chain, named and _programs.ident_of("chain backward", named))


def _program(key, after=2):
    """The chain's program once its key has been met `after` times (engine passes more while
    the graphs keep changing: an RL episode's stack-and-sum chain, met twice in one pass for
    the policy's and the value's losses, was a trace per episode length)."""
    prog = _programs_by_key.get(key)
    if prog is not None:
        return prog
    if len(key) < 2:
        return None  # one node: its own backward program already
    n = _seen.get(key, 0) + 1
    if n < after:
        if len(_seen) >= 4 * _PROGRAMS_MAX:
            _seen.clear()
        _seen[key] = n
        return None
    _seen.pop(key, None)
    if len(_programs_by_key) >= _PROGRAMS_MAX:
        _programs_by_key.clear()
    prog = _programs_by_key[key] = _make(key)
    STATS["programs"] += 1
    return prog


def run(nodes, root_slots, parts, order, root_grads, retain_graph, mode, after=2):
    """The backward of a plain graph (engine._structure's walk), chain by chain; `mode` is
    engine.Arrays (the root gradients, sums and stores); a chain gets its program at its
    `after`-th sighting."""
    bufs: dict = {}

    def arrive(i, nr, g):
        buf = bufs.get(i)
        if buf is None:
            p = parts[i]
            buf = bufs[i] = [None] * (1 if p is None else p[1])
        receive(buf, nr, g)

    for (i, nr), g in zip(root_slots, root_grads):
        arrive(i, nr, mode.root(g))
    heads = {members[0]: (members, key, outs) for members, key, outs in _chains(order, parts, root_slots)}
    for i in order:
        cts = bufs.pop(i, None)
        if cts is None:
            continue
        for nr, c in enumerate(cts):
            if c.__class__ is list:
                cts[nr] = mode.add_all(c)
        if parts[i] is None:
            if cts[0] is not None:
                mode.store(nodes[i].variable, cts[0])
            continue
        chain = heads.get(i)
        if chain is None:
            continue  # a chain member: run with its chain
        members, key, outs = chain
        prog = _program(key, after)
        if prog is None:
            grads = _by_node(nodes, members, parts, cts, retain_graph)
        else:
            saved = []
            for m in members:
                n = nodes[m]
                n.check_saved()
                saved.append(n._saved)
            grads = prog(tuple(saved), tuple(cts))
            STATS["chains"] += 1
            if not retain_graph:
                for m in members:
                    nodes[m].release()
        for e, g in zip(outs, grads):
            if g is not None:
                arrive(e[0], e[1], g)


def _by_node(nodes, members, parts, cts, retain_graph):
    """A chain's outgoing gradients, its nodes run one by one (no program yet)."""
    outs = []
    for k, m in enumerate(members):
        node = nodes[m]
        edges = parts[m][2]
        nxt = None
        if all(c is None for c in cts):
            grads = (None,) * len(edges)
        else:
            grads = node.apply(cts, retain_graph)
        last = k + 1 == len(members)
        for e, g in zip(edges, grads):
            if e is None:
                continue
            if not last and parts[e[0]] is not None and e[0] == members[k + 1]:
                nxt = [None] * parts[e[0]][1]
                nxt[e[1]] = g
            else:
                outs.append(g)
        cts = nxt if nxt is not None else [None]
    return outs

