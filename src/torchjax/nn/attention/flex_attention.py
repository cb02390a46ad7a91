"""torch.nn.attention.flex_attention: attention whose scores a Python function modifies
(`score_mod`) and whose pattern a Python predicate masks (`mask_mod`, through a BlockMask).

PyTorch calls those functions under vmap, once per (batch, head, query, key) position, on
0-d tensors. Here they are called once, on the whole score matrix and on index tensors shaped
to broadcast against it (batch (B,1,1,1), head (1,H,1,1), query (1,1,L,1), key (1,1,1,S)):
the element-wise arithmetic, comparisons, `torch.where` and tensor indexing those functions
are written with give the same values either way. The attention is then computed as
PyTorch's unfused path does (the whole score matrix; a query that may attend to no key gets
zeros), with autograd through it. A BlockMask keeps its mask_mod and answers the block-level
questions (to_dense, sparsity); XLA, not the blocks, decides how the product is computed.
"""

from __future__ import annotations

import inspect
import math
import operator
import warnings
from typing import NamedTuple

from ... import _creation, _dtypes
from ..._stacklevel import user_stacklevel

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions",
           "create_block_mask", "create_mask", "or_masks", "and_masks", "noop_mask"]

FlexKernelOptions = dict  # kernel tuning knobs: accepted, XLA chooses the kernel


class AuxRequest(NamedTuple):
    """Which auxiliary outputs flex_attention(return_aux=...) should compute."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """flex_attention's auxiliary outputs: None unless requested."""

    lse: object = None
    max_scores: object = None


def noop_mask(batch, head, token_q, token_kv):
    """A mask_mod that masks nothing."""
    return batch.new_ones(size=(), dtype=_dtypes.bool, device=batch.device)


