"""The backward engine: iterative (dependency counts and a ready stack), never recursive."""

from __future__ import annotations

import jax

from .node import AccumulateGrad

_add = jax.jit(lambda a, b: a + b)


def _accumulate(buf: list, i: int, g):
    prev = buf[i]
    buf[i] = g if prev is None else _add(prev, g)


def run_backward(roots, root_grads, retain_graph: bool, targets=None):
    """Propagate `root_grads` from `roots` [(node, output_nr)] back through the graph.

    Leaves get their gradient through AccumulateGrad.variable._accumulate_grad(array).
    With `targets` (a dict from (node, output_nr) to a callback), only those receive a
    gradient and nothing else is accumulated; used by autograd.grad and backward(inputs=...).
    """
    # 1. dependency counts over every edge reachable from the roots
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

    # 2. seed the buffers
    buffers: dict = {}
    for (node, nr), g in zip(roots, root_grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._n_out
        _accumulate(buf, nr, g)

    ready = [n for n in buffers if deps.get(n, 0) == 0]
    while ready:
        node = ready.pop()
        cts = buffers.pop(node)
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
            if e is None:
                continue
            child, nr = e
            if g is not None:
                buf = buffers.get(child)
                if buf is None:
                    buf = buffers[child] = [None] * child._n_out
                _accumulate(buf, nr, g)
            d = deps[child] - 1
            deps[child] = d
            if d == 0:
                if child not in buffers:
                    buffers[child] = [None] * child._n_out
                ready.append(child)
