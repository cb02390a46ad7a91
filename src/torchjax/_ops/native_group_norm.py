"""Op-table row: torch.native_group_norm, group_norm's output with the per-(sample, group)
mean and 1/std PyTorch returns beside it. The three share PyTorch's NativeGroupNormBackward0
node, whose formula reads only the output's gradient: the statistics pass none back."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._registry import OPS, op


@op(tensors=("input", "weight", "bias"), promote="none", function=True, method=False,
    grad="NativeGroupNormBackward0")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(group_norm(input, group, weight, bias, eps), mean (N, group), rstd (N, group))."""
    if input.size != N * C * HxW:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    out = OPS["group_norm"].fn(input, group, weight, bias, eps)
    x = jax.lax.stop_gradient(input)
    x = x.astype(jnp.float32) if x.dtype in (jnp.float16, jnp.bfloat16) else x
    g = x.reshape(N, group, -1)
    mean = jnp.mean(g, axis=-1)
    rstd = jax.lax.rsqrt(jnp.mean(jnp.square(g - mean[..., None]), axis=-1) + eps)
    return out, mean.astype(input.dtype), rstd.astype(input.dtype)
