"""nn.functional.bilinear: one einsum plus PyTorch's argument checks."""

from __future__ import annotations

from ..._dispatch import call_op
from ..._tensor import Tensor

__all__ = ["bilinear"]


def _check_bilinear(input1, input2, weight, bias) -> None:
    """PyTorch's argument checks for bilinear, in its order."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and "
                           f"{input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {input1.shape[i]} and {input2.shape[i]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {weight.shape[0]}")
    tensors = {"input1": input1, "input2": input2, "weight": weight}
    if bias is not None:
        tensors["bias"] = bias
    if len({t.dtype for t in tensors.values()}) > 1:
        from ..._inplace_random import _CPP_NAMES  # PyTorch prints the C++ type names here
        got = ", ".join(f"{k}: {_CPP_NAMES[t.dtype.name]}" for k, t in tensors.items())
        raise RuntimeError(f"All tensors must have the same dtype, got {got}")


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None):
    """y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]."""
    _check_bilinear(input1, input2, weight, bias)
    out = call_op("einsum", "...i,oij,...j->...o", (input1, weight, input2))
    return out if bias is None else out + bias
