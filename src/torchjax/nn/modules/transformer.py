"""Transformer and its encoder/decoder stacks and layers.

PyTorch's inference fast paths (fused kernels, nested tensors for padded batches) compute
the same math as the layers' Python code, which is what runs here in every mode; padding
masks just mask (PyTorch's nested-tensor path also zeroes the encoder's output at padded
positions).
"""

from __future__ import annotations

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]

import copy
import warnings

from ... import _creation
from .. import functional as F
from .. import init
from .._functional.attention import _canonical_mask, _none_or_dtype
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """(sz, sz) float mask: -inf above the diagonal, 0 elsewhere."""
    return _creation.full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(diagonal=1)


def _get_seq_len(src, batch_first):
    if src.dim() == 2:
        return src.size(0)
    return src.size(1 if batch_first else 0)


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """is_causal when given; otherwise whether mask equals the causal mask of its size."""
    if is_causal is not None or mask is None:
        return is_causal is True
    sz = size if size is not None else mask.size(-2)
    causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
    return mask.size() == causal.size() and bool((mask == causal).all())


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class Transformer(Module):
    """An encoder-decoder transformer ("Attention Is All You Need"); custom_encoder and
    custom_decoder replace the default stacks."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None) -> None:
        factory = dict(device=device, dtype=dtype)
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                      batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*layer_args, **factory), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*layer_args, **factory), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        """Applies the Transformer layer to `src` and `tgt` (see the class description). Call the
        module (`m(x)`), not `forward`, so hooks run.
        """
        is_batched = src.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if is_batched and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """The causal mask for a sequence of length sz: -inf above the diagonal, 0 on and
        below it."""
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)


def _why_no_nested_tensor(layer) -> str:
    """Why PyTorch would not use nested tensors for a stack of these layers ("" if it would):
    the reason it prints in its enable_nested_tensor warning."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    attn = layer.self_attn
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not attn.batch_first:
        return (f"{name}.self_attn.batch_first was not True(use batch_first for better "
                "inference performance)")
    if not attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """num_layers copies of encoder_layer, then norm (if given)."""

    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why_not}", stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """Applies the TransformerEncoder layer to `src` (see the class description). Call the
        module (`m(x)`), not `forward`, so hooks run.
        """
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(mask), "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        seq_len = _get_seq_len(src, self.layers[0].self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """num_layers copies of decoder_layer, then norm (if given)."""

    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        """Applies the TransformerDecoder layer to `tgt` and `memory` (see the class description).
        Call the module (`m(x)`), not `forward`, so hooks run.
        """
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual connection and a
    LayerNorm (after the residual, or before the block with norm_first)."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None) -> None:
        factory = dict(device=device, dtype=dtype)
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        # PyTorch's fused kernel takes relu (1) or gelu (2); kept for code that reads it
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        """Applies the TransformerEncoderLayer layer to `src` (see the class description). Call the
        module (`m(x)`), not `forward`, so hooks run.
        """
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's memory, then a feed-forward block, each
    with a residual connection and a LayerNorm (after, or before with norm_first)."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None) -> None:
        factory = dict(device=device, dtype=dtype)
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = (_get_activation_fn(activation) if isinstance(activation, str)
                           else activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        """Applies the TransformerDecoderLayer layer to `tgt` and `memory` (see the class
        description). Call the module (`m(x)`), not `forward`, so hooks run.
        """
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask,
                                    memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)
