"""nn.functional attention functions that are not single rows of the op table.

scaled_dot_product_attention checks its arguments and draws the dropout mask around the row
_scaled_dot_product_attention_math (one tape node). multi_head_attention_forward is PyTorch's
composite: projections, mask merging and attention, with the helpers PyTorch's modules share
(_canonical_mask, _none_or_dtype).
"""

from __future__ import annotations

import math
import warnings

import jax.numpy as jnp
import numpy as np

from ... import _dtypes, _sampling
from ..._dispatch import FUNCTIONS as _F
from ..._ops.attention import check_sdpa_inputs, gqa_repeats
from ..._tensor import Tensor
from ..._x64 import scope
from .. import functional as F

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward", "_canonical_mask",
           "_none_or_dtype", "_mha_shape_check", "_in_projection_packed", "_in_projection"]


# -- scaled_dot_product_attention ----------------------------------------------------------------

def _dropout_mask(query, key, value, dropout_p, enable_gqa):
    """A keep-mask of the attention weights' shape, True with probability 1 - dropout_p; None
    when the shapes do not combine (the row then raises PyTorch's error)."""
    rep_k, _ = gqa_repeats(query._data, key._data, value._data, enable_gqa)
    kbatch = tuple(key.shape[:-2])
    if rep_k > 1:
        kbatch = kbatch[:-1] + (kbatch[-1] * rep_k,)
    try:
        batch = np.broadcast_shapes(tuple(query.shape[:-2]), kbatch)
    except ValueError:
        return None
    shape = batch + (query.shape[-2], key.shape[-2])
    return Tensor._wrap(_sampling.draw("bernoulli", shape, _dtypes.bool, None, 1.0 - dropout_p))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, *, scale=None, enable_gqa=False):
    """softmax(query @ key^T * scale + mask) @ value, with dropout on the weights when
    dropout_p > 0. A bool attn_mask is True where attention is allowed, a float one is added;
    is_causal masks with a top-left aligned lower triangle."""
    for i, (name, t) in enumerate((("query", query), ("key", key), ("value", value))):
        if not isinstance(t, Tensor):
            raise TypeError(f"scaled_dot_product_attention(): argument '{name}' (position "
                            f"{i + 1}) must be Tensor, not {type(t).__name__}")
    check_sdpa_inputs(query._data, key._data, value._data,
                      None if attn_mask is None else attn_mask._data)
    drop = None
    if dropout_p > 0:
        if dropout_p > 1:
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got "
                               f"{_sampling.fmt(dropout_p)}")
        drop = _dropout_mask(query, key, value, dropout_p, enable_gqa)
    return _F["_scaled_dot_product_attention_math"](
        query, key, value, attn_mask, float(dropout_p), bool(is_causal), drop, scale=scale,
        enable_gqa=bool(enable_gqa))[0]


# -- masks ---------------------------------------------------------------------------------------

def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A float mask unchanged; a bool mask as an additive one of target_type (-inf where
    True)."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != _dtypes.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      "same type for both instead.", stacklevel=3)
    if is_float:
        return mask
    with scope():  # target_type may be float64
        return Tensor._wrap(jnp.where(mask._data, -jnp.inf, 0).astype(target_type.np))


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the input is batched, after PyTorch's checks of the input and mask ranks."""
    qd, kd, vd = query.dim(), key.dim(), value.dim()
    if qd not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{qd}-D query tensor")
    batched = qd == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if kd != qd or vd != qd:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {qd}-D but "
                             f"found {kd}-D and {vd}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != qd - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{qd - 1}-D but found {key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or "
                                 f"3-D but found {attn_mask.dim()}-D tensor instead")
        if not batched and attn_mask.dim() == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
    return batched


# -- projections ---------------------------------------------------------------------------------

def _in_projection_packed(q, k, v, w, b=None):
    """q, k and v projected by the three stacked blocks of w (and b). Self-attention (q, k, v
    the same tensor) runs one product, encoder-decoder attention (k is v) two."""
    e = q.size(-1)
    if k is v:
        if q is k:
            return list(F.linear(q, w, b).chunk(3, dim=-1))
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        return [F.linear(q, w_q, b_q), *F.linear(k, w_kv, b_kv).chunk(2, dim=-1)]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return [F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)]


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """q, k and v projected by their own weights, checked to map onto q's embedding size."""
    eq, ek, ev = q.size(-1), k.size(-1), v.size(-1)
    for what, t, shape in (("query weights", w_q, (eq, eq)), ("key weights", w_k, (eq, ek)),
                           ("value weights", w_v, (eq, ev)), ("query bias", b_q, (eq,)),
                           ("key bias", b_k, (eq,)), ("value bias", b_v, (eq,))):
        if t is not None and tuple(t.shape) != shape:
            raise AssertionError(f"expecting {what} shape of {shape}, but got {t.shape}")
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


