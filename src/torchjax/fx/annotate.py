"""torch.fx.annotate.annotate: give a traced value's node a type."""

from __future__ import annotations

from .proxy import Proxy

__all__ = ["annotate"]


def annotate(val, type):
    """Sets the type of a traced value's node (shown in the graph and the generated code)."""
    if isinstance(val, Proxy):
        if val.node.type:
            raise RuntimeError(f"Tried to annotate a value that already had a type on it! "
                               f"Existing type is {val.node.type} and new type is {type}. "
                               f"This could happen if you tried to annotate a function "
                               f"parameter value (in which case you should use the type slot "
                               f"on the function signature) or you called annotate on the same "
                               f"value twice")
        val.node.type = type
    return val
