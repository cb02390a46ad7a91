"""Op-table row: torch.hash_tensor (and Tensor.hash_tensor), the xor of the elements' 64-bit
patterns (floats as float64, integers and bools as int64), over all dims or `dim`, as uint64."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._registry import op
from .torch_linalg import _name


@op(promote="none", differentiable=False)
def hash_tensor(input, dim=None, *, keepdim=False, mode=0):
    """The xor reduction of input's elements bitcast to uint64 (mode 0, the only one)."""
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if jnp.iscomplexobj(input):
        raise NotImplementedError(f"\"xor_sum_cpu\" not implemented for '{_name(input)}'")
    if dim is None:
        if input.size == 0:
            raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        dims = tuple(range(input.ndim))
    else:
        dims = tuple(d % input.ndim for d in ((dim,) if isinstance(dim, int) else dim))
        for d in dims:
            if input.shape[d] == 0:
                raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero "
                                 f"size.")
    wide = jnp.float64 if jnp.issubdtype(input.dtype, jnp.floating) else jnp.int64
    bits = jax.lax.bitcast_convert_type(input.astype(wide), jnp.uint64)
    out = jax.lax.reduce(bits, jnp.uint64(0), jax.lax.bitwise_xor, dims)
    if keepdim:
        out = jnp.expand_dims(out, dims)
    return out
