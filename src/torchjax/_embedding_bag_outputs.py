"""The bookkeeping outputs of torch.embedding_bag (ATen's native form): offset2bag, bag_size
and max_indices, beside the bags' values that F.embedding_bag computes.

They are what PyTorch's CPU kernel leaves in them, which depends on the mode and on its fast
path (mode 'sum' over float32/float16/bfloat16 weights, no padding_idx given):
- offset2bag: the bag of each index; empty on the fast path.
- bag_size: the number of indices per bag that are not padding_idx (mean, max); zeros, one per
  offset, for sum.
- max_indices: for max, the weight row holding each bag's maximum per column (the first on
  ties, 0 for a bag with no index); for mean, bag_size again; zeros like bag_size for sum.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import _dtypes
from ._tensor import Tensor
from ._x64 import scoped

_FAST = (_dtypes.float32, _dtypes.float16, _dtypes.bfloat16)


@scoped
def outputs(weight: Tensor, indices: Tensor, offsets: Tensor, mode: int,
            include_last_offset: bool, padding_idx, fast: bool) -> tuple[Tensor, Tensor, Tensor]:
    """(offset2bag, bag_size, max_indices); `fast`: no padding_idx was given at all."""
    idx, off = indices._data.reshape(-1), offsets._data
    n, itype = idx.shape[0], idx.dtype
    if mode == 0:
        zeros = jnp.zeros(off.shape[0], itype)
        if weight.dtype in _FAST and fast:
            offset2bag = jnp.zeros((0,), itype)
        else:
            offset2bag = _bags(off, n, include_last_offset, itype)
        return Tensor._wrap(offset2bag), Tensor._wrap(zeros), Tensor._wrap(zeros)
    bags = _bags(off, n, include_last_offset, itype)
    nb = off.shape[0] - 1 if include_last_offset else off.shape[0]
    valid = jnp.ones(n, bool) if padding_idx is None else idx != padding_idx
    bag_size = jax.ops.segment_sum(valid.astype(itype), bags, nb)
    if mode == 1:
        return Tensor._wrap(bags), Tensor._wrap(bag_size), Tensor._wrap(bag_size)
    return Tensor._wrap(bags), Tensor._wrap(bag_size), Tensor._wrap(
        _max_rows(weight._data, idx, bags, valid, nb))


def _bags(off, n, include_last_offset, itype):
    starts = off[:-1] if include_last_offset else off
    return (jnp.searchsorted(starts, jnp.arange(n, dtype=off.dtype), side="right") - 1
            ).astype(itype)


def _max_rows(w, idx, bags, valid, nb):
    """Per bag and column, the index (a weight row) of the first maximum among valid entries."""
    rows = jnp.where(valid[:, None], w[idx], -jnp.inf)
    best = jax.ops.segment_max(rows, bags, nb)
    pos = jnp.arange(idx.shape[0])[:, None]
    hit = valid[:, None] & (rows == best[bags])
    first = jax.ops.segment_min(jnp.where(hit, pos, idx.shape[0]), bags, nb)
    return jnp.where(first < idx.shape[0], idx[jnp.minimum(first, idx.shape[0] - 1)], 0
                     ).astype(idx.dtype)
