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
from functools import partial, wraps
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


def _check_schedulers(owner, optimizer, schedulers) -> None:
    """SequentialLR's and ChainedScheduler's checks on the schedulers they combine."""
    name = owner.__class__.__name__
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{name} does not support `ReduceLROnPlateau` scheduler as it "
                             "requires additional kwargs to be specified when calling `step`, "
                             f"but got one at index {i} in the given schedulers sequence.")
        if optimizer != scheduler.optimizer:
            raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, "
                             f"but got scheduler {scheduler.__class__.__name__} at index {i} "
                             f"has {scheduler.optimizer}, which is different from "
                             f"{optimizer.__class__.__name__}.")


def _nested_state_dict(scheduler) -> dict:
    state = {k: v for k, v in scheduler.__dict__.items()
             if k not in ("optimizer", "_schedulers")}
    state["_schedulers"] = [s.state_dict() for s in scheduler._schedulers]
    return state


def _nested_load_state_dict(scheduler, state_dict: dict) -> None:
    saved = state_dict.pop("_schedulers")
    scheduler.__dict__.update(state_dict)
    state_dict["_schedulers"] = saved
    for s, sd in zip(scheduler._schedulers, saved):
        s.load_state_dict(sd)


class SequentialLR(LRScheduler):
    """Run schedulers one after another, switching at the milestones."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler, but "
                             "got no scheduler.")
        _check_schedulers(self, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                "than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Undo the steps the schedulers took at construction, then start the first one.
        for group in self.optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None) -> None:
        """Step back every (nested) scheduler's last_epoch by one."""
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self):
        """Steps the scheduler whose milestone range holds the current epoch (restarting the next
        one at each milestone); call it after `optimizer.step()`.
        """
        if STEP_HOOK is not None and STEP_HOOK(self, ()):
            return
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self):
        """The scheduler's state as a dict, for `load_state_dict`; the optimizer is not included.
        """
        return _nested_state_dict(self)

    def load_state_dict(self, state_dict):
        """Restores a state made by `state_dict` (the optimizer is not touched)."""
        _nested_load_state_dict(self, state_dict)


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


class ChainedScheduler(LRScheduler):
    """Step several schedulers together at every step."""

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler to be "
                             "chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def step(self):
        """Steps every chained scheduler once, in order, so their factors compose; call it after
        `optimizer.step()`.
        """
        if STEP_HOOK is not None and STEP_HOOK(self, ()):
            return
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def state_dict(self):
        """The scheduler's state as a dict, for `load_state_dict`; the optimizer is not included.
        """
        return _nested_state_dict(self)

    def load_state_dict(self, state_dict):
        """Restores a state made by `state_dict` (the optimizer is not touched)."""
        _nested_load_state_dict(self, state_dict)