def _combined(mask_mods, start: bool, join, name: str):
    """A mask_mod joining mask_mods' results with `join`, starting from `start`."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def mask_mod(b, h, q_idx, kv_idx):
        result = b.new_full((), start, dtype=_dtypes.bool)
        for m in mask_mods:
            result = join(result, m(b, h, q_idx, kv_idx))
        return result
    mask_mod.__name__ = name
    return mask_mod


def and_masks(*mask_mods):
    """A mask_mod true where all of mask_mods are."""
    return _combined(mask_mods, True, operator.and_, "and_mask")


def or_masks(*mask_mods):
    """A mask_mod true where any of mask_mods is."""
    return _combined(mask_mods, False, operator.or_, "or_mask")


def _indices(B, H, L, S, device):
    """The batch, head, query and key index tensors, shaped to broadcast to (B, H, L, S)."""
    def ramp(n, axis):
        shape = [1, 1, 1, 1]
        shape[axis] = n
        return _creation.arange(n, device=device).reshape(shape)
    return ramp(B, 0), ramp(H, 1), ramp(L, 2), ramp(S, 3)


def _is_score_mod(fn) -> bool:
    try:
        return len(inspect.signature(fn).parameters) == 5
    except (TypeError, ValueError):
        return False


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """The dense (B, H, Q_LEN, KV_LEN) boolean mask of a mask_mod (or, for a score_mod, where
    it leaves a zero score finite). B or H None: 1."""
    B, H = B or 1, H or 1
    b, h, m, n = _indices(B, H, Q_LEN, KV_LEN, device)
    if _is_score_mod(mod_fn):
        out = mod_fn(_creation.zeros(B, H, Q_LEN, KV_LEN, device=device), b, h, m, n)
        return ~out.isneginf()
    return mod_fn(b, h, m, n).broadcast_to((B, H, Q_LEN, KV_LEN))


class BlockMask:
    """A mask_mod over a (B, H, Q_LEN, KV_LEN) attention, seen in BLOCK_SIZE tiles."""

    def __init__(self, mask_mod, shape, BLOCK_SIZE, dense):
        self.mask_mod = mask_mod
        self.shape = tuple(shape)
        self.seq_lengths = self.shape[2:]
        self.BLOCK_SIZE = BLOCK_SIZE
        self._dense = dense  # (B, H, q blocks, kv blocks) int32: 1 where a tile has a True

    def to_dense(self):
        """Which tiles have any position to attend to: (B, H, q blocks, kv blocks), int32."""
        return self._dense

    def sparsity(self) -> float:
        """The percentage of the attention matrix that falls in tiles with nothing to attend."""
        computed = int(self._dense.sum()) * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - computed / math.prod(self.shape))

    def to(self, device):
        """A BlockMask on `device` (the tiles move; the mask_mod is a function)."""
        return BlockMask(self.mask_mod, self.shape, self.BLOCK_SIZE, self._dense.to(device))

    def __repr__(self) -> str:
        name = getattr(self.mask_mod, "__name__", repr(self.mask_mod))
        return (f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, "
                f"mask_mod={name})")


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=128,
                      _compile=False, separate_full_blocks=True, compute_dq_write_order=False,
                      dq_kv_order=True):
    """A BlockMask of mask_mod(b, h, q_idx, kv_idx) over B batches and H heads (None: one,
    broadcast over all) of Q_LEN queries and KV_LEN keys."""
    bq, bkv = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else tuple(BLOCK_SIZE)
    B, H = B or 1, H or 1
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    nq, nkv = -(-Q_LEN // bq), -(-KV_LEN // bkv)
    padded = _creation.zeros(B, H, nq * bq, nkv * bkv, dtype=_dtypes.bool, device=device)
    padded[:, :, :Q_LEN, :KV_LEN] = mask
    dense = padded.reshape(B, H, nq, bq, nkv, bkv).any(5).any(3).to(_dtypes.int32)
    return BlockMask(mask_mod, (B, H, Q_LEN, KV_LEN), (bq, bkv), dense)


_LSE_WARNED = [False]


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None,
                   enable_gqa=False, return_lse=False, kernel_options=None, *, return_aux=None):
    """softmax(score_mod(query @ key^T * scale), masked by block_mask's mask_mod) @ value, for
    (B, H, L, E) query and (B, Hkv, S, E) key and value; with return_lse (deprecated) or
    return_aux=AuxRequest(lse=..., max_scores=...) also the row log-sum-exp / maximum."""
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise ValueError("NYI: query, key, and value must be 4D tensors")
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is "
                         "deprecated, please use return_aux=AuxRequest(lse=True) instead.")
    if return_lse and not _LSE_WARNED[0]:
        _LSE_WARNED[0] = True
        warnings.warn("return_lse is deprecated and will be removed in v2.10. Please use "
                      "return_aux=AuxRequest(lse=True) instead.", FutureWarning,
                      stacklevel=user_stacklevel())
    B, Hq, L, E = query.shape
    Hkv, S = key.shape[1], key.shape[2]
    if Hq != Hkv:
        if not enable_gqa:
            raise ValueError(f"Expect query and key/value to have the same number of heads but "
                             f"got Hq={Hq} and Hkv={Hkv}. Try setting enable_gqa=True for GQA.")
        if Hq % Hkv:
            raise ValueError(f"Expect number of query heads to be a multiple of kv heads for "
                             f"GQA but got Hq={Hq} and Hkv={Hkv}.")
        key = key.repeat_interleave(Hq // Hkv, dim=1)
        value = value.repeat_interleave(Hq // Hkv, dim=1)
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * scale
    b, h, q_idx, kv_idx = _indices(B, Hq, L, S, query.device)
    if score_mod is not None:
        scores = score_mod(scores, b, h, q_idx, kv_idx).broadcast_to(scores.shape)
    if block_mask is not None:
        keep = block_mask.mask_mod(b, h, q_idx, kv_idx).broadcast_to(scores.shape)
        scores = scores.masked_fill(~keep, -math.inf)
    lse = scores.logsumexp(-1)
    # a query with nothing to attend to (lse -inf) gets zeros, not NaN
    shift = lse.masked_fill(lse.isneginf(), 0.0)
    out = (scores - shift.unsqueeze(-1)).exp() @ value
    if return_lse:
        return out, lse
    if return_aux is not None:
        return out, AuxOutput(lse=lse if return_aux.lse else None,
                              max_scores=scores.amax(-1) if return_aux.max_scores else None)
    return out
