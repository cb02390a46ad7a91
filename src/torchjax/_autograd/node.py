"""Graph nodes (grad_fn): one per recorded op, plus AccumulateGrad for leaves.

A node knows nothing of Tensor internals: it holds the arrays its backward needs, the edges
to the nodes that produced its inputs, and the version stamps of the tensors PyTorch would
have saved, so that in-place changes to them are caught.
"""

from __future__ import annotations

import weakref

from .._hooks import add_hook
from .._x64 import scoped
from . import anomaly
from .saved_hooks import Packed

# called before every backward (engine.run_backward, a grad_fn called by the user):
# _deferred runs the thread's pending ops, whose results tape nodes may have saved
BEFORE_BACKWARD: list = []

RELEASED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


class Node:
    """Base class of every grad_fn; subclasses are named like PyTorch's (MulBackward0, ...)."""

    __slots__ = ("_spec", "_saved", "_edges", "_versions", "_n_out", "_retained",
                 "_pre_hooks", "_hooks", "_tensor_hooks", "_has_saved", "_released",
                 "__weakref__")

    def __init__(self, spec, saved, edges, versions, n_out=1, has_saved=True):
        self._spec = spec          # BackwardSpec: the jitted and pure backward functions
        self._saved = saved        # tuple: arrays/scalars the backward needs, None elsewhere
        self._edges = edges        # tuple per tensor input: (node, output_nr) or None
        self._versions = versions  # tuple of (counter, version, aval) to verify
        self._n_out = n_out
        self._retained = None      # {output_nr: weakref(tensor)} for retain_grad()
        self._pre_hooks = None
        self._hooks = None
        self._tensor_hooks = None  # {output_nr: {id: hook}}: register_hook on a non-leaf output
        self._has_saved = has_saved
        self._released = False
        if anomaly.STATE.enabled:
            anomaly.remember(self)

    def name(self) -> str:
        """The node's name as PyTorch reports it, e.g. `MulBackward0`."""
        n = type(self).__name__
        # PyTorch's C++-defined nodes (not generated per op) report their namespace
        return "torch::autograd::" + n if n in _CPP_NODES else n

    @property
    def next_functions(self):
        """One (node, input index) pair per input of the op, leading to the next nodes of the
        graph; (None, 0) for inputs that need no gradient.
        """
        return tuple(e if e is not None else (None, 0) for e in self._edges)

    @property
    def metadata(self) -> dict:
        """A dict for user data on the node; torchjax keeps none, so each access gives a new empty
        dict.
        """
        return {}

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) after this node's backward; may return new grad_inputs."""
        self._hooks, handle = add_hook(self._hooks, fn)
        return handle

    def register_prehook(self, fn):
        """fn(grad_outputs) before this node's backward; may return new grad_outputs."""
        self._pre_hooks, handle = add_hook(self._pre_hooks, fn)
        return handle

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    @scoped  # grad_fn(grad) called by the user runs a backward: torchjax's x64 scope
    def __call__(self, *grads):
        """The node's backward on the user's tensors, as PyTorch's grad_fn(grad): a tensor
        per edge (None where no gradient flows), a single one unpacked."""
        from .._tensor import Tensor
        for f in BEFORE_BACKWARD:
            f()
        cts = [g._data if isinstance(g, Tensor) else g for g in grads]
        out = [g if g is None or isinstance(g, Tensor) else Tensor._wrap(g)
               for g in self.apply(cts, retain_graph=True)]
        return out[0] if len(out) == 1 else tuple(out)

    def apply(self, cts, retain_graph: bool):
        """Input cotangents (one per edge, None where no gradient flows) for output cotangents."""
        self.check_saved()
        grads = self._spec.run(self.saved_values(), cts)
        if not retain_graph:
            self.release()
        return grads

    def saved_values(self) -> tuple:
        """The saved tuple, through the unpack hook when it was packed (saved_tensors_hooks)."""
        saved = self._saved
        return saved.values() if saved.__class__ is Packed else saved

    def apply_graph(self, cts):
        """create_graph=True: input gradients as Tensors whose computation is itself recorded
        (cts holds a Tensor or None per output)."""
        if self._spec is not None:
            from .._jax_node import apply_graph
            return apply_graph(self, cts)
        # a node with a hand-written backward: its gradients are constants of the new graph
        from .._tensor import Tensor
        grads = self.apply([None if c is None else c._data for c in cts], retain_graph=True)
        return [None if g is None else Tensor._wrap(g) for g in grads]

    def release(self):
        """Frees the tensors this node saved for backward (as a backward without `retain_graph`
        does); a later backward through it raises.
        """
        if self._has_saved:
            self._saved = None
            self._released = True

    def check_saved(self):
        """Raise PyTorch's errors when the saved values are freed or were changed in place."""
        if self._released:
            raise RuntimeError(RELEASED_MSG)
        for counter, version, aval in self._versions:
            if counter[0] != version:
                describe = f"{_type_name(aval.dtype)} [{', '.join(map(str, aval.shape))}]"
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [{describe}] is at version {counter[0]}; expected "
                    f"version {version} instead. Hint: enable anomaly detection to find the "
                    "operation that failed to compute its gradient, with "
                    "torch.autograd.set_detect_anomaly(True, check_nan=False).")


