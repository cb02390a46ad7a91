"""The op table. Importing this package registers every row (see _registry.py)."""

from . import (  # noqa: F401  (each module registers its rows on import)
    _internal,
    activation,
    attention,
    complex,
    conv,
    indexing,
    linalg,
    loss,
    misc,
    nn,
    normalization,
    pointwise,
    pooling,
    reduction,
    rnn,
    scatter,
    shape,
    sorting,
    special,
    spectral,
    statistics,
    structure,
    torch_linalg,
    vision,
)
from ._registry import OPS, OpDef, op

__all__ = ["OPS", "OpDef", "op"]
