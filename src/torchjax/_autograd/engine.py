"""The backward engine: iterative (dependency counts and a ready stack), never recursive.

Four ways to run the same plan:
- node by node: each node's backward is one cached jitted call (any graph, hooks, errors);
- fused: when a graph of the same structure has been seen before (a training loop), the
  whole backward runs as one cached XLA program over every node's saved arrays. DESIGN.md
  measured a 20-node replay as one program at ~4x the speed of 20 separate calls. The
  program compiles on another thread while the passes meanwhile run node by node
  (`_Compiling`), so the loop's second step does not wait seconds for it. A process's
  first structure is fused at once, in the foreground (FUSE_FIRST): it is nearly always the
  training step, and its per-node programs would be compiled only to be dropped at step 2.
  Where the structures keep changing (an RL episode per length), a structure waits for its
  fourth sighting, and an unrolled loop is not fused at first sight (_varying, _unrolled).
- batched (opt-in, BATCHED): a plain graph that is not fused yet runs level by level, each
  group of same-kind independent nodes as one vmapped call (batched.py). It makes 2-3x fewer
  XLA calls on a random tree but measured slower than node by node here (its Python per
  group), so it is off by default; docs/performance.md has the figures.
- chains (CHAINS, on): a plain graph that is not fused yet runs chain by chain, each run of
  nodes that feed only the next one program keyed on the chain alone (chains.py): a new
  tree's backward makes one call per tree node instead of three.
Before any of them, a plain graph whose forward is still a pending deferred sequence may run
with it as one program (WITH_FORWARD: _deferred_backward.py).
"""

from __future__ import annotations

import threading

import jax.numpy as jnp
import numpy as np

from .. import _one_off, _programs
from .._linearize import Linearized
from . import anomaly, batched, chains, fused
from .node import BEFORE_BACKWARD, AccumulateGrad, receive
from .saved_hooks import Packed


def _sum(a, b):
    return a + b


_add = _programs.lazy_jit(_sum)

class Ones:
    """The root gradient of backward() on a scalar tensor: ones like its array, made where it
    is used (inside the fused program, or next to the output on its device). Holds the
    tensor: a pending one (_deferred) is not run to make this, its forward may run inside
    the backward's program (_deferred_backward.py)."""

    __slots__ = ("tensor", "key")

    def __init__(self, tensor):
        self.tensor = tensor
        lz = tensor._lazy
        av = tensor._data.aval if lz is None else lz[2]
        self.key = (av.shape, av.dtype)

    @property
    def output(self):
        return self.tensor._data

# Fused graph structures: key -> the fused backward (or its _Compiling).
_seen: dict = {}
# Structures seen but not fused yet: hash of the key -> times seen. By hash, not by key: a
# key holds a tuple per node, and a new tree net's 4096 keys kept ~400k objects alive that
# Python's cyclic GC walked again and again (tree_new: a full collection took 0.34 s, ~30%
# of the step's time over a few hundred steps; docs/performance_eager.md). Two structures
# of one hash only share a count: the earlier fuse compiles the right program.
_counts: dict = {}
_FUSE_AFTER = 2        # fuse a structure the second time it is seen
_FUSE_MAX_NODES = 2000  # larger graphs stay node by node (compile time grows with size)
_SEEN_MAX = 4096       # bound the table so a program with ever-new graphs stays flat
# The first structures a process meets are fused at once (compiled in the foreground): a
# script's first backward is almost always its training step's, which repeats, and one fused
# program compiles faster than the node-by-node programs it replaces (which step 1 would
# compile only to drop them at step 2). A graph that never repeats (a tree net's) pays this
# once per process.
FUSE_FIRST = [1]
# A workload whose structures keep changing (reinforcement learning: an episode's backward
# is over a graph of one policy forward per environment step, so each episode length is a
# new structure) sees most lengths once, some twice by chance, and a fused program for a
# length that never comes again is a trace of the whole graph (~0.75 s for 1000 nodes) and a
# compile (~1.4 s) for nothing. So when many of the last _RECENT passes met a new structure
# (_varying), a structure is fused only at its _FUSE_AFTER_VARYING-th sighting; a loop whose
# structure repeats (a training step) meets no new one and keeps the second-sighting rule.
_RECENT = 16
_FUSE_AFTER_VARYING = 4
_new_passes: list = []  # of the last _RECENT passes: 1 if its structure was new, else 0
# ...and the first structure is not fused at once when it is a loop unrolled (a leaf that
# _UNROLLED nodes use: one use per step of the loop), whose length may change every pass
_UNROLLED = 8
# A plain graph that is not fused (yet) runs level by level with same-kind nodes batched
# (batched.py) rather than node by node. Off: measured slower on this CPU (module docstring).
BATCHED = False
# A plain graph that is not fused (yet) runs chain by chain (chains.py): a chain of nodes that
# each feed only the next is one program keyed on the chain, not on the graph
CHAINS = True


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