def _type_name(np_dtype) -> str:
    from .._dtypes import from_jax
    from .._tensor import _TENSOR_TYPE_NAMES
    return "torch." + _TENSOR_TYPE_NAMES.get(from_jax(np_dtype).name, "Tensor")


_node_classes: dict[str, type] = {}


_CPP_NODES = frozenset({"NotImplemented", "Error", "DelayedError", "CopyBackwards",
                         "CopySlices"})


def node_class(name: str) -> type:
    """The Node subclass named like PyTorch's grad_fn class (one per name)."""
    cls = _node_classes.get(name)
    if cls is None:
        cls = _node_classes[name] = type(name, (Node,), {"__slots__": ()})
    return cls


class AccumulateGrad(Node):
    """The node that adds a leaf's incoming gradient into its .grad."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        # (Node.__init__ written out: a leaf's accumulator is made again at every step whose
        # graph reaches it, once no graph holds the last one)
        self._spec = self._saved = None
        self._edges = self._versions = ()
        self._n_out = 1
        self._retained = self._pre_hooks = self._hooks = self._tensor_hooks = None
        self._has_saved = self._released = False
        if anomaly.STATE.enabled:
            anomaly.remember(self)
        self.variable = variable

    @property
    def next_functions(self):
        return ()

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"  # what PyTorch's C++ node reports


def accumulator_of(tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node; the same object while any graph holds it (as in PyTorch)."""
    ref = tensor._acc
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(tensor)
        tensor._acc = weakref.ref(acc)
    return acc


def receive(buf, nr, g):
    """Gradient g arrives for output nr of a node (buf: one slot per output): kept, or listed
    with the others for that output, to be summed in one call when the node runs (one add per
    arriving gradient cost an XLA call each)."""
    prev = buf[nr]
    if prev is None:
        buf[nr] = g
    elif prev.__class__ is list:
        prev.append(g)
    else:
        buf[nr] = [prev, g]


def named_parts(parts):
    """The program cache's names of a backward's parts (spec, *rest): each spec by its own
    ident, None parts kept (a fused backward's leaves); None when a spec has no ident."""
    named = []
    for p in parts:
        if p is None:
            named.append(None)
            continue
        ident = getattr(p[0], "ident", None)
        if ident is None:
            return None
        named.append((ident, *p[1:]))
    return tuple(named)


def list_edges(tensors):
    """The tape edges of a tensor list's members (None where no gradient flows) and their
    requires_grad pattern as bits, first member highest (the key of a list row's spec)."""
    edges = []
    pattern = 0
    for x in tensors:
        pattern <<= 1
        if x._requires_grad:
            fn = x._grad_fn
            edges.append((fn, x._output_nr) if fn is not None else (accumulator_of(x), 0))
            pattern |= 1
        else:
            edges.append(None)
    return edges, pattern
