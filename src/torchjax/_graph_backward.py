"""backward with create_graph=True: the backward pass itself is recorded on the tape.

The engine's node loop (_autograd/engine.run_nodes) with gradients as Tensors: every node's
backward runs as a recorded op (see _jax_node.apply_graph) with grad mode on, so the
gradients it produces can be differentiated again.
"""

from __future__ import annotations

from ._autograd.engine import BEFORE_BACKWARD, Ones, planned, run_nodes
from ._autograd.grad_mode import enable_grad


class Tensors:
    """Gradients as Tensors that carry their own graph."""

    @staticmethod
    def root(g):
        from ._creation import ones_like
        from ._tensor import Tensor
        if g.__class__ is Ones:
            return ones_like(Tensor._wrap(g.output))
        return g

    @staticmethod
    def add(a, b):
        return a + b

    @staticmethod
    def add_all(gs):
        total = gs[0]
        for g in gs[1:]:
            total = total + g
        return total

    @staticmethod
    def apply(node, cts, retain_graph):
        grads = node.apply_graph(cts)
        if not retain_graph:
            node.release()
        return grads

    @staticmethod
    def store(tensor, g):
        tensor._store_grad_graph(g)

    @staticmethod
    def to_tensor(g):
        return g

    @staticmethod
    def from_tensor(t):
        return t


def run_backward_graph(roots, root_grads, retain_graph: bool, targets=None):
    """Like engine.run_backward; root_grads are Tensors (or Ones), targets' callbacks and
    leaves receive Tensors."""
    # (as engine.run_backward: a pending sequence runs first, so that no saved value is
    # still a reference to a result it has not computed (_deferred_grad.Ref); the second
    # call of a repeated double backward, a gradient penalty's, met one)
    for f in BEFORE_BACKWARD:
        f()
    with enable_grad():
        run_nodes(Tensors, planned(roots, targets), roots, root_grads, retain_graph, targets)
