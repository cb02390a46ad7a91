"""A pure JAX function as one tape node: its backward is JAX's own vjp.

Two users: the public bridge that turns a jax function into a torchjax op, and
create_graph=True, where each node's backward is itself such a function (of the node's saved
values and the incoming gradients) recorded on the tape, so gradients of gradients work to
any order: the backward of a JaxSpec node is again a pure function of arrays.
"""

from __future__ import annotations

import jax.numpy as jnp

from . import _programs
from ._autograd.grad_mode import STATE
from ._autograd.node import accumulator_of, node_class


def _inexact(x) -> bool:
    # by JAX's dtype tree, not numpy's kind: bfloat16 and the float8 types have kind "V"
    dt = getattr(x, "dtype", None)
    return dt is not None and jnp.issubdtype(dt, jnp.inexact)


class JaxSpec:
    """The backward of fn(*leaves) -> tuple of arrays, with respect to the leaves in `diff`,
    in the interface the engine expects of a node's spec (pure, jit, edge_of, run)."""

    # ident: what names this backward for the program cache (None: it is not named)
    __slots__ = ("fn", "pure", "jit", "edge_of", "n_edges", "slots", "ident", "__weakref__")

    def __init__(self, fn, diff: tuple, n_leaves: int, ident: str | None = None):
        self.fn = fn
        self.edge_of = diff
        self.n_edges = n_leaves
        self.slots = tuple((i, -1, i) for i in diff)

        def pure(saved, cts):
            args = list(saved)

            def g(*d):
                a = list(args)
                for i, v in zip(diff, d):
                    a[i] = v
                return fn(*a)

            return vjp_of_inexact(g, [args[i] for i in diff], cts)

        from ._pure import pytorch_complex_convention, vjp_of_inexact
        self.pure = pytorch_complex_convention(pure)
        # named (the program cache) when fn is: its backward is fixed by fn and diff
        self.ident = ident and _programs.ident_of("from_jax backward", ident, diff, n_leaves)
        self.jit = _programs.program(self.pure, self.ident)

    def run(self, saved, cts):
        from ._view_grad import run_spec
        return run_spec(self, saved, cts)


_SPECS: dict = {}
_FORWARDS: dict = {}


def _spec(fn, diff, n, ident=None):
    key = (fn, diff, n)
    spec = _SPECS.get(key)
    if spec is None:
        spec = _SPECS[key] = JaxSpec(fn, diff, n, ident)
    return spec


def _forward(fn, ident=None):
    f = _FORWARDS.get(fn)
    if f is None:
        f = _FORWARDS[fn] = _programs.program(fn, ident)
    return f


def record(fn, leaves: tuple, edges: tuple, name: str, reach=None, ident=None, outs=None):
    """Run fn(*leaves) (a tuple of arrays out) as one jitted call; when grad mode is on and
    some leaf has an edge, record a node named `name` whose backward is fn's vjp.

    `reach[k][i]` (optional) says output k depends on leaf i, instead of JAX's derivative:
    a compiled forward passes its traced tape's answer, on which a zero derivative (sign,
    floor) still links an output to its input, as eager's nodes do.

    `fn` must be a stable object (cached, not a fresh lambda per call): it keys the compile
    caches. `ident` names fn's program for the program cache (None: a plain jax.jit); `outs`
    holds fn's outputs when the caller already ran it.
    Returns the output Tensors (a tuple, like fn's result)."""
    from ._tensor import Tensor

    if outs is None:
        outs = _forward(fn, ident)(*leaves)
    diff = tuple(i for i, e in enumerate(edges) if e is not None)
    node = None
    if diff and STATE.grad_enabled:
        deps = ([[row[i] for i in diff] for row in reach] if reach is not None
                else _dependence(fn, leaves, diff))
        # As PyTorch's derivative formulas do, keep only the inputs some output really depends
        # on (x * 2's gradient does not depend on x): outputs that depend on none of them do
        # not require grad, and the node holds no edge it would only send zeros along.
        used = [any(row[j] for row in deps) for j in range(len(diff))]
        if any(used):
            edges = tuple(e if i not in diff or used[diff.index(i)] else None
                          for i, e in enumerate(edges))
            diff = tuple(i for i, u in zip(diff, used) if u)
            spec = _spec(fn, diff, len(leaves), ident)
            node = node_class(name)(spec, tuple(leaves), tuple(edges), (), len(outs))
    res = []
    for k, o in enumerate(outs):
        t = Tensor._wrap(o)
        if node is not None and _inexact(o) and any(deps[k]):
            t._requires_grad = True
            t._grad_fn = node
            t._output_nr = k
        res.append(t)
    return tuple(res)