def _prune(order, targets):
    """With targets (autograd.grad, backward(inputs=)), PyTorch runs only the nodes on a path
    to one: the order keeps those, and the set says which must run their backward (a target
    with nothing needed below it only receives its gradient)."""
    wanted = {node for node, _ in targets}
    runs = set()
    for node in reversed(order):  # children before their users
        for e in node._edges:
            if e is not None and (e[0] in runs or e[0] in wanted):
                runs.add(node)
                break
    return [n for n in order if n in runs or n in wanted], runs


# f(roots) for each backward about to run (the optimizers' head start, optim/_first_step.py)
GRAPH_HOOKS: list = []
# f(nodes, root_slots, parts, root_grads) -> whether it ran the backward of a plain graph
# together with the thread's pending forward (_deferred_backward.run, set on its import)
WITH_FORWARD: list = [None]

# f() for each backward over a plain graph whose structure was seen before (a repeating
# workload): grad deferral's cool-down, made by new structures, ends there
# (_deferred_grad.repeated)
REPEATED: list = []

# How many backward passes ran in this process: torchjax.compile tells from it whether a
# traced step differentiated inside (its results are then not differentiable again).
RUNS = [0]


def run_backward(roots, root_grads, retain_graph: bool, targets=None):
    """Propagate `root_grads` from `roots` [(node, output_nr)] back through the graph.

    Leaves get their gradient through AccumulateGrad.variable._store_grad(array).
    With `targets` (a dict from (node, output_nr) to a callback), only those receive a
    gradient and nothing else is accumulated; used by autograd.grad and backward(inputs=...).
    """
    RUNS[0] += 1
    for f in GRAPH_HOOKS:
        f(roots)
    nodes = None
    if targets is None and not anomaly.STATE.enabled:
        # (the structure of a graph whose saved values are still pending: the walk reads no
        # value)
        nodes, root_slots, parts = _structure(roots)
        if nodes is not None and not retain_graph and WITH_FORWARD[0] is not None \
                and WITH_FORWARD[0](nodes, root_slots, parts, root_grads):
            return
    for f in BEFORE_BACKWARD:
        f()
    if nodes is not None:
        if _run_fused(nodes, root_slots, parts, root_grads, retain_graph):
            return
        if BATCHED and _one_off.top_level():
            batched.run(nodes, root_slots, parts, fused.topological(parts), root_grads,
                        retain_graph, Arrays.root)
            return
        if CHAINS and _one_off.top_level():
            chains.run(nodes, root_slots, parts, fused.topological(parts), root_grads,
                       retain_graph, Arrays, _FUSE_AFTER_VARYING if _varying() else 2)
            return
    run_nodes(ARRAYS, planned(roots, targets), roots, root_grads, retain_graph, targets)


def run_rest(roots, root_grads):
    """The rest of a backward whose first part ran elsewhere (a pending forward's template
    program, _deferred_template.py): from `roots` [(node, output_nr)] with their gradients
    (arrays), fused or node by node, no graph hooks and no flush (the caller did both)."""
    nodes, root_slots, parts = _structure(roots)
    if nodes is not None and _run_fused(nodes, root_slots, parts, root_grads, False):
        return
    run_nodes(ARRAYS, planned(roots, None), roots, root_grads, False, None)


def planned(roots, targets):
    """The visiting order, and (with targets) the nodes whose backward must run."""
    order = _plan(roots)
    if targets is None:
        return order, None
    return _prune(order, targets)


