"""Op-table row and composite: torch.segment_reduce, a reduction ("sum", "mean", "prod",
"max"/"amax", "min"/"amin") of consecutive segments of data along `axis`, the segments given
by their lengths or offsets (batched over the dims before axis).

Empty segments give `initial` when given, else 0 (sum), 1 (prod), nan (mean), -inf (max)
and inf (min), as PyTorch's; with `initial`, it enters each segment's reduction (mean:
(sum + initial) / length). The maximum's and minimum's gradient is shared among the
elements equal to the result, as PyTorch's."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._registry import function, op

_REDUCE = {"sum": "sum", "mean": "mean", "prod": "prod", "max": "max", "amax": "max",
           "min": "min", "amin": "min"}


def _one(data, lengths, reduce, initial):
    """The reduction of data (N, ...) over segments of the given lengths (S,)."""
    s = lengths.shape[0]
    n = data.shape[0]
    ids = jnp.searchsorted(jnp.cumsum(lengths), jnp.arange(n), side="right")
    seg = jax.ops.segment_sum
    count = lengths.astype(data.dtype).reshape((s,) + (1,) * (data.ndim - 1))
    if reduce in ("sum", "mean"):
        total = seg(data, ids, s)
        if initial is not None:
            total = total + initial
        if reduce == "sum":
            return total
        out = total / count
        return out if initial is None else jnp.where(count == 0, initial, out)
    if reduce == "prod":
        # JAX has no derivative for a segmented product (a scatter-multiply): each segment's
        # product over a (segments x elements) mask, which jnp.prod differentiates, zeros
        # included (memory grows with segments x elements)
        member = (ids[None, :] == jnp.arange(s)[:, None]).reshape((s, n) + (1,) * (
            data.ndim - 1))
        out = jnp.prod(jnp.where(member, data[None], 1), axis=1)
        return out if initial is None else out * initial
    pick = jax.ops.segment_max if reduce == "max" else jax.ops.segment_min
    best = jax.lax.stop_gradient(pick(data, ids, s))
    if initial is not None:
        best = jnp.maximum(best, initial) if reduce == "max" else jnp.minimum(best, initial)
    # the result as a weighted sum of the elements equal to it: the gradient is shared
    hit = (data == best[jnp.clip(ids, 0, s - 1)]).astype(data.dtype)
    hits = seg(hit, ids, s)
    share = hit / jnp.where(hits == 0, 1, hits)[jnp.clip(ids, 0, s - 1)]
    out = seg(data * jax.lax.stop_gradient(share), ids, s)
    return jnp.where(hits == 0, best, out)


@op(tensors=("data", "lengths"), promote="none", function=False, method=False,
    needs=("data", "lengths"), grad="SegmentReduceBackward0")
def _segment_reduce(data, lengths, reduce, axis, initial):
    """data reduced over the segments lengths gives along axis."""
    lead = data.shape[:axis]
    flat = data.reshape((-1,) + data.shape[axis:])
    lens = lengths.reshape(-1, lengths.shape[-1])
    out = jax.vmap(lambda d, ln: _one(d, ln, reduce, initial))(flat, lens)
    return out.reshape(lead + out.shape[1:])


@function(name="segment_reduce", method=False)
def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """Reduce consecutive segments of data along axis (lengths or offsets give them)."""
    from .._dispatch import call_op
    if reduce not in _REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None:
        if offsets is None:
            raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
        lengths = offsets[..., 1:] - offsets[..., :-1]
    axis = axis % data.dim()
    # (PyTorch reads the lengths to check them; inside a trace their values are unknown)
    if not unsafe and not isinstance(lengths._data, jax.core.Tracer) and \
            not bool((lengths.sum(-1) == data.shape[axis]).all()):
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                           "to data.size(lengths.dim()-1) when !unsafe.")
    init = None if initial is None else float(initial)
    return call_op("_segment_reduce", data, lengths, _REDUCE[reduce], axis, init)
