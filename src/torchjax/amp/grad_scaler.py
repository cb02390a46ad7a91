"""GradScaler: dynamic loss scaling for float16 training, with PyTorch's numbers.

The loss is multiplied by a scale (2**16 at first) so that small float16 gradients do not
flush to zero; unscale_ divides the gradients back and records whether any of them is inf
or NaN; step skips the optimizer step when one was; update halves the scale after such a
step (backoff_factor) and doubles it after growth_interval clean steps (growth_factor).
The scale and the step counter are tensors, as in PyTorch, so the arithmetic stays on the
device; step reads one flag (`.item()`) to decide whether to step, as PyTorch's does.
"""

from __future__ import annotations

import enum
import warnings
from collections import defaultdict

from .. import _dtypes

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """torch.amp.GradScaler(device="cuda", init_scale=2.0**16, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True).

        scaler = torch.amp.GradScaler("cpu")
        with torch.autocast("cpu", dtype=torch.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)   # skipped when a gradient is inf/NaN
        scaler.update()

    Disabled (enabled=False, or device "cuda" without a GPU, which warns), every method does
    what training without a scaler does: scale(loss) is loss, step(opt) is opt.step().
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        from .autocast_mode import _device_missing
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and _device_missing(device):
            what = "CUDA GPU" if device == "cuda" else f"{device} device"
            warnings.warn(f"GradScaler: device {device!r} was asked for but no {what} is "
                          f"available; the scaler is disabled", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale = None  # a float32 0-d tensor, made at the first scale()
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker = None  # an int32 0-d tensor: clean steps since the last change
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def is_enabled(self) -> bool:
        """Whether the scaler is active (False makes every method a no-op)."""
        return self._enabled

    def _check_scale_growth_tracker(self, funcname: str):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) " \
              "earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self) -> None:
        from .. import full
        self._scale = full((), self._init_scale, dtype=_dtypes.float32)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=_dtypes.int32)

    def scale(self, outputs):
        """outputs (a tensor, or tensors in lists/tuples) multiplied by the current scale."""
        if not self._enabled:
            return outputs
        from .._tensor import Tensor
        from ..compiler import GraphBreak, is_compiling
        if is_compiling():
            # step() reads whether a gradient overflowed to decide whether to step, and the
            # scale lives on this object, outside the state a compiled step threads: stop
            # before touching it, so the call runs eagerly (one warning) and never half-traced
            raise GraphBreak("torch.amp.GradScaler: a scaled step reads whether a gradient "
                             "overflowed (.item()) to decide whether to step")
        if self._scale is None:
            self._lazy_init_scale_growth_tracker()

        def apply(v):
            if isinstance(v, Tensor):
                return v * self._scale
            if isinstance(v, (list, tuple)):
                return type(v)(apply(x) for x in v)
            if isinstance(v, dict):
                return {k: apply(x) for k, x in v.items()}
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16: bool):
        from .. import no_grad, stack
        flags = []
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    g = param.grad
                    if g is None:
                        continue
                    if not allow_fp16 and g.dtype is _dtypes.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    # checked before unscaling, as PyTorch's kernel does
                    flags.append(g.isfinite().all().logical_not())
                    # in float32 and back, as PyTorch's kernel computes in opmath
                    g.copy_(g.float() * inv_scale)
            if flags:
                found_inf.copy_(stack(flags).any().float())
        return {self._device: found_inf}

    def unscale_(self, optimizer) -> None:
        """Divide optimizer's gradients by the scale (once per step), recording inf/NaN."""
        if not self._enabled:
            return
        from .. import full
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # the reciprocal in double precision, then float32, as PyTorch computes it
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=_dtypes.float32)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                             False)
        state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, state, *args, **kwargs):
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """unscale_ (unless done) and optimizer.step(), skipped if a gradient is inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Set the next scale: backoff after an inf/NaN step, growth after growth_interval
        clean ones; or new_scale (a float or a 1-element tensor) when given."""
        if not self._enabled:
            return
        from .. import no_grad, where
        from .._tensor import Tensor
        scale, tracker = self._check_scale_growth_tracker("update")
        with no_grad():
            if new_scale is not None:
                if isinstance(new_scale, Tensor):
                    if new_scale.numel() != 1 or new_scale.requires_grad:
                        raise AssertionError("new_scale should be a 1-element tensor with "
                                             "requires_grad=False.")
                    scale.copy_(new_scale)
                else:
                    scale.fill_(new_scale)
            else:
                found_infs = [f for s in self._per_optimizer_states.values()
                              for f in s["found_inf_per_device"].values()]
                if not found_infs:
                    raise AssertionError("No inf checks were recorded prior to update.")
                found = found_infs[0]
                for f in found_infs[1:]:
                    found = found + f
                self._update_scale(scale, tracker, found > 0, where)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _update_scale(self, scale, tracker, found, where):
        """PyTorch's _amp_update_scale_, as tensor arithmetic (no host sync); the factors
        multiply in double precision and round to float32, as PyTorch's kernel does."""
        successful = tracker + 1
        grow = found.logical_not() & (successful == self._growth_interval)
        grown = (scale.double() * self._growth_factor).float()
        backed_off = (scale.double() * self._backoff_factor).float()
        kept = where(grow & grown.isfinite(), grown, scale)
        scale.copy_(where(found, backed_off, kept))
        tracker.copy_(where(found | grow, 0, successful).to(_dtypes.int32))

    def get_scale(self) -> float:
        """The current loss scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self) -> float:
        """The factor the scale is multiplied by after `growth_interval` steps without inf/NaN
        gradients.
        """
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Sets the growth factor to `new_factor`."""
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        """The factor the scale is multiplied by when a step finds inf/NaN gradients."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Sets the backoff factor to `new_factor`."""
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        """How many consecutive steps without inf/NaN gradients it takes to grow the scale."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Sets the growth interval to `new_interval`."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None \
            else int(self._growth_tracker.item())

    def state_dict(self) -> dict:
        """scale, growth_factor, backoff_factor, growth_interval, _growth_tracker; empty while
        disabled, as in PyTorch."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restores the scale and its settings from a dict made by `state_dict`; does nothing when
        disabled.
        """
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)
