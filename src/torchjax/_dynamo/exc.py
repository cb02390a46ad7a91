"""torch._dynamo.exc: the error fullgraph=True raises at a graph break."""

from ..compiler._breaks import Unsupported

__all__ = ["Unsupported"]
