"""Rows behind torchjax.nn.functional: linear layers (the losses are in loss.py)."""

from __future__ import annotations

import jax.numpy as jnp

from .. import _dtypes
from ._registry import op

_NN = dict(function=False, method=False, namespace="torch.nn.functional")


def _linear_explain(input, weight, bias=None, **_):
    a, w = tuple(input.shape), tuple(weight.shape)
    if len(w) == 2 and a and a[-1] != w[1]:
        rows = 1
        for d in a[:-1]:
            rows *= d
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{a[-1]} and "
                           f"{w[1]}x{w[0]})")


_M_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int"}


def _linear_grad(input, weight, bias=None):
    # PyTorch's linear is addmm / mm on 2-D input and reshapes around them otherwise
    if input.ndim == 2:
        return "AddmmBackward0" if bias is not None else "MmBackward0"
    if bias is not None:
        return "ViewBackward0"
    return "SqueezeBackward4" if input.ndim == 1 else "UnsafeViewBackward0"


@op(tensors=("input", "weight", "bias"), grad=_linear_grad, explain=_linear_explain,
    promote="none", **_NN, saves={"input": ("weight",), "weight": ("input",)})
def linear(input, weight, bias=None):
    """input @ weight.T + bias."""
    if input.dtype != weight.dtype:  # PyTorch does not promote here
        a, b = (_M_NAMES.get(str(d), str(d)) for d in (input.dtype, weight.dtype))
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a} != {b}")
    out = jnp.matmul(input, weight.T)
    if bias is not None:
        bias = jnp.asarray(bias)
        if bias.dtype != out.dtype:
            a, b = (_dtypes.SCALAR_NAMES[_dtypes.from_jax(d).name] for d in (bias.dtype,
                                                                             out.dtype))
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {a} and {b}")
        out = out + bias
    return out

