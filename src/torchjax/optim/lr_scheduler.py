"""Learning-rate schedulers: PyTorch's classes, recursive forms and state_dict layout.

The schedulers only edit the optimizer's param_groups (Python numbers, or 1-element tensors
filled in place); the optimizers read `group["lr"]` as a traced value at every step, so a
new rate never recompiles anything.
"""

from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from functools import wraps
from weakref import ref

from .._tensor import Tensor
from .optimizer import Optimizer

__all__ = [
    "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
    "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler",
    "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR",
    "PolynomialLR", "LRScheduler",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)

_ORDER_URL = "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"


def _copy(value):
    return value.clone() if isinstance(value, Tensor) else value


def _format_param(name: str, optimizer: Optimizer, param) -> list:
    """One value per param group: a list/tuple is checked, a single value repeated."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(param)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
    else:
        param = [param] * len(optimizer.param_groups)
    return [_copy(p) for p in param]


def _group_values(optimizer: Optimizer, key: str) -> list:
    return [_copy(group[key]) for group in optimizer.param_groups]


def _set_group_value(group: dict, key: str, value) -> None:
    # A tensor lr stays the same tensor (filled in place), as PyTorch does.
    if isinstance(group[key], Tensor):
        group[key].fill_(value.squeeze() if isinstance(value, Tensor) else value)
    else:
        group[key] = value


def _set_momentum(scheduler, group: dict, momentum) -> None:
    if scheduler.use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


# While torchjax.compile traces a step, STEP_HOOK(scheduler, args) takes each scheduler step
# out of the trace (returning True): a step is Python arithmetic on counters, which the
# compiled function replays around the program on every call instead of freezing it.
STEP_HOOK = None


class _Flag:
    """Sets a boolean attribute of a scheduler for the duration of a with-block."""

    def __init__(self, scheduler, name: str):
        self.scheduler, self.name = scheduler, name

    def __enter__(self):
        setattr(self.scheduler, self.name, True)
        return self

    def __exit__(self, *exc):
        setattr(self.scheduler, self.name, False)


def _warn_get_lr_called_within_step(scheduler) -> None:
    if not scheduler._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, please use "
                      "`get_last_lr()`.", UserWarning, stacklevel=2)


def _lambda_state_dict(scheduler) -> dict:
    # Plain functions are not saved; callable objects save their __dict__.
    state = {k: v for k, v in scheduler.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
    state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                           for fn in scheduler.lr_lambdas]
    return state


def _lambda_load_state_dict(scheduler, state_dict: dict) -> None:
    lr_lambdas = state_dict.pop("lr_lambdas")
    scheduler.__dict__.update(state_dict)
    state_dict["lr_lambdas"] = lr_lambdas
    for fn, saved in zip(scheduler.lr_lambdas, lr_lambdas):
        if saved is not None:
            fn.__dict__.update(saved)


def _lambdas(optimizer: Optimizer, lr_lambda) -> list:
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                         f"{len(lr_lambda)}")
    return list(lr_lambda)


class LRScheduler:
    """Base class: sets group["lr"] from get_lr() at each step(); step 0 runs at construction."""

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0.\nThis typically happens "
                        "when:\n1. You're trying to resume training from a checkpoint but "
                        "haven't properly loaded the optimizer state\n2. You're using "
                        "last_epoch >= 0 for a fresh training run (not recommended)")
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._track_optimizer_step()
        self._initial_step()

    def _track_optimizer_step(self) -> None:
        # Wrap the optimizer's bound step once so we can warn when the scheduler steps first.
        opt = self.optimizer
        if hasattr(opt.step, "_wrapped_by_lr_sched"):
            return
        opt_ref = ref(opt)
        func = opt.step.__func__

        @wraps(func)
        def wrapper(*args, **kwargs):
            o = opt_ref()
            o._opt_called = True
            return func.__get__(o, o.__class__)(*args, **kwargs)

        wrapper._wrapped_by_lr_sched = True
        opt.step = wrapper

    def _initial_step(self) -> None:
        self._step_count = 0
        with _Flag(self, "_is_initial"):
            self.step()

    def state_dict(self) -> dict:
        """Every attribute except the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restores a state made by `state_dict` (the optimizer is not touched)."""
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list:
        """The learning rates the last step() set."""
        return self._last_lr

    def get_lr(self) -> list:
        """The learning rates for the current `last_epoch`, one per parameter group (called by
        `step`; read the current values with `get_last_lr`).
        """
        raise NotImplementedError

    def step(self, epoch=None) -> None:
        """Advances the schedule by one step and writes the new learning rates into the optimizer's
        parameter groups; call it after `optimizer.step()`.
        """
        if STEP_HOOK is not None and STEP_HOOK(self, (epoch,)):
            return
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate "
                    "scheduler initialization. Please, make sure to call `optimizer.step()` "
                    f"before `lr_scheduler.step()`. See more details at {_ORDER_URL}",
                    UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In "
                    "PyTorch 1.1.0 and later, you should call them in the opposite order: "
                    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
                    "will result in PyTorch skipping the first value of the learning rate "
                    f"schedule. See more details at {_ORDER_URL}", UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None) -> None:
        with _Flag(self, "_get_lr_called_within_step"):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """The old name of LRScheduler."""


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        """The scheduler's state as a dict, for `load_state_dict`; the optimizer is not included.
        """
        return _lambda_state_dict(self)

    def load_state_dict(self, state_dict):
        """Restores a state made by `state_dict` (the optimizer is not touched)."""
        _lambda_load_state_dict(self, state_dict)

    def get_lr(self):
        """The learning rates for the current `last_epoch`, one per parameter group (called by
        `step`; read the current values with `get_last_lr`).
        """
        _warn_get_lr_called_within_step(self)
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(LRScheduler):
    """lr = lr * lr_lambda(epoch) at every step after the first."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        """The scheduler's state as a dict, for `load_state_dict`; the optimizer is not included.
        """
        return _lambda_state_dict(self)

    def load_state_dict(self, state_dict):
        """Restores a state made by `state_dict` (the optimizer is not touched)."""
        _lambda_load_state_dict(self, state_dict)

    def get_lr(self):
        """The learning rates for the current `last_epoch`, one per parameter group (called by
        `step`; read the current values with `get_last_lr`).
        """
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * fn(self.last_epoch)
                for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """Multiply the lr by gamma every step_size epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The learning rates for the current `last_epoch`, one per parameter group (called by
        `step`; read the current values with `get_last_lr`).
        """
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by gamma at each milestone (repeated milestones multiply again)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The learning rates for the current `last_epoch`, one per parameter group (called by
        `step`; read the current values with `get_last_lr`).
        """
        _warn_get_lr_called_within_step(self)
        if self.last_epoch not in self.milestones:
            return _group_values(self.optimizer, "lr")
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [g["lr"] * factor for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr * factor until total_iters, then the lr again."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The learning rates for the current `last_epoch`, one per parameter group (called by
        `step`; read the current values with `get_last_lr`).
        """
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * (1.0 / self.factor) for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the lr linearly from start_factor to end_factor over total_iters epochs."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The learning rates for the current `last_epoch`, one per parameter group (called by
        `step`; read the current values with `get_last_lr`).
        """
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        span = self.end_factor - self.start_factor
        factor = 1.0 + span / (self.total_iters * self.start_factor
                               + (self.last_epoch - 1) * span)
        return [g["lr"] * factor for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        span = self.end_factor - self.start_factor
        return [base * (self.start_factor
                        + span * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the lr by gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The learning rates for the current `last_epoch`, one per parameter group (called by
        `step`; read the current values with `get_last_lr`).
        """
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the lr by (1 - epoch / total_iters) ** power."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The learning rates for the current `last_epoch`, one per parameter group (called by
        `step`; read the current values with `get_last_lr`).
        """
        _warn_get_lr_called_within_step(self)
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        factor = ((1.0 - self.last_epoch / self.total_iters)
                  / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [g["lr"] * factor for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing in PyTorch's recursive form (it climbs back up after T_max)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The learning rates for the current `last_epoch`, one per parameter group (called by
        `step`; read the current values with `get_last_lr`).
        """
        _warn_get_lr_called_within_step(self)
        eta_min, t_max, epoch = self.eta_min, self.T_max, self.last_epoch
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        if self._step_count == 1 and epoch > 0:
            return [eta_min + (base - eta_min) * (1 + math.cos(epoch * math.pi / t_max)) / 2
                    for base in self.base_lrs]
        if (epoch - 1 - t_max) % (2 * t_max) == 0:
            return [g["lr"] + (base - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                    for base, g in zip(self.base_lrs, self.optimizer.param_groups)]
        ratio = (1 + math.cos(math.pi * epoch / t_max)) / (1 + math.cos(math.pi * (epoch - 1)
                                                                         / t_max))
        return [ratio * (g["lr"] - eta_min) + eta_min for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


# the schedulers kept in files of their own, under this module's name (pickles, reprs)
from ._lr_composite import ChainedScheduler, SequentialLR  # noqa: E402
from ._lr_cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR  # noqa: E402
from ._lr_plateau import ReduceLROnPlateau  # noqa: E402

for _cls in (SequentialLR, ChainedScheduler, ReduceLROnPlateau, CyclicLR,
             CosineAnnealingWarmRestarts, OneCycleLR):
    _cls.__module__ = __name__
