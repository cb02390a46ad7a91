"""Op-table row: torch.nonzero_static (and Tensor.nonzero_static), nonzero with a fixed
number of rows: the first `size` indices of the nonzero elements, padded with fill_value.
Its shape does not depend on the values, so unlike nonzero it traces and compiles."""

from __future__ import annotations

import jax.numpy as jnp

from ._registry import op


@op(promote="none", differentiable=False)
def nonzero_static(input, *, size, fill_value=-1):
    """(size, input.dim()) int64 indices of nonzero elements in row-major order."""
    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    if input.ndim == 0:
        return jnp.zeros((size, 0), jnp.int64)
    idx = jnp.nonzero(input, size=size, fill_value=fill_value)
    return jnp.stack(idx, axis=-1).astype(jnp.int64)
