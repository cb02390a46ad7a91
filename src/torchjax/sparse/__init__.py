"""torch.sparse: sparse COO tensors on jax.experimental.sparse (BCOO).

    i = torch.tensor([[0, 1], [1, 0]])
    a = torch.sparse_coo_tensor(i, torch.tensor([2., 3.]), (2, 2))
    torch.sparse.mm(a, torch.ones(2, 3))   # dense (2, 3); gradients reach the dense operand

Only the COO layout exists here (CSR, CSC, BSR and BSC raise); see docs/design.md, "Sparse
tensors", for what is supported and how gradients are kept.
"""

from __future__ import annotations

from . import _layout_ops, _legacy, _methods
from ._construct import sparse_coo_tensor  # noqa: F401  (torchjax.sparse_coo_tensor)
from ._ops import log_softmax, softmax, sum  # noqa: A004
from ._products import addmm, mm, spmm  # noqa: F401  (spmm: torchjax.spmm)

__all__ = ["addmm", "mm", "sum", "softmax", "log_softmax"]

globals().update(_legacy.TYPES)  # torch.sparse.FloatTensor & co.
_methods.install()
_layout_ops.install()