class Arrays:
    """How run_nodes handles gradients in a plain backward: jax arrays, nothing recorded."""

    @staticmethod
    def root(g):
        if g.__class__ is not Ones:
            return g
        out = g.output
        if out.ndim == 0 and _one_off.top_level():  # a scalar loss: no program for a 1
            return _one_off.to_device(np.ones((), out.dtype), out)
        return jnp.ones_like(out)

    add = staticmethod(_add)
    add_all = staticmethod(batched.sum_all)

    @staticmethod
    def apply(node, cts, retain_graph):
        return node.apply(cts, retain_graph)

    @staticmethod
    def store(tensor, g):
        tensor._store_grad(g)

    @staticmethod
    def to_tensor(g):
        from .._tensor import Tensor
        return None if g is None else Tensor._wrap(g)

    @staticmethod
    def from_tensor(t):
        return None if t is None else t._data


ARRAYS = Arrays


def _tensor_hooks(mode, hooks, ct):
    """A tensor's register_hook hooks, in order, each seeing (and maybe replacing) the grad."""
    for hook in tuple(hooks.values()):
        res = hook(mode.to_tensor(ct))
        if res is not None:
            new = mode.from_tensor(res)
            name = getattr(hook, "__name__", repr(hook))
            if new.shape != ct.shape:
                raise RuntimeError(f"hook '{name}' has changed the size of value")
            if new.dtype != ct.dtype:
                raise RuntimeError(f"hook '{name}' has changed the type of value (was "
                                   f"{mode.to_tensor(ct).type()} got {res.type()})")
            ct = new
    return ct


def _node_hooks(mode, hooks, *args):
    """Run grad_fn hooks with tuples of Tensors; the last non-None result replaces args[0]."""
    first = args[0]
    for hook in tuple(hooks.values()):
        res = hook(*(tuple(mode.to_tensor(g) for g in a) for a in (first,) + args[1:]))
        if res is not None:
            first = [mode.from_tensor(r) for r in res]
    return first


