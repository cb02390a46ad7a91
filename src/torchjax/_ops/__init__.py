"""The op table. Importing this package registers every row (see _registry.py)."""

from . import (  # noqa: F401  (each module registers its rows on import)
    _internal,
    activation,
    adaptive_pooling,
    attention,
    cholesky_solve,
    complex,
    conv,
    fold,
    histogram,
    indexing,
    linalg,
    loss,
    misc,
    nn,
    normalization,
    padding,
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
    strided,
    structure,
    torch_linalg,
    unpooling,
    unsafe_split,
    vision,
)
from ._registry import OPS, OpDef, op

__all__ = ["OPS", "OpDef", "op"]