class ReduceLROnPlateau(LRScheduler):
    """Reduce the lr by `factor` when a metric stops improving for `patience` epochs."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got "
                                 f"{len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(self.optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        """Records `metrics` (the quantity watched, e.g. a validation loss) and lowers the learning
        rates by `factor` after more than `patience` steps with no improvement.
        """
        if STEP_HOOK is not None and STEP_HOOK(self, (metrics, epoch)):
            return
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs are not counted during cooldown
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self, epoch) -> None:
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    "The number of param groups in the `optimizer` "
                    f"({len(self.optimizer.param_groups)}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due "
                    "to a new param group being added to the optimizer. Please modify the "
                    "`min_lrs` field to match the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, group in enumerate(self.optimizer.param_groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                _set_group_value(group, "lr", new_lr)

    @property
    def in_cooldown(self):
        """Whether the scheduler is still in the cooldown that follows a reduction."""
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict):
        """Restores a state made by `state_dict` (the optimizer is not touched)."""
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold,
                             threshold_mode=self.threshold_mode)


def _cycle_momentum_setup(scheduler, optimizer, base_momentum, max_momentum, last_epoch):
    """CyclicLR's and OneCycleLR's momentum (or Adam's beta1) bookkeeping in the groups."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                         "option enabled")
    scheduler.use_beta1 = "betas" in optimizer.defaults
    max_momentums = _format_param("max_momentum", optimizer, max_momentum)
    base_momentums = _format_param("base_momentum", optimizer, base_momentum)
    if last_epoch == -1:
        for m_max, m_base, group in zip(max_momentums, base_momentums, optimizer.param_groups):
            _set_momentum(scheduler, group, m_max)
            group["max_momentum"] = m_max
            group["base_momentum"] = m_base
    return base_momentums, max_momentums


class CyclicLR(LRScheduler):
    """Cycle the lr between base_lr and max_lr (triangular, triangular2, exp_range)."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = _cycle_momentum_setup(
                self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(self._exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x) -> float:
        """The amplitude scale at cycle (or iteration) x."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x):
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x):
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma, x):
        return gamma ** x

    def get_lr(self):
        """The learning rates for the current `last_epoch`, one per parameter group (called by
        `step`; read the current values with `get_last_lr`).
        """
        _warn_get_lr_called_within_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * scale_factor * scale
               for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, m_base, m_max in zip(self.optimizer.param_groups, self.base_momentums,
                                            self.max_momentums):
                _set_momentum(self, group, m_max - (m_max - m_base) * scale_factor * scale)
        return lrs

    def state_dict(self):
        """The scheduler's state as a dict, for `load_state_dict`; the optimizer is not included.
        """
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict):
        """Restores a state made by `state_dict` (the optimizer is not touched)."""
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every T_i epochs (T_i grows by T_mult); step(epoch) may take
    fractional epochs."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The learning rates for the current `last_epoch`, one per parameter group (called by
        `step`; read the current values with `get_last_lr`).
        """
        _warn_get_lr_called_within_step(self)
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2 for base in self.base_lrs]

    def step(self, epoch=None):
        """Advances the schedule by one step, or sets it to `epoch` (which may be fractional, e.g.
        `epoch + i / iters` inside an epoch), and writes the learning rates into the optimizer.
        """
        if STEP_HOOK is not None and STEP_HOOK(self, (epoch,)):
            return
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                # The restart number n solves T_0 * (T_mult**n - 1) / (T_mult - 1) <= epoch.
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        else:
            self.T_i = self.T_0
            self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        with _Flag(self, "_get_lr_called_within_step"):
            for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
                _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


class OneCycleLR(LRScheduler):
    """The 1cycle policy: warm up to max_lr, then anneal far below the initial lr."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True,
                 base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError("Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND "
                             "steps_per_epoch)")
        self._schedule_phases = self._phases(pct_start, three_phase)
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", self.optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, self.optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _cycle_momentum_setup(self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _phases(self, pct_start, three_phase) -> list:
        def phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
            return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr,
                    "start_momentum": start_momentum, "end_momentum": end_momentum}

        warmup_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            return [
                phase(warmup_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                      "base_momentum", "max_momentum"),
                phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                      "max_momentum"),
            ]
        return [
            phase(warmup_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
            phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
        ]

    def _anneal_func(self, *args, **kwargs):
        if hasattr(self, "_anneal_func_type"):
            if self._anneal_func_type == "cos":
                return self._annealing_cos(*args, **kwargs)
            if self._anneal_func_type == "linear":
                return self._annealing_linear(*args, **kwargs)
            raise ValueError(f"Unknown _anneal_func_type: {self._anneal_func_type}")
        return self.anneal_func(*args, **kwargs)  # state saved by an older PyTorch

    @staticmethod
    def _annealing_cos(start, end, pct):
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start, end, pct):
        return (end - start) * pct + start

    def get_lr(self):
        """The learning rates for the current `last_epoch`, one per parameter group (called by
        `step`; read the current values with `get_last_lr`).
        """
        _warn_get_lr_called_within_step(self)
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total "
                             f"steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lr = self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal_func(group[phase["start_momentum"]],
                                                     group[phase["end_momentum"]], pct)
                    break
                start_step = phase["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                _set_momentum(self, group, momentum)
        return lrs
