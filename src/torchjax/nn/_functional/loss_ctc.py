"""nn.functional.ctc_loss: connectionist temporal classification, with PyTorch's checks of
the lengths and targets (eager mode only, see loss.py)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ..._dispatch import FUNCTIONS as _F
from ..._tensor import Tensor
from ..._x64 import scoped
from .loss import (
    _reduced,
    _reduction,
    _values,
)

__all__ = [
    "ctc_loss",
]


_CTC_WHERE = "(while checking arguments for ctc_loss_allocate_outputs)"


@scoped  # int64 lengths
def _ctc_lengths(lengths, name):
    """Lengths given as a tensor or a sequence of ints, as an int64 tensor."""
    if isinstance(lengths, Tensor):
        if lengths.is_floating_point() or lengths.is_complex():
            raise RuntimeError(f"{name} must be integral")
        return lengths.reshape(-1)
    return Tensor._wrap(jnp.asarray(np.asarray(lengths, dtype=np.int64).reshape(-1)))


def _ctc_checks(log_probs, targets, in_len, tg_len, blank):
    """PyTorch's argument checks of ctc_loss, in its order."""
    if targets.dim() not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional "
                           f"tensor for argument #2 'targets' {_CTC_WHERE}")
    n, n_labels = log_probs.shape[1], log_probs.shape[2]
    if not 0 <= blank < n_labels:
        raise RuntimeError("blank must be in label range")
    if in_len.numel() != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tg_len.numel() != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    tl, il = _values(tg_len), _values(in_len)
    if tl is not None:
        for v in tl:
            if v < 0:
                raise RuntimeError(f"Expected target_lengths to have value at least 0, but got "
                                   f"value {v} {_CTC_WHERE}")
        if targets.dim() == 1 and targets.shape[0] != int(tl.sum()):
            raise RuntimeError(f"Expected tensor to have size {int(tl.sum())} at dimension 0, "
                               f"but got size {targets.shape[0]} for argument #2 'targets' "
                               f"{_CTC_WHERE}")
    if targets.dim() == 2:
        if targets.shape[0] != n:
            raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got size "
                               f"{targets.shape[0]} for argument #2 'targets' {_CTC_WHERE}")
        if tl is not None and tl.size and tl.max() > targets.shape[1]:
            raise RuntimeError(f"Expected tensor to have size at least {tl.max()} at dimension "
                               f"1, but got size {targets.shape[1]} for argument #2 'targets' "
                               f"{_CTC_WHERE}")
    if il is not None:
        for v in il:
            if v < 0:
                raise RuntimeError(f"Expected input_lengths to have value at least 0, but got "
                                   f"value {v} {_CTC_WHERE}")
            if v > log_probs.shape[0]:
                raise RuntimeError(f"Expected input_lengths to have value at most "
                                   f"{log_probs.shape[0]}, but got value {v} {_CTC_WHERE}")


@scoped  # int64 lengths and positions
def _padded_targets(targets, tg_len):
    """Concatenated targets (sum of lengths,) as padded rows (N, longest)."""
    tl = _values(tg_len)
    t = targets._data
    width = int(tl.max()) if tl is not None and tl.size else t.shape[0]
    lengths = tg_len._data.astype(jnp.int64)
    starts = jnp.cumsum(lengths) - lengths
    pos = starts[:, None] + jnp.arange(width)[None, :]
    rows = t[jnp.clip(pos, 0, max(t.shape[0] - 1, 0))] if t.shape[0] else \
        jnp.zeros(pos.shape, t.dtype)
    return Tensor._wrap(jnp.where(jnp.arange(width)[None, :] < lengths[:, None], rows, 0))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification loss of log_probs (T, N, C) or (T, C) against
    padded (N, S) or concatenated targets; mean divides each loss by its target length."""
    reduction = _reduction(reduction)
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        kinds = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in
                          (log_probs, targets, input_lengths, target_lengths))
        raise TypeError(f"ctc_loss() received an invalid combination of arguments - got "
                        f"({kinds}, int, int, bool), but expected one of:")
    in_len = _ctc_lengths(input_lengths, "input_lengths")
    tg_len = _ctc_lengths(target_lengths, "target_lengths")
    batched = log_probs.dim() == 3
    if not batched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0)
    if log_probs.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.dim()}-dimensional "
                           f"tensor for argument #1 'log_probs' {_CTC_WHERE}")
    _ctc_checks(log_probs, targets, in_len, tg_len, blank)
    if targets.dim() == 1:
        targets = _padded_targets(targets, tg_len)
    row = "ctc_loss_zero_infinity" if zero_infinity else "ctc_loss"
    loss = _F[row](log_probs, targets, in_len, tg_len, blank, bool(zero_infinity))
    if reduction == "mean":
        loss = loss / tg_len.clamp_min(1)
    loss = _reduced(loss, reduction)
    return loss if batched or reduction != "none" else loss.squeeze(0)
