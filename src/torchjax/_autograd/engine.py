"""The backward engine: iterative (dependency counts and a ready stack), never recursive.

Two ways to run the same plan:
- node by node: each node's backward is one cached jitted call (any graph, hooks, errors);
- fused: when a graph of the same structure has been seen before (a training loop), the
  whole backward runs as one cached XLA program over every node's saved arrays. DESIGN.md
  measured a 20-node replay as one program at ~4x the speed of 20 separate calls.
"""

from __future__ import annotations

import jax

from .node import AccumulateGrad

_add = jax.jit(lambda a, b: a + b)

# Graph structures seen so far: key -> times seen, or the compiled fused backward.
_seen: dict = {}
_FUSE_AFTER = 2        # fuse a structure the second time it is seen
_FUSE_MAX_NODES = 2000  # larger graphs stay node by node (compile time grows with size)
_SEEN_MAX = 4096       # bound the table so a program with ever-new graphs stays flat


def _accumulate(buf: list, i: int, g):
    prev = buf[i]
    buf[i] = g if prev is None else _add(prev, g)


def _plan(roots):
    """Dependency counts over every edge, then the order the ready-stack loop will visit."""
    deps: dict = {}
    seen = set()
    stack = []
    for node, _ in roots:
        if node not in seen:
            seen.add(node)
            stack.append(node)
    while stack:
        node = stack.pop()
        for e in node._edges:
            if e is None:
                continue
            child = e[0]
            deps[child] = deps.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    remaining = dict(deps)
    ready = []
    started = set()
    for node, _ in roots:
        if node not in started and remaining.get(node, 0) == 0:
            started.add(node)
            ready.append(node)
    order = []
    while ready:
        node = ready.pop()
        order.append(node)
        for e in node._edges:
            if e is None:
                continue
            child = e[0]
            d = remaining[child] - 1
            remaining[child] = d
            if d == 0:
                ready.append(child)
    return order


def _fusable(order) -> bool:
    for n in order:
        if type(n) is AccumulateGrad:
            v = n.variable
            if v._hooks or v._post_acc_hooks:
                return False
        elif (n._spec is None or n._retained is not None or n._hooks or n._pre_hooks
              or n._released):
            return False
    return True


def run_backward(roots, root_grads, retain_graph: bool, targets=None):
    """Propagate `root_grads` from `roots` [(node, output_nr)] back through the graph.

    Leaves get their gradient through AccumulateGrad.variable._accumulate_grad(array).
    With `targets` (a dict from (node, output_nr) to a callback), only those receive a
    gradient and nothing else is accumulated; used by autograd.grad and backward(inputs=...).
    """
    order = _plan(roots)
    if targets is None and len(order) <= _FUSE_MAX_NODES and _fusable(order):
        if _run_fused(order, roots, root_grads, retain_graph):
            return
    _run_nodes(order, roots, root_grads, retain_graph, targets)


def _run_nodes(order, roots, root_grads, retain_graph, targets):
    buffers: dict = {}
    for (node, nr), g in zip(roots, root_grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._n_out
        _accumulate(buf, nr, g)
    for node in order:
        cts = buffers.pop(node, None) or [None] * node._n_out
        if targets is not None:
            for nr, ct in enumerate(cts):
                cb = targets.get((node, nr))
                if cb is not None and ct is not None:
                    cb(ct)
        if type(node) is AccumulateGrad:
            if targets is None and cts[0] is not None:
                node.variable._accumulate_grad(cts[0])
            continue
        if node._retained is not None:
            for nr, ref in node._retained.items():
                t = ref()
                if t is not None and cts[nr] is not None:
                    t._accumulate_grad(cts[nr])
        if node._pre_hooks:
            for hook in node._pre_hooks:
                res = hook(cts)
                if res is not None:
                    cts = list(res)
        edges = node._edges
        if all(c is None for c in cts):
            grads = (None,) * len(edges)
        else:
            grads = node.apply(cts, retain_graph)
        if node._hooks:
            for hook in node._hooks:
                hook(grads, cts)
        for e, g in zip(edges, grads):
            if e is None or g is None:
                continue
            child, nr = e
            buf = buffers.get(child)
            if buf is None:
                buf = buffers[child] = [None] * child._n_out
            _accumulate(buf, nr, g)


def _run_fused(order, roots, root_grads, retain_graph) -> bool:
    """Run the plan as one cached XLA program; False when this structure is not fused yet."""
    index = {n: i for i, n in enumerate(order)}
    key = (
        tuple((index[n], nr) for n, nr in roots),
        tuple(None if type(n) is AccumulateGrad else
              (n._spec, n._n_out, tuple(None if e is None else (index[e[0]], e[1])
                                        for e in n._edges)) for n in order),
    )
    fn = _seen.get(key)
    if fn is None or isinstance(fn, int):
        count = (fn or 0) + 1
        if count < _FUSE_AFTER:
            if len(_seen) >= _SEEN_MAX:
                _seen.clear()
            _seen[key] = count
            return False
        fn = _seen[key] = _compile_fused(key)
    saved = []
    for n in order:
        if type(n) is not AccumulateGrad:
            n.check_saved()
            saved.append(n._saved)
    leaf_grads = fn(tuple(saved), tuple(root_grads))
    if not retain_graph:
        for n in order:
            if type(n) is not AccumulateGrad:
                n.release()
    k = 0
    for n in order:
        if type(n) is AccumulateGrad:
            g = leaf_grads[k]
            k += 1
            if g is not None:
                n.variable._accumulate_grad(g)
    return True


def _compile_fused(key):
    root_slots, plan = key

    def fused(saved, root_grads):
        bufs = [None if p is None else [None] * p[1] for p in plan]
        bufs = [b if b is not None else [None] for b in bufs]

        def add(i, nr, g):
            prev = bufs[i][nr]
            bufs[i][nr] = g if prev is None else prev + g

        for (i, nr), g in zip(root_slots, root_grads):
            add(i, nr, g)
        out = []
        k = 0
        for i, p in enumerate(plan):
            if p is None:
                out.append(bufs[i][0])
                continue
            spec, _, edges = p
            cts = bufs[i]
            s = saved[k]
            k += 1
            if all(c is None for c in cts):
                continue
            grads = spec.pure(s, tuple(cts))
            for e_idx, g in zip(spec.edge_of, grads):
                e = edges[e_idx]
                if e is not None and g is not None:
                    add(e[0], e[1], g)
        return tuple(out)

    return jax.jit(fused)