def run_nodes(mode, plan, roots, root_grads, retain_graph, targets):
    """The node-by-node backward, in PyTorch's hook order: tensor hooks, captured gradients,
    retained .grad, grad_fn pre-hooks, the backward, grad_fn post-hooks. `mode` says what a
    gradient is (Arrays here; Tensors recorded on the tape for create_graph)."""
    order, runs = plan
    # per node and output: None, one gradient, or a list of them summed when the node runs
    # (in one call: mode.add_all), rather than one add per arriving gradient
    buffers: dict = {}
    for (node, nr), g in zip(roots, root_grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._n_out
        receive(buf, nr, mode.root(g))
    for node in order:
        cts = buffers.pop(node, None)
        if cts is None:
            cts = [None] * node._n_out
        else:
            for nr, c in enumerate(cts):
                if c.__class__ is list:
                    cts[nr] = mode.add_all(c)
        if type(node) is AccumulateGrad:
            _leaf(mode, node, cts[0], targets)
            continue
        if node._tensor_hooks is not None:
            for nr, hooks in node._tensor_hooks.items():
                if hooks and cts[nr] is not None:
                    cts[nr] = _tensor_hooks(mode, hooks, cts[nr])
        if targets is not None:
            for nr, ct in enumerate(cts):
                cb = targets.get((node, nr))
                if cb is not None and ct is not None:
                    cb(ct)
        # a retained .grad is filled by autograd.grad too, also on a target itself (as in
        # PyTorch, where retain_grad is a hook on the tensor)
        if node._retained is not None:
            for nr, ref in node._retained.items():
                t = ref()
                if t is not None and cts[nr] is not None:
                    mode.store(t, cts[nr])
        if runs is not None and node not in runs:
            continue
        if node._pre_hooks:
            cts = list(_node_hooks(mode, node._pre_hooks, cts))
        edges = node._edges
        if all(c is None for c in cts):
            grads = (None,) * len(edges)
        elif anomaly.STATE.enabled:
            grads = apply_checked(mode, node, cts, retain_graph)
        else:
            grads = mode.apply(node, cts, retain_graph)
        if node._hooks:
            grads = _node_hooks(mode, node._hooks, grads, cts)
        for e, g in zip(edges, grads):
            if e is None or g is None:
                continue
            child, nr = e
            buf = buffers.get(child)
            if buf is None:
                buf = buffers[child] = [None] * child._n_out
            receive(buf, nr, g)


def _leaf(mode, node, ct, targets):
    """A leaf's AccumulateGrad: tensor hooks, capture, node pre-hooks, .grad, post-hooks."""
    if ct is None:
        return
    v = node.variable
    if v._hooks:
        ct = _tensor_hooks(mode, v._hooks, ct)
    if targets is not None:
        cb = targets.get((node, 0))
        if cb is not None:
            cb(ct)
        return
    if node._pre_hooks:
        ct = _node_hooks(mode, node._pre_hooks, [ct])[0]
    mode.store(v, ct)
    if node._hooks:
        _node_hooks(mode, node._hooks, [], [ct])


def apply_checked(mode, node, cts, retain_graph):
    """node's backward under anomaly mode: name the forward line of a failing node."""
    try:
        grads = mode.apply(node, cts, retain_graph)
    except Exception:
        anomaly.warn_forward_stack(node)
        raise
    anomaly.check_grads(node, grads)
    return grads


def _structure(roots):
    """One walk over the graph: its nodes (in discovery order) and a key for its structure.

    The key holds each node's backward spec and its edges as indices into the node list, so
    two graphs with equal keys run the same fused program. None when the graph cannot be
    fused (hooks, retained grads, custom Functions, freed buffers); such graphs run node by
    node (run_nodes), every other one fused or batched (batched.py).
    """
    index: dict = {}
    nodes = []
    for node, _ in roots:
        if node not in index:
            index[node] = len(nodes)
            nodes.append(node)
    parts = []
    i = 0
    while i < len(nodes):
        n = nodes[i]
        i += 1
        if type(n) is AccumulateGrad:
            v = n.variable
            if v._hooks or v._post_acc_hooks or n._hooks or n._pre_hooks:
                return None, None, None
            parts.append(None)
            continue
        # (a Linearized spec belongs to one traced call: never a program of its own)
        if (n._spec is None or n._spec.__class__ is Linearized or n._retained is not None
                or n._hooks or n._pre_hooks or n._tensor_hooks is not None or n._released
                or n._saved.__class__ is Packed):
            return None, None, None
        edges = []
        for e in n._edges:
            if e is None:
                edges.append(None)
                continue
            child = e[0]
            k = index.get(child)
            if k is None:
                k = index[child] = len(nodes)
                nodes.append(child)
            edges.append((k, e[1]))
        parts.append((n._spec, n._n_out, tuple(edges)))
    return nodes, tuple((index[n], nr) for n, nr in roots), tuple(parts)


class _Compiling:
    """A fused backward whose XLA compile runs on another thread. XLA's compile releases the
    GIL, so on a second core it costs the training loop nothing: the backward passes meanwhile
    run node by node, on programs the first pass already compiled. Tracing and lowering stay
    on the calling thread, under the JAX configuration in force there (x64, devices)."""

    __slots__ = ("fn", "thread")

    def __init__(self, fn, work):
        self.fn = fn
        self.thread = threading.Thread(target=self._compile, args=(work,),
                                       name="torchjax-fused-backward")  # (named in _compile_stats)
        # not a daemon: the interpreter waits for it at exit rather than tearing XLA down
        # under a running compile (at most one runs at a time, see _run_fused)
        self.thread.start()

    @staticmethod
    def _compile(work):
        try:
            work()  # fills fn's caches: the next call of fn reuses the program
        except Exception:  # noqa: BLE001  (the next call of fn compiles again, and raises)
            pass


# Compile a fused backward on another thread (above) rather than stall the step that meets a
# structure the second time: the CNN's fused program takes seconds, the node-by-node pass
# about a millisecond per node. Off where tests need the fused program used at once.
BACKGROUND = True
_compiling: list = [None]  # the _Compiling in progress: one at a time


def root_parts(root_grads):
    """(per root the shape key of an implicit (ones) gradient, else None; the gradients
    given), a fused program's key part and arguments. One loop, not two generators: every
    fused backward passes here."""
    if len(root_grads) == 1:
        g = root_grads[0]
        return ((g.key,), ()) if g.__class__ is Ones else ((None,), (g,))
    implicit, given = [], []
    for g in root_grads:
        if g.__class__ is Ones:
            implicit.append(g.key)
        else:
            implicit.append(None)
            given.append(g)
    return tuple(implicit), tuple(given)


def _run_fused(nodes, root_slots, parts, root_grads, retain_graph) -> bool:
    """Run the graph (_structure's walk) as one cached XLA program; False when this structure
    is not fused (yet)."""
    if len(nodes) > _FUSE_MAX_NODES:
        return False
    if sum(type(n) is not AccumulateGrad for n in nodes) <= 1:
        return False  # one node is its own fused program: no second compile of the same work
    # implicit (ones) root gradients are made inside the program: only their shape is keyed
    implicit, given = root_parts(root_grads)
    key = (root_slots, implicit, parts)
    fn = _seen.get(key)
    first = fn is None and FUSE_FIRST[0] > 0 and _one_off.top_level()
    if first:
        FUSE_FIRST[0] -= 1
        first = not _unrolled(parts)
    if first:
        fn = _seen[key] = _compile_fused(key)
    elif fn is None:
        h = hash(key)
        count = _counts.get(h, 0) + 1
        _note_pass(count == 1)
        if count < (_FUSE_AFTER_VARYING if _varying() else _FUSE_AFTER):
            if len(_counts) >= _SEEN_MAX:
                _counts.clear()
            _counts[h] = count
            return False
        _counts.pop(h, None)
        for f in REPEATED:
            f()
        # (inside a JAX trace, torchjax.compile's, the fused backward is part of the traced
        # step and its arrays are tracers: nothing to compile apart)
        if BACKGROUND and _one_off.top_level():
            busy = _compiling[0]
            if busy is not None and busy.thread.is_alive():
                _counts[h] = count - 1  # counted again next time
                return False
            fn = _compile_fused(key)
            prog, args = fn.prepare(tuple(n._saved for n in nodes
                                          if type(n) is not AccumulateGrad))
            # (traced and lowered here, or found in the program cache and loaded at the
            # next call; only XLA's compile goes to the thread)
            _seen[key] = _compiling[0] = _Compiling(
                fn, _programs.compile_ahead(prog, (args, given)))
            return False
        fn = _seen[key] = _compile_fused(key)
    else:
        _note_pass(False)
        for f in REPEATED:
            f()
        if fn.__class__ is _Compiling:
            if fn.thread.is_alive():
                return False
            fn = _seen[key] = fn.fn
    saved = []
    leaves = []
    for n in nodes:
        if type(n) is AccumulateGrad:
            leaves.append(n)
        else:
            n.check_saved()
            saved.append(n._saved)
    leaf_grads = fn(tuple(saved), given)
    if not retain_graph:
        for n in nodes:
            if type(n) is not AccumulateGrad:
                n.release()
    for n, g in zip(leaves, leaf_grads):
        if g is not None:
            n.variable._store_grad(g)
    return True


def _note_pass(new):
    if len(_new_passes) >= _RECENT:
        del _new_passes[0]
    _new_passes.append(1 if new else 0)


def _varying() -> bool:
    """Whether over a quarter of the last _RECENT backward passes (4 at least) met a
    structure never seen before. A training loop meets none, an RL loop over half: its
    episode lengths repeat by chance (lengths of 10-60 steps, often), so "most" missed it."""
    n = len(_new_passes)
    return n >= 4 and 4 * sum(_new_passes) > n


def _unrolled(parts) -> bool:
    """Whether a leaf of the structure is used by _UNROLLED nodes or more: the graph of a
    loop (one use per iteration), whose iteration count may change from pass to pass."""
    uses: dict = {}
    for p in parts:
        if p is not None:
            for e in p[2]:
                if e is not None and parts[e[0]] is None:
                    n = uses[e[0]] = uses.get(e[0], 0) + 1
                    if n >= _UNROLLED:
                        return True
    return False


def _compile_fused(key):
    return fused.Fused(key)
