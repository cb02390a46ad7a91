"""PyTorch's messages for an op call that failed inside its compiled program: the row's own
explanation when it has one, else a broadcast error worded as PyTorch words it. Kept apart from
_dispatch.py, whose hot path never reaches here."""

from __future__ import annotations

from ._pure import _T
from ._tensor import Tensor


def _explain(prep, dyn, stat, err):
    """Re-raise a failed op with PyTorch's message when the row can explain it."""
    explain = prep.op.explain
    if explain is not None:
        kw = dict(zip(prep.names, dyn))
        kw.update(zip(prep.op.statics, stat))
        explain(**kw)  # raises PyTorch's error when it recognises the mistake
    shapes = [tuple(v._data.shape) for k, v in zip(prep.kinds, dyn)
              if k == _T and isinstance(v, Tensor)]
    msg = str(err).lower()
    if len(shapes) >= 2 and ("broadcast" in msg or "incompatible shapes" in msg):
        _explain_broadcast(shapes)
    raise err


def _explain_broadcast(shapes):
    a, b = shapes[0], shapes[1]
    for i in range(1, max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else 1
        db = b[-i] if i <= len(b) else 1
        if da != db and da != 1 and db != 1:
            raise RuntimeError(f"The size of tensor a ({da}) must match the size of tensor b "
                               f"({db}) at non-singleton dimension {max(len(a), len(b)) - i}")
