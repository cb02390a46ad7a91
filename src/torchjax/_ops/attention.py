"""Attention rows: the core of scaled_dot_product_attention.

torch.nn.functional.scaled_dot_product_attention (nn/_functional/attention.py) validates its
arguments, draws the dropout mask and calls the row below: PyTorch's math formulation, one
tape node for the whole attention. The row mirrors PyTorch's own
torch._scaled_dot_product_attention_math, whose `dropout_mask` argument makes dropout a pure
function of its inputs.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ._registry import op
from .linalg import _check_matmul, _cpp, _scalar

_HALF = (jnp.float16, jnp.bfloat16)


def check_sdpa_inputs(query, key, value, attn_mask):
    """PyTorch's argument checks of scaled_dot_product_attention (shapes and dtypes only)."""
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            f"Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_cpp(query)} key.dtype: {_cpp(key)} and value.dtype: {_cpp(value)} instead.")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(
            f"Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if attn_mask is not None and attn_mask.dtype not in (jnp.bool_, jnp.float32, query.dtype):
        raise RuntimeError(
            f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_cpp(attn_mask)} and  query.dtype: {_cpp(query)} instead.")
    if not jnp.issubdtype(query.dtype, jnp.floating):
        raise RuntimeError(f"expected scalar type Float but found {_scalar(query)}")


def gqa_repeats(query, key, value, enable_gqa):
    """How many times each key and value head is repeated for grouped-query attention."""
    if not enable_gqa:
        return 1, 1
    if query.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[-{query.ndim}, {query.ndim - 1}], but got -3)")
    hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
    if hq % hk or hq % hv:
        # PyTorch's message ends here
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    return hq // hk, hq // hv


def _add_mask(attn, mask):
    """attn + mask as PyTorch's in-place add: mask broadcasts to attn, never attn to mask."""
    n = max(attn.ndim, mask.ndim)
    a, b = (1,) * (n - attn.ndim) + attn.shape, (1,) * (n - mask.ndim) + mask.shape
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")
    out = tuple(x if y == 1 else y for x, y in zip(a, b))
    if out != attn.shape:
        raise RuntimeError(f"output with shape {list(attn.shape)} doesn't match the broadcast "
                           f"shape {list(out)}")
    return attn + mask.astype(attn.dtype)


def _safe_softmax(x):
    """Softmax over the last dim; a row that is all -inf gives zeros (and zero gradients)
    instead of NaN, as PyTorch's _safe_softmax."""
    dead = jnp.all(x == -jnp.inf, axis=-1, keepdims=True)
    y = jax.nn.softmax(jnp.where(dead, 0, x), axis=-1)
    return jnp.where(dead, 0, y)


def _flash_cpu(query, key, value, attn_mask, dropout_p, enable_gqa):
    """Whether PyTorch's CPU dispatcher picks its fused flash kernel for these arguments
    (only the grad_fn name depends on it: both kernels compute the same math)."""
    if dropout_p != 0 or not query.dim() == key.dim() == value.dim() == 4:
        return False
    if attn_mask is not None and (attn_mask.dim() not in (2, 4) or attn_mask.requires_grad):
        return False
    (b, hq, n_l, e), (bk, hk, n_s, ek), (bv, hv, _, ev) = query.shape, key.shape, value.shape
    same_heads = hq == hk == hv or (enable_gqa and hk == hv and hq % hk == 0)
    return b == bk == bv and same_heads and e == ek == ev and n_l > 0 and n_s > 0


def _sdpa_grad_name(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                    dropout_mask=None, scale=None, enable_gqa=False):
    """The grad_fn PyTorch shows on scaled_dot_product_attention's result on CPU."""
    if _flash_cpu(query, key, value, attn_mask, dropout_p, enable_gqa):
        return "ScaledDotProductFlashAttentionForCpuBackward0"
    if query._data.dtype in _HALF:  # the math kernel computes in float32 and casts back
        return "ToCopyBackward0"
    n = max(query.dim(), key.dim(), value.dim())
    return "MmBackward0" if n == 2 else "UnsafeViewBackward0"


# What PyTorch saves depends on the kernel it picks: the fused CPU kernel keeps its inputs and
# output; the math one scales query and key first (copies) and saves value for the product
# with the attention weights, which require grad when query, key or the mask does; half inputs
# are cast to float32 copies first, so nothing of them is saved.
_FUSED_SAVES = ("query", "key", "value", "result")
_MATH_SAVES = {("query", "key", "attn_mask"): ("value",)}


def _sdpa_saves(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                dropout_mask=None, scale=None, enable_gqa=False):
    if _flash_cpu(query, key, value, attn_mask, dropout_p, enable_gqa):
        return _FUSED_SAVES
    return () if query._data.dtype in _HALF else _MATH_SAVES


@op(tensors=("query", "key", "value", "attn_mask", "dropout_mask"), promote="none",
    method=False, grad=_sdpa_grad_name, saves=_sdpa_saves)
def _scaled_dot_product_attention_math(query, key, value, attn_mask=None, dropout_p=0.0,
                                       is_causal=False, dropout_mask=None, *, scale=None,
                                       enable_gqa=False):
    """softmax(q @ k^T * scale + mask) @ v and the attention weights, PyTorch's math kernel:
    half-precision inputs compute in float32, a bool mask is True where attention is allowed,
    is_causal is a top-left aligned lower-triangular mask, and dropout keeps the weights
    where dropout_mask is True and scales value by 1 / (1 - dropout_p)."""
    check_sdpa_inputs(query, key, value, attn_mask)
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    rep_k, rep_v = gqa_repeats(query, key, value, enable_gqa)
    out_dtype = query.dtype
    ct = jnp.float32 if out_dtype in _HALF else out_dtype
    q, k, v = (x.astype(ct) for x in (query, key, value))
    k = jnp.repeat(k, rep_k, axis=-3) if rep_k > 1 else k
    v = jnp.repeat(v, rep_v, axis=-3) if rep_v > 1 else v
    # both factors carry sqrt(scale), as PyTorch scales q and k before the product
    s = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    root = math.sqrt(abs(s))
    kt = jnp.swapaxes(k * root, -1, -2)
    q = q * (-root if s < 0 else root)
    _check_matmul(q, kt)
    attn = jnp.matmul(q, kt)
    if is_causal:
        n_l, n_s = q.shape[-2], k.shape[-2]
        attn_mask = jnp.tril(jnp.ones((n_l, n_s), jnp.bool_))
    if attn_mask is not None:
        if attn_mask.dtype == jnp.bool_:
            attn_mask = jnp.where(attn_mask, 0, -jnp.inf).astype(out_dtype)
        attn = _add_mask(attn, attn_mask)
    attn = _safe_softmax(attn)
    if dropout_p > 0:
        if dropout_mask is None:
            raise NotImplementedError(
                f"_scaled_dot_product_attention_math: dropout_p={dropout_p} without a "
                "dropout_mask (torch.nn.functional.scaled_dot_product_attention draws one)")
        attn = jnp.where(dropout_mask, attn, 0)
        # at p = 1 every weight is dropped: zeros (PyTorch's kernel would give 0 * inf = NaN)
        v = v * (1 / (1 - dropout_p) if dropout_p < 1 else 0)
    _check_matmul(attn, v)
    return jnp.matmul(attn, v).astype(out_dtype), attn.astype(out_dtype)
