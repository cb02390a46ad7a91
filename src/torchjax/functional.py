"""torchjax.functional: torch.functional, the module where PyTorch defines some of torch's
functions in Python (einsum, split, norm, meshgrid, stft, unique, ...). Each name here is the
torchjax function of the same name, so `torch.functional.einsum is torch.einsum`.

Nothing in torchjax imports this module, so it is first imported after the package has
finished importing, when these names exist on it.
"""

from __future__ import annotations

from . import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    cdist,
    chain_matmul,
    einsum,
    istft,
    lu,
    meshgrid,
    norm,
    pca_lowrank,
    split,
    stft,
    svd_lowrank,
    tensordot,
    unique,
    unique_consecutive,
    unravel_index,
)

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
           "cartesian_prod", "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu",
           "norm", "meshgrid", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot",
           "unique", "unique_consecutive", "unravel_index"]
