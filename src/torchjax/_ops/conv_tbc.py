"""Op-table row: torch.conv_tbc (and F.conv_tbc), the 1-d convolution of time-batch-channel
input (T, B, C_in) with a (K, C_in, C_out) weight, padded by `pad` in time. It is the
convolution row's function on the input and weight moved into its layout, under PyTorch's
ConvTbcBackward0 node."""

from __future__ import annotations

import jax.numpy as jnp

from ._registry import OPS, op


@op(tensors=("input", "weight", "bias"), method=False, grad="ConvTbcBackward0")
def conv_tbc(input, weight, bias, pad=0):
    """(T + 2 pad - K + 1, B, C_out): sum over k of input[t + k - pad] @ weight[k], + bias."""
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1 or bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    out = OPS["convolution"].fn(jnp.transpose(input, (1, 2, 0)), jnp.transpose(weight, (2, 1, 0)),
                                bias, (1,), (int(pad),), (1,), False, (0,), 1)
    return jnp.transpose(out, (2, 0, 1))