# -- multi_head_attention_forward ----------------------------------------------------------------

def _check_attn_mask_shape(attn_mask, bsz, num_heads, tgt_len, src_len):
    """attn_mask as a 3-D (1 or bsz * num_heads, L, S) mask."""
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                               f"be {(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
        raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                           f"{(bsz * num_heads, tgt_len, src_len)}.")
    return attn_mask


def _static_kv(static, bsz, num_heads, head_dim, which):
    if static.size(0) != bsz * num_heads:
        raise AssertionError(f"expecting static_{which}.size(0) of {bsz * num_heads}, but got "
                             f"{static.size(0)}")
    if static.size(2) != head_dim:
        raise AssertionError(f"expecting static_{which}.size(2) of {head_dim}, but got "
                             f"{static.size(2)}")
    return static


def _heads(x, bsz, num_heads, head_dim):
    """(S, N, E) -> (N * num_heads, S, head_dim)."""
    return x.reshape(x.shape[0], bsz * num_heads, head_dim).transpose(0, 1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention of (L, N, E) query over (S, N, E) key and value (or unbatched
    (L, E), (S, E)): (output, attention weights averaged over heads or per head, or None)."""
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        # scaled_dot_product_attention applies the causal mask itself
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        b_q, b_k, b_v = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight,
                                 b_q, b_k, b_v)

    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
        attn_mask = _check_attn_mask_shape(attn_mask, bsz, num_heads, tgt_len, src_len)

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _F["cat"]([k, bias_k.repeat(1, bsz, 1)])
        v = _F["cat"]([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    q = _heads(q, bsz, num_heads, head_dim)
    k = _heads(k, bsz, num_heads, head_dim) if static_k is None else _static_kv(
        static_k, bsz, num_heads, head_dim, "k")
    v = _heads(v, bsz, num_heads, head_dim) if static_v is None else _static_kv(
        static_v, bsz, num_heads, head_dim, "v")

    if add_zero_attn:
        k = _F["cat"]([k, k.new_zeros((bsz * num_heads, 1, head_dim))], dim=1)
        v = _F["cat"]([v, v.new_zeros((bsz * num_heads, 1, head_dim))], dim=1)
        attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask, (0, 1))

    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(
            -1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        weights, out = _attention_with_weights(q, k, v, attn_mask, dropout_p, is_causal)
        out = out.transpose(0, 1)
    else:
        weights = None
        out = _attention_sdpa(q, k, v, attn_mask, dropout_p, is_causal, bsz, num_heads,
                              tgt_len, head_dim)
    # (L, N, ...) order, one row per (target position, batch entry)
    out = out.reshape(tgt_len * bsz, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    if weights is not None:
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
    if not batched:
        out = out.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return out, weights


def _attention_with_weights(q, k, v, attn_mask, dropout_p, is_causal):
    """The (N * heads, L, S) weights and (N * heads, L, head_dim) output, with a plain softmax
    (a fully masked row gives NaN, as in PyTorch's need_weights path)."""
    if is_causal and attn_mask is None:
        raise AssertionError("FIXME: is_causal not implemented for need_weights")
    q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
    if attn_mask is not None:
        weights = _F["baddbmm"](attn_mask, q_scaled, k.transpose(-2, -1))
    else:
        weights = _F["bmm"](q_scaled, k.transpose(-2, -1))
    weights = F.softmax(weights, dim=-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    return weights, _F["bmm"](weights, v)


def _attention_sdpa(q, k, v, attn_mask, dropout_p, is_causal, bsz, num_heads, tgt_len,
                    head_dim):
    """The output through scaled_dot_product_attention on (N, heads, L, head_dim), as
    (L, N, heads, head_dim)."""
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, attn_mask.size(-1))
    src_len = k.size(1)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    return out.permute(2, 0, 1, 3)
