"""The op table. Importing this package registers every row (see _registry.py)."""

from . import (  # noqa: F401  (each module registers its rows on import)
    _internal,
    activation,
    indexing,
    linalg,
    nn,
    pointwise,
    reduction,
    shape,
)
from ._registry import OPS, OpDef, op

__all__ = ["OPS", "OpDef", "op"]
