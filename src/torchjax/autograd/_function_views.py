"""A custom Function that modifies a view in place (ctx.mark_dirty on a view).

As in PyTorch, the view's base gets a CopySlices node: the base's gradient outside the
view's region passes through, inside it goes through the Function's backward; every live
view of the base then reads from the new base (AsStridedBackward0)."""

from __future__ import annotations

import jax.numpy as jnp

from .._autograd.node import Node
from .._view_grad import regenerate_views
from .._views import read_through, write_through


class _CopySlices(Node):
    __slots__ = ("_fn", "_chain", "_dirty")

    def name(self) -> str:
        return "torch::autograd::CopySlices"  # what PyTorch's C++ node reports

    def apply(self, cts, retain_graph: bool):
        ct = cts[0]
        region = read_through(self._chain, ct)
        grads = self._fn.apply([region], retain_graph)
        g = grads[self._dirty]
        base_grad = write_through(self._chain, ct, g if g is not None else jnp.zeros_like(region))
        return [base_grad] + [g for i, g in enumerate(grads) if i != self._dirty]

    def apply_graph(self, cts):
        raise NotImplementedError(
            "create_graph=True through a custom Function that modifies a view in place "
            "(ctx.mark_dirty on a view) is not supported; pass a clone() of the view instead")


_CopySlices.__name__ = _CopySlices.__qualname__ = "CopySlices"


def rebase_dirty_view(view, fn_node, dirty: int) -> None:
    """Give view's base the CopySlices node for the Function `fn_node` that wrote the view,
    its tensor input number `dirty`."""
    from ._function_apply import _edge
    base = view._base
    edges = (_edge(base),) + tuple(e for i, e in enumerate(fn_node._edges) if i != dirty)
    node = _CopySlices(None, None, edges, (), 1, has_saved=False)
    node._fn, node._chain, node._dirty = fn_node, view._view_chain, dirty
    base._grad_fn = node
    base._output_nr = 0
    base._requires_grad = True
    regenerate_views(base)
