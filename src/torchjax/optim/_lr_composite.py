"""Schedulers made of other schedulers: SequentialLR and ChainedScheduler."""

from __future__ import annotations

from bisect import bisect_right

from . import lr_scheduler as _lr  # (STEP_HOOK is set while a step is traced)
from ._lr_plateau import ReduceLROnPlateau
from .lr_scheduler import (
    LRScheduler,
    _group_values,
    _set_group_value,
)


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
        if _lr.STEP_HOOK is not None and _lr.STEP_HOOK(self, ()):
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
        if _lr.STEP_HOOK is not None and _lr.STEP_HOOK(self, ()):
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
