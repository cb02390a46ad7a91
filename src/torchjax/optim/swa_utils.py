"""torch.optim.swa_utils: weight averaging (SWA and EMA) with AveragedModel, update_bn to
recompute BatchNorm statistics for averaged weights, and the SWALR schedule.

    ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
    ...
    optimizer.step()
    ema.update_parameters(model)
"""

from __future__ import annotations

import copy
import itertools
import math

from .. import _creation, _dtypes
from .._autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "SWALR", "get_ema_avg_fn", "get_ema_multi_avg_fn",
           "get_swa_avg_fn", "get_swa_multi_avg_fn", "update_bn"]


def _inexact(t) -> bool:
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay: float = 0.999):
    """An update of lists of averaged tensors: an exponential moving average with `decay`."""

    def ema_update(averaged, current, num_averaged):
        with no_grad():
            for a, c in zip(averaged, current):
                if _inexact(a):
                    a.lerp_(c, 1 - decay)
                else:
                    a.copy_(a * decay + c * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An update of lists of averaged tensors: the running mean over the updates so far."""

    def swa_update(averaged, current, num_averaged):
        n = int(num_averaged)
        with no_grad():
            for a, c in zip(averaged, current):
                if _inexact(a):
                    a.lerp_(c, 1 / (n + 1))
                else:  # PyTorch divides with addcdiv, which refuses integers
                    a.addcdiv_(c - a, _creation.full_like(a, n + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999):
    """avg_fn(averaged, current, num_averaged) -> the exponential moving average."""

    def ema_update(averaged, current, num_averaged):
        with no_grad():
            return decay * averaged + (1 - decay) * current

    return ema_update


def get_swa_avg_fn():
    """avg_fn(averaged, current, num_averaged) -> the running mean including current."""

    def swa_update(averaged, current, num_averaged):
        with no_grad():
            return averaged + (current - averaged) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of `model` whose parameters (and, with use_buffers, buffers) are averaged over
    the update_parameters(model) calls: the running mean by default (SWA), or what avg_fn
    (one tensor at a time) or multi_avg_fn (lists of tensors) computes, e.g. an EMA."""

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers: bool = False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged",
                             _creation.tensor(0, dtype=_dtypes.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """Runs the averaged copy of the model on the inputs."""
        return self.module(*args, **kwargs)

    def _tensors(self, model: Module) -> list:
        if self.use_buffers:
            return list(itertools.chain(model.parameters(), model.buffers()))
        return list(model.parameters())

    def update_parameters(self, model: Module) -> None:
        """Fold model's current values into the average."""
        mine = [t.detach() for t in self._tensors(self.module)]
        theirs = [t.detach().to(a.device) for a, t in zip(mine, self._tensors(model))]
        n = int(self.n_averaged)
        with no_grad():
            if n == 0:
                for a, t in zip(mine, theirs):
                    a.copy_(t)
            elif self.multi_avg_fn is not None:
                self.multi_avg_fn(mine, theirs, self.n_averaged)
            else:
                avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                for a, t in zip(mine, theirs):
                    a.copy_(avg_fn(a, t, self.n_averaged))
            if not self.use_buffers:
                # the buffers (BatchNorm statistics) follow the model's, unaveraged
                for mine_b, theirs_b in zip(self.module.buffers(), model.buffers()):
                    mine_b.copy_(theirs_b.detach().to(mine_b.device))
            self.n_averaged += 1


def update_bn(loader, model: Module, device=None) -> None:
    """Recompute the BatchNorm running statistics of `model` with one pass over `loader`
    (the first element of each batch is the input), as a cumulative average."""
    momenta = {m: m.momentum for m in model.modules() if isinstance(m, _BatchNorm)}
    if not momenta:
        return
    for m in momenta:
        m.reset_running_stats()
        m.momentum = None
    was_training = model.training
    model.train()
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for m, momentum in momenta.items():
        m.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to its swa_lr over anneal_epochs steps, along a
    cosine ("cos") or straight ("linear") path, then hold it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1):
        for value, group in zip(_format_param("swa_lr", optimizer, swa_lr),
                                optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_strategy = anneal_strategy
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _progress(self, t: float) -> float:
        """How far along the path (0 to 1) a fraction t of the annealing steps gets."""
        t = min(1.0, max(0.0, t))
        return t if self.anneal_strategy == "linear" else (1 - math.cos(math.pi * t)) / 2

    def get_lr(self) -> list:
        # lr = swa_lr * a + start * (1 - a): `start` is worked back from the current lr and
        # the previous step's a, so a learning rate changed between steps is followed
        """The learning rates for this step: annealed from the current value towards `swa_lr` over
        `anneal_epochs` steps.
        """
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        before, now = self._progress((step - 1) / span), self._progress(step / span)
        lrs = []
        for group in self.optimizer.param_groups:
            lr, swa_lr = group["lr"], group["swa_lr"]
            start = swa_lr if before == 1 else (lr - before * swa_lr) / (1 - before)
            lrs.append(swa_lr * now + start * (1 - now))
        return lrs
