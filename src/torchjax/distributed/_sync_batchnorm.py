"""SyncBatchNorm in a job of several processes: batch statistics all-reduced over the group.

Where the batch a module sees is already the global one (DDP or fully_shard on a mesh that
spans the processes, eagerly), plain batch statistics are the synchronised ones and
nn.SyncBatchNorm computes them as BatchNorm does. Where each process holds its own batch (a
replica per process, no wrapper, or a compiled step traced per rank), the per-channel sums
are all-reduced as PyTorch's SyncBatchNorm does, and so are their gradients in backward: each
rank's input gradient is that of the sum of every rank's loss.
"""

from __future__ import annotations

import jax

from .. import _creation
from .._autograd import grad_mode
from .._tensor import Tensor
from ..autograd import Function
from . import _per_rank
from ._global_batch import spans_processes


class _SumOverProcesses(Function):
    """The sum of every rank's tensor; its gradient is summed over the ranks too."""

    @staticmethod
    def forward(ctx, t, group):
        from ._collectives import all_reduce
        ctx.group = group
        out = t.detach().clone()
        all_reduce(out, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        from ._collectives import all_reduce
        out = grad.clone()
        all_reduce(out, group=ctx.group)
        return out, None


def forward(bn, x: Tensor):
    """bn(x) in training with statistics over the group's processes, or None where plain
    batch statistics are already those (see the module docstring)."""
    from ._process_group import _STATE, GroupMember
    if not _STATE.initialized:
        return None
    arr = x._data
    if isinstance(arr, jax.core.Tracer):
        if not _per_rank.tracing():
            raise NotImplementedError("SyncBatchNorm across processes inside a JAX transform "
                                      "other than torchjax.compile is not supported")
    elif spans_processes(arr.sharding):
        return None
    group = bn.process_group if bn.process_group is not None else GroupMember.WORLD
    if group.size() == 1:
        return None
    bn._check_input_dim(x)
    dims = [0] + list(range(2, x.ndim))
    shape = [1, x.shape[1]] + [1] * (x.ndim - 2)
    count = _creation.tensor([float(x.numel() // x.shape[1])], dtype=x.dtype)
    total = _SumOverProcesses.apply(count, group)
    mean = _SumOverProcesses.apply(x.sum(dims), group) / total
    centred = x - mean.reshape(shape)
    var = _SumOverProcesses.apply((centred * centred).sum(dims), group) / total
    out = centred / (var + bn.eps).sqrt().reshape(shape)
    if bn.weight is not None:
        out = out * bn.weight.reshape(shape)
    if bn.bias is not None:
        out = out + bn.bias.reshape(shape)
    if bn.track_running_stats and bn.running_mean is not None:
        with grad_mode.no_grad():
            bn.num_batches_tracked.add_(1)
            factor = (1.0 / float(bn.num_batches_tracked) if bn.momentum is None
                      else bn.momentum)
            unbiased = var * (total / (total - 1))  # PyTorch's running variance
            bn.running_mean.mul_(1 - factor).add_(mean.detach() * factor)
            bn.running_var.mul_(1 - factor).add_(unbiased.detach() * factor)
    return out


def install() -> None:
    from ..nn.modules import normalization
    normalization.ACROSS_PROCESSES[0] = forward


def uninstall() -> None:
    from ..nn.modules import normalization
    normalization.ACROSS_PROCESSES[0] = None