_DEPS: dict = {}


def _dependence(fn, leaves, diff):
    """deps[k][d]: output k of fn depends differentiably on leaf diff[d] (cached per function,
    differentiated leaves and leaf types)."""
    key = (fn, diff, tuple((getattr(a, "shape", None), getattr(a, "dtype", type(a)))
                           for a in leaves))
    deps = _DEPS.get(key)
    if deps is None:
        from ._dependence import dependence

        def g(*xs):
            args = list(leaves)
            for i, x in zip(diff, xs):
                args[i] = x
            return list(fn(*args))
        deps = _DEPS[key] = dependence(g, [leaves[i] for i in diff])
    return deps


def edge_of(t):
    """The graph edge a tensor's gradient flows along, or None when it needs none."""
    if not t._requires_grad:
        return None
    fn = t._grad_fn
    return (fn, t._output_nr) if fn is not None else (accumulator_of(t), 0)


# -- create_graph: a node's backward as a recorded JaxSpec node --------------------------------

_GRAPH_FNS: dict = {}


def _layout(saved) -> tuple:
    """The shape of a node's saved tuple: None, a value, or a tuple with None holes."""
    out = []
    for a in saved:
        if a is None:
            out.append(None)
        elif isinstance(a, tuple):
            out.append(tuple(x is not None for x in a))
        else:
            out.append(True)
    return tuple(out)


def _backward_fn(spec, layout, ct_mask):
    """fn(*saved leaves, *given cotangents) -> the spec's gradients; one per structure."""
    key = (spec, layout, ct_mask)
    fn = _GRAPH_FNS.get(key)
    if fn is not None:
        return fn

    def fn(*leaves):
        it = iter(leaves)
        saved = []
        for slot in layout:
            if slot is None:
                saved.append(None)
            elif slot is True:
                saved.append(next(it))
            else:
                saved.append(tuple(next(it) if present else None for present in slot))
        cts = tuple(next(it) if present else None for present in ct_mask)
        return tuple(spec.pure(tuple(saved), cts))

    _GRAPH_FNS[key] = fn
    return fn


def apply_graph(node, cts):
    """The node's input gradients as Tensors recorded on the tape (create_graph=True).

    `cts` holds a Tensor or None per output of the node. The backward becomes a JaxSpec node
    over the node's saved values (linked to the graph where they came from: the node's input
    edges, or the node itself for a saved result) and the incoming gradients."""
    node.check_saved()
    spec = node._spec
    saved = node.saved_values()
    eager = getattr(spec, "eager", None)
    if eager is not None:  # a node that kept its forward's residuals (_residuals.py): a
        # second derivative must see the forward again, so differentiate it from the inputs
        spec, saved = eager, saved[:-1]
    layout = _layout(saved)
    leaves, where = [], {}
    for i, a in enumerate(saved):
        if a is None:
            continue
        if isinstance(a, tuple):
            for j, x in enumerate(a):
                if x is not None:
                    where[(i, j)] = len(leaves)
                    leaves.append(x)
        else:
            where[(i, -1)] = len(leaves)
            leaves.append(a)
    edges = [None] * len(leaves)
    for i, j, e in spec.slots:
        k = where.get((i, j))
        if k is not None and _inexact(leaves[k]):
            edges[k] = (node, 0) if e == SELF else node._edges[e]
    ct_mask = tuple(c is not None for c in cts)
    for c in cts:
        if c is not None:
            leaves.append(c._data)
            edges.append(edge_of(c))
    fn = _backward_fn(spec, layout, ct_mask)
    grads = record(fn, tuple(leaves), tuple(edges), type(node).__name__ + "Backward")
    res = [None] * len(node._edges)
    for e, g in zip(spec.edge_of, grads):
        res[e] = g
    return res


SELF = -1  # a slot whose value is the node's own (saved) result
