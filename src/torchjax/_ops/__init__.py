"""The op table. Importing this package registers every row (see _registry.py)."""

from . import (  # noqa: F401  (each module registers its rows on import)
    _internal,
    activation,
    complex,
    indexing,
    linalg,
    nn,
    pointwise,
    reduction,
    scatter,
    shape,
    sorting,
    special,
    spectral,
    structure,
    torch_linalg,
)
from ._registry import OPS, OpDef, op

__all__ = ["OPS", "OpDef", "op"]
