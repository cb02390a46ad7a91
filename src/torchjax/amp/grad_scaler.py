"""GradScaler: loss scaling for float16 training; a pass-through when disabled."""

from __future__ import annotations

import warnings

__all__ = ["GradScaler"]


class GradScaler:
    """torch.amp.GradScaler(device="cuda", ..., enabled=True).

    Disabled (enabled=False, or device "cuda" without a GPU, which warns), every method does
    what training without a scaler does: scale(loss) is loss, step(opt) is opt.step(), and
    update / unscale_ do nothing. An enabled scaler raises NotImplementedError.
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        from .autocast_mode import _gpu_missing
        self._device = device
        self._enabled = bool(enabled)
        self._init_scale = init_scale
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        if self._enabled and _gpu_missing(device):
            warnings.warn("GradScaler: device 'cuda' was asked for but no CUDA GPU is "
                          "available; the scaler is disabled", stacklevel=2)
            self._enabled = False
        if self._enabled:
            raise NotImplementedError(
                f"torch.amp.GradScaler(device={device!r}) (loss scaling for mixed precision) "
                f"is not supported by torchjax yet: pass enabled=False (float32 and bfloat16 "
                f"training need no scaler)")

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer) -> None:
        pass

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None) -> None:
        pass

    def get_scale(self) -> float:
        return 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def state_dict(self) -> dict:
        """Empty while disabled, as in PyTorch."""
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        pass
